//! The flags that name what `check` and `plan` read: the manifests (`-f`, `-k`, `-R`), the
//! cluster's objects offline (`--state`), the server's admission configuration and the node
//! count. One struct, flattened into both commands, so their flags cannot drift apart.

use clap::Args;

/// What `check` and `plan` read. The wording is `check`'s; `plan` words `-f`, `--state` and
/// `--nodes` for itself (`mut_arg` on its own flags).
#[derive(Debug, Args)]
pub struct InputArgs {
    /// Manifests to check: files, directories, http(s) URLs, or - for standard input (repeatable).
    #[arg(short = 'f', long = "filename", required_unless_present = "kustomize", value_name = "FILE")]
    pub filename: Vec<String>,
    /// A kustomization directory, built as `kubectl apply -k` builds it (`kubectl kustomize`).
    #[arg(short = 'k', long, value_name = "DIR", conflicts_with = "filename")]
    pub kustomize: Option<String>,
    /// Process directories given with -f recursively.
    #[arg(short = 'R', long)]
    pub recursive: bool,
    /// Offline mode: the cluster's objects (ResourceQuotas with status, LimitRanges,
    /// PriorityClasses, StorageClasses, RuntimeClasses) from files; no cluster is contacted.
    #[arg(long, value_name = "FILE")]
    pub state: Vec<String>,
    /// The API server's admission configuration (ResourceQuota limitedResources).
    #[arg(long = "admission-config", value_name = "FILE")]
    pub admission_config: Option<String>,
    /// Schedulable node count, to check a DaemonSet's pods.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=i64::from(i32::MAX)))]
    pub nodes: Option<u32>,
}
