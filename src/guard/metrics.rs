//! The guard's counters, shown at `/metrics` in Prometheus' text format: requests by result,
//! warnings sent, bad requests, the time each answer took (a histogram), and the caches'
//! sizes and ages.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::cache::Cache;
use super::review::Why;

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 12] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0];

const RESULTS: [Why; 5] = [Why::Skipped, Why::Fits, Why::Warned, Why::Denied, Why::Undecodable];

#[derive(Default)]
pub struct Metrics {
    by_result: [AtomicU64; 5],
    /// Answers given before the caches' first list (allowed, unsaid).
    not_ready: AtomicU64,
    bad_requests: AtomicU64,
    warnings: AtomicU64,
    buckets: [AtomicU64; 12],
    count: AtomicU64,
    sum_micros: AtomicU64,
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

    pub fn not_ready(&self) {
        self.not_ready.fetch_add(1, Ordering::Relaxed);
    }

    pub fn bad_request(&self) {
        self.bad_requests.fetch_add(1, Ordering::Relaxed);
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
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }
}
