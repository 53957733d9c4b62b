//! The cluster views' reads (`capacity`, `uncovered`, `blocked`): the LISTs each needs, all
//! at once, every page folded into the engine's [`Collector`] as it arrives, so nothing but
//! per-namespace sums is held. A read the answer can do without (nodes for a user who may
//! not list them, events, an optional API) becomes a note saying what is missing; a quota
//! LIST that fails is an error.

use std::sync::{Arc, Mutex};

use kubectl_quota_engine::capacity::Collector;
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::read_autoscaler_types;

use super::discovery::served_nowhere;
use super::errors::ReadError;
use super::list::list_pages_selected;
use super::Conn;

/// Which view the reads are for: each reads only what it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Capacity,
    Uncovered,
    Blocked,
}

/// One LIST: its API group versions to try (newest first), plural, kind, and whether the view
/// can answer without it.
#[derive(Clone)]
struct Read {
    group: &'static str,
    versions: &'static [&'static str],
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
    required: bool,
    field_selector: Option<&'static str>,
}

const fn read(group: &'static str, versions: &'static [&'static str], plural: &'static str, kind: &'static str, namespaced: bool, required: bool) -> Read {
    Read { group, versions, plural, kind, namespaced, required, field_selector: None }
}

const DRA: &[&str] = &["v1", "v1beta2", "v1beta1"];
const QUOTAS: Read = read("", &["v1"], "resourcequotas", "ResourceQuota", true, true);
const NAMESPACES: Read = read("", &["v1"], "namespaces", "Namespace", false, false);

fn reads(view: View) -> Vec<Read> {
    match view {
        View::Capacity => [
            vec![QUOTAS, NAMESPACES],
            // The autoscalers: what they may still ask for (their targets are read after, one
            // GET each, only when there are any).
            autoscalers(),
            vec![
                read("", &["v1"], "nodes", "Node", false, false),
                read("", &["v1"], "pods", "Pod", true, false),
                read("resource.k8s.io", DRA, "resourceslices", "ResourceSlice", false, false),
                read("resource.k8s.io", DRA, "deviceclasses", "DeviceClass", false, false),
            ],
        ]
        .concat(),
        View::Uncovered => vec![QUOTAS, NAMESPACES, read("", &["v1"], "pods", "Pod", true, false)],
        View::Blocked => [
            vec![
                QUOTAS,
                Read { field_selector: Some("reason=FailedCreate"), ..read("", &["v1"], "events", "Event", true, false) },
                // Pods left Pending by claims quota refused: the pods say which, their events why.
                Read { field_selector: Some("reason=FailedResourceClaimCreation"), ..read("", &["v1"], "events", "Event", true, false) },
                Read { field_selector: Some("status.phase=Pending"), ..read("", &["v1"], "pods", "Pod", true, false) },
                read("apps", &["v1"], "deployments", "Deployment", true, false),
                read("apps", &["v1"], "replicasets", "ReplicaSet", true, false),
                read("apps", &["v1"], "statefulsets", "StatefulSet", true, false),
                read("apps", &["v1"], "daemonsets", "DaemonSet", true, false),
                read("batch", &["v1"], "jobs", "Job", true, false),
                read("", &["v1"], "replicationcontrollers", "ReplicationController", true, false),
            ],
            // The autoscalers that set what they want (the add-ons' where installed).
            autoscalers(),
            // Kueue's Workloads that wait for quota, and the queues they wait in (where
            // Kueue is installed).
            vec![WORKLOADS, LOCAL_QUEUES],
        ]
        .concat(),
    }
}

/// Kueue's Workloads, and the LocalQueues they wait in.
const WORKLOADS: Read = read(kubectl_quota_engine::kueue::GROUP, &["v1beta2"], "workloads", "Workload", true, false);
const LOCAL_QUEUES: Read = read(kubectl_quota_engine::kueue::GROUP, &["v1beta2"], "localqueues", "LocalQueue", true, false);

/// A LIST of every autoscaler kind read from clusters.
fn autoscalers() -> Vec<Read> {
    read_autoscaler_types().map(|t| read(t.group, std::slice::from_ref(&t.version), t.plural, t.kind, true, false)).collect()
}

fn url(group: &str, version: &str, plural: &str, namespace: Option<&str>) -> String {
    let base = if group.is_empty() { format!("/api/{version}") } else { format!("/apis/{group}/{version}") };
    match namespace {
        Some(ns) => format!("{base}/namespaces/{ns}/{plural}"),
        None => format!("{base}/{plural}"),
    }
}

/// A read the server answered "not here" (not forbidden, not a transport failure).
fn not_served(e: &ReadError) -> bool {
    !e.forbidden && !e.unreachable && e.says_not_served()
}

/// The most decoding problems noted per read.
const MAX_NOTED: usize = 5;

/// Reads what `view` shows into `collector`: cluster-wide, or (`-n`) the namespaced kinds in
/// `namespace` (cluster-scoped kinds, nodes among them, are always read whole).
/// A failed quota LIST, or a server that cannot be reached, is the error; anything else the
/// view can do without is noted in the collector.
pub async fn collect_view(conn: &Conn, view: View, namespace: Option<&str>, collector: Collector) -> Result<Collector, ReadError> {
    let shared = Arc::new(Mutex::new(collector));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, r) in reads(view).into_iter().enumerate() {
        let (conn, shared) = (conn.clone(), shared.clone());
        let ns = namespace.filter(|_| r.namespaced).map(str::to_string);
        tasks.spawn(async move {
            let mut last = None;
            for version in r.versions {
                let api_version = if r.group.is_empty() { version.to_string() } else { format!("{}/{version}", r.group) };
                let what = match &ns {
                    Some(ns) => format!("list {} in namespace {ns:?}", r.plural),
                    None if r.namespaced => format!("list {} in all namespaces", r.plural),
                    None => format!("list {}", r.plural),
                };
                let mut n = 0;
                let mut noted = 0;
                let result = list_pages_selected(&conn, url(r.group, version, r.plural, ns.as_deref()), r.field_selector, what, |mut item| {
                    n += 1;
                    item.insert("apiVersion".into(), api_version.clone().into());
                    item.insert("kind".into(), r.kind.into());
                    let doc = Document { origin: Origin::new("cluster", n), value: serde_json::Value::Object(item) };
                    let mut c = shared.lock().unwrap_or_else(|p| p.into_inner());
                    if let Err(e) = c.add(&doc) {
                        if noted < MAX_NOTED {
                            c.note(format!("{} {}: skipped: {e}", r.kind, doc.value["metadata"]["name"].as_str().unwrap_or("")));
                        }
                        noted += 1;
                    }
                })
                .await;
                match result {
                    Ok(()) => return (i, r, Ok(())),
                    Err(e) if not_served(&e) => last = Some(e),
                    Err(e) => return (i, r, Err(e)),
                }
            }
            (i, r, Err(last.expect("every read has a version")))
        });
    }
    let mut outcomes = Vec::new();
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok(o) => outcomes.push(o),
            Err(e) => return Err(ReadError { what: "read the cluster".into(), forbidden: false, unreachable: false, message: e.to_string() }),
        }
    }
    outcomes.sort_by_key(|o| o.0);
    let mut notes = Vec::new();
    for (_, r, result) in outcomes {
        match result {
            Ok(()) => shared.lock().unwrap_or_else(|p| p.into_inner()).mark_read(r.kind),
            Err(e) if e.unreachable || (r.required && !not_served(&e)) => return Err(e.on(&conn.server)),
            // An optional API this cluster does not serve (DRA before 1.32): nothing to say.
            Err(e) if not_served(&e) && !r.group.is_empty() => {}
            // The authorizer answers before the API is looked up: discovery tells whether
            // a forbidden optional API is served at all.
            Err(e) if e.forbidden && !r.group.is_empty() && served_nowhere(conn, r.group, r.versions, r.plural).await => {}
            Err(e) => notes.push(format!("{}; the answer goes without {}", e.on(&conn.server), r.plural)),
        }
    }
    let shared = Arc::try_unwrap(shared).map_err(|_| ReadError {
        what: "read the cluster".into(),
        forbidden: false,
        unreachable: false,
        message: "a read outlived the view".into(),
    })?;
    let mut out = shared.into_inner().unwrap_or_else(|p| p.into_inner());
    notes.into_iter().for_each(|n| out.note(n));
    if view == View::Capacity {
        read_scale_targets(conn, &mut out).await;
    }
    Ok(out)
}

/// The workloads the autoscalers read target, one GET each (none without autoscalers): one
/// the server says does not exist is recorded as such; one that cannot be read is named by
/// the view as a gap.
async fn read_scale_targets(conn: &Conn, c: &mut Collector) {
    for (ns, t) in c.unread_scale_targets() {
        let Some((api_version, plural)) = super::state::scalable(&t.kind) else { continue };
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let ar = kube::api::ApiResource::from_gvk_with_plural(&kube::api::GroupVersionKind::gvk(group, version, &t.kind), plural);
        match super::existing::existing_by_get(conn, &ns, &ar, &t.name).await {
            Ok(Some(value)) => {
                let _ = c.add(&Document { origin: Origin::new("cluster", 1), value });
            }
            Ok(None) => c.target_absent(&ns, &t),
            Err(_) => {}
        }
    }
}

/// What `snapshot` adds for the cluster views, beyond what checks consult: Nodes (their
/// schedulability, Ready condition and allocatable only) and ResourceSlices with every
/// namespace, and the `FailedCreate` events of the namespaces covered (what they say only).
pub(super) struct ViewItems {
    pub items: Vec<serde_json::Value>,
    pub notes: Vec<String>,
    /// As `plural.group`: kinds the user may not list.
    pub not_read: Vec<String>,
}

/// Reads [`ViewItems`]: a kind the user may not list is noted and recorded; a kind not served
/// is skipped; a server that cannot be reached is the error.
pub(super) async fn snapshot_items(conn: &Conn, namespace: Option<&str>) -> Result<ViewItems, ReadError> {
    let mut kinds = vec![
        Read { field_selector: Some("reason=FailedCreate"), ..read("", &["v1"], "events", "Event", true, false) },
        Read { field_selector: Some("reason=FailedResourceClaimCreation"), ..read("", &["v1"], "events", "Event", true, false) },
        // `blocked`'s Kueue Workloads (the LocalQueues are saved with what checks read).
        WORKLOADS,
    ];
    if namespace.is_none() {
        kinds.insert(0, read("", &["v1"], "nodes", "Node", false, false));
        kinds.insert(1, read("resource.k8s.io", DRA, "resourceslices", "ResourceSlice", false, false));
    }
    let mut out = ViewItems { items: Vec::new(), notes: Vec::new(), not_read: Vec::new() };
    for r in kinds {
        let ns = namespace.filter(|_| r.namespaced);
        let mut found = Vec::new();
        let mut result = Ok(());
        for version in r.versions {
            let api_version = if r.group.is_empty() { version.to_string() } else { format!("{}/{version}", r.group) };
            let what = match ns {
                Some(ns) => format!("list {} in namespace {ns:?}", r.plural),
                None => format!("list {}", r.plural),
            };
            result = list_pages_selected(conn, url(r.group, version, r.plural, ns), r.field_selector, what, |mut item| {
                item.insert("apiVersion".into(), api_version.clone().into());
                item.insert("kind".into(), r.kind.into());
                found.push(trimmed(r.kind, serde_json::Value::Object(item)));
            })
            .await;
            match &result {
                Err(e) if not_served(e) => found.clear(),
                _ => break,
            }
        }
        let group = if r.group.is_empty() { "core" } else { r.group };
        match result {
            Ok(()) => {
                found.sort_by(|a, b| {
                    let key = |v: &serde_json::Value| {
                        (v["metadata"]["namespace"].as_str().unwrap_or("").to_string(), v["metadata"]["name"].as_str().unwrap_or("").to_string())
                    };
                    key(a).cmp(&key(b))
                });
                out.items.extend(found);
            }
            Err(e) if e.unreachable => return Err(e.on(&conn.server)),
            Err(e) if not_served(&e) => {}
            Err(e) if e.forbidden && !r.group.is_empty() && served_nowhere(conn, r.group, r.versions, r.plural).await => {}
            Err(e) => {
                out.notes.push(format!("{}; none saved, and the snapshot records that they are missing", e.on(&conn.server)));
                out.not_read.push(format!("{}.{group}", r.plural));
            }
        }
    }
    Ok(out)
}

/// A Node or Event as the views read it, nothing more: a Node's images and addresses, an
/// Event's source, would only make the snapshot larger and change on every read.
fn trimmed(kind: &str, v: serde_json::Value) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let pick = |from: &Value, keys: &[&str]| -> Value {
        let mut m = Map::new();
        for k in keys {
            if let Some(x) = from.get(*k).filter(|x| !x.is_null()) {
                m.insert(k.to_string(), x.clone());
            }
        }
        Value::Object(m)
    };
    match kind {
        "Node" => {
            let ready: Vec<Value> =
                v["status"]["conditions"].as_array().into_iter().flatten().filter(|c| c["type"] == "Ready").map(|c| pick(c, &["type", "status"])).collect();
            json!({
                "apiVersion": v["apiVersion"], "kind": "Node",
                "metadata": pick(&v["metadata"], &["name", "labels"]),
                "spec": pick(&v["spec"], &["unschedulable", "taints"]),
                "status": {"allocatable": v["status"]["allocatable"], "conditions": ready},
            })
        }
        "Event" => {
            let mut e =
                pick(&v, &["apiVersion", "kind", "involvedObject", "reason", "message", "count", "lastTimestamp", "eventTime", "firstTimestamp", "type"]);
            e["metadata"] = pick(&v["metadata"], &["name", "namespace"]);
            e
        }
        _ => {
            let mut v = v;
            if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
                for f in ["uid", "resourceVersion", "generation", "creationTimestamp"] {
                    m.remove(f);
                }
            }
            v
        }
    }
}
