//! A decided document in a few short sentences, as the guard hands them to the API server to
//! show at apply time (admission warnings): the pods quota will refuse, the claims that keep
//! pods Pending, a rollout that will stall, the scope or priority class that made a scoped
//! quota apply, and a Job Kueue keeps suspended. Nothing here changes a verdict.
//!
//! ```
//! use kubectl_quota_engine::check::{check, CheckOptions, ClusterState};
//! use kubectl_quota_engine::{manifest, objects, report::warnings};
//!
//! let quota = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute}\nspec: {hard: {requests.cpu: '1'}}\nstatus: {hard: {requests.cpu: '1'}, used: {requests.cpu: '0'}}\n";
//! let web = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: app, image: x, resources: {requests: {cpu: 500m}}}]}\n";
//! let decode = |name, text| manifest::parse_str(name, text).unwrap().iter().map(|d| objects::decode(d).unwrap()).collect::<Vec<_>>();
//! let mut state = ClusterState::from_objects(decode("q.yaml", quota), "default");
//! let opts = CheckOptions { namespace: "default".into(), ..CheckOptions::default() };
//! let r = check(&mut state, decode("web.yaml", web), &opts);
//! assert_eq!(
//!     warnings::for_document(&r.documents[0]),
//!     ["quota compute will refuse 2 of the 4 pods of deployment/web: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1"]
//! );
//! ```

use crate::admission::{QuotaReport, QuotaVerdict, Stage};
use crate::check::{DocumentReport, Outcome};

/// What is said about one document: nothing when every pod it asks for is created (or when the
/// object itself is refused: the API server's own error says that), else one sentence per
/// thing that goes wrong, the most important first.
pub fn for_document(d: &DocumentReport) -> Vec<String> {
    // An autoscaler's document speaks of its target's pods, named as the target.
    let what = d.autoscaling.as_ref().map_or_else(|| format!("{}/{}", d.kind.to_lowercase(), d.name), |c| c.target.clone());
    let mut out = Vec::new();
    // A Job in one of Kueue's queues: its pods as they come once it runs, then Kueue's answer
    // (the pods' refusal is the one an enforcing guard gives).
    let kueue = d.kueue.as_ref();
    match d.outcome {
        Outcome::Admitted | Outcome::Refused | Outcome::Undecided => {}
        Outcome::PodsRefused => {
            let wanted = d.replicas.unwrap_or(0);
            let admitted = d.replicas_admitted.unwrap_or(0);
            let count = match (d.kind.as_str(), admitted) {
                // One pod per node: counted against the nodes the check was told of.
                ("DaemonSet", 0) => "the pods (one per node)".to_string(),
                (_, 0) if wanted == 1 => "the pod".to_string(),
                (_, 0) => format!("all {wanted} pods"),
                _ => format!("{} of the {wanted} pods", wanted - admitted),
            };
            let refusing = refusing_quota(d);
            let who = match refusing {
                Some(q) => format!("quota {}", q.name),
                None if d.pod_refuser.and_then(Stage::pod_refuser).is_some() => d.pod_refuser.and_then(Stage::pod_refuser).unwrap_or_default().to_string(),
                None => "the API server".to_string(),
            };
            let message = d.pod_message.as_deref().unwrap_or("refused");
            let when = match kueue {
                Some(k) if k.holds() => "once Kueue admits it, ",
                Some(_) => "Kueue admits it now, but ",
                None => "",
            };
            out.push(format!("{when}{who} will refuse {count} of {what}: {message}"));
            if let Some(q) = refusing.filter(|q| !q.scopes.is_empty()) {
                out.push(format!("quota {} applies to the pods of {what}: {}", q.name, q.why.trim_start_matches("applies: ")));
            }
        }
        Outcome::PodsPending => {
            let wanted = d.replicas.unwrap_or(1);
            let pending = d.pods_pending.unwrap_or(0);
            let message = d.pod_message.as_deref().unwrap_or("refused");
            let pods = if d.replicas.is_some() { format!("{pending} of the {wanted} pods of {what}") } else { format!("pod {}", d.name) };
            out.push(format!("quota will refuse the ResourceClaims of {pods}, which then stay Pending: {message}"));
        }
        Outcome::RolloutStalls => {
            if let Some(r) = &d.rollout {
                match &r.stall {
                    Some(s) => {
                        let mut text =
                            format!("the rollout of {what} will stall with {} of {} new pods ({} old left): {}", s.new_pods, r.replicas, s.old_pods, s.message);
                        if !s.missing.is_empty() {
                            text.push_str(&format!("; it needs {}", s.missing));
                        }
                        out.push(text);
                    }
                    None => out.push(format!("the rollout of {what} will stall under quota")),
                }
            }
        }
    }
    out.extend(kueue.and_then(|k| k.sentence(&what)));
    // An autoscaler that quota stops below its maximum (or its minimum): said even when every
    // pod wanted now fits, since the refusals come with the next scale-up.
    if let Some(c) = d.autoscaling.as_ref().filter(|c| c.capped()) {
        if !matches!(d.outcome, Outcome::Refused | Outcome::Undecided) {
            out.push(c.sentence());
        }
    }
    // Running pods a VerticalPodAutoscaler evicts that cannot come back at its target.
    if let Some(v) = d.vpa.as_ref().filter(|v| v.capped()) {
        if !matches!(d.outcome, Outcome::Refused | Outcome::Undecided) {
            out.push(v.sentence());
        }
    }
    out
}

/// The admission webhooks the answer for a decided document rests on, in the sentences its
/// report names them with ([`crate::check::WebhookSeen::sentence`]), to follow what
/// [`for_document`] said (`said`): then every webhook its object and pods meet, mutating and
/// validating. When nothing was said (every pod fits as written), only the mutating webhooks
/// that see its pods where no dry run answered what they add and some quota applies to them
/// (what they add may not fit), after a sentence saying the pods fit as written.
pub fn webhooks(d: &DocumentReport, said: bool) -> Vec<String> {
    if said {
        return d.webhooks.iter().map(|w| w.sentence()).collect();
    }
    let quota_applies = d.pods.as_ref().is_some_and(|p| p.quotas.iter().any(|q| q.applies && !q.unrelated));
    let unanswered: Vec<String> = d.webhooks.iter().filter(|w| w.mutating && !w.dry_run && w.sees == "its pods").map(|w| w.sentence()).collect();
    if !quota_applies || unanswered.is_empty() || !matches!(d.outcome, Outcome::Admitted) {
        return vec![];
    }
    let what = d.autoscaling.as_ref().map_or_else(|| format!("{}/{}", d.kind.to_lowercase(), d.name), |c| c.target.clone());
    let mut out = vec![format!("the pods of {what} fit quota as written")];
    out.extend(unanswered);
    out
}

/// Whether no pod the document asks for can be created: the workload is admitted, and quota
/// (or the server) refuses every one of its pods.
pub fn no_pod_created(d: &DocumentReport) -> bool {
    d.outcome == Outcome::PodsRefused && d.replicas_admitted == Some(0) && d.replicas.is_some_and(|w| w > 0)
}

/// The quota that refuses the workload's first refused pod, as the pod's explanation names it.
fn refusing_quota(d: &DocumentReport) -> Option<&QuotaReport> {
    d.pods
        .as_ref()
        .filter(|p| !p.allowed)?
        .quotas
        .iter()
        .find(|q| matches!(q.verdict, QuotaVerdict::Exceeded | QuotaVerdict::MustSpecify | QuotaVerdict::StatusUnknown))
}
