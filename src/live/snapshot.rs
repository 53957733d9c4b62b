//! `snapshot`: the kinds it saves, how it trims them, and the Namespaces it covers.

use super::discovery::{served_nowhere, server_version};
use super::errors::{read_error, within, ReadError};
use super::list::list_all;
use super::Conn;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kubectl_quota_engine::check::cluster_kinds::{self, ClusterKind, Saved, Served, CLUSTER_KINDS};

/// A kind `snapshot` saves: a row of the cluster-data kinds.
type SnapshotKind = ClusterKind;

/// Whether a kind may be missing: not served by every cluster, or saved only where the user
/// may list it (a note, not an error, when absent).
fn optional(k: &SnapshotKind) -> bool {
    k.saved == Saved::IfAllowed || k.served != Served::Always
}

/// What `snapshot` saves, in the table's order.
fn snapshot_kinds() -> impl Iterator<Item = &'static SnapshotKind> {
    CLUSTER_KINDS.iter().filter(|k| k.saved != Saved::No)
}

/// Server-set metadata that says nothing to admission and changes on every read. A
/// StorageClass keeps its creationTimestamp: with several default classes the newest wins; so
/// does a VerticalPodAutoscaler: of several on one workload the oldest acts. A
/// Deployment keeps its generation: one its controller has not observed tells a rollout that
/// could not start.
fn trim_metadata(kind: &str, value: &mut serde_json::Value) {
    let Some(meta) = value.get_mut("metadata").and_then(serde_json::Value::as_object_mut) else { return };
    for field in ["managedFields", "uid", "resourceVersion", "selfLink"] {
        meta.remove(field);
    }
    if kind != "Deployment" {
        meta.remove("generation");
    }
    if kind != "StorageClass" && kind != "VerticalPodAutoscaler" {
        meta.remove("creationTimestamp");
    }
    if let Some(a) = meta.get_mut("annotations").and_then(serde_json::Value::as_object_mut) {
        a.remove("kubectl.kubernetes.io/last-applied-configuration");
        if a.is_empty() {
            meta.remove("annotations");
        }
    }
    if let Some(refs) = meta.get_mut("ownerReferences").and_then(serde_json::Value::as_array_mut) {
        refs.iter_mut().filter_map(serde_json::Value::as_object_mut).for_each(|r| {
            r.remove("uid");
        });
    }
}

/// Which namespaces `snapshot` reads: one, or all.
#[derive(Clone, Copy)]
pub enum Scope<'a> {
    Namespace(&'a str),
    All,
}

/// What `snapshot` read: the objects, notes for standard error, the server's version, and the
/// cluster-scoped kinds it was not allowed to list.
pub struct Snapshot {
    /// API objects (apiVersion and kind set, server-set metadata trimmed; fields in name
    /// order, so apiVersion, kind, metadata, spec, status), sorted by kind order, namespace,
    /// name.
    pub items: Vec<serde_json::Value>,
    pub notes: Vec<String>,
    /// The server's gitVersion (`v1.20.2`), when `/version` answered.
    pub server_version: Option<String>,
    /// Cluster-scoped kinds and optional APIs the user may not list, as `plural.group`
    /// (`priorityclasses.scheduling.k8s.io`): none of them is saved.
    pub not_read: Vec<String>,
    /// The one namespace a snapshot of a namespace covers (`None`: every namespace): which
    /// namespaces exist is known for it alone.
    pub namespace: Option<String>,
}

/// Everything offline `check`, `plan` and `describe` consult, and the server's version.
/// Optional APIs the server does not serve are skipped with a note, and so are cluster-scoped
/// kinds and optional APIs the user may not list (the `view` ClusterRole cannot list
/// PriorityClasses, for one), which are also recorded; any other failed read is an error,
/// naming the server.
pub async fn snapshot(conn: &Conn, scope: Scope<'_>) -> Result<Snapshot, ReadError> {
    let version = {
        let conn = conn.clone();
        tokio::spawn(async move { server_version(&conn).await })
    };
    let kinds: Vec<&'static SnapshotKind> = snapshot_kinds().collect();
    let tasks: Vec<_> = kinds.iter().map(|k| spawn_kind(conn, k, scope)).collect();
    let mut s = Snapshot { items: Vec::new(), notes: Vec::new(), server_version: None, not_read: Vec::new(), namespace: None };
    for (k, t) in kinds.iter().zip(tasks) {
        let r = t.await.unwrap_or_else(|e| Err(ReadError { what: "read".into(), forbidden: false, unreachable: false, message: e.to_string() }));
        save_kind(conn, k, r, &mut s).await?;
    }
    save_namespaces(conn, &scope, &mut s).await?;
    // What the cluster views (capacity, uncovered, blocked) read besides.
    let views = super::capacity::snapshot_items(
        conn,
        match scope {
            Scope::Namespace(ns) => Some(ns),
            Scope::All => None,
        },
    )
    .await?;
    s.items.extend(views.items);
    s.notes.extend(views.notes);
    s.not_read.extend(views.not_read);
    s.server_version = match version.await.map_err(|e| e.to_string()).and_then(|r| r) {
        Ok((raw, _)) => Some(raw),
        Err(e) => {
            s.notes.push(format!(
                "the server's version could not be read ({e}): the snapshot records none, so offline checks on it answer with the rules of {} unless given --kubernetes-version",
                kubectl_quota_engine::version::CURRENT
            ));
            None
        }
    };
    s.namespace = match scope {
        Scope::Namespace(ns) => Some(ns.to_string()),
        Scope::All => None,
    };
    Ok(s)
}

/// A kind's objects as listed, with the apiVersion they were listed at.
type Listed = (String, Vec<DynamicObject>);

/// Lists a kind in the background, at the first of its versions the server serves.
fn spawn_kind(conn: &Conn, k: &'static SnapshotKind, scope: Scope<'_>) -> tokio::task::JoinHandle<Result<Listed, ReadError>> {
    let client = conn.client.clone();
    let (server, timeout) = (conn.server.clone(), conn.timeout);
    let ns = match scope {
        Scope::Namespace(ns) => Some(ns.to_string()),
        Scope::All => None,
    };
    tokio::spawn(async move {
        let mut last = None;
        for version in k.versions {
            let gvk = GroupVersionKind::gvk(k.group, version, k.kind);
            let ar = ApiResource::from_gvk_with_plural(&gvk, k.plural);
            let (api, what) = match (&ns, k.namespaced) {
                (Some(ns), true) => (Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar), format!("list {} in namespace {ns:?}", k.plural)),
                _ => (Api::<DynamicObject>::all_with(client.clone(), &ar), format!("list {}", k.plural)),
            };
            match list_all(api, what, server.clone(), timeout).await {
                Ok(items) => return Ok((ar.api_version.clone(), items)),
                Err(e) if !e.forbidden && e.says_not_served() => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("every kind has a version"))
    })
}

/// A kind's LIST into the snapshot: its objects saved; or a note, when the server does not
/// serve it, or when it is cluster-scoped or optional and the user may not list it (recorded
/// as not read). Any other failure is the snapshot's.
async fn save_kind(conn: &Conn, k: &SnapshotKind, r: Result<Listed, ReadError>, s: &mut Snapshot) -> Result<(), ReadError> {
    let group = k.group_name();
    let optional = optional(k);
    // The authorizer answers before the API is looked up: an optional API may be
    // forbidden on a cluster that does not even serve it. Discovery tells.
    let unserved = match &r {
        Err(e) if optional && e.forbidden => served_nowhere(conn, k.group, k.versions, k.plural).await,
        Err(e) => optional && e.says_not_served(),
        Ok(_) => false,
    };
    if unserved {
        s.notes.push(format!("this cluster does not serve {} ({group}): none saved", k.plural));
        return Ok(());
    }
    let (api_version, items) = match r {
        Ok(x) => x,
        Err(e) if e.forbidden && (!k.namespaced || optional) => {
            s.notes.push(format!("{e}; none saved, and the snapshot records that they are missing"));
            s.not_read.push(k.recorded_as());
            return Ok(());
        }
        Err(e) => return Err(e.on(&conn.server)),
    };
    s.items.extend(saved(k, &api_version, items));
    Ok(())
}

/// A kind's objects as the snapshot saves them: apiVersion and kind set, server-set metadata
/// trimmed (a ServiceAccount's name alone), sorted by namespace and name.
fn saved(k: &SnapshotKind, api_version: &str, items: Vec<DynamicObject>) -> Vec<serde_json::Value> {
    let mut values: Vec<serde_json::Value> = items
        .into_iter()
        .filter_map(|item| {
            let mut v = serde_json::to_value(&item).ok()?;
            let o = v.as_object_mut()?;
            o.insert("apiVersion".into(), api_version.into());
            o.insert("kind".into(), k.kind.into());
            trim_metadata(k.kind, &mut v);
            // A webhook's certificate says nothing of which requests it sees.
            for hook in v.get_mut("webhooks").and_then(serde_json::Value::as_array_mut).into_iter().flatten() {
                if let Some(c) = hook.get_mut("clientConfig").and_then(serde_json::Value::as_object_mut) {
                    c.remove("caBundle");
                }
            }
            if k.kind == "ServiceAccount" {
                // The plugin looks a ServiceAccount up by name; its secrets say nothing.
                let m = &v["metadata"];
                v = serde_json::json!({"apiVersion": api_version, "kind": k.kind, "metadata": {"name": m["name"], "namespace": m["namespace"]}});
            }
            Some(v)
        })
        .collect();
    let key = |v: &serde_json::Value| {
        let m = &v["metadata"];
        (m["namespace"].as_str().unwrap_or("").to_string(), m["name"].as_str().unwrap_or("").to_string())
    };
    values.sort_by_key(key);
    values
}

/// Which namespaces exist, first in the List: a check of an object in another is refused
/// offline as the server refuses it. Not allowed to read them: a note, and recorded as not
/// read.
async fn save_namespaces(conn: &Conn, scope: &Scope<'_>, s: &mut Snapshot) -> Result<(), ReadError> {
    match snapshot_namespaces(conn, scope).await {
        Ok(namespaces) => {
            if let (Scope::Namespace(ns), true) = (scope, namespaces.is_empty()) {
                s.notes.push(format!("namespace {ns:?} does not exist: offline checks of the snapshot refuse objects in it, as the server does"));
            }
            s.items.splice(0..0, namespaces);
        }
        Err(e) if e.forbidden => {
            s.notes.push(format!("{e}; the snapshot records that it does not know which namespaces exist"));
            s.not_read.push(cluster_kinds::NAMESPACE.recorded_as());
        }
        Err(e) => return Err(e.on(&conn.server)),
    }
    Ok(())
}

/// The namespaces a snapshot covers that exist (the one it was taken of, or all of them), as
/// Namespace objects with their name and labels only, and the phase of one being terminated:
/// what an offline check consults (whether a namespace exists and takes new objects; its
/// admin-access label). Nothing else of theirs is kept, so
/// two snapshots of an unchanged namespace are the same file.
async fn snapshot_namespaces(conn: &Conn, scope: &Scope<'_>) -> Result<Vec<serde_json::Value>, ReadError> {
    let api = Api::<k8s_openapi::api::core::v1::Namespace>::all(conn.client.clone());
    let found = match scope {
        Scope::Namespace(ns) => {
            let what = format!("get namespace {ns:?}");
            within(conn.timeout, api.get_opt(ns)).await.map_err(|e| read_error(&conn.server, what, e))?.into_iter().collect()
        }
        Scope::All => list_all(api, "list namespaces".into(), conn.server.clone(), conn.timeout).await?,
    };
    let mut out: Vec<serde_json::Value> = found
        .into_iter()
        .filter_map(|n| {
            let name = n.metadata.name?;
            let mut meta = serde_json::json!({ "name": name });
            if let Some(labels) = n.metadata.labels.filter(|l| !l.is_empty()) {
                meta["labels"] = serde_json::json!(labels);
            }
            let mut ns = serde_json::json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": meta });
            // Nothing new can be created in a namespace being terminated.
            if n.status.and_then(|s| s.phase).as_deref() == Some("Terminating") || n.metadata.deletion_timestamp.is_some() {
                ns["status"] = serde_json::json!({ "phase": "Terminating" });
            }
            Some(ns)
        })
        .collect();
    out.sort_by(|a, b| a["metadata"]["name"].as_str().cmp(&b["metadata"]["name"].as_str()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_trims_server_set_metadata_but_keeps_what_admission_reads() {
        let meta = serde_json::json!({
            "name": "x", "namespace": "ns", "uid": "u", "resourceVersion": "7", "generation": 2, "creationTimestamp": "2026-01-01T00:00:00Z",
            "managedFields": [{}], "labels": {"app": "x"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "storageclass.kubernetes.io/is-default-class": "true"},
            "ownerReferences": [{"kind": "ReplicaSet", "name": "x-1", "uid": "u2"}]
        });
        let cases = [
            (
                "Pod",
                serde_json::json!({"name": "x", "namespace": "ns", "labels": {"app": "x"}, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}, "ownerReferences": [{"kind": "ReplicaSet", "name": "x-1"}]}),
            ),
            // The newest default StorageClass wins: its creationTimestamp stays.
            (
                "StorageClass",
                serde_json::json!({"name": "x", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"app": "x"}, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}, "ownerReferences": [{"kind": "ReplicaSet", "name": "x-1"}]}),
            ),
            (
                "Deployment",
                serde_json::json!({"name": "x", "namespace": "ns", "generation": 2, "labels": {"app": "x"}, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}, "ownerReferences": [{"kind": "ReplicaSet", "name": "x-1"}]}),
            ),
        ];
        for (kind, want) in cases {
            let mut v = serde_json::json!({"metadata": meta.clone()});
            trim_metadata(kind, &mut v);
            assert_eq!(v["metadata"], want, "{kind}");
        }
    }
}
