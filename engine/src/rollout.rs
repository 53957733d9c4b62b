//! Rollouts under quota: when an existing workload's pod template changes, its controller
//! replaces the pods step by step, and every new pod is charged when it is created while the
//! old ones still count until they are deleted. This simulates those steps on the quotas'
//! counters and says whether the rollout completes or where it stalls, and what would
//! unblock it.
//!
//! Pods are taken to become ready at once (the controllers wait for readiness; quota does not
//! care how long). Charges per pod come from the caller (the admission replay in `check`).

use serde::Serialize;

use crate::objects::{IntOrPercent, UpdateStrategy};
use crate::quantity::Quantity;
use crate::resources::ResourceList;

/// One quota's counters during the rollout.
#[derive(Debug, Clone)]
pub struct Counter {
    pub name: String,
    pub hard: ResourceList,
    pub used: ResourceList,
    /// What one old pod and one new pod are charged to this quota.
    pub old_pod: ResourceList,
    pub new_pod: ResourceList,
}

/// How the rollout ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Completes,
    /// Stalls with `new` of `wanted` new pods (and `old` old pods left) at `step` (the
    /// simulation's round, from 1); `quota` refuses `resource`; the refusal in words.
    Stalls {
        new: i32,
        wanted: i32,
        old: i32,
        step: i32,
        quota: String,
        resource: String,
        refusal: String,
        missing: String,
    },
    /// OnDelete: nothing is replaced until pods are deleted.
    Waits,
    /// More replicas than the step-by-step simulation follows.
    TooLarge,
}

/// The most replicas a rollout is simulated for, pod by pod.
pub const MAX_SIMULATED: i32 = 1000;

/// A rollout's counts: surge rounds up, unavailable rounds down (as the controllers do).
pub fn resolve(v: IntOrPercent, replicas: i32, round_up: bool) -> i32 {
    match v {
        IntOrPercent::Int(i) => i.max(0),
        IntOrPercent::Percent(p) => {
            let x = i64::from(p.max(0)) * i64::from(replicas.max(0));
            (if round_up { (x + 99) / 100 } else { x / 100 }) as i32
        }
    }
}

/// A pod the quotas refuse: the words, and what one quota lacks for it.
#[derive(Debug, Clone)]
struct Refused {
    refusal: String,
    quota: String,
    resource: String,
    short: Quantity,
}

struct Sim {
    counters: Vec<Counter>,
    /// Per counter, the most it has counted of each resource at any step.
    peak: Vec<ResourceList>,
}

impl Sim {
    fn new(counters: Vec<Counter>) -> Sim {
        let peak = counters.iter().map(|c| c.used.clone()).collect();
        Sim { counters, peak }
    }
}

impl Sim {
    /// Charges one new pod, or says which quota refuses it.
    fn create(&mut self, what: &str) -> Result<(), Box<Refused>> {
        for c in &self.counters {
            for (r, q) in &c.new_pod {
                let Some(hard) = c.hard.get(r) else { continue };
                let used = c.used.get(r).cloned().unwrap_or_default();
                let after = used.add(q);
                if after > *hard {
                    let refusal = format!("quota {} refuses {what}: {r} {q} + used {used} > hard {hard}", c.name);
                    return Err(Box::new(Refused { refusal, quota: c.name.clone(), resource: r.clone(), short: after.sub(hard) }));
                }
            }
        }
        for (c, peak) in self.counters.iter_mut().zip(&mut self.peak) {
            for (r, q) in c.new_pod.clone() {
                if c.hard.contains_key(&r) {
                    let u = c.used.entry(r.clone()).or_insert_with(Quantity::zero);
                    *u = u.add(&q);
                    let p = peak.entry(r).or_insert_with(Quantity::zero);
                    if *u > *p {
                        *p = u.clone();
                    }
                }
            }
        }
        Ok(())
    }

    fn delete_old(&mut self) {
        for c in &mut self.counters {
            for (r, q) in c.old_pod.clone() {
                if let Some(u) = c.used.get_mut(&r) {
                    *u = u.sub(&q);
                }
            }
        }
    }
}

/// Deployment (and DaemonSet) RollingUpdate with pods ready at once: scale the new set up to
/// `replicas + surge` pods in all, scale the old one down to keep `replicas - unavailable`
/// available, until only new pods are left or nothing moves.
fn rolling(sim: &mut Sim, old_running: i32, new_running: i32, replicas: i32, surge: i32, unavailable: i32) -> Result<Outcome, Stall> {
    let (surge, unavailable) = if surge == 0 && unavailable == 0 { (0, 1) } else { (surge, unavailable) };
    let (mut old, mut new) = (old_running, new_running);
    let min_available = replicas - unavailable;
    let mut step = 0;
    loop {
        step += 1;
        let mut moved = false;
        let mut stalled = None;
        // Scale up the new pods within the surge.
        let room = (replicas + surge - (old + new)).min(replicas - new);
        for _ in 0..room.max(0) {
            let what = if old + new >= replicas { "a surge pod" } else { "a new pod" };
            match sim.create(what) {
                Ok(()) => {
                    new += 1;
                    moved = true;
                }
                Err(e) => {
                    stalled = Some(e);
                    break;
                }
            }
        }
        // Scale down the old pods while enough stay available (new ones are ready at once).
        let down = (old + new - min_available).min(old).max(0);
        for _ in 0..down {
            sim.delete_old();
            old -= 1;
            moved = true;
        }
        if new >= replicas && old == 0 {
            return Ok(Outcome::Completes);
        }
        if !moved {
            return match stalled {
                Some(r) => Err(Stall { new, wanted: replicas, old, step, refused: r }),
                None => Ok(Outcome::Completes),
            };
        }
    }
}

/// Where a simulated rollout stopped.
struct Stall {
    new: i32,
    wanted: i32,
    old: i32,
    step: i32,
    refused: Box<Refused>,
}

impl From<Stall> for Outcome {
    fn from(s: Stall) -> Outcome {
        let r = *s.refused;
        Outcome::Stalls {
            new: s.new,
            wanted: s.wanted,
            old: s.old,
            step: s.step,
            quota: r.quota,
            resource: r.resource,
            refusal: r.refusal,
            missing: String::new(),
        }
    }
}

/// Simulates the rollout of `strategy` for a workload with `old_running` pods of other
/// templates and `new_running` of the new one (a rollout under way, or a Deployment's older
/// ReplicaSet taken back) moving to `replicas` pods of the new template (`replicas` is the
/// node count for a DaemonSet). A
/// stalled rollout says the headroom that lets it complete: the simulation is run again with
/// each shortfall added, until it completes.
pub fn simulate(strategy: UpdateStrategy, old_running: i32, new_running: i32, replicas: i32, counters: Vec<Counter>) -> Outcome {
    if replicas > MAX_SIMULATED || old_running > MAX_SIMULATED {
        return Outcome::TooLarge;
    }
    let first = run(strategy, old_running, new_running, replicas, counters.clone());
    let Outcome::Stalls { .. } = first else { return first };
    let mut added: std::collections::BTreeMap<(String, String), Quantity> = std::collections::BTreeMap::new();
    let mut raised = counters;
    for _ in 0..(2 * replicas.max(1) + 2) {
        let mut sim = Sim::new(raised.clone());
        match run_sim(&mut sim, strategy, old_running, new_running, replicas) {
            Err(stall) => {
                let r = stall.refused;
                let e = added.entry((r.quota.clone(), r.resource.clone())).or_insert_with(Quantity::zero);
                *e = e.add(&r.short);
                for c in raised.iter_mut().filter(|c| c.name == r.quota) {
                    if let Some(h) = c.hard.get_mut(&r.resource) {
                        *h = h.add(&r.short);
                    }
                }
            }
            Ok(_) => break,
        }
    }
    let missing: Vec<String> = added.iter().map(|((q, r), v)| format!("{v} more {r} in quota {q}")).collect();
    match first {
        Outcome::Stalls { missing: _, new, wanted, old, step, quota, resource, refusal } => {
            Outcome::Stalls { new, wanted, old, step, quota, resource, refusal, missing: missing.join(" and ") }
        }
        other => other,
    }
}

fn run(strategy: UpdateStrategy, old_running: i32, new_running: i32, replicas: i32, counters: Vec<Counter>) -> Outcome {
    let mut sim = Sim::new(counters);
    run_sim(&mut sim, strategy, old_running, new_running, replicas).unwrap_or_else(Outcome::from)
}

/// Per counter (by name), the most the rollout makes it count of each resource at any step:
/// what a quota must hold for the rollout to complete (`plan` sizes quotas to it). Counters
/// whose hard limits have room for everything give the rollout's true peak.
pub fn peak_usage(strategy: UpdateStrategy, old_running: i32, new_running: i32, replicas: i32, counters: Vec<Counter>) -> Vec<(String, ResourceList)> {
    if replicas > MAX_SIMULATED || old_running > MAX_SIMULATED {
        return vec![];
    }
    let names: Vec<String> = counters.iter().map(|c| c.name.clone()).collect();
    let mut sim = Sim::new(counters);
    let _ = run_sim(&mut sim, strategy, old_running, new_running, replicas);
    names.into_iter().zip(sim.peak).collect()
}

/// One run: the outcome, or where it stalled.
fn run_sim(sim: &mut Sim, strategy: UpdateStrategy, old_running: i32, new_running: i32, replicas: i32) -> Result<Outcome, Stall> {
    match strategy {
        UpdateStrategy::None => Ok(Outcome::Completes),
        UpdateStrategy::OnDelete => Ok(Outcome::Waits),
        UpdateStrategy::RollingUpdate { max_surge, max_unavailable } => {
            let surge = resolve(max_surge, replicas, true);
            let unavailable = resolve(max_unavailable, replicas, false);
            rolling(sim, old_running, new_running, replicas, surge, unavailable)
        }
        UpdateStrategy::Recreate => {
            for _ in 0..old_running {
                sim.delete_old();
            }
            for n in new_running.max(0)..replicas {
                if let Err(r) = sim.create("a new pod") {
                    return Err(Stall { new: n, wanted: replicas, old: 0, step: n + 1, refused: r });
                }
            }
            Ok(Outcome::Completes)
        }
        UpdateStrategy::Ordered { partition } => {
            // Highest ordinal first; each old pod is deleted, then recreated from the new template.
            let replaced = (old_running.min(replicas) - partition.max(0)).max(0);
            for new in 0..replaced {
                sim.delete_old();
                if let Err(r) = sim.create("the replacement pod") {
                    return Err(Stall { new, wanted: replaced, old: old_running - new - 1, step: new + 1, refused: r });
                }
            }
            Ok(Outcome::Completes)
        }
    }
}

/// A rollout as the check reports it (JSON `rollout`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutReport {
    /// How the controller replaces pods, in words (`RollingUpdate, maxSurge 1 and maxUnavailable 0 of 6`).
    pub strategy: String,
    /// `completes`, `stalls`, `waits` (OnDelete) or `notSimulated` (too many replicas).
    pub outcome: &'static str,
    /// Pods of other templates when the rollout starts.
    pub old_pods: i32,
    /// Pods of the new template that exist already (a rollout under way, a ReplicaSet taken
    /// back).
    #[serde(skip_serializing_if = "is_zero")]
    pub new_pods: i32,
    /// Pods of the new template wanted.
    pub replicas: i32,
    /// Where it stalls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall: Option<RolloutStall>,
    /// Per quota, the most the rollout makes it count of each resource at any step, were the
    /// quota's hard limits no bound ([`peak_usage`]): what `plan` sizes quotas for.
    #[serde(skip)]
    pub peak: Vec<(String, ResourceList)>,
}

/// Where a rollout stalls: the step, the pods on each side, the quota and resource that refuse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStall {
    /// The simulation's round (from 1): scale the new pods up, then the old ones down.
    pub step: i32,
    pub new_pods: i32,
    pub old_pods: i32,
    pub quota: String,
    pub resource: String,
    /// The refusal in words.
    pub message: String,
    /// The headroom that lets the rollout complete (empty when none is known).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub missing: String,
}

impl RolloutReport {
    /// The report of a simulated rollout of `strategy` from `old_pods` pods to `replicas`.
    pub fn new(strategy: UpdateStrategy, old_pods: i32, new_pods: i32, replicas: i32, outcome: &Outcome) -> RolloutReport {
        let (outcome, stall) = match outcome {
            Outcome::Completes => ("completes", None),
            Outcome::Waits => ("waits", None),
            Outcome::TooLarge => ("notSimulated", None),
            Outcome::Stalls { new, old, step, quota, resource, refusal, missing, .. } => (
                "stalls",
                Some(RolloutStall {
                    step: *step,
                    new_pods: *new,
                    old_pods: *old,
                    quota: quota.clone(),
                    resource: resource.clone(),
                    message: refusal.clone(),
                    missing: missing.clone(),
                }),
            ),
        };
        RolloutReport { strategy: strategy_words(strategy, replicas), outcome, old_pods, new_pods, replicas, stall, peak: vec![] }
    }

    /// Whether the rollout stops short.
    pub fn stalls(&self) -> bool {
        self.stall.is_some()
    }
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// A strategy in words (`None` for workloads that do not roll out).
fn strategy_words(strategy: UpdateStrategy, replicas: i32) -> String {
    match strategy {
        UpdateStrategy::RollingUpdate { max_surge, max_unavailable } => format!(
            "RollingUpdate, maxSurge {} and maxUnavailable {} of {replicas}",
            resolve(max_surge, replicas, true),
            resolve(max_unavailable, replicas, false)
        ),
        UpdateStrategy::Recreate => "Recreate: the old pods go first".into(),
        UpdateStrategy::Ordered { partition } if partition > 0 => format!("RollingUpdate, one pod at a time down to partition {partition}"),
        UpdateStrategy::Ordered { .. } => "RollingUpdate, one pod at a time".into(),
        UpdateStrategy::OnDelete => "OnDelete".into(),
        UpdateStrategy::None => "none".into(),
    }
}

/// The rollout's outcome in words, for the check's notes; `with_no_surge` is the outcome of
/// the same rollout with maxSurge 0 (for a Deployment or DaemonSet that stalls on a surge).
pub fn describe(kind: &str, strategy: UpdateStrategy, replicas: i32, outcome: &Outcome, with_no_surge: Option<&Outcome>) -> Vec<String> {
    if strategy == UpdateStrategy::None {
        return vec![];
    }
    let how = strategy_words(strategy, replicas);
    if *outcome == Outcome::TooLarge {
        // One statement: what is not simulated is not said to be.
        return vec![format!(
            "the pod template changed: the {kind} rolls out ({how}); with more than {MAX_SIMULATED} replicas the rollout is not simulated step by step"
        )];
    }
    let mut notes =
        vec![format!("the pod template changed: the {kind} rolls out ({how}); simulated with quota charged at each step, pods taken to become ready at once")];
    match outcome {
        Outcome::Completes => notes.push("the rollout completes under the quotas".into()),
        Outcome::Waits => notes.push("OnDelete: no pod is replaced until you delete it; each deleted pod is recreated from the new template".into()),
        Outcome::TooLarge => {}
        Outcome::Stalls { new, wanted, old, refusal, missing, .. } => {
            notes.push(format!("the rollout stalls with {new} of {wanted} new pods ({old} old left): {refusal}"));
            let mut fixes = Vec::new();
            if with_no_surge == Some(&Outcome::Completes) {
                // The server refuses maxSurge and maxUnavailable both 0.
                let unavailable_zero =
                    matches!(strategy, UpdateStrategy::RollingUpdate { max_unavailable, .. } if resolve(max_unavailable, replicas, false) == 0);
                let also = if unavailable_zero { " and maxUnavailable to 1" } else { "" };
                fixes.push(format!("set maxSurge to 0{also} (old pods then go before new ones come)"));
            }
            if !missing.is_empty() {
                fixes.push(format!("add {missing}"));
            }
            if !fixes.is_empty() {
                notes.push(format!("to unblock it: {}", fixes.join(", or ")));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rollout_too_large_to_simulate_is_said_once_and_never_said_simulated() {
        let strategy = UpdateStrategy::Recreate;
        let notes = describe("Deployment", strategy, 5000, &Outcome::TooLarge, None);
        assert_eq!(
            notes,
            ["the pod template changed: the Deployment rolls out (Recreate: the old pods go first); with more than 1000 replicas the rollout is not simulated step by step"]
        );
        assert!(describe("Deployment", strategy, 5, &Outcome::Completes, None)[0].contains("simulated with quota charged at each step"));
    }

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    fn cpu_quota(hard: &str, used: &str, old: &str, new: &str) -> Vec<Counter> {
        let l = |v: &str| ResourceList::from([("requests.cpu".to_string(), q(v))]);
        vec![Counter { name: "compute".into(), hard: l(hard), used: l(used), old_pod: l(old), new_pod: l(new) }]
    }

    #[test]
    fn surge_rounds_up_and_unavailable_rounds_down() {
        let cases = [
            (IntOrPercent::Percent(25), 5, true, 2),
            (IntOrPercent::Percent(25), 5, false, 1),
            (IntOrPercent::Int(3), 5, true, 3),
            (IntOrPercent::Percent(0), 5, true, 0),
        ];
        for (v, r, up, want) in cases {
            assert_eq!(resolve(v, r, up), want, "{v:?} of {r}");
        }
    }

    #[test]
    fn rollouts_under_quota() {
        let ru = |s, u| UpdateStrategy::RollingUpdate { max_surge: IntOrPercent::Int(s), max_unavailable: IntOrPercent::Int(u) };
        let stall = |new, wanted, old, step, refusal: &str, missing: &str| Outcome::Stalls {
            new,
            wanted,
            old,
            step,
            quota: "compute".into(),
            resource: "requests.cpu".into(),
            refusal: refusal.into(),
            missing: missing.into(),
        };
        let rows: Vec<(&str, UpdateStrategy, i32, Vec<Counter>, Outcome)> = vec![
            ("room for the surge: completes", ru(1, 0), 4, cpu_quota("3", "2", "500m", "500m"), Outcome::Completes),
            (
                "no room for a surge pod and none may go: stalls at once",
                ru(1, 0),
                4,
                cpu_quota("2", "2", "500m", "500m"),
                stall(0, 4, 4, 1, "quota compute refuses a surge pod: requests.cpu 500m + used 2 > hard 2", "500m more requests.cpu in quota compute"),
            ),
            ("maxUnavailable frees room first: completes", ru(1, 1), 4, cpu_quota("2", "2", "500m", "500m"), Outcome::Completes),
            (
                "bigger new pods: stalls part way",
                ru(0, 1),
                4,
                cpu_quota("2", "2", "500m", "1"),
                // One old pod goes (maxUnavailable 1), which leaves 500m: not enough for a 1-cpu pod;
                // completing needs room for 4 new pods of 1 cpu: 2 more.
                stall(0, 4, 3, 2, "quota compute refuses a new pod: requests.cpu 1 + used 1500m > hard 2", "2 more requests.cpu in quota compute"),
            ),
            ("recreate frees everything first", UpdateStrategy::Recreate, 4, cpu_quota("2", "2", "500m", "500m"), Outcome::Completes),
            ("statefulset one at a time", UpdateStrategy::Ordered { partition: 0 }, 3, cpu_quota("1500m", "1500m", "500m", "500m"), Outcome::Completes),
            (
                "statefulset with bigger pods stalls at the first replacement",
                UpdateStrategy::Ordered { partition: 1 },
                3,
                cpu_quota("1500m", "1500m", "500m", "600m"),
                stall(
                    0,
                    2,
                    2,
                    1,
                    "quota compute refuses the replacement pod: requests.cpu 600m + used 1 > hard 1500m",
                    "200m more requests.cpu in quota compute",
                ),
            ),
            ("ondelete waits", UpdateStrategy::OnDelete, 3, cpu_quota("1", "1", "500m", "500m"), Outcome::Waits),
        ];
        for (what, strategy, replicas, counters, want) in rows {
            assert_eq!(simulate(strategy, replicas, 0, replicas, counters), want, "{what}");
        }
    }
}
