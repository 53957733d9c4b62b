//! `kubectl quota capacity`: what the quotas promise against what the nodes offer, per
//! resource, cluster-wide; `--by namespace` breaks each promise down. Flags -> the cluster
//! views' reads (live, or `--state` files) -> the engine's [`Collector`] -> text, JSON or YAML.
//!
//! The name follows kube-capacity and kubectl's "Allocated resources": a noun for a
//! cluster-wide read, as `kubectl top node` is. `uncovered` and `blocked` are its siblings.

use clap::{Args, ValueEnum};

use kubectl_quota_engine::capacity::{rows_named, Options, DEFAULT_EXCLUDED_NAMESPACES};

use super::views::{self, Unscoped, ViewOutput};
use crate::error::{Fatal, INCOMPLETE};
use crate::global::GlobalFlags;
use crate::live;
use crate::render::capacity::capacity_text;

pub const CAPACITY_HELP: &str = "\
Examples:
  # What the quotas promise against what the schedulable nodes offer, overcommitted first
  kubectl quota capacity

  # Who holds the promise of each resource, largest share first
  kubectl quota capacity --by namespace --resource cpu

  # Offline, from a snapshot (`kubectl quota snapshot -A` saves nodes and ResourceSlices)
  kubectl quota capacity --state cluster.yaml -o json

Allocatable: the sum over schedulable nodes (cordoned, NoSchedule/NoExecute-tainted and
not-Ready nodes are left out and named); for a DRA device class, the devices the
ResourceSlices publish. Promised: the sum of each namespace's cap, the smallest hard of the
quotas that apply to every pod (scoped quotas are shown apart); a namespace with no cap is
unbounded and named. Used: the quotas' status.used, and the requests of pods where no quota
caps the resource. Namespaces in --exclude-namespaces are left out of the promise (their pods
still count as used). Never writes.
Exit status: 0, or 3 when something could not be read (said on standard error); an
autoscaler whose target does not exist is a note, not a gap.";

/// What `--by` breaks the promise down by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum By {
    Namespace,
}

/// `kubectl quota capacity`.
#[derive(Debug, Args)]
pub struct CapacityArgs {
    /// Every namespace (the default for this cluster-wide view; with -n, only that one).
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
    /// Break each resource's promise down per namespace, largest share first.
    #[arg(long, value_enum)]
    pub by: Option<By>,
    /// Only this resource: cpu, memory or ephemeral-storage (its requests and limits),
    /// requests.cpu or limits.memory (that one), pods, hugepages-2Mi, nvidia.com/gpu, ...
    #[arg(long, value_name = "RESOURCE")]
    pub resource: Option<String>,
    /// Namespaces left out of the promise (comma-separated; empty for none).
    #[arg(long, value_name = "NAMESPACES", value_delimiter = ',', default_value = DEFAULT_EXCLUDED)]
    pub exclude_namespaces: Vec<String>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: ViewOutput,
    /// Offline: read these files (a `snapshot -A`) instead of the cluster.
    #[arg(long, value_name = "FILE")]
    pub state: Vec<String>,
}

/// `--exclude-namespaces`' default, [`DEFAULT_EXCLUDED_NAMESPACES`] as one value.
pub const DEFAULT_EXCLUDED: &str = "kube-system,kube-public,kube-node-lease";

/// Runs `capacity`.
pub async fn run(g: &GlobalFlags, args: &CapacityArgs) -> Result<i32, Fatal> {
    debug_assert_eq!(DEFAULT_EXCLUDED, DEFAULT_EXCLUDED_NAMESPACES.join(","));
    if let Some(r) = args.resource.as_deref().filter(|r| rows_named(r).is_none()) {
        return Err(Fatal::input(format!(
            "--resource {:?}: not a resource that nodes offer and quotas cap (e.g. cpu, memory, ephemeral-storage, pods, hugepages-2Mi, nvidia.com/gpu, CLASS.deviceclass.resource.k8s.io/devices)",
            crate::escape::escape(r)
        )));
    }
    let (collector, namespace) = views::collect(g, &args.state, live::View::Capacity, args.all_namespaces, Unscoped::AllNamespaces).await?;
    let opts = Options {
        excluded: args.exclude_namespaces.iter().filter(|s| !s.is_empty()).cloned().collect(),
        resource: args.resource.clone(),
        by_namespace: args.by == Some(By::Namespace),
        namespaces: namespace.map(|n| std::collections::BTreeSet::from([n])),
    };
    let report = collector.capacity(&opts);
    views::print(&report, args.output, capacity_text, &report.notes)?;
    Ok(if report.incomplete { INCOMPLETE } else { 0 })
}
