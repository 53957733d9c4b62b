//! `kubectl quota blocked`: every workload whose pods a quota refused and which still misses
//! pods, one line each with the quota, the resource and `why`'s smallest fix. The same data
//! `why` reads (FailedCreate events, ReplicaFailure conditions, the quotas), read with one
//! LIST per kind instead of a round trip per workload.

use std::collections::BTreeSet;

use clap::{Args, ValueEnum};

use kubectl_quota_engine::capacity::{Collector, Options};

use crate::error::{print_err, print_out, Fatal, INCOMPLETE};
use crate::global::GlobalFlags;
use crate::input::collect_state;
use crate::live;
use crate::render::capacity::{blocked_text, notes_text};

pub const BLOCKED_HELP: &str = "\
Examples:
  # Workloads of the current namespace that a quota blocks now
  kubectl quota blocked

  # Across the cluster
  kubectl quota blocked -A

  # Then the whole story of one of them
  kubectl quota why deployment/web -n team-a

  # Offline, from a snapshot
  kubectl quota blocked -A --state cluster.yaml -o json

Reads FailedCreate events (kept for an hour by default), the ReplicaFailure conditions of
ReplicaSets and ReplicationControllers, the controllers' wanted and current pods, and the
quotas; a workload whose pods all exist again is not listed. The fix is worked out from the
quota as it stands now. Never writes.
Exit status: 0 nothing is blocked, 1 something is, 3 nothing found but something could not
be read (said on standard error).";

/// Output formats of `blocked`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BlockedOutput {
    Text,
    Json,
    Yaml,
}

/// `kubectl quota blocked`.
#[derive(Debug, Args)]
pub struct BlockedArgs {
    /// Workloads of every namespace.
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: BlockedOutput,
    /// Offline: read these files (a `snapshot`) instead of the cluster.
    #[arg(long, value_name = "FILE")]
    pub state: Vec<String>,
}

/// Runs `blocked`.
pub async fn run(g: &GlobalFlags, args: &BlockedArgs) -> Result<i32, Fatal> {
    let (collector, namespace) = if args.state.is_empty() {
        let conn = live::connect(&g.kube, g.namespace.as_deref()).await.map_err(Fatal::input)?;
        let ns = (!args.all_namespaces).then(|| conn.namespace.clone());
        let c = live::collect_view(&conn, live::View::Blocked, ns.as_deref(), Collector::default()).await.map_err(|e| {
            let code = if e.unreachable { 2 } else { 1 };
            Fatal(e.to_string(), code)
        })?;
        (c, ns)
    } else {
        let mut c = Collector::default();
        collect_state(&args.state, &mut c)?;
        (c, (!args.all_namespaces).then(|| g.namespace.clone().unwrap_or_else(|| "default".into())))
    };
    let opts = Options { namespaces: namespace.map(|n| BTreeSet::from([n])), ..Options::default() };
    let report = collector.blocked(&opts);
    let text = match args.output {
        BlockedOutput::Text => blocked_text(&report),
        BlockedOutput::Json => serde_json::to_string_pretty(&report).map_err(|e| Fatal::input(e.to_string()))? + "\n",
        BlockedOutput::Yaml => crate::render::yaml::to_string(&report).map_err(Fatal::input)?,
    };
    print_out(&text)?;
    print_err(&notes_text(&report.notes));
    Ok(if !report.blocked.is_empty() {
        1
    } else if report.notes.is_empty() {
        0
    } else {
        INCOMPLETE
    })
}
