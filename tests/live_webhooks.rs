//! Live tests of the admission webhooks a manifest's pods meet, on a real kube-apiserver
//! (tests/cluster/lab.sh): a MutatingWebhookConfiguration like a sidecar injector's (pods, on
//! create, in namespaces labelled for it) is read from the cluster, live and from a snapshot,
//! and `check` names it: live, the pods are the ones a dry run returns (live_dry_run has a
//! webhook that changes them); from a snapshot, what it adds is in no API, so the answer rests
//! on it.
//!
//! The webhook's URL is a closed loopback port with failurePolicy Ignore and a namespace label
//! no other test has: nothing else in the cluster ever calls it, and this test creates no pod
//! (the live check's dry run stores nothing).
//!
//! `KUBECTL_QUOTA_LAB` names the lab's state directory. Without it the tests say so loudly and
//! skip, except under CI=true, where they fail.

mod common;

use common::live::{client, drop_namespace, lab, new_namespace, plugin, text, Unregister};
use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread")]
async fn check_names_the_mutating_webhook_a_workloads_pods_meet_live_and_from_a_snapshot() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "kq-webhooks").await;
    let label = json!({"metadata": {"labels": {"kq-test-inject": ns}}});
    Api::<Namespace>::all(c.clone()).patch(&ns, &PatchParams::default(), &Patch::Merge(&label)).await.unwrap();
    let name = format!("kq-test-injector-{ns}");
    let hook: MutatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": name},
        "webhooks": [{
            "name": "sidecar-injector.kq.test",
            "clientConfig": {"url": "https://127.0.0.1:1/inject"},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
            "namespaceSelector": {"matchLabels": {"kq-test-inject": ns}},
            "failurePolicy": "Ignore", "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 1,
        }],
    }))
    .unwrap();
    Api::<MutatingWebhookConfiguration>::all(c.clone()).create(&PostParams::default(), &hook).await.unwrap();
    let _unregister = Unregister::default().and::<MutatingWebhookConfiguration>(&c, &name);

    let shop = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: shop}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: shop}}\n  template:\n    metadata: {labels: {app: shop}}\n    spec: {containers: [{name: app, image: x, resources: {requests: {cpu: 200m}}}]}\n";
    let manifest = std::env::temp_dir().join(format!("kq-webhooks-{ns}.yaml"));
    std::fs::write(&manifest, shop).unwrap();
    let f = manifest.to_str().unwrap();
    let want = format!(
        "mutating webhook sidecar-injector.kq.test ({name}) sees its pods: what it changes (a sidecar's requests, say) is in no API, so this answer is for its pods as written and rests on it"
    );
    let live = format!(
        "mutating webhook sidecar-injector.kq.test ({name}) sees its pods: its pods are as the API server returned them from a dry run (dryRun=All), its changes included"
    );

    // Live: the configuration and the namespace's labels are read from the cluster, and the
    // server asked for the pod (the webhook, which cannot be called, is ignored there).
    let out = plugin(&kubeconfig, &["check", "-n", &ns, "-f", f, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let doc = &v["documents"][0];
    assert_eq!(doc["webhooks"][0]["webhook"], "sidecar-injector.kq.test", "{doc:#}");
    assert_eq!(doc["webhooks"][0]["sees"], "its pods", "{doc:#}");
    assert_eq!(doc["webhooks"][0]["dryRun"], true, "{doc:#}");
    assert!(doc["notes"].as_array().unwrap().iter().any(|n| n == live.as_str()), "{doc:#}");

    // Another namespace, without the label: the webhook does not see its pods.
    let other = new_namespace(&c, "kq-webhooks-other").await;
    let out = plugin(&kubeconfig, &["check", "-n", &other, "-f", f, "-o", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["documents"][0]["webhooks"].is_null(), "{:#}", v["documents"][0]);

    // From a snapshot of every namespace: the same webhook, named the same way.
    let snap = plugin(&kubeconfig, &["snapshot", "-A", "-o", "json"]);
    assert_eq!(snap.status.code(), Some(0), "{}", text(&snap.stderr));
    let state = std::env::temp_dir().join(format!("kq-webhooks-state-{ns}.json"));
    std::fs::write(&state, &snap.stdout).unwrap();
    let out = plugin(&kubeconfig, &["check", "-n", &ns, "-f", f, "--state", state.to_str().unwrap(), "-o", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    assert!(v["documents"][0]["notes"].as_array().unwrap().iter().any(|n| n == want.as_str()), "{:#}", v["documents"][0]);

    std::fs::remove_file(&manifest).ok();
    std::fs::remove_file(&state).ok();
    drop_namespace(&c, &other).await;
    drop_namespace(&c, &ns).await;
}
