//! Rule tables, step `check`: workloads that exist already, and what stops an object before
//! admission for its namespace.
//!
//! A workload's controller creates the pods its spec wants above the pods that exist (its
//! status says how many: `status.replicas`, a Job's `status.active`, a DaemonSet's
//! `status.currentNumberScheduled`); the pods that exist are in the quotas' usage already. A
//! Deployment blocked by quota has fewer pods than replicas, and its controller keeps trying to
//! create the rest: that is a refusal, not a pass. A rollout that stalls under quota is one too.

mod support;

use kubectl_quota_engine::admission::RefusalReason;
use kubectl_quota_engine::check::Outcome;
use support::*;

const QUOTA: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: ns}\nspec: {hard: {pods: '4', requests.cpu: '4'}}\n";

/// A quota of `pods` and `requests.cpu` with `used` pods of 500m each already counted.
fn quota_used(used: i32) -> String {
    format!("{QUOTA}status: {{hard: {{pods: '4', requests.cpu: '4'}}, used: {{pods: '{used}', requests.cpu: '{}m'}}}}\n", used * 500)
}

fn deployment(replicas: i32, cpu: &str, status: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: shop, namespace: ns}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: shop}}}}\n  strategy: {{rollingUpdate: {{maxSurge: 1, maxUnavailable: 0}}}}\n  template:\n    metadata: {{labels: {{app: shop}}}}\n    spec: {{containers: [{{name: app, image: shop, resources: {{requests: {{cpu: {cpu}}}}}}}]}}\n{status}"
    )
}

/// (outcome, replicas wanted, admitted, existing, pod message present, rollout stalls).
fn summary(d: &DocumentReport) -> String {
    format!(
        "{:?} wanted={:?} admitted={:?} existing={:?} pod_message={} rollout={}",
        d.outcome,
        d.replicas,
        d.replicas_admitted,
        d.replicas_existing,
        d.pod_message.is_some(),
        d.rollout.as_ref().map_or("none", |r| r.outcome)
    )
}

#[test]
fn an_existing_workload_is_charged_only_for_the_pods_it_lacks() {
    let mut t = Table::default();
    let rows: Vec<(&str, String, String, String)> = vec![
        (
            "blocked Deployment: 2 of 6 pods exist and the quota is full, so 4 are refused",
            format!("{}---\n{}", quota_used(4), deployment(6, "500m", "status: {replicas: 2}\n")),
            deployment(6, "500m", ""),
            "PodsRefused wanted=Some(6) admitted=Some(2) existing=Some(2) pod_message=true rollout=none".into(),
        ),
        (
            "every pod exists: nothing is created, the check passes",
            format!("{}---\n{}", quota_used(4), deployment(4, "500m", "status: {replicas: 4}\n")),
            deployment(4, "500m", ""),
            "Admitted wanted=Some(4) admitted=Some(4) existing=Some(4) pod_message=false rollout=none".into(),
        ),
        (
            "scaling up: the added pods are charged on top of the ones that exist",
            format!("{}---\n{}", quota_used(2), deployment(2, "500m", "status: {replicas: 2}\n")),
            deployment(5, "500m", ""),
            "PodsRefused wanted=Some(5) admitted=Some(4) existing=Some(2) pod_message=true rollout=none".into(),
        ),
        (
            "a status without replicas means none exist (the server omits zero counts)",
            format!("{}---\n{}", quota_used(0), deployment(3, "500m", "status: {observedGeneration: 1}\n")),
            deployment(3, "500m", ""),
            "Admitted wanted=Some(3) admitted=Some(3) existing=Some(0) pod_message=false rollout=none".into(),
        ),
        (
            "no status at all: the replicas are taken to exist",
            format!("{}---\n{}", quota_used(4), deployment(6, "500m", "")),
            deployment(6, "500m", ""),
            "Admitted wanted=Some(6) admitted=Some(6) existing=Some(6) pod_message=false rollout=none".into(),
        ),
        (
            "a changed template whose surge pod does not fit: the rollout stalls, a refusal",
            format!("{}---\n{}", quota_used(4), deployment(4, "500m", "status: {replicas: 4}\n")),
            deployment(4, "600m", ""),
            "RolloutStalls wanted=Some(4) admitted=Some(4) existing=Some(4) pod_message=false rollout=stalls".into(),
        ),
        (
            "a changed template with room for the surge: the rollout completes",
            format!("{}---\n{}", quota_used(2), deployment(2, "500m", "status: {replicas: 2}\n")),
            deployment(2, "600m", ""),
            "Admitted wanted=Some(2) admitted=Some(2) existing=Some(2) pod_message=false rollout=completes".into(),
        ),
    ];
    for (what, state, input, want) in rows {
        t.row(what, summary(&only(check_all(&state, &input))), want);
    }
    t.done();
}

#[test]
fn a_stalled_rollout_counts_the_old_pods_that_exist() {
    // Spec says 6 replicas, but only 2 pods exist (the rest are refused): the rollout starts
    // from those 2, and says so.
    let state = format!("{}---\n{}", quota_used(2), deployment(6, "500m", "status: {replicas: 2}\n"));
    let d = only(check_all(&state, &deployment(6, "2", "")));
    let r = d.rollout.expect("a rollout");
    assert_eq!(r.old_pods, 2);
    let stall = r.stall.expect("it stalls");
    // Used 1 cpu (2 pods of 500m) of 4: one new 2-cpu pod fits (3), the second does not (5).
    assert_eq!((stall.quota.as_str(), stall.resource.as_str(), stall.new_pods, stall.old_pods), ("compute", "requests.cpu", 1, 2));
    // The 4 missing pods are refused as well (pods 4 of 4 once 2 more exist): the outcome names
    // that first; the stall stands in `rollout`.
    assert_eq!(d.outcome, Outcome::PodsRefused);
}

#[test]
fn a_job_does_not_run_again_the_pods_that_succeeded() {
    let job = |status: &str| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: batch, namespace: ns}}\nspec:\n  parallelism: 3\n  completions: 10\n  template:\n    spec: {{restartPolicy: Never, containers: [{{name: app, image: x, resources: {{requests: {{cpu: 500m}}}}}}]}}\n{status}"
        )
    };
    let mut t = Table::default();
    for (what, status, want) in [
        // min(parallelism 3, 10 - 8 left) = 2 at once; 1 runs: 1 more.
        ("8 succeeded, 1 active: one more pod", "status: {succeeded: 8, active: 1}\n", "Admitted wanted=Some(2) admitted=Some(2) existing=Some(1)"),
        ("nothing finished, 3 active: none", "status: {active: 3}\n", "Admitted wanted=Some(3) admitted=Some(3) existing=Some(3)"),
        ("all succeeded: none", "status: {succeeded: 10}\n", "Admitted wanted=Some(0) admitted=Some(0) existing=Some(0)"),
    ] {
        let state = format!("{}---\n{}", quota_used(1), job(status));
        let d = only(check_all(&state, &job("")));
        t.row(what, format!("{:?} wanted={:?} admitted={:?} existing={:?}", d.outcome, d.replicas, d.replicas_admitted, d.replicas_existing), want);
    }
    t.done();
}

#[test]
fn an_object_in_a_namespace_that_does_not_exist_is_refused() {
    let pod = |ns: &str| format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {ns}}}\nspec: {{containers: [{{name: a, image: x}}]}}\n");
    let namespace = |name: &str| format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n");
    let mut t = Table::default();
    let rows: Vec<(&str, String, String, Vec<&str>)> = vec![
        ("known namespaces, the object's is not among them", namespace("ns"), pod("x"), vec![r#"Refused namespaces "x" not found"#]),
        ("the object's namespace exists", namespace("ns"), pod("ns"), vec!["Admitted -"]),
        ("created earlier in the input", namespace("ns"), format!("{}---\n{}", namespace("x"), pod("x")), vec!["Admitted -", "Admitted -"]),
        // Without Namespaces in the state nothing is known: the check does not decide it.
        ("namespaces unknown", QUOTA.to_string(), pod("x"), vec!["Admitted -"]),
    ];
    for (what, state, input, want) in rows {
        let got: Vec<String> = check_all(&state, &input).iter().map(|d| format!("{:?} {}", d.outcome, d.message.as_deref().unwrap_or("-"))).collect();
        t.row(what, got.join(" | "), want.join(" | "));
    }
    t.done();
}

#[test]
fn nothing_new_is_created_in_a_namespace_being_terminated() {
    let pod = |name: &str| format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ns}}\nspec: {{containers: [{{name: a, image: x}}]}}\n");
    let terminating = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\nstatus: {phase: Terminating}\n";
    let deleted = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns, deletionTimestamp: \"2026-01-01T00:00:00Z\"}\n";
    let active = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\nstatus: {phase: Active}\n";
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: a, image: x}]}\n";
    let refused = "Refused pods \"p\" is forbidden: unable to create new content in namespace ns because it is being terminated";
    let mut t = Table::default();
    let rows: Vec<(&str, String, String, Vec<&str>)> = vec![
        ("phase Terminating: a new pod is refused (403)", terminating.into(), pod("p"), vec![refused]),
        ("a deletionTimestamp alone: refused as well", deleted.into(), pod("p"), vec![refused]),
        ("phase Active: admitted", active.into(), pod("p"), vec!["Admitted -"]),
        // An update is not a create: the plugin lets it through.
        ("an existing pod applied again is an update: admitted", format!("{terminating}---\n{}", pod("p")), pod("p"), vec!["Admitted -"]),
        (
            "a new Deployment is refused itself",
            terminating.into(),
            deployment.into(),
            vec!["Refused deployments.apps \"web\" is forbidden: unable to create new content in namespace ns because it is being terminated"],
        ),
        // The server ignores a created namespace's status: it starts Active.
        (
            "a Namespace document's status is not the namespace's",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: other}\n".into(),
            format!("{terminating}---\n{}", pod("p")),
            vec!["Admitted -", "Admitted -"],
        ),
    ];
    for (what, state, input, want) in rows {
        let got: Vec<String> = check_all(&state, &input)
            .iter()
            .map(|d| format!("{:?} {}", d.outcome, d.server_error.as_deref().or(d.message.as_deref()).unwrap_or("-")))
            .collect();
        t.row(what, got.join(" | "), want.join(" | "));
    }
    t.done();
}

#[test]
fn a_pod_naming_a_service_account_that_does_not_exist_is_refused() {
    let pod = |sa: &str| format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: ns}}\nspec: {{{sa}containers: [{{name: a, image: x}}]}}\n");
    let account = |name: &str, ns: &str| format!("apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: {name}, namespace: {ns}}}\n");
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {serviceAccountName: ghost, containers: [{name: a, image: x}]}\n";
    let known = format!("{QUOTA}---\n{}", account("default", "ns"));
    let ghost = "pods \"p\" is forbidden: error looking up service account ns/ghost: serviceaccount \"ghost\" not found";
    let mut t = Table::default();
    let rows: Vec<(&str, String, String, Vec<&str>)> = vec![
        ("a name the namespace has not", known.clone(), pod("serviceAccountName: ghost, "), vec![ghost]),
        ("the deprecated serviceAccount field, when serviceAccountName is empty", known.clone(), pod("serviceAccount: ghost, "), vec![ghost]),
        ("no name: default, which exists", known.clone(), pod(""), vec!["Admitted -"]),
        (
            "no default in the namespace",
            format!("{QUOTA}---\n{}", account("builder", "ns")),
            pod(""),
            vec!["Refused pods \"p\" is forbidden: error looking up service account ns/default: serviceaccount \"default\" not found"],
        ),
        (
            "created earlier in the input",
            known.clone(),
            format!("{}---\n{}", account("ghost", "ns"), pod("serviceAccountName: ghost, ")),
            vec!["Admitted -", "Admitted -"],
        ),
        // Another namespace's ServiceAccounts say nothing of this one's: unknown, undecided.
        ("unknown here: cannot be decided", format!("{QUOTA}---\n{}", account("ghost", "other")), pod("serviceAccountName: ghost, "), vec!["Undecided -"]),
        ("unknown here, default: admitted", QUOTA.to_string(), pod(""), vec!["Admitted -"]),
        (
            "a workload's pods: the workload is admitted, its pods refused",
            known.clone(),
            deployment.into(),
            vec!["PodsRefused error looking up service account ns/ghost: serviceaccount \"ghost\" not found"],
        ),
    ];
    for (what, state, input, want) in rows {
        let got: Vec<String> = check_all(&state, &input)
            .iter()
            .map(|d| format!("{:?} {}", d.outcome, d.server_error.as_deref().or(d.pod_message.as_deref()).unwrap_or("-")))
            .collect();
        t.row(what, got.join(" | "), want.join(" | ").replace(&ghost.to_string(), &format!("Refused {ghost}")));
    }
    t.done();
}

#[test]
fn an_object_naming_another_namespace_than_n_is_refused_as_kubectl_does() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: other}\nspec: {containers: [{name: a, image: x}]}\n";
    let state = ClusterState::default();
    for (enforce, want) in [
        (
            true,
            Some("the namespace from the provided object \"other\" does not match the namespace \"ns\". You must pass '--namespace=other' to perform this operation."),
        ),
        (false, None),
    ] {
        let opts = CheckOptions { namespace: NS.into(), enforce_namespace: enforce, ..CheckOptions::default() };
        let d = only(check::check(&mut state.clone(), decode("input.yaml", pod), &opts).documents);
        assert_eq!(d.message.as_deref(), want, "-n given: {enforce}");
        if enforce {
            assert_eq!(d.refusal.as_ref().map(|r| r.reason), Some(RefusalReason::NamespaceMismatch));
            assert!(!d.server_error.as_deref().unwrap_or("").contains("forbidden"));
        }
    }
}

#[test]
fn plan_sizes_a_quota_for_the_peak_of_a_rollout_and_for_the_missing_pods() {
    use kubectl_quota_engine::plan;
    let plan_of = |state: &str, input: &str| {
        let cluster = ClusterState::from_objects(decode("state.yaml", state), NS);
        plan::plan(&cluster, decode("input.yaml", input), &CheckOptions { namespace: NS.into(), ..CheckOptions::default() })
    };
    let needed = |p: &plan::Plan, r: &str| {
        p.quotas.iter().flat_map(|q| q.resources.iter()).find(|x| x.resource == r).map(|x| x.needed.to_string()).unwrap_or_else(|| "-".into())
    };
    let mut t = Table::default();
    // 4 pods of 500m exist; the new template asks 600m with maxSurge 1, maxUnavailable 0: each
    // step adds a new pod before an old one goes, so the count climbs 2600m, 2700m, 2800m and
    // peaks at 2900m (1 old and 4 new pods), though the end state needs only 2400m.
    let state = format!("{}---\n{}", quota_used(4), deployment(4, "500m", "status: {replicas: 4}\n"));
    let p = plan_of(&state, &deployment(4, "600m", ""));
    t.row("rollout: cpu at the peak", needed(&p, "requests.cpu"), "2900m");
    t.row("rollout: pods at the peak", needed(&p, "pods"), "5");
    // A blocked Deployment: 2 of 6 pods exist, the quota counts 4 used (other pods): 4 more pods.
    let state = format!("{}---\n{}", quota_used(4), deployment(6, "500m", "status: {replicas: 2}\n"));
    let p = plan_of(&state, &deployment(6, "500m", ""));
    t.row("blocked Deployment: the missing pods", needed(&p, "pods"), "8");
    t.row("blocked Deployment: must grow", p.exit_code().to_string(), "1");
    t.done();
}
