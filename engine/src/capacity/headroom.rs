//! `capacity`'s autoscalers: per namespace, what its HPAs and KEDA ScaledObjects may still ask
//! for (each one's maximum less the pods its target runs, times a pod of the target's
//! template, at its VerticalPodAutoscaler's target where one acts) and what its VPAs may (the
//! running pods brought from their requests up to the VPA's target) against the room each
//! quota has left: the namespaces where a spike hits quota first.

use std::collections::BTreeSet;

use serde::Serialize;

use super::{Collector, Options};
use crate::quantity::Quantity;
use crate::resources::ResourceList;

/// An autoscaler counted, as its namespace's headroom names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scaled {
    /// `HPA web`, `ScaledObject api`.
    pub autoscaler: String,
    /// `deployment/web`.
    pub target: String,
    /// The pods its target runs now.
    pub current: i64,
    pub max_replicas: i64,
}

/// One resource of a namespace's headroom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeadroomRow {
    pub resource: String,
    /// What the autoscalers may still ask for, all at their maximum.
    pub may_ask: Quantity,
    /// The room left (hard - used) in the quota with the least of it; `None`: no quota for
    /// every pod caps it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub room: Option<Quantity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<String>,
    /// `may_ask` as a whole percent of `room` (above 100: the spike hits the quota).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent_of_room: Option<u64>,
    /// How much more than the room they may ask for (a raise that lets them all scale).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short: Option<Quantity>,
}

/// A namespace's autoscalers against its quotas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Headroom {
    pub namespace: String,
    pub autoscalers: Vec<Scaled>,
    /// The capped resources first, the one nearest its quota first.
    pub resources: Vec<HeadroomRow>,
}

impl Headroom {
    /// The row nearest its quota (the first), when a quota caps what they ask for.
    pub fn tightest(&self) -> Option<&HeadroomRow> {
        self.resources.first().filter(|r| r.room.is_some())
    }

    /// Whether the autoscalers at their maximum ask for more than some quota has left.
    pub fn spike_refused(&self) -> bool {
        self.resources.iter().any(|r| r.short.is_some())
    }
}

/// `q` added `n` times (exact: by doubling).
fn times(q: &Quantity, mut n: i64) -> Quantity {
    let (mut out, mut step) = (Quantity::zero(), q.clone());
    while n > 0 {
        if n & 1 == 1 {
            out = out.add(&step);
        }
        step = step.add(&step);
        n >>= 1;
    }
    out
}

impl Collector {
    /// The workloads autoscalers target that were not read (for the caller to read and add):
    /// (namespace, target).
    pub fn unread_scale_targets(&self) -> Vec<(String, crate::objects::ScaleTarget)> {
        let mut out = Vec::new();
        for ((ns, key), found) in &self.autoscalers {
            if self.workloads.contains_key(&(ns.clone(), key.clone())) || self.known_absent(&(ns.clone(), key.clone())) {
                continue;
            }
            if let Some(t) = found.iter().find_map(|(_, a)| a.target.clone()) {
                out.push((ns.clone(), t));
            }
        }
        for ((ns, key), found) in &self.vpas {
            let k = (ns.clone(), key.clone());
            if self.workloads.contains_key(&k) || self.autoscalers.contains_key(&k) || self.known_absent(&k) {
                continue;
            }
            if let Some(t) = found.iter().find_map(|(_, _, v)| v.target.clone()) {
                out.push((ns.clone(), t));
            }
        }
        out
    }

    /// Whether the workload `key` (namespace, `kind/name`) is known not to exist: its GET said
    /// so, or the state holds every Deployment and it is not among them.
    fn known_absent(&self, key: &(String, String)) -> bool {
        !self.undecoded_targets.contains(key) && (self.absent_targets.contains(key) || (key.1.starts_with("deployment/") && self.seen.contains("Deployment")))
    }

    /// The targets (`kind/name`) of namespace `ns`'s autoscalers and VPAs.
    fn scaled_targets(&self, ns: &str) -> BTreeSet<&String> {
        let in_ns = |k: &(String, String)| k.0 == ns;
        let start = (ns.to_string(), String::new());
        self.autoscalers
            .range(start.clone()..)
            .map(|(k, _)| k)
            .take_while(|k| in_ns(k))
            .chain(self.vpas.range(start..).map(|(k, _)| k).take_while(|k| in_ns(k)))
            .map(|(_, t)| t)
            .collect()
    }

    /// Each namespace in scope with autoscalers, where a spike hits quota first first. The
    /// autoscalers whose target was not read are gaps in the answer (`gaps`); those whose
    /// target does not exist are a normal state of a cluster, said in `remarks`.
    pub(super) fn headroom(&self, opts: &Options, gaps: &mut Vec<String>, remarks: &mut Vec<String>) -> Vec<Headroom> {
        let mut out = Vec::new();
        let (mut unread, mut absent) = (Vec::new(), Vec::new());
        for (name, ns) in self.in_scope(opts) {
            let mut scaled = Vec::new();
            let mut may_ask = ResourceList::new();
            let targets = self.scaled_targets(name);
            for target in targets {
                let key = (name.clone(), target.clone());
                let hpa = self.autoscalers.get(&key).and_then(|found| {
                    let list: Vec<(&str, &crate::objects::Autoscaler)> = found.iter().map(|(n, a)| (n.as_str(), a)).collect();
                    crate::autoscaling::the_one(&list).0.map(|(n, a)| (n.to_string(), a))
                });
                let vpa = self.vpas.get(&key).and_then(|found| crate::autoscaling::acting_vpa(found.iter().map(|(n, c, v)| (n.as_str(), c.as_str(), v))));
                let Some(w) = self.workloads.get(&key) else {
                    let who = hpa.as_ref().map(|(n, a)| format!("{} {n}", a.kind.short())).or(vpa.map(|(n, _)| format!("VPA {n}"))).unwrap_or_default();
                    let named = format!("{who} in {name} ({target})");
                    if self.known_absent(&key) {
                        absent.push(named)
                    } else {
                        unread.push(named)
                    }
                    continue;
                };
                // A pod as the VPA's webhook writes it (LimitRange defaults left out, as above).
                let at_target = vpa.zip(w.template.as_ref()).and_then(|((n, v), t)| {
                    let mut p = t.clone();
                    (!crate::admission::as_the_vpa_writes(&mut p, &[], n, v).is_empty()).then(|| super::pod_charge(&p))
                });
                if let Some((who, a)) = &hpa {
                    let more = (i64::from(a.max) - w.current).max(0);
                    for (res, q) in at_target.as_ref().unwrap_or(&w.per_pod) {
                        super::add_to(&mut may_ask, res, &times(q, more));
                    }
                    scaled.push(Scaled {
                        autoscaler: format!("{} {who}", a.kind.short()),
                        target: target.clone(),
                        current: w.current,
                        max_replicas: i64::from(a.max),
                    });
                }
                // The running pods a VPA brings to its target ask for the difference.
                if let (Some((n, v)), Some(at)) = (vpa, &at_target) {
                    if v.mode.is_some_and(|m| m.changes_running_pods()) {
                        for (res, q) in at {
                            let more = q.sub(w.per_pod.get(res).unwrap_or(&Quantity::zero()));
                            if more.sign() > 0 {
                                super::add_to(&mut may_ask, res, &times(&more, w.current));
                            }
                        }
                        scaled.push(Scaled { autoscaler: format!("VPA {n}"), target: target.clone(), current: w.current, max_replicas: w.current });
                    }
                }
            }
            if scaled.is_empty() {
                continue;
            }
            let resources = headroom_rows(ns, may_ask, opts);
            if resources.is_empty() {
                continue;
            }
            out.push(Headroom { namespace: name.clone(), autoscalers: scaled, resources });
        }
        let rank = |h: &Headroom| {
            let t = h.tightest();
            (std::cmp::Reverse(h.spike_refused()), std::cmp::Reverse(t.map(|r| r.percent_of_room.unwrap_or(u64::MAX)).unwrap_or(0)))
        };
        out.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.namespace.cmp(&b.namespace)));
        if !unread.is_empty() {
            gaps.push(format!("autoscalers whose target was not read, not counted in what autoscalers may ask for: {}", unread.join(", ")));
        }
        if !absent.is_empty() {
            remarks.push(format!("autoscalers whose target does not exist, nothing to count for them: {}", absent.join(", ")));
        }
        out
    }
}

/// A namespace's rows: per resource, what its autoscalers `may_ask` for beyond what runs now
/// against the room its tightest unscoped quota leaves; capped rows first (those they would
/// overflow, then the nearest its quota), only `opts.resource`'s when given.
fn headroom_rows(ns: &super::Namespace, may_ask: ResourceList, opts: &Options) -> Vec<HeadroomRow> {
    let mut resources: Vec<HeadroomRow> = may_ask
        .into_iter()
        .map(|(resource, may_ask)| {
            let room = ns
                .quotas
                .iter()
                .filter(|q| q.scoped.is_none())
                .filter_map(|q| q.hard.get(&resource).map(|h| (h.sub(q.used.get(&resource).unwrap_or(&Quantity::zero())), q)))
                .min_by(|a, b| a.0.cmp(&b.0));
            let (room, quota) = match room {
                Some((r, q)) => (Some(if r.sign() < 0 { Quantity::zero() } else { r }), Some(q.name.clone())),
                None => (None, None),
            };
            let percent_of_room = room.as_ref().filter(|r| !r.is_zero()).and_then(|r| may_ask.percent_of(r));
            let short = room.as_ref().map(|r| may_ask.sub(r)).filter(|s| s.sign() > 0);
            HeadroomRow { resource, may_ask, room, quota, percent_of_room, short }
        })
        .collect();
    if let Some(r) = &opts.resource {
        let want = super::rows_named(r).unwrap_or_default();
        resources.retain(|x| want.contains(&x.resource));
    }
    // Capped rows first: those they would overflow, then the nearest its quota.
    let key = |r: &HeadroomRow| (r.room.is_none(), std::cmp::Reverse(r.short.is_some()), std::cmp::Reverse(r.percent_of_room.unwrap_or(u64::MAX)));
    resources.sort_by(|a, b| key(a).cmp(&key(b)).then(a.resource.cmp(&b.resource)));
    resources
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_adds_exactly() {
        let q: Quantity = "500m".parse().unwrap();
        for (n, want) in [(0, "0"), (1, "500m"), (12, "6"), (7, "3500m")] {
            assert_eq!(times(&q, n).to_string(), want);
        }
    }
}
