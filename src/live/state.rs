//! What a live `check` or `plan` reads before deciding: quotas, LimitRanges and classes of
//! the documents' namespaces, which namespaces exist, and the objects that already exist.

use super::discovery::serves;
use super::errors::{transport_message, within, ReadError};
use super::existing::{existing_by_get, resolve_and_existing};
use super::list::{list_objects, objects_at};
use super::Conn;
use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::admissionregistration::v1::{
    MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::{LimitRange, ResourceQuota};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaimTemplate};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{Api, ApiResource, GroupVersionKind};
use kubectl_quota_engine::check::{ClusterState, Gap, Lacking};
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::{self, read_autoscaler_types, AutoscalerType, Object, Sets};

/// What a live check reads: quotas and LimitRanges of each namespace, PriorityClasses,
/// StorageClasses and RuntimeClasses, all at once. A forbidden quota list is fatal; the
/// others leave the state without them, and are the gaps returned (said only when an answer
/// depends on them).
pub async fn cluster_state(conn: &Conn, namespaces: &BTreeSet<String>) -> Result<(ClusterState, Vec<Gap>), ReadError> {
    let lists = Lists::spawn(conn, namespaces);
    let mut read = Reading { conn, state: ClusterState::default(), gaps: Vec::new(), dra_served: None };
    read.quotas_and_limit_ranges(lists.quotas, lists.limit_ranges).await?;
    read.classes(lists.priority_classes, lists.storage_classes, lists.runtime_classes, lists.device_classes).await;
    read.autoscalers(lists.autoscalers).await;
    read.claim_templates(lists.claim_templates).await;
    read.webhooks(lists.webhooks).await;
    read.policies(lists.policies).await;
    Ok((read.state, read.gaps))
}

/// One LIST in the background: its objects, or why they could not be read.
type Listing = tokio::task::JoinHandle<Result<Vec<Object>, ReadError>>;

/// Lists `K` (in namespace `ns`, or cluster-wide), in the background; the pages are decoded
/// straight into library objects.
fn spawn_list<K: kube::Resource<DynamicType = ()>>(conn: &Conn, ns: Option<&str>, what: String) -> Listing {
    let (conn, ns) = (conn.clone(), ns.map(str::to_string));
    tokio::spawn(async move { list_objects::<K>(&conn, ns.as_deref(), what).await })
}

/// A background task's answer; a task that did not finish is a read that failed.
fn joined<T>(r: Result<Result<Vec<T>, ReadError>, tokio::task::JoinError>) -> Result<Vec<T>, ReadError> {
    r.unwrap_or_else(|e| Err(ReadError { what: "read".into(), forbidden: false, unreachable: false, message: e.to_string() }))
}

/// The API server does not serve the kind listed.
fn not_served(e: &ReadError) -> bool {
    e.message.contains("could not find the requested resource") || e.message.contains("404")
}

/// Every LIST [`cluster_state`] makes, all in flight at once.
struct Lists {
    quotas: Vec<Listing>,
    limit_ranges: Vec<Listing>,
    priority_classes: Listing,
    storage_classes: Listing,
    runtime_classes: Listing,
    device_classes: Listing,
    /// Per autoscaler kind read, one LIST per namespace.
    autoscalers: Vec<(&'static AutoscalerType, Vec<Listing>)>,
    /// The mutating and validating webhook configurations.
    webhooks: [Listing; 2],
    /// The validating and mutating admission policies and their bindings.
    policies: [Listing; 4],
    claim_templates: Vec<Listing>,
}

impl Lists {
    /// Starts every LIST at once.
    fn spawn(conn: &Conn, namespaces: &BTreeSet<String>) -> Lists {
        let mut quotas = Vec::new();
        let mut limit_ranges = Vec::new();
        for ns in namespaces {
            quotas.push(spawn_list::<ResourceQuota>(conn, Some(ns), format!("list resourcequotas in namespace {ns:?}")));
            limit_ranges.push(spawn_list::<LimitRange>(conn, Some(ns), format!("list limitranges in namespace {ns:?}")));
        }
        let priority_classes = spawn_list::<PriorityClass>(conn, None, "list priorityclasses".into());
        let storage_classes = spawn_list::<StorageClass>(conn, None, "list storageclasses".into());
        let runtime_classes = spawn_list::<RuntimeClass>(conn, None, "list runtimeclasses".into());
        // DRA (resource.k8s.io/v1, 1.34+): DeviceClasses, and the claim templates pods name.
        let device_classes = spawn_list::<DeviceClass>(conn, None, "list deviceclasses.resource.k8s.io".into());
        // Autoscalers, every kind the cluster is read for (the HPAs, served by every release;
        // an add-on's kinds where it is installed), one LIST each per namespace.
        let autoscalers = read_autoscaler_types().map(|t| (t, namespaces.iter().map(|ns| spawn_autoscalers(conn, ns, t)).collect())).collect();
        // Which admission webhooks the pods meet (what they change is in no API).
        let webhooks = [
            spawn_list::<MutatingWebhookConfiguration>(conn, None, "list mutatingwebhookconfigurations.admissionregistration.k8s.io".into()),
            spawn_list::<ValidatingWebhookConfiguration>(conn, None, "list validatingwebhookconfigurations.admissionregistration.k8s.io".into()),
        ];
        // The admission policies replayed before quota (v1: VAP from 1.30, MAP from 1.36).
        let policies = [
            spawn_list::<MutatingAdmissionPolicy>(conn, None, "list mutatingadmissionpolicies.admissionregistration.k8s.io".into()),
            spawn_list::<MutatingAdmissionPolicyBinding>(conn, None, "list mutatingadmissionpolicybindings.admissionregistration.k8s.io".into()),
            spawn_list::<ValidatingAdmissionPolicy>(conn, None, "list validatingadmissionpolicies.admissionregistration.k8s.io".into()),
            spawn_list::<ValidatingAdmissionPolicyBinding>(conn, None, "list validatingadmissionpolicybindings.admissionregistration.k8s.io".into()),
        ];
        let mut claim_templates = Vec::new();
        for ns in namespaces {
            claim_templates.push(spawn_list::<ResourceClaimTemplate>(
                conn,
                Some(ns),
                format!("list resourceclaimtemplates.resource.k8s.io in namespace {ns:?}"),
            ));
        }
        Lists { quotas, limit_ranges, priority_classes, storage_classes, runtime_classes, device_classes, autoscalers, claim_templates, webhooks, policies }
    }
}

/// The LISTs' answers folded into the state, in the order they were started; what could not
/// be read is a gap.
struct Reading<'c> {
    conn: &'c Conn,
    state: ClusterState,
    gaps: Vec<Gap>,
    /// Whether the cluster serves DRA's kinds: asked of discovery once, only when needed.
    dra_served: Option<bool>,
}

impl Reading<'_> {
    fn add(&mut self, items: Vec<Object>) {
        items.into_iter().for_each(|o| self.state.add(o, &self.conn.namespace));
    }

    /// A kind read in full is known, none being none; one that could not be read leaves the
    /// state without it, and its gap names it.
    fn read(&mut self, kind: Lacking, items: Result<Vec<Object>, ReadError>, consequence: &str) {
        match items {
            Ok(items) => {
                self.state.know_all(kind);
                self.add(items);
            }
            Err(e) => self.gaps.push(Gap { lacking: Some(kind), text: format!("{e}; {consequence}") }),
        }
    }

    /// Whether a failed LIST of a DRA kind missed something. The authorizer answers before
    /// the API is looked up: a user who may not list DRA's kinds gets 403 even from a release
    /// that serves none (1.20). Discovery, open to every user, tells; asked once, only then.
    async fn dra_missed(&mut self, e: &ReadError) -> bool {
        if !e.forbidden {
            return !not_served(e);
        }
        if self.dra_served.is_none() {
            self.dra_served = serves(self.conn, "resource.k8s.io/v1", "deviceclasses").await;
        }
        self.dra_served != Some(false)
    }

    /// The quotas (one that cannot be listed is fatal) and the LimitRanges (a gap).
    async fn quotas_and_limit_ranges(&mut self, quotas: Vec<Listing>, limit_ranges: Vec<Listing>) -> Result<(), ReadError> {
        for t in quotas {
            let items = joined(t.await)?;
            self.add(items);
        }
        for t in limit_ranges {
            match joined(t.await) {
                Ok(items) => self.add(items),
                Err(e) => self.gaps.push(Gap::always(format!("{e}; LimitRange defaults are not applied"))),
            }
        }
        Ok(())
    }

    /// The cluster-wide classes: PriorityClasses, StorageClasses, RuntimeClasses and
    /// DeviceClasses.
    async fn classes(&mut self, priority: Listing, storage: Listing, runtime: Listing, device: Listing) {
        self.read(Lacking::PriorityClasses, joined(priority.await), "the global default PriorityClass and unknown class names are not checked");
        self.read(Lacking::StorageClasses, joined(storage.await), "the default StorageClass is not applied to claims without a class");
        match joined(runtime.await) {
            // Not served (before RuntimeClass was GA): there are none.
            Err(e) if not_served(&e) => self.state.know_all(Lacking::RuntimeClasses),
            items => self.read(Lacking::RuntimeClasses, items, "RuntimeClass overhead is not added to pods"),
        }
        match joined(device.await) {
            Err(e) if !self.dra_missed(&e).await => self.state.know_all(Lacking::DeviceClasses),
            items => self.read(Lacking::DeviceClasses, items, "DRA extended resource names are not resolved"),
        }
    }

    /// Every autoscaler kind read, in the table's order: a kind every cluster serves is a gap
    /// when it cannot be read; an add-on's that is not installed is none, and a user who may
    /// not list it is told so by discovery.
    async fn autoscalers(&mut self, kinds: Vec<(&'static AutoscalerType, Vec<Listing>)>) {
        for (kind, tasks) in kinds {
            let mut served: Option<Option<bool>> = None;
            for t in tasks {
                match joined(t.await) {
                    Ok(items) => self.add(items),
                    Err(e) if kind.add_on.is_none() => self.gaps.push(Gap::always(format!("{e}; {}", kind.unread))),
                    Err(e) if not_served(&e) => {}
                    Err(e) => {
                        if served.is_none() {
                            served = Some(serves(self.conn, &kind.api_version(), kind.plural).await);
                        }
                        if served != Some(Some(false)) {
                            let lacking = (kind.sets == Sets::Requests).then_some(Lacking::VerticalPodAutoscalers);
                            if let Some(l) = lacking {
                                self.state.forget(l);
                            }
                            self.gaps.push(Gap { lacking, text: format!("{e}; {}", kind.unread) });
                        }
                    }
                }
            }
        }
    }

    /// The webhook configurations, both kinds or neither: a user who may not list them (the
    /// built-in `view` role may not) is told of no webhook.
    async fn webhooks(&mut self, lists: [Listing; 2]) {
        let mut all = Vec::new();
        for t in lists {
            match joined(t.await) {
                Ok(items) => all.extend(items),
                Err(_) => return,
            }
        }
        self.state.webhooks = Some(Default::default());
        self.add(all);
    }

    /// The admission policies and bindings: a kind the release does not serve has none; one the
    /// user may not list is left out, as the webhooks are.
    async fn policies(&mut self, lists: [Listing; 4]) {
        for t in lists {
            if let Ok(items) = joined(t.await) {
                self.add(items);
            }
        }
    }

    /// The ResourceClaimTemplates pods name.
    async fn claim_templates(&mut self, tasks: Vec<Listing>) {
        for t in tasks {
            match joined(t.await) {
                Ok(items) => self.add(items),
                Err(e) => {
                    if self.dra_missed(&e).await {
                        self.state.forget(Lacking::ResourceClaimTemplates);
                        self.gaps.push(Gap {
                            lacking: Some(Lacking::ResourceClaimTemplates),
                            text: format!("{e}; claims that pods create from templates are not checked"),
                        });
                    }
                }
            }
        }
    }
}

/// Lists the autoscaler kind `t` in namespace `ns`, in the background.
fn spawn_autoscalers(conn: &Conn, ns: &str, t: &'static AutoscalerType) -> Listing {
    let (c, ns) = (conn.clone(), ns.to_string());
    tokio::spawn(async move {
        let api_version = t.api_version();
        let url = format!("/apis/{api_version}/namespaces/{ns}/{}", t.plural);
        objects_at(&c, url, &api_version, t.kind, format!("list {} in namespace {ns:?}", t.group_resource)).await
    })
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
        Err(e) => incomplete.push(Gap::always(format!("{e}; whether the namespace exists is not checked"))),
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
            Err(e) => gaps
                .push(Gap { lacking: Some(Lacking::ServiceAccounts), text: format!("{e}; a pod naming a ServiceAccount that does not exist is not refused") }),
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
