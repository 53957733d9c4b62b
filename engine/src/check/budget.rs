//! How long one document may take to decide ([`CheckOptions::decide_within`]).
//!
//! The check looks at the clock between the steps of a document (its own admission, the
//! existing workload, its pods, its autoscaling ceilings): past the bound, the steps not yet
//! taken are left undecided and named, what was decided stands, and the next document is
//! checked. A step under way is not interrupted: one admission pass (a CEL expression, say)
//! runs to its end, so a document ends at most one step past its bound.
//!
//! ```
//! use std::time::Duration;
//! use kubectl_quota_engine::check::{check, CheckOptions, ClusterState, Outcome};
//! use kubectl_quota_engine::{manifest, objects};
//!
//! let docs = manifest::parse_str("d.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: app, image: x}]}\n").unwrap();
//! let objs = docs.iter().map(|d| objects::decode(d).unwrap()).collect();
//! let opts = CheckOptions { namespace: "default".into(), decide_within: Some(Duration::ZERO), ..CheckOptions::default() };
//! let r = check(&mut ClusterState::default(), objs, &opts);
//! assert_eq!(r.documents[0].outcome(), Outcome::Undecided);
//! assert!(r.documents[0].undecided[0].why.starts_with("not decided within 0 ms"));
//! assert!(r.documents[0].undecided[0].late);
//! ```

use std::time::{Duration, Instant};

use super::report::Undecided;

/// One document's time: when it must be decided by, if ever.
pub(super) struct Budget {
    within: Duration,
    until: Option<Instant>,
}

impl Budget {
    /// The clock started for a document that may take `within` (`None`: as long as it takes).
    pub(super) fn start(within: Option<Duration>) -> Budget {
        Budget { within: within.unwrap_or_default(), until: within.map(|d| Instant::now() + d) }
    }

    /// Whether the document's time is up.
    pub(super) fn spent(&self) -> bool {
        self.until.is_some_and(|u| Instant::now() >= u)
    }

    /// What is left undecided when the time is up before `left` was checked.
    pub(super) fn undecided(&self, left: &str) -> Undecided {
        Undecided {
            lacking: None,
            why: format!("not decided within {} (--decision-timeout): {left} not checked; what was decided before stands", in_words(self.within)),
            late: true,
        }
    }
}

/// A bound as it was most likely given: whole milliseconds as `N ms`, anything finer as Rust
/// writes a duration (`1ns`, `1.5µs`).
fn in_words(d: Duration) -> String {
    if d.subsec_nanos().is_multiple_of(1_000_000) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{d:?}")
    }
}
