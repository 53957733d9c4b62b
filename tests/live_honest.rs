//! Live tests of honest verdicts for workloads that exist already, on a real kube-apiserver and
//! kube-controller-manager (tests/cluster/lab.sh; tests/run-all.sh runs them against every lab
//! release). The Deployment is blocked by the real controllers; `check`, `plan` and `why` must
//! agree about it, live and from a snapshot of the same cluster, and say so in their exit
//! status.
//!
//! `KUBECTL_QUOTA_LAB` names the lab's state directory. Without it the tests say so loudly and
//! skip, except under CI=true, where they fail.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::live::{client, lab, new_namespace, plugin, text};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod, ResourceQuota};
use kube::api::{Api, DeleteParams, PostParams};
use kube::Client;
use serde_json::Value;

/// Waits until `check` would see what the controllers did: the quota's `used[pods]` and the
/// Deployment's `status.replicas` both at `pods`.
async fn wait_pods(c: &Client, ns: &str, pods: i64) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let q = serde_json::to_value(Api::<ResourceQuota>::namespaced(c.clone(), ns).get("pods").await.unwrap()).unwrap();
        let d = serde_json::to_value(Api::<Deployment>::namespaced(c.clone(), ns).get("shop").await.unwrap()).unwrap();
        let used = q["status"]["used"]["pods"].as_str().and_then(|s| s.parse::<i64>().ok());
        if used == Some(pods) && d["status"]["replicas"].as_i64() == Some(pods) {
            return;
        }
        assert!(Instant::now() < deadline, "never reached {pods} pods: quota {q}, deployment status {}", d["status"]);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn json(out: &std::process::Output, what: &str) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {}\n{}", text(&out.stdout), text(&out.stderr)))
}

const SHOP: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: shop}
spec:
  replicas: 6
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      automountServiceAccountToken: false
      containers: [{name: app, image: shop:1, resources: {requests: {cpu: 10m}}}]
";

/// What `check`, `plan` and `why` say of the blocked Deployment, for one kubeconfig or state.
fn answers(kubeconfig: &Path, ns: &str, manifest: &Path, state: Option<&Path>) -> (i32, Value, i32, Value) {
    let file = manifest.to_str().unwrap();
    let mut check_args = vec!["check", "-f", file, "-n", ns, "-o", "json"];
    let mut plan_args = vec!["plan", "-f", file, "-n", ns, "-o", "json"];
    if let Some(s) = state {
        check_args.extend(["--state", s.to_str().unwrap()]);
        plan_args.extend(["--state", s.to_str().unwrap()]);
    }
    let check = plugin(kubeconfig, &check_args);
    let plan = plugin(kubeconfig, &plan_args);
    (check.status.code().unwrap_or(-1), json(&check, "check"), plan.status.code().unwrap_or(-1), json(&plan, "plan"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deployment_blocked_by_quota_is_refused_by_check_plan_and_why_alike() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "honest").await;
    let quota: ResourceQuota = serde_json::from_value(serde_json::json!({"metadata": {"name": "pods"}, "spec": {"hard": {"pods": "2"}}})).unwrap();
    Api::<ResourceQuota>::namespaced(c.clone(), &ns).create(&PostParams::default(), &quota).await.unwrap();
    // The quota controller must have synced it before the pods come.
    let deadline = Instant::now() + Duration::from_secs(60);
    while serde_json::to_value(Api::<ResourceQuota>::namespaced(c.clone(), &ns).get("pods").await.unwrap()).unwrap()["status"]["hard"].is_null() {
        assert!(Instant::now() < deadline, "quota never synced");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let d: Deployment = serde_json::from_value(kubectl_quota_engine::manifest::parse_str("shop.yaml", SHOP).unwrap()[0].value.clone()).unwrap();
    Api::<Deployment>::namespaced(c.clone(), &ns).create(&PostParams::default(), &d).await.unwrap();
    // The real controllers create 2 pods; quota refuses the other 4 (FailedCreate).
    wait_pods(&c, &ns, 2).await;

    let manifest = std::env::temp_dir().join(format!("kq-honest-{}.yaml", std::process::id()));
    std::fs::write(&manifest, SHOP).unwrap();

    // why: 2 of 6 exist, 4 waiting, blocked by quota `pods`.
    let deadline = Instant::now() + Duration::from_secs(60);
    let why = loop {
        let out = plugin(&kubeconfig, &["why", "deploy/shop", "-n", &ns, "-o", "json"]);
        let v = json(&out, "why");
        if v["verdict"] == "blockedByQuota" || Instant::now() > deadline {
            break v;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!((why["wanted"].as_i64(), why["current"].as_i64(), why["waiting"].as_i64()), (Some(6), Some(2), Some(4)), "{why}");
    assert_eq!(why["quota"], "pods", "{why}");

    // Live and from a snapshot of the same cluster: the same answers.
    let snapshot = plugin(&kubeconfig, &["snapshot", "-n", &ns]);
    assert_eq!(snapshot.status.code(), Some(0), "{}", text(&snapshot.stderr));
    let state = std::env::temp_dir().join(format!("kq-honest-state-{}.yaml", std::process::id()));
    std::fs::write(&state, &snapshot.stdout).unwrap();
    for (how, state) in [("live", None), ("snapshot", Some(state.as_path()))] {
        let (check_code, check, plan_code, plan) = answers(&kubeconfig, &ns, &manifest, state);
        let doc = &check["documents"][0];
        // The Deployment object is admitted (it exists: an update); 4 of its 6 pods are refused.
        assert_eq!(check_code, 1, "{how}: check exit status\n{check:#}");
        assert_eq!(
            (doc["allowed"].as_bool(), doc["outcome"].as_str(), doc["replicas"].as_i64(), doc["replicasExisting"].as_i64(), doc["replicasAdmitted"].as_i64()),
            (Some(true), Some("podsRefused"), Some(6), Some(2), Some(2)),
            "{how}: {doc:#}"
        );
        let pod_message = doc["podMessage"].as_str().unwrap_or_default();
        assert!(pod_message.starts_with("exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2"), "{how}: {pod_message}");
        // why's replay of the next pod says the same as check (as the server's whole error).
        let replay = why["replayMessage"].as_str().unwrap_or_default();
        assert!(replay.ends_with(&format!("is forbidden: {pod_message}")), "{how}: why says {replay:?}, check {pod_message:?}");
        // plan: the quota must grow by the 4 missing pods.
        assert_eq!(plan_code, 1, "{how}: plan exit status\n{plan:#}");
        let row = plan["quotas"].as_array().unwrap().iter().flat_map(|q| q["resources"].as_array().unwrap().iter()).find(|r| r["resource"] == "pods").cloned();
        let row = row.unwrap_or_else(|| panic!("{how}: plan has no pods row: {plan:#}"));
        assert_eq!((row["needed"].as_str(), row["missing"].as_str()), (Some("6"), Some("4")), "{how}: {plan:#}");
    }
    let _ = Api::<Namespace>::all(c.clone()).delete(&ns, &DeleteParams::default()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_namespace_mismatch_and_a_missing_namespace_are_refused_as_kubectl_and_the_server_do() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "mismatch").await;
    let pod = |namespace: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {namespace}}}\nspec: {{automountServiceAccountToken: false, containers: [{{name: a, image: x}}]}}\n")
    };
    let file = std::env::temp_dir().join(format!("kq-mismatch-{}.yaml", std::process::id()));

    // kubectl refuses before sending anything; so does check (exit 1).
    std::fs::write(&file, pod("elsewhere")).unwrap();
    let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let v = json(&out, "check");
    assert_eq!(out.status.code(), Some(1), "{v:#}");
    let want = format!("the namespace from the provided object \"elsewhere\" does not match the namespace \"{ns}\". You must pass '--namespace=elsewhere' to perform this operation.");
    assert_eq!(v["documents"][0]["message"].as_str(), Some(want.as_str()), "{v:#}");

    // A namespace that does not exist: the server's own words, from a real (dry-run) create.
    let missing = format!("{ns}-missing");
    std::fs::write(&file, pod(&missing)).unwrap();
    let p: Pod = serde_json::from_value(kubectl_quota_engine::manifest::parse_str("p.yaml", &pod(&missing)).unwrap()[0].value.clone()).unwrap();
    let server = match Api::<Pod>::namespaced(c.clone(), &missing).create(&PostParams { dry_run: true, ..Default::default() }, &p).await {
        Err(kube::Error::Api(s)) => s.message,
        other => panic!("the server admitted a pod in a missing namespace: {other:?}"),
    };
    let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "-o", "json"]);
    let v = json(&out, "check");
    assert_eq!(out.status.code(), Some(1), "{v:#}");
    assert_eq!(v["documents"][0]["message"].as_str(), Some(server.as_str()), "{v:#}");

    // The offline twins. A snapshot of the missing namespace, and one of every namespace,
    // know it does not exist: the same refusal. A snapshot of another namespace knows nothing
    // of it: incomplete (exit 3), not a pass.
    let snapshot = |args: &[&str]| {
        let out = plugin(&kubeconfig, &[&["snapshot"], args].concat());
        assert_eq!(out.status.code(), Some(0), "snapshot {args:?}: {}", text(&out.stderr));
        let state = std::env::temp_dir().join(format!("kq-mismatch-state-{}-{}.yaml", std::process::id(), args.join("")));
        std::fs::write(&state, &out.stdout).unwrap();
        state
    };
    let of_ns = snapshot(&["-n", &ns]);
    for (what, state, exit, message) in [
        ("a snapshot of the missing namespace", snapshot(&["-n", &missing]), 1, Some(server.as_str())),
        ("a snapshot of every namespace", snapshot(&["-A"]), 1, Some(server.as_str())),
        ("a snapshot of another namespace", of_ns.clone(), 3, None),
    ] {
        let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", &missing, "-o", "json"]);
        let v = json(&out, "offline check");
        assert_eq!((out.status.code(), v["documents"][0]["message"].as_str()), (Some(exit), message), "{what}: {v:#}\n{}", text(&out.stderr));
        if state != of_ns {
            let _ = std::fs::remove_file(state);
        }
    }
    // The mismatch, offline.
    std::fs::write(&file, pod("elsewhere")).unwrap();
    let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "--state", of_ns.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let v = json(&out, "offline check");
    assert_eq!((out.status.code(), v["documents"][0]["message"].as_str()), (Some(1), Some(want.as_str())), "offline: {v:#}");
    let _ = std::fs::remove_file(&of_ns);

    // A kind the server does not serve: kubectl finds no resource for it and sends nothing; a
    // refusal, not a note beside a pass.
    std::fs::write(&file, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 1}\n").unwrap();
    let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let v = json(&out, "check");
    assert_eq!(out.status.code(), Some(1), "{v:#}");
    assert_eq!(v["documents"][0]["message"].as_str(), Some("no matches for kind \"Widget\" in version \"example.com/v1\""), "{v:#}");
    let _ = Api::<Namespace>::all(c.clone()).delete(&ns, &DeleteParams::default()).await;
}

/// A file that creates a namespace, its quota and pods in one apply: the quota controller syncs
/// the new quota before kubectl's next requests in practice, so the server refuses the pod that
/// does not fit. `check` says so live and from a snapshot taken before the apply, where it
/// used to call the quota "not enforced" and pass every pod.
#[tokio::test(flavor = "multi_thread")]
async fn a_quota_created_with_its_namespace_in_one_apply_is_enforced_on_what_follows() {
    let Some(kubeconfig) = lab() else { return };
    if !common::live::kubectl_here("apply the file as a user would") {
        return;
    }
    let c = client(&kubeconfig).await;
    let id = std::process::id();
    let manifest = |ns: &str| {
        let pod = |name: &str| {
            format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\nspec: {{automountServiceAccountToken: false, containers: [{{name: a, image: x}}]}}\n")
        };
        format!(
            "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: pods, namespace: {ns}}}\nspec: {{hard: {{pods: '1'}}}}\n---\n{}---\n{}",
            pod("a"),
            pod("b")
        )
    };
    // The server's answer depends on the quota controller's timing: a run where it was slower
    // than kubectl (both pods pass) is tried again in a fresh namespace.
    for attempt in 0..3 {
        let ns = format!("kq-sameapply-{id}-{attempt}");
        let file = std::env::temp_dir().join(format!("{ns}.yaml"));
        std::fs::write(&file, manifest(&ns)).unwrap();
        let f = file.to_str().unwrap();
        // Before the apply: live, and from a snapshot of every namespace.
        let live = plugin(&kubeconfig, &["check", "-f", f, "-o", "json"]);
        let snap = plugin(&kubeconfig, &["snapshot", "-A"]);
        assert_eq!(snap.status.code(), Some(0), "{}", text(&snap.stderr));
        let state = std::env::temp_dir().join(format!("{ns}-state.yaml"));
        std::fs::write(&state, &snap.stdout).unwrap();
        let offline = plugin(&kubeconfig, &["check", "-f", f, "--state", state.to_str().unwrap(), "-o", "json"]);
        for (how, out) in [("live", &live), ("snapshot", &offline)] {
            let v = json(out, how);
            let verdicts: Vec<(&str, bool)> = v["documents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| (d["name"].as_str().unwrap_or_default(), d["allowed"].as_bool().unwrap_or_default()))
                .collect();
            assert_eq!(verdicts, [(ns.as_str(), true), ("pods", true), ("a", true), ("b", false)], "{how}: {v:#}\n{}", text(&out.stderr));
            assert_eq!(out.status.code(), Some(1), "{how}: {v:#}");
            let note = v["documents"][1]["notes"].to_string();
            assert!(note.contains("timing"), "{how}: the quota's note says the answer can depend on timing: {note}");
        }
        // The apply, as a user runs it.
        let applied = std::process::Command::new("kubectl")
            .args(["--kubeconfig", kubeconfig.to_str().unwrap(), "--request-timeout=30s", "apply", "-f", f])
            .env_remove("KUBECONFIG")
            .output()
            .unwrap();
        let said = format!("{}{}", text(&applied.stdout), text(&applied.stderr));
        let _ = Api::<Namespace>::all(c.clone()).delete(&ns, &DeleteParams::default()).await;
        let _ = std::fs::remove_file(&file);
        let _ = std::fs::remove_file(&state);
        if applied.status.success() {
            eprintln!("attempt {attempt}: the quota controller was slower than kubectl, both pods passed:\n{said}");
            continue;
        }
        assert!(said.contains("pod/a created") && said.contains("pods \"b\" is forbidden: exceeded quota: pods"), "{said}");
        return;
    }
    panic!("in three tries the server never refused the second pod");
}

/// A namespace being terminated (held by an object's finalizer) takes no new object: the
/// server refuses the create (403), and `check` says so in its words, live and from a
/// snapshot, which keeps the namespace's phase.
#[tokio::test(flavor = "multi_thread")]
async fn a_pod_created_in_a_namespace_being_terminated_is_refused_live_and_offline() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Patch, PatchParams};
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "terminating").await;
    let hold: ConfigMap = serde_json::from_value(serde_json::json!({"metadata": {"name": "hold", "finalizers": ["example.com/hold"]}})).unwrap();
    Api::<ConfigMap>::namespaced(c.clone(), &ns).create(&PostParams::default(), &hold).await.unwrap();
    Api::<Namespace>::all(c.clone()).delete(&ns, &DeleteParams::default()).await.unwrap();
    let doc = format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {ns}}}\nspec: {{automountServiceAccountToken: false, containers: [{{name: a, image: x}}]}}\n");
    let file = std::env::temp_dir().join(format!("kq-terminating-{}.yaml", std::process::id()));
    std::fs::write(&file, &doc).unwrap();
    let p: Pod = serde_json::from_value(kubectl_quota_engine::manifest::parse_str("p.yaml", &doc).unwrap()[0].value.clone()).unwrap();
    let server = match Api::<Pod>::namespaced(c.clone(), &ns).create(&PostParams { dry_run: true, ..Default::default() }, &p).await {
        Err(kube::Error::Api(s)) => s.message,
        other => panic!("the server admitted a pod in a namespace being terminated: {other:?}"),
    };
    assert!(server.contains("because it is being terminated"), "{server}");

    let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "-o", "json"]);
    let v = json(&out, "check");
    assert_eq!((out.status.code(), v["documents"][0]["serverError"].as_str()), (Some(1), Some(server.as_str())), "live: {v:#}");

    let snap = plugin(&kubeconfig, &["snapshot", "-n", &ns]);
    assert_eq!(snap.status.code(), Some(0), "snapshot: {}", text(&snap.stderr));
    let state = std::env::temp_dir().join(format!("kq-terminating-state-{}.yaml", std::process::id()));
    std::fs::write(&state, &snap.stdout).unwrap();
    let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let v = json(&out, "offline check");
    assert_eq!((out.status.code(), v["documents"][0]["serverError"].as_str()), (Some(1), Some(server.as_str())), "offline: {v:#}");

    // Let the namespace go.
    let release = serde_json::json!({"metadata": {"finalizers": null}});
    Api::<ConfigMap>::namespaced(c.clone(), &ns).patch("hold", &PatchParams::default(), &Patch::Merge(&release)).await.unwrap();
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(&state);
}

/// A pod naming a ServiceAccount its namespace does not have: the server's ServiceAccount
/// plugin refuses it (403), and `check` says so in its words, live and from a snapshot (which
/// keeps the ServiceAccounts' names); a Deployment naming it is admitted and its pods refused.
#[tokio::test(flavor = "multi_thread")]
async fn a_pod_naming_a_missing_service_account_is_refused_live_and_offline() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "ghost-sa").await;
    let doc = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {ns}}}\nspec: {{serviceAccountName: ghost, automountServiceAccountToken: false, containers: [{{name: a, image: x}}]}}\n"
    );
    let file = std::env::temp_dir().join(format!("kq-ghost-sa-{}.yaml", std::process::id()));
    std::fs::write(&file, &doc).unwrap();
    let p: Pod = serde_json::from_value(kubectl_quota_engine::manifest::parse_str("p.yaml", &doc).unwrap()[0].value.clone()).unwrap();
    let server = match Api::<Pod>::namespaced(c.clone(), &ns).create(&PostParams { dry_run: true, ..Default::default() }, &p).await {
        Err(kube::Error::Api(s)) => s.message,
        other => panic!("the server admitted a pod naming a missing ServiceAccount: {other:?}"),
    };
    let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "-o", "json"]);
    let v = json(&out, "check");
    assert_eq!((out.status.code(), v["documents"][0]["serverError"].as_str()), (Some(1), Some(server.as_str())), "live: {v:#}");

    let snap = plugin(&kubeconfig, &["snapshot", "-n", &ns]);
    assert_eq!(snap.status.code(), Some(0), "snapshot: {}", text(&snap.stderr));
    let state = std::env::temp_dir().join(format!("kq-ghost-sa-state-{}.yaml", std::process::id()));
    std::fs::write(&state, &snap.stdout).unwrap();
    let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let v = json(&out, "offline check");
    assert_eq!((out.status.code(), v["documents"][0]["serverError"].as_str()), (Some(1), Some(server.as_str())), "offline: {v:#}");

    // The same pods from a Deployment: admitted, its pods refused with the server's words.
    let deployment = format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: {ns}}}\nspec:\n  replicas: 2\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{serviceAccountName: ghost, automountServiceAccountToken: false, containers: [{{name: a, image: x}}]}}\n");
    std::fs::write(&file, &deployment).unwrap();
    let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "-o", "json"]);
    let v = json(&out, "check");
    let words = server.split_once("is forbidden: ").map(|(_, w)| w).unwrap_or(&server);
    assert_eq!((out.status.code(), v["documents"][0]["podMessage"].as_str()), (Some(1), Some(words)), "deployment: {v:#}");
    let _ = Api::<Namespace>::all(c.clone()).delete(&ns, &DeleteParams::default()).await;
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(&state);
}

/// A privileged container: whether the server takes it rests on its `--allow-privileged`, which
/// no API shows (the lab runs without it: upstream's default, false, unless
/// KQ_LAB_ALLOW_PRIVILEGED says otherwise). `check` given the server's setting answers as the
/// server does, for a pod and for a Deployment (refused itself, at its template's path); not
/// given it, `check` takes it as allowed and says its answer rests on the flag.
#[tokio::test(flavor = "multi_thread")]
async fn a_privileged_container_is_answered_as_the_server_allows_it_and_the_note_says_on_what() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "privileged").await;
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {ns}}}\nspec: {{containers: [{{name: a, image: x, securityContext: {{privileged: true}}}}]}}\n"
    );
    let deployment = format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: {ns}}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: a, image: x, securityContext: {{privileged: true}}}}]}}\n");
    let dry = PostParams { dry_run: true, ..Default::default() };
    let p: Pod = serde_json::from_value(kubectl_quota_engine::manifest::parse_str("p.yaml", &pod).unwrap()[0].value.clone()).unwrap();
    let d: Deployment = serde_json::from_value(kubectl_quota_engine::manifest::parse_str("d.yaml", &deployment).unwrap()[0].value.clone()).unwrap();
    let pod_answer = match Api::<Pod>::namespaced(c.clone(), &ns).create(&dry, &p).await {
        Ok(_) => None,
        Err(kube::Error::Api(s)) => Some(s.message),
        Err(e) => panic!("creating the pod: {e}"),
    };
    let deployment_answer = match Api::<Deployment>::namespaced(c.clone(), &ns).create(&dry, &d).await {
        Ok(_) => None,
        Err(kube::Error::Api(s)) => Some(s.message),
        Err(e) => panic!("creating the Deployment: {e}"),
    };
    assert_eq!(pod_answer.is_some(), deployment_answer.is_some(), "the server took one and refused the other: {pod_answer:?} {deployment_answer:?}");
    let allowed = if pod_answer.is_none() { "true" } else { "false" };
    let file = std::env::temp_dir().join(format!("kq-privileged-{}.yaml", std::process::id()));
    for (doc, answer) in [(&pod, &pod_answer), (&deployment, &deployment_answer)] {
        std::fs::write(&file, doc).unwrap();
        let flag = format!("--allow-privileged={allowed}");
        let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "-o", "json", &flag]);
        let v = json(&out, "check");
        let got = (v["documents"][0]["allowed"].as_bool(), v["documents"][0]["serverError"].as_str().map(str::to_string));
        assert_eq!(got, (Some(answer.is_none()), answer.clone()), "check {flag}: {v:#}");
        let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "-o", "json"]);
        let v = json(&out, "check");
        let noted = v["documents"][0]["notes"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|n| n.as_str().is_some_and(|n| n.contains("--allow-privileged=true, which no API shows")));
        assert_eq!((out.status.code(), v["documents"][0]["allowed"].as_bool(), noted), (Some(0), Some(true), true), "check without the flag: {v:#}");
    }
    let _ = Api::<Namespace>::all(c.clone()).delete(&ns, &DeleteParams::default()).await;
    let _ = std::fs::remove_file(&file);
}

/// A namespace enforcing PodSecurity's restricted level: the real server refuses a plain pod
/// with PodSecurity's words, and `check` gives those words live (the namespace's labels read)
/// and from a snapshot (which keeps them); a Deployment of that pod is admitted, its pods
/// refused, and `why` names PodSecurity. Before 1.23 there is no PodSecurity: both admit it.
#[tokio::test(flavor = "multi_thread")]
async fn a_pod_breaking_the_namespace_pod_security_level_is_refused_live_and_offline() {
    use kube::api::{Patch, PatchParams};
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "restricted").await;
    let label = serde_json::json!({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}}});
    Api::<Namespace>::all(c.clone()).patch(&ns, &PatchParams::default(), &Patch::Merge(&label)).await.unwrap();
    let doc = format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {ns}}}\nspec: {{automountServiceAccountToken: false, containers: [{{name: a, image: x}}]}}\n");
    let file = std::env::temp_dir().join(format!("kq-restricted-{}.yaml", std::process::id()));
    std::fs::write(&file, &doc).unwrap();
    let p: Pod = serde_json::from_value(kubectl_quota_engine::manifest::parse_str("p.yaml", &doc).unwrap()[0].value.clone()).unwrap();
    let server = match Api::<Pod>::namespaced(c.clone(), &ns).create(&PostParams { dry_run: true, ..Default::default() }, &p).await {
        Err(kube::Error::Api(s)) => Some(s.message),
        Ok(_) => None,
        Err(e) => panic!("{e}"),
    };
    let enforced = common::live::lab_version() >= kubectl_quota_engine::version::KubeVersion::new(1, 23);
    assert_eq!(server.is_some(), enforced, "the server's answer: {server:?}");
    if let Some(m) = &server {
        assert!(m.contains("violates PodSecurity \"restricted:latest\""), "{m}");
    }
    let want_status = if enforced { Some(1) } else { Some(0) };
    let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "-o", "json"]);
    let v = json(&out, "check");
    assert_eq!((out.status.code(), v["documents"][0]["serverError"].as_str()), (want_status, server.as_deref()), "live: {v:#}");

    let snap = plugin(&kubeconfig, &["snapshot", "-n", &ns]);
    assert_eq!(snap.status.code(), Some(0), "snapshot: {}", text(&snap.stderr));
    let state = std::env::temp_dir().join(format!("kq-restricted-state-{}.yaml", std::process::id()));
    std::fs::write(&state, &snap.stdout).unwrap();
    let out = plugin(&kubeconfig, &["check", "-f", file.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let v = json(&out, "offline check");
    assert_eq!((out.status.code(), v["documents"][0]["serverError"].as_str()), (want_status, server.as_deref()), "offline: {v:#}");

    if enforced {
        // The Deployment: admitted; the ReplicaSet controller cannot create its pods.
        let d: Deployment =
            serde_json::from_value(kubectl_quota_engine::manifest::parse_str("d.yaml", &SHOP.replace("replicas: 6", "replicas: 2")).unwrap()[0].value.clone())
                .unwrap();
        Api::<Deployment>::namespaced(c.clone(), &ns).create(&PostParams::default(), &d).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let why = loop {
            let out = plugin(&kubeconfig, &["why", "deployment/shop", "-n", &ns]);
            let t = text(&out.stdout);
            if t.contains("The server said") || Instant::now() > deadline {
                break t;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        assert!(why.contains("blocked by PodSecurity (not by quota)") && why.contains("violates PodSecurity \"restricted:latest\""), "why: {why}");
    }
    let _ = Api::<Namespace>::all(c.clone()).delete(&ns, &DeleteParams::default()).await;
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(&state);
}
