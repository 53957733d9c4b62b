//! What already exists of the documents: each document's kind resolved through discovery
//! (fixing guessed plurals and scope), then the objects read, a GET each or one LIST of a
//! namespace's kind when many documents name it, so that creating them again is checked as an
//! update.

use super::discovery::discovery_has_no;
use super::errors::{transport_message, within};
use super::list::list_pages;
use super::Conn;
use std::collections::{BTreeMap, BTreeSet};

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::Resource;
use kubectl_quota_engine::check::ClusterState;
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::{self, Object};

/// GETs that `check` keeps in flight at once to tell creates from updates.
const GETS_IN_FLIGHT: usize = 32;

/// Documents of one namespace and kind above which the kind is LISTed instead of each object
/// read by a GET.
const LIST_FROM: usize = 16;

/// One object read: its document's index, its namespace, and the object as the server has it
/// (`None`: it does not exist), or why it could not be read.
type Got = (usize, String, Result<Option<serde_json::Value>, String>);

/// Resolves each document's kind through discovery (fixing guessed plurals and scope) and
/// loads the objects that already exist, so that creating them again is checked as an update
/// (what they lead to, their autoscalers' targets, ReplicaSets and claims' pods, is
/// [`super::state::live_state`]'s).
///
/// Returns what it found worth saying (kinds the cluster does not serve), and what it could
/// not read (the answer is incomplete without it).
pub async fn resolve_and_existing(conn: &Conn, objs: &mut [Object], state: &mut ClusterState) -> (Vec<String>, Vec<String>) {
    let Resolved { notes, mut unread, gets } = resolve_kinds(conn, objs).await;
    for (i, ns, got) in read_existing(conn, gets).await {
        let obj = &objs[i];
        match got {
            Ok(Some(value)) => {
                let doc = Document { origin: Origin::new("cluster", 1), value };
                if let Ok(mut o) = objects::decode(&doc) {
                    o.type_info = obj.type_info.clone();
                    o.meta.namespace = Some(ns.clone());
                    state.existing.insert((ns.clone(), obj.type_info.group_resource(), obj.meta.name.clone()), o);
                }
            }
            Ok(None) => {}
            Err(e) => unread.push(format!("cannot read {} {:?} to tell a create from an update: {e}", obj.type_info.group_resource(), obj.meta.name)),
        }
    }
    (notes, unread)
}

/// The documents' kinds as discovery resolved them.
struct Resolved {
    /// Kinds the cluster does not serve, in words.
    notes: Vec<String>,
    /// Kinds discovery could not be asked about, in words.
    unread: Vec<String>,
    /// The objects to read: (document index, namespace, kind, name).
    gets: Vec<(usize, String, ApiResource, String)>,
}

/// Resolves each document's kind (one discovery call per kind), marking unserved kinds and
/// fixing guessed plurals and scope, and lists the namespaced objects worth reading.
async fn resolve_kinds(conn: &Conn, objs: &mut [Object]) -> Resolved {
    let mut out = Resolved { notes: Vec::new(), unread: Vec::new(), gets: Vec::new() };
    // `None`: not served, or (in `unknown`) discovery could not be asked (forbidden,
    // unreachable): not taken as unserved.
    let mut resolved: BTreeMap<(String, String), Option<ApiResource>> = BTreeMap::new();
    let mut unknown: BTreeSet<(String, String)> = BTreeSet::new();
    for (i, obj) in objs.iter_mut().enumerate() {
        let key = (obj.type_info.api_version.clone(), obj.type_info.kind.clone());
        if !resolved.contains_key(&key) {
            let (group, version) = match key.0.rsplit_once('/') {
                Some((g, v)) => (g.to_string(), v.to_string()),
                None => (String::new(), key.0.clone()),
            };
            let gvk = GroupVersionKind::gvk(&group, &version, &key.1);
            let found = match within(conn.timeout, kube::discovery::pinned_kind(&conn.client, &gvk)).await {
                Ok((ar, caps)) => {
                    obj.type_info.namespaced = caps.scope == kube::discovery::Scope::Namespaced;
                    Some(ar)
                }
                Err(e) if discovery_has_no(&e) => {
                    let why = transport_message(&conn.server, &e);
                    out.notes.push(format!("{}/{} is not served by this cluster ({why}): the API server would refuse it", key.0, key.1));
                    None
                }
                Err(e) => {
                    let why = transport_message(&conn.server, &e);
                    out.unread.push(format!("cannot tell whether this cluster serves {}/{} ({why}): checked with the tool's own resource name", key.0, key.1));
                    unknown.insert(key.clone());
                    None
                }
            };
            resolved.insert(key.clone(), found);
        }
        let ar = match resolved.get(&key) {
            Some(Some(ar)) => ar,
            // Discovery answered that the kind is not there: kubectl would send nothing.
            Some(None) if !unknown.contains(&key) => {
                obj.type_info.unserved = true;
                continue;
            }
            _ => continue,
        };
        obj.type_info.guessed = false;
        obj.type_info.resource = ar.plural.clone();
        if !obj.type_info.namespaced || obj.meta.generate_name.is_some() {
            continue;
        }
        let ns = obj.meta.namespace.clone().unwrap_or_else(|| conn.namespace.clone());
        out.gets.push((i, ns, ar.clone(), obj.meta.name.clone()));
    }
    out
}

/// Reads the objects `gets` names in one concurrent round (a bounded number in flight): a GET
/// per object, or one LIST of the namespace's objects of a kind when more than [`LIST_FROM`]
/// documents name it (1,000 pods are one request, not 1,000). In document order.
async fn read_existing(conn: &Conn, gets: Vec<(usize, String, ApiResource, String)>) -> Vec<Got> {
    // (namespace, apiVersion, plural) -> the kind, and (document index, name) of each object.
    type Groups = BTreeMap<(String, String, String), (ApiResource, Vec<(usize, String)>)>;
    let mut groups: Groups = BTreeMap::new();
    for (i, ns, ar, name) in gets {
        groups.entry((ns, ar.api_version.clone(), ar.plural.clone())).or_insert_with(|| (ar, Vec::new())).1.push((i, name));
    }
    let mut found: Vec<Got> = Vec::new();
    let mut running: tokio::task::JoinSet<Vec<Got>> = tokio::task::JoinSet::new();
    for ((ns, _, _), (ar, docs)) in groups {
        if docs.len() > LIST_FROM {
            let conn = conn.clone();
            running.spawn(async move { existing_by_list(&conn, &ns, &ar, docs).await });
            continue;
        }
        for (i, name) in docs {
            if running.len() >= GETS_IN_FLIGHT {
                found.extend(running.join_next().await.and_then(Result::ok).into_iter().flatten());
            }
            let (conn, ns, ar) = (conn.clone(), ns.clone(), ar.clone());
            running.spawn(async move {
                let got = existing_by_get(&conn, &ns, &ar, &name).await;
                vec![(i, ns, got)]
            });
        }
    }
    while let Some(r) = running.join_next().await {
        found.extend(r.into_iter().flatten());
    }
    found.sort_by_key(|(i, _, _)| *i);
    found
}

/// The object `name` as the server has it (`None`: it does not exist), as JSON with its
/// apiVersion and kind; `Err`: why it could not be read.
pub(super) async fn existing_by_get(conn: &Conn, ns: &str, ar: &ApiResource, name: &str) -> Result<Option<serde_json::Value>, String> {
    let api: Api<DynamicObject> = Api::namespaced_with(conn.client.clone(), ns, ar);
    match within(conn.timeout, api.get_opt(name)).await {
        Ok(Some(o)) => Ok(serde_json::to_value(&o).ok()),
        Ok(None) => Ok(None),
        Err(e) => Err(transport_message(&conn.server, &e)),
    }
}

/// [`existing_by_get`] for many objects of one kind in one namespace, from one paginated
/// LIST (items without managedFields). When the LIST fails (a user who may GET but not LIST),
/// the objects are read one by one.
async fn existing_by_list(conn: &Conn, ns: &str, ar: &ApiResource, docs: Vec<(usize, String)>) -> Vec<Got> {
    let mut wanted: BTreeMap<&str, Option<serde_json::Value>> = docs.iter().map(|(_, name)| (name.as_str(), None)).collect();
    let what = format!("list {} in namespace {ns:?}", ar.plural);
    let listed = list_pages(conn, DynamicObject::url_path(ar, Some(ns)), what, |mut item| {
        let Some(slot) = item.get("metadata").and_then(|m| m.get("name")).and_then(serde_json::Value::as_str).and_then(|n| wanted.get_mut(n)) else {
            return;
        };
        item.insert("apiVersion".into(), ar.api_version.as_str().into());
        item.insert("kind".into(), ar.kind.as_str().into());
        *slot = Some(serde_json::Value::Object(item));
    })
    .await;
    if listed.is_err() {
        let mut out = Vec::with_capacity(docs.len());
        for (i, name) in docs {
            let got = existing_by_get(conn, ns, ar, &name).await;
            out.push((i, ns.to_string(), got));
        }
        return out;
    }
    // (A name twice in the documents gets the same object twice, as two GETs would.)
    docs.iter().map(|(i, name)| (*i, ns.to_string(), Ok(wanted.get(name.as_str()).cloned().flatten()))).collect()
}
