//! The guard and a mutating webhook on a real control plane (tests/cluster/lab.sh): a sidecar
//! injector (tests/common/injector.rs, HTTPS on loopback) that the real API server calls adds
//! a container of 100m to every pod of a labelled namespace, where quota `compute`
//! (requests.cpu 1) fits `shop`'s 4 pods of 200m as written but not with the sidecar. `guard
//! serve` runs on loopback, `guard install --url` registers it, and the real API server calls
//! it at `kubectl apply`:
//!
//! - with `--dry-run-webhooks`, the guard asks the server for the pod in a dry run, and its
//!   warning quotes the pods as the injector returns them (300m each: the fourth is refused),
//!   in the words the ReplicaSet controller's refusal then uses;
//! - without, it names the injector its answer rests on; and so it does with dry runs that
//!   cannot answer in time.
//!
//! The guard's registration, the injector's and the namespaces are removed at the end, also
//! when an assertion fails half-way. `KUBECTL_QUOTA_LAB` names the lab's state directory.

mod common;

use common::deadline;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::injector::Injector;
use common::live::{client, drop_namespace, guard_certs, kubectl_here, lab_dir, new_namespace, text, until, until_else, warnings};
use common::live::{kubectl_apply as apply, LocalGuard};
use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
use k8s_openapi::api::core::v1::{Event, Namespace, ResourceQuota};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::Client;
use serde_json::json;

/// [`until`], and on failure the guard's metrics and log.
async fn until_or_say<T, F, Fut>(dir: &Path, base: &str, secs: u64, what: &str, f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    until_else(secs, what, f, || {
        let m = metrics(dir, base);
        let said: Vec<&str> =
            m.lines().filter(|l| l.starts_with("kubectl_quota_guard_dry_run") || l.starts_with("kubectl_quota_guard_requests_total")).collect();
        let logs: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect();
        format!("{}\n{}", said.join("\n"), logs.join("\n"))
    })
    .await
}

/// What the test made: removed when dropped, whatever happens.
struct Cleanup {
    c: Client,
    kubeconfig: PathBuf,
    injector: String,
    namespaces: Vec<String>,
    guard: Option<LocalGuard>,
    dir: PathBuf,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        // The guard stopped and unregistered first.
        self.guard.take();
        let (c, name, namespaces) = (self.c.clone(), self.injector.clone(), self.namespaces.clone());
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async move {
                let _ = Api::<MutatingWebhookConfiguration>::all(c.clone()).delete(&name, &DeleteParams::default()).await;
                for ns in namespaces {
                    drop_namespace(&c, &ns).await;
                }
            })
        });
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts `guard serve` with `extra` flags (the one before, if any, stopped first), and
/// registers it; returns its base URL.
fn start_guard(cleanup: &mut Cleanup, extra: &[&str]) -> String {
    cleanup.guard.take();
    let guard = LocalGuard::start(&cleanup.kubeconfig, &cleanup.dir, &extra.len().to_string(), extra);
    let base = guard.base.clone();
    cleanup.guard = Some(guard);
    base
}

/// The guard's `/metrics`.
fn metrics(dir: &Path, base: &str) -> String {
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "--max-time", "10", "--cacert"]).arg(dir.join("ca.crt")).arg(format!("{base}/metrics"));
    text(&deadline::output_within(cmd, Duration::from_secs(20)).stdout)
}

fn value(metrics: &str, series: &str) -> f64 {
    metrics.lines().find_map(|l| l.strip_prefix(series)).and_then(|v| v.trim().parse().ok()).unwrap_or_else(|| panic!("{series} in\n{metrics}"))
}

fn shop(ns: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: shop, namespace: {ns}}}\nspec:\n  replicas: 4\n  selector: {{matchLabels: {{app: shop}}}}\n  template:\n    metadata: {{labels: {{app: shop}}}}\n    spec: {{automountServiceAccountToken: false, containers: [{{name: app, image: x, resources: {{requests: {{cpu: 200m}}}}}}]}}\n"
    )
}

/// A new namespace labelled for the injector, with quota `compute` (requests.cpu 1), synced.
async fn injected_namespace(c: &Client, cleanup: &mut Cleanup, prefix: &str) -> String {
    let ns = new_namespace(c, prefix).await;
    cleanup.namespaces.push(ns.clone());
    let label = json!({"metadata": {"labels": {cleanup.injector.clone(): "yes"}}});
    Api::<Namespace>::all(c.clone()).patch(&ns, &PatchParams::default(), &Patch::Merge(&label)).await.unwrap();
    let quota: ResourceQuota = serde_json::from_value(json!({"metadata": {"name": "compute"}, "spec": {"hard": {"requests.cpu": "1"}}})).unwrap();
    let quotas = Api::<ResourceQuota>::namespaced(c.clone(), &ns);
    quotas.create(&PostParams::default(), &quota).await.unwrap();
    until(60, "the quota's status", || async { (!serde_json::to_value(quotas.get("compute").await.ok()?).ok()?["status"]["hard"].is_null()).then_some(()) })
        .await;
    ns
}

#[tokio::test(flavor = "multi_thread")]
async fn the_guard_quotes_the_pods_a_sidecar_injector_returns_with_dry_runs_and_names_it_without() {
    let Some(dir) = lab_dir() else { return };
    let kubeconfig = dir.join("kubeconfig");
    if !kubectl_here("test the guard at apply time") {
        return;
    }
    let c = client(&kubeconfig).await;
    let certs = guard_certs(&kubeconfig, "guard-webhooks");
    let injector = Injector::start();
    let name = format!("kq-test-guard-injector-{}", std::process::id() % 100000);
    let mut cleanup = Cleanup { c: c.clone(), kubeconfig: kubeconfig.clone(), injector: name.clone(), namespaces: vec![], guard: None, dir: certs.clone() };
    let hook: MutatingWebhookConfiguration = serde_json::from_value(injector.configuration(&name, "None")).unwrap();
    Api::<MutatingWebhookConfiguration>::all(c.clone()).create(&PostParams::default(), &hook).await.unwrap();

    // 1. Dry runs on: the pods as the injector returns them, 300m each; the fourth is refused.
    let base = start_guard(&mut cleanup, &["--dry-run-webhooks"]);
    let ns = injected_namespace(&c, &mut cleanup, "guard-sidecar").await;
    let refusal = "exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=900m, limited: requests.cpu=1";
    let want = [
        format!("quota compute will refuse 1 of the 4 pods of deployment/shop: {refusal}"),
        format!("mutating webhook sidecar-injector.kq.test ({name}) sees its pods: its pods are as the API server returned them from a dry run (dryRun=All), its changes included"),
    ];
    // The API server picks the registration up, and the guard its caches, within a moment.
    let mut last = vec![];
    until_or_say(&certs, &base, 90, "the guard's warning with dry runs", || {
        let out = apply(&kubeconfig, &shop(&ns), &["--dry-run=server"]);
        let now = warnings(&out);
        if now != last {
            eprintln!("the guard says: {now:?}");
            last = now;
        }
        std::future::ready((last == want).then_some(()))
    })
    .await;
    let started = Instant::now();
    let out = apply(&kubeconfig, &shop(&ns), &[]);
    let apply_took = started.elapsed();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(warnings(&out), want, "{last:?}");
    let m = metrics(&certs, &base);
    let sent = value(&m, "kubectl_quota_guard_dry_run_duration_seconds_count");
    let took = value(&m, "kubectl_quota_guard_dry_run_duration_seconds_sum");
    assert!(sent >= 1.0 && value(&m, r#"kubectl_quota_guard_dry_runs_total{outcome="admitted"}"#) >= 1.0, "{m}");
    assert!(value(&m, r#"kubectl_quota_guard_dry_runs_total{outcome="cached"}"#) >= 1.0, "the same pod again is answered from what was kept:\n{m}");
    eprintln!("dry runs sent: {sent}, {:.1} ms each on average; kubectl apply with the guard's dry run from the cache: {apply_took:?}", took * 1000.0 / sent);
    // The ReplicaSet controller then meets the same refusal for the fourth pod.
    let events = Api::<Event>::namespaced(c.clone(), &ns);
    let refused = until(90, "the ReplicaSet's FailedCreate", || async {
        let list = events.list(&Default::default()).await.ok()?.items;
        list.iter()
            .filter(|e| e.reason.as_deref() == Some("FailedCreate"))
            .filter_map(|e| e.message.as_deref()?.split_once("is forbidden: ").map(|(_, r)| r.to_string()))
            .next()
    })
    .await;
    assert_eq!(refused, refusal);

    // 2. Dry runs off (the default): the pods are answered as written, which fit, and the
    // injector the answer rests on is named.
    let base = start_guard(&mut cleanup, &[]);
    let ns = injected_namespace(&c, &mut cleanup, "guard-named").await;
    let want = [
        "the pods of deployment/shop fit quota as written".to_string(),
        format!("mutating webhook sidecar-injector.kq.test ({name}) sees its pods: what it changes (a sidecar's requests, say) is in no API, so this answer is for its pods as written and rests on it"),
    ];
    until_or_say(&certs, &base, 90, "the guard's warning naming the webhook", || {
        let out = apply(&kubeconfig, &shop(&ns), &["--dry-run=server"]);
        let now = warnings(&out);
        if now != last {
            eprintln!("the guard says: {now:?}");
            last = now;
        }
        std::future::ready((last == want).then_some(()))
    })
    .await;
    let out = apply(&kubeconfig, &shop(&ns), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(warnings(&out), want);

    // 3. Dry runs on, but none can answer in time: the webhook is named, as without them.
    let base = start_guard(&mut cleanup, &["--dry-run-webhooks", "--dry-run-timeout=1us"]);
    let ns = injected_namespace(&c, &mut cleanup, "guard-late").await;
    until_or_say(&certs, &base, 90, "the guard's warning naming the webhook after a dry run too slow", || {
        let out = apply(&kubeconfig, &shop(&ns), &["--dry-run=server"]);
        std::future::ready((warnings(&out) == want).then_some(()))
    })
    .await;
    let m = metrics(&certs, &base);
    assert!(value(&m, r#"kubectl_quota_guard_dry_runs_total{outcome="failed"}"#) >= 1.0, "{m}");
    assert_eq!(value(&m, r#"kubectl_quota_guard_dry_runs_total{outcome="cached"}"#), 0.0, "a dry run that failed is not kept:\n{m}");
}
