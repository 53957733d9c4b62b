//! `why`'s reads: one workload, its children and their events.

use super::errors::{read_error, within, ReadError, RequestError};
use super::list::list_all;
use super::Conn;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};

/// A workload as `why` reads it: the object, what it owns (ReplicaSets of a Deployment, Jobs
/// of a CronJob), and the events of all of them.
pub struct WorkloadRead {
    pub object: serde_json::Value,
    pub children: Vec<serde_json::Value>,
    pub events: Vec<kubectl_quota_engine::why::Event>,
    /// Its Pending pods, when its template has claims from ResourceClaimTemplates (whether
    /// those were created is in their status; their FailedResourceClaimCreation events are
    /// among `events`).
    pub pending_pods: Vec<serde_json::Value>,
    /// A StatefulSet's claims for its next pod that exist already (its controller creates
    /// only the missing ones before the pod).
    pub claims: Vec<serde_json::Value>,
}

/// What reading a workload found.
pub enum Workload {
    Read(WorkloadRead),
    /// The kind is not one whose controller creates pods.
    NotAWorkload,
    /// There is no such object: kubectl's words (`Error from server (NotFound):
    /// deployments.apps "web" not found`).
    NotFound(String),
}

/// Reads a workload by kind (as kubectl spells it: `deployment`, `deploy`, `sts`, ...) and
/// name, what it owns and their events.
pub async fn workload(conn: &Conn, namespace: &str, kind: &str, name: &str) -> Result<Workload, ReadError> {
    let Some((group, version, kind, plural, child)) = workload_kind(kind) else { return Ok(Workload::NotAWorkload) };
    let c = &conn.client;
    let get = |g: &str, v: &str, k: &str, p: &str| {
        let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(g, v, k), p);
        (Api::<DynamicObject>::namespaced_with(c.clone(), namespace, &ar), ar.api_version)
    };
    // CronJob is batch/v1 from Kubernetes 1.21, batch/v1beta1 before.
    let mut versions = vec![version];
    if kind == "CronJob" {
        versions.insert(0, "v1");
    }
    let mut found = None;
    for v in versions {
        let (api, av) = get(group, v, kind, plural);
        match within(conn.timeout, api.get_opt(name)).await {
            Ok(Some(o)) => {
                found = Some((o, av));
                break;
            }
            Ok(None) => {}
            Err(RequestError::Kube(kube::Error::Api(s))) if s.code == 404 => {}
            Err(e) => return Err(read_error(&conn.server, format!("get {plural} {name:?} in namespace {namespace:?}"), e)),
        }
    }
    let Some((obj, av)) = found else {
        let resource = if group.is_empty() { plural.to_string() } else { format!("{plural}.{group}") };
        return Ok(Workload::NotFound(format!("Error from server (NotFound): {resource} {name:?} not found")));
    };
    let object = with_type(&obj, &av, kind);
    let mut children = Vec::new();
    if let Some((g, v, k, p)) = child {
        let (api, cav) = get(g, v, k, p);
        let items = list_all(api, format!("list {p} in namespace {namespace:?}"), conn.server.clone(), conn.timeout).await?;
        for o in items {
            let owned = o.metadata.owner_references.iter().flatten().any(|r| r.kind == kind && r.name == name);
            if owned {
                children.push(with_type(&o, &cav, k));
            }
        }
    }
    let mut events = Vec::new();
    let mut involved: Vec<String> = vec![name.to_string()];
    involved.extend(children.iter().filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string)));
    for who in involved {
        events.extend(events_where(conn, namespace, &format!("involvedObject.name={who}")).await?);
    }
    // Pods left Pending by claims quota refused: only for a template with claims templates.
    let template_claims =
        object["spec"]["template"]["spec"]["resourceClaims"].as_array().is_some_and(|c| c.iter().any(|c| c.get("resourceClaimTemplateName").is_some()));
    let pending_pods = if template_claims { claims_pending(conn, namespace, (kind, name), &children, &mut events).await? } else { Vec::new() };
    let claims = if kind == "StatefulSet" { next_claims(conn, namespace, name, &object).await? } else { Vec::new() };
    Ok(Workload::Read(WorkloadRead { object, children, events, pending_pods, claims }))
}

/// The claims a StatefulSet's next pod (ordinal `status.replicas`) would use that exist, one
/// GET per volumeClaimTemplate.
async fn next_claims(conn: &Conn, namespace: &str, name: &str, object: &serde_json::Value) -> Result<Vec<serde_json::Value>, ReadError> {
    let next = object["status"]["replicas"].as_i64().unwrap_or(0);
    let claims = Api::<DynamicObject>::namespaced_with(
        conn.client.clone(),
        namespace,
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "PersistentVolumeClaim"), "persistentvolumeclaims"),
    );
    let mut out = Vec::new();
    for t in object["spec"]["volumeClaimTemplates"].as_array().into_iter().flatten().take(64) {
        let Some(template) = t["metadata"]["name"].as_str() else { continue };
        let claim = format!("{template}-{name}-{next}");
        match within(conn.timeout, claims.get_opt(&claim)).await {
            Ok(Some(o)) => out.push(with_type(&o, "v1", "PersistentVolumeClaim")),
            Ok(None) => {}
            Err(e) => return Err(read_error(&conn.server, format!("get persistentvolumeclaims {claim:?} in namespace {namespace:?}"), e)),
        }
    }
    Ok(out)
}

/// A workload's kind: (group, version, kind, plural) and the kind it creates its pods through,
/// when `why` reads that one too.
type WorkloadKind = (&'static str, &'static str, &'static str, &'static str, Option<(&'static str, &'static str, &'static str, &'static str)>);

/// The workload kind `kind` names, as kubectl spells it (`deployment`, `deploy`, `sts`, ...).
fn workload_kind(kind: &str) -> Option<WorkloadKind> {
    Some(match kind.to_lowercase().as_str() {
        "deployment" | "deployments" | "deploy" | "deployment.apps" => {
            ("apps", "v1", "Deployment", "deployments", Some(("apps", "v1", "ReplicaSet", "replicasets")))
        }
        "replicaset" | "replicasets" | "rs" | "replicaset.apps" => ("apps", "v1", "ReplicaSet", "replicasets", None),
        "statefulset" | "statefulsets" | "sts" | "statefulset.apps" => ("apps", "v1", "StatefulSet", "statefulsets", None),
        "daemonset" | "daemonsets" | "ds" | "daemonset.apps" => ("apps", "v1", "DaemonSet", "daemonsets", None),
        "job" | "jobs" | "job.batch" => ("batch", "v1", "Job", "jobs", None),
        "cronjob" | "cronjobs" | "cj" | "cronjob.batch" => ("batch", "v1beta1", "CronJob", "cronjobs", Some(("batch", "v1", "Job", "jobs"))),
        "replicationcontroller" | "replicationcontrollers" | "rc" => ("", "v1", "ReplicationController", "replicationcontrollers", None),
        _ => return None,
    })
}

/// `o` as JSON with its apiVersion `av` and kind `k` (a dynamic object's JSON has neither).
fn with_type(o: &DynamicObject, av: &str, k: &str) -> serde_json::Value {
    let mut v = serde_json::to_value(o).unwrap_or_default();
    if let Some(m) = v.as_object_mut() {
        m.insert("apiVersion".into(), av.into());
        m.insert("kind".into(), k.into());
    }
    v
}
/// The Pending pods of the workload `owner` (kind, name) or of its `children`, and the
/// FailedResourceClaimCreation events about them, added to `events`.
async fn claims_pending(
    conn: &Conn,
    namespace: &str,
    (kind, name): (&str, &str),
    children: &[serde_json::Value],
    events: &mut Vec<kubectl_quota_engine::why::Event>,
) -> Result<Vec<serde_json::Value>, ReadError> {
    let mut pending_pods = Vec::new();
    let owners: Vec<(String, String)> = std::iter::once((kind.to_string(), name.to_string()))
        .chain(children.iter().map(|o| (o["kind"].as_str().unwrap_or("").to_string(), o["metadata"]["name"].as_str().unwrap_or("").to_string())))
        .collect();
    let pods = Api::<DynamicObject>::namespaced_with(
        conn.client.clone(),
        namespace,
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "Pod"), "pods"),
    );
    let lp = ListParams::default().fields("status.phase=Pending");
    let list = within(conn.timeout, pods.list(&lp)).await.map_err(|e| read_error(&conn.server, format!("list pods in namespace {namespace:?}"), e))?;
    for p in list.items {
        let owned =
            p.metadata.owner_references.iter().flatten().any(|r| r.controller == Some(true) && owners.iter().any(|(k, n)| r.kind == *k && r.name == *n));
        if owned {
            pending_pods.push(with_type(&p, "v1", "Pod"));
        }
    }
    if !pending_pods.is_empty() {
        let claims = events_where(conn, namespace, "reason=FailedResourceClaimCreation").await?;
        events.extend(claims.into_iter().filter(|e| pending_pods.iter().any(|p| e.object == format!("pod/{}", p["metadata"]["name"].as_str().unwrap_or("")))));
    }
    Ok(pending_pods)
}

/// The events of `namespace` that `fields` selects, as `why` reads them (`kind/name` of the
/// object each is about, newest time it was seen).
async fn events_where(conn: &Conn, namespace: &str, fields: &str) -> Result<Vec<kubectl_quota_engine::why::Event>, ReadError> {
    let api = Api::<k8s_openapi::api::core::v1::Event>::namespaced(conn.client.clone(), namespace);
    let list = within(conn.timeout, api.list(&ListParams::default().fields(fields)))
        .await
        .map_err(|e| read_error(&conn.server, format!("list events in namespace {namespace:?}"), e))?;
    Ok(list
        .items
        .into_iter()
        .map(|e| {
            let last = e.last_timestamp.as_ref().map(|t| t.0.to_string()).or_else(|| e.event_time.as_ref().map(|t| t.0.to_string())).unwrap_or_default();
            kubectl_quota_engine::why::Event {
                object: format!("{}/{}", e.involved_object.kind.unwrap_or_default().to_lowercase(), e.involved_object.name.unwrap_or_default()),
                reason: e.reason.unwrap_or_default(),
                message: e.message.unwrap_or_default(),
                count: e.count.unwrap_or(1),
                last_seen: last,
            }
        })
        .collect())
}
