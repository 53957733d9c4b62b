//! A changed template of an existing workload: its rollout, step by step, on the quotas'
//! counters (the steps themselves are [`crate::rollout`]'s).

use super::replay::pod_charge;
use super::report::CheckOptions;
use super::state::ClusterState;
use crate::objects::{Body, Object, Workload};

/// How many pods of a workload run now: of its other templates (`old`) and of the new one.
pub(super) struct Running {
    pub(super) old: i32,
    pub(super) new: i32,
}

/// A changed pod template of an existing workload whose `running` pods exist: its rollout, simulated step by step in [`crate::rollout`] with each template's pod charged as
/// admission would charge it. The notes in words, and the report (`None` when the rollout
/// cannot be simulated).
pub(super) fn rollout_of(
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
