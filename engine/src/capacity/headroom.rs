//! `capacity`'s autoscalers: per namespace, what its HPAs and KEDA ScaledObjects may still ask
//! for (each one's maximum less the pods its target runs, times a pod of the target's
//! template) against the room each quota has left: the namespaces where a spike hits quota
//! first.

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
            if self.workloads.contains_key(&(ns.clone(), key.clone())) {
                continue;
            }
            if let Some(t) = found.iter().find_map(|(_, a)| a.target.clone()) {
                out.push((ns.clone(), t));
            }
        }
        out
    }

    /// Each namespace in scope with autoscalers, where a spike hits quota first first; the
    /// autoscalers whose target was not read are in `notes`.
    pub(super) fn headroom(&self, opts: &Options, notes: &mut Vec<String>) -> Vec<Headroom> {
        let mut out = Vec::new();
        let mut unread = Vec::new();
        for (name, ns) in self.in_scope(opts) {
            let mut scaled = Vec::new();
            let mut may_ask = ResourceList::new();
            for ((_, target), found) in self.autoscalers.range((name.clone(), String::new())..).take_while(|((n, _), _)| n == name) {
                let list: Vec<(&str, &crate::objects::Autoscaler)> = found.iter().map(|(n, a)| (n.as_str(), a)).collect();
                let (Some((who, a)), _) = crate::autoscaling::the_one(&list) else { continue };
                let who = format!("{} {who}", a.kind.short());
                let Some(w) = self.workloads.get(&(name.clone(), target.clone())) else {
                    unread.push(format!("{who} in {name} ({target})"));
                    continue;
                };
                let more = (i64::from(a.max) - w.current).max(0);
                for (res, q) in &w.per_pod {
                    super::add_to(&mut may_ask, res, &times(q, more));
                }
                scaled.push(Scaled { autoscaler: who, target: target.clone(), current: w.current, max_replicas: i64::from(a.max) });
            }
            if scaled.is_empty() {
                continue;
            }
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
            if resources.is_empty() {
                continue;
            }
            // Capped rows first: those they would overflow, then the nearest its quota.
            let key = |r: &HeadroomRow| (r.room.is_none(), std::cmp::Reverse(r.short.is_some()), std::cmp::Reverse(r.percent_of_room.unwrap_or(u64::MAX)));
            resources.sort_by(|a, b| key(a).cmp(&key(b)).then(a.resource.cmp(&b.resource)));
            out.push(Headroom { namespace: name.clone(), autoscalers: scaled, resources });
        }
        let rank = |h: &Headroom| {
            let t = h.tightest();
            (std::cmp::Reverse(h.spike_refused()), std::cmp::Reverse(t.map(|r| r.percent_of_room.unwrap_or(u64::MAX)).unwrap_or(0)))
        };
        out.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.namespace.cmp(&b.namespace)));
        if !unread.is_empty() {
            notes.push(format!("autoscalers whose target was not read, not counted in what autoscalers may ask for: {}", unread.join(", ")));
        }
        out
    }
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
