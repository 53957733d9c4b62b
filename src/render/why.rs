//! `why`'s answer: the verdict in one line, what the server said, the replay of the next pod,
//! and the smallest changes that would let the waiting pods in.

use std::fmt::Write;

use colored::Colorize;
use kubectl_quota_engine::admission::Stage;
use kubectl_quota_engine::why::fixes::Blocker;
use kubectl_quota_engine::why::{Verdict, WhyReport};

use crate::render::plan::clean;

/// The answer for people.
pub fn render_text(r: &WhyReport) -> String {
    let mut out = String::new();
    let who = format!("{}/{}", r.kind.to_lowercase(), clean(&r.name));
    let pods = format!("{} of {} pods exist", r.current, r.wanted);
    let line = match r.verdict {
        Verdict::NotBlocked => format!("{who}: {}; {pods}", "not blocked".green()),
        Verdict::BlockedByQuota => {
            let q = r.quota.as_deref().map(|q| format!(" {}", clean(q))).unwrap_or_default();
            format!("{who}: {}; {pods}, {} waiting", format!("blocked by quota{q}").red().bold(), r.waiting)
        }
        Verdict::BlockedOther => {
            // Name PodSecurity when it is what refuses the pods (the replay or the event says so).
            let by = match r.refuser().and_then(Stage::pod_refuser).or(r.blocker.filter(|b| *b != Blocker::Other).map(Blocker::phrase)) {
                Some(who) => format!("blocked by {who} (not by quota)"),
                None => "blocked (not by quota)".to_string(),
            };
            format!("{who}: {}; {pods}, {} waiting", by.yellow().bold(), r.waiting)
        }
        Verdict::Unknown => format!("{who}: {}; {pods}, {} waiting", "pods missing, cause not reported".yellow(), r.waiting),
        Verdict::HeldByKueue => {
            let held = match r.kueue.as_ref().map(|k| &k.decision) {
                Some(kubectl_quota_engine::kueue::Decision::Pending(m)) => format!("waits in Kueue's queue: {}", clean(m)),
                Some(kubectl_quota_engine::kueue::Decision::Inadmissible(m)) => format!("Kueue cannot admit it: {}", clean(m)),
                Some(kubectl_quota_engine::kueue::Decision::Undecided(m)) => format!("suspended by Kueue ({})", clean(m)),
                _ => "suspended by Kueue".to_string(),
            };
            format!("{who}: {}; {pods}, {} waiting", held.yellow().bold(), r.waiting)
        }
        Verdict::WaitingForReady => format!("{who}: {}; {pods}, {} not created yet", "waiting for earlier pods to be Ready (not blocked)".yellow(), r.waiting),
    };
    let _ = writeln!(out, "{line}");
    for a in [&r.autoscaler, &r.vpa].into_iter().flatten() {
        let _ = writeln!(out, "  {}", clean(a));
    }
    if let (Some(m), Some(from)) = (&r.server_message, &r.server_message_from) {
        let _ = writeln!(out, "\nThe server said ({}):\n  {}", clean(from), clean(m));
    }
    // What was replayed: the next pod, or the claim its StatefulSet creates first.
    let replayed = match &r.replay {
        Some(d) if d.kind == "PersistentVolumeClaim" => format!("the next pod's claim {}", clean(&d.name)),
        _ => "the next pod".to_string(),
    };
    if let Some(m) = &r.replay_message {
        let _ = writeln!(out, "\nReplaying {replayed} through admission now:\n  {}", clean(m));
        if let Some(doc) = &r.replay {
            for q in doc.quotas.iter().filter(|q| q.applies) {
                for row in q.resources.iter().filter(|x| x.exceeded) {
                    let used = row.used.as_ref().map(|u| u.to_string()).unwrap_or_else(|| "?".into());
                    let _ = writeln!(out, "  quota {}: {} {} + used {} > hard {}", clean(&q.name), clean(&row.resource), row.requested, used, row.hard);
                }
            }
        }
    } else if r.replay.as_ref().is_some_and(|d| d.allowed) && r.waiting > 0 {
        let _ = writeln!(out, "\nReplaying {replayed} through admission now: {}", "admitted".green());
    }
    if !r.changes.is_empty() {
        let _ = writeln!(out, "\nSmallest changes that let them in:");
        for c in &r.changes {
            let _ = writeln!(out, "  - {}", clean(c));
        }
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {}", clean(n));
    }
    out
}

/// The answer as JSON.
pub fn render_json(r: &WhyReport) -> String {
    serde_json::to_string_pretty(r).unwrap_or_default() + "\n"
}

/// The report as YAML (the same fields as the JSON).
pub fn render_yaml(r: &WhyReport) -> String {
    super::yaml::to_string(r).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubectl_quota_engine::check::ClusterState;
    use kubectl_quota_engine::manifest::parse_str;
    use kubectl_quota_engine::objects::decode;
    use kubectl_quota_engine::why::{explain, Event};

    /// Compares with tests/golden/NAME.txt (`UPDATE_GOLDEN=1` rewrites it).
    fn golden(name: &str, got: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(format!("{name}.txt"));
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, got).unwrap();
        }
        assert_eq!(got, std::fs::read_to_string(&path).unwrap(), "{name}");
    }

    /// `why` of `workload` in `ns` of the cluster `state`, after one FailedCreate event (the
    /// object it is about, its message, how many times).
    fn why_of(state: &str, ns: &str, workload: &str, (object, message, count): (&str, &str, i32)) -> WhyReport {
        let docs = parse_str("state.yaml", state).unwrap();
        let cluster = ClusterState::from_objects(docs.iter().map(|d| decode(d).unwrap()), ns);
        let w = &parse_str("workload.yaml", workload).unwrap()[0];
        let event = Event { object: object.into(), reason: "FailedCreate".into(), message: message.into(), count, last_seen: "2026-11-22T23:32:08Z".into() };
        explain(&decode(w).unwrap(), &w.value, &[], &[event], &cluster, kubectl_quota_engine::version::Rules::current())
    }

    /// A Deployment of 5 stuck at 3 on requests.cpu, as the lab cluster's controller left it.
    #[test]
    fn why_output_for_a_deployment_stuck_on_quota() {
        colored::control::set_override(false);
        let state = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: team-a}\nspec: {hard: {requests.cpu: '1', pods: '10'}}\nstatus: {hard: {requests.cpu: '1', pods: '10'}, used: {requests.cpu: 900m, pods: '3'}}\n";
        let web = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: team-a}\nspec:\n  replicas: 5\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: 300m}}}]}\nstatus: {replicas: 3}\n";
        let said = "Error creating: pods \"web-6cf5f9fd8d-7lfml\" is forbidden: exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=900m, limited: requests.cpu=1";
        let r = why_of(state, "team-a", web, ("replicaset/web-6cf5f9fd8d", said, 2));
        golden("why-stuck", &render_text(&r));
        golden("why-stuck-json", &render_json(&r));
        golden("why-stuck-yaml", &render_yaml(&r));
    }

    /// A StatefulSet whose next claim a LimitRange refuses, in a namespace whose quota is full
    /// too: the claim is what the server refuses first, and its fix is the size that fits.
    #[test]
    fn why_output_for_a_statefulset_whose_claim_a_limit_range_refuses() {
        colored::control::set_override(false);
        let state = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: burstable, namespace: db}\nspec: {hard: {requests.cpu: '1'}}\nstatus: {hard: {requests.cpu: '1'}, used: {requests.cpu: '1'}}\n---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: disks, namespace: db}\nspec: {limits: [{type: PersistentVolumeClaim, max: {storage: 5Gi}}]}\n";
        let sts = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: pg, namespace: db}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: pg}}\n  template:\n    metadata: {labels: {app: pg}}\n    spec: {containers: [{name: pg, image: postgres, resources: {requests: {cpu: 500m}}}]}\n  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 8Gi}}}}]\nstatus: {replicas: 1, readyReplicas: 1}\n";
        let said = "create Claim data-pg-1 for Pod pg-1 in StatefulSet pg failed error: persistentvolumeclaims \"data-pg-1\" is forbidden: maximum storage usage per PersistentVolumeClaim is 5Gi, but request is 8Gi";
        let r = why_of(state, "db", sts, ("statefulset/pg", said, 4));
        golden("why-claim-limit-range", &render_text(&r));
    }
}
