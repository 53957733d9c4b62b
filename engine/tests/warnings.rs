//! Rule table, the guard's words: what a decided document becomes as the warnings the API
//! server shows at apply time. Each row: the cluster, the document, and the warnings (joined
//! with ` | `; empty when nothing is said).

mod support;

use kubectl_quota_engine::report::warnings::{for_document, no_pod_created};
use support::*;

/// (what, cluster, document, nodes, the warnings, whether no pod is created).
type Row<'a> = (&'a str, String, String, Option<u32>, &'a str, bool);

#[test]
fn the_guard_says_what_goes_wrong_and_nothing_else() {
    let half = pod("p").app("a", "requests: {cpu: 500m}");
    let bare = pod("p").app("a", "");
    let high = pod("p").app("a", "requests: {cpu: 500m}").class("high");
    let web = |spec: &str, p: &PodSpec| workload("Deployment", "web", spec, p);
    let mut t = Table(vec![]);
    let rows: Vec<Row> = vec![
        ("every pod fits: nothing", quota("compute", "", "requests.cpu=4/0"), web("replicas: 4", &half), None, "", false),
        (
            "two of four fit",
            quota("compute", "", "requests.cpu=1/0"),
            web("replicas: 4", &half),
            None,
            "quota compute will refuse 2 of the 4 pods of deployment/web: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1",
            false,
        ),
        (
            "none fits",
            quota("compute", "", "requests.cpu=1/1"),
            web("replicas: 2", &half),
            None,
            "quota compute will refuse all 2 pods of deployment/web: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1",
            true,
        ),
        (
            "must specify: every pod refused",
            quota("compute", "", "requests.cpu=4/0"),
            web("replicas: 3", &bare),
            None,
            "quota compute will refuse all 3 pods of deployment/web: failed quota: compute: must specify requests.cpu for: a",
            true,
        ),
        (
            "a scoped quota: which priority class made it apply",
            docs(&[priority_class("high", 1000, false), quota("gold", "scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]}", "pods=1/1")]),
            web("replicas: 1", &high),
            None,
            "quota gold will refuse the pod of deployment/web: exceeded quota: gold, requested: pods=1, used: pods=1, limited: pods=1 | quota gold applies to the pods of deployment/web: PriorityClass In [high] matched priorityClassName=high",
            true,
        ),
        (
            "the object itself refused: the server says so, the guard does not",
            quota("objs", "", "count/deployments.apps=0/0"),
            web("replicas: 1", &half),
            None,
            "",
            false,
        ),
        (
            "a daemonset none of whose pods fit",
            quota("compute", "", "requests.cpu=1/1"),
            workload("DaemonSet", "agent", "", &half),
            Some(1),
            "quota compute will refuse the pods (one per node) of daemonset/agent: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1",
            true,
        ),
        (
            "PodSecurity refuses every pod: named with the server's words",
            docs(&[
                "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns, labels: {pod-security.kubernetes.io/enforce: baseline}}\n".to_string(),
                quota("compute", "", "requests.cpu=4/0"),
            ]),
            web("replicas: 2", &half.clone().with("hostNetwork: true")),
            None,
            "PodSecurity will refuse all 2 pods of deployment/web: violates PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true)",
            true,
        ),
    ];
    for (what, state, input, nodes, want, none) in rows {
        let d = only(check_with(&cluster(&[state]), &input, None, nodes));
        t.row(what, for_document(&d).join(" | "), want);
        t.row(&format!("{what}: no pod created"), no_pod_created(&d).to_string(), none.to_string());
    }
    t.done();
}

#[test]
fn a_stalling_rollout_is_said_with_the_headroom_it_needs() {
    let v1 = pod("p").app("a", "requests: {cpu: 400m}");
    let v2 = pod("p").app("a", "requests: {cpu: 400m}").with("terminationGracePeriodSeconds: 5");
    let existing = workload("Deployment", "roll", "replicas: 2", &v1);
    let changed = workload("Deployment", "roll", "replicas: 2", &v2).replace("image: ", "image: v2-");
    let d = only(check_with(&cluster(&[quota("compute", "", "requests.cpu=1/800m"), existing]), &changed, None, None));
    assert_eq!(
        for_document(&d),
        ["the rollout of deployment/roll will stall with 0 of 2 new pods (2 old left): quota compute refuses a surge pod: requests.cpu 400m + used 800m > hard 1; it needs 200m more requests.cpu in quota compute"]
    );
    assert!(!no_pod_created(&d));
}
