//! `kubectl quota uncovered`: the namespaces no quota caps: without any ResourceQuota, or
//! (`--resource`) without a cap on that resource for every pod. Flags -> the cluster views'
//! reads (live, or `--state` files) -> the engine's [`Collector`] -> text, JSON or YAML.

use clap::Args;

use kubectl_quota_engine::capacity::Options;

use super::views::{self, Unscoped, ViewOutput};
use crate::error::{Fatal, INCOMPLETE};
use crate::global::GlobalFlags;
use crate::live;
use crate::render::capacity::uncovered_text;

pub const UNCOVERED_HELP: &str = "\
Examples:
  # Namespaces without any quota
  kubectl quota uncovered

  # Namespaces where nothing caps GPU requests for every pod
  kubectl quota uncovered --resource nvidia.com/gpu

  # Look at the system namespaces too
  kubectl quota uncovered --exclude-namespaces ''

  # Offline
  kubectl quota uncovered --state cluster.yaml -o json

A namespace is capped on a resource when a quota that applies to every pod (no scopes, no
scope selector) sets it; one capped only by scoped quotas is listed, with the quota named.
--exclude-namespaces defaults to kube-system, kube-public and kube-node-lease. Never writes.
Exit status: 0, or 3 when something could not be read (said on standard error).";

/// `kubectl quota uncovered`.
#[derive(Debug, Args)]
pub struct UncoveredArgs {
    /// Every namespace (the default for this cluster-wide view; with -n, only that one).
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
    /// Namespaces with no cap on this resource for every pod (cpu, memory, nvidia.com/gpu, ...).
    #[arg(long, value_name = "RESOURCE")]
    pub resource: Option<String>,
    /// Namespaces not looked at (comma-separated; empty for none).
    #[arg(long, value_name = "NAMESPACES", value_delimiter = ',', default_value = "kube-system,kube-public,kube-node-lease")]
    pub exclude_namespaces: Vec<String>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: ViewOutput,
    /// Offline: read these files (a `snapshot -A`) instead of the cluster.
    #[arg(long, value_name = "FILE")]
    pub state: Vec<String>,
}

/// Runs `uncovered`.
pub async fn run(g: &GlobalFlags, args: &UncoveredArgs) -> Result<i32, Fatal> {
    let (collector, namespace) = views::collect(g, &args.state, live::View::Uncovered, args.all_namespaces, Unscoped::AllNamespaces).await?;
    let opts = Options {
        namespaces: namespace.map(|n| std::collections::BTreeSet::from([n])),
        excluded: args.exclude_namespaces.iter().filter(|s| !s.is_empty()).cloned().collect(),
        resource: args.resource.clone(),
        ..Options::default()
    };
    let report = collector.uncovered(&opts);
    views::print(&report, args.output, uncovered_text, &report.notes)?;
    Ok(if report.notes.is_empty() { 0 } else { INCOMPLETE })
}
