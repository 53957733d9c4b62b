//! Autoscalers scaling a workload into a quota, with the real controllers of the lab: the HPA
//! controller of kube-controller-manager, KEDA's operator and metrics server
//! (tests/cluster/keda.sh), the VPA admission controller (tests/cluster/vpa.sh). The scenarios'
//! setups and what they leave to observe (pods that exist and their requests, the ReplicaSet's
//! FailedCreate messages, the HPA's desired count) are here, for tests/live_autoscalers.rs and
//! for tests that compare `check`, `why` or the guard with what the controllers did.
//!
//! Every scenario has the same quota: `compute` (requests.cpu=4, limits.cpu=8, pods=10), and a
//! Deployment whose container `app` asks for 500m and is limited to 1 cpu: 8 such pods fit.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Event, Pod, ResourceQuota};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams};
use kube::Client;
use serde_json::{json, Value};

/// The quota every scenario runs into.
pub const QUOTA: &str = "compute";
/// The workload every scenario scales.
pub const DEPLOYMENT: &str = "web";
/// Its container.
pub const CONTAINER: &str = "app";

/// Where a controller the harness may start runs, from its environment variable (`KUBECTL_QUOTA_KEDA`,
/// `KUBECTL_QUOTA_VPA`: the state directory `keda.sh env` / `vpa.sh env` print). `none` means the
/// harness does not run it for this release (the test skips quietly); unset, the test skips
/// loudly, except under CI=true, where it fails.
pub fn controller_dir(var: &str, what: &str, script: &str) -> Option<PathBuf> {
    match std::env::var(var).as_deref() {
        Ok("none") => {
            eprintln!("\n*** SKIPPED: the harness runs no {what} for this release ({var}=none) ***\n");
            None
        }
        Ok(dir) => Some(PathBuf::from(dir)),
        Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("this test needs {what} beside the lab under CI: run it through tests/run-all.sh")
        }
        Err(_) => {
            eprintln!("\n*** SKIPPED: this test needs {what} beside the lab; run tests/run-all.sh, or {script} up and export {var} ***\n");
            None
        }
    }
}

/// The quota `compute`: requests.cpu=4, limits.cpu=8, pods=10.
pub fn compute_quota() -> Value {
    json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": QUOTA},
        "spec": {"hard": {"requests.cpu": "4", "limits.cpu": "8", "pods": "10"}}})
}

/// Deployment `web` (label app=web), `replicas` pods of one container asking 500m, limited to 1
/// cpu. Its pods stay Pending on every lab: on one with a real node, a pod placed there could
/// be refused by the kubelet beside other tests' pods (OutOfcpu), turn Failed, leave quota, and
/// let its ReplicaSet make one more than quota would hold.
pub fn deployment(replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": DEPLOYMENT},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": DEPLOYMENT}},
            "template": {"metadata": {"labels": {"app": DEPLOYMENT}},
                "spec": {"nodeSelector": {"kq-test/nowhere": "true"},
                    "containers": [{"name": CONTAINER, "image": "kubectl-quota.test/none:1",
                    "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}}]}}}})
}

/// An HPA on `web`, in the API version given (`autoscaling/v2` from 1.23, `autoscaling/v2beta2`
/// on 1.20), with no metrics: the HPA controller raises the target to minReplicas before it reads
/// any (the metric it defaults to, cpu utilization, has no source in the lab).
pub fn hpa(api_version: &str, name: &str, min: i64, max: i64) -> Value {
    json!({"apiVersion": api_version, "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": DEPLOYMENT},
            "minReplicas": min, "maxReplicas": max}})
}

/// The HPA API version the lab's release serves for v2 HPAs.
pub fn hpa_api_version(release_minor: u32) -> &'static str {
    if release_minor >= 23 {
        "autoscaling/v2"
    } else {
        "autoscaling/v2beta2"
    }
}

/// A KEDA ScaledObject on `web` with one cron trigger asking `desired` replicas all year (its
/// window starts on 1 January and ends at 23:59 on 31 December, UTC: KEDA's cron scaler is
/// active between a start and the end that follows it). Scale-up is allowed in one step, so
/// that the HPA KEDA makes goes from minReplicaCount to the desired count at its first sync.
pub fn scaled_object_cron(name: &str, min: i64, max: i64, desired: i64) -> Value {
    json!({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": {"name": name},
        "spec": {"scaleTargetRef": {"name": DEPLOYMENT}, "minReplicaCount": min, "maxReplicaCount": max,
            "pollingInterval": 5,
            "advanced": {"horizontalPodAutoscalerConfig": {"behavior": {"scaleUp": {
                "stabilizationWindowSeconds": 0, "policies": [{"type": "Pods", "value": 100, "periodSeconds": 15}]}}}},
            "triggers": [{"type": "cron", "metadata": {"timezone": "Etc/UTC",
                "start": "0 0 1 1 *", "end": "59 23 31 12 *", "desiredReplicas": desired.to_string()}}]}})
}

/// A VPA on `web` in `mode` (Initial, Recreate, ...) controlling requests and limits of every
/// container (limits kept in proportion, upstream's default made explicit).
pub fn vpa(name: &str, mode: &str) -> Value {
    json!({"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": name},
        "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": DEPLOYMENT},
            "updatePolicy": {"updateMode": mode},
            "resourcePolicy": {"containerPolicies": [{"containerName": "*", "controlledValues": "RequestsAndLimits"}]}}})
}

fn resource(api_version: &str, kind: &str) -> ApiResource {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind))
}

/// Creates a namespaced object given as JSON (any kind; the plural is the kind's lowercase + s,
/// true of every kind here).
pub async fn create(c: &Client, ns: &str, v: &Value) -> Result<(), String> {
    let ar = resource(v["apiVersion"].as_str().unwrap(), v["kind"].as_str().unwrap());
    let api: Api<DynamicObject> = Api::namespaced_with(c.clone(), ns, &ar);
    let obj: DynamicObject = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    api.create(&PostParams::default(), &obj).await.map(|_| ()).map_err(|e| format!("creating {} {}: {e}", v["kind"], v["metadata"]["name"]))
}

/// Gets a namespaced object as JSON, `None` when it does not exist.
pub async fn get(c: &Client, ns: &str, api_version: &str, kind: &str, name: &str) -> Result<Option<Value>, String> {
    let api: Api<DynamicObject> = Api::namespaced_with(c.clone(), ns, &resource(api_version, kind));
    match api.get_opt(name).await {
        Ok(o) => Ok(o.map(|o| serde_json::to_value(o).unwrap())),
        Err(e) => Err(format!("getting {kind} {name}: {e}")),
    }
}

/// Writes a VPA's recommendation through the status subresource, as the recommender does:
/// `target` (and lowerBound, upperBound, uncappedTarget the same) for container `app`.
pub async fn recommend(c: &Client, ns: &str, vpa: &str, target: &Value) -> Result<(), String> {
    let api: Api<DynamicObject> = Api::namespaced_with(c.clone(), ns, &resource("autoscaling.k8s.io/v1", "VerticalPodAutoscaler"));
    let status = json!({"status": {"recommendation": {"containerRecommendations": [{"containerName": CONTAINER,
        "target": target, "lowerBound": target, "upperBound": target, "uncappedTarget": target}]},
        "conditions": [{"type": "RecommendationProvided", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
    api.patch_status(vpa, &PatchParams::default(), &Patch::Merge(&status)).await.map(|_| ()).map_err(|e| format!("writing VPA {vpa}'s status: {e}"))
}

/// Sets the Deployment's replicas (its scale, as a controller would).
pub async fn scale(c: &Client, ns: &str, replicas: i64) -> Result<(), String> {
    let api = Api::<Deployment>::namespaced(c.clone(), ns);
    api.patch(DEPLOYMENT, &PatchParams::default(), &Patch::Merge(&json!({"spec": {"replicas": replicas}})))
        .await
        .map(|_| ())
        .map_err(|e| format!("scaling deployment {DEPLOYMENT}: {e}"))
}

/// The current ReplicaSet of `web` (the one with the most recent revision), if any.
pub async fn replica_set(c: &Client, ns: &str) -> Option<ReplicaSet> {
    let rss = Api::<ReplicaSet>::namespaced(c.clone(), ns).list(&ListParams::default().labels(&format!("app={DEPLOYMENT}"))).await.ok()?;
    rss.items.into_iter().max_by_key(|rs| {
        rs.metadata.annotations.as_ref().and_then(|a| a.get("deployment.kubernetes.io/revision")).and_then(|r| r.parse::<u64>().ok()).unwrap_or(0)
    })
}

/// A pod as the scenario sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenPod {
    pub name: String,
    /// container `app`'s requests.cpu and limits.cpu as the API server stored them
    pub requests_cpu: Option<String>,
    pub limits_cpu: Option<String>,
}

/// What a scenario leaves to observe.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// `web`'s pods that exist (not being deleted)
    pub pods: Vec<SeenPod>,
    /// the FailedCreate messages of `web`'s ReplicaSets, as recorded (`Error creating: pods
    /// "web-..." is forbidden: exceeded quota: compute, ...`)
    pub failed_create: Vec<String>,
    /// `web`'s spec.replicas
    pub deployment_replicas: Option<i64>,
}

impl Observed {
    /// The refusals in the quota's words: each FailedCreate message from `exceeded quota:` on.
    pub fn quota_refusals(&self) -> Vec<String> {
        self.failed_create.iter().filter_map(|m| m.find("exceeded quota: ").map(|i| m[i..].to_string())).collect()
    }
}

/// Pods, FailedCreate messages and replicas of `web` now.
pub async fn observe(c: &Client, ns: &str) -> Observed {
    let pods =
        Api::<Pod>::namespaced(c.clone(), ns).list(&ListParams::default().labels(&format!("app={DEPLOYMENT}"))).await.map(|l| l.items).unwrap_or_default();
    let pods = pods
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .map(|p| {
            let res = p.spec.as_ref().and_then(|s| s.containers.iter().find(|c| c.name == CONTAINER)).and_then(|c| c.resources.clone());
            let get = |m: Option<&std::collections::BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>| {
                m.and_then(|m| m.get("cpu")).map(|q| q.0.clone())
            };
            SeenPod {
                name: p.metadata.name.clone().unwrap_or_default(),
                requests_cpu: get(res.as_ref().and_then(|r| r.requests.as_ref())),
                limits_cpu: get(res.as_ref().and_then(|r| r.limits.as_ref())),
            }
        })
        .collect();
    let events = Api::<Event>::namespaced(c.clone(), ns).list(&ListParams::default()).await.map(|l| l.items).unwrap_or_default();
    let prefix = format!("{DEPLOYMENT}-");
    let failed_create = events
        .into_iter()
        .filter(|e| {
            e.reason.as_deref() == Some("FailedCreate")
                && e.involved_object.kind.as_deref() == Some("ReplicaSet")
                && e.involved_object.name.as_deref().is_some_and(|n| n.starts_with(&prefix))
        })
        .filter_map(|e| e.message)
        .collect();
    let deployment_replicas =
        Api::<Deployment>::namespaced(c.clone(), ns).get_opt(DEPLOYMENT).await.ok().flatten().and_then(|d| d.spec.replicas).map(i64::from);
    Observed { pods, failed_create, deployment_replicas }
}

/// Waits (up to `seconds`) until `web`'s status counts `pods` pods: what a check reads as the
/// pods that exist (the Deployment controller writes it a moment after the pods appear).
pub async fn status_counts(c: &Client, ns: &str, pods: i64, seconds: u64) {
    crate::common::live::eventually(&format!("deployment {DEPLOYMENT}'s status counting {pods} pods"), seconds, || async {
        let d = Api::<Deployment>::namespaced(c.clone(), ns).get_opt(DEPLOYMENT).await.map_err(|e| e.to_string())?;
        let (ready, seen) = d.and_then(|d| d.status).map_or((0, 0), |s| (s.replicas.unwrap_or(0), s.observed_generation.unwrap_or(0)));
        if ready == i32::try_from(pods).unwrap_or(i32::MAX) && seen > 0 {
            Ok(())
        } else {
            Err(format!("status.replicas {ready}"))
        }
    })
    .await;
}

/// Waits (up to `seconds`) until `web` has `pods` pods, at least one quota refusal, and the pod
/// count has held for 3 s (the ReplicaSet controller creates in batches: a count seen once may
/// still grow). Returns what it saw last; the caller asserts.
pub async fn settle(c: &Client, ns: &str, pods: usize, seconds: u64) -> Observed {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut held_since: Option<(usize, Instant)> = None;
    loop {
        let seen = observe(c, ns).await;
        let n = seen.pods.len();
        match held_since {
            Some((m, _)) if m == n => {}
            _ => held_since = Some((n, Instant::now())),
        }
        let held = held_since.is_some_and(|(_, t)| t.elapsed() >= Duration::from_secs(3));
        if (n == pods && !seen.quota_refusals().is_empty() && held) || Instant::now() > deadline {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The HPA's `status.desiredReplicas` (any served version: read through autoscaling/v1, which
/// every release serves), `None` until it has one.
pub async fn hpa_desired(c: &Client, ns: &str, name: &str) -> Option<i64> {
    let v = get(c, ns, "autoscaling/v1", "HorizontalPodAutoscaler", name).await.ok().flatten()?;
    v["status"]["desiredReplicas"].as_i64()
}

/// Creates the quota and waits until the quota controller has set its status (`used`), so that
/// admission charges against it from the first pod.
pub async fn quota_ready(c: &Client, ns: &str) -> Result<(), String> {
    let api = Api::<ResourceQuota>::namespaced(c.clone(), ns);
    let q: ResourceQuota = serde_json::from_value(compute_quota()).unwrap();
    api.create(&PostParams::default(), &q).await.map_err(|e| format!("creating quota {QUOTA}: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let q = api.get(QUOTA).await.map_err(|e| e.to_string())?;
        if q.status.and_then(|s| s.used).is_some() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("quota {QUOTA} got no status within 60 s"));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Scenario (a): quota `compute`, Deployment `web` at `replicas`, an HPA `web` (API version as
/// given) with minReplicas `min` and maxReplicas `max`. The HPA controller raises the Deployment.
pub async fn setup_hpa(c: &Client, ns: &str, api_version: &str, replicas: i64, min: i64, max: i64) -> Result<(), String> {
    quota_ready(c, ns).await?;
    create(c, ns, &deployment(replicas)).await?;
    create(c, ns, &hpa(api_version, DEPLOYMENT, min, max)).await
}

/// Scenario (b): quota `compute`, Deployment `web` at `min`, ScaledObject `web` (cron trigger
/// asking `desired`, between `min` and `max`). KEDA creates HPA `keda-hpa-web`, which raises it.
pub async fn setup_keda(c: &Client, ns: &str, min: i64, max: i64, desired: i64) -> Result<(), String> {
    quota_ready(c, ns).await?;
    create(c, ns, &deployment(min)).await?;
    create(c, ns, &scaled_object_cron(DEPLOYMENT, min, max, desired)).await
}

/// Scenario (c): quota `compute`, Deployment `web` at 0 replicas, VPA `web` in `mode` with the
/// recommendation `target` written through the status subresource; once the webhook answers a
/// dry-run pod of `web`'s ReplicaSet with the target (it has seen the VPA), the Deployment is
/// scaled to `replicas`, and the ReplicaSet controller creates its pods through the webhook.
pub async fn setup_vpa(c: &Client, ns: &str, mode: &str, target: &Value) -> Result<(), String> {
    quota_ready(c, ns).await?;
    create(c, ns, &deployment(0)).await?;
    vpa_on(c, ns, mode, target).await
}

/// VPA `web` in `mode` on the Deployment that exists, its recommendation `target`; returns once
/// the webhook writes the target into a dry-run pod of the Deployment's ReplicaSet.
pub async fn vpa_on(c: &Client, ns: &str, mode: &str, target: &Value) -> Result<(), String> {
    create(c, ns, &vpa(DEPLOYMENT, mode)).await?;
    recommend(c, ns, DEPLOYMENT, target).await?;
    let want_cpu = target["cpu"].as_str().map(str::to_string);
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut last = String::from("no ReplicaSet yet");
    loop {
        if let Some(rs) = replica_set(c, ns).await {
            match dry_run_pod(c, ns, &rs).await {
                Ok(p) if p.requests_cpu == want_cpu => break,
                Ok(p) => last = format!("a dry-run pod came back with requests.cpu {:?}", p.requests_cpu),
                Err(e) => last = e,
            }
        }
        if Instant::now() > deadline {
            return Err(format!("the VPA webhook never applied VPA {DEPLOYMENT}'s target within 90 s: {last}"));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Ok(())
}

/// A pod of the ReplicaSet's template, owned by it, created with dryRun=All: what the admission
/// chain (the VPA webhook included) would make of the controller's next pod. Quota is not
/// charged by a dry run, but a refusal is still returned: a quota refusal here is an error.
pub async fn dry_run_pod(c: &Client, ns: &str, rs: &ReplicaSet) -> Result<SeenPod, String> {
    let tpl = rs.spec.template.clone().ok_or("the ReplicaSet has no template")?;
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": format!("{}-", rs.metadata.name.as_deref().unwrap_or(DEPLOYMENT)),
            "labels": serde_json::to_value(tpl.metadata.as_ref().and_then(|m| m.labels.clone())).unwrap(),
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs.metadata.name, "uid": rs.metadata.uid,
                "controller": true, "blockOwnerDeletion": true}]},
        "spec": serde_json::to_value(tpl.spec).unwrap()});
    pod["metadata"]["namespace"] = json!(ns);
    let p: Pod = serde_json::from_value(pod).map_err(|e| e.to_string())?;
    let api = Api::<Pod>::namespaced(c.clone(), ns);
    let pp = PostParams { dry_run: true, ..Default::default() };
    let made = api.create(&pp, &p).await.map_err(|e| format!("dry-run pod: {e}"))?;
    let res = made.spec.as_ref().and_then(|s| s.containers.iter().find(|c| c.name == CONTAINER)).and_then(|c| c.resources.clone());
    Ok(SeenPod {
        name: made.metadata.name.unwrap_or_default(),
        requests_cpu: res.as_ref().and_then(|r| r.requests.as_ref()).and_then(|m| m.get("cpu")).map(|q| q.0.clone()),
        limits_cpu: res.as_ref().and_then(|r| r.limits.as_ref()).and_then(|m| m.get("cpu")).map(|q| q.0.clone()),
    })
}

/// The tail of a controller's log in its state directory, for a failure's message.
pub fn log_tail(dir: &Path, file: &str, lines: usize) -> String {
    let text = std::fs::read(dir.join(file)).map(|b| String::from_utf8_lossy(&b).to_string()).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
