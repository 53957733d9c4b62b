//! Live tests of the cluster views (`capacity`, `uncovered`, `blocked`) on a real
//! kube-apiserver and kube-controller-manager (tests/cluster/lab.sh): nodes made through the
//! API with their status set through the status subresource (no kubelet runs), quotas and pods
//! in several namespaces, and a Deployment the real controllers find blocked by quota. Live and
//! from a snapshot of the same cluster, the views must say the same.
//!
//! No kubelet renews the nodes' leases, so the node lifecycle controller may mark them
//! NotReady and taint them while the test runs: what a node must count as is worked out from
//! the node as read around each run, never assumed.
//!
//! `KUBECTL_QUOTA_LAB` names the lab's state directory. Without it the tests say so loudly and
//! skip, except under CI=true, where they fail.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::live::{client, lab, new_namespace, plugin, text};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod, ResourceQuota};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::Client;
use serde_json::{json, Value};

/// Deletes what the test made, also when an assertion fails half-way.
struct Cleanup {
    c: Client,
    nodes: Vec<String>,
    namespaces: Vec<String>,
    rbac: Vec<String>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let c = self.c.clone();
        let (nodes, namespaces, rbac) = (self.nodes.clone(), self.namespaces.clone(), self.rbac.clone());
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async move {
                let dp = DeleteParams::default();
                for n in &rbac {
                    let _ = Api::<ClusterRoleBinding>::all(c.clone()).delete(n, &dp).await;
                    let _ = Api::<ClusterRole>::all(c.clone()).delete(n, &dp).await;
                }
                for n in &nodes {
                    let _ = Api::<Node>::all(c.clone()).delete(n, &dp).await;
                }
                for ns in &namespaces {
                    let _ = Api::<Namespace>::all(c.clone()).delete(ns, &dp).await;
                }
            })
        });
    }
}

fn json_of(out: &std::process::Output, what: &str) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {}\n{}", text(&out.stdout), text(&out.stderr)))
}

/// Makes a node as a kubelet would register it, then sets its status (Ready, allocatable)
/// through the status subresource.
async fn make_node(c: &Client, name: &str, spec: Value, allocatable: Value) {
    let api = Api::<Node>::all(c.clone());
    let node: Node = serde_json::from_value(json!({"metadata": {"name": name, "labels": {"kq-test": "capacity"}}, "spec": spec})).unwrap();
    api.create(&PostParams::default(), &node).await.unwrap();
    let now = "2026-01-01T00:00:00Z";
    let status = json!({"status": {
        "capacity": allocatable, "allocatable": allocatable,
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "test", "lastHeartbeatTime": now, "lastTransitionTime": now}],
    }});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status)).await.unwrap();
}

/// Whether a node, as read now, is one the views count: schedulable, Ready, no
/// NoSchedule/NoExecute taint. With its resourceVersion, to tell whether it changed.
async fn counted(c: &Client, name: &str) -> (bool, String) {
    let n = serde_json::to_value(Api::<Node>::all(c.clone()).get(name).await.unwrap()).unwrap();
    let ready = n["status"]["conditions"].as_array().into_iter().flatten().any(|x| x["type"] == "Ready" && x["status"] == "True");
    let tainted = n["spec"]["taints"].as_array().into_iter().flatten().any(|t| t["effect"] == "NoSchedule" || t["effect"] == "NoExecute");
    let cordoned = n["spec"]["unschedulable"].as_bool() == Some(true);
    (ready && !tainted && !cordoned, n["metadata"]["resourceVersion"].as_str().unwrap_or("").to_string())
}

async fn synced(c: &Client, ns: &str, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while serde_json::to_value(Api::<ResourceQuota>::namespaced(c.clone(), ns).get(name).await.unwrap()).unwrap()["status"]["hard"].is_null() {
        assert!(Instant::now() < deadline, "quota {ns}/{name} never synced");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn row<'a>(report: &'a Value, resource: &str) -> &'a Value {
    report["resources"].as_array().unwrap().iter().find(|r| r["resource"] == resource).unwrap_or_else(|| panic!("no row {resource}: {report:#}"))
}

fn left_out(report: &Value, node: &str) -> Option<Vec<String>> {
    report["nodesLeftOut"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == node)
        .map(|l| l["reasons"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect())
}

/// Runs `capacity` with the node `ready` read just before and after: the run is taken when
/// the node did not change in between, so whether it counts is known.
async fn capacity_with(c: &Client, kubeconfig: &Path, ready: &str, args: &[&str]) -> (Value, bool) {
    for _ in 0..10 {
        let before = counted(c, ready).await;
        let out = plugin(kubeconfig, args);
        let after = counted(c, ready).await;
        if before == after {
            assert_eq!(out.status.code(), Some(0), "capacity: {}", text(&out.stderr));
            return (json_of(&out, "capacity"), before.0);
        }
    }
    panic!("node {ready} kept changing");
}

/// What every run must say of the test's own objects, `counts` being whether the ready node
/// counts.
fn check_capacity(report: &Value, how: &str, nodes: &[String; 3], widget: &str, a: &str, b: &str, counts: bool) {
    assert_eq!(left_out(report, &nodes[1]).map(|r| r.contains(&"unschedulable (cordoned)".to_string())), Some(true), "{how}: {report:#}");
    assert_eq!(left_out(report, &nodes[2]).map(|r| r.contains(&"taint kq-test=capacity:NoSchedule".to_string())), Some(true), "{how}: {report:#}");
    assert_eq!(left_out(report, &nodes[0]).is_none(), counts, "{how}: node {} {report:#}", nodes[0]);
    let w = row(report, widget);
    assert_eq!(w["promised"], "5", "{how}: {w:#}");
    if counts {
        assert_eq!((w["allocatable"].as_str(), w["promisedPercent"].as_u64()), (Some("3"), Some(166)), "{how}: {w:#}");
    } else {
        assert!(w["allocatable"].is_null() || w["allocatable"] == "0", "{how}: no schedulable node offers it: {w:#}");
    }
    let cpu = row(report, "requests.cpu");
    let unbounded: Vec<&str> = cpu["unbounded"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(unbounded.contains(&b) && !unbounded.contains(&a), "{how}: {cpu:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn capacity_uncovered_and_blocked_live_and_from_a_snapshot() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    // Nodes an earlier run left behind (it failed before its cleanup) would change the sums.
    let nodes_api = Api::<Node>::all(c.clone());
    for n in nodes_api.list(&kube::api::ListParams::default().labels("kq-test=capacity")).await.unwrap() {
        let _ = nodes_api.delete(&n.metadata.name.unwrap_or_default(), &DeleteParams::default()).await;
    }
    let id = std::process::id() % 100000;
    let widget = format!("kq{id}.example.com/widget");
    let nodes = [format!("kq-cap-ready-{id}"), format!("kq-cap-cordoned-{id}"), format!("kq-cap-tainted-{id}")];
    let mut cleanup = Cleanup { c: c.clone(), nodes: nodes.to_vec(), namespaces: vec![], rbac: vec![] };
    make_node(&c, &nodes[0], json!({}), json!({"cpu": "4", "memory": "8Gi", "pods": "110", &widget: "3"})).await;
    make_node(&c, &nodes[1], json!({"unschedulable": true}), json!({"cpu": "4", "pods": "110"})).await;
    make_node(&c, &nodes[2], json!({"taints": [{"key": "kq-test", "value": "capacity", "effect": "NoSchedule"}]}), json!({"cpu": "4", "pods": "110"})).await;

    let a = new_namespace(&c, "kq-cap-a").await;
    let b = new_namespace(&c, "kq-cap-b").await;
    cleanup.namespaces = vec![a.clone(), b.clone()];
    let quota: ResourceQuota = serde_json::from_value(
        json!({"metadata": {"name": "compute"}, "spec": {"hard": {"requests.cpu": "2", "pods": "10", format!("requests.{widget}"): "5"}}}),
    )
    .unwrap();
    Api::<ResourceQuota>::namespaced(c.clone(), &a).create(&PostParams::default(), &quota).await.unwrap();
    let scoped: ResourceQuota =
        serde_json::from_value(json!({"metadata": {"name": "besteffort"}, "spec": {"hard": {"pods": "3"}, "scopes": ["BestEffort"]}})).unwrap();
    Api::<ResourceQuota>::namespaced(c.clone(), &a).create(&PostParams::default(), &scoped).await.unwrap();
    synced(&c, &a, "compute").await;
    // The pods stay Pending, on every lab: where the lab has a node (1.37), a pod placed there
    // could be refused by its kubelet (OutOfcpu, with the other tests' pods beside it), turn
    // Failed and leave quota, and the answers below would change under the test.
    let nowhere = json!({"kq-test/nowhere": "true"});
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "scratch"}, "spec": {"automountServiceAccountToken": false, "nodeSelector": nowhere, "containers": [{"name": "app", "image": "x", "resources": {"requests": {"cpu": "250m"}}}]}})).unwrap();
    Api::<Pod>::namespaced(c.clone(), &b).create(&PostParams::default(), &pod).await.unwrap();
    // Three pods of 1 CPU against 2: the real controllers create two, the quota refuses the third.
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
            "automountServiceAccountToken": false, "nodeSelector": nowhere, "containers": [{"name": "app", "image": "web:1", "resources": {"requests": {"cpu": "1"}}}]}}}
    }))
    .unwrap();
    Api::<Deployment>::namespaced(c.clone(), &a).create(&PostParams::default(), &d).await.unwrap();

    // blocked: the Deployment, once the ReplicaSet's FailedCreate event is there.
    let deadline = Instant::now() + Duration::from_secs(90);
    let blocked = loop {
        let out = plugin(&kubeconfig, &["blocked", "-n", &a, "-o", "json"]);
        let v = json_of(&out, "blocked");
        // The ReplicaSet's status.replicas catches up after the event: wait for two pods counted.
        if out.status.code() == Some(1) && v["blocked"][0]["resources"][0] == "requests.cpu" && v["blocked"][0]["waiting"] == 1 {
            break v;
        }
        assert!(Instant::now() < deadline, "never blocked: {v:#}\n{}", text(&out.stderr));
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let entry = &blocked["blocked"][0];
    assert_eq!(
        (entry["namespace"].as_str(), entry["workload"].as_str(), entry["quota"].as_str(), entry["waiting"].as_i64()),
        (Some(a.as_str()), Some("deployment/web"), Some("compute"), Some(1)),
        "{blocked:#}"
    );
    assert!(entry["fix"].as_str().unwrap().starts_with("raise quota compute's requests.cpu by 1 (to 3) to admit the next pod"), "{blocked:#}");
    let text_out = plugin(&kubeconfig, &["blocked", "-n", &a]);
    assert!(text(&text_out.stdout).contains("deployment/web"), "{}", text(&text_out.stdout));

    // capacity, live.
    let (live, counts) = capacity_with(&c, &kubeconfig, &nodes[0], &["capacity", "-o", "json"]).await;
    check_capacity(&live, "live", &nodes, &format!("requests.{widget}"), &a, &b, counts);
    let (by_ns, _) = capacity_with(&c, &kubeconfig, &nodes[0], &["capacity", "--by", "namespace", "--resource", "cpu", "-o", "json"]).await;
    let share = row(&by_ns, "requests.cpu")["namespaces"].as_array().unwrap().iter().find(|s| s["namespace"] == a.as_str()).cloned().unwrap();
    assert_eq!((share["cap"].as_str(), share["quota"].as_str(), share["used"].as_str()), (Some("2"), Some("compute"), Some("2")), "{share:#}");

    // uncovered: b has no quota, a has one.
    let out = plugin(&kubeconfig, &["uncovered", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let unc = json_of(&out, "uncovered");
    let names: Vec<&str> = unc["uncovered"].as_array().unwrap().iter().map(|u| u["namespace"].as_str().unwrap()).collect();
    assert!(names.contains(&b.as_str()) && !names.contains(&a.as_str()), "{unc:#}");

    // From a snapshot of the same cluster: the same answers.
    let snap = plugin(&kubeconfig, &["snapshot", "-A", "-o", "json"]);
    assert_eq!(snap.status.code(), Some(0), "{}", text(&snap.stderr));
    let counts_then = counted(&c, &nodes[0]).await.0;
    let state = std::env::temp_dir().join(format!("kq-capacity-state-{id}.json"));
    std::fs::write(&state, &snap.stdout).unwrap();
    let s = state.to_str().unwrap();
    let out = plugin(&kubeconfig, &["capacity", "--state", s, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    check_capacity(&json_of(&out, "capacity --state"), "snapshot", &nodes, &format!("requests.{widget}"), &a, &b, counts_then);
    let out = plugin(&kubeconfig, &["blocked", "--state", s, "-n", &a, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    // The controller retries meanwhile: the event's pod name and count move on, nothing else.
    let same = |v: &Value| {
        v["blocked"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| json!([b["namespace"], b["workload"], b["via"], b["waiting"], b["quota"], b["resources"], b["fix"]]))
            .collect::<Vec<_>>()
    };
    assert_eq!(same(&json_of(&out, "blocked --state")), same(&blocked));
    let out = plugin(&kubeconfig, &["uncovered", "--state", s, "-o", "json"]);
    assert!(json_of(&out, "uncovered --state")["uncovered"].as_array().unwrap().iter().any(|u| u["namespace"] == b.as_str()));

    // One namespace scope for every view, live and from the snapshot alike: -A is every
    // namespace, -n one, and an answer says where it looked.
    for source in [&[][..], &["--state", s][..]] {
        let run = |args: &[&str]| plugin(&kubeconfig, &[args, source].concat());
        let all = json_of(&run(&["capacity", "-A", "-o", "json"]), "capacity -A");
        assert_eq!(all["scope"], "all namespaces", "{all:#}");
        let one = json_of(&run(&["capacity", "-n", &a, "--by", "namespace", "--resource", "cpu", "-o", "json"]), "capacity -n");
        assert_eq!(one["scope"], format!("namespace {a}"), "{one:#}");
        let shares = row(&one, "requests.cpu")["namespaces"].as_array().unwrap().clone();
        assert!(shares.iter().all(|x| x["namespace"] == a.as_str()) && !shares.is_empty(), "{one:#}");
        let unc = json_of(&run(&["uncovered", "-n", &b, "-o", "json"]), "uncovered -n");
        let names: Vec<&str> = unc["uncovered"].as_array().unwrap().iter().map(|u| u["namespace"].as_str().unwrap()).collect();
        assert_eq!(names, [b.as_str()], "{unc:#}");
        let out = run(&["blocked", "-n", &b]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains(&format!("No workload is blocked in namespace {b} (-A looks in every namespace).")), "{}", text(&out.stdout));
        let out = run(&["blocked", "-A", "-o", "json"]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert!(json_of(&out, "blocked -A")["blocked"].as_array().unwrap().iter().any(|x| x["namespace"] == a.as_str()));
    }

    // A user who may list quotas and namespaces but not nodes, pods or events: the answer
    // says what it could not read, and exits 3.
    let user = format!("kq-cap-viewer-{id}");
    cleanup.rbac.push(user.clone());
    let role: ClusterRole = serde_json::from_value(
        json!({"metadata": {"name": user}, "rules": [{"apiGroups": [""], "resources": ["resourcequotas", "namespaces"], "verbs": ["list", "get"]}]}),
    )
    .unwrap();
    Api::<ClusterRole>::all(c.clone()).create(&PostParams::default(), &role).await.unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": user}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": user},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]
    }))
    .unwrap();
    Api::<ClusterRoleBinding>::all(c.clone()).create(&PostParams::default(), &binding).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let out = loop {
        let out = plugin(&kubeconfig, &["--as", &user, "capacity", "-o", "json"]);
        if out.status.code() == Some(3) || Instant::now() > deadline {
            break out;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("cannot list nodes on ") && err.contains("cannot list pods in all namespaces on ") && err.contains("Forbidden"), "{err}");
    assert_eq!(row(&json_of(&out, "capacity as viewer"), &format!("requests.{widget}"))["promised"], "5");
    let out = plugin(&kubeconfig, &["--as", &user, "blocked", "-A"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cannot list events in all namespaces on "), "{}", text(&out.stderr));
    // Without even the quotas there is no answer: exit 1, as describe.
    let out = plugin(&kubeconfig, &["--as", "kq-nobody", "capacity"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));

    let _ = std::fs::remove_file(&state);
}

/// `-n NS` narrows the views to NS, reads included: a user whose only right is `view` in NS
/// (a RoleBinding there) gets NS's promise and its uncovered line, with what the cluster
/// would not show it (nodes, namespaces) said on standard error (exit 3, incomplete), never
/// a refusal for quotas of namespaces it did not ask about.
#[tokio::test(flavor = "multi_thread")]
async fn view_in_one_namespace_answers_capacity_and_uncovered_for_it() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "kq-cap-one").await;
    let _cleanup = Cleanup { c: c.clone(), nodes: vec![], namespaces: vec![ns.clone()], rbac: vec![] };
    let quota: ResourceQuota = serde_json::from_value(json!({"metadata": {"name": "compute"}, "spec": {"hard": {"requests.cpu": "3", "pods": "4"}}})).unwrap();
    Api::<ResourceQuota>::namespaced(c.clone(), &ns).create(&PostParams::default(), &quota).await.unwrap();
    synced(&c, &ns, "compute").await;
    let user = format!("kq-ns-viewer-{}", std::process::id());
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "view"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(c.clone(), &ns).create(&PostParams::default(), &binding).await.unwrap();
    let run = |args: &[&str]| plugin(&kubeconfig, &[&["--as", user.as_str()][..], args].concat());
    // The binding takes effect within moments.
    let deadline = Instant::now() + Duration::from_secs(30);
    while run(&["describe", "-n", &ns]).status.code() != Some(0) {
        assert!(Instant::now() < deadline, "the RoleBinding never took effect");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let out = run(&["capacity", "-n", &ns, "-o", "json"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("cannot list nodes on ") && !err.contains("resourcequotas"), "{err}");
    let report = json_of(&out, "capacity -n");
    assert_eq!(row(&report, "requests.cpu")["promised"], "3", "{report:#}");
    let out = run(&["uncovered", "-n", &ns]);
    assert_ne!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("resourcequotas"), "{}", text(&out.stderr));
}

/// An HPA whose Deployment does not exist (left behind when the Deployment was deleted:
/// kubectl shows `<unknown>`) is a normal state of a cluster: `capacity` names it in a note and
/// exits 0; exit 3 stays for what could not be read.
#[tokio::test(flavor = "multi_thread")]
async fn an_hpa_whose_target_does_not_exist_is_a_note_with_exit_0() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "kq-cap-orphan").await;
    let _cleanup = Cleanup { c: c.clone(), nodes: vec![], namespaces: vec![ns.clone()], rbac: vec![] };
    let quota: ResourceQuota = serde_json::from_value(json!({"metadata": {"name": "compute"}, "spec": {"hard": {"requests.cpu": "2"}}})).unwrap();
    Api::<ResourceQuota>::namespaced(c.clone(), &ns).create(&PostParams::default(), &quota).await.unwrap();
    synced(&c, &ns, "compute").await;
    let hpa = json!({
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "burn"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "burn"}, "minReplicas": 1, "maxReplicas": 4},
    });
    let ar = kube::api::ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("autoscaling", "v1", "HorizontalPodAutoscaler"),
        "horizontalpodautoscalers",
    );
    let obj: kube::api::DynamicObject = serde_json::from_value(hpa).unwrap();
    Api::<kube::api::DynamicObject>::namespaced_with(c.clone(), &ns, &ar).create(&PostParams::default(), &obj).await.unwrap();
    let out = plugin(&kubeconfig, &["capacity", "-n", &ns, "-o", "json"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(&format!("note: autoscalers whose target does not exist, nothing to count for them: HPA burn in {ns} (deployment/burn)")), "{err}");
    assert!(!err.contains("was not read"), "{err}");
}
