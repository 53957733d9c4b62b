//! The guard's counters, shown at `/metrics` in Prometheus' text format: requests by result,
//! warnings sent, bad requests, the time each answer took (a histogram), the caches' sizes and
//! ages, and per autoscaler how many of its maximum replicas quota lets run.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use kubectl_quota_engine::autoscaling::Ceiling;
use kubectl_quota_engine::objects::AutoscalerKind;

use super::cache::Cache;
use super::dry_run::Outcome as DryRunOutcome;
use super::review::Why;

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 12] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0];

const RESULTS: [Why; 6] = [Why::Skipped, Why::Fits, Why::Warned, Why::Denied, Why::Undecodable, Why::Late];

/// An autoscaler as its series name it: (namespace, kind, name).
type AutoscalerKey = (String, AutoscalerKindLabel, String);
/// An autoscaler's minimum and maximum replicas, and how many pods of its target quota lets run.
type Limits = (i32, i32, i32);
/// A gauge of every autoscaler: its name, its help, and its value of an autoscaler's [`Limits`].
type Series = (&'static str, &'static str, fn(&Limits) -> i32);

#[derive(Default)]
pub struct Metrics {
    by_result: [AtomicU64; 6],
    /// Answers given before the caches' first list (allowed, unsaid).
    not_ready: AtomicU64,
    bad_requests: AtomicU64,
    /// Autoscalers answered without their target, which could not be read in time.
    targets_unread: AtomicU64,
    warnings: AtomicU64,
    buckets: [AtomicU64; 12],
    count: AtomicU64,
    sum_micros: AtomicU64,
    /// Connections open now, and those closed to make room for a new one, or refused.
    connections_open: AtomicU64,
    connections_reclaimed: AtomicU64,
    connections_refused: AtomicU64,
    /// Per autoscaler (namespace, kind, name): its minimum, its maximum, and how many pods of
    /// its target quota lets run, as last decided.
    ceilings: Mutex<BTreeMap<AutoscalerKey, Limits>>,
    /// Per namespace, the workloads warned about and refused (at most [`MAX_NAMESPACES`]
    /// namespaces; the rest under [`OTHER_NAMESPACES`]).
    by_namespace: Mutex<BTreeMap<String, [u64; 2]>>,
    /// Dry runs (`--dry-run-webhooks`), by outcome, and the time the ones sent took.
    dry_runs: [AtomicU64; 5],
    dry_run_count: AtomicU64,
    dry_run_micros: AtomicU64,
}

/// Namespaces counted apart at most, so that the scrape stays bounded in a cluster of many.
pub const MAX_NAMESPACES: usize = 1_000;
/// The `namespace` label of the answers in namespaces past [`MAX_NAMESPACES`].
pub const OTHER_NAMESPACES: &str = "(other)";

/// Autoscalers shown at most: past this a new one is left out (and counted), so that the
/// scrape never grows without bound; one removed from the cluster leaves room.
pub const MAX_AUTOSCALERS: usize = 10_000;

/// An autoscaler kind as a label value.
type AutoscalerKindLabel = &'static str;

fn kind_label(k: AutoscalerKind) -> AutoscalerKindLabel {
    match k {
        AutoscalerKind::HorizontalPodAutoscaler => "HorizontalPodAutoscaler",
        AutoscalerKind::ScaledObject => "ScaledObject",
        AutoscalerKind::ScaledJob => "ScaledJob",
    }
}

/// A label value as the text format writes it: backslash, double quote and line feed escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

impl Metrics {
    /// Counts one answered AdmissionReview.
    pub fn answered(&self, why: Why, warnings: usize, took: Duration) {
        let i = RESULTS.iter().position(|w| *w == why).unwrap_or(0);
        self.by_result[i].fetch_add(1, Ordering::Relaxed);
        self.warnings.fetch_add(warnings as u64, Ordering::Relaxed);
        let secs = took.as_secs_f64();
        for (b, le) in self.buckets.iter().zip(BUCKETS) {
            if secs <= le {
                b.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    /// Counts a warning or a refusal in namespace `ns` (other answers are not counted per
    /// namespace).
    pub fn answered_in(&self, ns: &str, why: Why) {
        let column = match why {
            Why::Warned => 0,
            Why::Denied => 1,
            _ => return,
        };
        let mut m = self.by_namespace.lock().unwrap_or_else(|e| e.into_inner());
        let key = if m.contains_key(ns) || m.len() < MAX_NAMESPACES { ns } else { OTHER_NAMESPACES };
        m.entry(key.to_string()).or_default()[column] += 1;
    }

    /// Records how far quota lets an autoscaler of namespace `ns` scale (from a decision about
    /// it or its workload, or the periodic pass over the cached autoscalers).
    pub fn ceiling(&self, ns: &str, c: &Ceiling) {
        let mut m = self.ceilings.lock().unwrap_or_else(|e| e.into_inner());
        let key = (ns.to_string(), kind_label(c.autoscaler_kind), c.autoscaler.clone());
        if m.len() < MAX_AUTOSCALERS || m.contains_key(&key) {
            m.insert(key, (c.min_replicas, c.max_replicas, c.fits));
        }
    }

    /// Counts a dry run of a workload's pod (`took`: the time a sent one took).
    pub fn dry_run(&self, outcome: DryRunOutcome, took: Option<Duration>) {
        let i = DryRunOutcome::ALL.iter().position(|o| *o == outcome).unwrap_or(0);
        self.dry_runs[i].fetch_add(1, Ordering::Relaxed);
        if let Some(t) = took {
            self.dry_run_count.fetch_add(1, Ordering::Relaxed);
            self.dry_run_micros.fetch_add(t.as_micros() as u64, Ordering::Relaxed);
        }
    }

    pub fn not_ready(&self) {
        self.not_ready.fetch_add(1, Ordering::Relaxed);
    }

    pub fn target_unread(&self) {
        self.targets_unread.fetch_add(1, Ordering::Relaxed);
    }

    pub fn bad_request(&self) {
        self.bad_requests.fetch_add(1, Ordering::Relaxed);
    }

    pub fn connection_opened(&self) {
        self.connections_open.fetch_add(1, Ordering::Relaxed);
    }

    pub fn connection_closed(&self) {
        self.connections_open.fetch_sub(1, Ordering::Relaxed);
    }

    /// A connection closed to make room for a new one (every slot was taken).
    pub fn connection_reclaimed(&self) {
        self.connections_reclaimed.fetch_add(1, Ordering::Relaxed);
    }

    /// A new connection closed at once: every slot held a review being decided.
    pub fn connection_refused(&self) {
        self.connections_refused.fetch_add(1, Ordering::Relaxed);
    }

    /// Requests answered (every result).
    pub fn requests(&self) -> u64 {
        self.by_result.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// The whole text of `/metrics`.
    pub fn render(&self, cache: &Cache) -> String {
        let mut s = String::new();
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let family = |s: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(s, "# HELP kubectl_quota_guard_{name} {help}\n# TYPE kubectl_quota_guard_{name} {kind}");
        };
        family(&mut s, "requests_total", "counter", "AdmissionReview requests answered, by result.");
        for (why, c) in RESULTS.iter().zip(&self.by_result) {
            let _ = writeln!(s, "kubectl_quota_guard_requests_total{{result=\"{}\"}} {}", why.label(), load(c));
        }
        family(&mut s, "not_ready_total", "counter", "Requests allowed unchecked because the caches had not been listed yet.");
        let _ = writeln!(s, "kubectl_quota_guard_not_ready_total {}", load(&self.not_ready));
        family(&mut s, "bad_requests_total", "counter", "Requests refused with an HTTP error (not an AdmissionReview, too large, wrong path or method).");
        let _ = writeln!(s, "kubectl_quota_guard_bad_requests_total {}", load(&self.bad_requests));
        family(&mut s, "target_reads_failed_total", "counter", "Autoscalers answered without their target workload, which could not be read within 1 s.");
        let _ = writeln!(s, "kubectl_quota_guard_target_reads_failed_total {}", load(&self.targets_unread));
        family(&mut s, "warnings_total", "counter", "Warnings sent to the API server.");
        let _ = writeln!(s, "kubectl_quota_guard_warnings_total {}", load(&self.warnings));
        family(&mut s, "request_duration_seconds", "histogram", "Time from a request's arrival to its answer, at the guard.");
        for (b, le) in self.buckets.iter().zip(BUCKETS) {
            let _ = writeln!(s, "kubectl_quota_guard_request_duration_seconds_bucket{{le=\"{le}\"}} {}", load(b));
        }
        let count = load(&self.count);
        let _ = writeln!(s, "kubectl_quota_guard_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(s, "kubectl_quota_guard_request_duration_seconds_sum {}", load(&self.sum_micros) as f64 / 1e6);
        let _ = writeln!(s, "kubectl_quota_guard_request_duration_seconds_count {count}");
        family(&mut s, "connections_open", "gauge", "Connections open (at most 1024 served at once).");
        let _ = writeln!(s, "kubectl_quota_guard_connections_open {}", load(&self.connections_open));
        family(&mut s, "connections_reclaimed_total", "counter", "Connections closed to make room for a new one, every slot being taken: each the one unproductive the longest (in its TLS handshake, sending its request, or idle).");
        let _ = writeln!(s, "kubectl_quota_guard_connections_reclaimed_total {}", load(&self.connections_reclaimed));
        family(&mut s, "connections_refused_total", "counter", "New connections closed at once, every slot holding a review being decided.");
        let _ = writeln!(s, "kubectl_quota_guard_connections_refused_total {}", load(&self.connections_refused));
        let kinds = cache.report();
        family(&mut s, "cache_objects", "gauge", "Objects cached, by resource.");
        for k in &kinds {
            let _ = writeln!(s, "kubectl_quota_guard_cache_objects{{resource=\"{}\"}} {}", k.kind.resource(), k.objects);
        }
        family(&mut s, "cache_synced", "gauge", "1 once the resource has been listed.");
        for k in &kinds {
            let _ = writeln!(s, "kubectl_quota_guard_cache_synced{{resource=\"{}\"}} {}", k.kind.resource(), u8::from(k.synced));
        }
        family(&mut s, "cache_age_seconds", "gauge", "Seconds since the resource's last list or change.");
        for k in kinds.iter().filter(|k| k.age_seconds.is_some()) {
            let _ = writeln!(s, "kubectl_quota_guard_cache_age_seconds{{resource=\"{}\"}} {:.3}", k.kind.resource(), k.age_seconds.unwrap_or(0.0));
        }
        family(&mut s, "watch_failures_total", "counter", "Failed list or watch requests, by resource (each retried after a back-off).");
        for k in &kinds {
            let _ = writeln!(s, "kubectl_quota_guard_watch_failures_total{{resource=\"{}\"}} {}", k.kind.resource(), k.failures);
        }
        family(&mut s, "lists_total", "counter", "Completed lists, by resource: the first, then one after each 410 Gone.");
        for k in &kinds {
            let _ = writeln!(s, "kubectl_quota_guard_lists_total{{resource=\"{}\"}} {}", k.kind.resource(), k.lists);
        }
        family(&mut s, "ready", "gauge", "1 once every cached resource has been listed.");
        let _ = writeln!(s, "kubectl_quota_guard_ready {}", u8::from(cache.ready()));
        family(&mut s, "namespace_answers_total", "counter", "Workloads warned about or refused, by namespace and result.");
        for (ns, counts) in self.by_namespace.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            for (result, n) in [(Why::Warned, counts[0]), (Why::Denied, counts[1])] {
                let _ = writeln!(s, "kubectl_quota_guard_namespace_answers_total{{namespace=\"{}\",result=\"{}\"}} {n}", label(ns), result.label());
            }
        }
        family(&mut s, "dry_runs_total", "counter", "Dry runs of a workload's pod a mutating webhook sees (--dry-run-webhooks), by outcome: admitted, refused (the server's refusal is the answer), unanswered (the server would not run it: the webhooks are named), failed (no answer in time), cached.");
        for (o, c) in DryRunOutcome::ALL.iter().zip(&self.dry_runs) {
            let _ = writeln!(s, "kubectl_quota_guard_dry_runs_total{{outcome=\"{}\"}} {}", o.label(), load(c));
        }
        family(&mut s, "dry_run_duration_seconds", "summary", "Time the dry runs sent to the API server took.");
        let _ = writeln!(s, "kubectl_quota_guard_dry_run_duration_seconds_sum {}", load(&self.dry_run_micros) as f64 / 1e6);
        let _ = writeln!(s, "kubectl_quota_guard_dry_run_duration_seconds_count {}", load(&self.dry_run_count));
        self.render_ceilings(&mut s, cache);
        s
    }
}

impl Metrics {
    /// The autoscalers' series (those no longer cached are forgotten first).
    fn render_ceilings(&self, s: &mut String, cache: &Cache) {
        let mut m = self.ceilings.lock().unwrap_or_else(|e| e.into_inner());
        m.retain(|(ns, kind, name), _| cache.has_autoscaler(ns, kind, name));
        let series: [Series; 3] = [
            ("autoscaler_min_replicas", "An autoscaler's minimum replicas.", |v| v.0),
            ("autoscaler_max_replicas", "An autoscaler's maximum replicas.", |v| v.1),
            (
                "autoscaler_replicas_fit",
                "Of an autoscaler's maximum, the replicas of its target the quotas let run, as last decided (below max: scale-ups past it will be refused).",
                |v| v.2,
            ),
        ];
        for (name, help, value) in series {
            let _ = writeln!(s, "# HELP kubectl_quota_{name} {help}\n# TYPE kubectl_quota_{name} gauge");
            for ((ns, kind, n), v) in m.iter() {
                let _ = writeln!(s, "kubectl_quota_{name}{{namespace=\"{}\",kind=\"{kind}\",name=\"{}\"}} {}", label(ns), label(n), value(v));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_and_refusals_are_counted_per_namespace_up_to_a_bound() {
        let m = Metrics::default();
        m.answered_in("shop", Why::Warned);
        m.answered_in("shop", Why::Denied);
        m.answered_in("shop", Why::Warned);
        m.answered_in("quiet", Why::Fits);
        for i in 0..MAX_NAMESPACES + 5 {
            m.answered_in(&format!("ns-{i}"), Why::Denied);
        }
        let text = m.render(&Cache::default());
        assert!(text.contains("kubectl_quota_guard_namespace_answers_total{namespace=\"shop\",result=\"warned\"} 2"), "{text}");
        assert!(text.contains("kubectl_quota_guard_namespace_answers_total{namespace=\"shop\",result=\"denied\"} 1"));
        assert!(!text.contains("namespace=\"quiet\""), "only warnings and refusals are counted per namespace");
        // shop plus 999 others fill the table; the 6 namespaces past it are counted together.
        assert!(text.contains("kubectl_quota_guard_namespace_answers_total{namespace=\"(other)\",result=\"denied\"} 6"), "{text}");
        let per_namespace = text.lines().filter(|l| l.starts_with("kubectl_quota_guard_namespace_answers_total{") && l.contains("result=\"denied\"")).count();
        assert_eq!(per_namespace, MAX_NAMESPACES + 1);
    }

    #[test]
    fn the_histogram_counts_each_answer_in_every_bucket_above_it() {
        let m = Metrics::default();
        m.answered(Why::Warned, 2, Duration::from_micros(300));
        m.answered(Why::Fits, 0, Duration::from_millis(3));
        let text = m.render(&Cache::default());
        for line in [
            "kubectl_quota_guard_requests_total{result=\"warned\"} 1",
            "kubectl_quota_guard_warnings_total 2",
            "kubectl_quota_guard_request_duration_seconds_bucket{le=\"0.00025\"} 0",
            "kubectl_quota_guard_request_duration_seconds_bucket{le=\"0.0005\"} 1",
            "kubectl_quota_guard_request_duration_seconds_bucket{le=\"0.005\"} 2",
            "kubectl_quota_guard_request_duration_seconds_bucket{le=\"+Inf\"} 2",
            "kubectl_quota_guard_request_duration_seconds_count 2",
            "kubectl_quota_guard_ready 0",
            "kubectl_quota_guard_dry_runs_total{outcome=\"cached\"} 0",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }

    #[test]
    fn each_cached_autoscaler_shows_its_maximum_and_the_replicas_quota_lets_run() {
        use crate::live::Change;
        use kubectl_quota_engine::{manifest, objects};
        let hpa = |name: &str| {
            let text = format!("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: {name}, namespace: shop}}\nspec: {{scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}, minReplicas: 3, maxReplicas: 20}}\n");
            objects::decode(&manifest::parse_str("hpa.yaml", &text).unwrap()[0]).unwrap()
        };
        let cache = Cache::default();
        cache.apply(super::super::cache::Kind::Autoscalers, Change::ListBegin);
        cache.apply(super::super::cache::Kind::Autoscalers, Change::Listed(hpa("web")));
        cache.apply(super::super::cache::Kind::Autoscalers, Change::ListEnd);
        let ceiling = |name: &str, fits: i32| Ceiling {
            autoscaler_kind: AutoscalerKind::HorizontalPodAutoscaler,
            autoscaler: name.into(),
            target: "deployment/web".into(),
            min_replicas: 3,
            max_replicas: 20,
            replicas: 5,
            fits,
            stopped: kubectl_quota_engine::autoscaling::StoppedBy { quota: Some("compute".into()), ..Default::default() },
        };
        let m = Metrics::default();
        m.ceiling("shop", &ceiling("web", 9));
        m.ceiling("shop", &ceiling("web", 8));
        // One the cache does not hold (deleted since) is forgotten.
        m.ceiling("shop", &ceiling("gone", 1));
        let text = m.render(&cache);
        let series: Vec<&str> = text.lines().filter(|l| l.starts_with("kubectl_quota_autoscaler")).collect();
        assert_eq!(
            series,
            [
                r#"kubectl_quota_autoscaler_min_replicas{namespace="shop",kind="HorizontalPodAutoscaler",name="web"} 3"#,
                r#"kubectl_quota_autoscaler_max_replicas{namespace="shop",kind="HorizontalPodAutoscaler",name="web"} 20"#,
                r#"kubectl_quota_autoscaler_replicas_fit{namespace="shop",kind="HorizontalPodAutoscaler",name="web"} 8"#,
            ]
        );
        assert!(text.contains("# TYPE kubectl_quota_autoscaler_replicas_fit gauge"));
        // Bounded: past the cap a new autoscaler is left out, a known one still updated.
        for i in 0..MAX_AUTOSCALERS + 5 {
            m.ceiling("other", &ceiling(&format!("a{i}"), 1));
        }
        assert_eq!(m.ceilings.lock().unwrap().len(), MAX_AUTOSCALERS);
        assert_eq!(label("a\"b\\c\nd"), r#"a\"b\\c\nd"#);
    }
}
