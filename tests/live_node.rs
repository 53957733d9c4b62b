//! A real node in the lab (tests/cluster/node.sh: containerd, runc, a CNI bridge, the kubelet
//! and kube-scheduler of the lab's release, metrics-server, images built here): pods are
//! scheduled and run.
//!
//! The guard's test is one test, step by step, since its registration is cluster-wide:
//!   1. a pod of the workload image runs (Running, an address on the pods' bridge);
//!   2. `guard install` without `--url`, with kubectl-quota's image built from the binary under
//!      test: its Deployment becomes Ready on the node, the guard reads the cluster through its
//!      ServiceAccount (in-cluster config: token and CA mounted by the kubelet, the `kubernetes`
//!      Service's address), `guard status` reaches it through the service proxy, the API server
//!      calls it through its Service and carries its warning to kubectl, `guard uninstall`
//!      removes it;
//!   3. `capacity` counts the node's allocatable as its kubelet reports it.
//!
//! Beside it, each in its own namespace: the real HPA controller scaling a Deployment into its
//! quota on real metrics (the scenario in common/node.rs, for other assertions on it); `describe`
//! and `capacity` with running pods against the node's allocatable; `blocked` and `why` with
//! Running, Pending and refused pods side by side.
//!
//! `KUBECTL_QUOTA_NODE` names the node's state directory (what `node.sh env` prints), beside
//! `KUBECTL_QUOTA_LAB`. Without it the tests say so and skip; under CI=true they fail, unless
//! it is `none` (tests/run-all.sh says so for a release the harness has no node for).

mod common;

use common::deadline;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::live::{client, eventually, lab, new_namespace, plugin, plugin_stdin, text};
use common::node::{failed_creates, node_dir, node_image, node_name, HpaIntoQuota};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod, ResourceQuota};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::Client;
use kubectl_quota_engine::quantity::Quantity;
use serde_json::{json, Value};

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
    let script = common::root().join("tests/cluster/node.sh");
    let mut cmd = Command::new(script);
    cmd.arg("image-quota").arg(env!("CARGO_BIN_EXE_kubectl-quota")).env("KQ_NODE_DIR", node);
    let out = deadline::output_within(cmd, Duration::from_secs(300));
    assert!(out.status.success(), "tests/cluster/node.sh image-quota: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
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
    /// The namespace of a Helm release of the guard, uninstalled with this helm.
    helm_release: Option<(PathBuf, String)>,
    namespaces: Vec<String>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(ns) = &self.guard_namespace {
            let _ = plugin(&self.kubeconfig, &["guard", "uninstall", "--guard-namespace", ns]);
            self.namespaces.push(ns.clone());
        }
        if let Some((helm_bin, ns)) = &self.helm_release {
            let _ = helm(helm_bin, &self.kubeconfig, &["uninstall", "kubectl-quota-guard", "-n", ns, "--wait"]);
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

/// The Helm client tests/cluster/autoscalers/build.sh builds (cached).
fn helm_binary() -> PathBuf {
    let out = Command::new("bash").arg(common::root().join("tests/cluster/autoscalers/build.sh")).arg("helm").output().unwrap();
    assert!(out.status.success(), "building helm: {}", text(&out.stderr));
    PathBuf::from(text(&out.stdout).lines().last().unwrap_or("").trim()).join("helm")
}

/// `helm ARGS` against the lab, with its own cache and config directories.
fn helm(bin: &Path, kubeconfig: &Path, args: &[&str]) -> Output {
    let home = std::env::temp_dir().join(format!("kq-helm-home-{}", std::process::id()));
    Command::new(bin)
        .current_dir(common::root())
        .args(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn pods_run_on_the_lab_node_and_the_guard_runs_from_its_own_image() {
    let Some(kubeconfig) = lab() else { return };
    let Some(node) = node_dir() else { return };
    let c = client(&kubeconfig).await;
    let node_name = node_name(&node);
    let mut cleanup = Cleanup { c: c.clone(), kubeconfig: kubeconfig.clone(), guard_namespace: None, helm_release: None, namespaces: vec![] };

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

    // 3. `capacity` counts the node as its kubelet reports it. About this test's own
    // namespace: the other tests of this target write in the same cluster meanwhile (their
    // HPAs, their namespaces going away), and a cluster-wide answer would be about them too.
    // The nodes stay cluster-wide with -n, and only the harness writes those.
    let cap = plugin(&kubeconfig, &["capacity", "-n", &ns, "-o", "json"]);
    assert_eq!(cap.status.code(), Some(0), "capacity: {}", text(&cap.stderr));
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

    // 4. The same guard from the Helm chart (deploy/helm), here rather than in a test of its
    // own: both register the one cluster-wide kubectl-quota-guard webhook.
    let helm_bin = helm_binary();
    let hns = format!("kq-node-helm-{}", std::process::id() % 100000);
    cleanup.helm_release = Some((helm_bin.clone(), hns.clone()));
    let (repository, tag) = image.rsplit_once(':').expect("the image has a tag");
    let chart = "deploy/helm/kubectl-quota-guard";
    let (repo_set, tag_set) = (format!("image.repository={repository}"), format!("image.tag={tag}"));
    let install =
        ["install", "kubectl-quota-guard", chart, "-n", &hns, "--create-namespace", "--set", &repo_set, "--set", &tag_set, "--wait", "--timeout", "4m"];
    let out = helm(&helm_bin, &kubeconfig, &install);
    assert!(out.status.success(), "helm install: {}{}\n{}", text(&out.stdout), text(&out.stderr), pods_report(&c, &node, &hns).await);
    let secrets = Api::<k8s_openapi::api::core::v1::Secret>::namespaced(c.clone(), &hns);
    let ca_of = || async {
        let s = serde_json::to_value(secrets.get("kubectl-quota-guard-tls").await.unwrap()).unwrap();
        s["data"]["ca.crt"].as_str().unwrap().to_string()
    };
    let bundle_of = || {
        let out = kubectl(
            &kubeconfig,
            &["get", "validatingwebhookconfiguration", "kubectl-quota-guard", "-o", "jsonpath={.webhooks[0].clientConfig.caBundle}"],
            None,
        );
        text(&out.stdout)
    };
    let ca = ca_of().await;
    assert_eq!(bundle_of(), ca, "the registration trusts the CA the chart made");
    let warned_by_chart = || async {
        eventually("the Helm-installed guard's warning at kubectl apply", 90, || async {
            let out = kubectl(&kubeconfig, &["apply", "--dry-run=server", "-f", "-"], Some(&web));
            let warnings: Vec<String> = text(&out.stderr).lines().filter_map(|l| l.strip_prefix("Warning: ")).map(str::to_string).collect();
            if out.status.success() && warnings.iter().any(|w| w == want) {
                Ok(warnings)
            } else {
                Err(format!("{warnings:?} {}\n{}", text(&out.stderr), pods_report(&c, &node, &hns).await))
            }
        })
        .await
    };
    assert_eq!(warned_by_chart().await, [want]);
    // An upgrade keeps the certificate: the Secret's CA and the registration's bundle.
    let upgrade =
        ["upgrade", "kubectl-quota-guard", chart, "-n", &hns, "--set", &repo_set, "--set", &tag_set, "--set", "replicas=1", "--wait", "--timeout", "4m"];
    let out = helm(&helm_bin, &kubeconfig, &upgrade);
    assert!(out.status.success(), "helm upgrade: {}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(ca_of().await, ca, "helm upgrade made a new CA");
    assert_eq!(bundle_of(), ca, "helm upgrade changed the registration's CA bundle");
    let d = serde_json::to_value(Api::<Deployment>::namespaced(c.clone(), &hns).get("kubectl-quota-guard").await.unwrap()).unwrap();
    assert_eq!(d["spec"]["replicas"], 1, "the upgrade's values are applied");
    assert_eq!(warned_by_chart().await, [want]);
    // Uninstalled: the registration is gone (Helm deletes it first: webhook configurations
    // come last in its install order).
    let out = helm(&helm_bin, &kubeconfig, &["uninstall", "kubectl-quota-guard", "-n", &hns, "--wait"]);
    assert!(out.status.success(), "helm uninstall: {}{}", text(&out.stdout), text(&out.stderr));
    let s = plugin(&kubeconfig, &["guard", "status"]);
    assert!(text(&s.stdout).starts_with("Registered:  no"), "{}", text(&s.stdout));
    cleanup.helm_release = None;
    cleanup.namespaces.push(hns);
}

/// What the HPA scenario looks like, said when a wait fails: the HPA's status, the Deployment's
/// replicas, the pods, the ReplicaSet's refusals, and metrics-server's last words.
async fn hpa_report(c: &Client, node: &Path, s: &HpaIntoQuota) -> String {
    let hpa = Api::<k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler>::namespaced(c.clone(), &s.namespace)
        .get(&s.name)
        .await
        .map(|h| serde_json::to_value(h.status).unwrap_or_default().to_string())
        .unwrap_or_else(|e| e.to_string());
    let log = std::fs::read_to_string(node.join("metrics-server.log")).unwrap_or_default();
    let tail: Vec<&str> = log.lines().rev().take(10).collect();
    format!(
        "HPA status {hpa}\nDeployment replicas {:?}\npods {:?}\nFailedCreate {:?}\n{}--- metrics-server.log\n{}",
        s.deployment_replicas(c).await,
        s.pods(c).await,
        s.failed_creates(c).await,
        pods_report(c, node, &s.namespace).await,
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    )
}

/// The real HPA controller, on real metrics (metrics-server reading the node's kubelet), scales a
/// Deployment whose pods burn CPU past what its quota lets run: the pods that exist are exactly
/// what the quota lets run, and the ReplicaSet's FailedCreate events carry the API server's
/// refusal. (The HPA itself says nothing of quota: its desired count stays above.)
#[tokio::test(flavor = "multi_thread")]
async fn the_real_hpa_scales_a_deployment_into_its_quota_on_real_metrics() {
    let Some(kubeconfig) = lab() else { return };
    let Some(node) = node_dir() else { return };
    let c = client(&kubeconfig).await;
    let mut cleanup = Cleanup { c: c.clone(), kubeconfig: kubeconfig.clone(), guard_namespace: None, helm_release: None, namespaces: vec![] };

    let ns = new_namespace(&c, "node-hpa").await;
    cleanup.namespaces.push(ns.clone());
    let s = HpaIntoQuota::new(&ns, &node_image(&node, "workload"));
    s.create_quota(&c).await;
    // Before: check says how far the quota lets the HPA scale the Deployment.
    let before = plugin_stdin(&kubeconfig, &["check", "-f", "-", "-n", &ns, "--quiet", "--fail-on-ceiling"], &s.workload_manifests());
    let said = text(&before.stdout);
    let ceiling = format!(
        "HPA {0} scales deployment/{0} from {1} to {2} pods; quota {3} lets {4} run (requests.cpu): scale-ups past {4} will be refused",
        s.name, s.min_replicas, s.max_replicas, s.quota, s.fit
    );
    assert!(said.contains(&format!("  autoscaling: {ceiling}\n")), "check before: {said}{}", text(&before.stderr));
    assert_eq!(before.status.code(), Some(1), "check --fail-on-ceiling: {said}");
    s.create_workload(&c).await;

    // metrics-server is registered and serves the node's figures (after its first two scrapes).
    let top = eventually("kubectl top node", 90, || async {
        let out = kubectl(&kubeconfig, &["top", "node", &node_name(&node)], None);
        if out.status.success() {
            Ok(text(&out.stdout))
        } else {
            Err(format!("{}{}", text(&out.stdout), text(&out.stderr)))
        }
    })
    .await;
    assert!(top.starts_with("NAME ") && top.contains("CPU(cores)"), "{top}");

    // Bounded and generous: the first pod starts, metrics-server has two samples of it (10 s
    // apart), the HPA controller (synced every 5 s) raises the Deployment, its ReplicaSet is
    // refused beyond the quota.
    let fit = s.fit as i32;
    let (replicas, refusals) = eventually("the HPA raising the Deployment past the quota, and the refusals", 300, || async {
        let replicas = s.deployment_replicas(&c).await.unwrap_or(0);
        let refusals = s.failed_creates(&c).await;
        if replicas > fit && !refusals.is_empty() {
            Ok((replicas, refusals))
        } else {
            Err(hpa_report(&c, &node, &s).await)
        }
    })
    .await;
    assert!(replicas <= s.max_replicas, "{replicas}");

    // The pods that exist are what the quota lets run, and they run on the node.
    let pods = s.pods(&c).await;
    assert_eq!(pods.len(), s.fit as usize, "{pods:?}\n{}", hpa_report(&c, &node, &s).await);
    eventually("the quota's pods Running", 120, || async {
        let pods = s.pods(&c).await;
        if pods.len() == s.fit as usize && pods.iter().all(|(_, phase)| phase == "Running") {
            Ok(())
        } else {
            Err(format!("{pods:?}"))
        }
    })
    .await;

    // Every refusal is the quota's, in the API server's words.
    let want = s.refusal();
    for m in &refusals {
        assert!(m.contains(" is forbidden: ") && m.ends_with(&want), "FailedCreate {m:?}, want it to end with {want:?}");
    }

    // The HPA still wants more than can exist.
    let (_, desired) = s.hpa_replicas(&c).await.expect("the HPA's status");
    assert!(desired > fit, "HPA desiredReplicas {desired}\n{}", hpa_report(&c, &node, &s).await);

    // After: why names the HPA, and a live check of the same manifests says what exists.
    let out = plugin(&kubeconfig, &["why", &format!("deployment/{}", s.name), "-n", &ns, "-o", "json"]);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("why: {e}: {}{}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(r["verdict"], "blockedByQuota", "{r}");
    assert_eq!(r["current"].as_i64(), Some(i64::from(s.fit)), "{r}");
    let wanted = r["wanted"].as_i64().unwrap_or(0);
    assert_eq!(
        r["autoscaler"].as_str(),
        Some(format!("HPA {0} wants {wanted}, {1} exist: quota {2} refuses the rest", s.name, s.fit, s.quota).as_str()),
        "{r}"
    );
    let after = plugin_stdin(&kubeconfig, &["check", "-f", "-", "-n", &ns, "-o", "json"], &s.workload_manifests());
    let report: Value = serde_json::from_slice(&after.stdout).unwrap_or_else(|e| panic!("check after: {e}: {}", text(&after.stderr)));
    let d = &report["documents"][0];
    assert_eq!((d["replicasAdmitted"].as_i64(), d["autoscaling"]["fits"].as_i64()), (Some(i64::from(s.fit)), Some(i64::from(s.fit))), "{d}");
    assert!(d["podMessage"].as_str().is_some_and(|m| m.ends_with(&want)), "{d}");

    // `kubectl top` reads the same metrics the HPA read.
    let top = eventually("kubectl top pod", 60, || async {
        let out = kubectl(&kubeconfig, &["top", "pod", "-n", &ns, "-l", "app=burn"], None);
        let said = text(&out.stdout);
        if out.status.success() && said.lines().skip(1).count() >= 1 {
            Ok(said)
        } else {
            Err(format!("{said}{}", text(&out.stderr)))
        }
    })
    .await;
    assert!(top.starts_with("NAME ") && top.contains("CPU(cores)"), "{top}");
}

/// A quantity as the engine reads it (exact), for comparing what the plugin prints with what the
/// cluster says.
fn qty(s: &str) -> Quantity {
    s.parse().unwrap_or_else(|e| panic!("quantity {s:?}: {e:?}"))
}

/// A Deployment of sleeping pods of the workload image, `replicas` of them, each requesting
/// `cpu` and `memory`; `extra` is merged into the pod spec (a nodeSelector, say).
fn sleepers(ns: &str, name: &str, image: &str, replicas: i32, cpu: &str, memory: &str, extra: Value) -> Deployment {
    let mut spec = json!({
        "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "sleep", "image": image, "imagePullPolicy": "Never", "args": ["sleep"],
                        "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}}],
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        spec[k] = v.clone();
    }
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }))
    .unwrap()
}

/// The phases of a workload's pods (label app=NAME), not being deleted.
async fn phases(c: &Client, ns: &str, app: &str) -> Vec<String> {
    let pods = Api::<Pod>::namespaced(c.clone(), ns).list(&ListParams::default().labels(&format!("app={app}"))).await.unwrap();
    pods.items.into_iter().filter(|p| p.metadata.deletion_timestamp.is_none()).map(|p| p.status.and_then(|s| s.phase).unwrap_or_default()).collect()
}

/// Pods that run: `describe` shows the quota's usage as the running pods make it, and `capacity`
/// sets it against the allocatable the node's kubelet reports (cpu, memory, pods).
#[tokio::test(flavor = "multi_thread")]
async fn describe_and_capacity_count_running_pods_against_the_nodes_allocatable() {
    let Some(kubeconfig) = lab() else { return };
    let Some(node) = node_dir() else { return };
    let c = client(&kubeconfig).await;
    let mut cleanup = Cleanup { c: c.clone(), kubeconfig: kubeconfig.clone(), guard_namespace: None, helm_release: None, namespaces: vec![] };
    let ns = new_namespace(&c, "node-capacity").await;
    cleanup.namespaces.push(ns.clone());

    let quota = format!(
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: compute, namespace: {ns}}}\nspec: {{hard: {{requests.cpu: '1', requests.memory: 1Gi, pods: '5'}}}}\n"
    );
    let out = kubectl(&kubeconfig, &["apply", "-f", "-"], Some(&quota));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let image = node_image(&node, "workload");
    Api::<Deployment>::namespaced(c.clone(), &ns).create(&PostParams::default(), &sleepers(&ns, "app", &image, 2, "100m", "32Mi", json!({}))).await.unwrap();
    eventually("2 pods Running", 120, || async {
        let p = phases(&c, &ns, "app").await;
        if p.len() == 2 && p.iter().all(|p| p == "Running") {
            Ok(())
        } else {
            Err(format!("{p:?}\n{}", pods_report(&c, &node, &ns).await))
        }
    })
    .await;
    // The quota controller has counted them.
    let quotas = Api::<ResourceQuota>::namespaced(c.clone(), &ns);
    let used = eventually("the quota's status.used with both pods", 60, || async {
        let q = quotas.get("compute").await.map_err(|e| e.to_string())?;
        let used = q.status.and_then(|s| s.used).unwrap_or_default();
        match used.get("pods") {
            Some(p) if p.0 == "2" => Ok(used),
            _ => Err(format!("{used:?}")),
        }
    })
    .await;
    assert_eq!(qty(&used["requests.cpu"].0), qty("200m"));
    assert_eq!(qty(&used["requests.memory"].0), qty("64Mi"));

    // describe: Used/Hard as the quota's status says, percentages exact.
    let out = plugin(&kubeconfig, &["describe", "compute", "-n", &ns, "-o", "json"]);
    assert!(out.status.success(), "describe: {}", text(&out.stderr));
    let views: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = views[0]["rows"].as_array().unwrap_or_else(|| panic!("{views}"));
    let row = |r: &str| rows.iter().find(|x| x["resource"] == r).unwrap_or_else(|| panic!("no {r} row: {views}")).clone();
    for (r, hard, percent) in [("requests.cpu", "1", 20), ("pods", "5", 40), ("requests.memory", "1Gi", 6)] {
        let x = row(r);
        assert_eq!(qty(x["used"].as_str().unwrap()), qty(&used[r].0), "{r}: {x}");
        assert_eq!(qty(x["hard"].as_str().unwrap()), qty(hard), "{r}: {x}");
        assert_eq!(x["percent"], percent, "{r}: {x}");
    }
    let said = text(&plugin(&kubeconfig, &["describe", "compute", "-n", &ns]).stdout);
    let cpu_row: Vec<&str> = said.lines().find(|l| l.starts_with("requests.cpu ")).unwrap_or_default().split_whitespace().collect();
    assert_eq!(cpu_row[..4], ["requests.cpu", "200m", "1", "20%"], "{said}");

    // capacity: the node's allocatable, as its kubelet reports it, against the quota's promise.
    let node_name = node_name(&node);
    let n = Api::<Node>::all(c.clone()).get(&node_name).await.unwrap();
    let allocatable = n.status.and_then(|s| s.allocatable).expect("the node reports allocatable");
    let nodes = Api::<Node>::all(c.clone()).list(&ListParams::default()).await.unwrap();
    assert_eq!(nodes.items.len(), 1, "the lab has one node, the harness's");
    let out = plugin(&kubeconfig, &["capacity", "-n", &ns, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "capacity: {}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["nodesCounted"], 1, "{report}");
    let cap_row = |r: &str| {
        report["resources"].as_array().and_then(|rows| rows.iter().find(|x| x["resource"] == r)).unwrap_or_else(|| panic!("no {r} row: {report}")).clone()
    };
    for (r, node_resource, promised) in [("requests.cpu", "cpu", "1"), ("requests.memory", "memory", "1Gi"), ("pods", "pods", "5")] {
        let x = cap_row(r);
        assert_eq!(qty(x["allocatable"].as_str().unwrap()), qty(&allocatable[node_resource].0), "{r}: {x}");
        assert_eq!(qty(x["promised"].as_str().unwrap()), qty(promised), "{r}: {x}");
        assert_eq!(qty(x["used"].as_str().unwrap()), qty(&used[r].0), "{r}: {x}");
    }
}

/// Running, Pending and refused pods side by side in one namespace under one quota: pods that
/// run, pods the scheduler cannot place (a nodeSelector no node has) and pods quota refuses.
/// Pending pods count in the quota as running ones do; only the refused workload is blocked, and
/// `blocked` and `why` say what the cluster shows: its pods, the FailedCreate event's words, the
/// quota's usage.
#[tokio::test(flavor = "multi_thread")]
async fn blocked_and_why_tell_running_pending_and_refused_pods_apart() {
    let Some(kubeconfig) = lab() else { return };
    let Some(node) = node_dir() else { return };
    let c = client(&kubeconfig).await;
    let mut cleanup = Cleanup { c: c.clone(), kubeconfig: kubeconfig.clone(), guard_namespace: None, helm_release: None, namespaces: vec![] };
    let ns = new_namespace(&c, "node-blocked").await;
    cleanup.namespaces.push(ns.clone());
    let quota = format!("apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: compute, namespace: {ns}}}\nspec: {{hard: {{requests.cpu: 500m}}}}\n");
    let out = kubectl(&kubeconfig, &["apply", "-f", "-"], Some(&quota));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let quotas = Api::<ResourceQuota>::namespaced(c.clone(), &ns);
    eventually("the quota's status.hard", 60, || async {
        quotas.get("compute").await.map_err(|e| e.to_string())?.status.and_then(|s| s.hard).map(|_| ()).ok_or_else(|| "no status".to_string())
    })
    .await;
    let image = node_image(&node, "workload");
    let deployments = Api::<Deployment>::namespaced(c.clone(), &ns);
    // 2 x 100m run, 2 x 100m wait for a node that does not exist, then 3 x 100m of which 1 fits.
    deployments.create(&PostParams::default(), &sleepers(&ns, "runs", &image, 2, "100m", "16Mi", json!({}))).await.unwrap();
    let nowhere = json!({"nodeSelector": {"kubectl-quota.test/no-such-node": "true"}});
    deployments.create(&PostParams::default(), &sleepers(&ns, "waits", &image, 2, "100m", "16Mi", nowhere)).await.unwrap();
    eventually("runs: 2 Running, waits: 2 Pending", 120, || async {
        let (r, w) = (phases(&c, &ns, "runs").await, phases(&c, &ns, "waits").await);
        if r == ["Running", "Running"] && w == ["Pending", "Pending"] {
            Ok(())
        } else {
            Err(format!("runs {r:?} waits {w:?}\n{}", pods_report(&c, &node, &ns).await))
        }
    })
    .await;
    deployments.create(&PostParams::default(), &sleepers(&ns, "refused", &image, 3, "100m", "16Mi", json!({}))).await.unwrap();
    let messages = eventually("refused: 1 pod and a FailedCreate", 120, || async {
        let m = failed_creates(&c, &ns, "refused").await;
        let p = phases(&c, &ns, "refused").await;
        let d = deployments.get("refused").await.map_err(|e| e.to_string())?;
        let current = d.status.and_then(|s| s.replicas).unwrap_or(0);
        if !m.is_empty() && p.len() == 1 && current == 1 {
            Ok(m)
        } else {
            Err(format!("{m:?} {p:?} status.replicas {current}"))
        }
    })
    .await;
    let want = "exceeded quota: compute, requested: requests.cpu=100m, used: requests.cpu=500m, limited: requests.cpu=500m";
    assert!(messages.iter().all(|m| m.ends_with(want)), "{messages:?}");
    // The Pending pods are in the quota's usage: 2 running + 2 pending + 1 refused's = 500m.
    let used = quotas.get("compute").await.unwrap().status.and_then(|s| s.used).unwrap_or_default();
    assert_eq!(qty(&used["requests.cpu"].0), qty("500m"), "{used:?}");

    // blocked: the refused workload alone, with the server's words and why's fix.
    let out = plugin(&kubeconfig, &["blocked", "-n", &ns, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "blocked: {}{}", text(&out.stdout), text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let blocked = report["blocked"].as_array().unwrap_or_else(|| panic!("{report}"));
    assert_eq!(blocked.len(), 1, "{report}");
    let b = &blocked[0];
    assert_eq!(b["workload"], "deployment/refused", "{report}");
    assert_eq!(b["waiting"], 2, "{report}");
    assert_eq!(b["quota"], "compute", "{report}");
    assert_eq!(b["resources"], json!(["requests.cpu"]), "{report}");
    // One of the cluster's events, read after `blocked` read them (the controller keeps retrying).
    let messages = failed_creates(&c, &ns, "refused").await;
    assert!(b["message"].as_str().is_some_and(|m| m.ends_with(want) && messages.iter().any(|e| e == m)), "{report}\n{messages:?}");
    assert_eq!(b["fix"], "raise quota compute's requests.cpu by 100m (to 600m) to admit the next pod, or by 200m (to 700m) for all 2 waiting", "{report}");

    // why, for each: the pods the cluster shows, the verdict, and for the refused one the
    // server's words and the replay against the usage the Pending pods are part of.
    for (name, verdict, wanted, current) in [("runs", "notBlocked", 2, 2), ("waits", "notBlocked", 2, 2), ("refused", "blockedByQuota", 3, 1)] {
        let out = plugin(&kubeconfig, &["why", &format!("deployment/{name}"), "-n", &ns, "-o", "json"]);
        let r: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("why {name}: {e}: {}{}", text(&out.stdout), text(&out.stderr)));
        assert_eq!(r["verdict"], verdict, "{name}: {r}");
        assert_eq!((r["wanted"].as_i64(), r["current"].as_i64()), (Some(wanted), Some(current)), "{name}: {r}");
        let d = deployments.get(name).await.unwrap();
        assert_eq!(d.status.and_then(|s| s.replicas).unwrap_or(0) as i64, current, "{name}: the Deployment's status.replicas");
        assert_eq!(out.status.code(), Some(if name == "refused" { 1 } else { 0 }), "why {name}: {r}");
    }
    let out = plugin(&kubeconfig, &["why", "deployment/refused", "-n", &ns]);
    let said = text(&out.stdout);
    assert!(said.starts_with("deployment/refused: blocked by quota compute; 1 of 3 pods exist, 2 waiting\n"), "{said}");
    assert!(said.contains(&format!("  pods \"refused-next\" is forbidden: {want}\n")), "{said}");
    assert!(said.contains("  quota compute: requests.cpu 100m + used 500m > hard 500m\n"), "{said}");
}
