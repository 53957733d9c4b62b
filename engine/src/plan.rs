//! `plan`: the quota a release needs. The manifests are checked as `check` does, against a
//! copy of the state where every enforced quota has room for anything: every document and
//! every replica (and StatefulSet claim) is admitted and charged. What each quota then counts,
//! minus its hard limit, is the headroom missing; a quota sized to that admits the release.
//!
//! A namespace without any quota gets a proposed one (`<namespace>-plan`) sized to what the
//! manifests consume of the usual compute, storage and object-count resources.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use serde::Serialize;

use crate::admission::{NamedQuota, QuotaVerdict};
use crate::check::{self, CheckOptions, ClusterState, DocumentReport};
use crate::objects::{Body, Object};
use crate::quantity::Quantity;
use crate::resources::ResourceList;

/// What a proposed quota for a namespace without one limits.
pub const PROPOSED_RESOURCES: &[&str] =
    &["pods", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "requests.storage", "persistentvolumeclaims", "services"];

/// One resource of a quota: what the manifests add to what is used, against the hard limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcePlan {
    pub resource: String,
    /// What the manifests would add to the quota's usage.
    pub requested: Quantity,
    pub used: Quantity,
    /// The hard limit today (`None` for a proposed quota).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hard: Option<Quantity>,
    /// used + requested: the smallest hard limit that admits everything.
    pub needed: Quantity,
    /// needed - hard when positive: the headroom to add.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<Quantity>,
}

/// One quota the manifests would be charged to.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaPlan {
    pub namespace: String,
    pub name: String,
    /// A proposed quota for a namespace that has none.
    pub proposed: bool,
    /// Whether some hard limit must grow for the manifests to be admitted.
    pub must_grow: bool,
    /// The resources the manifests consume, in name order.
    pub resources: Vec<ResourcePlan>,
    /// The ResourceQuota manifest sized to admit the manifests (spec.hard raised where
    /// short; scopes and selectors kept).
    pub manifest: serde_json::Value,
}

/// Something headroom cannot fix (a missing request, an invalid object, another admission
/// plugin's refusal).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Blocked {
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
    pub message: String,
}

/// The plan for a set of manifests.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub quotas: Vec<QuotaPlan>,
    pub blocked: Vec<Blocked>,
    pub notes: Vec<String>,
}

impl Plan {
    /// 0 when everything fits today, 1 when a quota must grow or something is blocked.
    pub fn exit_code(&self) -> i32 {
        if self.blocked.is_empty() && self.quotas.iter().all(|q| !q.must_grow) {
            0
        } else {
            1
        }
    }
}

/// More than any release asks for: 10^18 of any resource.
fn unlimited() -> Quantity {
    Quantity::parse("1E").expect("a valid quantity")
}

/// A quota with room for anything it limits today.
fn opened(q: &NamedQuota) -> NamedQuota {
    let mut o = q.clone();
    for v in o.quota.status_hard.values_mut() {
        *v = unlimited();
    }
    o
}

/// The proposed quota of a namespace without one: unlimited, nothing used.
fn proposed(ns: &str, without: Option<&BTreeSet<String>>) -> NamedQuota {
    let names = || PROPOSED_RESOURCES.iter().filter(|r| without.is_none_or(|w| !w.contains(**r)));
    let hard: ResourceList = names().map(|r| (r.to_string(), unlimited())).collect();
    let used: ResourceList = names().map(|r| (r.to_string(), Quantity::zero())).collect();
    let raw: k8s_openapi::api::core::v1::ResourceQuota = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": format!("{ns}-plan"), "namespace": ns}, "spec": {"hard": {}}
    }))
    .expect("a valid ResourceQuota");
    NamedQuota {
        name: format!("{ns}-plan"),
        quota: crate::objects::ResourceQuota {
            spec_hard: ResourceList::new(),
            scopes: vec![],
            scope_selector: None,
            status_hard: hard,
            status_used: used,
            has_status: true,
            raw: Some(Box::new(raw)),
        },
    }
}

/// The manifest of a quota with these hard limits, keeping its scopes and selector.
fn manifest(q: &NamedQuota, ns: &str, hard: &ResourceList) -> serde_json::Value {
    let mut raw = q.quota.raw.as_deref().cloned().unwrap_or_default();
    raw.status = None;
    raw.metadata =
        k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta { name: Some(q.name.clone()), namespace: Some(ns.to_string()), ..Default::default() };
    let mut spec = raw.spec.unwrap_or_default();
    spec.hard = Some(hard.iter().map(|(k, v)| (k.clone(), K8sQuantity(v.to_string()))).collect());
    raw.spec = Some(spec);
    let mut v = serde_json::to_value(&raw).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("apiVersion".into(), "v1".into());
        o.insert("kind".into(), "ResourceQuota".into());
    }
    v
}

fn blocked(d: &DocumentReport) -> Option<Blocked> {
    let message = if !d.allowed {
        d.message.clone()
    } else if !d.fully_admitted() {
        d.pod_message.clone()
    } else {
        None
    }?;
    Some(Blocked { kind: d.kind.clone(), name: d.name.clone(), namespace: d.namespace.clone(), message })
}

/// [`plan`] with every autoscaler at its maximum: each HPA and ScaledObject, in the manifests
/// or the cluster, is taken to want its `maxReplicas` (`maxReplicaCount`), so the quotas are
/// sized for the largest scale-up the autoscalers may ask for. (A ScaledJob's Jobs are not
/// charged by a check, only its ceiling worked out: they are not sized here.)
pub fn plan_at_max(state: &ClusterState, mut objects: Vec<Object>, opts: &CheckOptions) -> Plan {
    let mut state = state.clone();
    let mut at_max = 0;
    let mut raise = |o: &mut Object| {
        if let Body::Autoscaler(a) = &mut o.body {
            a.desired = Some(a.max);
            at_max += 1;
        }
    };
    objects.iter_mut().for_each(&mut raise);
    state.existing.values_mut().for_each(&mut raise);
    let mut p = plan(&state, objects, opts);
    p.notes.insert(
        0,
        format!("sized for every autoscaler at its maximum ({at_max} autoscaler(s)): each workload one targets runs its maxReplicas (a ScaledJob's Jobs are not sized)"),
    );
    p
}

/// Plans the quota `objects` need in `state` (which is not changed).
pub fn plan(state: &ClusterState, objects: Vec<Object>, opts: &CheckOptions) -> Plan {
    let mut notes = opening_notes(&objects);
    let namespaces: BTreeSet<String> =
        objects.iter().filter(|o| o.type_info.namespaced).map(|o| o.meta.namespace.clone().unwrap_or_else(|| opts.namespace.clone())).collect();
    let run = sized_run(state, objects, &namespaces, opts);
    let blocked: Vec<Blocked> = run.report.documents.iter().filter_map(blocked).collect();
    let peaks = rollout_peaks(&run.report, opts);
    let quotas = quota_plans(state, &run, &namespaces, &peaks);
    for q in quotas.iter().filter(|q| q.proposed) {
        let mut note = format!("namespace {} has no quota and admits everything: {} is a proposal sized to what the manifests consume", q.namespace, q.name);
        if let Some(d) = run.dropped.get(&q.namespace) {
            let d: Vec<&str> = d.iter().map(String::as_str).collect();
            note.push_str(&format!(" (without {}: some container does not set it, and a quota on it would refuse that pod)", d.join(", ")));
        }
        notes.push(note);
    }
    notes.extend(dry_run_notes(&run));
    notes.extend(run.report.notes);
    Plan { quotas, blocked, notes }
}

/// What the documents themselves leave out of the plan: a CronJob's runs, a quota in them.
fn opening_notes(objects: &[Object]) -> Vec<String> {
    let mut notes = Vec::new();
    for o in objects {
        if o.type_info.kind == "CronJob" {
            notes.push(format!("CronJob {} creates its pods when the schedule fires: one run is not counted here; check it with `check`", o.meta.name));
        }
        if matches!(o.body, Body::ResourceQuota(_)) {
            notes.push(format!("ResourceQuota {} in the manifests is not enforced until the quota controller syncs it: planned without it", o.meta.name));
        }
    }
    notes
}

/// The documents checked against opened quotas (and a proposed one where a namespace has
/// none): the state before and after, the report, and what the proposals leave out.
struct SizedRun {
    before: ClusterState,
    after: ClusterState,
    report: check::Report,
    /// The namespaces given a proposed quota.
    proposals: BTreeSet<String>,
    /// Per namespace, the resources left out of its proposal ("must specify").
    dropped: BTreeMap<String, BTreeSet<String>>,
}

/// Checks `objects` against `state`'s quotas opened wide. A proposed quota must not refuse what
/// it is sized for: a resource some container does not specify ("must specify") is left out
/// of it, and the check runs again.
fn sized_run(state: &ClusterState, objects: Vec<Object>, namespaces: &BTreeSet<String>, opts: &CheckOptions) -> SizedRun {
    let mut dropped: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    loop {
        let mut after = state.clone();
        // A dry run the server's quotas refused says nothing of the pod: planned as written.
        after.dry_runs = check::dry_run::quota_refusals_unanswered(&state.dry_runs);
        let mut proposals = BTreeSet::new();
        for ns in namespaces {
            let list = after.quotas.entry(ns.clone()).or_default();
            if list.iter().all(|q| !q.quota.has_status) {
                proposals.insert(ns.clone());
                list.push(proposed(ns, dropped.get(ns)));
            }
            for q in list.iter_mut() {
                *q = opened(q);
            }
        }
        let before = after.clone();
        // Quotas are sized for every document, whatever the state lacks (its notes say what).
        let opts = CheckOptions { assume_lacking: true, ..opts.clone() };
        let report = check::check(&mut after, objects.clone(), &opts);
        let mut more = false;
        for d in &report.documents {
            let ns = d.namespace.clone().unwrap_or_else(|| opts.namespace.clone());
            let name = format!("{ns}-plan");
            let quotas = d.quotas.iter().chain(d.pods.iter().flat_map(|p| p.quotas.iter()));
            for q in quotas.filter(|q| q.name == name && q.verdict == QuotaVerdict::MustSpecify && proposals.contains(&ns)) {
                for r in q.missing.keys() {
                    more |= dropped.entry(ns.clone()).or_default().insert(r.clone());
                }
            }
        }
        if !more {
            return SizedRun { before, after, report, proposals, dropped };
        }
    }
}

/// A rollout counts old and new pods at once: a quota must hold its peak, not only the end.
/// The peaks by (namespace, quota).
fn rollout_peaks(report: &check::Report, opts: &CheckOptions) -> BTreeMap<(String, String), ResourceList> {
    let mut peaks: BTreeMap<(String, String), ResourceList> = BTreeMap::new();
    for d in &report.documents {
        let ns = d.namespace.clone().unwrap_or_else(|| opts.namespace.clone());
        for (quota, peak) in d.rollout.iter().flat_map(|r| r.peak.iter()) {
            let most = peaks.entry((ns.clone(), quota.clone())).or_default();
            for (r, v) in peak {
                if most.get(r).is_none_or(|m| v > m) {
                    most.insert(r.clone(), v.clone());
                }
            }
        }
    }
    peaks
}

/// Each quota the documents charge: what they ask of each resource, and the quota's manifest
/// grown where it must (or proposed).
fn quota_plans(state: &ClusterState, run: &SizedRun, namespaces: &BTreeSet<String>, peaks: &BTreeMap<(String, String), ResourceList>) -> Vec<QuotaPlan> {
    let mut quotas = Vec::new();
    for ns in namespaces {
        let originals: BTreeMap<&str, &NamedQuota> = state.quotas.get(ns).map(|l| l.iter().map(|q| (q.name.as_str(), q)).collect()).unwrap_or_default();
        let after = run.after.quotas.get(ns).cloned().unwrap_or_default();
        for q in after.iter().filter(|q| q.quota.has_status) {
            let prior = run.before.quotas.get(ns).and_then(|l| l.iter().find(|p| p.name == q.name));
            let used_before = prior.map(|p| p.quota.status_used.clone()).unwrap_or_default();
            let is_proposed = run.proposals.contains(ns);
            let original = originals.get(q.name.as_str());
            let mut resources = Vec::new();
            let mut hard_out: ResourceList = original.map(|o| o.quota.spec_hard.clone()).unwrap_or_default();
            let peak = peaks.get(&(ns.clone(), q.name.clone()));
            for (r, after) in &q.quota.status_used {
                let used_now = match peak.and_then(|p| p.get(r)) {
                    Some(p) if p > after => p,
                    _ => after,
                };
                let used = used_before.get(r).cloned().unwrap_or_default();
                let requested = used_now.sub(&used);
                if requested.sign() <= 0 {
                    continue;
                }
                let hard = original.and_then(|o| o.quota.status_hard.get(r).cloned());
                let missing = hard.as_ref().map(|h| used_now.sub(h)).filter(|m| m.sign() > 0);
                if is_proposed || missing.is_some() {
                    let spec = hard_out.get(r).cloned().unwrap_or_default();
                    hard_out.insert(r.clone(), if spec > *used_now { spec } else { used_now.clone() });
                }
                resources.push(ResourcePlan { resource: r.clone(), requested, used, hard, needed: used_now.clone(), missing });
            }
            if resources.is_empty() {
                continue;
            }
            let must_grow = resources.iter().any(|r| r.missing.is_some());
            let shown = original.copied().unwrap_or(q);
            quotas.push(QuotaPlan {
                namespace: ns.clone(),
                name: q.name.clone(),
                proposed: is_proposed,
                must_grow,
                resources,
                manifest: manifest(shown, ns, &hard_out),
            });
        }
    }
    quotas
}

/// Pods taken from the server's dry runs (or, where it gave none, why), one note a document.
fn dry_run_notes(run: &SizedRun) -> Vec<String> {
    let mut notes = Vec::new();
    for d in &run.report.documents {
        let Some(dry) = run.after.dry_runs.get(&check::dry_run::source_of(&d.source)) else { continue };
        let said = match &dry.answer {
            Ok(_) => format!(
                "its pods are sized as the API server returned them from a dry run (dryRun=All), after the mutating webhook{} {}",
                if dry.webhooks.len() == 1 { "" } else { "s" },
                dry.webhooks.join(", ")
            ),
            Err(why) => why.clone(),
        };
        notes.push(format!("{} {}: {said}", d.kind, d.name));
    }
    notes
}
