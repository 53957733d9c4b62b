//! A changed template of an existing workload: its rollout, step by step, on the quotas'
//! counters (the steps themselves are [`crate::rollout`]'s).

use super::replay::{self, admit, pod_charge};
use super::report::CheckOptions;
use super::state::ClusterState;
use super::DocumentReport;
use crate::objects::{Body, Object, Workload};

/// How many pods of a workload run now: of its other templates (`old`) and of the new one.
struct Running {
    old: i32,
    new: i32,
}

/// A changed pod template of an existing workload whose `running` pods exist: its rollout, simulated step by step in [`crate::rollout`] with each template's pod charged as
/// admission would charge it. The notes in words, and the report (`None` when the rollout
/// cannot be simulated).
fn rollout_of(
    obj: &Object,
    old: &Workload,
    new: &Workload,
    running: Running,
    state: &ClusterState,
    ns: &str,
    opts: &CheckOptions,
) -> (Vec<String>, Option<crate::rollout::RolloutReport>) {
    let Running { old: old_running, new: new_running } = running;
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
    // What one pod of a template is charged, per quota.
    let charge = |w: &Workload| pod_charge(obj, w, Body::Pod(w.template.clone()), format!("{}-rollout", obj.meta.name), state, ns, opts);
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
    let outcome = crate::rollout::simulate(new.update_strategy, old_running, new_running, replicas, counters.clone());
    let no_surge = match new.update_strategy {
        crate::objects::UpdateStrategy::RollingUpdate { max_unavailable, .. } if matches!(outcome, crate::rollout::Outcome::Stalls { .. }) => {
            let s = crate::objects::UpdateStrategy::RollingUpdate { max_surge: crate::objects::IntOrPercent::Int(0), max_unavailable };
            Some(crate::rollout::simulate(s, old_running, new_running, replicas, counters))
        }
        _ => None,
    };
    let mut report = crate::rollout::RolloutReport::new(new.update_strategy, old_running, new_running, replicas, &outcome);
    // The peak with room for everything: what a quota must hold for the rollout to complete.
    let open: Vec<crate::rollout::Counter> = counters_for_peak
        .into_iter()
        .map(|mut c| {
            c.hard.values_mut().for_each(|v| *v = crate::quantity::Quantity::parse("1E").expect("valid"));
            c
        })
        .collect();
    report.peak = crate::rollout::peak_usage(new.update_strategy, old_running, new_running, replicas, open);
    (crate::rollout::describe(kind, new.update_strategy, replicas, &outcome, no_surge.as_ref()), Some(report))
}

impl super::Checker<'_> {
    /// The rollout an update of an existing workload starts, or the one under way that it
    /// leaves as it is. A Deployment's pods belong to its ReplicaSets, one per template: the
    /// pods of the ReplicaSet whose template the document has are new pods already (a rollout
    /// under way, a rollback taken straight back), and a template no ReplicaSet has needs a
    /// new ReplicaSet first, which quota may refuse (`count/replicasets.apps`).
    pub(super) fn rollout(&mut self, obj: &Object, old: &Workload, new: &Workload, running: i32, ns: &str, report: &mut DocumentReport) {
        let changed = old.template != new.template || old.images != new.images;
        let deployment = obj.type_info.kind == "Deployment";
        let revisions: Vec<Workload> = if deployment { self.state.revisions_of(ns, &obj.meta.name).into_iter().cloned().collect() } else { vec![] };
        let same = |w: &Workload| w.template == new.template && w.images == new.images;
        let own = revisions.iter().find(|r| same(r));
        let new_running = own.map_or(0, |r| r.current.unwrap_or(0)).clamp(0, running);
        let old_running = running - new_running;
        let wanted = new.replicas.unwrap_or(1).max(0);
        if !changed && (revisions.is_empty() || old_running == 0 || new_running >= wanted) {
            return;
        }
        // Where the rollout starts from: the template the other pods run.
        let from = if changed { old } else { revisions.iter().filter(|r| !same(r)).max_by_key(|r| r.current.unwrap_or(0)).unwrap_or(old) };
        if !changed && own.is_some() {
            report.notes.push(format!(
                "the rollout of this template is under way: {new_running} of {wanted} pods run it, {old_running} an older one (the ReplicaSets' status)"
            ));
        } else if !changed {
            report.notes.push(format!("no ReplicaSet of this Deployment has this template yet: its {old_running} pods run an older one"));
        } else if own.is_some() {
            report.notes.push(format!(
                "a ReplicaSet of this Deployment has this template: the controller scales it back up ({new_running} of its pods exist) instead of creating one"
            ));
        }
        if deployment && own.is_none() {
            let mut rs = replay::child(obj, "apps/v1", "ReplicaSet", format!("{}-<hash>", obj.meta.name), Body::Other, &new.template_meta);
            let (d, _) = admit(&mut rs, self.state, ns, self.opts);
            if let Some(r) = d.refusal {
                let message = format!("Failed to create new replica set {:?}: {}", rs.meta.name, r.server_error(&rs));
                report.notes.push(format!("the rollout does not start: the new ReplicaSet is refused ({message}); the old pods keep running"));
                let stall = crate::rollout::Outcome::Stalls {
                    new: 0,
                    wanted,
                    old: running,
                    step: 0,
                    quota: r.quota.clone().unwrap_or_default(),
                    resource: r.resources.first().cloned().unwrap_or_default(),
                    refusal: message,
                    missing: String::new(),
                };
                report.rollout = Some(crate::rollout::RolloutReport::new(new.update_strategy, running, 0, wanted, &stall));
                return;
            }
        }
        let (notes, rollout) = rollout_of(obj, from, new, Running { old: old_running, new: new_running }, self.state, ns, self.opts);
        report.notes.extend(notes);
        report.rollout = rollout;
    }
}
