//! One AdmissionReview (admission.k8s.io/v1) in, its answer out: the workload decoded as any
//! manifest is, checked by the engine against the cached state of its namespace, and the
//! verdict worded as warnings that fit the API server's limits. No I/O: the caches are handed
//! in as a [`ClusterState`] of the request's namespace.
//!
//! The API server's limits on warnings (k8s.io/apiserver, `endpoints/filters/warning.go`, from
//! 1.21): each response carries at most 4096 characters (runes) of warning text; past that,
//! every warning is cut to 256 characters. Warnings with control characters are dropped
//! (`net.NewWarningHeader` refuses them). 1.20 cuts nothing, but sends everything in one
//! header. So each warning here is at most [`MAX_WARNING_CHARS`], control characters made
//! visible, and all of them together at most [`MAX_TOTAL_CHARS`].

use kubectl_quota_engine::check::{CheckOptions, Checker, ClusterState};
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::{self, ContainerLists};
use kubectl_quota_engine::report::warnings;
use serde_json::{json, Value};
use std::cell::RefCell;

mod facts;
mod prune;

use facts::ObjectFacts;
use prune::{Kept, Taking};

/// The longest warning sent, in characters: the API server cuts longer ones to this length
/// once the response's warnings pass [`MAX_TOTAL_CHARS`], so none is ever cut by it.
pub const MAX_WARNING_CHARS: usize = 256;
/// All of a response's warnings together, in characters: the API server's own bound.
pub const MAX_TOTAL_CHARS: usize = 4096;

/// The largest object (its JSON) whose workload the guard replays admission policies on. The
/// policies read the whole object: its tree, the pod's and their CEL values take some 30 times
/// its JSON when it is many small maps (tens of thousands of containers), and the guard's
/// memory limit is 256Mi. Real workloads are a few KiB; the API server takes up to 3 MiB.
pub const POLICY_REPLAY_MAX_BYTES: usize = 512 << 10;

/// The namespace label that opts a namespace in to refusals (`enforce`), or out of the guard
/// (`ignore`, also read on objects).
pub const LABEL: &str = "kubectl-quota.io/guard";

/// The kinds whose pods controllers create later: (group, kind).
pub const WORKLOADS: [(&str, &str); 7] = [
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("", "ReplicationController"),
];

/// Whether (group, kind) is an autoscaler whose target's pods the guard speaks about (one the
/// guard reads from the cluster): its target is read when it is created or changed.
fn is_autoscaler(kind: (&str, &str)) -> bool {
    objects::autoscaler_type(kind.0, kind.1).is_some_and(|t| t.read)
}

/// The request fields the guard reads. The objects stay in the review's body, where the
/// parse found them: each is read into a tree only when it is decided, one after the other,
/// and never at all when the request is skipped; what [`concerns`] reads of them (owner,
/// opt-out label, whether the spec changed) was taken on the way, in a pass that builds
/// nothing.
pub struct Request {
    pub uid: String,
    pub group: String,
    pub kind: String,
    pub operation: String,
    pub namespace: String,
    body: Vec<u8>,
    /// Where `request.object` and `request.oldObject` are in `body`, when they are JSON
    /// objects (maps).
    object: Option<std::ops::Range<usize>>,
    old_object: Option<std::ops::Range<usize>>,
    facts: Facts,
}

/// What [`concerns`] reads of the objects.
#[derive(Default)]
struct Facts {
    /// The object names a controller among its owners.
    owned: bool,
    /// The object is labelled [`LABEL`]`: ignore`.
    opted_out: bool,
    /// The specs of the object and of the old object are equal (both absent counts).
    same_spec: bool,
}

/// What the guard answers, and why (for the metrics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub allowed: bool,
    pub warnings: Vec<String>,
    /// The refusal's message when not allowed.
    pub message: Option<String>,
    pub why: Why,
    /// How far quota lets the autoscaler of the request (or the workload's) scale, for the
    /// metrics.
    pub ceiling: Option<kubectl_quota_engine::autoscaling::Ceiling>,
}

/// Why the answer is what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Not a workload, or not a request the guard speaks about (an object a controller owns,
    /// an update that leaves the pods as they are, an excluded namespace or object).
    Skipped,
    /// Checked: every pod fits (or the object itself is refused: the server says so).
    Fits,
    /// Checked: warned.
    Warned,
    /// Checked: refused (the namespace opted in, and no pod can be created).
    Denied,
    /// The object could not be decoded as the engine reads manifests: allowed, unsaid.
    Undecodable,
    /// Not decided within the guard's deadline (`--decision-timeout`): allowed, with a
    /// warning saying so.
    Late,
}

impl Why {
    pub fn label(self) -> &'static str {
        match self {
            Why::Skipped => "skipped",
            Why::Fits => "fits",
            Why::Warned => "warned",
            Why::Denied => "denied",
            Why::Undecodable => "undecodable",
            Why::Late => "late",
        }
    }
}

/// The review as read: only the fields the guard reads are kept (serde skips the others,
/// `userInfo`, `options`, the dry-run flag, without building them); the objects as where they
/// are in the body.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "apiVersion", default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(borrow)]
    request: Option<RawRequest<'a>>,
}

#[derive(serde::Deserialize)]
struct RawRequest<'a> {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    kind: Gvk,
    #[serde(default)]
    operation: String,
    #[serde(default)]
    namespace: String,
    #[serde(borrow)]
    object: Option<&'a serde_json::value::RawValue>,
    #[serde(rename = "oldObject", borrow)]
    old_object: Option<&'a serde_json::value::RawValue>,
}

#[derive(serde::Deserialize, Default)]
struct Gvk {
    #[serde(default)]
    group: String,
    #[serde(default)]
    kind: String,
}

/// Reads an AdmissionReview: `Err` says what is wrong with it, for a 400. The body is kept
/// in the request (the objects are read from it when decided), nothing else as large.
pub fn parse(body: Vec<u8>) -> Result<Request, String> {
    let v: Envelope = serde_json::from_slice(&body).map_err(|e| format!("the body is not JSON: {e}"))?;
    if (v.api_version.as_str(), v.kind.as_str()) != ("admission.k8s.io/v1", "AdmissionReview") {
        return Err(format!("want an admission.k8s.io/v1 AdmissionReview, got apiVersion {:?} kind {:?}", v.api_version, v.kind));
    }
    let Some(req) = v.request else {
        return Err("the AdmissionReview has no request".into());
    };
    if req.uid.is_empty() {
        return Err("the AdmissionReview's request has no uid".into());
    }
    // What concerns() reads of each, in one pass that builds nothing; an object that is not
    // a map is no object.
    let read = |raw: Option<&serde_json::value::RawValue>| -> Result<Option<(std::ops::Range<usize>, ObjectFacts)>, String> {
        let Some(raw) = raw else { return Ok(None) };
        let facts: ObjectFacts = serde_json::from_str(raw.get()).map_err(|e| format!("the body is not JSON: {e}"))?;
        // The raw text lies inside the body (it is borrowed from it): its place, from the two
        // addresses, checked.
        let start = (raw.get().as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
        let at = start..start.saturating_add(raw.get().len());
        if body.get(at.clone()) != Some(raw.get().as_bytes()) {
            return Err("the AdmissionReview's objects could not be placed".into());
        }
        Ok(facts.map.then_some((at, facts)))
    };
    let object = read(req.object)?;
    let old_object = read(req.old_object)?;
    let facts = Facts {
        owned: object.as_ref().is_some_and(|(_, f)| f.owned),
        opted_out: object.as_ref().is_some_and(|(_, f)| f.opted_out),
        same_spec: object.as_ref().map(|(_, f)| f.spec) == old_object.as_ref().map(|(_, f)| f.spec),
    };
    let (uid, group, kind, operation, namespace) = (req.uid, req.kind.group, req.kind.kind, req.operation, req.namespace);
    Ok(Request { uid, group, kind, operation, namespace, object: object.map(|o| o.0), old_object: old_object.map(|o| o.0), facts, body })
}

impl Request {
    /// The object as a JSON tree, without what deciding never reads ([`Kept`]).
    pub fn object(&self) -> Option<Value> {
        self.tree(self.object.clone(), false)
    }

    /// The old object (of an update), as [`Request::object`].
    pub fn old_object(&self) -> Option<Value> {
        self.tree(self.old_object.clone(), false)
    }

    /// The object or old object at `at`, a lean tree when `lean` ([`Kept`]).
    fn tree(&self, at: Option<std::ops::Range<usize>>, lean: bool) -> Option<Value> {
        // Read once already, as JSON: it reads again.
        Kept::read(self.body.get(at?)?, lean, None).ok().map(|k| k.0)
    }

    /// The object or old object at `at` as a lean tree, with its pod spec's long container
    /// lists taken as they were read ([`Taking`]) when it has them.
    fn lean_tree(&self, at: Option<std::ops::Range<usize>>) -> Option<(Value, Option<ContainerLists>)> {
        let taking = RefCell::new(Taking::default());
        let v = Kept::read(self.body.get(at.clone()?)?, true, Some(&taking)).ok()?.0;
        let taking = taking.into_inner();
        if taking.twice {
            return self.tree(at, true).map(|v| (v, None));
        }
        Some((v, taking.lists))
    }
}

/// The AdmissionReview answering `uid`.
pub fn response(uid: &str, a: &Answer) -> Value {
    let mut r = json!({ "uid": uid, "allowed": a.allowed });
    if !a.warnings.is_empty() {
        r["warnings"] = json!(a.warnings);
    }
    if let Some(m) = &a.message {
        r["status"] = json!({ "code": 403, "reason": "Forbidden", "message": m });
    }
    json!({ "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": r })
}

/// The answer to a review not decided within `deadline` (`--decision-timeout`): allowed (the
/// guard never holds up the API server), with a warning saying it was not checked.
pub fn late(deadline: std::time::Duration) -> Answer {
    let warning = format!(
        "kubectl-quota guard: could not decide within {} ms (--decision-timeout): not checked; `kubectl quota check -f` the manifest to see whether its pods fit",
        deadline.as_millis()
    );
    Answer { allowed: true, warnings: fit(vec![warning]), message: None, why: Why::Late, ceiling: None }
}

/// Whether the guard speaks about this request at all, before anything is decoded: a workload
/// kind or an autoscaler, created or updated, not owned by a controller (the controller's
/// creator was answered: the HPA KEDA makes for a ScaledObject, say), not labelled to opt out,
/// and on update with a changed spec (metadata and status changes do not change the pods).
pub fn concerns(req: &Request) -> bool {
    let kind = (req.group.as_str(), req.kind.as_str());
    if !(WORKLOADS.contains(&kind) || is_autoscaler(kind)) || !matches!(req.operation.as_str(), "CREATE" | "UPDATE") {
        return false;
    }
    if req.object.is_none() || req.facts.owned || req.facts.opted_out {
        return false;
    }
    !(req.operation == "UPDATE" && req.old_object.is_some() && req.facts.same_spec)
}

/// The workload an autoscaler of the request names (`spec.scaleTargetRef`; a VPA's
/// `spec.targetRef`), which the guard
/// reads from the cluster to answer for its pods; `None` for any other request.
pub fn scale_target(req: &Request) -> Option<objects::ScaleTarget> {
    if !is_autoscaler((req.group.as_str(), req.kind.as_str())) {
        return None;
    }
    let field = if req.kind == "VerticalPodAutoscaler" { "targetRef" } else { "scaleTargetRef" };
    // An autoscaler is small: read whole.
    let object = req.object()?;
    let t = object.get("spec")?.get(field)?;
    let field = |f: &str| t.get(f).and_then(Value::as_str).unwrap_or_default().to_string();
    let target = objects::ScaleTarget { api_version: field("apiVersion"), kind: field("kind"), name: field("name") };
    (!target.kind.is_empty() && !target.name.is_empty()).then_some(target)
}

/// Where a request's object is said to come from (`create Deployment/shop`): the document its
/// pods are answered for, a dry run's answer too.
fn origin(req: &Request) -> Origin {
    Origin::new(format!("{} {}/{}", req.operation.to_lowercase(), req.kind, req.namespace), 1)
}

/// The pod to ask the API server for in a dry run, for a workload the guard [`concerns`]
/// itself with whose pods a mutating webhook sees (as `state` has the webhooks and the
/// namespace's labels).
pub struct PodAsk {
    /// The document the answer is for, as [`decide`] reads the request.
    pub source: kubectl_quota_engine::check::dry_run::PodSource,
    pub namespace: String,
    /// The Pod, as JSON: the template as its controller sends it.
    pub json: String,
    /// The mutating webhooks that see it (`name (configuration)`).
    pub webhooks: Vec<String>,
}

/// The pod of a workload's request to ask for in a dry run (`check`'s choice: the engine's
/// `dry_runs_needed` and `pod_to_send`); `None` when no mutating webhook sees its pods, and
/// for anything but a workload: a Pod (a dry run's own pod reaching the guard among them) or
/// an autoscaler is never asked for, so a dry run never leads to another.
pub fn dry_run_pod(req: &Request, state: &ClusterState) -> Option<PodAsk> {
    use kubectl_quota_engine::check::dry_run::{dry_runs_needed, pod_to_send};
    if !WORKLOADS.contains(&(req.group.as_str(), req.kind.as_str())) || !state.webhooks.as_ref().is_some_and(|w| w.values().any(|c| c.mutating)) {
        return None;
    }
    // The whole tree: the webhook reads whatever it likes of the pod.
    let tree = req.tree(req.object.clone(), false)?;
    let doc = Document { origin: origin(req), value: tree };
    let obj = objects::decode(&doc).ok()?;
    let ask = dry_runs_needed(state, std::slice::from_ref(&obj), &req.namespace).pop()?;
    let json = serde_json::to_string(&pod_to_send(&doc.value, &obj)?).ok()?;
    Some(PodAsk { source: ask.source, namespace: ask.namespace, json, webhooks: ask.webhooks })
}

/// Decides a request the guard [`concerns`] itself with: `state` holds the namespace's quotas,
/// LimitRanges and classes (and the namespace with its labels, when known); `enforce` is
/// whether the namespace opted in to refusals.
pub fn decide(req: Request, mut state: ClusterState, opts: &CheckOptions, enforce: bool) -> Answer {
    let origin = || origin(&req);
    // A workload's template keeps its spec as sent where admission policies would read it
    // (some policy is bound); a pod's never is (below). Where none is kept, the tree is a lean
    // one. Each object is read into a tree, decoded and its tree dropped before the next is
    // read: one tree at a time.
    let is_pod = (req.group.as_str(), req.kind.as_str()) == ("", "Pod");
    let bound = state.policies.as_ref().is_some_and(|p| p.any(false) || p.any(true));
    // The policies read the whole object, which as a tree (and again as CEL values) takes
    // some 30 times its JSON: over the bound they are not replayed here, and the answer says so.
    let size = req.object.as_ref().map_or(0, |r| r.len());
    let over = bound && !is_pod && size > POLICY_REPLAY_MAX_BYTES;
    if over {
        state.policies = None;
    }
    let unreplayed = over.then(|| {
        format!(
            "kubectl-quota guard: the admission policies were not replayed on this {} ({} KiB, over the guard's {} KiB): `kubectl quota check -f` it to see what they say",
            req.kind,
            size >> 10,
            POLICY_REPLAY_MAX_BYTES >> 10
        )
    });
    let sources = bound && !is_pod && !over;
    let decode = |(v, lists): (Value, Option<ContainerLists>), source: bool| {
        let doc = Document { origin: origin(), value: v };
        let obj = match lists {
            Some(lists) => objects::decode_with_lists(&doc, lists),
            None => objects::decode(&doc),
        };
        obj.map(|mut o| {
            objects::keep_source(&mut o, doc.value, source);
            o
        })
    };
    let object = if sources { req.tree(req.object.clone(), false).map(|v| (v, None)) } else { req.lean_tree(req.object.clone()) };
    let Some(Ok(obj)) = object.map(|t| decode(t, sources)) else {
        return Answer { allowed: true, warnings: vec![], message: None, why: Why::Undecodable, ceiling: None };
    };
    // The old object stands for what exists: the policies never read it (a lean tree).
    if let Some(Ok(mut old)) = req.lean_tree(req.old_object.clone()).map(|t| decode(t, false)) {
        old.meta.namespace = Some(req.namespace.clone());
        old.meta.resource_version.get_or_insert_with(|| "1".into());
        state.existing.insert((req.namespace.clone(), old.type_info.group_resource(), old.meta.name.clone()), old);
    }
    // The body is read no more.
    let Request { namespace, body, .. } = req;
    drop(body);
    // The object reaches the webhook past the server's own admission policies (they run before
    // the validating webhooks): what it is sent is what they left, and they are not run on it
    // again (its own JSON is not kept; a ConfigMap's, kept whole for params, is then not theirs
    // to read). A workload's pods still meet them.
    let mut obj = obj;
    obj.source = objects::Source::default();
    if let objects::Body::Pod(_) | objects::Body::Kept(_) = &obj.body {
        state.policies = None;
    }
    // A pod reaches the webhook past the server's own ServiceAccount plugin: its ServiceAccount
    // exists, whatever the cache has seen yet.
    if let objects::Body::Pod(p) = &obj.body {
        let name = if p.service_account_name.is_empty() { "default" } else { p.service_account_name.as_str() };
        state.service_accounts.entry(namespace.clone()).or_default().insert(name.to_string());
    }
    let mut checker = Checker::new(&mut state, opts);
    if let objects::Body::Autoscaler(_) | objects::Body::Vpa(_) = &obj.body {
        // The autoscaler as sent, not the cached one it replaces, decides its target's count.
        checker.expect(std::slice::from_ref(&obj));
    }
    answer(&checker.check_one(obj), unreplayed, enforce)
}

/// The answer to a decided request: its report's warnings (and `unreplayed`, the sentence
/// saying the policies were not replayed) fitted to the server's limits; with `enforce`, a
/// request none of whose pods would be created is refused in the first of them.
fn answer(report: &kubectl_quota_engine::check::DocumentReport, unreplayed: Option<String>, enforce: bool) -> Answer {
    // The webhooks its pods meet follow, named as `check` names them: the answer rests on them.
    let mut said = warnings::for_document(report);
    said.extend(warnings::webhooks(report, !said.is_empty()));
    said.extend(unreplayed);
    // Past the deadline the engine left steps undecided: said, allowed, never refused, and
    // counted late.
    let late: Vec<String> = report
        .undecided
        .iter()
        .filter(|u| u.late)
        .map(|u| format!("kubectl-quota guard: {}; `kubectl quota check -f` the manifest to see the rest", u.why))
        .collect();
    let ceiling = report.autoscaling.clone();
    if !late.is_empty() {
        said.extend(late);
        return Answer { allowed: true, warnings: fit(said), message: None, why: Why::Late, ceiling };
    }
    let said = fit(said);
    if said.is_empty() {
        return Answer { allowed: true, warnings: said, message: None, why: Why::Fits, ceiling };
    }
    if enforce && warnings::no_pod_created(report) {
        // The refusal says the first sentence; the others stay warnings.
        let mut rest = said.into_iter();
        let message = format!("kubectl-quota guard: {}", rest.next().unwrap_or_default());
        return Answer { allowed: false, warnings: rest.collect(), message: Some(message), why: Why::Denied, ceiling };
    }
    Answer { allowed: true, warnings: said, message: None, why: Why::Warned, ceiling }
}

/// Warnings as the API server will show them whole: control characters made visible, each cut
/// to [`MAX_WARNING_CHARS`] (ending in `...`), and no more than [`MAX_TOTAL_CHARS`] in all.
pub fn fit(warnings: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut total = 0;
    for w in warnings {
        let w = crate::escape::escape(&w).into_owned();
        let n = w.chars().count();
        let w = if n > MAX_WARNING_CHARS { w.chars().take(MAX_WARNING_CHARS - 3).collect::<String>() + "..." } else { w };
        let n = w.chars().count();
        if total + n > MAX_TOTAL_CHARS {
            break;
        }
        total += n;
        out.push(w);
    }
    out
}

#[cfg(test)]
mod policy_tests;
#[cfg(test)]
mod tests;
