//! `kubectl quota snapshot`: everything offline `check`, `plan` and `describe` consult, read
//! from the live cluster and printed as one `kind: List`, in a stable order, so a CI job can
//! check a pull request against yesterday's cluster. Read-only.

use clap::{Args, ValueEnum};

use crate::error::Fatal;
use crate::global::GlobalFlags;
use crate::live;

pub const SNAPSHOT_HELP: &str = "\
Examples:
  # Save what the quota checks of namespace team-a consult
  kubectl quota snapshot -n team-a > state.yaml

  # Every namespace
  kubectl quota snapshot -A > state.yaml

  # Later, without a cluster (e.g. in CI on a pull request)
  kubectl quota check -f deploy/ --state state.yaml -n team-a

Saves ResourceQuotas (with status: their usage), LimitRanges, PriorityClasses,
StorageClasses, RuntimeClasses, DeviceClasses (when served) and the namespace's workloads,
pods and claims (so an update is checked as an update). Never writes to the cluster.";

/// Output formats of `snapshot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SnapshotOutput {
    Yaml,
    Json,
}

/// `kubectl quota snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Every namespace.
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "yaml")]
    pub output: SnapshotOutput,
}

/// A `kind: List`, fields in kubectl's order.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct List {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub items: Vec<serde_json::Value>,
}

/// Wraps objects in a `kind: List`.
pub fn as_list(items: Vec<serde_json::Value>) -> List {
    List { api_version: "v1", kind: "List", items }
}

/// Runs `snapshot`.
pub async fn run(g: &GlobalFlags, args: &SnapshotArgs) -> Result<i32, Fatal> {
    let conn = live::connect(&g.kube, g.namespace.as_deref()).await.map_err(Fatal::input)?;
    let scope = if args.all_namespaces { live::Scope::All } else { live::Scope::Namespace(&conn.namespace) };
    let (items, notes) = live::snapshot(&conn, scope).await.map_err(|e| Fatal::input(e.to_string()))?;
    for n in &notes {
        eprintln!("note: {n}");
    }
    let list = as_list(items);
    let text = match args.output {
        SnapshotOutput::Yaml => serde_yaml::to_string(&list).map_err(|e| Fatal::input(e.to_string()))?,
        SnapshotOutput::Json => serde_json::to_string_pretty(&list).map_err(|e| Fatal::input(e.to_string()))? + "\n",
    };
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(0)
}
