//! The whole offline pipeline for `check`: cluster state + documents in order -> a report.
//!
//! Documents are admitted one by one, as `kubectl create -f` sends them: each sees the usage
//! charged by the earlier ones. A workload is admitted as the object itself, then the objects
//! its controllers create (a Deployment's ReplicaSet, then its pods one at a time; a
//! StatefulSet's claims and pods, ...), so the report says how many replicas fit.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::admission::{check_request_with, Decision, LimitedResource, NamedQuota, QuotaReport, Refusal, RefusalReason};
use crate::defaulting::{self, Mutators};
use crate::manifest::Origin;
use crate::objects::{type_info, Body, LimitRangeItem, Meta, Object, Workload};
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
    /// DeviceClasses (name -> extendedResourceName); `None` when unknown.
    pub device_classes: Option<BTreeMap<String, Option<String>>>,
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
        }
    }

    /// Adds one object (a later object of the same name replaces an earlier one).
    pub fn add(&mut self, o: Object, default_namespace: &str) {
        let ns = o.meta.namespace.clone().unwrap_or_else(|| default_namespace.to_string());
        let name = o.meta.name.clone();
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
                self.device_classes.get_or_insert_with(BTreeMap::new).insert(name, extended_resource_name);
            }
            // Pods (a resize), claims and claim templates are looked up by name later.
            Body::Pod(_) | Body::ResourceClaim(_) | Body::ResourceClaimTemplate(_) => {
                let mut o = o;
                o.meta.resource_version.get_or_insert_with(|| "1".into());
                o.meta.namespace = Some(ns.clone());
                self.existing.insert((ns, o.type_info.group_resource(), name), o);
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
    pub allowed: bool,
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
    /// Pods the controller would manage to create under quota.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas_admitted: Option<i32>,
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

impl DocumentReport {
    /// Whether everything this document asks for would be created.
    pub fn fully_admitted(&self) -> bool {
        self.allowed && self.replicas_admitted.zip(self.replicas).is_none_or(|(a, w)| a >= w) && self.pods_pending.unwrap_or(0) == 0
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
            dropped.extend(defaulting::mutate_pod(p, &m)?);
            Ok(dropped)
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
    if let Body::Pod(p) = &obj.body {
        if let Err(message) = defaulting::validate_pod_requests(p, &obj.meta.name) {
            return (Decision::refused(RefusalReason::Invalid, message), mutations);
        }
        if let Some(Body::Pod(prev)) = old.as_ref().map(|o| &o.body) {
            if let Err(message) = defaulting::validate_pod_update(prev, p, &obj.meta.name, &opts.rules) {
                return (Decision::refused(RefusalReason::Invalid, message), mutations);
            }
        }
    }
    let quotas = state.quotas.entry(ns.to_string()).or_default();
    let decision = check_request_with(quotas, obj, old.as_ref(), &opts.limited, &opts.rules);
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
    /// Numbers (as in their names) of created pods whose claims quota refuses.
    claims_refused: Vec<i32>,
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

/// "pods 3–4" / "pod 3".
fn pod_range(numbers: &[i32]) -> String {
    match (numbers.first(), numbers.last()) {
        (Some(a), Some(b)) if a != b => format!("pods {a}\u{2013}{b}"),
        (Some(a), _) => format!("pod {a}"),
        _ => String::new(),
    }
}

/// Replays the controllers: the intermediate object (ReplicaSet, Job), then per replica the
/// StatefulSet claims and the pod, stopping at the first refusal (all replicas are alike, so
/// once one is refused the rest are too).
/// `running` replicas exist already (an update of an existing workload): only the ones above
/// them are created.
fn admit_workload_pods(obj: &Object, w: &Workload, running: i32, state: &mut ClusterState, ns: &str, opts: &CheckOptions) -> PodsOutcome {
    let kind = obj.type_info.kind.as_str();
    let mut out =
        PodsOutcome { wanted: w.replicas, admitted: running, first_refusal: None, explained: None, notes: vec![], claims_refused: vec![], claim_refusal: None };
    let wanted = match (kind, w.replicas, opts.nodes) {
        ("DaemonSet", _, Some(n)) => {
            out.wanted = Some(n as i32);
            n as i32
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
    if let Some((av, k, name)) = intermediate.filter(|_| running == 0) {
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
    for i in running..wanted {
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
        let report = PodsReport { pod: pod.meta.name.clone(), allowed: d.allowed, usage: d.usage.clone(), mutations, quotas: d.quotas.clone() };
        out.explained = Some(report);
        match d.refusal {
            Some(r) => {
                out.first_refusal = Some(r);
                return out;
            }
            None => out.admitted += 1,
        }
        let number = if kind == "StatefulSet" { i } else { i + 1 };
        if out.claim_refusal.is_some() {
            // Pods do not charge claim quotas: the claims of later pods are refused alike.
            out.claims_refused.push(number);
        } else if !w.template.resource_claim_templates.is_empty() {
            let (refusal, notes) = admit_pod_claims(&pod, state, ns, opts);
            if out.notes.is_empty() {
                out.notes.extend(notes);
            }
            if let Some(r) = refusal {
                out.claims_refused.push(number);
                out.claim_refusal = Some(r);
            }
        }
    }
    out
}

/// Checks documents in order against the state. The state is charged as documents are
/// admitted (pass a clone to keep the original).
pub fn check(state: &mut ClusterState, objects: Vec<Object>, opts: &CheckOptions) -> Report {
    let mut documents = Vec::new();
    for mut obj in objects {
        let ns = obj.meta.namespace.clone().unwrap_or_else(|| opts.namespace.clone());
        let mut notes = Vec::new();
        let served = version::served(&opts.rules, &obj.type_info.api_version, &obj.type_info.kind);
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
                    version::unsupported_scope(&opts.rules, &q.scopes, q.scope_selector.as_deref())
                        .map(|e| format!("ResourceQuota {:?} is invalid: {e}", obj.meta.name))
                })
            }
            _ => None,
        };
        let (decision, mutations) = match (&served, invalid) {
            // kubectl finds no resource for the kind and sends nothing.
            (Served::No(note), _) => {
                notes.push(note.clone());
                (Decision::refused(RefusalReason::NotServed, version::no_matches_message(&obj.type_info.api_version, &obj.type_info.kind)), vec![])
            }
            (_, Some(message)) => (Decision::refused(RefusalReason::Invalid, message), vec![]),
            (_, None) => admit(&mut obj, state, &ns, opts),
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
            refusal: decision.refusal.clone(),
            replicas: None,
            replicas_admitted: None,
            pod_message: None,
            pods_pending: None,
            pod_message_alternatives: vec![],
            mutations,
            usage: decision.usage.clone(),
            quotas: decision.quotas.clone(),
            pods: None,
            notes,
            hints: vec![],
        };
        let key = (ns.clone(), obj.type_info.group_resource(), obj.meta.name.clone());
        let existing = state.existing.get(&key).cloned();
        let was_existing = existing.is_some();
        if was_existing {
            report.notes.push("an object of this name already exists: this is an update".into());
        }
        // Replicas of an existing workload are running (and in the quotas' usage) already.
        let running = match existing.as_ref().map(|e| &e.body) {
            Some(Body::Workload(old)) => {
                if let Body::Workload(new) = &obj.body {
                    if old.template != new.template {
                        report.notes.push("the pod template changed: a rollout replaces the pods and needs room for its surge pods while it runs; only added replicas are checked here".into());
                    }
                }
                old.replicas.unwrap_or(1).max(0)
            }
            _ => 0,
        };
        if decision.allowed {
            if let Body::Workload(w) = &obj.body {
                let w = w.clone();
                let cron = obj.type_info.kind == "CronJob";
                // A CronJob's pods come later, when its schedule fires: evaluate one run
                // without charging it to the documents that follow.
                let pods = if cron {
                    let mut scratch = state.scratch_for(&ns);
                    let o = admit_workload_pods(&obj, &w, 0, &mut scratch, &ns, opts);
                    report
                        .notes
                        .push("a CronJob creates its Job and pods when the schedule fires: this is what one run would need against the current usage".into());
                    o
                } else {
                    admit_workload_pods(&obj, &w, running, state, &ns, opts)
                };
                report.replicas = pods.wanted;
                report.replicas_admitted = pods.wanted.map(|_| pods.admitted);
                report.pod_message_alternatives = pods.first_refusal.as_ref().map(|r| r.alternatives.clone()).unwrap_or_default();
                report.pod_message = pods.first_refusal.map(|r| r.message);
                report.pods = pods.explained;
                report.notes.extend(pods.notes);
                if let Some(r) = pods.claim_refusal {
                    let pending = pods.claims_refused.len() as i32;
                    report.notes.push(format!(
                        "{} of {} pods admitted; the claims of {} would be refused: {}; those pods stay Pending",
                        pods.admitted,
                        pods.wanted.unwrap_or(pods.admitted),
                        pod_range(&pods.claims_refused),
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
                    let (refusal, claim_notes) = admit_pod_claims(&obj, state, &ns, opts);
                    report.notes.extend(claim_notes);
                    if let Some(r) = refusal {
                        report.notes.push(format!("the pod is created, but its ResourceClaim would be refused: {}; the pod stays Pending", r.message));
                        report.pods_pending = Some(1);
                        report.pod_message = Some(r.message);
                    }
                }
            }
            if let (Body::ResourceQuota(q), true) = (&obj.body, opts.rules.quota_request_limit_warning) {
                report.notes.extend(defaulting::quota_request_limit_warnings(&q.spec_hard));
            }
            if !was_existing {
                if let Body::ResourceQuota(q) = &mut obj.body {
                    // A new quota has no status until the quota controller syncs it.
                    q.status_hard.clear();
                    q.status_used.clear();
                    q.has_status = false;
                    report.notes.push("a new quota is enforced only once the quota controller has synced it (status.hard set), usually within seconds".into());
                }
                let mut stored = obj.clone();
                stored.meta.resource_version = Some("1".into());
                stored.meta.namespace = Some(ns.clone());
                state.add(stored.clone(), &ns);
                state.existing.insert(key, stored);
            }
        }
        documents.push(report);
    }
    let mut notes = Vec::new();
    let order_matters = documents.iter().any(|d| d.refusal.as_ref().is_some_and(|r| !r.alternatives.is_empty()) || !d.pod_message_alternatives.is_empty());
    if order_matters {
        notes.push("quotas are checked in name order; when several would refuse, the API server may name another one first".into());
    }
    Report { kubernetes: VersionReport::new(&opts.rules, "default", None), documents, notes }
}
