//! The guard's dry runs (`guard serve --dry-run-webhooks`, off by default: a dry-run create
//! of a pod needs `create` on pods in the guard's ClusterRole). Where a mutating webhook sees
//! a workload's pods, what it adds is in no API; the API server answers a Pod created with
//! `?dryRun=All` with the pod as its whole chain returns it, storing nothing. The guard asks
//! for the workload's pod once (`live::dry_run_pod`, as `check` does) within a deadline that
//! leaves room in the webhook's own timeout, and keeps the answer a short while: the same pod
//! in the same namespace is not asked again for [`TTL`], nor past a change of any webhook
//! configuration (what the webhooks do may have changed with it).
//!
//! A dry run that times out or cannot reach the server is not kept; the answer then rests on
//! the webhooks, named. A dry run's own pod reaches the guard only where a registration sends
//! it Pods (the guard's does not): a Pod is never asked for (`review::dry_run_pod`), so a dry
//! run never leads to another.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kubectl_quota_engine::admission::{ServerAnswer, Stage};

use crate::live::{Asked, Conn};

/// Answers kept at most: past this, the oldest one makes room.
pub const MAX_ENTRIES: usize = 1_000;
/// How long an answer is kept.
pub const TTL: Duration = Duration::from_secs(60);

/// What a dry run came to, for the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The pod as the server's chain returned it.
    Admitted,
    /// The server refused the pod (quota, a webhook, a policy): its words are the answer.
    Refused,
    /// The server would not run it (a webhook without sideEffects None or NoneOnDryRun, no
    /// right to create pods): the webhooks are named instead.
    Unanswered,
    /// No answer within the deadline, or the server could not be reached.
    Failed,
    /// Answered from what was kept.
    Cached,
}

impl Outcome {
    pub const ALL: [Outcome; 5] = [Outcome::Admitted, Outcome::Refused, Outcome::Unanswered, Outcome::Failed, Outcome::Cached];

    pub fn label(self) -> &'static str {
        match self {
            Outcome::Admitted => "admitted",
            Outcome::Refused => "refused",
            Outcome::Unanswered => "unanswered",
            Outcome::Failed => "failed",
            Outcome::Cached => "cached",
        }
    }
}

struct Entry {
    at: Instant,
    answer: Result<ServerAnswer, String>,
}

/// The dry runs' answers kept, by a hash of (namespace, pod JSON), with the webhook
/// configurations' generation they were asked under.
pub struct DryRuns {
    conn: Option<Conn>,
    /// How long one dry run may take.
    pub deadline: Duration,
    kept: Mutex<Kept>,
    keys: [std::hash::RandomState; 2],
}

#[derive(Default)]
struct Kept {
    generation: u64,
    entries: HashMap<u128, Entry>,
}

impl Kept {
    /// A newer generation forgets every answer kept from before it (an older one, read by a
    /// request that started before a change, changes nothing).
    fn forget_before(&mut self, generation: u64) {
        if generation > self.generation {
            self.entries.clear();
            self.generation = generation;
        }
    }
}

impl DryRuns {
    /// Dry runs sent through `conn` (`None`: never sent, as in tests that fill the cache).
    pub fn new(conn: Option<Conn>, deadline: Duration) -> DryRuns {
        DryRuns { conn, deadline, kept: Mutex::default(), keys: [std::hash::RandomState::new(), std::hash::RandomState::new()] }
    }

    /// A hash of the pair, keyed afresh in each process so that no input can be made to
    /// collide.
    fn key(&self, ns: &str, json: &str) -> u128 {
        let [a, b] = self.keys.each_ref().map(|k| {
            let mut h = k.build_hasher();
            h.write_usize(ns.len());
            h.write(ns.as_bytes());
            h.write(json.as_bytes());
            h.finish()
        });
        (u128::from(a) << 64) | u128::from(b)
    }

    /// The kept answer for the pod, if one was asked under webhook configurations of
    /// `generation` less than [`TTL`] ago (a newer generation forgets every answer).
    pub fn kept(&self, generation: u64, ns: &str, json: &str) -> Option<Result<ServerAnswer, String>> {
        let key = self.key(ns, json);
        let mut k = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if k.generation != generation {
            k.forget_before(generation);
            return None;
        }
        match k.entries.get(&key) {
            Some(e) if e.at.elapsed() < TTL => Some(e.answer.clone()),
            Some(_) => {
                k.entries.remove(&key);
                None
            }
            None => None,
        }
    }

    /// Keeps an answer asked under `generation`: not one that may pass (a failure) nor a refusal
    /// by quota (which hides the pod, and depends on usage that changes).
    pub fn keep(&self, generation: u64, ns: &str, json: &str, asked: &Asked) {
        if asked.transient || matches!(&asked.answer, Ok(ServerAnswer::Refused(r)) if r.refuser() == Some(Stage::ResourceQuota)) {
            return;
        }
        let key = self.key(ns, json);
        let mut k = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        k.forget_before(generation);
        if k.generation != generation {
            // Asked before a change another request has seen since: not kept.
            return;
        }
        k.entries.retain(|_, e| e.at.elapsed() < TTL);
        if k.entries.len() >= MAX_ENTRIES && !k.entries.contains_key(&key) {
            if let Some(oldest) = k.entries.iter().min_by_key(|(_, e)| e.at).map(|(k, _)| *k) {
                k.entries.remove(&oldest);
            }
        }
        k.entries.insert(key, Entry { at: Instant::now(), answer: asked.answer.clone() });
    }

    /// Answers kept now.
    pub fn len(&self) -> usize {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The server's answer for the pod `json` in `ns`: kept, or asked (within
    /// [`DryRuns::deadline`]) and kept; with what it came to.
    pub async fn answer(&self, generation: u64, ns: &str, json: &str) -> (Result<ServerAnswer, String>, Outcome) {
        if let Some(a) = self.kept(generation, ns, json) {
            return (a, Outcome::Cached);
        }
        let Some(conn) = &self.conn else {
            return (Err("the guard sends no dry runs here, so its pods are taken as written".into()), Outcome::Failed);
        };
        let asked = crate::live::dry_run_pod(conn, ns, json, self.deadline).await;
        self.keep(generation, ns, json, &asked);
        let outcome = match (&asked.answer, asked.transient) {
            (_, true) => Outcome::Failed,
            (Ok(ServerAnswer::Admitted(_)), _) => Outcome::Admitted,
            (Ok(_), _) => Outcome::Refused,
            (Err(_), _) => Outcome::Unanswered,
        };
        (asked.answer, outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubectl_quota_engine::check::dry_run::answer_of_refusal;

    fn asked(answer: Result<ServerAnswer, String>, transient: bool) -> Asked {
        Asked { answer, transient }
    }

    #[test]
    fn answers_are_kept_per_namespace_and_pod_until_a_webhook_configuration_changes() {
        let d = DryRuns::new(None, Duration::from_secs(1));
        let unanswered = answer_of_refusal(400, "admission webhook \"a\" does not support dry run");
        d.keep(1, "a", "{}", &asked(unanswered.clone(), false));
        assert_eq!(d.kept(1, "a", "{}"), Some(unanswered));
        assert_eq!(d.kept(1, "b", "{}"), None, "another namespace");
        assert_eq!(d.kept(1, "a", "{ }"), None, "another pod");
        assert_eq!(d.kept(2, "a", "{}"), None, "a webhook configuration changed since");
        assert!(d.is_empty(), "and every answer was forgotten");
        d.keep(1, "a", "{}", &asked(Err("no".into()), false));
        assert!(d.is_empty(), "an answer asked before the change is not kept");
    }

    #[test]
    fn failures_and_quotas_refusals_are_not_kept_and_the_cache_is_bounded() {
        let d = DryRuns::new(None, Duration::from_secs(1));
        d.keep(0, "a", "1", &asked(Err("timed out".into()), true));
        let quota = answer_of_refusal(
            403,
            "pods \"p\" is forbidden: exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=0, limited: requests.cpu=100m",
        );
        assert!(matches!(&quota, Ok(ServerAnswer::Refused(_))));
        d.keep(0, "a", "2", &asked(quota, false));
        assert!(d.is_empty());
        for i in 0..MAX_ENTRIES + 10 {
            d.keep(0, "a", &i.to_string(), &asked(Err("no".into()), false));
        }
        assert_eq!(d.len(), MAX_ENTRIES);
        assert!(d.kept(0, "a", &(MAX_ENTRIES + 9).to_string()).is_some(), "the newest is kept");
        assert!(d.kept(0, "a", "0").is_none(), "the oldest made room");
    }
}
