//! A real node in the lab (tests/cluster/node.sh: containerd, runc, a CNI bridge, the kubelet
//! and kube-scheduler of the lab's release, images built here): pods are scheduled and run.
//! One test, step by step, since the guard's registration is cluster-wide:
//!   1. a pod of the workload image runs (Running, an address on the pods' bridge);
//!   2. `guard install` without `--url`, with kubectl-quota's image built from the binary under
//!      test: its Deployment becomes Ready on the node, the guard reads the cluster through its
//!      ServiceAccount (in-cluster config: token and CA mounted by the kubelet, the `kubernetes`
//!      Service's address), `guard status` reaches it through the service proxy, the API server
//!      calls it through its Service and carries its warning to kubectl, `guard uninstall`
//!      removes it;
//!   3. `capacity` counts the node's allocatable as its kubelet reports it.
//!
//! `KUBECTL_QUOTA_NODE` names the node's state directory (what `node.sh env` prints), beside
//! `KUBECTL_QUOTA_LAB`. Without it the test says so and skips; under CI=true it fails, unless
//! it is `none` (tests/run-all.sh says so for a release the harness has no node for).

mod common;
#[path = "support/deadline.rs"]
mod deadline;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::live::{client, eventually, lab_dir, new_namespace, plugin, text};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::Client;
use serde_json::{json, Value};

/// The node's state directory, or `None` (the test skips) with the reason on standard error.
fn node_dir() -> Option<PathBuf> {
    match std::env::var("KUBECTL_QUOTA_NODE").as_deref() {
        Ok("none") => {
            eprintln!("\n*** SKIPPED: the lab's harness runs no node for this release (KUBECTL_QUOTA_NODE=none) ***\n");
            None
        }
        Ok(dir) => Some(PathBuf::from(dir)),
        Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("the node test needs the lab's node under CI: run it through tests/run-all.sh")
        }
        Err(_) => {
            eprintln!(
                "\n*** SKIPPED: the node test needs a lab with a node; run tests/run-all.sh, or tests/cluster/node.sh up and export KUBECTL_QUOTA_NODE ***\n"
            );
            None
        }
    }
}

/// `kubectl` with the lab's kubeconfig, bounded.
fn kubectl(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new("kubectl");
    cmd.arg("--kubeconfig").arg(kubeconfig).args(args).env_remove("KUBECONFIG");
    if let Some(input) = stdin {
        // Through a file: the deadline helper owns the pipes.
        let f = std::env::temp_dir().join(format!("kq-node-stdin-{}-{}", std::process::id(), input.len()));
        std::fs::write(&f, input).unwrap();
        cmd.stdin(Stdio::from(std::fs::File::open(&f).unwrap()));
        let out = deadline::output_within(cmd, Duration::from_secs(60));
        let _ = std::fs::remove_file(f);
        return out;
    }
    deadline::output_within(cmd, Duration::from_secs(60))
}

/// The harness's `image-quota`: kubectl-quota's image, from the binary under test, in the
/// node's containerd.
fn quota_image(node: &Path) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cluster/node.sh");
    let mut cmd = Command::new(script);
    cmd.arg("image-quota").arg(env!("CARGO_BIN_EXE_kubectl-quota")).env("KQ_NODE_DIR", node);
    let out = deadline::output_within(cmd, Duration::from_secs(300));
    assert!(out.status.success(), "tests/cluster/node.sh image-quota: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

/// The node's images by role (`pause`, `workload`), from the file the harness writes.
fn node_image(node: &Path, role: &str) -> String {
    let images = std::fs::read_to_string(node.join("images")).expect("the node's images file");
    images.lines().find_map(|l| l.strip_prefix(&format!("{role}="))).unwrap_or_else(|| panic!("no {role} image in {images}")).to_string()
}

/// What the pods of a namespace look like, and their containers' logs as the kubelet wrote
/// them: said when a wait fails.
async fn pods_report(c: &Client, node: &Path, ns: &str) -> String {
    let pods = Api::<Pod>::namespaced(c.clone(), ns).list(&ListParams::default()).await.map(|l| l.items).unwrap_or_default();
    let mut out = String::new();
    for p in pods {
        let v = serde_json::to_value(&p).unwrap_or_default();
        out.push_str(&format!(
            "pod {}: node {} phase {} conditions {} containers {}\n",
            v["metadata"]["name"], v["spec"]["nodeName"], v["status"]["phase"], v["status"]["conditions"], v["status"]["containerStatuses"]
        ));
    }
    // podLogsDir/<namespace>_<pod>_<uid>/<container>/<n>.log
    if let Ok(dirs) = std::fs::read_dir(node.join("pod-logs")) {
        for d in dirs.flatten().filter(|d| d.file_name().to_string_lossy().starts_with(&format!("{ns}_"))) {
            for f in walk(&d.path()) {
                let log = std::fs::read_to_string(&f).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(20).collect();
                out.push_str(&format!("--- {}\n{}\n", f.display(), tail.into_iter().rev().collect::<Vec<_>>().join("\n")));
            }
        }
    }
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![];
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}

/// Deletes what the test made, also when an assertion fails half-way: the guard's registration
/// first (a leftover would be called by every later apply), then the namespaces.
struct Cleanup {
    c: Client,
    kubeconfig: PathBuf,
    guard_namespace: Option<String>,
    namespaces: Vec<String>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(ns) = &self.guard_namespace {
            let _ = plugin(&self.kubeconfig, &["guard", "uninstall", "--guard-namespace", ns]);
            self.namespaces.push(ns.clone());
        }
        let (c, namespaces) = (self.c.clone(), self.namespaces.clone());
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async move {
                for ns in &namespaces {
                    let _ = Api::<Namespace>::all(c.clone()).delete(ns, &DeleteParams::default()).await;
                }
            })
        });
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn pods_run_on_the_lab_node_and_the_guard_runs_from_its_own_image() {
    let Some(lab) = lab_dir() else { return };
    let Some(node) = node_dir() else { return };
    let kubeconfig = lab.join("kubeconfig");
    let c = client(&kubeconfig).await;
    let node_name = std::fs::read_to_string(node.join("node-name")).expect("the node's name file").trim().to_string();
    let mut cleanup = Cleanup { c: c.clone(), kubeconfig: kubeconfig.clone(), guard_namespace: None, namespaces: vec![] };

    // The node is registered and Ready, with its kubelet's allocatable.
    let n = Api::<Node>::all(c.clone()).get(&node_name).await.unwrap_or_else(|e| panic!("node {node_name}: {e}"));
    let status = n.status.clone().unwrap_or_default();
    let ready = status.conditions.iter().flatten().any(|c| c.type_ == "Ready" && c.status == "True");
    assert!(ready, "node {node_name} is not Ready: {:?}", status.conditions);
    let allocatable_cpu = status.allocatable.as_ref().and_then(|a| a.get("cpu")).map(|q| q.0.clone()).expect("the node reports allocatable cpu");

    // 1. A pod of the workload image runs.
    let ns = new_namespace(&c, "node-pods").await;
    cleanup.namespaces.push(ns.clone());
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "sleeper"},
        "spec": {
            "nodeName": node_name,
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "sleep", "image": node_image(&node, "workload"), "imagePullPolicy": "Never", "args": ["sleep"],
                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"cpu": "100m", "memory": "32Mi"}}}],
        },
    }))
    .unwrap();
    let pods = Api::<Pod>::namespaced(c.clone(), &ns);
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let ip = eventually("the workload pod Running", 120, || async {
        let p = serde_json::to_value(pods.get("sleeper").await.map_err(|e| e.to_string())?).unwrap();
        match (p["status"]["phase"].as_str(), p["status"]["podIP"].as_str()) {
            (Some("Running"), Some(ip)) => Ok(ip.to_string()),
            _ => Err(format!("{}\n{}", p["status"], pods_report(&c, &node, &ns).await)),
        }
    })
    .await;
    assert!(ip.parse::<std::net::Ipv4Addr>().is_ok_and(|a| !a.is_loopback()), "pod address {ip}");

    // 2. The guard, installed in the cluster from its own image.
    let image = quota_image(&node);
    let gns = format!("kq-node-guard-{}", std::process::id() % 100000);
    cleanup.guard_namespace = Some(gns.clone());
    let out = plugin(&kubeconfig, &["guard", "install", "--guard-namespace", &gns, "--image", &image]);
    assert!(out.status.success(), "guard install: {}", text(&out.stderr));
    let deployments = Api::<Deployment>::namespaced(c.clone(), &gns);
    eventually("the guard's Deployment Ready (2 replicas) on the node", 180, || async {
        let d = serde_json::to_value(deployments.get("kubectl-quota-guard").await.map_err(|e| e.to_string())?).unwrap();
        if d["status"]["readyReplicas"] == 2 {
            Ok(())
        } else {
            Err(format!("{}\n{}", d["status"], pods_report(&c, &node, &gns).await))
        }
    })
    .await;
    // Its pods run on the node, from that image, with no kubeconfig: the API server is reached
    // through the in-cluster config, the ServiceAccount's projected token and CA.
    let guards = Api::<Pod>::namespaced(c.clone(), &gns).list(&ListParams::default().labels("app.kubernetes.io/name=kubectl-quota-guard")).await.unwrap();
    for p in &guards.items {
        let v = serde_json::to_value(p).unwrap();
        assert_eq!(v["spec"]["nodeName"], node_name.as_str());
        assert_eq!(v["spec"]["serviceAccountName"], "kubectl-quota-guard");
        let container = &v["spec"]["containers"][0];
        assert_eq!(container["image"], image.as_str());
        assert!(!container.to_string().contains("kubeconfig") && !container.to_string().contains("KUBECONFIG"), "{container}");
        let mounts = container["volumeMounts"].as_array().unwrap();
        assert!(mounts.iter().any(|m| m["mountPath"] == "/var/run/secrets/kubernetes.io/serviceaccount"), "the token is mounted: {mounts:?}");
    }
    // Reachable through the API server's service proxy, synced under its own rights, and its
    // rules those of the server it read.
    let said = eventually("guard status: reachable and synced", 60, || async {
        let s = plugin(&kubeconfig, &["guard", "status"]);
        if s.status.success() {
            Ok(text(&s.stdout))
        } else {
            Err(format!("{}{}", text(&s.stdout), text(&s.stderr)))
        }
    })
    .await;
    assert!(said.contains(&format!("Calls:       service {gns}/kubectl-quota-guard:443/validate")), "{said}");
    assert!(said.contains("Reachable:   yes") && said.contains("Synced:      yes"), "{said}");
    let server_version = serde_json::to_value(c.apiserver_version().await.unwrap()).unwrap();
    let server = server_version["gitVersion"].as_str().unwrap();
    assert!(said.contains(&format!(", server {server})")), "the guard read the server's version: {said}");

    // The API server calls it through its Service and carries its warning to kubectl.
    let team = new_namespace(&c, "node-team").await;
    cleanup.namespaces.push(team.clone());
    let quota = format!("apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: compute, namespace: {team}}}\nspec: {{hard: {{requests.cpu: '1'}}}}\n");
    let out = kubectl(&kubeconfig, &["apply", "-f", "-"], Some(&quota));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let web = format!(
        "apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {team}}}
spec:
  replicas: 4
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: app, image: 'web:1', resources: {{requests: {{cpu: 500m}}}}}}]
"
    );
    let want = "quota compute will refuse 2 of the 4 pods of deployment/web: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1";
    let warned = eventually("the in-cluster guard's warning at kubectl apply", 60, || async {
        // A dry run: nothing is created, so the call can be made again until the guard has
        // seen the quota.
        let out = kubectl(&kubeconfig, &["apply", "--dry-run=server", "-f", "-"], Some(&web));
        let warnings: Vec<String> = text(&out.stderr).lines().filter_map(|l| l.strip_prefix("Warning: ")).map(str::to_string).collect();
        if out.status.success() && warnings.iter().any(|w| w == want) {
            Ok(warnings)
        } else {
            Err(format!("{warnings:?} {}", text(&out.stderr)))
        }
    })
    .await;
    assert_eq!(warned, [want]);

    // 3. `capacity` counts the node as its kubelet reports it.
    let cap = plugin(&kubeconfig, &["capacity", "-o", "json"]);
    assert!(cap.status.code().is_some_and(|c| c == 0 || c == 1), "capacity: {}", text(&cap.stderr));
    let report: Value = serde_json::from_slice(&cap.stdout).unwrap_or_else(|e| panic!("capacity -o json: {e}: {}", text(&cap.stdout)));
    let left_out = report["nodesLeftOut"].as_array().cloned().unwrap_or_default();
    assert!(!left_out.iter().any(|n| n["name"] == node_name.as_str()), "the Ready node is counted: {report}");
    let cpu = report["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["resource"] == "requests.cpu"))
        .unwrap_or_else(|| panic!("a requests.cpu row: {report}"));
    let nodes = Api::<Node>::all(c.clone()).list(&ListParams::default()).await.unwrap();
    if nodes.items.len() == 1 && report["nodesCounted"] == 1 {
        assert_eq!(cpu["allocatable"], allocatable_cpu.as_str(), "{report}");
    }

    // Uninstalled: registration, Deployment and rights are gone.
    let gone = plugin(&kubeconfig, &["guard", "uninstall", "--guard-namespace", &gns]);
    assert!(gone.status.success(), "{}", text(&gone.stderr));
    let said = text(&gone.stdout);
    assert!(said.starts_with("validatingwebhookconfiguration.admissionregistration.k8s.io/kubectl-quota-guard deleted\n"), "{said}");
    assert!(said.contains("deployment.apps/kubectl-quota-guard deleted"), "{said}");
    let s = plugin(&kubeconfig, &["guard", "status"]);
    assert!(text(&s.stdout).starts_with("Registered:  no"), "{}", text(&s.stdout));
    cleanup.namespaces.push(gns);
    cleanup.guard_namespace = None;
}
