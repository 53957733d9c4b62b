//! What a live `check` or `plan` reads before deciding: quotas, LimitRanges and classes of
//! the documents' namespaces, which namespaces exist, and the objects that already exist.

use super::discovery::serves;
use super::errors::{transport_message, within, ReadError};
use super::existing::{existing_by_get, resolve_and_existing};
use super::list::{list_objects, objects_at, url_path};
use super::Conn;
use std::collections::{BTreeMap, BTreeSet};

use kube::api::{Api, ApiResource, GroupVersionKind};
use kubectl_quota_engine::check::cluster_kinds::{self, ClusterKind, Read, Served, Unread};
use kubectl_quota_engine::check::{ClusterState, Gap, Lacking};
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::{self, Object};

/// What a live check LISTs before deciding, all at once: every row of the cluster-data kinds
/// read per namespace (of the documents) or cluster-wide. A quota list that fails is fatal;
/// any other leaves the state without that kind, and is a gap (said only when an answer
/// depends on it) or left unsaid, as its row says. A kind the cluster does not serve is none.
pub async fn cluster_state(conn: &Conn, namespaces: &BTreeSet<String>) -> Result<(ClusterState, Vec<Gap>), ReadError> {
    let lists: Vec<_> = cluster_kinds::listed().map(|k| (k, spawn_row(conn, k, namespaces))).collect();
    let mut read = Reading { conn, state: ClusterState::default(), gaps: Vec::new(), served: BTreeMap::new() };
    let mut unread = Vec::new();
    for (k, tasks) in lists {
        if !read.row(k, tasks).await? {
            unread.push(k);
        }
    }
    // A kind read in one namespace and not in another is not known.
    unread.into_iter().for_each(|k| read.state.not_read(k));
    Ok((read.state, read.gaps))
}

/// Kueue's queues as `describe` shows them: the LocalQueues of namespace `ns` (`None`: of
/// all), and the ClusterQueues and ResourceFlavors they name. `None` where the cluster does
/// not serve Kueue (its LocalQueues LIST answers 404): nothing more is asked.
pub async fn kueue_queues(conn: &Conn, ns: Option<&str>) -> Result<Option<kubectl_quota_engine::kueue::Kueue>, ReadError> {
    let mut kueue = kubectl_quota_engine::kueue::Kueue::default();
    for (kind, ns) in [("LocalQueue", ns), ("ClusterQueue", None), ("ResourceFlavor", None)] {
        let k = cluster_kinds::row(kubectl_quota_engine::kueue::GROUP, kind).expect("Kueue's kinds have rows");
        let objects = match list_row(conn, k, ns).await {
            // The authorizer answers before the API is looked up: discovery tells.
            Err(e) if kind == "LocalQueue" && (not_served(&e) || (e.forbidden && serves(conn, &k.api_version(), k.plural).await == Some(false))) => {
                return Ok(None)
            }
            r => r?,
        };
        for o in objects {
            if let objects::Body::Kept(v) = &o.body {
                kueue.add(v, o.meta.namespace.as_deref().unwrap_or(&conn.namespace));
            }
        }
    }
    Ok(Some(kueue))
}

/// One LIST in the background: its objects, or why they could not be read.
type Listing = tokio::task::JoinHandle<Result<Vec<Object>, ReadError>>;

/// Lists kind `k` (one LIST per namespace, or one of the cluster), in the background; the
/// pages are decoded straight into library objects.
fn spawn_row(conn: &Conn, k: &'static ClusterKind, namespaces: &BTreeSet<String>) -> Vec<Listing> {
    let spawn = |ns: Option<&String>| {
        let (c, ns) = (conn.clone(), ns.cloned());
        tokio::spawn(async move { list_row(&c, k, ns.as_deref()).await })
    };
    match k.read {
        Read::PerNamespace => namespaces.iter().map(|ns| spawn(Some(ns))).collect(),
        _ => vec![spawn(None)],
    }
}

/// The LIST of kind `k` in namespace `ns` (`None`: the whole cluster), decoded.
async fn list_row(conn: &Conn, k: &ClusterKind, ns: Option<&str>) -> Result<Vec<Object>, ReadError> {
    let what = match ns {
        Some(ns) => format!("list {} in namespace {ns:?}", k.group_resource),
        None => format!("list {}", k.group_resource),
    };
    objects_at(conn, url_path(k, ns), &k.api_version(), k.kind, what).await
}

/// What not reading kind `k` leaves undone, in words.
fn consequence(k: &ClusterKind) -> &'static str {
    match k.unread {
        Unread::Gap(c) => c,
        _ => "",
    }
}

/// A background task's answer; a task that did not finish is a read that failed.
fn joined<T>(r: Result<Result<Vec<T>, ReadError>, tokio::task::JoinError>) -> Result<Vec<T>, ReadError> {
    r.unwrap_or_else(|e| Err(ReadError { what: "read".into(), forbidden: false, unreachable: false, message: e.to_string() }))
}

/// The API server does not serve the kind listed.
fn not_served(e: &ReadError) -> bool {
    e.message.contains("could not find the requested resource") || e.message.contains("404")
}

/// The LISTs' answers folded into the state, in the order they were started; what could not
/// be read is a gap.
struct Reading<'c> {
    conn: &'c Conn,
    state: ClusterState,
    gaps: Vec<Gap>,
    /// Whether the cluster serves a kind (by apiVersion and plural): asked of discovery once,
    /// only when needed.
    served: BTreeMap<(String, &'static str), Option<bool>>,
}

impl Reading<'_> {
    /// Kind `k`'s LISTs into the state: `Ok(false)` when some could not be read (the kind is
    /// then not known), `Err` when that is fatal.
    async fn row(&mut self, k: &'static ClusterKind, tasks: Vec<Listing>) -> Result<bool, ReadError> {
        let mut complete = true;
        for t in tasks {
            match joined(t.await) {
                Ok(items) => items.into_iter().for_each(|o| self.state.add(o, &self.conn.namespace)),
                Err(e) if k.unread == Unread::Fatal => return Err(e),
                Err(e) if k.served != Served::Always && !self.missed(k, &e).await => {}
                Err(e) => {
                    complete = false;
                    if let Unread::Gap(consequence) = k.unread {
                        self.gaps.push(Gap { lacking: k.lacking, text: format!("{e}; {consequence}") });
                    }
                }
            }
        }
        if complete {
            self.state.read_in_full(k);
        }
        Ok(complete)
    }

    /// Whether a failed LIST of a kind not every cluster serves missed something. The
    /// authorizer answers before the API is looked up: a user who may not list DRA's kinds
    /// gets 403 even from a release that serves none (1.20). Discovery, open to every user,
    /// tells; asked once per kind, only then.
    async fn missed(&mut self, k: &'static ClusterKind, e: &ReadError) -> bool {
        if !e.forbidden {
            return !not_served(e);
        }
        let key = (k.api_version(), k.plural);
        if !self.served.contains_key(&key) {
            let served = serves(self.conn, &key.0, k.plural).await;
            self.served.insert(key.clone(), served);
        }
        self.served[&key] != Some(false)
    }
}

/// The workloads the documents' autoscalers target, into `state`: an HPA sent on its own acts
/// on its target at once (a GET each, only for targets no document names).
async fn load_autoscaler_targets(conn: &Conn, objs: &[Object], state: &mut ClusterState) -> Vec<String> {
    let mut unread = Vec::new();
    for obj in objs {
        let t = match &obj.body {
            objects::Body::Autoscaler(a) => a.target.as_ref(),
            objects::Body::Vpa(v) => v.target.as_ref(),
            _ => None,
        };
        let Some(t) = t else { continue };
        let ns = obj.meta.namespace.clone().unwrap_or_else(|| conn.namespace.clone());
        let Some(key) = scale_target_key(&ns, t) else { continue };
        if state.existing.contains_key(&key) {
            continue;
        }
        match scale_target(conn, &ns, t).await {
            Ok(Some(o)) => {
                state.existing.insert(key, o);
            }
            Ok(None) => {}
            Err(e) => unread.push(format!("cannot read {} {:?}, which autoscaler {:?} targets: {e}", key.1, t.name, obj.meta.name)),
        }
    }
    unread
}

/// The apiVersion and plural of a kind an autoscaler's target may be whose pods are replayed
/// (a DaemonSet only a VerticalPodAutoscaler's).
pub(super) fn scalable(kind: &str) -> Option<(&'static str, &'static str)> {
    Some(match kind {
        "Deployment" => ("apps/v1", "deployments"),
        "StatefulSet" => ("apps/v1", "statefulsets"),
        "DaemonSet" => ("apps/v1", "daemonsets"),
        "ReplicaSet" => ("apps/v1", "replicasets"),
        "ReplicationController" => ("v1", "replicationcontrollers"),
        _ => return None,
    })
}

/// Where the state keeps the workload `t` names in `ns` (`None`: a kind whose pods are not
/// replayed).
pub fn scale_target_key(ns: &str, t: &objects::ScaleTarget) -> Option<(String, String, String)> {
    let (api_version, _) = scalable(&t.kind)?;
    Some((ns.to_string(), objects::type_info(api_version, &t.kind).group_resource(), t.name.clone()))
}

/// The workload an autoscaler targets, as the engine reads it, with its status (one GET):
/// `None` when it does not exist, is of a kind whose pods are not replayed, or cannot be read.
pub async fn scale_target(conn: &Conn, ns: &str, t: &objects::ScaleTarget) -> Result<Option<Object>, String> {
    let Some((api_version, plural)) = scalable(&t.kind) else { return Ok(None) };
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, &t.kind), plural);
    let Some(value) = existing_by_get(conn, ns, &ar, &t.name).await? else { return Ok(None) };
    // One the engine cannot read is left out, as a LIST's items are.
    let Ok(mut o) = objects::decode(&Document { origin: Origin::new("cluster", 1), value }) else { return Ok(None) };
    o.meta.namespace = Some(ns.to_string());
    Ok(Some(o))
}

/// The pods of the existing workloads whose template has claims from ResourceClaimTemplates,
/// into `state`: whether their claims were created (quota may refuse a claim, leaving its pod
/// Pending) is in their status. Also the pods of the workloads a VerticalPodAutoscaler (of
/// the state or the documents) targets: what they ask for now is what their recreation
/// gives back. One LIST of pods per namespace, only for such workloads.
async fn load_claim_pods(conn: &Conn, objs: &[Object], state: &mut ClusterState) -> Vec<String> {
    let mut owners: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    let sent_vpas: Vec<(String, &objects::ScaleTarget)> = objs
        .iter()
        .filter_map(|o| match &o.body {
            objects::Body::Vpa(v) => v.target.as_ref().map(|t| (o.meta.namespace.clone().unwrap_or_else(|| conn.namespace.clone()), t)),
            _ => None,
        })
        .collect();
    for ((ns, _, name), o) in &state.existing {
        if let objects::Body::Workload(w) = &o.body {
            let (group, kind) = (o.type_info.group.as_str(), o.type_info.kind.as_str());
            let by_vpa = state.vpas_of(ns, o).next().is_some()
                || sent_vpas.iter().any(|(n, t)| n == ns && kubectl_quota_engine::autoscaling::names(t, group, kind, name));
            if (by_vpa || !w.template.resource_claim_templates.is_empty()) && kind != "ReplicaSet" {
                owners.entry(ns.clone()).or_default().insert((o.type_info.kind.clone(), name.clone()));
            }
        }
    }
    let mut unread = Vec::new();
    for (ns, mut wanted) in owners {
        // A Deployment's pods are its ReplicaSets'.
        let deployments: Vec<String> = wanted.iter().filter(|(k, _)| k == "Deployment").map(|(_, n)| n.clone()).collect();
        for d in deployments {
            wanted.extend(state.owned(&ns, "replicasets.apps", "Deployment", &d).into_iter().map(|rs| ("ReplicaSet".to_string(), rs.meta.name.clone())));
        }
        let what = format!("list pods in namespace {ns:?}");
        match list_objects::<k8s_openapi::api::core::v1::Pod>(conn, Some(&ns), what).await {
            Ok(items) => {
                for o in items {
                    if o.meta.controller.as_ref().is_some_and(|c| wanted.contains(c)) {
                        state.existing.insert((ns.clone(), o.type_info.group_resource(), o.meta.name.clone()), o);
                    }
                }
            }
            Err(e) => unread.push(format!("{e}; pods left Pending by claims that were not created are not seen")),
        }
    }
    unread
}

/// The ReplicaSets of the Deployments that exist, into `state` (which pods run which
/// template: a rollout under way, a ReplicaSet a rollback takes back): one LIST per
/// namespace. Returns what could not be read.
async fn load_revisions(conn: &Conn, state: &mut ClusterState) -> Vec<String> {
    let mut deployments: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (ns, gr, name) in state.existing.keys() {
        if gr == "deployments.apps" {
            deployments.entry(ns.clone()).or_default().insert(name.clone());
        }
    }
    let mut unread = Vec::new();
    for (ns, names) in deployments {
        let what = format!("list replicasets in namespace {ns:?}");
        match list_objects::<k8s_openapi::api::apps::v1::ReplicaSet>(conn, Some(&ns), what).await {
            Ok(items) => {
                for o in items {
                    if o.meta.controller.as_ref().is_some_and(|(kind, owner)| kind == "Deployment" && names.contains(owner)) {
                        state.existing.insert((ns.clone(), o.type_info.group_resource(), o.meta.name.clone()), o);
                    }
                }
            }
            Err(e) => unread.push(format!("{e}; a rollout under way is not seen")),
        }
    }
    unread
}

/// What a live `check` or `plan` reads before deciding: the state of the documents'
/// namespaces, which of them exist, and the documents' kinds and existing objects.
pub struct LiveState {
    pub state: ClusterState,
    /// Worth saying, and complete: kinds the cluster does not serve.
    pub notes: Vec<String>,
    /// What could not be read: an answer that depends on it is incomplete.
    pub incomplete: Vec<Gap>,
}

/// Reads what deciding `objs` live needs (see [`LiveState`]); `Err` when the quotas cannot be
/// read, without which nothing can be decided.
pub async fn live_state(conn: &Conn, objs: &mut [Object]) -> Result<LiveState, ReadError> {
    let namespaces: BTreeSet<String> = objs.iter().map(|o| o.meta.namespace.clone().unwrap_or_else(|| conn.namespace.clone())).collect();
    let (mut state, mut incomplete) = cluster_state(conn, &namespaces).await?;
    match namespaces_existing(conn, &namespaces).await {
        Ok((existing, terminating)) => {
            state.namespaces = Some(existing);
            state.terminating = terminating;
        }
        Err(e) => incomplete.push(Gap::always(format!("{e}; {}", consequence(&cluster_kinds::NAMESPACE)))),
    }
    service_accounts(conn, objs, &mut state, &mut incomplete).await;
    let (notes, mut unread) = resolve_and_existing(conn, objs, &mut state).await;
    unread.extend(load_autoscaler_targets(conn, objs, &mut state).await);
    unread.extend(load_revisions(conn, &mut state).await);
    unread.extend(load_claim_pods(conn, objs, &mut state).await);
    incomplete.extend(unread.into_iter().map(Gap::always));
    Ok(LiveState { state, notes, incomplete })
}

/// The ServiceAccounts (names) of the namespaces where a document makes pods: one LIST per
/// such namespace, all at once. One that cannot be read leaves that namespace's unknown (a
/// pod naming a ServiceAccount other than `default` there cannot be decided), and is a gap.
async fn service_accounts(conn: &Conn, objs: &[Object], state: &mut ClusterState, gaps: &mut Vec<Gap>) {
    use k8s_openapi::api::core::v1::ServiceAccount;
    let with_pods: BTreeSet<String> = objs
        .iter()
        .filter(|o| matches!(o.body, objects::Body::Pod(_) | objects::Body::Workload(_)))
        .map(|o| o.meta.namespace.clone().unwrap_or_else(|| conn.namespace.clone()))
        .collect();
    let tasks: Vec<_> = with_pods
        .into_iter()
        .map(|ns| {
            let conn = conn.clone();
            tokio::spawn(async move {
                let what = format!("list serviceaccounts in namespace {ns:?}");
                let r = list_objects::<ServiceAccount>(&conn, Some(&ns), what).await;
                (ns, r)
            })
        })
        .collect();
    for t in tasks {
        let Ok((ns, r)) = t.await else { continue };
        match r {
            Ok(items) => {
                state.service_accounts.entry(ns.clone()).or_default();
                items.into_iter().for_each(|o| state.add(o, &ns));
            }
            Err(e) => gaps.push(Gap { lacking: Some(Lacking::ServiceAccounts), text: format!("{e}; {}", consequence(Lacking::ServiceAccounts.row())) }),
        }
    }
}

/// Which of `names` exist as namespaces, with their labels, and which of those are being
/// terminated: `Err` (why) when that cannot be read (no `get` on namespaces), in which case
/// the check does not decide it.
pub async fn namespaces_existing(conn: &Conn, names: &BTreeSet<String>) -> Result<(BTreeMap<String, BTreeMap<String, String>>, BTreeSet<String>), String> {
    let api = Api::<k8s_openapi::api::core::v1::Namespace>::all(conn.client.clone());
    let mut out = BTreeMap::new();
    let mut terminating = BTreeSet::new();
    for name in names {
        match within(conn.timeout, api.get_opt(name)).await {
            Ok(Some(n)) => {
                if n.status.and_then(|s| s.phase).as_deref() == Some("Terminating") || n.metadata.deletion_timestamp.is_some() {
                    terminating.insert(name.clone());
                }
                out.insert(name.clone(), n.metadata.labels.unwrap_or_default());
            }
            Ok(None) => {}
            Err(e) => return Err(format!("cannot read namespace {name:?} ({})", transport_message(&conn.server, &e))),
        }
    }
    Ok((out, terminating))
}
