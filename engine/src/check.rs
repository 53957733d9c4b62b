//! The whole offline pipeline for `check`: cluster state + documents in order -> a report.
//!
//! Documents are admitted one by one, as `kubectl create -f` sends them: each sees the usage
//! charged by the earlier ones. A workload is admitted as the object itself, then the objects
//! its controllers create (a Deployment's ReplicaSet, then its pods one at a time; a
//! StatefulSet's claims and pods, ...), so the report says how many replicas fit.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Serialize;

use crate::admission::{check_request_detailed, Decision, Detail, LimitedResource, NamedQuota, QuotaReport, Refusal, RefusalReason, Request};
use crate::defaulting::{self, Mutators};
use crate::manifest::Origin;
use crate::objects::{type_info, Body, LimitRangeItem, Meta, Object, Workload};
use crate::quantity::Quantity;
use crate::resources::ResourceList;
use crate::version::{self, Rules, Served, VersionReport};

/// What the cluster holds that admission consults.
#[derive(Debug, Clone, Default)]
pub struct ClusterState {
    /// Quotas per namespace, sorted by name.
    pub quotas: BTreeMap<String, Vec<NamedQuota>>,
    /// LimitRanges per namespace: (name, items).
    pub limit_ranges: BTreeMap<String, Vec<(String, Vec<LimitRangeItem>)>>,
    /// PriorityClasses (globalDefault, value); `None` when the state says nothing about them.
    pub priority_classes: Option<BTreeMap<String, (bool, i32)>>,
    /// StorageClasses (name, is default, creationTimestamp); `None` when unknown.
    pub storage_classes: Option<Vec<(String, bool, Option<String>)>>,
    /// RuntimeClass overheads; `None` when unknown.
    pub runtime_classes: Option<BTreeMap<String, ResourceList>>,
    /// Objects that already exist, by (namespace, group-resource, name): creating one again is
    /// an update.
    pub existing: BTreeMap<(String, String, String), Object>,
    /// Objects created by earlier documents that no later document names again: only their
    /// keys are kept (a workload's replicas skip the names that exist), so memory does not
    /// hold every object of a large input.
    pub seen: BTreeSet<(String, String, String)>,
    /// DeviceClasses (name -> extendedResourceName); `None` when unknown.
    pub device_classes: Option<crate::dra::DeviceClasses>,
    /// Namespaces known to exist, with their labels; `None` when unknown. When known, an object
    /// in another namespace is refused as the server refuses it (`namespaces "x" not found`),
    /// and a claim asking for admin access needs its namespace's label.
    pub namespaces: Option<BTreeMap<String, BTreeMap<String, String>>>,
}

impl ClusterState {
    /// Builds the state from decoded objects; objects without a namespace are placed in
    /// `default_namespace`. Kinds admission does not consult are ignored.
    pub fn from_objects<I: IntoIterator<Item = Object>>(objects: I, default_namespace: &str) -> ClusterState {
        let mut s = ClusterState::default();
        let mut quotas: BTreeMap<String, Vec<NamedQuota>> = BTreeMap::new();
        for o in objects {
            match o.body {
                // Quotas are sorted once at the end: thousands of them load in linear time.
                Body::ResourceQuota(q) => {
                    let ns = o.meta.namespace.clone().unwrap_or_else(|| default_namespace.to_string());
                    quotas.entry(ns).or_default().push(NamedQuota { name: o.meta.name, quota: *q });
                }
                _ => s.add(o, default_namespace),
            }
        }
        for (ns, mut list) in quotas {
            // A later object of the same name replaces an earlier one.
            list.reverse();
            list.sort_by(|a, b| a.name.cmp(&b.name));
            list.dedup_by(|later, earlier| later.name == earlier.name);
            s.quotas.insert(ns, list);
        }
        s
    }

    /// A copy with only what admitting into `ns` consults (no existing objects): enough to
    /// try something out without charging it.
    pub fn scratch_for(&self, ns: &str) -> ClusterState {
        ClusterState {
            quotas: self.quotas.get(ns).map(|q| [(ns.to_string(), q.clone())].into()).unwrap_or_default(),
            limit_ranges: self.limit_ranges.get(ns).map(|l| [(ns.to_string(), l.clone())].into()).unwrap_or_default(),
            priority_classes: self.priority_classes.clone(),
            storage_classes: self.storage_classes.clone(),
            runtime_classes: self.runtime_classes.clone(),
            // Claim templates: a CronJob's pods get their claims from them.
            existing: self
                .existing
                .iter()
                .filter(|(k, o)| k.0 == ns && matches!(o.body, Body::ResourceClaimTemplate(_)))
                .map(|(k, o)| (k.clone(), o.clone()))
                .collect(),
            device_classes: self.device_classes.clone(),
            seen: BTreeSet::new(),
            namespaces: self.namespaces.clone(),
        }
    }

    /// Adds one object (a later object of the same name replaces an earlier one).
    pub fn add(&mut self, o: Object, default_namespace: &str) {
        let ns = o.meta.namespace.clone().unwrap_or_else(|| default_namespace.to_string());
        let name = o.meta.name.clone();
        // A workload, pod or claim of the state (a snapshot) exists: creating it again is an
        // update, as a live check finds out by reading it.
        // Claim templates are looked up by name for the claims pods create; a stored pod is
        // the old object of a resize (which needs a resourceVersion to be charged by delta).
        if matches!(
            o.body,
            Body::Workload(_) | Body::Pod(_) | Body::PersistentVolumeClaim(_) | Body::ResourceClaim(_) | Body::ResourceClaimTemplate(_) | Body::Service(_)
        ) {
            let mut e = o;
            // The server's stored objects always have one: the update is charged by its delta.
            if matches!(e.body, Body::Pod(_) | Body::ResourceClaim(_) | Body::ResourceClaimTemplate(_) | Body::Service(_) | Body::PersistentVolumeClaim(_)) {
                e.meta.resource_version.get_or_insert_with(|| "1".into());
            }
            e.meta.namespace = Some(ns.clone());
            self.existing.insert((ns, e.type_info.group_resource(), name), e);
            return;
        }
        match o.body {
            Body::ResourceQuota(q) => {
                let list = self.quotas.entry(ns).or_default();
                let nq = NamedQuota { name, quota: *q };
                match list.binary_search_by(|x| x.name.cmp(&nq.name)) {
                    Ok(i) => list[i] = nq,
                    Err(i) => list.insert(i, nq),
                }
            }
            Body::LimitRange(items) => {
                let list = self.limit_ranges.entry(ns).or_default();
                list.retain(|x| x.0 != name);
                list.push((name, items));
                list.sort_by(|a, b| a.0.cmp(&b.0));
            }
            Body::PriorityClass { global_default, value } => {
                self.priority_classes.get_or_insert_with(BTreeMap::new).insert(name, (global_default, value));
            }
            Body::StorageClass { is_default } => {
                let list = self.storage_classes.get_or_insert_with(Vec::new);
                list.retain(|x| x.0 != name);
                list.push((name, is_default, o.meta.creation_timestamp.clone()));
            }
            Body::RuntimeClass { overhead } => {
                self.runtime_classes.get_or_insert_with(BTreeMap::new).insert(name, overhead);
            }
            Body::DeviceClass { extended_resource_name } => {
                std::sync::Arc::make_mut(self.device_classes.get_or_insert_with(Default::default)).insert(name, extended_resource_name);
            }
            _ if o.type_info.kind == "Namespace" && o.type_info.group.is_empty() => {
                self.namespaces.get_or_insert_with(BTreeMap::new).insert(name, o.meta.labels);
            }
            _ => {}
        }
    }

    /// Namespaces that have quotas.
    pub fn quota_namespaces(&self) -> Vec<&str> {
        self.quotas.iter().filter(|(_, v)| !v.is_empty()).map(|(k, _)| k.as_str()).collect()
    }
}

/// Options of a check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The namespace of documents that name none.
    pub namespace: String,
    /// `limitedResources` from the API server's admission configuration.
    pub limited: Vec<LimitedResource>,
    /// Schedulable nodes, for DaemonSets (`None`: unknown).
    pub nodes: Option<u32>,
    /// The rules of the Kubernetes release answered for (default: the newest).
    pub rules: Rules,
    /// How much each report explains (default: everything).
    pub detail: Detail,
    /// `-n` was given: an object naming another namespace is refused, as kubectl refuses it.
    pub enforce_namespace: bool,
}

/// The explanation of a workload's pods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodsReport {
    /// The name of the pod the explanation is about (the first refused one, else the last one
    /// admitted).
    pub pod: String,
    pub allowed: bool,
    pub usage: ResourceList,
    pub mutations: Vec<String>,
    pub quotas: Vec<QuotaReport>,
}

/// The result for one document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentReport {
    pub kind: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub source: Origin,
    /// Whether the API server admits the object itself (a Deployment can be admitted while
    /// quota refuses its pods: see `outcome`).
    pub allowed: bool,
    /// What happens to the document as a whole, object and pods.
    pub outcome: Outcome,
    /// The server's refusal text (after `is forbidden: ` for a 403).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The whole error the server would return.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Refusal>,
    /// Pods the workload's controller wants now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Pods that exist, or would be created under quota: `replicasExisting` plus the new
    /// pods that fit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas_admitted: Option<i32>,
    /// For a workload that exists already: its pods that exist now (its status). Only the
    /// pods above them are created, and charged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas_existing: Option<i32>,
    /// A changed pod template's rollout under quota; a stall is a refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout: Option<crate::rollout::RolloutReport>,
    /// The first refusal the controller would meet creating pods (or their claims).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_message: Option<String>,
    /// Pods created whose ResourceClaims quota refuses: they stay Pending.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pods_pending: Option<i32>,
    /// Other refusals the pods could meet instead (the server's quota order is not defined).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pod_message_alternatives: Vec<String>,
    /// What the API server changes before quota sees the object.
    pub mutations: Vec<String>,
    pub usage: ResourceList,
    pub quotas: Vec<QuotaReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pods: Option<PodsReport>,
    pub notes: Vec<String>,
    /// What the user could do about the verdict (filled by [`crate::report::explain`]).
    pub hints: Vec<String>,
}

/// What happens to a document as a whole: the object, the pods its controllers create, and
/// its rollout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// The object is admitted, and so is every pod its controllers create.
    Admitted,
    /// The object itself is refused.
    Refused,
    /// The object is admitted, but quota refuses some of the pods its controllers create.
    PodsRefused,
    /// The pods are created, but quota refuses their ResourceClaims: they stay Pending.
    PodsPending,
    /// The object is admitted, but the rollout of its changed template stalls under quota.
    RolloutStalls,
}

impl DocumentReport {
    /// Whether everything this document asks for would be created.
    pub fn fully_admitted(&self) -> bool {
        self.outcome() == Outcome::Admitted
    }

    /// The outcome, from the verdicts the report holds.
    pub fn outcome(&self) -> Outcome {
        if !self.allowed {
            Outcome::Refused
        } else if self.replicas_admitted.zip(self.replicas).is_some_and(|(a, w)| a < w) {
            Outcome::PodsRefused
        } else if self.pods_pending.unwrap_or(0) > 0 {
            Outcome::PodsPending
        } else if self.rollout.as_ref().is_some_and(|r| r.stalls()) {
            Outcome::RolloutStalls
        } else {
            Outcome::Admitted
        }
    }
}

/// The result of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The Kubernetes release whose rules were applied.
    pub kubernetes: VersionReport,
    pub documents: Vec<DocumentReport>,
    pub notes: Vec<String>,
}

impl Report {
    /// Exit status: 0 when everything fits, 1 when anything would be refused.
    pub fn exit_code(&self) -> i32 {
        if self.documents.iter().all(DocumentReport::fully_admitted) {
            0
        } else {
            1
        }
    }
}

fn mutators<'a>(state: &'a ClusterState, ns: &str) -> Mutators<'a> {
    Mutators {
        limit_ranges: state.limit_ranges.get(ns).map(|v| v.iter().map(|(n, i)| (n.as_str(), i.as_slice())).collect()).unwrap_or_default(),
        priority_classes: state.priority_classes.as_ref(),
        runtime_classes: state.runtime_classes.as_ref(),
        storage_classes: state.storage_classes.as_deref(),
    }
}

/// Applies the mutating steps to an object about to be created. Errors are refusals by the
/// plugin that made them.
fn mutate(obj: &mut Object, state: &ClusterState, ns: &str, rules: &Rules) -> Result<Vec<String>, String> {
    let m = mutators(state, ns);
    match &mut obj.body {
        Body::Pod(p) => {
            let mut dropped = defaulting::drop_disabled_fields(p, rules);
            dropped.extend(defaulting::mutate_pod(p, &m, rules)?);
            Ok(dropped)
        }
        Body::Service(s) if !rules.service_lb_node_port_control => {
            // The gate is off: the server drops the field.
            s.allocate_load_balancer_node_ports = None;
            Ok(vec![])
        }
        Body::PersistentVolumeClaim(p) => {
            defaulting::clear_pvc_status(p);
            Ok(defaulting::apply_default_storage_class(p, &obj.meta.annotations, m.storage_classes))
        }
        _ => Ok(vec![]),
    }
}

/// Mutates and admits one object in namespace `ns`, charging the quotas when admitted.
fn admit(obj: &mut Object, state: &mut ClusterState, ns: &str, opts: &CheckOptions) -> (Decision, Vec<String>) {
    let key = (ns.to_string(), obj.type_info.group_resource(), obj.meta.name.clone());
    let old = state.existing.get(&key).cloned();
    if let (Body::Pod(new), Some(Body::Pod(prev))) = (&mut obj.body, old.as_ref().map(|o| &o.body)) {
        // An update carries the stored status along (what the kubelet reported).
        new.container_statuses = prev.container_statuses.clone();
        new.resize_infeasible = prev.resize_infeasible;
        new.phase = prev.phase.clone();
    }
    let mutations = if old.is_none() {
        match mutate(obj, state, ns, &opts.rules) {
            Ok(m) => m,
            Err(e) => return (Decision::refused(RefusalReason::Admission, e), vec![]),
        }
    } else {
        vec![]
    };
    let invalid = match &old {
        Some(prev) => crate::object_validation::invalid_update(prev, obj, &opts.rules),
        None if opts.rules.dra => {
            let labels = state.namespaces.as_ref().and_then(|n| n.get(ns));
            crate::object_validation::admin_access_refusal(obj, labels)
        }
        None => None,
    };
    if let Some(message) = invalid {
        return (Decision::refused(RefusalReason::Invalid, message), mutations);
    }
    if let Body::Pod(p) = &obj.body {
        if let Err(message) = defaulting::validate_pod_requests(p, &obj.meta.name, &opts.rules) {
            return (Decision::refused(RefusalReason::Invalid, message), mutations);
        }
        if let Some(Body::Pod(prev)) = old.as_ref().map(|o| &o.body) {
            if let Err(message) = defaulting::validate_pod_update(prev, p, &obj.meta.name, &opts.rules) {
                return (Decision::refused(RefusalReason::Invalid, message), mutations);
            }
        }
    }
    let quotas = state.quotas.entry(ns.to_string()).or_default();
    let request = Request { classes: state.device_classes.as_ref(), detail: opts.detail, resize: false };
    let decision = check_request_detailed(quotas, obj, old.as_ref(), &opts.limited, &opts.rules, &request);
    (decision, mutations)
}

/// A child object a controller creates.
fn child(parent: &Object, api_version: &str, kind: &str, name: String, body: Body, meta: &Meta) -> Object {
    Object {
        origin: parent.origin.clone(),
        type_info: type_info(api_version, kind),
        meta: Meta { name, generate_name: None, namespace: parent.meta.namespace.clone(), ..meta.clone() },
        body,
    }
}

/// How a workload's controller creates its pods.
struct PodsOutcome {
    wanted: Option<i32>,
    admitted: i32,
    first_refusal: Option<Refusal>,
    explained: Option<PodsReport>,
    notes: Vec<String>,
    /// Numbers (as in their names) of created pods whose claims quota refuses: consecutive,
    /// since once one pod's claims are refused every later pod's are too.
    claims_refused: PodNumbers,
    claim_refusal: Option<Refusal>,
}

/// DRA: the claims the resourceclaim controller creates for a pod from its templates, admitted
/// after the pod. Returns the first refusal and notes (templates that are not there).
fn admit_pod_claims(pod: &Object, state: &mut ClusterState, ns: &str, opts: &CheckOptions) -> (Option<Refusal>, Vec<String>) {
    let lookup = |t: &str| match state.existing.get(&(ns.to_string(), "resourceclaimtemplates.resource.k8s.io".to_string(), t.to_string())).map(|o| &o.body) {
        Some(Body::ResourceClaimTemplate(c)) => Some(c.clone()),
        _ => None,
    };
    let (claims, unknown) = crate::dra::pod_claims(pod, lookup);
    let notes = unknown
        .iter()
        .map(|t| format!("ResourceClaimTemplate {t:?} is neither in the cluster nor earlier in the manifests: the pod's claim cannot be created and the pod stays Pending"))
        .collect();
    for mut c in claims {
        let (d, _) = admit(&mut c, state, ns, opts);
        if let Some(r) = d.refusal {
            return (Some(r), notes);
        }
    }
    (None, notes)
}

/// A run of consecutive pod numbers, held as its ends (a replica count can be 2^31).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct PodNumbers(Option<(i32, i32)>);

impl PodNumbers {
    fn push(&mut self, n: i32) {
        self.push_range(n, n);
    }

    fn push_range(&mut self, first: i32, last: i32) {
        self.0 = Some(match self.0 {
            Some((a, _)) => (a, last),
            None => (first, last),
        });
    }

    fn len(&self) -> i32 {
        self.0.map_or(0, |(a, b)| b - a + 1)
    }

    /// "pods 3–4" / "pod 3".
    fn describe(&self) -> String {
        match self.0 {
            Some((a, b)) if a != b => format!("pods {a}\u{2013}{b}"),
            Some((a, _)) => format!("pod {a}"),
            None => String::new(),
        }
    }
}

/// Replays the controllers: the intermediate object (ReplicaSet, Job), then per replica the
/// StatefulSet claims and the pod, stopping at the first refusal (all replicas are alike, so
/// once one is refused the rest are too).
/// `existing` is the pods of a workload that exists already (an update): only the ones above
/// them are created, and the intermediate object is not created again.
///
/// `each_replica` replays every replica in full (the slow, obviously right way, kept as the
/// oracle the tests compare the fast path with).
fn admit_workload_pods(
    obj: &Object,
    w: &Workload,
    existing: Option<i32>,
    state: &mut ClusterState,
    ns: &str,
    opts: &CheckOptions,
    each_replica: bool,
) -> PodsOutcome {
    let kind = obj.type_info.kind.as_str();
    let running = existing.unwrap_or(0);
    let mut out = PodsOutcome {
        wanted: w.replicas,
        admitted: running,
        first_refusal: None,
        explained: None,
        notes: vec![],
        claims_refused: PodNumbers::default(),
        claim_refusal: None,
    };
    let wanted = match (kind, w.replicas, opts.nodes) {
        ("DaemonSet", _, Some(n)) => {
            // The plugin refuses counts above i32::MAX; saturate rather than wrap if one slips by.
            let n = i32::try_from(n).unwrap_or(i32::MAX);
            out.wanted = Some(n);
            n
        }
        ("DaemonSet", _, None) => {
            out.notes.push("a DaemonSet runs one pod per eligible node and the node count is unknown: pass --nodes N to check its pods".into());
            return out;
        }
        (_, Some(r), _) => r,
        (_, None, _) => 1,
    };
    out.admitted = running.min(wanted);
    // The intermediate object the controller creates first.
    let intermediate = match kind {
        "Deployment" => Some(("apps/v1", "ReplicaSet", format!("{}-<hash>", obj.meta.name))),
        "CronJob" => Some(("batch/v1", "Job", format!("{}-<schedule>", obj.meta.name))),
        _ => None,
    };
    if let Some((av, k, name)) = intermediate.filter(|_| existing.is_none()) {
        let mut inter = child(obj, av, k, name, Body::Other, &w.template_meta);
        let (d, _) = admit(&mut inter, state, ns, opts);
        if let Some(r) = d.refusal {
            out.notes.push(format!("the {k} {} would be refused, so no pod is created", inter.meta.name));
            out.first_refusal = Some(r);
            return out;
        }
    }
    let pod_prefix = match kind {
        "StatefulSet" => format!("{}-", obj.meta.name),
        "Deployment" => format!("{}-<hash>-", obj.meta.name),
        _ => format!("{}-", obj.meta.name),
    };
    // Replicas whose pod or claim name exists already are updates, not creates: never skipped over.
    let blocked = existing_replicas(state, ns, obj, w, kind, &pod_prefix);
    let mut i = running;
    while i < wanted {
        // Every replica asks for the same thing, so once one is admitted, the quotas' used
        // grows by the same amount per replica: how many more fit is a division per quota,
        // and only the replica that would be refused (or the last one) is replayed in full.
        let before = (!each_replica && wanted - i > 2 && !blocked.contains(&i64::from(i))).then(|| used_in(state, ns));
        for (claim, pvc) in &w.volume_claim_templates {
            let mut c =
                child(obj, "v1", "PersistentVolumeClaim", format!("{claim}-{}-{i}", obj.meta.name), Body::PersistentVolumeClaim(pvc.clone()), &Meta::default());
            let (d, _) = admit(&mut c, state, ns, opts);
            if let Some(r) = d.refusal {
                out.first_refusal = Some(r);
                out.notes.push(format!("claim {} for replica {i} would be refused, so that pod is not created", c.meta.name));
                return out;
            }
        }
        let name = if kind == "StatefulSet" { format!("{pod_prefix}{i}") } else { format!("{pod_prefix}{}", i + 1) };
        let mut pod = child(obj, "v1", "Pod", name, Body::Pod(w.template.clone()), &w.template_meta);
        let (d, mutations) = admit(&mut pod, state, ns, opts);
        let allowed = d.allowed;
        let report = PodsReport { pod: pod.meta.name.clone(), allowed, usage: d.usage, mutations, quotas: d.quotas };
        out.explained = Some(report);
        if let Some(r) = d.refusal {
            out.first_refusal = Some(r);
            return out;
        }
        // DRA: the resourceclaim controller creates the pod's claims once the pod exists. A
        // refused claim leaves its pod Pending; pods do not charge claim quotas, so the claims
        // of every later pod are refused alike.
        let number = if kind == "StatefulSet" { i } else { i + 1 };
        let mut first_claim_refusal = false;
        if !w.template.resource_claim_templates.is_empty() {
            if out.claim_refusal.is_some() {
                out.claims_refused.push(number);
            } else {
                let (refusal, notes) = admit_pod_claims(&pod, state, ns, opts);
                if out.notes.is_empty() {
                    out.notes.extend(notes);
                }
                if let Some(r) = refusal {
                    out.claims_refused.push(number);
                    out.claim_refusal = Some(r);
                    first_claim_refusal = true;
                }
            }
        }
        out.admitted += 1;
        i += 1;
        // The replica whose claims were first refused may have charged some of its claims:
        // later replicas charge only their pod, so the next one is replayed in full first.
        if let Some(before) = before.filter(|_| !first_claim_refusal) {
            // Skip replicas i .. i+jump-1; replica i+jump is replayed in full. `before` was
            // taken before this replica's claims templates, pod and DRA claims, so one unit is
            // all of them (the pod alone once claims are refused: every later replica alike).
            let mut cap = i64::from(wanted - i) - 1;
            if let Some(next) = blocked.range(i64::from(i)..).next() {
                cap = cap.min(next - i64::from(i));
            }
            let jump = identical_units_that_fit(state, ns, &before, cap);
            if jump > 0 {
                charge_units(state, ns, &before, jump);
                let jump = i32::try_from(jump).expect("jump is below the replica count, an i32");
                if out.claim_refusal.is_some() {
                    let first = if kind == "StatefulSet" { i } else { i + 1 };
                    out.claims_refused.push_range(first, first + jump - 1);
                }
                out.admitted += jump;
                i += jump;
            }
        }
    }
    out
}

/// The used lists of the namespace's quotas, in quota order.
fn used_in(state: &ClusterState, ns: &str) -> Vec<ResourceList> {
    state.quotas.get(ns).map(|qs| qs.iter().map(|q| q.quota.status_used.clone()).collect()).unwrap_or_default()
}

/// Per quota and resource, what one replica (its claims and its pod) charged: `after - before`.
/// `None` when the charge is not a plain positive growth the next replicas would repeat
/// exactly (a quota appeared, a used value was zero afterwards so the next sum would take the
/// other side's format, a resource has no hard limit).
fn unit_charges(state: &ClusterState, ns: &str, before: &[ResourceList]) -> Option<Vec<Vec<(String, Quantity)>>> {
    let quotas = state.quotas.get(ns).map(Vec::as_slice).unwrap_or_default();
    if quotas.len() != before.len() {
        return None;
    }
    let mut out = Vec::with_capacity(quotas.len());
    for (q, b) in quotas.iter().zip(before) {
        let mut charges = Vec::new();
        for (r, after) in &q.quota.status_used {
            let unit = match b.get(r) {
                Some(prev) => after.sub(prev),
                None => return None,
            };
            match unit.sign() {
                0 => continue,
                s if s < 0 => return None,
                _ => {}
            }
            if after.is_zero() || !q.quota.status_hard.contains_key(r) {
                return None;
            }
            charges.push((r.clone(), unit));
        }
        if b.keys().any(|r| !q.quota.status_used.contains_key(r)) {
            return None;
        }
        out.push(charges);
    }
    Some(out)
}

/// The largest `k <= cap` with `k * unit <= avail` (`unit > 0`), exactly, in O(log k) sums.
fn max_multiple(unit: &Quantity, avail: &Quantity, cap: i64) -> i64 {
    if cap <= 0 || avail.sign() < 0 || unit > avail {
        return 0;
    }
    // powers[b] = unit * 2^b, while it stays within avail and 2^b within cap.
    let mut powers = vec![unit.clone()];
    while powers.len() < 62 && (1i64 << powers.len()) <= cap {
        match powers[powers.len() - 1].checked_add(&powers[powers.len() - 1]) {
            Some(next) if &next <= avail => powers.push(next),
            _ => break,
        }
    }
    let (mut k, mut acc) = (0i64, Quantity::zero());
    for b in (0..powers.len()).rev() {
        if k + (1i64 << b) > cap {
            continue;
        }
        if let Some(t) = acc.checked_add(&powers[b]) {
            if &t <= avail {
                acc = t;
                k += 1i64 << b;
            }
        }
    }
    k
}

/// `unit * n`, exactly (`n >= 0`).
fn times(unit: &Quantity, n: i64) -> Quantity {
    let (mut acc, mut power, mut n) = (Quantity::zero(), unit.clone(), n);
    while n > 0 {
        if n & 1 == 1 {
            acc = acc.add(&power);
        }
        n >>= 1;
        if n > 0 {
            power = power.add(&power);
        }
    }
    acc
}

/// How many more replicas, each charging what the last one did, every quota still admits
/// (at most `cap`): per quota and resource the largest k with `used + k * unit <= hard`.
fn identical_units_that_fit(state: &ClusterState, ns: &str, before: &[ResourceList], cap: i64) -> i64 {
    if cap <= 0 {
        return 0;
    }
    let Some(charges) = unit_charges(state, ns, before) else { return 0 };
    let quotas = state.quotas.get(ns).map(Vec::as_slice).unwrap_or_default();
    let mut k = cap;
    for (q, charges) in quotas.iter().zip(&charges) {
        for (r, unit) in charges {
            let avail = q.quota.status_hard[r].sub(&q.quota.status_used[r]);
            k = k.min(max_multiple(unit, &avail, k));
            if k == 0 {
                return 0;
            }
        }
    }
    k
}

/// Charges `n` more replicas, each charging what the last one did.
fn charge_units(state: &mut ClusterState, ns: &str, before: &[ResourceList], n: i64) {
    let Some(charges) = unit_charges(state, ns, before) else { return };
    let Some(quotas) = state.quotas.get_mut(ns) else { return };
    for (q, charges) in quotas.iter_mut().zip(charges) {
        for (r, unit) in charges {
            let used = q.quota.status_used.get_mut(&r).expect("charged resources are in used");
            *used = used.add(&times(&unit, n));
        }
    }
}

/// Replica indexes whose pod or claim already exists (by name) in `ns`.
fn existing_replicas(state: &ClusterState, ns: &str, obj: &Object, w: &Workload, kind: &str, pod_prefix: &str) -> BTreeSet<i64> {
    let mut out = BTreeSet::new();
    let mut scan = |resource: &str, prefix: &str, offset: i64| {
        let start = (ns.to_string(), resource.to_string(), prefix.to_string());
        let here = |(n, r, name): &&(String, String, String)| n == ns && r == resource && name.starts_with(prefix);
        let existing = state.existing.range(start.clone()..).map(|(k, _)| k).take_while(here);
        for (_, _, name) in existing.chain(state.seen.range(start..).take_while(here)) {
            if let Ok(v) = name[prefix.len()..].parse::<i64>() {
                out.insert(v - offset);
            }
        }
    };
    scan("pods", pod_prefix, if kind == "StatefulSet" { 0 } else { 1 });
    for (claim, _) in &w.volume_claim_templates {
        scan("persistentvolumeclaims", &format!("{claim}-{}-", obj.meta.name), 0);
    }
    out
}

/// What is left of a check once every document has been handed out: the counts behind the
/// exit status and the notes about the run as a whole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Documents checked.
    pub documents: usize,
    /// Documents not fully admitted (refused, or short of replicas).
    pub refused: usize,
    pub notes: Vec<String>,
}

impl Summary {
    /// Exit status: 0 when everything fits, 1 when anything would be refused.
    pub fn exit_code(&self) -> i32 {
        if self.refused == 0 {
            0
        } else {
            1
        }
    }
}

/// Checks documents one at a time, in order, charging the state as they are admitted: each
/// document's report can be rendered and dropped before the next one is decided, so memory
/// does not grow with the number of documents.
pub struct Checker<'a> {
    state: &'a mut ClusterState,
    opts: &'a CheckOptions,
    summary: Summary,
    order_matters: bool,
    /// Replay every replica of a workload one by one (the tests' oracle).
    each_replica: bool,
    /// Keys (namespace, group-resource, name) that more than one document names, when the
    /// documents are known in advance: an admitted object whose key is not among them is
    /// kept as its key only (see [`ClusterState::seen`]).
    repeated: Option<BTreeSet<(String, String, String)>>,
    /// Name prefixes of the pods and claims the input's workloads create, per group-resource
    /// and namespace: an existing object of such a name is updated, not created, by its
    /// replica.
    generated: HashMap<&'static str, HashMap<String, HashSet<String>>>,
}

impl<'a> Checker<'a> {
    pub fn new(state: &'a mut ClusterState, opts: &'a CheckOptions) -> Checker<'a> {
        Checker { state, opts, summary: Summary::default(), order_matters: false, each_replica: false, repeated: None, generated: HashMap::new() }
    }

    /// Tells the checker every document it will be given (in any order), so that objects no
    /// later document names again are kept as their keys only.
    pub fn expect(&mut self, objects: &[Object]) {
        let mut once = BTreeSet::new();
        let mut repeated = BTreeSet::new();
        for o in objects {
            let key = self.key_of(o);
            if let Body::Workload(w) = &o.body {
                let mut prefix = |resource: &'static str, p: String| self.generated.entry(resource).or_default().entry(key.0.clone()).or_default().insert(p);
                prefix("pods", format!("{}-", o.meta.name));
                for (claim, _) in &w.volume_claim_templates {
                    prefix("persistentvolumeclaims", format!("{claim}-{}-", o.meta.name));
                }
            }
            if let Some(k) = once.replace(key) {
                repeated.insert(k);
            }
        }
        self.repeated = Some(repeated);
    }

    /// Whether a later document, or a replica of a workload, may name this admitted object
    /// again (always, when the documents were not announced with [`Checker::expect`]).
    fn named_again(&self, key: &(String, String, String), body: &Body) -> bool {
        let Some(repeated) = &self.repeated else { return true };
        // Claim templates are looked up by the pods that name them.
        matches!(body, Body::ResourceClaimTemplate(_))
            || repeated.contains(key)
            || self.generated.get(key.1.as_str()).and_then(|by_ns| by_ns.get(&key.0)).is_some_and(|prefixes| {
                // Every prefix ends in `-`: look up the name's prefixes up to each of its dashes.
                key.2.match_indices('-').any(|(i, _)| prefixes.contains(&key.2[..=i]))
            })
    }

    /// The namespace an object is created in: its own, or the check's.
    fn namespace_of(&self, o: &Object) -> String {
        o.meta.namespace.clone().unwrap_or_else(|| self.opts.namespace.clone())
    }

    /// The key (namespace, group-resource, name) an object is stored under.
    fn key_of(&self, o: &Object) -> (String, String, String) {
        (self.namespace_of(o), o.type_info.group_resource(), o.meta.name.clone())
    }

    /// The state as charged by the documents checked so far.
    pub fn state(&self) -> &ClusterState {
        self.state
    }

    /// What stops an object before admission: kubectl refuses a namespaced object that names
    /// another namespace than an explicit `-n`; the server refuses one larger than it reads, then
    /// one whose namespace does not exist (when the state knows which exist).
    fn early_refusal(&self, obj: &Object, ns: &str) -> Option<Decision> {
        let too_large = || {
            obj.meta
                .too_large
                .then(|| Decision::refused(RefusalReason::TooLarge, format!("Request entity too large: limit is {}", crate::objects::MAX_REQUEST_BODY_BYTES)))
        };
        if !obj.type_info.namespaced {
            return too_large();
        }
        if let Some(own) = obj.meta.namespace.as_deref().filter(|own| self.opts.enforce_namespace && *own != self.opts.namespace) {
            return Some(Decision::refused(
                RefusalReason::NamespaceMismatch,
                format!(
                    "the namespace from the provided object {own:?} does not match the namespace {:?}. You must pass '--namespace={own}' to perform this operation.",
                    self.opts.namespace
                ),
            ));
        }
        // The server reads the body (and stops at its limit) before it looks for the namespace.
        if let Some(refused) = too_large() {
            return Some(refused);
        }
        let known = self.state.namespaces.as_ref()?;
        (!known.contains_key(ns)).then(|| Decision::refused(RefusalReason::NamespaceNotFound, format!("namespaces {ns:?} not found")))
    }

    /// Decides one document (the next one in order).
    pub fn check_one(&mut self, mut obj: Object) -> DocumentReport {
        let ns = self.namespace_of(&obj);
        let mut notes = Vec::new();
        let served = if obj.type_info.unserved {
            // The cluster's discovery said so (a live check): its note is already in the run's notes.
            Served::No(format!("{} {} is not served by this cluster", obj.type_info.api_version, obj.type_info.kind))
        } else {
            version::served(&self.opts.rules, &obj.type_info.api_version, &obj.type_info.kind)
        };
        if obj.type_info.guessed {
            notes.push(format!(
                "{} is not a kind this tool knows: counted as count/{} (the resource name is guessed from the kind; a live check resolves it through discovery)",
                obj.type_info.kind,
                obj.type_info.group_resource()
            ));
        }
        // Field validation comes before admission.
        let invalid = match &obj.body {
            Body::ResourceQuota(q) => {
                // The server discards a new quota's status before validating it.
                let mut raw = q.raw.clone();
                raw.status = None;
                let errors = crate::validation::validate_resource_quota(&raw);
                (!errors.is_empty()).then(|| crate::validation::render_server_message(&obj.meta.name, &errors)).or_else(|| {
                    version::unsupported_scope(&self.opts.rules, &q.scopes, q.scope_selector.as_deref())
                        .map(|e| format!("ResourceQuota {:?} is invalid: {e}", obj.meta.name))
                })
            }
            // Names, namespaces, labels and negative pod counts, as the server checks them.
            _ => crate::object_validation::invalid_message(&obj),
        };
        let early_refusal = self.early_refusal(&obj, &ns);
        let (decision, mutations) = match (&served, early_refusal, invalid) {
            // kubectl finds no resource for the kind and sends nothing.
            (Served::No(note), _, _) => {
                notes.push(note.clone());
                (Decision::refused(RefusalReason::NotServed, version::no_matches_message(&obj.type_info.api_version, &obj.type_info.kind)), vec![])
            }
            (_, Some(refused), _) => (refused, vec![]),
            (_, None, Some(message)) => (Decision::refused(RefusalReason::Invalid, message), vec![]),
            (_, None, None) => admit(&mut obj, self.state, &ns, self.opts),
        };
        if let Served::Deprecated(note) = &served {
            notes.push(note.clone());
        }
        if let Some(s) = &decision.skipped {
            notes.push(format!("not checked against quota: {s}"));
        }
        let mut report = DocumentReport {
            kind: obj.type_info.kind.clone(),
            name: obj.meta.name.clone(),
            namespace: obj.type_info.namespaced.then(|| ns.clone()),
            source: obj.origin.clone(),
            allowed: decision.allowed,
            message: decision.refusal.as_ref().map(|r| r.message.clone()),
            server_error: decision.refusal.as_ref().map(|r| r.server_error(&obj)),
            refusal: decision.refusal,
            outcome: Outcome::Admitted,
            replicas: None,
            replicas_admitted: None,
            replicas_existing: None,
            rollout: None,
            pod_message: None,
            pods_pending: None,
            pod_message_alternatives: vec![],
            mutations,
            usage: decision.usage,
            quotas: decision.quotas,
            pods: None,
            notes,
            hints: vec![],
        };
        let key = self.key_of(&obj);
        let existing = self.state.existing.get(&key).cloned();
        let was_existing = existing.is_some();
        if was_existing {
            report.notes.push("an object of this name already exists: this is an update".into());
        }
        // The pods of an existing workload that exist are in the quotas' usage already: the
        // controller creates only the ones above them (a Deployment blocked by quota has fewer
        // pods than replicas, and its controller keeps trying to create the rest).
        // A Job's pods that finished are not created again.
        let mut succeeded = 0;
        if let Some(Body::Workload(old)) = existing.as_ref().map(|e| &e.body) {
            let running = match old.current {
                Some(n) => n,
                None => {
                    // A DaemonSet runs a pod per node.
                    let nodes = self.opts.nodes.map(|n| i32::try_from(n).unwrap_or(i32::MAX));
                    let assumed = if obj.type_info.kind == "DaemonSet" { nodes.unwrap_or(0) } else { old.replicas.unwrap_or(1).max(0) };
                    report.notes.push(format!(
                        "the existing {} carries no status: its {assumed} replicas are taken to exist (a snapshot or a live check reads how many do)",
                        obj.type_info.kind
                    ));
                    assumed
                }
            };
            succeeded = old.succeeded;
            report.replicas_existing = Some(running);
            if let Body::Workload(new) = &obj.body {
                if old.template != new.template || old.images != new.images {
                    let (notes, rollout) = rollout_of(&obj, old, new, running, self.state, &ns, self.opts);
                    report.notes.extend(notes);
                    report.rollout = rollout;
                }
            }
        }
        if report.allowed {
            if let Body::Workload(w) = &obj.body {
                let mut w = w.clone();
                if succeeded > 0 {
                    // A Job runs min(parallelism, completions - succeeded) pods at once.
                    if let (Some(r), Some(c)) = (w.replicas, w.counts.iter().find(|(p, _)| p.ends_with(".completions")).map(|(_, c)| *c)) {
                        let left = i32::try_from((c - i64::from(succeeded)).max(0)).unwrap_or(i32::MAX);
                        w.replicas = Some(r.min(left));
                    }
                }
                let cron = obj.type_info.kind == "CronJob";
                // A CronJob's pods come later, when its schedule fires: evaluate one run
                // without charging it to the documents that follow.
                let pods = if cron {
                    let mut scratch = self.state.scratch_for(&ns);
                    let o = admit_workload_pods(&obj, &w, None, &mut scratch, &ns, self.opts, self.each_replica);
                    report
                        .notes
                        .push("a CronJob creates its Job and pods when the schedule fires: this is what one run would need against the current usage".into());
                    o
                } else {
                    admit_workload_pods(&obj, &w, report.replicas_existing, self.state, &ns, self.opts, self.each_replica)
                };
                report.replicas = pods.wanted;
                report.replicas_admitted = pods.wanted.map(|_| pods.admitted);
                report.pod_message_alternatives = pods.first_refusal.as_ref().map(|r| r.alternatives.clone()).unwrap_or_default();
                report.pod_message = pods.first_refusal.map(|r| r.message);
                report.pods = pods.explained;
                report.notes.extend(pods.notes);
                if let Some(r) = pods.claim_refusal {
                    let pending = pods.claims_refused.len();
                    report.notes.push(format!(
                        "{} of {} pods admitted; the claims of {} would be refused: {}; those pods stay Pending",
                        pods.admitted,
                        pods.wanted.unwrap_or(pods.admitted),
                        pods.claims_refused.describe(),
                        r.message
                    ));
                    report.pods_pending = Some(pending);
                    if report.pod_message.is_none() {
                        report.pod_message = Some(r.message);
                    }
                }
            }
            if let Body::Pod(p) = &obj.body {
                if !was_existing && !p.resource_claim_templates.is_empty() {
                    let (refusal, claim_notes) = admit_pod_claims(&obj, self.state, &ns, self.opts);
                    report.notes.extend(claim_notes);
                    if let Some(r) = refusal {
                        report.notes.push(format!("the pod is created, but its ResourceClaim would be refused: {}; the pod stays Pending", r.message));
                        report.pods_pending = Some(1);
                        report.pod_message = Some(r.message);
                    }
                }
            }
            if let (Body::ResourceQuota(q), true) = (&obj.body, self.opts.rules.quota_request_limit_warning) {
                report.notes.extend(defaulting::quota_request_limit_warnings(&q.spec_hard));
            }
            if was_existing {
                // Later documents update what this one left: the stored object becomes this
                // one (a workload's pods, what the replay admitted).
                if let Some(prev) = self.state.existing.get(&key) {
                    let mut stored = obj.clone();
                    stored.meta.resource_version = prev.meta.resource_version.clone();
                    stored.meta.namespace = Some(ns.clone());
                    if let Body::Workload(w) = &mut stored.body {
                        w.current = report.replicas_admitted.or(w.current);
                    }
                    self.state.existing.insert(key.clone(), stored);
                }
            } else {
                if let Body::ResourceQuota(q) = &mut obj.body {
                    // A new quota has no status until the quota controller syncs it.
                    q.status_hard.clear();
                    q.status_used.clear();
                    q.has_status = false;
                    report.notes.push("a new quota is enforced only once the quota controller has synced it (status.hard set), usually within seconds".into());
                }
                let mut stored = obj;
                stored.meta.resource_version = Some("1".into());
                stored.meta.namespace = Some(ns.clone());
                // Only the kinds admission consults go into the state's lists (no copy of the rest).
                if matches!(
                    stored.body,
                    Body::ResourceQuota(_) | Body::LimitRange(_) | Body::PriorityClass { .. } | Body::StorageClass { .. } | Body::RuntimeClass { .. }
                ) || (stored.type_info.kind == "Namespace" && self.state.namespaces.is_some())
                {
                    self.state.add(stored.clone(), &ns);
                }
                if self.named_again(&key, &stored.body) {
                    self.state.existing.insert(key, stored);
                } else {
                    self.state.seen.insert(key);
                }
            }
        }
        report.outcome = report.outcome();
        self.summary.documents += 1;
        if !report.fully_admitted() {
            self.summary.refused += 1;
        }
        if report.refusal.as_ref().is_some_and(|r| !r.alternatives.is_empty()) || !report.pod_message_alternatives.is_empty() {
            self.order_matters = true;
        }
        report
    }

    /// The counts and the notes about the whole run.
    pub fn finish(mut self) -> Summary {
        if self.order_matters {
            self.summary.notes.push("quotas are checked in name order; when several would refuse, the API server may name another one first".into());
        }
        self.summary
    }
}

/// Checks documents in order, handing each report to `each` (with the state as charged so
/// far) as soon as it is decided; returns the summary.
pub fn check_each<F>(state: &mut ClusterState, objects: Vec<Object>, opts: &CheckOptions, mut each: F) -> Summary
where
    F: FnMut(DocumentReport, &ClusterState),
{
    let mut checker = Checker::new(state, opts);
    checker.expect(&objects);
    for obj in objects {
        let report = checker.check_one(obj);
        each(report, checker.state());
    }
    checker.finish()
}

/// Checks documents in order against the state and keeps every report (see [`check_each`]
/// to handle them one at a time). The state is charged as documents are admitted (pass a
/// clone to keep the original).
pub fn check(state: &mut ClusterState, objects: Vec<Object>, opts: &CheckOptions) -> Report {
    let mut documents = Vec::new();
    let summary = check_each(state, objects, opts, |d, _| documents.push(d));
    Report { kubernetes: VersionReport::new(&opts.rules, "default", None), documents, notes: summary.notes }
}

/// A changed pod template of an existing workload whose `old_running` pods exist: its
/// rollout, simulated step by step in [`crate::rollout`] with each template's pod charged as
/// admission would charge it. The notes in words, and the report (`None` when the rollout
/// cannot be simulated).
fn rollout_of(
    obj: &Object,
    old: &Workload,
    new: &Workload,
    old_running: i32,
    state: &ClusterState,
    ns: &str,
    opts: &CheckOptions,
) -> (Vec<String>, Option<crate::rollout::RolloutReport>) {
    let kind = obj.type_info.kind.as_str();
    let replicas = match (kind, opts.nodes) {
        ("DaemonSet", Some(n)) => n as i32,
        ("DaemonSet", None) => {
            return (
                vec!["the pod template changed: the DaemonSet replaces its pod on every node; pass --nodes N to simulate the rollout under quota".into()],
                None,
            )
        }
        _ => new.replicas.unwrap_or(1).max(0),
    };
    // What one pod of a template is charged, per quota: admitted against quotas opened wide.
    let charge = |w: &Workload| -> Result<BTreeMap<String, ResourceList>, String> {
        let mut scratch = state.scratch_for(ns);
        for q in scratch.quotas.values_mut().flatten() {
            q.quota.status_hard.values_mut().for_each(|v| *v = crate::quantity::Quantity::parse("1E").expect("valid"));
        }
        let before = scratch.quotas.get(ns).cloned().unwrap_or_default();
        let mut pod = child(obj, "v1", "Pod", format!("{}-rollout", obj.meta.name), Body::Pod(w.template.clone()), &w.template_meta);
        let (d, _) = admit(&mut pod, &mut scratch, ns, opts);
        if let Some(r) = d.refusal {
            return Err(r.message);
        }
        let after = scratch.quotas.get(ns).cloned().unwrap_or_default();
        Ok(after
            .iter()
            .zip(&before)
            .map(|(a, b)| {
                (
                    a.name.clone(),
                    a.quota.status_used.iter().map(|(k, v)| (k.clone(), v.sub(&b.quota.status_used.get(k).cloned().unwrap_or_default()))).collect(),
                )
            })
            .collect())
    };
    let (old_pod, new_pod) = match (charge(old), charge(new)) {
        (Ok(o), Ok(n)) => (o, n),
        (_, Err(m)) | (Err(m), _) => return (vec![format!("the pod template changed: the rollout's new pods would be refused: {m}")], None),
    };
    let counters: Vec<crate::rollout::Counter> = state
        .quotas
        .get(ns)
        .into_iter()
        .flatten()
        .filter(|q| q.quota.has_status)
        .map(|q| crate::rollout::Counter {
            name: q.name.clone(),
            hard: q.quota.status_hard.clone(),
            used: q.quota.status_used.clone(),
            old_pod: old_pod.get(&q.name).cloned().unwrap_or_default(),
            new_pod: new_pod.get(&q.name).cloned().unwrap_or_default(),
        })
        .collect();
    let counters_for_peak = counters.clone();
    let outcome = crate::rollout::simulate(new.update_strategy, old_running, replicas, counters.clone());
    let no_surge = match new.update_strategy {
        crate::objects::UpdateStrategy::RollingUpdate { max_unavailable, .. } if matches!(outcome, crate::rollout::Outcome::Stalls { .. }) => {
            let s = crate::objects::UpdateStrategy::RollingUpdate { max_surge: crate::objects::IntOrPercent::Int(0), max_unavailable };
            Some(crate::rollout::simulate(s, old_running, replicas, counters))
        }
        _ => None,
    };
    let mut report = crate::rollout::RolloutReport::new(new.update_strategy, old_running, replicas, &outcome);
    // The peak with room for everything: what a quota must hold for the rollout to complete.
    let open: Vec<crate::rollout::Counter> = counters_for_peak
        .into_iter()
        .map(|mut c| {
            c.hard.values_mut().for_each(|v| *v = crate::quantity::Quantity::parse("1E").expect("valid"));
            c
        })
        .collect();
    report.peak = crate::rollout::peak_usage(new.update_strategy, old_running, replicas, open);
    (crate::rollout::describe(kind, new.update_strategy, replicas, &outcome, no_surge.as_ref()), Some(report))
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use crate::admission::QuotaVerdict;
    use crate::manifest::parse_str;
    use crate::objects::decode;

    fn objects_of(file: &str, text: &str) -> Vec<Object> {
        parse_str(file, text).unwrap_or_else(|e| panic!("{e}\n{text}")).iter().map(|d| decode(d).unwrap_or_else(|e| panic!("{e}\n{text}"))).collect()
    }

    /// A tiny deterministic generator (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
        }
        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[self.below(xs.len() as u64) as usize]
        }
    }

    /// A random namespace: 0-4 quotas over pod and claim resources, with scopes, odd units
    /// and used values, sometimes a LimitRange, sometimes an existing pod whose name a
    /// workload's replica will reuse.
    fn random_case(rng: &mut Rng) -> (String, String, Option<u32>) {
        let mut state = String::new();
        let resources = [
            ("pods", &["3", "7", "20", "100"][..]),
            ("count/pods", &["5", "40"][..]),
            ("requests.cpu", &["1", "2500m", "10", "333m"][..]),
            ("limits.cpu", &["2", "7"][..]),
            ("requests.memory", &["1Gi", "3000Mi", "1G", "2.5Gi"][..]),
            ("limits.memory", &["4Gi", "10G"][..]),
            ("persistentvolumeclaims", &["4", "30"][..]),
            ("requests.storage", &["10Gi", "55Gi", "1Ti"][..]),
            ("count/persistentvolumeclaims", &["6"][..]),
            ("requests.ephemeral-storage", &["5Gi"][..]),
        ];
        for qi in 0..rng.below(5) {
            let mut hard = Vec::new();
            let mut used = Vec::new();
            for (r, values) in resources {
                if rng.below(3) == 0 {
                    hard.push(format!("{r}: '{}'", rng.pick(values)));
                    if rng.below(8) != 0 {
                        used.push(format!("{r}: '{}'", rng.pick(&["0", "1", "100m", "512Mi", "2"])));
                    }
                }
            }
            let spec_extra = match rng.below(6) {
                0 => "  scopes: [NotBestEffort]\n",
                1 => "  scopes: [BestEffort]\n",
                2 => "  scopes: [NotTerminating]\n",
                _ => "",
            };
            let _ = write!(
                state,
                "---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: q{qi}, namespace: ns}}\nspec:\n  hard: {{{h}}}\n{spec_extra}status:\n  hard: {{{h}}}\n  used: {{{u}}}\n",
                h = hard.join(", "),
                u = used.join(", ")
            );
        }
        if rng.below(3) == 0 {
            state.push_str("---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: lr, namespace: ns}\nspec: {limits: [{type: Container, default: {cpu: 500m, memory: 256Mi}, defaultRequest: {cpu: 100m, memory: 128Mi}}]}\n");
        }
        if state.is_empty() {
            state.push_str("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nothing, namespace: ns}\n");
        }
        let mut input = String::new();
        let kind = rng.pick(&["Deployment", "StatefulSet", "Job", "ReplicationController", "ReplicaSet", "CronJob", "DaemonSet"]);
        let replicas = rng.below(40);
        let requests = match rng.below(5) {
            0 => "{}".to_string(),
            1 => format!("{{requests: {{cpu: {}}}}}", rng.pick(&["100m", "250m", "1", "333m"])),
            2 => format!("{{requests: {{cpu: {}, memory: {}}}, limits: {{cpu: '1', memory: 1Gi}}}}", rng.pick(&["100m", "50m"]), rng.pick(&["64Mi", "200M"])),
            3 => "{limits: {cpu: 200m, memory: 100Mi, ephemeral-storage: 1Gi}}".to_string(),
            _ => "{requests: {ephemeral-storage: 300Mi, cpu: 10m}}".to_string(),
        };
        if rng.below(4) == 0 {
            // A pod already there under the name of one of the replicas: that replica is an update.
            let n = rng.below(replicas + 1);
            let name = match kind {
                "StatefulSet" => format!("w-{n}"),
                "Deployment" => format!("w-<hash>-{n}"),
                _ => format!("w-{n}"),
            };
            let _ = write!(input, "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: 10m}}}}}}]}}\n");
        }
        let template = format!(
            "metadata: {{labels: {{app: w}}}}\n    spec:\n      restartPolicy: {}\n      containers: [{{name: c, image: x, resources: {requests}}}]\n",
            if matches!(kind, "Job" | "CronJob") { "Never" } else { "Always" }
        );
        let _ = match kind {
            "Deployment" | "ReplicaSet" => write!(input, "---\napiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: w}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: w}}}}\n  template:\n    {template}"),
            "ReplicationController" => write!(input, "---\napiVersion: v1\nkind: ReplicationController\nmetadata: {{name: w}}\nspec:\n  replicas: {replicas}\n  template:\n    {template}"),
            "DaemonSet" => write!(input, "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: w}}\nspec:\n  selector: {{matchLabels: {{app: w}}}}\n  template:\n    {template}"),
            "Job" => write!(input, "---\napiVersion: batch/v1\nkind: Job\nmetadata: {{name: w}}\nspec:\n  parallelism: {replicas}\n  template:\n    {template}"),
            "CronJob" => write!(
                input,
                "---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: w}}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      parallelism: {replicas}\n      template:\n        {}",
                template.replace("\n    ", "\n        ")
            ),
            _ => {
                let mut claims = String::new();
                for c in 0..rng.below(3) {
                    let _ = write!(claims, "  - metadata: {{name: data{c}}}\n    spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {}}}}}}}\n", rng.pick(&["1Gi", "5Gi", "1500Mi"]));
                }
                let claims = if claims.is_empty() { String::new() } else { format!("  volumeClaimTemplates:\n{claims}") };
                write!(input, "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: w}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: w}}}}\n{claims}  template:\n    {template}")
            }
        };
        // Something after the workload sees what it left in the quotas.
        input.push_str("---\napiVersion: v1\nkind: Pod\nmetadata: {name: after}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 100m, memory: 64Mi}}}]}\n");
        (state, input, (kind == "DaemonSet").then(|| rng.below(30) as u32))
    }

    fn run(state_text: &str, input: &str, nodes: Option<u32>, each_replica: bool) -> (Vec<DocumentReport>, Vec<ResourceList>) {
        run_detailed(state_text, input, nodes, each_replica, Detail::Full)
    }

    fn run_detailed(state_text: &str, input: &str, nodes: Option<u32>, each_replica: bool, detail: Detail) -> (Vec<DocumentReport>, Vec<ResourceList>) {
        let mut state = ClusterState::from_objects(objects_of("state.yaml", state_text), "ns");
        let opts = CheckOptions { namespace: "ns".into(), limited: vec![], nodes, detail, ..CheckOptions::default() };
        let mut checker = Checker::new(&mut state, &opts);
        checker.each_replica = each_replica;
        let docs: Vec<DocumentReport> = objects_of("input.yaml", input).into_iter().map(|o| checker.check_one(o)).collect();
        (docs, used_in(&state, "ns"))
    }

    #[test]
    fn replica_replay_without_a_loop_per_replica_agrees_with_the_replica_by_replica_replay() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut short = 0;
        for case in 0..600 {
            let (state, input, nodes) = random_case(&mut rng);
            let fast = run(&state, &input, nodes, false);
            let oracle = run(&state, &input, nodes, true);
            assert_eq!(fast, oracle, "case {case}\nstate:\n{state}\ninput:\n{input}");
            short += fast.0.iter().filter(|d| d.replicas_admitted.zip(d.replicas).is_some_and(|(a, w)| a < w)).count();
        }
        // The cases exercise refusals part-way through, not only workloads that fit whole.
        assert!(short > 50, "only {short} workloads were short of replicas");
    }

    #[test]
    fn explaining_only_refusals_decides_and_charges_exactly_as_explaining_everything() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for case in 0..600 {
            let (state, input, nodes) = random_case(&mut rng);
            let (mut full, full_used) = run_detailed(&state, &input, nodes, false, Detail::Full);
            let (lean, lean_used) = run_detailed(&state, &input, nodes, false, Detail::Refusals);
            assert_eq!(full_used, lean_used, "case {case}");
            // The lean report is the full one less the quotas that do not refuse, and less
            // the explanations of the refusing ones (their verdicts, rows and missing kept).
            let keep = |quotas: &mut Vec<QuotaReport>| {
                quotas.retain(|q| matches!(q.verdict, QuotaVerdict::Exceeded | QuotaVerdict::MustSpecify | QuotaVerdict::StatusUnknown));
                for q in quotas.iter_mut() {
                    (q.why, q.scopes) = (String::new(), vec![]);
                }
            };
            for d in &mut full {
                keep(&mut d.quotas);
                if let Some(p) = &mut d.pods {
                    keep(&mut p.quotas);
                }
            }
            assert_eq!(full, lean, "case {case}\nstate:\n{state}\ninput:\n{input}");
        }
    }

    #[test]
    fn identical_replicas_need_no_loop_per_replica() {
        let state = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: cpu, namespace: ns}\nspec: {hard: {requests.cpu: '1000'}}\nstatus: {hard: {requests.cpu: '1000'}, used: {requests.cpu: '1'}}\n";
        for (kind, extra, spec) in [
            ("Deployment", "apps/v1", "replicas: 2147483647\n  selector: {}\n"),
            ("ReplicationController", "v1", "replicas: 2147483647\n"),
            ("Job", "batch/v1", "parallelism: 2147483647\n"),
            ("StatefulSet", "apps/v1", "replicas: 2147483647\n  selector: {}\n  volumeClaimTemplates:\n  - metadata: {name: a}\n    spec: {resources: {requests: {storage: 1Gi}}}\n  - metadata: {name: b}\n    spec: {resources: {requests: {storage: 1Gi}}}\n"),
        ] {
            let input = format!(
                "apiVersion: {extra}\nkind: {kind}\nmetadata: {{name: w}}\nspec:\n  {spec}  template: {{spec: {{restartPolicy: Never, containers: [{{name: c, image: x, resources: {{requests: {{cpu: 1m}}}}}}]}}}}\n"
            );
            let (docs, used) = run(state, &input, None, false);
            // (1000 - 1) / 0.001 = 999,000 fit; the next is refused with the server's text.
            assert_eq!(docs[0].replicas_admitted, Some(999_000), "{kind}");
            assert_eq!(docs[0].pod_message.as_deref(), Some("exceeded quota: cpu, requested: requests.cpu=1m, used: requests.cpu=1k, limited: requests.cpu=1k"), "{kind}");
            assert_eq!(used[0]["requests.cpu"].to_string(), "1k");
        }
        let input = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  replicas: 2147483647\n  selector: {}\n  template: {spec: {containers: [{name: c, image: x}]}}\n";
        let (docs, _) = run("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns}\n", input, None, false);
        assert_eq!((docs[0].replicas, docs[0].replicas_admitted), (Some(i32::MAX), Some(i32::MAX)));
        let ds = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec: {selector: {}, template: {spec: {containers: [{name: c, image: x}]}}}\n";
        let (docs, _) = run("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns}\n", ds, Some(u32::MAX), false);
        assert_eq!((docs[0].replicas, docs[0].replicas_admitted), (Some(i32::MAX), Some(i32::MAX)));
        let negative = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  replicas: -5\n  selector: {}\n  template: {spec: {containers: [{name: c, image: x}]}}\n";
        let (docs, _) = run(state, negative, None, false);
        assert_eq!(docs.len(), 1);
    }

    #[test]
    fn largest_multiple_within_an_allowance_is_exact() {
        let q = |s: &str| Quantity::parse(s).unwrap();
        for (unit, avail, cap, want) in [
            ("1m", "999", 1_000_000_000, 999_000),
            ("3", "10", 100, 3),
            ("333m", "1", 100, 3),
            ("1Gi", "1Ti", 10_000, 1024),
            ("1.5Gi", "1Ti", 10_000, 682),
            ("1", "0", 100, 0),
            ("1", "-1", 100, 0),
            ("2", "1", 100, 0),
            ("1n", "9", i64::MAX, 9_000_000_000),
            ("1n", "8Ei", i64::MAX, (1i64 << 62) - 1),
            ("7", "1000", 5, 5),
        ] {
            assert_eq!(max_multiple(&q(unit), &q(avail), cap), want, "{unit} into {avail}");
            assert_eq!(times(&q(unit), want), (0..want.min(2000)).fold(Quantity::zero(), |a, _| a.add(&q(unit))).add(&times(&q(unit), want - want.min(2000))));
        }
    }
}
