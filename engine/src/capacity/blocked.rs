//! `blocked`: workloads whose pods the server refused and which still miss pods, with who
//! refused (a quota, a LimitRange, PodSecurity, a policy or webhook, ...), the quota and
//! resource where it is quota, and `why`'s smallest fix, from the newest FailedCreate event of
//! each controller or its ReplicaFailure condition.

use std::collections::BTreeSet;

use serde::Serialize;

use super::{Collector, Options};
use crate::why::fixes::{blocker_of, Blocker};
use crate::why::{autoscaler_wants, free_history_change, parse_refusal, raise_change_for, vpa_refuses, Refusal};

/// A workload the server blocks.
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
    /// Who refuses its pods: `quota`, `LimitRange`, `PodSecurity`, `policy`, `webhook`,
    /// `ServiceAccount`, `other`.
    pub blocker: Blocker,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<String>,
    pub resources: Vec<String>,
    /// The smallest fix, as `why` words it (every fix, joined with `; `).
    pub fix: String,
    /// The fixes one by one, most direct first: a table shows the first.
    pub fixes: Vec<String>,
    /// The autoscaler whose count the workload wants, as `why` words it: `HPA web wants 12,
    /// 8 exist: quota compute refuses the rest`; else the VerticalPodAutoscaler whose target
    /// its new pods ask for (`VPA web sets new pods to its target (app: cpu=1): ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autoscaler: Option<String>,
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

impl Collector {
    /// The resources a refusal names and the smallest fix for each: a quota's worked out from
    /// the quota as it stands now (as the message says when the quota was not read), any other
    /// refuser's from the server's `message`; `what` is what the quota refuses one of per
    /// waiting pod (`pod`, `pod's claim`).
    fn fixes(&self, ns: &str, workload: &str, message: &str, refusal: &Refusal, waiting: i32, what: &str) -> (Vec<String>, Vec<String>) {
        let name = refusal.quota.as_deref().unwrap_or("");
        let quota = self.namespaces.get(ns).and_then(|n| n.quotas.iter().find(|q| q.name == name));
        let mut resources = Vec::new();
        let mut fixes = Vec::new();
        for (res, requested, used_then, hard_then) in &refusal.exceeded {
            resources.push(res.clone());
            let (used, hard) = match quota {
                Some(q) => (q.all_used.get(res).cloned().unwrap_or_default(), q.all_hard.get(res).cloned().unwrap_or_else(|| hard_then.clone())),
                None => (used_then.clone(), hard_then.clone()),
            };
            if res == "count/replicasets.apps" {
                let raise = raise_change_for("ReplicaSet", name, res, &used, requested, &hard, 1);
                fixes.push(match free_history_change(&self.scaled_down(ns, workload)) {
                    Some(free) => format!("{raise}, {free}"),
                    None => raise,
                });
            } else if used.add(requested) <= hard {
                fixes.push(format!("quota {name}'s {res} fits the next {what} now: the controller creates it at its next retry"));
            } else {
                fixes.push(raise_change_for(what, name, res, &used, requested, &hard, waiting));
            }
        }
        // What quota requires every container to set: one fix for all of it.
        if let [res] = refusal.must_specify.as_slice() {
            let (side, base) = res.split_once('.').unwrap_or(("requests", res));
            fixes.push(format!(
                "add resources.{side}.{base} to the pod template's containers, or a LimitRange {} for {base}: quota {name} requires it",
                if side == "limits" { "default" } else { "defaultRequest" },
            ));
        } else if !refusal.must_specify.is_empty() {
            let (mut requests, mut limits) = (Vec::new(), Vec::new());
            for res in &refusal.must_specify {
                match res.split_once('.') {
                    Some(("limits", base)) => limits.push(base),
                    Some((_, base)) => requests.push(base),
                    None => requests.push(res.as_str()),
                }
            }
            let set: Vec<String> = [("requests", &requests), ("limits", &limits)]
                .into_iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(side, v)| format!("{side} for {}", v.join(" and ")))
                .collect();
            fixes.push(format!("set {} in the pod template's containers, or LimitRange defaults for them: quota {name} requires them", set.join(", ")));
        }
        resources.extend(refusal.must_specify.iter().cloned());
        fixes.extend(crate::why::fixes::fixes(message, None, &[]));
        (resources, fixes)
    }

    /// The autoscaler that sets the count `workload` (`deployment/web`) of `ns` wants, when
    /// one targets it: its controller `c`'s pods wanted and existing, as `why` says it.
    fn autoscaler_of(&self, ns: &str, workload: &str, c: Option<&super::Controller>, quota: Option<&str>) -> Option<String> {
        let key = (ns.to_string(), workload.to_string());
        let hpa = self.autoscalers.get(&key).zip(c).and_then(|(found, c)| {
            let found: Vec<(&str, &crate::objects::Autoscaler)> = found.iter().map(|(n, a)| (n.as_str(), a)).collect();
            autoscaler_wants(&found, c.wanted, c.current, quota)
        });
        hpa.or_else(|| {
            // The VPA's target as its recommendation has it (the template is not read here).
            let found = self.vpas.get(&key)?;
            let (name, v) = crate::autoscaling::acting_vpa(found.iter().map(|(n, c, v)| (n.as_str(), c.as_str(), v)))?;
            let targets: Vec<String> = v
                .recommendation
                .as_ref()?
                .iter()
                .map(|(c, t)| {
                    let said: Vec<String> = t.iter().map(|(k, q)| format!("{k}={}", q.to_canonical())).collect();
                    format!("{c}: {}", said.join(", "))
                })
                .collect();
            Some(vpa_refuses(name, &targets.join("; "), quota))
        })
    }

    /// The ReplicaSets `owner` (`deployment/web`) owns that are scaled down to 0, by name.
    fn scaled_down(&self, ns: &str, owner: &str) -> Vec<String> {
        self.controllers
            .iter()
            .filter(|((n, obj), c)| n == ns && obj.starts_with("replicaset/") && c.owner.as_deref() == Some(owner) && c.wanted == 0 && c.current == 0)
            .map(|((_, obj), _)| obj.trim_start_matches("replicaset/").to_string())
            .collect()
    }

    /// Workloads whose pods the server refused: the newest `FailedCreate` event of each
    /// controller (else its `ReplicaFailure` condition), kept only while pods are missing.
    pub fn blocked(&self, opts: &Options) -> BlockedReport {
        // (A pod's own events are about its claims: below.)
        let mut keys: BTreeSet<&(String, String)> = self.failures.keys().filter(|(_, o)| !o.starts_with("pod/")).collect();
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
                    Some(m) if obj.starts_with("deployment/") => (m, format!("condition Progressing=False (ReplicaSetCreateError) on {obj}")),
                    Some(m) => (m, format!("condition ReplicaFailure on {obj}")),
                    None => continue,
                },
            };
            let refusal = parse_refusal(&message);
            let waiting_pods = waiting.unwrap_or(1).clamp(1, i64::from(i32::MAX)) as i32;
            let workload = c.and_then(|c| c.owner.clone()).unwrap_or_else(|| obj.clone());
            let blocker = blocker_of(&message);
            let (resources, mut fixes) = self.fixes(ns, &workload, &message, &refusal, waiting_pods, "pod");
            if fixes.is_empty() {
                fixes.push(format!("see `kubectl quota why {} -n {ns}`", c.and_then(|c| c.owner.clone()).unwrap_or_else(|| obj.clone())));
            }
            let (workload, via) = match c.and_then(|c| c.owner.clone()) {
                Some(owner) => (owner, Some(obj.clone())),
                None => (obj.clone(), None),
            };
            let autoscaler = self.autoscaler_of(ns, &workload, c, refusal.quota.as_deref());
            out.push(Blocked {
                namespace: ns.clone(),
                workload,
                via,
                waiting,
                blocker,
                quota: refusal.quota.clone(),
                resources,
                fix: fixes.join("; "),
                fixes,
                autoscaler,
                message,
                from,
            });
        }
        out.extend(self.blocked_on_claims(opts));
        out.extend(self.held_by_kueue(opts));
        let mut notes = self.notes.clone();
        if !self.seen.contains("Event") && !self.notes.iter().any(|n| n.contains("events")) {
            notes.push("no Event objects were read: only ReplicaFailure conditions say what is blocked (a Job or StatefulSet has none)".into());
        }
        BlockedReport { scope: opts.scope(), blocked: out, notes }
    }

    /// Jobs Kueue keeps suspended for want of quota in their ClusterQueue: each waiting
    /// Workload, in Kueue's words, with what would let it in.
    fn held_by_kueue(&self, opts: &Options) -> Vec<Blocked> {
        let mut out = Vec::new();
        for ((ns, owner), w) in &self.kueue_pending {
            if opts.namespaces.as_ref().is_some_and(|s| !s.contains(ns)) {
                continue;
            }
            let cq = self.local_queues.get(&(ns.clone(), w.queue.clone()));
            let mut fixes = cq.map(|cq| crate::why::kueue_changes(cq, &w.message)).unwrap_or_default();
            if fixes.is_empty() {
                fixes.push(format!("see `kubectl quota why {owner} -n {ns}`"));
            }
            // The resources Kueue names short.
            let resources: BTreeSet<String> = crate::kueue::shortfalls(&w.message).into_iter().map(|s| s.resource.to_string()).collect();
            let cq = cq.map(|c| format!(", ClusterQueue {c}")).unwrap_or_default();
            out.push(Blocked {
                namespace: ns.clone(),
                workload: owner.clone(),
                via: Some(format!("workload/{}", w.workload)),
                waiting: Some(w.pods),
                blocker: Blocker::Kueue,
                quota: None,
                resources: resources.into_iter().collect(),
                fix: fixes.join("; "),
                fixes,
                autoscaler: None,
                message: w.message.clone(),
                from: format!("condition QuotaReserved=False ({}) on workload/{} (LocalQueue {}{cq})", w.reason, w.workload, w.queue),
            });
        }
        out
    }

    /// Pods that exist but wait for claims quota refused: the newest refusal among their
    /// events.
    fn blocked_on_claims(&self, opts: &Options) -> Vec<Blocked> {
        let mut out = Vec::new();
        for ((ns, owner), (pods, count)) in &self.claims_pending {
            if opts.namespaces.as_ref().is_some_and(|s| !s.contains(ns)) {
                continue;
            }
            let Some(f) = pods.iter().filter_map(|p| self.failures.get(&(ns.clone(), format!("pod/{p}")))).max_by(|a, b| a.last_seen.cmp(&b.last_seen)) else {
                continue;
            };
            let refusal = parse_refusal(&f.message);
            let (resources, fixes) = self.fixes(ns, owner, &f.message, &refusal, (*count).clamp(1, i64::from(i32::MAX)) as i32, "pod's claim");
            let workload = self.controllers.get(&(ns.clone(), owner.clone())).and_then(|c| c.owner.clone());
            let (workload, via) = match workload {
                Some(w) => (w, Some(owner.clone())),
                None => (owner.clone(), None),
            };
            out.push(Blocked {
                namespace: ns.clone(),
                workload,
                via,
                waiting: Some(*count),
                blocker: blocker_of(&f.message),
                quota: refusal.quota.clone(),
                resources,
                fix: fixes.join("; "),
                fixes,
                autoscaler: None,
                message: f.message.clone(),
                from: format!("event FailedResourceClaimCreation on {count} Pending pod(s)"),
            });
        }
        out
    }
}
