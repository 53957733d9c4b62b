//! Rule table, rollouts: an existing workload (in the state) whose pod template changes is
//! rolled out by its controller's steps, each new pod charged and each old one freed. Each
//! row: the strategy, the quota, and the notes `check` writes about the rollout.

mod support;

use support::*;

/// The rollout notes of `input` updating `existing` under `quota`.
fn rollout(quota_state: &str, existing: &str, input: &str, nodes: Option<u32>) -> String {
    let d = only(check_with(&cluster(&[quota_state.to_string(), existing.to_string()]), input, None, nodes));
    d.notes
        .iter()
        .filter(|n| n.contains("rollout") || n.contains("rolls out") || n.contains("unblock") || n.contains("OnDelete"))
        .cloned()
        .collect::<Vec<_>>()
        .join(" | ")
}

/// (what, quota, existing workload, new workload, nodes, rollout notes).
type Row<'a> = (&'a str, String, String, String, Option<u32>, &'a str);

#[test]
fn rollouts_are_simulated_step_by_step_under_quota() {
    let v1 = pod("p").app("a", "requests: {cpu: 500m}");
    let v2 = pod("p").app("a", "requests: {cpu: 600m}");
    let kind = |k: &str, spec: &str, p: &PodSpec| workload(k, "web", spec, p);
    let sts_spec = |extra: &str| format!("replicas: 3, serviceName: web{extra}");
    let rows: Vec<Row> = vec![
        (
            // The surge pod does not fit; one old pod goes (500m freed), not enough for 600m.
            "deployment, default 25%/25% of 4: surge 1, unavailable 1, bigger pods: stalls",
            quota("q", "", "requests.cpu=2/2"),
            kind("Deployment", "replicas: 4", &v1),
            kind("Deployment", "replicas: 4", &v2),
            None,
            "the pod template changed: the Deployment rolls out (RollingUpdate, maxSurge 1 and maxUnavailable 1 of 4); simulated with quota charged at each step, pods taken to become ready at once | the rollout stalls with 0 of 4 new pods (3 old left): quota q refuses a new pod: requests.cpu 600m + used 1500m > hard 2 | to unblock it: add 400m more requests.cpu in quota q",
        ),
        (
            "deployment, default 25%/25% with room for the bigger pods: completes",
            quota("q", "", "requests.cpu=3/2"),
            kind("Deployment", "replicas: 4", &v1),
            kind("Deployment", "replicas: 4", &v2),
            None,
            "the pod template changed: the Deployment rolls out (RollingUpdate, maxSurge 1 and maxUnavailable 1 of 4); simulated with quota charged at each step, pods taken to become ready at once | the rollout completes under the quotas",
        ),
        (
            // At the last step 3 new, 1 old and 1 surge pod run: 2900m.
            "deployment, percent surge rounds up: 10% of 4 is 1; no unavailable: stalls on the surge pod",
            quota("q", "", "requests.cpu=2/2"),
            kind("Deployment", "replicas: 4", &v1),
            kind("Deployment", "replicas: 4, strategy: {rollingUpdate: {maxSurge: 10%, maxUnavailable: 0}}", &v2),
            None,
            "the pod template changed: the Deployment rolls out (RollingUpdate, maxSurge 1 and maxUnavailable 0 of 4); simulated with quota charged at each step, pods taken to become ready at once | the rollout stalls with 0 of 4 new pods (4 old left): quota q refuses a surge pod: requests.cpu 600m + used 2 > hard 2 | to unblock it: add 900m more requests.cpu in quota q",
        ),
        (
            "deployment, recreate: old pods go first, then 4 new of 600m do not fit in 2",
            quota("q", "", "requests.cpu=2/2"),
            kind("Deployment", "replicas: 4", &v1),
            kind("Deployment", "replicas: 4, strategy: {type: Recreate}", &v2),
            None,
            "the pod template changed: the Deployment rolls out (Recreate: the old pods go first); simulated with quota charged at each step, pods taken to become ready at once | the rollout stalls with 3 of 4 new pods (0 old left): quota q refuses a new pod: requests.cpu 600m + used 1800m > hard 2 | to unblock it: add 400m more requests.cpu in quota q",
        ),
        (
            "statefulset above the partition only, one at a time",
            quota("q", "", "requests.cpu=1700m/1500m"),
            kind("StatefulSet", &sts_spec(""), &v1),
            kind("StatefulSet", &sts_spec(", updateStrategy: {rollingUpdate: {partition: 1}}"), &v2),
            None,
            "the pod template changed: the StatefulSet rolls out (RollingUpdate, one pod at a time down to partition 1); simulated with quota charged at each step, pods taken to become ready at once | the rollout completes under the quotas",
        ),
        (
            "statefulset OnDelete: nothing happens",
            quota("q", "", "requests.cpu=1500m/1500m"),
            kind("StatefulSet", &sts_spec(""), &v1),
            kind("StatefulSet", &sts_spec(", updateStrategy: {type: OnDelete}"), &v2),
            None,
            "the pod template changed: the StatefulSet rolls out (OnDelete); simulated with quota charged at each step, pods taken to become ready at once | OnDelete: no pod is replaced until you delete it; each deleted pod is recreated from the new template",
        ),
        (
            // At the last step 2 new, 1 old and 1 surge pod run: 2300m.
            "daemonset with maxSurge on 3 nodes: a surge pod needs room",
            quota("q", "", "requests.cpu=1500m/1500m"),
            kind("DaemonSet", "", &v1),
            kind("DaemonSet", "updateStrategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}", &v2),
            Some(3),
            "the pod template changed: the DaemonSet rolls out (RollingUpdate, maxSurge 1 and maxUnavailable 0 of 3); simulated with quota charged at each step, pods taken to become ready at once | the rollout stalls with 0 of 3 new pods (3 old left): quota q refuses a surge pod: requests.cpu 600m + used 1500m > hard 1500m | to unblock it: add 800m more requests.cpu in quota q",
        ),
        (
            "daemonset without the node count",
            quota("q", "", "requests.cpu=1500m/1500m"),
            kind("DaemonSet", "", &v1),
            kind("DaemonSet", "", &v2),
            None,
            "the pod template changed: the DaemonSet replaces its pod on every node; pass --nodes N to simulate the rollout under quota",
        ),
        ("scale only: no rollout", quota("q", "", "requests.cpu=2/2"), kind("Deployment", "replicas: 4", &v1), kind("Deployment", "replicas: 3", &v1), None, ""),
    ];
    let mut t = Table::default();
    for (what, q, existing, input, nodes, want) in rows {
        t.row(what, rollout(&q, &existing, &input, nodes), want);
    }
    t.done();
}
