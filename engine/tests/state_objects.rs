//! Rule table: workloads, pods and claims in the state (a `kubectl quota snapshot`) exist, so
//! a manifest of the same name is an update, as a live check finds by reading the object.
//! Their usage is already in the quotas' status; only what the update adds is charged.

mod support;

use support::*;

#[test]
fn workloads_in_the_state_make_the_manifest_an_update() {
    let p = pod("p").app("a", "requests: {cpu: 100m}");
    let web = |replicas: &str| workload("Deployment", "web", replicas, &p);
    let mut t = Table::default();
    let rows = vec![
        // Two running pods are in pods=5/2 already: scaling to 4 adds 2, all fit.
        ("existing deployment scaled up: only added pods", vec![quota("q", "", "pods=5/2"), web("replicas: 2")], web("replicas: 4"), pods_fit(4)),
        // The same deployment unknown to the state would need 4 new pods: 3 fit.
        ("unknown deployment: every pod is new", vec![quota("q", "", "pods=5/2")], web("replicas: 4"), pods_stop(3, 4, exceeded("q", "pods", "1", "5", "5"))),
        // An existing pod re-sent is an update: pods are not charged again (docs/semantics.md §1.6, §5 step e).
        ("existing pod: an update", vec![quota("q", "", "pods=1/1"), p.yaml()], p.yaml(), OK.to_string()),
    ];
    for (what, state, input, want) in rows {
        t.row(what, summary(&only(check_all(&cluster(&state), &input))), want);
    }
    t.done();
}
