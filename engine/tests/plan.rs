//! Rule table, `plan`: the headroom a release needs. Each row: the state, the manifests, and
//! per quota `name: resource requested+used>hard missing ...` (exact quantities).
//! The arithmetic is quota's own: usage after admitting every replica minus the hard limit.

mod support;

use kubectl_quota_engine::plan::{self, Plan};
use support::*;

fn planned(state: &[String], input: &str) -> Plan {
    let cluster = ClusterState::from_objects(decode("state.yaml", &cluster(state)), NS);
    plan::plan(&cluster, decode("input.yaml", input), &CheckOptions { namespace: NS.into(), ..Default::default() })
}

/// One line per quota: `name[ (proposed)]: resource requested/used/hard/needed[/+missing], ...`.
fn summary_of(p: &Plan) -> String {
    let mut lines: Vec<String> = p
        .quotas
        .iter()
        .map(|q| {
            let rows: Vec<String> = q
                .resources
                .iter()
                .map(|r| {
                    let hard = r.hard.as_ref().map(|h| h.to_string()).unwrap_or_else(|| "-".into());
                    let missing = r.missing.as_ref().map(|m| format!(" +{m}")).unwrap_or_default();
                    format!("{} {}+{}>{hard}={}{missing}", r.resource, r.requested, r.used, r.needed)
                })
                .collect();
            format!("{}{}: {}", q.name, if q.proposed { " (proposed)" } else { "" }, rows.join(", "))
        })
        .collect();
    lines.extend(p.blocked.iter().map(|b| format!("blocked {}: {}", b.name, b.message)));
    lines.push(format!("exit {}", p.exit_code()));
    lines.join("; ")
}

#[test]
fn plan_counts_every_replica_and_the_headroom_missing() {
    let cpu = pod("p").app("a", "requests: {cpu: 500m}");
    let deploy = |replicas: i32| workload("Deployment", "web", &format!("replicas: {replicas}"), &cpu);
    let sts = workload(
        "StatefulSet",
        "db",
        "replicas: 3, serviceName: db, volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 4Gi}}}}]",
        &pod("p"),
    );
    let rows: Vec<(&str, Vec<String>, String, &str)> = vec![
        (
            "all five replicas count, not just the ones that fit",
            vec![quota("q", "", "requests.cpu=4/3800m")],
            deploy(5),
            "q: requests.cpu 2500m+3800m>4=6300m +2300m; exit 1",
        ),
        ("it fits: nothing missing", vec![quota("q", "", "requests.cpu=4/1")], deploy(2), "q: requests.cpu 1+1>4=2; exit 0"),
        (
            "statefulset claims count per replica",
            vec![quota("q", "", "requests.storage=10Gi/0 persistentvolumeclaims=2/0")],
            sts.clone(),
            "q: persistentvolumeclaims 3+0>2=3 +1, requests.storage 12Gi+0>10Gi=12Gi +2Gi; exit 1",
        ),
        (
            "an existing deployment counts only the replicas it adds",
            vec![quota("q", "", "requests.cpu=2/1"), deploy(2)],
            deploy(4),
            "q: requests.cpu 1+1>2=2; exit 0",
        ),
        (
            "a scoped quota counts only what it selects",
            vec![quota("q", "", "requests.cpu=4/3800m"), quota("be", "scopes: [BestEffort]", "pods=1/1")],
            deploy(1),
            "q: requests.cpu 500m+3800m>4=4300m +300m; exit 1",
        ),
        (
            "no quota in the namespace: a proposed one sized to the release",
            vec![],
            deploy(3),
            "ns-plan (proposed): pods 3+0>-=3, requests.cpu 1500m+0>-=1500m; exit 0",
        ),
        (
            "a missing request is not a matter of headroom",
            vec![quota("q", "", "requests.cpu=4/0")],
            workload("Deployment", "web", "replicas: 2", &pod("p")),
            "blocked web: failed quota: q: must specify requests.cpu for: app; exit 1",
        ),
    ];
    let mut t = Table::default();
    for (what, state, input, want) in rows {
        t.row(what, summary_of(&planned(&state, &input)), want);
    }
    t.done();
}

#[test]
fn planned_manifests_raise_only_what_is_short_and_keep_scopes() {
    let p = planned(
        &[quota("q", "scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]}", "requests.cpu=1/800m pods=10/1")],
        &pod("p").app("a", "requests: {cpu: 500m}").class("high").yaml(),
    );
    let m = &p.quotas[0].manifest;
    assert_eq!(m["spec"]["hard"]["requests.cpu"], "1300m", "{m}");
    assert_eq!(m["spec"]["hard"]["pods"], "10", "{m}");
    assert_eq!(m["spec"]["scopeSelector"]["matchExpressions"][0]["values"][0], "high", "{m}");
    assert!(m.get("status").is_none() && m["metadata"].get("resourceVersion").is_none(), "{m}");
}

#[test]
fn plan_at_max_sizes_quotas_for_every_autoscaler_at_its_maximum() {
    // Quota compute (requests.cpu 4, pods 10) and Deployment web of 500m pods, 2 running.
    let state = vec![
        quota("compute", "", "requests.cpu=4/1 pods=10/2"),
        format!(
            "{}status: {{replicas: 2}}\n",
            workload("Deployment", "web", "replicas: 2", &pod("p").app("a", "requests: {cpu: 500m}")).replacen("{name: web}", "{name: web, namespace: ns}", 1)
        ),
    ];
    let hpa = |min: u32, max: u32| {
        format!("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web}}\nspec: {{scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}, minReplicas: {min}, maxReplicas: {max}}}\n")
    };
    let at_max = |state: &[String], input: &str| {
        let cluster = ClusterState::from_objects(decode("state.yaml", &cluster(state)), NS);
        plan::plan_at_max(&cluster, decode("input.yaml", input), &CheckOptions { namespace: NS.into(), ..Default::default() })
    };
    // (the autoscaler: in the manifests, or in the cluster; the plan)
    let rows: Vec<(Vec<String>, String, &str)> = vec![
        // In the manifests, from 2 to 20: 18 more pods of 500m.
        (state.clone(), hpa(2, 20), "compute: pods 18+2>10=20 +10, requests.cpu 9+1>4=10 +6; exit 1"),
        // A maximum that fits: nothing to raise.
        (state.clone(), hpa(2, 6), "compute: pods 4+2>10=6, requests.cpu 2+1>4=3; exit 0"),
    ];
    for (state, input, want) in rows {
        let p = at_max(&state, &input);
        assert_eq!(summary_of(&p), want);
        assert!(p.notes[0].starts_with("sized for every autoscaler at its maximum (1 autoscaler(s))"), "{:?}", p.notes);
    }
    // One in the cluster, the manifests only the Deployment: sized alike.
    let mut with_hpa = state.clone();
    with_hpa.push(hpa(2, 20).replacen("{name: web}", "{name: web, namespace: ns}", 1));
    let web = workload("Deployment", "web", "replicas: 2", &pod("p").app("a", "requests: {cpu: 500m}"));
    assert_eq!(summary_of(&at_max(&with_hpa, &web)), "compute: pods 18+2>10=20 +10, requests.cpu 9+1>4=10 +6; exit 1");
    // Without --autoscalers-at-max the plan is for the count the HPA sets now.
    assert_eq!(summary_of(&planned(&with_hpa, &web)), "exit 0");
}
