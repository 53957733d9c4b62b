//! `blocked`: workloads whose pods a quota refused and which still miss pods, with the quota,
//! the resource and `why`'s smallest fix, from the newest quota FailedCreate event of each
//! controller or its ReplicaFailure condition.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{Collector, Options};
use crate::quantity::Quantity;
use crate::why::raise_change;

/// A workload a quota blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Blocked {
    pub namespace: String,
    /// `deployment/web`, `cronjob/nightly`, `statefulset/db`, ...
    pub workload: String,
    /// The controller the server refused (`replicaset/web-5d4f8`), when not the workload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Pods missing (`None`: the controller was not read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<String>,
    pub resources: Vec<String>,
    /// The smallest fix, as `why` words it.
    pub fix: String,
    /// The server's message and where it was read.
    pub message: String,
    pub from: String,
}

/// `blocked`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockedReport {
    /// Where it looked: `all namespaces`, `namespace team-a`.
    pub scope: String,
    pub blocked: Vec<Blocked>,
    pub notes: Vec<String>,
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
/// use kubectl_quota_engine::capacity::parse_refusal;
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

impl Collector {
    /// Workloads whose pods a quota refused: the newest quota `FailedCreate` event of each
    /// controller (else its `ReplicaFailure` condition), kept only while pods are missing.
    pub fn blocked(&self, opts: &Options) -> BlockedReport {
        let mut keys: BTreeSet<&(String, String)> = self.failures.keys().collect();
        keys.extend(self.controllers.iter().filter(|(_, c)| c.condition.is_some()).map(|(k, _)| k));
        let mut out = Vec::new();
        for key in keys {
            let (ns, obj) = key;
            if opts.namespaces.as_ref().is_some_and(|s| !s.contains(ns)) {
                continue;
            }
            let c = self.controllers.get(key);
            let waiting = c.map(|c| (c.wanted - c.current).max(0));
            if waiting == Some(0) {
                continue;
            }
            let (message, from) = match self.failures.get(key) {
                Some(f) => {
                    (f.message.clone(), format!("event FailedCreate on {obj}{}", if f.count > 1 { format!(", {} times", f.count) } else { String::new() }))
                }
                None => match c.and_then(|c| c.condition.clone()) {
                    Some(m) => (m, format!("condition ReplicaFailure on {obj}")),
                    None => continue,
                },
            };
            let refusal = parse_refusal(&message);
            let quota = refusal.quota.as_ref().and_then(|name| self.namespaces.get(ns).and_then(|n| n.quotas.iter().find(|q| q.name == *name)));
            let mut resources = Vec::new();
            let mut fixes = Vec::new();
            for (res, requested, used_then, hard_then) in &refusal.exceeded {
                resources.push(res.clone());
                let name = refusal.quota.as_deref().unwrap_or("");
                // The quota as it stands now, when it was read; as the message says otherwise.
                let (used, hard) = match quota {
                    Some(q) => (q.all_used.get(res).cloned().unwrap_or_default(), q.all_hard.get(res).cloned().unwrap_or_else(|| hard_then.clone())),
                    None => (used_then.clone(), hard_then.clone()),
                };
                if used.add(requested) <= hard {
                    fixes.push(format!("quota {name}'s {res} fits the next pod now: the controller creates it at its next retry"));
                } else {
                    fixes.push(raise_change(name, res, &used, requested, &hard, waiting.unwrap_or(1).clamp(1, i32::MAX as i64) as i32));
                }
            }
            for res in &refusal.must_specify {
                resources.push(res.clone());
                let (side, base) = res.split_once('.').unwrap_or(("requests", res));
                fixes.push(format!(
                    "add resources.{side}.{base} to the pod template's containers, or a LimitRange {} for {base}: quota {} requires it",
                    if side == "limits" { "default" } else { "defaultRequest" },
                    refusal.quota.as_deref().unwrap_or("")
                ));
            }
            if fixes.is_empty() {
                fixes.push(format!("see `kubectl quota why {} -n {ns}`", c.and_then(|c| c.owner.clone()).unwrap_or_else(|| obj.clone())));
            }
            let (workload, via) = match c.and_then(|c| c.owner.clone()) {
                Some(owner) => (owner, Some(obj.clone())),
                None => (obj.clone(), None),
            };
            out.push(Blocked { namespace: ns.clone(), workload, via, waiting, quota: refusal.quota.clone(), resources, fix: fixes.join("; "), message, from });
        }
        let mut notes = self.notes.clone();
        if !self.seen.contains("Event") && !self.notes.iter().any(|n| n.contains("events")) {
            notes.push("no Event objects were read: only ReplicaFailure conditions say what is blocked (a Job or StatefulSet has none)".into());
        }
        BlockedReport { scope: opts.scope(), blocked: out, notes }
    }
}
