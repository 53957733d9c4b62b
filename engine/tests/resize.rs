//! Rule tables, pod updates: in-place resize (pods/resize: beta on by default 1.33, GA 1.35)
//! and updates that flip the Terminating scope (charged since 1.33, k/k#130060).
//!
//! A pod that already exists (in the state here, live in a cluster) given again with other
//! container resources is a resize. Quota charges the increase only: the new usage (per
//! container the largest of spec, status.resources and allocatedResources) minus the old.

mod support;

use support::*;

/// An existing pod `p` running with `cpu` requested, as the kubelet reports it.
fn running(cpu: &str, extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: ns}}\nspec: {{containers: [{{name: app, image: x, resources: {{requests: {{cpu: {cpu}}}}}}}]{extra}}}\n\
         status: {{phase: Running, containerStatuses: [{{name: app, image: x, imageID: x, ready: true, restartCount: 0, resources: {{requests: {{cpu: {cpu}}}}}, allocatedResources: {{cpu: {cpu}}}}}]}}\n"
    )
}

fn resized(cpu: &str, extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {{containers: [{{name: app, image: x, resources: {{requests: {{cpu: {cpu}}}}}}}]{extra}}}\n"
    )
}

#[test]
fn resize_charges_only_the_increase() {
    let state = docs(&[quota("q", "", "requests.cpu=4/3"), running("1", "")]);
    let mut t = Table::default();
    for (what, version, cpu, want) in [
        ("an increase that fits", "1.35", "2", format!("{OK}: requests.cpu=1")),
        ("a resize that exceeds quota", "1.35", "3", exceeded("q", "requests.cpu", "2", "3", "4")),
        ("a decrease charges nothing (allocated is still 1)", "1.35", "500m", OK.to_string()),
        ("1.33 (beta, on by default) checks it too", "1.33", "3", exceeded("q", "requests.cpu", "2", "3", "4")),
    ] {
        t.row(what, charged(&only(check_version(version, &state, &resized(cpu, ""))), &["requests.cpu"]), want);
    }
    t.done();
}

#[test]
fn before_1_33_resources_of_a_running_pod_cannot_change() {
    let state = docs(&[quota("q", "", "requests.cpu=4/3"), running("1", "")]);
    let d = only(check_version("1.32", &state, &resized("3", "")));
    assert!(!d.allowed);
    assert!(
        d.message.as_deref().unwrap_or("").starts_with("Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than"),
        "{:?}",
        d.message
    );
}

#[test]
fn usage_during_a_resize_is_the_largest_of_spec_status_and_allocated() {
    // The kubelet has not applied a previous increase yet: allocated 2 while spec says 1.
    let mut pod = running("1", "");
    pod = pod.replace("allocatedResources: {cpu: 1}", "allocatedResources: {cpu: 2}");
    let state = docs(&[quota("q", "", "requests.cpu=10/2"), pod]);
    // New spec 1500m: usage max(1500m, 1, 2) = 2, old usage max(1, 1, 2) = 2: nothing to charge.
    let d = only(check_version("1.35", &state, &resized("1500m", "")));
    assert_eq!(charged(&d, &["requests.cpu"]), OK);
    // New spec 3: usage 3, the increase is 1.
    let d = only(check_version("1.35", &state, &resized("3", "")));
    assert_eq!(charged(&d, &["requests.cpu"]), format!("{OK}: requests.cpu=1"));
}

#[test]
fn an_update_flipping_the_terminating_scope_is_charged_from_1_33() {
    // Setting activeDeadlineSeconds moves the pod into Terminating quotas: from 1.33 they are
    // charged its full usage (they did not count it before); earlier pod updates are not
    // checked at all.
    let state = docs(&[quota("t", "scopes: [Terminating]", "pods=1/1"), running("1", "")]);
    let update = resized("1", ", activeDeadlineSeconds: 60");
    let mut t = Table::default();
    t.row("1.32", summary(&only(check_version("1.32", &state, &update))), OK);
    t.row("1.33", summary(&only(check_version("1.33", &state, &update))), full_pods("t"));
    t.done();
}
