//! Shared by the tests that need the lab's node (tests/cluster/node.sh): where it is, its images,
//! and the scenario where the real HPA controller scales a Deployment into a quota on real
//! metrics (metrics-server reading the node's kubelet). The scenario's setup and its observations
//! are separate helpers, so that other assertions (`check`, `why`) can be made against the same
//! cluster state.

use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::{Event, Pod, ResourceQuota};
use kube::api::{Api, ListParams, PostParams};
use kube::Client;

/// The node's state directory (`KUBECTL_QUOTA_NODE`, what `node.sh env` prints), or `None` (the
/// test skips) with the reason on standard error. Under CI=true a missing one fails, unless it
/// is `none` (tests/run-all.sh says so for a release the harness has no node for).
pub fn node_dir() -> Option<PathBuf> {
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

/// The node's name, from the file the harness writes.
pub fn node_name(node: &Path) -> String {
    std::fs::read_to_string(node.join("node-name")).expect("the node's name file").trim().to_string()
}

/// The node's images by role (`pause`, `workload`), from the file the harness writes.
pub fn node_image(node: &Path, role: &str) -> String {
    let images = std::fs::read_to_string(node.join("images")).expect("the node's images file");
    images.lines().find_map(|l| l.strip_prefix(&format!("{role}="))).unwrap_or_else(|| panic!("no {role} image in {images}")).to_string()
}

/// A Deployment of the workload image burning CPU, under a quota `compute` that lets `fit` of its
/// pods run, and an autoscaling/v2 HPA on CPU utilisation whose maximum is above that: the HPA
/// controller, seeing every pod far above its target, raises the Deployment past what the quota
/// lets run, and the ReplicaSet's creations beyond `fit` are refused.
pub struct HpaIntoQuota {
    pub namespace: String,
    /// The quota's name (`compute`).
    pub quota: String,
    /// The Deployment's and the HPA's name (`burn`).
    pub name: String,
    /// Each pod's requests.cpu, in millicores.
    pub pod_cpu_millis: u32,
    /// How many pods the quota lets exist: its requests.cpu over a pod's.
    pub fit: u32,
    /// The HPA's minReplicas and maxReplicas.
    pub min_replicas: i32,
    pub max_replicas: i32,
    /// The objects as one YAML stream, in the order they are created (quota, Deployment, HPA):
    /// what `kubectl quota check -f -` can be given.
    pub manifests: String,
}

impl HpaIntoQuota {
    /// The scenario in `namespace` (which must exist), pods of `image` (the node's workload
    /// image). Nothing is created yet: see [`HpaIntoQuota::create`].
    pub fn new(namespace: &str, image: &str) -> Self {
        let (pod_cpu_millis, fit, min_replicas, max_replicas) = (50u32, 3u32, 1i32, 10i32);
        let quota = "compute";
        let name = "burn";
        let hard_cpu = pod_cpu_millis * fit;
        // Each pod burns its whole request; the target is a tenth of it, so one pod alone asks
        // for ten, and the quota's 3 can never bring the average down to the target.
        let manifests = format!(
            "apiVersion: v1
kind: ResourceQuota
metadata: {{name: {quota}, namespace: {namespace}}}
spec:
  hard: {{pods: '10', requests.cpu: {hard_cpu}m}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  replicas: {min_replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: burn
        image: {image}
        imagePullPolicy: Never
        args: [burn, '{pod_cpu_millis}']
        resources:
          requests: {{cpu: {pod_cpu_millis}m, memory: 16Mi}}
          limits: {{cpu: 200m, memory: 32Mi}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}
  minReplicas: {min_replicas}
  maxReplicas: {max_replicas}
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 10}}}}
"
        );
        HpaIntoQuota {
            namespace: namespace.to_string(),
            quota: quota.to_string(),
            name: name.to_string(),
            pod_cpu_millis,
            fit,
            min_replicas,
            max_replicas,
            manifests,
        }
    }

    /// Creates the quota, waits until its controller has set its status (so that the
    /// Deployment's pods are counted from the first), then the Deployment and the HPA.
    pub async fn create(&self, c: &Client) {
        self.create_quota(c).await;
        self.create_workload(c).await;
    }

    /// The Deployment and the HPA, as one YAML stream (what `check -f -` is given once the
    /// quota exists).
    pub fn workload_manifests(&self) -> String {
        self.manifests.split("\n---\n").skip(1).collect::<Vec<_>>().join("\n---\n")
    }

    fn docs(&self) -> Vec<serde_json::Value> {
        self.manifests.split("\n---\n").map(|d| serde_saphyr::from_str::<serde_json::Value>(d).unwrap_or_else(|e| panic!("{e}: {d}"))).collect()
    }

    /// The quota, waited for until its controller has set its status.
    pub async fn create_quota(&self, c: &Client) {
        let docs = self.docs();
        let quotas = Api::<ResourceQuota>::namespaced(c.clone(), &self.namespace);
        quotas.create(&PostParams::default(), &serde_json::from_value(docs[0].clone()).unwrap()).await.unwrap();
        super::live::eventually("the quota's status.hard", 60, || async {
            let q = quotas.get(&self.quota).await.map_err(|e| e.to_string())?;
            q.status.and_then(|s| s.hard).map(|_| ()).ok_or_else(|| "no status yet".to_string())
        })
        .await;
    }

    /// The Deployment, then the HPA.
    pub async fn create_workload(&self, c: &Client) {
        let docs = self.docs();
        let deployments = Api::<Deployment>::namespaced(c.clone(), &self.namespace);
        deployments.create(&PostParams::default(), &serde_json::from_value(docs[1].clone()).unwrap()).await.unwrap();
        let hpas = Api::<HorizontalPodAutoscaler>::namespaced(c.clone(), &self.namespace);
        hpas.create(&PostParams::default(), &serde_json::from_value(docs[2].clone()).unwrap()).await.unwrap();
    }

    /// The Deployment's pods that exist and are not being deleted, by name, with their phase.
    pub async fn pods(&self, c: &Client) -> Vec<(String, String)> {
        let pods = Api::<Pod>::namespaced(c.clone(), &self.namespace);
        let list = pods.list(&ListParams::default().labels(&format!("app={}", self.name))).await.unwrap();
        let mut out: Vec<(String, String)> = list
            .items
            .into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .map(|p| {
                let phase = p.status.and_then(|s| s.phase).unwrap_or_default();
                (p.metadata.name.unwrap_or_default(), phase)
            })
            .collect();
        out.sort();
        out
    }

    /// The messages of the FailedCreate events on the Deployment's ReplicaSets (see
    /// [`failed_creates`]).
    pub async fn failed_creates(&self, c: &Client) -> Vec<String> {
        failed_creates(c, &self.namespace, &self.name).await
    }

    /// The HPA's status: (currentReplicas, desiredReplicas), once it has one.
    pub async fn hpa_replicas(&self, c: &Client) -> Option<(i32, i32)> {
        let hpas = Api::<HorizontalPodAutoscaler>::namespaced(c.clone(), &self.namespace);
        let status = hpas.get(&self.name).await.ok()?.status?;
        Some((status.current_replicas.unwrap_or(0), status.desired_replicas))
    }

    /// The Deployment's spec.replicas: what the HPA last set.
    pub async fn deployment_replicas(&self, c: &Client) -> Option<i32> {
        let deployments = Api::<Deployment>::namespaced(c.clone(), &self.namespace);
        let d = serde_json::to_value(deployments.get(&self.name).await.ok()?).ok()?;
        d["spec"]["replicas"].as_i64().map(|r| r as i32)
    }

    /// The refusal's words as kube-apiserver writes them for one more pod once `fit` exist:
    /// only the exceeded resource is named.
    pub fn refusal(&self) -> String {
        let used = self.pod_cpu_millis * self.fit;
        format!("exceeded quota: {}, requested: requests.cpu={}m, used: requests.cpu={used}m, limited: requests.cpu={used}m", self.quota, self.pod_cpu_millis)
    }
}

/// The messages of the FailedCreate events on the ReplicaSets labelled app=APP in NAMESPACE,
/// oldest first (as `kubectl describe rs` shows them; an aggregated event keeps its "(combined
/// from similar events): " prefix).
pub async fn failed_creates(c: &Client, namespace: &str, app: &str) -> Vec<String> {
    let sets = Api::<ReplicaSet>::namespaced(c.clone(), namespace);
    let names: Vec<String> =
        sets.list(&ListParams::default().labels(&format!("app={app}"))).await.unwrap().items.into_iter().filter_map(|r| r.metadata.name).collect();
    let events = Api::<Event>::namespaced(c.clone(), namespace);
    let mut found: Vec<Event> = events
        .list(&ListParams::default().fields("involvedObject.kind=ReplicaSet,reason=FailedCreate"))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.involved_object.name.as_ref().is_some_and(|n| names.contains(n)))
        .collect();
    found.sort_by_key(|e| e.first_timestamp.as_ref().map(|t| t.0));
    found.into_iter().filter_map(|e| e.message).collect()
}
