//! The guard on a real control plane (tests/cluster/lab.sh; tests/run-all.sh runs this against
//! the 1.20 and the modern lab): `guard serve` runs on loopback, `guard install --url`
//! registers it, and the real kube-apiserver calls it for every `kubectl apply`. What kubectl
//! prints is then held against what the real controller-manager does: the pods it creates, the
//! FailedCreate events it records, the rollout it cannot finish.
//!
//! A webhook is cluster-wide, so the whole story is one test, step by step, and the guard is
//! unregistered at the end whatever happens (a leftover registration would call a stopped
//! guard: harmless with failurePolicy Ignore, but other suites would pay the failed calls).

mod common;

use common::deadline;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::autoscalers as scen;
use common::live::{client, free_port, guard_certs, kubectl_here, lab_dir, new_namespace, plugin, text, until, warnings};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Event, Node, Pod, ResourceQuota, Secret};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::Client;
use serde_json::json;

/// `kubectl` with the lab's kubeconfig, bounded.
fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new("kubectl");
    cmd.arg("--kubeconfig").arg(kubeconfig).args(args).env_remove("KUBECONFIG");
    match stdin {
        None => deadline::output_within(cmd, Duration::from_secs(60)),
        Some(input) => {
            // Through a file: the deadline helper owns the pipes.
            let f = std::env::temp_dir().join(format!("kq-guard-stdin-{}-{}", std::process::id(), input.len()));
            std::fs::write(&f, input).unwrap();
            cmd.stdin(Stdio::from(std::fs::File::open(&f).unwrap()));
            let out = deadline::output_within(cmd, Duration::from_secs(60));
            let _ = std::fs::remove_file(f);
            out
        }
    }
}

fn apply(kubeconfig: &Path, manifest: &str, extra: &[&str]) -> Output {
    let mut args = vec!["apply", "-f", "-"];
    args.extend(extra);
    kubectl(kubeconfig, &args, Some(manifest))
}

fn deployment(ns: &str, name: &str, replicas: i32, cpu: &str, image: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {ns}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      automountServiceAccountToken: false
      containers: [{{name: app, image: '{image}', resources: {{requests: {{cpu: {cpu}}}}}}}]
"
    )
}

/// A `requests.cpu` quota named compute, waited for until the quota controller has synced it.
async fn quota(c: &Client, kubeconfig: &Path, ns: &str, cpu: &str) {
    let q = format!("apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: compute, namespace: {ns}}}\nspec: {{hard: {{requests.cpu: '{cpu}'}}}}\n");
    let out = apply(kubeconfig, &q, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let api = Api::<ResourceQuota>::namespaced(c.clone(), ns);
    let want = serde_json::json!(cpu);
    // Up to 2 minutes: after the API server's restart, the controller-manager's watches come
    // back after their back-off (up to 30 s) too.
    until(120, "the quota's status", || async {
        let q = serde_json::to_value(api.get("compute").await.ok()?).ok()?;
        (q["status"]["hard"]["requests.cpu"] == want).then_some(())
    })
    .await;
}

/// The pods of a Deployment's ReplicaSet with this image, and the FailedCreate messages of that
/// ReplicaSet.
async fn replica_set_pods_and_refusals(c: &Client, ns: &str, image: &str) -> (usize, Vec<String>) {
    let rss = Api::<ReplicaSet>::namespaced(c.clone(), ns).list(&ListParams::default()).await.unwrap();
    let Some(name) = rss
        .items
        .iter()
        .map(|rs| serde_json::to_value(rs).unwrap())
        .find(|rs| rs["spec"]["template"]["spec"]["containers"][0]["image"] == image)
        .map(|rs| rs["metadata"]["name"].as_str().unwrap().to_string())
    else {
        return (0, vec![]);
    };
    let pods = Api::<Pod>::namespaced(c.clone(), ns).list(&ListParams::default()).await.unwrap();
    let owned = pods
        .items
        .iter()
        .map(|p| serde_json::to_value(p).unwrap())
        .filter(|p| {
            p["metadata"]["deletionTimestamp"].is_null()
                && p["metadata"]["ownerReferences"].as_array().is_some_and(|o| o.iter().any(|r| r["name"] == name.as_str()))
        })
        .count();
    let events = Api::<Event>::namespaced(c.clone(), ns).list(&ListParams::default()).await.unwrap();
    let refusals = events
        .items
        .iter()
        .filter(|e| e.reason.as_deref() == Some("FailedCreate") && e.involved_object.name.as_deref() == Some(name.as_str()))
        .filter_map(|e| e.message.clone())
        .collect();
    (owned, refusals)
}

/// The running guard and its registration: both gone when dropped.
struct Guard {
    child: Option<Stopped>,
    kubeconfig: PathBuf,
}

impl Guard {
    fn stop(&mut self) {
        self.child.take();
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.stop();
        let _ = plugin(&self.kubeconfig, &["guard", "uninstall"]);
    }
}

/// A process stopped when dropped, whatever happens.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_guard_warns_at_apply_time_exactly_where_the_controllers_then_refuse() {
    let Some(dir) = lab_dir() else { return };
    let kubeconfig = dir.join("kubeconfig");
    if !kubectl_here("test the guard at apply time") {
        return;
    }
    let c = client(&kubeconfig).await;
    let certs = guard_certs(&kubeconfig, "guard-certs");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let log = std::fs::File::create(certs.join("guard.log")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_kubectl-quota"))
        .args(["--kubeconfig", kubeconfig.to_str().unwrap(), "guard", "serve", "--listen", &listen])
        .arg("--tls-cert-file")
        .arg(certs.join("tls.crt"))
        .arg("--tls-private-key-file")
        .arg(certs.join("tls.key"))
        .env_remove("KUBECONFIG")
        // A command's deadline is not the server's: with one of a second, the guard must still
        // see the changes made minutes later (its watches outlive it).
        .env("KUBECTL_QUOTA_DEADLINE", "1s")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut guard = Guard { child: Some(Stopped(child)), kubeconfig: kubeconfig.clone() };

    // Registered through the real API server, reachable, synced.
    let url = format!("https://{listen}/validate");
    let installed = plugin(&kubeconfig, &["guard", "install", "--url", &url, "--ca-file", certs.join("ca.crt").to_str().unwrap()]);
    assert!(installed.status.success(), "install: {}", text(&installed.stderr));
    assert_eq!(text(&installed.stdout), "validatingwebhookconfiguration.admissionregistration.k8s.io/kubectl-quota-guard serverside-applied\n");
    let status = until(60, "guard status to say synced", || async {
        let s = plugin(&kubeconfig, &["guard", "status"]);
        s.status.success().then_some(s)
    })
    .await;
    let status = text(&status.stdout);
    let release = common::live::lab_version();
    for line in [
        "Registered:  yes",
        &format!("Calls:       {url}"),
        "Reachable:   yes",
        "Synced:      yes",
        &format!("Rules:       Kubernetes {release} (from the server"),
    ] {
        assert!(status.contains(line), "{line:?} in\n{status}");
    }

    // The guard's own HTTP answers: garbage is refused with a reason, an unknown kind is allowed
    // unsaid, and the metrics count what happened.
    let curl = |args: &[&str]| {
        let mut cmd = Command::new("curl");
        cmd.args(["-sS", "--max-time", "10", "--cacert"]).arg(certs.join("ca.crt")).args(["-w", "\n%{http_code}"]).args(args);
        let out = deadline::output_within(cmd, Duration::from_secs(20));
        let said = text(&out.stdout);
        let (body, code) = said.rsplit_once('\n').unwrap_or(("", ""));
        (code.to_string(), body.to_string())
    };
    let base = format!("https://{listen}");
    let (code, body) = curl(&["--data-binary", "not json", &format!("{base}/validate")]);
    assert_eq!(code, "400", "{body}");
    assert!(body.starts_with("bad AdmissionReview: the body is not JSON"), "{body}");
    assert_eq!(curl(&[&format!("{base}/nowhere")]).0, "404");
    assert_eq!(curl(&["-X", "DELETE", &format!("{base}/validate")]).0, "405");
    let configmap = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"ConfigMap"},"operation":"CREATE","namespace":"default","object":{"metadata":{"name":"c"}}}}"#;
    let (code, body) = curl(&["-H", "Content-Type: application/json", "--data-binary", configmap, &format!("{base}/validate")]);
    assert_eq!(
        (code.as_str(), body.as_str()),
        ("200", r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":true,"uid":"u-1"}}"#)
    );
    assert_eq!(curl(&[&format!("{base}/healthz")]), ("200".to_string(), "ok\n".to_string()));
    assert_eq!(curl(&[&format!("{base}/readyz")]).0, "200");
    let metrics = curl(&[&format!("{base}/metrics")]).1;
    for line in ["kubectl_quota_guard_bad_requests_total 3", "kubectl_quota_guard_ready 1"] {
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
    // Registered already, the guard is also called for what the controllers create anywhere in
    // the cluster meanwhile (skipped too): at least the ConfigMap above.
    let skipped = metrics.lines().find_map(|l| l.strip_prefix("kubectl_quota_guard_requests_total{result=\"skipped\"} ")).and_then(|n| n.parse::<u64>().ok());
    assert!(skipped.is_some_and(|n| n >= 1), "skipped requests in\n{metrics}");

    // The API server picks the registration up within a moment: a server-side dry run shows when.
    let probe_ns = new_namespace(&c, "guard-probe").await;
    quota(&c, &kubeconfig, &probe_ns, "1").await;
    let probe = deployment(&probe_ns, "probe", 4, "500m", "probe:1");
    until(60, "the API server to call the guard", || async { (!warnings(&apply(&kubeconfig, &probe, &["--dry-run=server"])).is_empty()).then_some(()) }).await;

    // 1. Two of four pods fit: the warning names the two the controller then refuses.
    let ns = new_namespace(&c, "guard-web").await;
    quota(&c, &kubeconfig, &ns, "1").await;
    let out = apply(&kubeconfig, &deployment(&ns, "web", 4, "500m", "web:1"), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let refusal = "exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1";
    assert_eq!(warnings(&out), [format!("quota compute will refuse 2 of the 4 pods of deployment/web: {refusal}")]);
    let (pods, refusals) = until(90, "the controller to create 2 pods and refuse the rest", || async {
        let (pods, refusals) = replica_set_pods_and_refusals(&c, &ns, "web:1").await;
        (pods == 2 && !refusals.is_empty()).then_some((pods, refusals))
    })
    .await;
    assert_eq!(pods, 2);
    assert!(refusals.iter().all(|m| m.ends_with(refusal)), "{refusals:?}");

    // 2. Everything fits: not a word.
    let roomy = new_namespace(&c, "guard-fits").await;
    quota(&c, &kubeconfig, &roomy, "10").await;
    let out = apply(&kubeconfig, &deployment(&roomy, "small", 2, "100m", "small:1"), &[]);
    assert!(out.status.success() && warnings(&out).is_empty(), "{}", text(&out.stderr));

    // 2b. The issue's scenario: quota compute (requests.cpu 4, limits.cpu 8, pods 10), web running
    // 5 pods of 500m/1 cpu, then an HPA from 12 to 20 applied to it. The guard reads web from
    // the cluster and warns that the minimum cannot fit; the real HPA controller then raises web
    // to 12 and quota stops it at 8, in the words the warning quoted.
    let scaled = new_namespace(&c, "guard-hpa").await;
    scen::quota_ready(&c, &scaled).await.unwrap();
    let mut web = scen::deployment(5);
    web["metadata"]["namespace"] = json!(scaled);
    let out = apply(&kubeconfig, &web.to_string(), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let quotas = Api::<ResourceQuota>::namespaced(c.clone(), &scaled);
    until(90, "web's 5 pods counted by the quota", || async {
        let q = serde_json::to_value(quotas.get(scen::QUOTA).await.ok()?).ok()?;
        let d = serde_json::to_value(Api::<Deployment>::namespaced(c.clone(), &scaled).get(scen::DEPLOYMENT).await.ok()?).ok()?;
        (q["status"]["used"]["pods"] == "5" && d["status"]["replicas"] == 5).then_some(())
    })
    .await;
    let mut hpa = scen::hpa(scen::hpa_api_version(release.minor), scen::DEPLOYMENT, 12, 20);
    hpa["metadata"]["namespace"] = json!(scaled);
    let out = apply(&kubeconfig, &hpa.to_string(), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let refusal = "exceeded quota: compute, requested: limits.cpu=1,requests.cpu=500m, used: limits.cpu=8,requests.cpu=4, limited: limits.cpu=8,requests.cpu=4";
    let min12 = "HPA web scales deployment/web from 12 to 20 pods; quota compute lets 8 run (limits.cpu, requests.cpu): even its minimum of 12 is refused";
    let want = [format!("quota compute will refuse 4 of the 12 pods of deployment/web: {refusal}"), min12.to_string()];
    assert_eq!(warnings(&out), want);
    // ... and /metrics has its ceiling from that decision.
    let series = format!("kubectl_quota_autoscaler_replicas_fit{{namespace=\"{scaled}\",kind=\"HorizontalPodAutoscaler\",name=\"web\"}} 8");
    let metrics = curl(&[&format!("{base}/metrics")]).1;
    assert!(metrics.lines().any(|l| l == series), "{series} in\n{metrics}");
    let seen = scen::settle(&c, &scaled, 8, 120).await;
    assert_eq!((seen.pods.len(), seen.deployment_replicas), (8, Some(12)), "{:?}", seen);
    assert!(seen.quota_refusals().iter().any(|m| m == refusal), "the controller's refusals: {:?}", seen.failed_create);
    // The reverse: web changed while its HPA holds it at 12 (8 exist): answered at the HPA's
    // count, with the ceiling (a server-side dry run: the HPA is left as it is).
    let mut changed = scen::deployment(12);
    changed["metadata"]["namespace"] = json!(scaled);
    changed["spec"]["revisionHistoryLimit"] = json!(3);
    let mut last = vec![];
    for _ in 0..60 {
        last = warnings(&apply(&kubeconfig, &changed.to_string(), &["--dry-run=server"]));
        if last == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(last, want, "a change of web under its HPA");

    // 3. A changed template whose surge pod does not fit: the rollout stalls, for real.
    let rolling = new_namespace(&c, "guard-roll").await;
    quota(&c, &kubeconfig, &rolling, "1").await;
    let out = apply(&kubeconfig, &deployment(&rolling, "roll", 2, "400m", "roll:1"), &[]);
    assert!(out.status.success() && warnings(&out).is_empty(), "{}", text(&out.stderr));
    until(90, "the first two pods", || async { (replica_set_pods_and_refusals(&c, &rolling, "roll:1").await.0 == 2).then_some(()) }).await;
    let quotas = Api::<ResourceQuota>::namespaced(c.clone(), &rolling);
    until(60, "the quota to count them", || async {
        let q = serde_json::to_value(quotas.get("compute").await.ok()?).ok()?;
        (q["status"]["used"]["requests.cpu"] == "800m").then_some(())
    })
    .await;
    let out = apply(&kubeconfig, &deployment(&rolling, "roll", 2, "400m", "roll:2"), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        warnings(&out),
        ["the rollout of deployment/roll will stall with 0 of 2 new pods (2 old left): quota compute refuses a surge pod: requests.cpu 400m + used 800m > hard 1; it needs 200m more requests.cpu in quota compute"]
    );
    let (new_pods, refusals) = until(90, "the new ReplicaSet's refusal", || async {
        let (pods, refusals) = replica_set_pods_and_refusals(&c, &rolling, "roll:2").await;
        (!refusals.is_empty()).then_some((pods, refusals))
    })
    .await;
    assert_eq!(new_pods, 0, "the stalled rollout created no new pod");
    assert!(refusals[0].ends_with("exceeded quota: compute, requested: requests.cpu=400m, used: requests.cpu=800m, limited: requests.cpu=1"), "{refusals:?}");
    // The Deployment's status, once its controller has seen the new template: no pod updated.
    let deployments = Api::<Deployment>::namespaced(c.clone(), &rolling);
    let d = until(60, "the deployment controller to observe the new template", || async {
        let d = serde_json::to_value(deployments.get("roll").await.ok()?).ok()?;
        (d["status"]["observedGeneration"] == d["metadata"]["generation"]).then_some(d)
    })
    .await;
    assert_eq!(d["status"]["updatedReplicas"].as_i64().unwrap_or(0), 0, "{}", d["status"]);

    // 4. The caches follow the cluster: a quota raised changes the next answer.
    let raised = new_namespace(&c, "guard-raise").await;
    quota(&c, &kubeconfig, &raised, "1").await;
    let wide = deployment(&raised, "wide", 4, "500m", "wide:1");
    assert_eq!(warnings(&apply(&kubeconfig, &wide, &["--dry-run=server"])).len(), 1);
    quota(&c, &kubeconfig, &raised, "4").await;
    until(30, "the guard to see the raised quota", || async { warnings(&apply(&kubeconfig, &wide, &["--dry-run=server"])).is_empty().then_some(()) }).await;

    // ... and they outlive the API server: killed and started again (every watch cut, and the
    // store moved on, so that resuming from before is answered 410 Gone), then the quota is
    // lowered, and the next answer knows it. The guard listed the quotas again to learn it.
    let count = |metrics: &str, name: &str| {
        metrics.lines().find_map(|l| l.strip_prefix(name)).and_then(|n| n.trim().parse::<u64>().ok()).unwrap_or_else(|| panic!("{name} in\n{metrics}"))
    };
    let lists = r#"kubectl_quota_guard_lists_total{resource="resourcequotas"}"#;
    let before = count(&curl(&[&format!("{base}/metrics")]).1, lists);
    let restarted = Command::new(common::root().join("tests/cluster/lab.sh")).arg("restart-apiserver").env("KQ_LAB_DIR", &dir).output().unwrap();
    assert!(restarted.status.success(), "restarting the API server: {}", text(&restarted.stderr));
    quota(&c, &kubeconfig, &raised, "1").await;
    until(120, "the guard to see the lowered quota", || async { (warnings(&apply(&kubeconfig, &wide, &["--dry-run=server"])).len() == 1).then_some(()) }).await;
    let metrics = curl(&[&format!("{base}/metrics")]).1;
    assert!(count(&metrics, lists) > before, "the quotas listed again after the restart:\n{metrics}");
    assert!(count(&metrics, r#"kubectl_quota_guard_watch_failures_total{resource="resourcequotas"}"#) >= 1, "{metrics}");

    // 5. A namespace that opts in to refusals: a workload none of whose pods fit is refused.
    let strict = new_namespace(&c, "guard-enforce").await;
    let labelled = kubectl(&kubeconfig, &["label", "namespace", &strict, "kubectl-quota.io/guard=enforce"], None);
    assert!(labelled.status.success(), "{}", text(&labelled.stderr));
    quota(&c, &kubeconfig, &strict, "100m").await;
    // Probed by dry runs: an apply the guard let through before it saw the label would have
    // created the object, and kubectl sends nothing for it again.
    until(60, "the guard to see the label", || async {
        let out = apply(&kubeconfig, &deployment(&strict, "big", 2, "500m", "big:1"), &["--dry-run=server"]);
        (!out.status.success()).then_some(())
    })
    .await;
    let refused = apply(&kubeconfig, &deployment(&strict, "big", 2, "500m", "big:1"), &[]);
    assert!(!refused.status.success(), "{}", text(&refused.stderr));
    let said = text(&refused.stderr);
    assert!(
        said.contains("admission webhook \"guard.kubectl-quota.io\" denied the request: kubectl-quota guard: quota compute will refuse all 2 pods of deployment/big: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=0, limited: requests.cpu=100m"),
        "{said}"
    );
    // ... and an object labelled to opt out is not spoken about.
    let out = apply(
        &kubeconfig,
        &deployment(&strict, "big", 2, "500m", "big:1").replace("metadata: {name: big,", "metadata: {labels: {kubectl-quota.io/guard: ignore}, name: big,"),
        &[],
    );
    assert!(out.status.success() && warnings(&out).is_empty(), "{}", text(&out.stderr));

    // 6. A stopped guard never blocks: apply succeeds at once, unwarned.
    guard.stop();
    let after = new_namespace(&c, "guard-stopped").await;
    quota(&c, &kubeconfig, &after, "1").await;
    let started = Instant::now();
    let out = apply(&kubeconfig, &deployment(&after, "web", 4, "500m", "web:1"), &[]);
    let took = started.elapsed();
    assert!(out.status.success() && warnings(&out).is_empty(), "{}", text(&out.stderr));
    assert!(took < Duration::from_secs(15), "apply took {took:?} with the guard stopped");
    let s = plugin(&kubeconfig, &["guard", "status"]);
    assert_eq!(s.status.code(), Some(1));
    assert!(text(&s.stdout).contains("Reachable:   no"), "{}", text(&s.stdout));
    // Nor does a guard that hangs, or one that answers garbage: registered in its place, each
    // is called, and the API server admits after at most the registration's timeout (2 s).
    // A new name each time: kubectl sends nothing for an unchanged object.
    let attempt = std::sync::atomic::AtomicUsize::new(0);
    for hangs in [true, false] {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let called = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = called.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for mut conn in listener.incoming().flatten() {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if !hangs {
                    let _ = std::io::Write::write_all(&mut conn, b"HTTP/1.1 200 OK\r\ncontent-length: 8\r\n\r\nnot json");
                }
                held.push(conn);
            }
        });
        let url = format!("https://127.0.0.1:{port}/validate");
        let installed = plugin(&kubeconfig, &["guard", "install", "--url", &url, "--ca-file", certs.join("ca.crt").to_str().unwrap()]);
        assert!(installed.status.success(), "install: {}", text(&installed.stderr));
        let what = if hangs { "a guard that hangs" } else { "a guard that answers garbage" };
        let took = until(60, &format!("the API server to call {what}"), || async {
            let name = format!("try{}", attempt.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
            let started = Instant::now();
            let out = apply(&kubeconfig, &deployment(&after, &name, 4, "500m", "web:1"), &["--dry-run=server"]);
            let took = started.elapsed();
            assert!(out.status.success() && warnings(&out).is_empty(), "{what}: {}", text(&out.stderr));
            (called.load(std::sync::atomic::Ordering::SeqCst) > 0).then_some(took)
        })
        .await;
        assert!(took < Duration::from_secs(10), "{what}: apply took {took:?}");
    }

    // 7. Uninstalled: the registration is gone.
    let gone = plugin(&kubeconfig, &["guard", "uninstall"]);
    assert!(gone.status.success(), "{}", text(&gone.stderr));
    // An installation with --url made no namespace: nothing is said of one.
    assert_eq!(text(&gone.stdout), "validatingwebhookconfiguration.admissionregistration.k8s.io/kubectl-quota-guard deleted\n");
    let s = plugin(&kubeconfig, &["guard", "status"]);
    assert_eq!((s.status.code(), text(&s.stdout).starts_with("Registered:  no")), (Some(1), true), "{}", text(&s.stdout));
    let _ = std::fs::remove_dir_all(certs);

    // 8. In the cluster: install, status, a second install, the guard's pod run here, uninstall.
    // The registration names a Service, which the API server must reach through endpoints and
    // never through its ClusterIP, off loopback: only on a lab started so.
    let cmdline = std::fs::read_to_string(dir.join("kube-apiserver.pid"))
        .ok()
        .and_then(|pid| std::fs::read(format!("/proc/{}/cmdline", pid.trim())).ok())
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default();
    if !cmdline.contains("--enable-aggregator-routing=true") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the lab's API server runs without --enable-aggregator-routing=true: restart it with tests/cluster/lab.sh"
        );
        eprintln!("*** SKIPPED the in-cluster install: the lab's API server would call the Service's ClusterIP (restart the lab) ***");
        return;
    }
    in_cluster_install_applies_reports_and_uninstalls(&kubeconfig, &c).await;
    // Every call to the Service went to its endpoints (none, then the test's pod), never to its
    // ClusterIP (the lab's range is 10.96.0.0/16).
    let log = std::fs::read_to_string(dir.join("kube-apiserver.log")).unwrap_or_default();
    let dialled: Vec<&str> = log.lines().filter(|l| l.contains("failed calling webhook") && l.contains("dial tcp 10.96.")).collect();
    assert!(dialled.is_empty(), "the API server called the guard's Service other than through endpoints: {dialled:?}");
}

/// `guard install` without --url, on a lab that has no node to run the guard's pods until the
/// test runs one of them itself.
async fn in_cluster_install_applies_reports_and_uninstalls(kubeconfig: &Path, c: &Client) {
    let ns = format!("kq-guard-{}", std::process::id() % 100000);
    let none_registered = || {
        let s = plugin(kubeconfig, &["guard", "status"]);
        text(&s.stdout).starts_with("Registered:  no")
    };
    let out = plugin(kubeconfig, &["guard", "install", "--guard-namespace", &ns, "--image", "kubectl-quota:test"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let applied = text(&out.stdout);
    for line in [
        "namespace/",
        "clusterrole.rbac.authorization.k8s.io/kubectl-quota-guard",
        "secret/kubectl-quota-guard-tls",
        "deployment.apps/kubectl-quota-guard",
        "poddisruptionbudget.policy/kubectl-quota-guard",
        "service/kubectl-quota-guard",
        "validatingwebhookconfiguration.admissionregistration.k8s.io/kubectl-quota-guard",
    ] {
        assert!(applied.contains(line), "{line} in\n{applied}");
    }
    // The lab has no node: the guard's pods never run, and status says it cannot reach them.
    let s = plugin(kubeconfig, &["guard", "status"]);
    let said = text(&s.stdout);
    assert_eq!(s.status.code(), Some(1), "{said}");
    assert!(said.contains(&format!("Calls:       service {ns}/kubectl-quota-guard:443/validate")) && said.contains("Reachable:   no"), "{said}");
    // ... and admission goes on without it (failurePolicy Ignore).
    let other = new_namespace(c, "guard-ignored").await;
    let started = Instant::now();
    let out = apply(kubeconfig, &deployment(&other, "web", 1, "10m", "web:1"), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(15));
    // A second install keeps the CA (the Secret's), so the registration does not change.
    let before =
        kubectl(kubeconfig, &["get", "validatingwebhookconfiguration", "kubectl-quota-guard", "-o", "jsonpath={.webhooks[0].clientConfig.caBundle}"], None);
    assert!(plugin(kubeconfig, &["guard", "install", "--guard-namespace", &ns, "--image", "kubectl-quota:test"]).status.success());
    let after =
        kubectl(kubeconfig, &["get", "validatingwebhookconfiguration", "kubectl-quota-guard", "-o", "jsonpath={.webhooks[0].clientConfig.caBundle}"], None);
    assert_eq!(text(&before.stdout), text(&after.stdout));
    // Then one of its pods runs here, as its node would run it, and serves through its Service.
    match host_address() {
        Some(ip) => serves_as_its_own_pod(kubeconfig, c, &ns, ip).await,
        None => {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "the machine has no address off loopback for the guard's pod");
            eprintln!("*** SKIPPED the in-cluster guard serving: no address off loopback for its pod ***");
        }
    }
    let gone = plugin(kubeconfig, &["guard", "uninstall", "--guard-namespace", &ns]);
    assert!(gone.status.success(), "{}", text(&gone.stderr));
    let said = text(&gone.stdout);
    assert!(said.starts_with("validatingwebhookconfiguration.admissionregistration.k8s.io/kubectl-quota-guard deleted\n"), "{said}");
    assert!(
        said.contains("deployment.apps/kubectl-quota-guard deleted") && said.contains("clusterrole.rbac.authorization.k8s.io/kubectl-quota-guard deleted"),
        "{said}"
    );
    assert!(said.ends_with(&format!("namespace {ns:?} is kept: delete it with `kubectl delete namespace {ns}` if nothing else lives there\n")), "{said}");
    assert!(none_registered());
    let _ = kubectl(kubeconfig, &["delete", "namespace", &ns, "--wait=false"], None);
}

/// An address of this machine off loopback: the API server refuses loopback endpoints, so a
/// pod's IP must be one of these.
fn host_address() -> Option<std::net::IpAddr> {
    let out = Command::new("hostname").arg("-I").output().ok()?;
    text(&out.stdout).split_whitespace().filter_map(|a| a.parse::<std::net::IpAddr>().ok()).find(|a| a.is_ipv4() && !a.is_loopback())
}

/// The test as the node and kubelet of one of the guard's pods: a Node, the pod bound to it
/// and reported Ready at this machine's address, and the pod's own command run here: its
/// arguments from the Deployment, its certificate from the Secret `install` made, its API
/// access from its ServiceAccount's token (so the read-only ClusterRole must be enough). The
/// API server then finds the pod through the Service's endpoints, checks the certificate
/// against the registration's CA bundle, and carries the guard's warning to kubectl.
async fn serves_as_its_own_pod(kubeconfig: &Path, c: &Client, ns: &str, ip: std::net::IpAddr) {
    let node = format!("kq-guard-node-{}", std::process::id());
    let nodes = Api::<Node>::all(c.clone());
    let labelled = ListParams::default().labels("kq-test=guard");
    for old in nodes.list(&labelled).await.unwrap().items {
        let _ = nodes.delete(old.metadata.name.as_deref().unwrap_or_default(), &DeleteParams::default()).await;
    }
    let made: Node = serde_json::from_value(json!({"metadata": {"name": node, "labels": {"kq-test": "guard"}}})).unwrap();
    nodes.create(&PostParams::default(), &made).await.unwrap();
    // No kubelet renews the node: the node lifecycle controller would mark it, and then the
    // guard's pod, not ready after 40 s. A heartbeat every 5 s keeps it Ready.
    let beat = {
        let (nodes, node) = (nodes.clone(), node.clone());
        tokio::spawn(async move {
            loop {
                let now = k8s_openapi::jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
                let status = json!({"status": {
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "the test", "lastHeartbeatTime": now, "lastTransitionTime": now}],
                    "capacity": {"cpu": "2", "memory": "4Gi", "pods": "10"}, "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"},
                }});
                let _ = nodes.patch_status(&node, &PatchParams::default(), &Patch::Merge(&status)).await;
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        })
    };
    let served = run_the_pod(kubeconfig, c, ns, &node, ip).await;
    beat.abort();
    let _ = nodes.delete(&node, &DeleteParams::default()).await;
    served.unwrap_or_else(|e| panic!("{e}"));
}

async fn run_the_pod(kubeconfig: &Path, c: &Client, ns: &str, node: &str, ip: std::net::IpAddr) -> Result<(), String> {
    // The Deployment's pods exist (the lab's controller-manager made them) and wait for a node.
    let pods = Api::<Pod>::namespaced(c.clone(), ns);
    let pod = until(60, "the guard's pods", || async {
        let listed = pods.list(&ListParams::default().labels("app.kubernetes.io/name=kubectl-quota-guard")).await.ok()?;
        listed.items.into_iter().filter_map(|p| p.metadata.name).min()
    })
    .await;
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod}, "target": {"apiVersion": "v1", "kind": "Node", "name": node}});
    pods.create_subresource::<_, serde_json::Value>("binding", &pod, &PostParams::default(), &binding)
        .await
        .map_err(|e| format!("binding {pod} to {node}: {e}"))?;

    // What the kubelet would mount and run.
    let dir = std::env::temp_dir().join(format!("kq-guard-pod-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let secret = Api::<Secret>::namespaced(c.clone(), ns).get("kubectl-quota-guard-tls").await.unwrap();
    for (key, value) in secret.data.unwrap_or_default() {
        std::fs::write(dir.join(&key), value.0).unwrap();
    }
    let token = kubectl(kubeconfig, &["create", "token", "kubectl-quota-guard", "-n", ns, "--duration=1h"], None);
    if !token.status.success() {
        return Err(format!("a token for the guard's ServiceAccount: {}", text(&token.stderr)));
    }
    let lab = std::fs::read_to_string(kubeconfig).unwrap();
    let field = |name: &str| lab.lines().find_map(|l| l.trim().strip_prefix(name).map(str::trim)).unwrap().to_string();
    let sa_kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &sa_kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: lab\n  cluster: {{server: '{}', certificate-authority-data: {}}}\nusers:\n- name: guard\n  user: {{token: {}}}\ncontexts:\n- name: guard\n  context: {{cluster: lab, user: guard}}\ncurrent-context: guard\n",
            field("server:"),
            field("certificate-authority-data:"),
            text(&token.stdout).trim()
        ),
    )
    .unwrap();
    let deploy = serde_json::to_value(Api::<Deployment>::namespaced(c.clone(), ns).get("kubectl-quota-guard").await.unwrap()).unwrap();
    let container = &deploy["spec"]["template"]["spec"]["containers"][0];
    let mount = container["volumeMounts"][0]["mountPath"].as_str().unwrap().to_string();
    let args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().replace("0.0.0.0:", &format!("{ip}:")).replace(&mount, dir.to_str().unwrap()))
        .collect();
    assert!(args.iter().any(|a| a.starts_with(&format!("--listen={ip}:"))), "{args:?}");
    let log = std::fs::File::create(dir.join("guard.log")).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-quota"));
    cmd.arg("--kubeconfig").arg(&sa_kubeconfig).args(&args).env_remove("KUBECONFIG").stdout(Stdio::null()).stderr(log);
    // As the image's user (65532) where the test may pick one: the guard needs no root.
    let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap());
    if uid == 0 {
        use std::os::unix::fs::PermissionsExt;
        for f in std::fs::read_dir(&dir).unwrap() {
            std::fs::set_permissions(f.unwrap().path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::process::CommandExt::uid(&mut cmd, 65532);
        std::os::unix::process::CommandExt::gid(&mut cmd, 65532);
    }
    let child = cmd.spawn().unwrap();
    let running = Stopped(child);
    let result = serve_checks(kubeconfig, c, ns, &pod, ip, &dir).await;
    drop(running);
    // Gone at once, as its kubelet would confirm, rather than left to the pod GC.
    let _ = pods.delete(&pod, &DeleteParams { grace_period_seconds: Some(0), ..DeleteParams::default() }).await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

async fn serve_checks(kubeconfig: &Path, c: &Client, ns: &str, pod: &str, ip: std::net::IpAddr, dir: &Path) -> Result<(), String> {
    let now = k8s_openapi::jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let running = json!({"status": {
        "phase": "Running", "podIP": ip.to_string(), "podIPs": [{"ip": ip.to_string()}], "hostIP": ip.to_string(), "startTime": now,
        "conditions": [
            {"type": "Initialized", "status": "True", "lastTransitionTime": now},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
            {"type": "ContainersReady", "status": "True", "lastTransitionTime": now},
            {"type": "Ready", "status": "True", "lastTransitionTime": now},
        ],
    }});
    Api::<Pod>::namespaced(c.clone(), ns)
        .patch_status(pod, &PatchParams::default(), &Patch::Merge(&running))
        .await
        .map_err(|e| format!("pod {pod} reported running: {e}"))?;
    let log = || std::fs::read_to_string(dir.join("guard.log")).unwrap_or_default();
    // Reachable through the API server's proxy to the Service, synced under its own rights.
    let deadline = Instant::now() + Duration::from_secs(60);
    let said = loop {
        let s = plugin(kubeconfig, &["guard", "status"]);
        if s.status.success() {
            break text(&s.stdout);
        }
        if Instant::now() > deadline {
            return Err(format!("guard status never said reachable and synced:\n{}\n{}\nthe guard's log:\n{}", text(&s.stdout), text(&s.stderr), log()));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert!(said.contains(&format!("Calls:       service {ns}/kubectl-quota-guard:443/validate")), "{said}");
    assert!(said.contains("Reachable:   yes") && said.contains("Synced:      yes"), "{said}");
    // The API server calls it through the Service and carries its warning to kubectl.
    let team = new_namespace(c, "guard-in-cluster").await;
    quota(c, kubeconfig, &team, "1").await;
    let want = "quota compute will refuse 2 of the 4 pods of deployment/web: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1";
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // A dry run, so that a call the API server made before it saw the endpoints can be
        // made again on the same object.
        let out = apply(kubeconfig, &deployment(&team, "web", 4, "500m", "web:1"), &["--dry-run=server"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        if warnings(&out) == [want] {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("no warning from the in-cluster guard: {:?}\nthe guard's log:\n{}", warnings(&out), log()));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Ok(())
}
