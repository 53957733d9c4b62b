//! Rule tables, step `check`: Documents in order (§5 step h) and workloads replayed as their controllers create them.
//!
//! One test per behaviour; each row is (what, input, expected). Expected values come from the
//! quota semantics in `docs/semantics.md` (cited as §n) or from the upstream source named in a
//! comment, never from what the tool prints. How state and input are written: `support/mod.rs`.

mod support;

use support::*;

/// The summary of one workload checked against the shared cluster plus `state`.
fn workload_summary(state: &str, yaml: &str, nodes: Option<u32>) -> String {
    summary(&only(check_with(&cluster(&[state]), yaml, None, nodes)))
}

/// Rows of (what, state, workload yaml, expected summary).
fn workload_rows(rows: Vec<(&str, String, String, String)>) {
    let mut t = Table::default();
    for (what, state, yaml, want) in rows {
        t.row(what, workload_summary(&state, &yaml, None), want);
    }
    t.done();
}

#[test]
fn deployment_replicas_fit_partly() {
    // Pods are created one at a time, each charged before the next (§5 step h).
    let d = |spec: &str, p: &PodSpec| workload("Deployment", "web", spec, p);
    let cpu = pod("p").app("a", "requests: {cpu: 800m}");
    workload_rows(vec![
        ("two of four fit", quota("q", "", "pods=5/3"), d("replicas: 4", &pod("p")), pods_stop(2, 4, exceeded("q", "pods", "1", "5", "5"))),
        ("all fit", quota("q", "", "pods=5/3"), d("replicas: 2", &pod("p")), pods_fit(2)),
        ("replicas default to 1", quota("q", "", "pods=5/3"), d("", &pod("p")), pods_fit(1)),
        ("zero replicas", quota("q", "", "pods=5/3"), d("replicas: 0", &pod("p")), pods_fit(0)),
        ("cpu runs out", quota("q", "", "requests.cpu=2/0"), d("replicas: 3", &cpu), pods_stop(2, 3, exceeded("q", "requests.cpu", "800m", "1600m", "2"))),
    ]);
}

#[test]
fn replicaset_count_quota_blocks_a_deployments_pods() {
    // The Deployment controller creates a ReplicaSet first (count/replicasets.apps, §4.3); if
    // that is refused no pod is created, though the Deployment itself is admitted.
    let d = workload("Deployment", "web", "replicas: 3", &pod("p"));
    workload_rows(vec![
        (
            "the ReplicaSet is refused",
            quota("q", "", "count/replicasets.apps=1/1"),
            d.clone(),
            pods_stop(0, 3, exceeded("q", "count/replicasets.apps", "1", "1", "1")),
        ),
        (
            "the ReplicaSet fits, the pods partly",
            quota("q", "", "count/replicasets.apps=5/0 pods=2/0"),
            d,
            pods_stop(2, 3, exceeded("q", "pods", "1", "2", "2")),
        ),
    ]);
}

#[test]
fn job_pods_follow_parallelism_and_completions() {
    // The Job controller starts min(parallelism, completions) pods, none while suspended.
    let j = |spec: &str| workload("Job", "job", spec, &pod("p").with("restartPolicy: Never"));
    let room = quota("q", "", "pods=10/0");
    workload_rows(vec![
        ("parallelism defaults to 1", room.clone(), j(""), pods_fit(1)),
        ("parallelism", room.clone(), j("parallelism: 3"), pods_fit(3)),
        ("completions cap parallelism", room.clone(), j("parallelism: 5, completions: 2"), pods_fit(2)),
        ("completions alone start one pod", room.clone(), j("completions: 5"), pods_fit(1)),
        ("a suspended Job starts none", room, j("parallelism: 3, suspend: true"), pods_fit(0)),
        ("parallelism over the quota", quota("q", "", "pods=2/0"), j("parallelism: 3"), pods_stop(2, 3, exceeded("q", "pods", "1", "2", "2"))),
    ]);
}

#[test]
fn statefulset_claims_are_charged_per_replica() {
    // Each replica's claims are created (and charged) before its pod; a claim refused stops
    // that replica. Claims get the default StorageClass (§4.2).
    let template = |claims: &[(&str, &str)]| {
        claims
            .iter()
            .map(|(name, size)| format!("{{metadata: {{name: {name}}}, spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {size}}}}}}}}}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sts = |claims: &[(&str, &str)]| {
        workload("StatefulSet", "db", &format!("replicas: 3, serviceName: db, volumeClaimTemplates: [{}]", template(claims)), &pod("p"))
    };
    workload_rows(vec![
        (
            "storage runs out at the third replica",
            quota("q", "", "requests.storage=10Gi/0"),
            sts(&[("data", "4Gi")]),
            pods_stop(2, 3, exceeded("q", "requests.storage", "4Gi", "8Gi", "10Gi")),
        ),
        (
            "two claims per replica",
            quota("q", "", "persistentvolumeclaims=4/0"),
            sts(&[("data", "1Gi"), ("logs", "1Gi")]),
            pods_stop(2, 3, exceeded("q", "persistentvolumeclaims", "1", "4", "4")),
        ),
        (
            "claims are charged to the default class",
            quota("q", "", "standard.storageclass.storage.k8s.io/requests.storage=5Gi/0"),
            sts(&[("data", "2Gi")]),
            pods_stop(2, 3, exceeded("q", "standard.storageclass.storage.k8s.io/requests.storage", "2Gi", "4Gi", "5Gi")),
        ),
        ("everything fits", quota("q", "", "requests.storage=100Gi/0"), sts(&[("data", "4Gi")]), pods_fit(3)),
    ]);
}

#[test]
fn daemonset_pods_need_the_node_count() {
    // One pod per node: without a node count there is nothing to check.
    let ds = workload("DaemonSet", "agent", "", &pod("p"));
    let rows = [
        ("node count unknown", "pods=2/0", None, OK.to_string()),
        ("three nodes, room for all", "pods=10/0", Some(3), pods_fit(3)),
        ("three nodes, room for two", "pods=2/0", Some(3), pods_stop(2, 3, exceeded("q", "pods", "1", "2", "2"))),
        ("no nodes", "pods=2/0", Some(0), pods_fit(0)),
    ];
    let mut t = Table::default();
    for (what, hard, nodes, want) in rows {
        t.row(what, workload_summary(&quota("q", "", hard), &ds, nodes), want);
    }
    t.done();
}

#[test]
fn cronjob_run_is_not_charged_to_later_documents() {
    // A CronJob's Job and pods come when the schedule fires: one run is evaluated against the
    // current usage and not charged to what follows.
    let cj = |name: &str| workload("CronJob", name, "", &pod("p").with("restartPolicy: Never"));
    let rows = [
        ("a later pod still fits", quota("q", "", "pods=1/0"), docs(&[cj("nightly"), pod("p").yaml()]), vec![pods_fit(1), OK.into()]),
        ("two CronJobs each fit alone", quota("q", "", "pods=1/0"), docs(&[cj("a"), cj("b")]), vec![pods_fit(1), pods_fit(1)]),
        ("its Job is counted", quota("q", "", "count/jobs.batch=0/0"), cj("nightly"), vec![pods_stop(0, 1, exceeded("q", "count/jobs.batch", "1", "0", "0"))]),
    ];
    let mut t = Table::default();
    for (what, state, input, want) in rows {
        let got: Vec<String> = check_all(&cluster(&[state]), &input).iter().map(summary).collect();
        t.row(what, got.join(" | "), want.join(" | "));
    }
    t.done();
}

/// Rows of (what, state, input documents, expected summary per document).
fn sequence_rows(rows: Vec<(&str, String, String, Vec<String>)>) {
    let mut t = Table::default();
    for (what, state, input, want) in rows {
        let got: Vec<String> = check_all(&state, &input).iter().map(|d| charged(d, &["limits.cpu"])).collect();
        t.row(what, got.join(" | "), want.join(" | "));
    }
    t.done();
}

#[test]
fn documents_are_charged_in_order() {
    let p = |name: &str| pod(name).yaml();
    let other_ns = "apiVersion: v1\nkind: Pod\nmetadata: {name: elsewhere, namespace: other}\nspec: {containers: [{name: app, image: x}]}\n";
    sequence_rows(vec![
        (
            "the third of three pods is refused",
            quota("q", "", "pods=2/0"),
            docs(&[p("a"), p("b"), p("c")]),
            vec![OK.into(), OK.into(), exceeded("q", "pods", "1", "2", "2")],
        ),
        (
            "a refused document charges nothing",
            quota("q", "", "requests.cpu=1/0"),
            docs(&[pod("big").app("a", "requests: {cpu: 2}").yaml(), pod("small").app("a", "requests: {cpu: 1}").yaml()]),
            vec![exceeded("q", "requests.cpu", "2", "0", "1"), OK.into()],
        ),
        ("another namespace has its own quotas", quota("q", "", "pods=1/1"), other_ns.into(), vec![OK.into()]),
    ]);
}

#[test]
fn objects_created_earlier_in_the_input_affect_later_documents() {
    let lr = limit_range("{type: Container, default: {cpu: 500m}}");
    let limits_quota = quota("q", "", "limits.cpu=2/0");
    let new_quota_with_status =
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: new}\nspec: {hard: {pods: '0'}}\nstatus: {hard: {pods: '0'}, used: {pods: '0'}}\n";
    sequence_rows(vec![
        // LimitRanger defaults the later pod, satisfying "must specify" (§2.1).
        ("a LimitRange", limits_quota.clone(), docs(&[lr, pod("p").yaml()]), vec![OK.into(), format!("{OK}: limits.cpu=500m")]),
        ("without it", limits_quota, pod("p").yaml(), vec!["failed quota: q: must specify limits.cpu for: app".into()]),
        // §0 step 3 / §5: a new quota has no status until the controller syncs it.
        ("a new quota is not enforced yet", String::new(), docs(&[unsynced_quota("new", "", "pods=0"), pod("p").yaml()]), vec![OK.into(), OK.into()]),
        ("even with a status in the manifest", String::new(), docs(&[new_quota_with_status, &pod("p").yaml()]), vec![OK.into(), OK.into()]),
        // A new quota is itself counted (resourcequotas, §4).
        (
            "new quotas are counted",
            quota("q", "", "resourcequotas=1/0"),
            docs(&[unsynced_quota("a", "", "pods=1"), unsynced_quota("b", "", "pods=1")]),
            vec![OK.into(), exceeded("q", "resourcequotas", "1", "1", "1")],
        ),
        // In a namespace the input creates too, the controller syncs the quota before what
        // follows arrives (in practice): enforced, counting from nothing but itself.
        (
            "a new quota in a namespace created with it",
            String::new(),
            docs(&[
                &format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {NS}}}\n"),
                &unsynced_quota("new", "", "pods=1 resourcequotas=1"),
                &pod("a").yaml(),
                &pod("b").yaml(),
            ]),
            vec![OK.into(), OK.into(), OK.into(), exceeded("new", "pods", "1", "1", "1")],
        ),
        // The Priority plugin sees a PriorityClass created before the pod.
        ("a PriorityClass", docs(&[CLUSTER]), docs(&[priority_class("urgent", 5, false), pod("p").class("urgent").yaml()]), vec![OK.into(), OK.into()]),
    ]);
    // The pod's view of the new quota (§5).
    let d = check_all("", &docs(&[unsynced_quota("new", "", "pods=0"), pod("p").yaml()])).remove(1);
    assert_eq!(verdict(&d, "new"), Some(QuotaVerdict::NotEnforced));
}

#[test]
fn objects_of_earlier_documents_are_remembered_as_far_as_later_ones_name_them() {
    // Only a key is kept for an admitted object no later document names again; a pod that a
    // later workload's replica names is kept whole: that replica updates it (§5 step h).
    let sts = workload("StatefulSet", "db", "replicas: 3, serviceName: db", &pod("p"));
    let rows = vec![
        ("a replica's pod created earlier is updated, not charged again", docs(&[pod("db-1").yaml(), sts.clone()]), vec![OK.to_string(), pods_fit(3)]),
        (
            "an unrelated earlier pod is charged once",
            docs(&[pod("other").yaml(), sts]),
            vec![OK.to_string(), pods_stop(2, 3, exceeded("q", "pods", "1", "3", "3"))],
        ),
        ("a document naming an earlier one again is an update", docs(&[pod("a").yaml(), pod("a").yaml(), pod("b").yaml()]), vec![OK.to_string(); 3]),
    ];
    let mut t = Table::default();
    for (what, input, want) in rows {
        let got: Vec<String> = check_all(&cluster(&[quota("q", "", "pods=3/0")]), &input).iter().map(summary).collect();
        t.row(what, got.join(" | "), want.join(" | "));
    }
    t.done();
}

#[test]
fn a_verdict_that_rests_on_pod_security_defaults_says_so() {
    // PodSecurity is replayed (engine/tests/pod_security.rs); what no API shows is the server's
    // default level for namespaces without a label. Without an admission configuration the
    // answer assumes upstream's (privileged), and says so where a stricter default would
    // refuse the pods: those that break the baseline level.
    let namespace = |labels: &str| format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {NS}, labels: {{{labels}}}}}\n");
    let host =
        |name: &str| format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  hostNetwork: true\n  containers: [{{name: a, image: x}}]\n");
    let rows: Vec<(&str, String, String, bool)> = vec![
        ("no label, a pod breaking baseline: said", namespace("team: a"), host("p"), true),
        (
            "and for a workload's pods",
            namespace("team: a"),
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      hostPID: true\n      containers: [{name: a, image: x}]\n".to_string(),
            true,
        ),
        ("a pod any level admits: not said", namespace("team: a"), pod("p").app("a", "").yaml(), false),
        ("a label decides: not said", namespace("pod-security.kubernetes.io/enforce: privileged"), host("p"), false),
        ("not a pod", namespace("team: a"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n".to_string(), false),
    ];
    let mut t = Table(vec![]);
    for (what, ns, doc, said) in rows {
        let d = only(check_with(&cluster(&[ns]), &doc, None, None));
        let noted = d.notes.iter().any(|n| n.contains("has no pod-security.kubernetes.io/enforce label") && n.contains("--admission-config"));
        t.row(what, noted.to_string(), said.to_string());
    }
    t.done();
}

/// Privileged containers are refused unless the API server runs with `--allow-privileged=true`
/// (kubernetes `ValidateSecurityContext`, "disallowed by cluster policy"): a pod at its
/// container's path, a workload at its template's (the workload itself is refused). Nobody
/// can read the flag from an API: without the option they are allowed, and the report says
/// its answer rests on that.
#[test]
fn privileged_containers_follow_the_allow_privileged_flag() {
    let privileged_pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: [{name: setup, image: b, securityContext: {privileged: true}}]\n  containers: [{name: a, image: b}, {name: c, image: b, securityContext: {privileged: true}}]\n";
    let plain_pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: b, securityContext: {privileged: false}}]\n";
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: a, image: b, securityContext: {privileged: true}}]}\n";
    let cronjob = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  schedule: '* * * * *'\n  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: a, image: b, securityContext: {privileged: true}}]}}}}\n";
    let ephemeral = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: b}]\n  ephemeralContainers: [{name: debug, image: b, securityContext: {privileged: true}}]\n";
    let ephemeral_template = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: a, image: b}], ephemeralContainers: [{name: debug, image: b}]}\n";
    // (what, manifest, --allow-privileged, verdict, noted)
    let rows: Vec<(&str, &str, Option<bool>, String, bool)> = vec![
        (
            "refused: the container first, then the init container, in the server's order",
            privileged_pod,
            Some(false),
            "Pod \"p\" is invalid: [spec.containers[1].securityContext.privileged: Forbidden: disallowed by cluster policy, spec.initContainers[0].securityContext.privileged: Forbidden: disallowed by cluster policy]".into(),
            false,
        ),
        ("allowed where the server allows them, nothing to say", privileged_pod, Some(true), OK.into(), false),
        ("not said: allowed, and the report says it rests on the flag", privileged_pod, None, OK.into(), true),
        ("privileged: false is no privileged container", plain_pod, Some(false), OK.into(), false),
        ("no privileged container: no note", plain_pod, None, OK.into(), false),
        (
            "a Deployment is refused itself, at its template's path",
            deployment,
            Some(false),
            "Deployment.apps \"web\" is invalid: spec.template.spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy".into(),
            false,
        ),
        ("a Deployment, not said: its pods fit, and the note", deployment, None, pods_fit(2), true),
        (
            "a CronJob at its job template's path",
            cronjob,
            Some(false),
            "CronJob.batch \"c\" is invalid: spec.jobTemplate.spec.template.spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy".into(),
            false,
        ),
        (
            "an ephemeral container: privileged, and no pod is created with one",
            ephemeral,
            Some(false),
            "Pod \"p\" is invalid: [spec.ephemeralContainers[0].securityContext.privileged: Forbidden: disallowed by cluster policy, spec.ephemeralContainers: Forbidden: cannot be set on create]".into(),
            false,
        ),
        ("an ephemeral container is refused on create whatever the flag", ephemeral, Some(true), "Pod \"p\" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create".into(), false),
        (
            "no template may hold one",
            ephemeral_template,
            Some(true),
            "Deployment.apps \"web\" is invalid: spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template".into(),
            false,
        ),
    ];
    let mut t = Table(vec![]);
    for (what, doc, allow_privileged, want, noted) in rows {
        let opts = CheckOptions { namespace: NS.into(), allow_privileged, ..CheckOptions::default() };
        let d = only(check_opts(&cluster::<&str>(&[]), doc, &opts));
        let said = d.notes.iter().any(|n| n.contains("--allow-privileged=true, which no API shows"));
        t.row(what, format!("{} | noted {said}", summary(&d)), format!("{want} | noted {noted}"));
    }
    // Before 1.23 the server drops ephemeral containers (their gate is off): nothing refused.
    let rules = kubectl_quota_engine::version::Rules::for_version(kubectl_quota_engine::version::KubeVersion::parse("1.22").unwrap());
    let opts = CheckOptions { namespace: NS.into(), rules, allow_privileged: Some(false), ..CheckOptions::default() };
    let d = only(check_opts(&cluster::<&str>(&[]), ephemeral, &opts));
    t.row("1.22 drops ephemeral containers, privileged or not", summary(&d), OK);
    t.done();
}

#[test]
fn a_document_past_its_time_leaves_what_follows_its_admission_undecided_and_the_next_is_checked() {
    // `CheckOptions::decide_within`: the clock is looked at after a document's own
    // admission. Zero: every document is past its time there; an hour: none is.
    let deployment = |name: &str| workload("Deployment", name, "replicas: 2", &pod("p").app("a", "requests: {cpu: 100m}"));
    let state = cluster(&[quota("q", "", "count/deployments.apps=1/0 requests.cpu=1/0")]);
    let outcome = |within: u64, input: &str| -> String {
        let opts = CheckOptions { namespace: NS.into(), decide_within: Some(std::time::Duration::from_secs(within)), ..CheckOptions::default() };
        check_opts(&state, input, &opts)
            .iter()
            .map(|d| {
                let why: Vec<&str> = d.undecided.iter().map(|u| u.why.as_str()).collect();
                format!("{:?} {} [{}]", d.outcome(), summary(d), why.join("; "))
            })
            .collect::<Vec<_>>()
            .join(" | ")
    };
    let late = "not decided within 0 ms (--decision-timeout): its pods, its rollout and its autoscaling not checked; what was decided before stands";
    let mut t = Table::default();
    t.row("a workload in time: its pods replayed", outcome(3600, &deployment("web")), "Admitted allowed; pods 2/2 []");
    t.row("a workload past its time: admitted, its pods undecided", outcome(0, &deployment("web")), format!("Undecided allowed [{late}]"));
    t.row(
        "what was decided stands: the first workload's count is charged, so the second is refused",
        outcome(0, &docs(&[deployment("web"), deployment("api")])),
        format!("Undecided allowed [{late}] | Refused {} []", exceeded("q", "count/deployments.apps", "1", "1", "1")),
    );
    t.row(
        "nothing follows a ConfigMap's admission: decided at any time",
        outcome(0, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"),
        "Admitted allowed []",
    );
    t.done();
}
