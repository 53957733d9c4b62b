//! `why`: why a workload's pods are missing. From what the plugin read (the workload, the
//! ReplicaSets or Jobs it owns, their events) and the cluster state, this says how many pods
//! are waiting, what the server said when the controller tried (FailedCreate events and
//! ReplicaFailure conditions), replays the next pod against the current quotas, and names the
//! smallest change that would let it in.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::admission::{QuotaVerdict, RefusalReason, Stage};
use crate::check::{self, CheckOptions, ClusterState, DocumentReport};
use crate::objects::{type_info, Body, Meta, Object};
use crate::quantity::Quantity;
use crate::version::Rules;

pub mod fixes;

use fixes::Blocker;

/// An event of the workload or of an object it owns, as read from `core/v1` events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// `replicaset/web-5d4f8`, the object the event is about.
    pub object: String,
    pub reason: String,
    pub message: String,
    pub count: i32,
    /// RFC 3339; events sort by it.
    pub last_seen: String,
}

/// How the workload stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// Pods are missing and a quota refuses the next one.
    BlockedByQuota,
    /// Pods are missing for another reason the server reported.
    BlockedOther,
    /// Pods are missing but nothing says why (yet).
    Unknown,
    /// Pods are missing because the controller has not tried yet: an `OrderedReady`
    /// StatefulSet creates its next pod only once the ones before it are Ready. None was
    /// refused.
    WaitingForReady,
    /// Every pod the workload wants exists.
    NotBlocked,
    /// A Job Kueue keeps suspended: its ClusterQueue has not reserved quota for it (see
    /// `kueue`).
    HeldByKueue,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WhyReport {
    pub kind: String,
    pub name: String,
    pub namespace: String,
    pub verdict: Verdict,
    /// Pods the workload wants now, pods that exist, and the difference.
    pub wanted: i32,
    pub current: i32,
    pub waiting: i32,
    /// Who refuses the next pod (or its claim): `quota`, `LimitRange`, `PodSecurity`,
    /// `policy`, `webhook`, `ServiceAccount`, `other`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocker: Option<Blocker>,
    /// The quota that refuses the next pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<String>,
    /// What the server said when the controller last tried (event or condition).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_message: Option<String>,
    /// Where that message comes from (`event FailedCreate on replicaset/web-5d4f8, 7 times`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_message_from: Option<String>,
    /// The replay of the next pod against the current state: the message the server would
    /// give now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_message: Option<String>,
    /// The replay in full (per quota rows), as `check` reports a pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<DocumentReport>,
    /// The autoscaler that sets the count the workload wants, when it is why it wants more
    /// than quota allows: `HPA web wants 12, 8 exist: quota compute refuses the rest`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autoscaler: Option<String>,
    /// The VerticalPodAutoscaler whose target the refused pods ask for, when quota refuses
    /// them at that size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vpa: Option<String>,
    /// For a Job in one of Kueue's queues that Kueue keeps suspended: Kueue's answer now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kueue: Option<crate::kueue::KueueReport>,
    /// The smallest changes that would let the waiting pods in, most direct first.
    pub changes: Vec<String>,
    pub notes: Vec<String>,
}

impl WhyReport {
    /// Who refuses the next pod: the replay's answer, else what the server said (the one
    /// place its words are read for this).
    pub fn refuser(&self) -> Option<Stage> {
        let said = self.server_message.as_deref().is_some_and(|m| m.contains("is forbidden: violates PodSecurity "));
        if said {
            Some(Stage::PodSecurity)
        } else {
            self.replay.as_ref().and_then(DocumentReport::refuser)
        }
    }
}

fn int(v: &Value, path: &[&str]) -> Option<i64> {
    path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_i64)
}

/// (wanted, current) pods from the workload's spec and status and its children.
fn counts(kind: &str, raw: &Value, children: &[Value]) -> (i32, i32) {
    let spec_replicas = int(raw, &["spec", "replicas"]).unwrap_or(1);
    let status = |k: &str| int(raw, &["status", k]).unwrap_or(0);
    let (w, c) = match kind {
        "Deployment" | "ReplicaSet" | "ReplicationController" | "StatefulSet" => (spec_replicas, status("replicas")),
        "DaemonSet" => (status("desiredNumberScheduled"), status("currentNumberScheduled")),
        "Job" => {
            let parallelism = int(raw, &["spec", "parallelism"]).unwrap_or(1);
            let left = int(raw, &["spec", "completions"]).map(|c| c - status("succeeded")).unwrap_or(parallelism);
            (parallelism.min(left).max(0), status("active"))
        }
        "CronJob" => children
            .iter()
            .filter(|j| j["status"].get("completionTime").is_none())
            .map(|j| (int(j, &["spec", "parallelism"]).unwrap_or(1), int(j, &["status", "active"]).unwrap_or(0)))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1)),
        _ => (0, 0),
    };
    (w as i32, c as i32)
}

/// `ReplicaFailure` conditions of the workload and its children (message, where).
fn failure_conditions(raw: &Value, children: &[Value]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for o in std::iter::once(raw).chain(children) {
        let who = format!("{}/{}", o["kind"].as_str().unwrap_or("").to_lowercase(), o["metadata"]["name"].as_str().unwrap_or(""));
        for c in o["status"]["conditions"].as_array().into_iter().flatten() {
            if c["type"] == "ReplicaFailure" && c["status"] == "True" {
                out.push((c["message"].as_str().unwrap_or("").to_string(), format!("condition ReplicaFailure on {who}")));
            }
        }
    }
    out
}

/// The message of a Deployment's `Progressing=False` condition with reason
/// `ReplicaSetCreateError` while its controller has not synced its current generation: it
/// could not create the ReplicaSet of its current template. (The condition outlives a
/// rollback; the generation does not.)
pub fn replicaset_refused(kind: &str, raw: &Value) -> Option<String> {
    if kind != "Deployment" || int(raw, &["status", "observedGeneration"]).unwrap_or(0) >= int(raw, &["metadata", "generation"]).unwrap_or(0) {
        return None;
    }
    raw["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Progressing" && c["status"] == "False" && c["reason"] == "ReplicaSetCreateError")
        .map(|c| c["message"].as_str().unwrap_or("").to_string())
}

/// What a quota refusal says: the quota, and per resource (requested, used, limited) for an
/// "exceeded quota" message, or the resources to specify for a "must specify" one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Refusal {
    pub quota: Option<String>,
    pub exceeded: Vec<(String, Quantity, Quantity, Quantity)>,
    pub must_specify: Vec<String>,
}

fn pairs(s: &str) -> BTreeMap<String, Quantity> {
    s.split(',').filter_map(|p| p.split_once('=')).filter_map(|(k, v)| Some((k.trim().to_string(), Quantity::parse(v.trim()).ok()?))).collect()
}

/// Reads the quota admission plugin's message (`exceeded quota: compute, requested:
/// requests.cpu=500m, used: requests.cpu=1500m, limited: requests.cpu=2`; `failed quota:
/// compute: must specify requests.cpu`).
///
/// ```
/// use kubectl_quota_engine::why::parse_refusal;
///
/// let r = parse_refusal("pods \"web-1\" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=1800m, limited: requests.cpu=2");
/// assert_eq!(r.quota.as_deref(), Some("compute"));
/// assert_eq!(r.exceeded[0].0, "requests.cpu");
/// let m = parse_refusal("pods \"web-1\" is forbidden: failed quota: compute: must specify limits.cpu for: app; requests.cpu for: app");
/// assert_eq!(m.must_specify, vec!["limits.cpu", "requests.cpu"]);
/// ```
pub fn parse_refusal(message: &str) -> Refusal {
    let mut r = Refusal::default();
    if let Some(rest) = message.split_once("exceeded quota: ").map(|x| x.1) {
        let (name, rest) = rest.split_once(", requested: ").unwrap_or((rest, ""));
        r.quota = Some(name.trim().to_string());
        let (requested, rest) = rest.split_once(", used: ").unwrap_or((rest, ""));
        let (used, limited) = rest.split_once(", limited: ").unwrap_or((rest, ""));
        let (req, used, lim) = (pairs(requested), pairs(used), pairs(limited));
        let row = |k: &String, hard: &Quantity| (k.clone(), req.get(k).cloned().unwrap_or_default(), used.get(k).cloned().unwrap_or_default(), hard.clone());
        r.exceeded = lim.iter().map(|(k, h)| row(k, h)).filter(|(_, q, u, h)| u.add(q) > *h).collect();
        // The server listed only what it found exceeded: trust it when its numbers do not say.
        if r.exceeded.is_empty() {
            r.exceeded = lim.iter().map(|(k, h)| row(k, h)).collect();
        }
    } else if let Some(rest) = message.split_once("failed quota: ").map(|x| x.1) {
        if let Some((name, what)) = rest.split_once(": must specify ") {
            r.quota = Some(name.trim().to_string());
            // `limits.cpu,requests.cpu` before 1.24; `limits.cpu for: app; requests.cpu for: app` after.
            for part in what.split(';') {
                let res = part.split(" for:").next().unwrap_or("");
                r.must_specify.extend(res.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string));
            }
        } else {
            r.quota = rest.split(':').next().map(|s| s.trim().to_string());
        }
    }
    r
}

/// A message the quota admission plugin writes.
pub fn is_quota_message(m: &str) -> bool {
    m.contains("exceeded quota: ")
        || m.contains("failed quota: ")
        || m.contains("insufficient quota to ")
        || m.contains("status unknown for quota")
        || m.contains("error matching scopes of quota")
}

/// The most waiting pods whose total need is added up.
const MAX_SUMMED: i32 = 10_000;

fn times(q: &Quantity, n: i32) -> Quantity {
    (0..n).fold(Quantity::zero(), |acc, _| acc.add(q))
}

/// The container field a quota resource reads.
fn container_field(resource: &str) -> Option<(&'static str, String)> {
    match resource.split_once('.') {
        Some(("requests", r)) => Some(("requests", r.to_string())),
        Some(("limits", r)) => Some(("limits", r.to_string())),
        None if matches!(resource, "cpu" | "memory" | "ephemeral-storage") => Some(("requests", resource.to_string())),
        _ => None,
    }
}

/// The smallest raise of a quota's limit that admits the next pod, `used` and `hard` being the
/// quota's and `requested` what one pod asks: "raise quota q's requests.cpu by 500m (to
/// 2500m) to admit the next pod", and by how much for all `waiting` pods when there are
/// several. `blocked` words its fixes the same way.
///
/// ```
/// use kubectl_quota_engine::quantity::Quantity;
/// use kubectl_quota_engine::why::raise_change;
///
/// let q = |s: &str| Quantity::parse(s).unwrap();
/// assert_eq!(
///     raise_change("compute", "requests.cpu", &q("1500m"), &q("500m"), &q("1800m"), 3),
///     "raise quota compute's requests.cpu by 200m (to 2) to admit the next pod, or by 1200m (to 3) for all 3 waiting"
/// );
/// ```
pub fn raise_change(quota: &str, resource: &str, used: &Quantity, requested: &Quantity, hard: &Quantity, waiting: i32) -> String {
    raise_change_for("pod", quota, resource, used, requested, hard, waiting)
}

/// [`raise_change`] for what else a quota refuses one of per waiting pod: `"pod's claim"`,
/// `"ReplicaSet"`.
pub fn raise_change_for(what: &str, quota: &str, resource: &str, used: &Quantity, requested: &Quantity, hard: &Quantity, waiting: i32) -> String {
    let next = used.add(requested).sub(hard);
    let all = used.add(&times(requested, waiting.clamp(1, MAX_SUMMED))).sub(hard);
    let mut s = format!("raise quota {quota}'s {resource} by {next} (to {}) to admit the next {what}", hard.add(&next));
    if waiting > 1 && waiting <= MAX_SUMMED {
        s.push_str(&format!(", or by {all} (to {}) for all {waiting} waiting", hard.add(&all)));
    }
    s
}

/// The other way to make room for a Deployment's new ReplicaSet, offered only when it would
/// work: its old ReplicaSets scaled down to 0 (`history`, kept as rollout history) count
/// against `count/replicasets.apps`, and deleting one frees its place. Lowering
/// `revisionHistoryLimit` is not offered: the controller prunes history only after a
/// rollout completes (or while the Deployment is paused), never while its new ReplicaSet is
/// refused; and with no such ReplicaSet (the only old one is the live one) there is nothing
/// to free.
pub fn free_history_change(history: &[String]) -> Option<String> {
    let first = history.first()?;
    let more = match history.len() {
        1 => String::new(),
        n => format!(" (it has {n}: {})", history.iter().map(|h| format!("replicaset/{h}")).collect::<Vec<_>>().join(", ")),
    };
    Some(format!("or delete an old ReplicaSet of the Deployment scaled down to 0, kept as rollout history: `kubectl delete replicaset {first}`{more}"))
}

/// The ReplicaSets of `children` scaled down to 0 (spec and status), by name.
fn scaled_down(children: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = children
        .iter()
        .filter(|rs| int(rs, &["spec", "replicas"]) == Some(0) && int(rs, &["status", "replicas"]).unwrap_or(0) == 0)
        .filter_map(|rs| rs["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

/// Changes that would admit the pods the replay refused: raise the quota (for the next pod
/// and for all waiting), or lower a container's value into what is left.
fn changes_for(doc: &DocumentReport, pod: &crate::objects::Pod, waiting: i32) -> Vec<String> {
    let mut out = Vec::new();
    let what = if doc.kind == "PersistentVolumeClaim" { "pod's claim" } else { "pod" };
    for q in doc.quotas.iter().filter(|q| q.verdict == QuotaVerdict::Exceeded) {
        for row in q.resources.iter().filter(|r| r.exceeded) {
            let used = row.used.clone().unwrap_or_default();
            out.push(raise_change_for(what, &q.name, &row.resource, &used, &row.requested, &row.hard, waiting));
            let room = row.hard.sub(&used);
            let Some((side, name)) = container_field(&row.resource) else { continue };
            if room.sign() <= 0 {
                out.push(format!("quota {} has no {} left ({} used of {}): only raising it or freeing usage helps", q.name, row.resource, used, row.hard));
                continue;
            }
            // The container that sets the most of it gives up the difference.
            let cut = row.requested.sub(&room);
            let biggest = pod
                .containers
                .iter()
                .filter_map(|c| {
                    let list = if side == "requests" { &c.requests } else { &c.limits };
                    list.get(&name).map(|v| (c.name.clone(), v.clone()))
                })
                .max_by(|a, b| a.1.cmp(&b.1));
            if let Some((container, value)) = biggest {
                let lowered = value.sub(&cut);
                if lowered.sign() > 0 {
                    out.push(format!("or lower container {container}'s {side}.{name} from {value} to {lowered} (quota {} has {room} left)", q.name));
                }
            }
        }
    }
    out
}

/// Explains a workload. `raw` is the workload as read (spec and status), `children` the
/// ReplicaSets or Jobs it owns, `events` their events and its own; `rules` those of the
/// server's release. The steps, in order: the pods wanted and waiting, the server's last
/// word, a Deployment's refused new ReplicaSet, pods waiting for their claims, then the
/// next pod replayed against the quotas as they are and judged with what the server said.
pub fn explain(workload: &Object, raw: &Value, children: &[Value], events: &[Event], state: &ClusterState, rules: Rules) -> WhyReport {
    let mut r = WhyReport::waiting(workload, raw, children);
    r.take_server_word(raw, children, events);
    if r.new_replicaset_refused(raw, children, state) {
        return r;
    }
    let Body::Workload(w) = &workload.body else {
        r.notes.push(format!("{} does not create pods", r.kind));
        return r;
    };
    if r.waiting_for_claims(events, state) {
        return r;
    }
    if r.held_by_kueue(workload, raw, w, state) {
        return r;
    }
    if r.kind == "DaemonSet" && r.wanted == 0 {
        r.notes.push("the DaemonSet wants no pod: no node is eligible (or none is registered)".into());
    }
    let (template, vpa) = as_the_webhook_writes(workload, w, state);
    let claim = replay_next_claims(workload, w, r.current, state, rules);
    let pod = replay_next_pod(workload, &template, w, r.current, state, rules);
    let ranges = state.limit_ranges_in(&r.namespace);
    match claim {
        Some(claim) => {
            // The pod comes after its claims: what would refuse it once they are in.
            r.judge(raw, &template, claim, &ranges);
            if let (false, Some(m), true) = (pod.allowed, pod.server_error.as_deref(), r.waiting > 0) {
                r.notes.push(format!("once the claim is admitted, the pod is refused too: {m}"));
                r.changes.extend(changes_for(&pod, &template, r.waiting).into_iter().map(|c| format!("then {c}")));
            }
        }
        None => r.judge(raw, &template, pod, &ranges),
    }
    r.name_the_autoscaler(workload, state);
    if let (Some((name, targets)), Verdict::BlockedByQuota, true) = (vpa, r.verdict, r.waiting > 0) {
        r.vpa = Some(vpa_refuses(&name, &targets, r.quota.as_deref()));
    }
    r
}

/// The sentence naming the VerticalPodAutoscaler `name` whose target (`targets`: `app:
/// cpu=1`) the pods quota refuses ask for. `why` and `blocked` both say it.
pub fn vpa_refuses(name: &str, targets: &str, quota: Option<&str>) -> String {
    let quota = quota.map(|q| format!("quota {q}")).unwrap_or_else(|| "quota".into());
    format!("VPA {name} sets new pods to its target ({targets}): at that size {quota} refuses the rest")
}

/// The workload's pod template as its VerticalPodAutoscaler's webhook writes new pods (after
/// LimitRanger's defaults), and the VPA's name with what it wrote (`app: cpu=1`); the
/// template as it is when no VPA changes it.
fn as_the_webhook_writes(workload: &Object, w: &crate::objects::Workload, state: &ClusterState) -> (crate::objects::Pod, Option<(String, String)>) {
    let ns = workload.meta.namespace.clone().unwrap_or_default();
    let found: Vec<(&str, &str, &crate::objects::Vpa)> = state.vpas_of(&ns, workload).collect();
    let Some((name, vpa)) = crate::autoscaling::acting_vpa(found) else { return (w.template.clone(), None) };
    let mut pod = w.template.clone();
    let ranges = state.limit_ranges.get(&ns).map(Vec::as_slice).unwrap_or_default();
    if crate::admission::as_the_vpa_writes(&mut pod, ranges, name, vpa).is_empty() {
        return (w.template.clone(), None);
    }
    let targets: Vec<String> = pod
        .containers
        .iter()
        .filter_map(|c| {
            let (_, t) = vpa.recommendation.as_ref()?.iter().find(|(n, _)| *n == c.name)?;
            let said: Vec<String> = t.keys().filter_map(|k| c.requests.get(k).map(|q| format!("{k}={}", q.to_canonical()))).collect();
            Some(format!("{}: {}", c.name, said.join(", ")))
        })
        .collect();
    (pod, Some((name.to_string(), targets.join("; "))))
}

/// The sentence naming the autoscaler (of those `found` targeting a workload, the one that
/// acts) whose count a workload quota blocks wants: `HPA web wants 12, 8 exist: quota compute
/// refuses the rest`. `why` and `blocked` both say it.
pub fn autoscaler_wants(found: &[(&str, &crate::objects::Autoscaler)], wanted: i64, current: i64, quota: Option<&str>) -> Option<String> {
    let (Some((name, a)), _) = crate::autoscaling::the_one(found) else { return None };
    let quota = quota.map(|q| format!("quota {q}")).unwrap_or_else(|| "quota".into());
    Some(format!("{} {name} wants {wanted}, {current} exist: {quota} refuses the rest", a.kind.short()))
}

impl WhyReport {
    /// The report before any verdict: the pods the workload wants, has, and waits for.
    fn waiting(workload: &Object, raw: &Value, children: &[Value]) -> WhyReport {
        let kind = workload.type_info.kind.clone();
        let (wanted, current) = counts(&kind, raw, children);
        // A Deployment mid-rollout can have all its pods (old ones) while its new ReplicaSet
        // cannot create its own: those are waiting too.
        let rolling: i32 = if kind == "Deployment" {
            children.iter().map(|rs| (int(rs, &["spec", "replicas"]).unwrap_or(0) - int(rs, &["status", "replicas"]).unwrap_or(0)).max(0) as i32).sum()
        } else {
            0
        };
        let mut notes = vec![];
        if rolling > 0 && wanted <= current {
            notes.push(format!("a rollout is under way: its new ReplicaSet is missing {rolling} pod(s) while the old pods still run"));
        }
        WhyReport {
            kind,
            name: workload.meta.name.clone(),
            namespace: workload.meta.namespace.clone().unwrap_or_default(),
            verdict: Verdict::NotBlocked,
            wanted,
            current,
            waiting: (wanted - current).max(0).max(rolling),
            blocker: None,
            quota: None,
            server_message: None,
            server_message_from: None,
            replay_message: None,
            replay: None,
            autoscaler: None,
            vpa: None,
            kueue: None,
            changes: vec![],
            notes,
        }
    }

    /// The server's last word: the newest FailedCreate event, else a ReplicaFailure condition.
    fn take_server_word(&mut self, raw: &Value, children: &[Value], events: &[Event]) {
        let mut failed: Vec<&Event> = events.iter().filter(|e| e.reason == "FailedCreate").collect();
        failed.sort_by(|a, b| a.last_seen.cmp(&b.last_seen));
        if let Some(e) = failed.last() {
            self.server_message = Some(e.message.clone());
            let n = if e.count > 1 { format!(", {} times", e.count) } else { String::new() };
            self.server_message_from = Some(format!("event FailedCreate on {}{n}", e.object));
        } else if let Some((m, from)) = failure_conditions(raw, children).pop() {
            self.server_message = Some(m);
            self.server_message_from = Some(from);
        }
    }

    /// A Deployment whose new template has no ReplicaSet (refused): none of its pods can
    /// come, whatever the status of the generation before says. True when that decides it.
    fn new_replicaset_refused(&mut self, raw: &Value, children: &[Value], state: &ClusterState) -> bool {
        let Some(m) = replicaset_refused(&self.kind, raw) else { return false };
        self.waiting = self.wanted;
        if self.waiting == 0 {
            return false;
        }
        let refusal = parse_refusal(&m);
        self.verdict = if is_quota_message(&m) { Verdict::BlockedByQuota } else { Verdict::BlockedOther };
        self.quota = refusal.quota.clone();
        self.server_message_from = Some(format!("condition Progressing=False (ReplicaSetCreateError) on deployment/{}", self.name));
        self.server_message = Some(m);
        self.notes.push(format!(
            "the rollout has not started: the Deployment's new ReplicaSet is refused, so none of the {} pods of this template can be created; the {} old pods keep running",
            self.waiting, self.current
        ));
        for (res, requested, used, hard) in &refusal.exceeded {
            let q = refusal.quota.as_deref().unwrap_or("");
            // The quota as it stands now; as the message says when it was not read.
            let (used, hard) = state.quotas.get(&self.namespace).and_then(|list| list.iter().find(|x| x.name == q)).map_or((used.clone(), hard.clone()), |x| {
                (x.quota.status_used.get(res).cloned().unwrap_or_default(), x.quota.status_hard.get(res).cloned().unwrap_or_else(|| hard.clone()))
            });
            self.changes.push(raise_change_for("ReplicaSet", q, res, &used, requested, &hard, 1));
        }
        self.changes.extend(free_history_change(&scaled_down(children)));
        true
    }

    /// Pods that exist but wait for ResourceClaims the resourceclaim controller could not
    /// create. True when that decides it.
    fn waiting_for_claims(&mut self, events: &[Event], state: &ClusterState) -> bool {
        let waiting_for_claims = state.pods_without_claims(&self.namespace, &self.kind, &self.name);
        if self.waiting != 0 || waiting_for_claims.is_empty() {
            return false;
        }
        let names: Vec<String> = waiting_for_claims.iter().map(|p| format!("pod/{}", p.meta.name)).collect();
        self.waiting = i32::try_from(names.len()).unwrap_or(i32::MAX);
        let mut said: Vec<&Event> = events.iter().filter(|e| e.reason == "FailedResourceClaimCreation" && names.contains(&e.object)).collect();
        said.sort_by(|a, b| a.last_seen.cmp(&b.last_seen));
        self.notes.push(format!(
            "{} of its pods exist but are Pending: their ResourceClaims were not created ({})",
            self.waiting,
            names.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        ));
        match said.last() {
            Some(e) => {
                let refusal = parse_refusal(&e.message);
                self.verdict = if is_quota_message(&e.message) { Verdict::BlockedByQuota } else { Verdict::BlockedOther };
                self.quota = refusal.quota.clone();
                self.server_message = Some(e.message.clone());
                let n = if e.count > 1 { format!(", {} times", e.count) } else { String::new() };
                self.server_message_from = Some(format!("event FailedResourceClaimCreation on {}{n}", e.object));
                for (res, requested, used, hard) in &refusal.exceeded {
                    self.changes.push(raise_change_for("pod's claim", refusal.quota.as_deref().unwrap_or(""), res, used, requested, hard, self.waiting));
                }
            }
            None => {
                self.verdict = Verdict::Unknown;
                self.notes.push("no FailedResourceClaimCreation event says why (events expire after an hour by default)".into());
            }
        }
        true
    }

    /// A suspended Job in one of Kueue's queues: Kueue's answer now, and what would let it
    /// in. True when Kueue holds it (an admitted one goes on to its pods).
    fn held_by_kueue(&mut self, workload: &Object, raw: &Value, w: &crate::objects::Workload, state: &ClusterState) -> bool {
        use crate::kueue::Decision;
        if raw["spec"]["suspend"] != Value::Bool(true) || self.waiting == 0 {
            return false;
        }
        let Some(answer) = check::kueue_answer(state, workload, w, &self.namespace) else { return false };
        let k = match answer {
            Ok((k, _)) => k,
            Err(note) => {
                self.verdict = Verdict::HeldByKueue;
                self.notes.push(format!("the Job is suspended; {note}"));
                return true;
            }
        };
        let cq = k.cluster_queue.clone().unwrap_or_default();
        match &k.decision {
            Decision::Admitted => {
                let flavors: Vec<String> = k.flavors.iter().map(|(r, f)| format!("{r} in {f}")).collect();
                self.notes
                    .push(format!("Kueue's ClusterQueue {cq} has room for it now ({}): Kueue unsuspends it at its next scheduling pass", flavors.join(", ")));
                self.kueue = Some(k);
                return false;
            }
            Decision::Pending(m) => self.changes.extend(kueue_changes(&cq, m)),
            Decision::Inadmissible(m) if m.starts_with("LocalQueue ") => self.changes.push(format!(
                "create LocalQueue {} in namespace {} (naming a ClusterQueue), or label the Job with a LocalQueue that exists",
                k.local_queue, self.namespace
            )),
            Decision::Inadmissible(_) | Decision::Undecided(_) => {}
        }
        self.verdict = Verdict::HeldByKueue;
        self.kueue = Some(k);
        true
    }

    /// The autoscaler whose count the workload wants, when quota refuses pods of it.
    fn name_the_autoscaler(&mut self, workload: &Object, state: &ClusterState) {
        if self.verdict != Verdict::BlockedByQuota || self.waiting == 0 {
            return;
        }
        let found: Vec<(&str, &crate::objects::Autoscaler)> = state.autoscalers_of(&self.namespace, workload).collect();
        self.autoscaler = autoscaler_wants(&found, i64::from(self.wanted), i64::from(self.current), self.quota.as_deref());
    }

    /// The verdict from the replayed next pod and what the server said.
    fn judge(&mut self, raw: &Value, template: &crate::objects::Pod, doc: DocumentReport, ranges: &[(&str, &[crate::objects::LimitRangeItem])]) {
        self.replay_message = doc.server_error.clone();
        // The pod as LimitRanger judged it, its defaults in: what a LimitRange's fix names the
        // containers of (made only for such a fix).
        let judged = || {
            let mut pod = template.clone();
            crate::admission::limit_ranger::apply_limit_ranges(&mut pod, ranges);
            pod
        };
        let replayed = doc.server_error.as_deref().map(fixes::blocker_of);
        let said = self.server_message.as_deref().map(fixes::blocker_of);
        if self.waiting == 0 {
            self.verdict = Verdict::NotBlocked;
            if !doc.allowed {
                self.notes.push("every pod exists, but a new one (a scale-up or a rollout) would be refused now: see the replay".into());
            }
            self.replay = Some(doc);
            return;
        }
        let current = self.current;
        let server_says_quota = self.server_message.as_deref().is_some_and(is_quota_message);
        let ordered = self.kind == "StatefulSet" && raw["spec"]["podManagementPolicy"].as_str().unwrap_or("OrderedReady") == "OrderedReady";
        let ready = int(raw, &["status", "readyReplicas"]).unwrap_or(0) as i32;
        if ordered && self.server_message.is_none() && ready < current {
            // The controller waits for the pods before the next one: nothing was attempted.
            self.verdict = Verdict::WaitingForReady;
            self.notes.push(format!(
                "OrderedReady: the StatefulSet creates pod {}-{current} only once pods 0 to {} are Ready ({ready} of {current} are); no pod was refused",
                self.name,
                current - 1
            ));
            if !doc.allowed {
                self.notes.push(format!("when it is attempted, it would be refused now: {}", doc.server_error.clone().unwrap_or_default()));
            }
        } else if !doc.allowed && doc.refusal.as_ref().is_some_and(|x| x.reason != RefusalReason::Admission && x.reason != RefusalReason::Invalid) {
            self.verdict = Verdict::BlockedByQuota;
            self.blocker = Some(Blocker::Quota);
            self.quota = doc.refusal.as_ref().and_then(|x| x.quota.clone());
            self.changes = changes_for(&doc, template, self.waiting);
            self.changes.extend(doc.hints.iter().filter(|h| !h.starts_with("headroom")).cloned());
            self.disagreement(said, Blocker::Quota);
        } else if !doc.allowed {
            self.verdict = Verdict::BlockedOther;
            let blocker = replayed.unwrap_or(Blocker::Other);
            self.blocker = Some(blocker);
            let message = doc.server_error.as_deref().unwrap_or_default();
            self.changes.extend(fixes::fixes(message, (doc.kind == "Pod").then(judged).as_ref(), ranges));
            self.changes.extend(doc.hints.iter().cloned());
            self.disagreement(said, blocker);
        } else if server_says_quota {
            // The server refused on quota, but the pod fits now: usage went down since.
            self.verdict = Verdict::BlockedByQuota;
            self.blocker = Some(Blocker::Quota);
            self.notes.push("the next pod fits the quotas now: the controller will create it at its next retry (usage went down since the event)".into());
        } else if let Some(m) = self.server_message.clone() {
            // The replay admits what the server refused: its word, and its fix, stand.
            self.verdict = Verdict::BlockedOther;
            self.blocker = said;
            self.changes.extend(fixes::fixes(&m, Some(&judged()), ranges));
            self.notes
                .push("replayed now, the next pod is admitted: what refused it may have changed since (or the replay cannot see it, as a webhook)".into());
        } else {
            self.verdict = Verdict::Unknown;
            self.notes.push(
                "no FailedCreate event or ReplicaFailure condition says why: the controller may not have tried yet, or events have expired (1 hour by default)"
                    .into(),
            );
        }
        self.replay = Some(doc);
    }
}

impl WhyReport {
    /// When the server's last word names another refuser than the replay: why they differ.
    fn disagreement(&mut self, said: Option<Blocker>, now: Blocker) {
        if let Some(said) = said.filter(|s| *s != now) {
            self.notes.push(format!(
                "the server last refused for another reason ({}) than the replay now ({}): the cluster changed since, and {} refuses the next attempt",
                said.name(),
                now.name(),
                now.name()
            ));
        }
    }
}

/// What would let a Job Kueue holds in, from Kueue's message: the quota a flavor lacks.
pub(crate) fn kueue_changes(cq: &str, message: &str) -> Vec<String> {
    use crate::kueue::Short;
    crate::kueue::shortfalls(message)
        .into_iter()
        .map(|s| {
            let (res, flavor) = (s.resource, s.flavor);
            match s.short {
                Short::More(n) => {
                    format!("ClusterQueue {cq} needs {n} more {res} in flavor {flavor}: raise its nominalQuota there by {n}, or wait for its admitted Workloads to finish")
                }
                Short::Never(capacity) => format!(
                    "the Job asks for more {res} than flavor {flavor} of ClusterQueue {cq} ever holds ({capacity}): lower its requests or parallelism, or raise the nominalQuota"
                ),
            }
        })
        .collect()
}

/// A StatefulSet's claims for its next pod (ordinal `next`), as its controller creates them
/// before the pod, each through admission as it stands now: the first refused, when one is.
/// Claims that exist already are not created again.
fn replay_next_claims(workload: &Object, w: &crate::objects::Workload, next: i32, state: &ClusterState, rules: Rules) -> Option<DocumentReport> {
    if workload.type_info.kind != "StatefulSet" || w.volume_claim_templates.is_empty() {
        return None;
    }
    let ns = workload.meta.namespace.clone().unwrap_or_default();
    let mut scratch = state.clone();
    for (template, pvc) in &w.volume_claim_templates {
        let name = format!("{template}-{}-{next}", workload.meta.name);
        if state.existing.contains_key(&(ns.clone(), "persistentvolumeclaims".to_string(), name.clone())) {
            continue;
        }
        let claim = Object {
            origin: workload.origin.clone(),
            type_info: type_info("v1", "PersistentVolumeClaim"),
            meta: Meta { name, namespace: Some(ns.clone()), ..Meta::default() },
            body: Body::PersistentVolumeClaim(pvc.clone()),
            source: Default::default(),
        };
        let opts = CheckOptions { namespace: ns.clone(), rules, ..Default::default() };
        let mut report = check::check(&mut scratch, vec![claim], &opts);
        crate::report::explain(&mut report, state);
        let doc = report.documents.remove(0);
        if !doc.allowed {
            return Some(doc);
        }
    }
    None
}

/// The workload's next pod, as its controller would create it, checked against the quotas
/// as they are now.
fn replay_next_pod(
    workload: &Object,
    template: &crate::objects::Pod,
    w: &crate::objects::Workload,
    next: i32,
    state: &ClusterState,
    rules: Rules,
) -> DocumentReport {
    let ns = workload.meta.namespace.clone().unwrap_or_default();
    // A StatefulSet's pods are numbered; the others' names are the server's to generate.
    let name = if workload.type_info.kind == "StatefulSet" { format!("{}-{next}", workload.meta.name) } else { format!("{}-next", workload.meta.name) };
    let pod = Object {
        origin: workload.origin.clone(),
        type_info: type_info("v1", "Pod"),
        meta: Meta { name, generate_name: None, namespace: Some(ns.clone()), ..w.template_meta.clone() },
        body: Body::Pod(template.clone()),
        source: Default::default(),
    };
    let mut scratch = state.clone();
    let opts = CheckOptions { namespace: ns, rules, ..Default::default() };
    let mut report = check::check(&mut scratch, vec![pod], &opts);
    crate::report::explain(&mut report, state);
    report.documents.remove(0)
}

#[cfg(test)]
mod tests {
    /// A taint's reason after a shortfall in Kueue's message is not read into its fix.
    #[test]
    fn a_kueue_fix_names_only_the_quota_a_flavor_lacks() {
        let m = "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed, untolerated taint {instance spot NoSchedule <nil>} in flavor spot";
        assert_eq!(
            super::kueue_changes("batch", m),
            ["ClusterQueue batch needs 1 more cpu in flavor default: raise its nominalQuota there by 1, or wait for its admitted Workloads to finish"]
        );
    }
}
