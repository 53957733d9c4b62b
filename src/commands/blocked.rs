//! `kubectl quota blocked`: every workload whose pods the server refused and which still
//! misses pods, one line each with who refused (quota, LimitRange, PodSecurity, a policy, ...),
//! the quota and resource where it is quota, and `why`'s smallest fix; and the Jobs Kueue
//! keeps suspended for want of quota in their ClusterQueue, in Kueue's words. The same data
//! `why` reads (FailedCreate events, ReplicaFailure conditions, the quotas), read with one
//! LIST per kind instead of a round trip per workload.

use std::collections::BTreeSet;

use clap::Args;

use kubectl_quota_engine::capacity::Options;

use super::views::{self, Unscoped, ViewOutput};
use crate::error::{Fatal, INCOMPLETE};
use crate::global::GlobalFlags;
use crate::live;
use crate::render::capacity::blocked_text;

pub const BLOCKED_HELP: &str = "\
Examples:
  # Workloads of the current namespace whose pods are refused now (by a quota, a
  # LimitRange, PodSecurity, a policy or webhook), and Jobs Kueue keeps waiting for quota
  kubectl quota blocked

  # Across the cluster
  kubectl quota blocked -A

  # Then the whole story of one of them
  kubectl quota why deployment/web -n team-a

  # Offline, from a snapshot
  kubectl quota blocked -A --state cluster.yaml -o json

Reads FailedCreate events (kept for an hour by default), the ReplicaFailure conditions of
ReplicaSets and ReplicationControllers, the controllers' wanted and current pods, the
quotas, and Kueue's Workloads and LocalQueues where Kueue is installed; a workload whose pods
all exist again is not listed. The fix is worked out from the
quota as it stands now. Never writes.
Exit status: 0 nothing is blocked, 1 something is, 3 nothing found but something could not
be read (said on standard error).";

/// `kubectl quota blocked`.
#[derive(Debug, Args)]
pub struct BlockedArgs {
    /// Workloads of every namespace.
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: ViewOutput,
    /// Offline: read these files (a `snapshot`) instead of the cluster.
    #[arg(long, value_name = "FILE")]
    pub state: Vec<String>,
}

/// Runs `blocked`.
pub async fn run(g: &GlobalFlags, args: &BlockedArgs) -> Result<i32, Fatal> {
    let (collector, namespace) = views::collect(g, &args.state, live::View::Blocked, args.all_namespaces, Unscoped::CurrentNamespace).await?;
    let opts = Options { namespaces: namespace.map(|n| BTreeSet::from([n])), ..Options::default() };
    let report = collector.blocked(&opts);
    views::print(&report, args.output, blocked_text, &report.notes)?;
    Ok(if !report.blocked.is_empty() {
        1
    } else if report.notes.is_empty() {
        0
    } else {
        INCOMPLETE
    })
}
