//! Rule tables, step `defaulting`: What the API server changes before quota: defaults, the Priority plugin, RuntimeClass overhead, status dropped on create.
//!
//! One test per behaviour; each row is (what, input, expected). Expected values come from the
//! quota semantics in `docs/semantics.md` (cited as §n) or from the upstream source named in a
//! comment, never from what the tool prints. How state and input are written: `support/mod.rs`.

mod support;

use support::*;

#[test]
fn unknown_priority_class_is_refused_by_the_priority_plugin() {
    // plugin/pkg/admission/priority/admission.go admitPod: a 403 before quota.
    let rows = [
        ("an unknown class", pod("p").class("nope").yaml(), "no PriorityClass with name nope was found".to_string()),
        ("a system class", pod("p").class("system-cluster-critical").yaml(), OK.into()),
        ("a known class", pod("p").class("high").yaml(), OK.into()),
        (
            "a Deployment's pods",
            workload("Deployment", "web", "replicas: 2", &pod("p").class("nope")),
            pods_stop(0, 2, "no PriorityClass with name nope was found"),
        ),
    ];
    let mut t = Table::default();
    for (what, yaml, want) in &rows {
        t.row(what, summary(&check_one(&docs(&[CLUSTER]), yaml)), want);
    }
    let d = check_one(&docs(&[CLUSTER]), &rows[0].1);
    t.row("the whole server error", d.server_error.unwrap_or_default(), "pods \"p\" is forbidden: no PriorityClass with name nope was found");
    t.done();
}

#[test]
fn global_default_priority_class_with_the_lowest_value_wins() {
    // plugin/pkg/admission/priority/admission.go getDefaultPriorityClass (kubernetes/kubernetes
    // @07ef5fd7): "In case more than one global default priority class is added as a result of
    // a race condition, we pick the one with the lowest priority value."
    let state = cluster(&[
        priority_class("default-low", 10, true),
        priority_class("default-high", 1000, true),
        full_pods_quota("q", &sel("PriorityClass", "In", &["default-low"])),
    ]);
    assert_eq!(summary(&check_one(&state, &pod("p").yaml())), full_pods("q"));
}

#[test]
fn pod_level_requests_default_to_the_container_aggregate() {
    // pkg/apis/core/v1/defaults.go defaultPodRequests (kubernetes/kubernetes @023f88a3): for
    // overcommittable pod-level resources (cpu, memory) missing from pod-level requests, the
    // aggregated container requests are copied first; only resources no container requests
    // take the pod-level limit (KEP-2837 defaulting rules).
    let p = pod("p").app("a", "requests: {cpu: 1}").with("resources: {limits: {cpu: 4}}");
    assert_eq!(usage(&check_one("", &p.yaml()), COMPUTE), "limits.cpu=4,requests.cpu=1");
}

#[test]
fn pod_overhead_without_a_runtime_class_is_refused() {
    // plugin/pkg/admission/runtimeclass/admission.go validateOverhead (kubernetes/kubernetes
    // @04791b49): "pod rejected: Pod Overhead set without corresponding RuntimeClass defined
    // Overhead" (403), before quota (RuntimeClass precedes ResourceQuota, §0 step 4).
    let p = pod("p").app("a", "requests: {cpu: 1}").with("overhead: {cpu: 250m}");
    assert_eq!(summary(&check_one(&docs(&[CLUSTER]), &p.yaml())), "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead");
}

#[test]
fn status_in_a_created_manifest_is_discarded() {
    // §0 step 3 and §1.5: the pod strategy sets status to {phase: Pending} on create, so a new
    // pod is always charged; pkg/registry/core/persistentvolumeclaim/strategy.go
    // PrepareForCreate sets `pvc.Status = api.PersistentVolumeClaimStatus{}`.
    let mut t = Table::default();
    let done = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: app, image: x}]}\nstatus: {phase: Succeeded}\n";
    t.row("a pod manifest saying Succeeded is still charged", summary(&check_one(&quota("q", "", "pods=1/1"), done)), full_pods("q"));
    let allocated = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteOnce], storageClassName: '', resources: {requests: {storage: 1Gi}}}\nstatus: {allocatedResources: {storage: 5Gi}}\n";
    t.row("a claim manifest's allocatedResources is ignored", usage(&check_one("", allocated), &["requests.storage"]), "requests.storage=1Gi");
    t.done();
}
