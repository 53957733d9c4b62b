//! The admission chain's one shape: every refusal names, as a typed value, the step that gave
//! it (kubectl, the registry, or the plugin), whichever plugin it is; rendering matches on that
//! value, never on a message's words. The plugins run in kube-apiserver's order.

mod support;

use kubectl_quota_engine::admission::{Stage, CHAIN};
use support::*;

#[test]
fn every_refusal_names_the_step_that_gave_it() {
    let ns_labels =
        |level: &str| format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {NS}, labels: {{pod-security.kubernetes.io/enforce: {level}}}}}\n");
    let rows: Vec<(&str, String, String, Stage)> = vec![
        ("quota refuses the pod", cluster(&[quota("q", "", "pods=1/1")]), pod("p").yaml(), Stage::ResourceQuota),
        ("a PriorityClass that does not exist", cluster(&[quota("q", "", "pods=9/0")]), pod("p").class("nope").yaml(), Stage::Priority),
        ("a RuntimeClass that does not exist", cluster(&[quota("q", "", "pods=9/0")]), pod("p").with("runtimeClassName: ghost").yaml(), Stage::RuntimeClass),
        (
            "a limit above the LimitRange's max",
            cluster(&[limit_range("{type: Container, max: {cpu: 1}}")]),
            pod("p").app("a", "limits: {cpu: 2}").yaml(),
            Stage::LimitRanger,
        ),
        ("a pod that breaks restricted where it is enforced", cluster(&[ns_labels("restricted")]), pod("p").yaml(), Stage::PodSecurity),
        ("an invalid quota", cluster::<&str>(&[]), unsynced_quota("q", "", "pods=-1"), Stage::Registry),
    ];
    let mut t = Table::default();
    for (what, state, input, want) in rows {
        let d = check_one(&state, &input);
        t.row(what, format!("{:?}", d.refuser()), format!("{:?}", Some(want)));
    }
    t.done();
}

#[test]
fn the_plugins_run_in_the_servers_order() {
    // pkg/kubeapiserver/options/plugins.go, AllOrderedPlugins: the ones replayed, in order,
    // ResourceQuota last (the one that decides).
    let order: Vec<Stage> = CHAIN.iter().map(|p| p.stage()).collect();
    assert_eq!(
        order,
        [
            Stage::NamespaceLifecycle,
            Stage::LimitRanger,
            Stage::ServiceAccount,
            Stage::PodSecurity,
            Stage::Priority,
            Stage::DefaultStorageClass,
            Stage::PersistentVolumeClaimResize,
            Stage::RuntimeClass,
            Stage::MutatingAdmissionPolicy,
            Stage::MutatingAdmissionWebhook,
            Stage::ValidatingAdmissionPolicy,
            Stage::ResourceQuota,
        ]
    );
    // The stages are declared in the same order: a plugin added to one and not the other fails.
    assert!(order.windows(2).all(|w| w[0] < w[1]), "CHAIN follows Stage's order: {order:?}");
    assert_eq!(CHAIN.iter().filter(|p| p.external()).map(|p| p.stage()).collect::<Vec<_>>(), [Stage::MutatingAdmissionPolicy, Stage::MutatingAdmissionWebhook]);
}
