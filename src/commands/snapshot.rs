//! `kubectl quota snapshot`: everything offline `check`, `plan` and `describe` consult, read
//! from the live cluster and printed as one `kind: List`, in a stable order, so a CI job can
//! check a pull request against yesterday's cluster. Read-only.

use std::collections::BTreeMap;

use clap::{Args, ValueEnum};

use crate::error::Fatal;
use crate::global::GlobalFlags;
use crate::input::{NAMESPACE_ANNOTATION, NOT_READ_ANNOTATION, SERVER_VERSION_ANNOTATION};
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
StorageClasses, RuntimeClasses, DeviceClasses and ResourceClaimTemplates (when served), the
namespace's workloads, pods and claims (so an update is checked as an update), and the
namespace itself if it exists (-A: every namespace; name and labels only), the FailedCreate
events `blocked` reads, with -A the nodes and ResourceSlices `capacity` reads, and records the
server's version: offline checks on the snapshot answer with that release's rules, and
refuse objects in a namespace it shows does not exist. Never writes to the cluster.";

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

/// A `kind: List`, fields in kubectl's order. What the snapshot records about itself is in
/// the List's own `metadata.annotations`: kubectl reads a List's items and ignores the rest,
/// so the file stays what `kubectl apply -f` and `kubectl get -f` take.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct List {
    pub api_version: &'static str,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "ListMeta::is_empty")]
    pub metadata: ListMeta,
    pub items: Vec<serde_json::Value>,
}

/// The List's metadata: only annotations.
#[derive(serde::Serialize, Default)]
pub struct ListMeta {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<&'static str, String>,
}

impl ListMeta {
    fn is_empty(&self) -> bool {
        self.annotations.is_empty()
    }
}

/// Wraps objects in a `kind: List`.
pub fn as_list(items: Vec<serde_json::Value>) -> List {
    List { api_version: "v1", kind: "List", metadata: ListMeta::default(), items }
}

/// The snapshot as a `kind: List`, with the server's version and the kinds not read recorded.
pub fn snapshot_list(s: live::Snapshot) -> List {
    let mut list = as_list(s.items);
    if let Some(v) = s.server_version {
        list.metadata.annotations.insert(SERVER_VERSION_ANNOTATION, v);
    }
    if !s.not_read.is_empty() {
        list.metadata.annotations.insert(NOT_READ_ANNOTATION, s.not_read.join(","));
    }
    if let Some(ns) = s.namespace {
        list.metadata.annotations.insert(NAMESPACE_ANNOTATION, ns);
    }
    list
}

/// Runs `snapshot`.
pub async fn run(g: &GlobalFlags, args: &SnapshotArgs) -> Result<i32, Fatal> {
    let conn = live::connect(&g.kube, g.namespace.as_deref()).await?;
    let scope = if args.all_namespaces { live::Scope::All } else { live::Scope::Namespace(&conn.namespace) };
    let snapshot = live::snapshot(&conn, scope).await.map_err(|e| {
        Fatal::input(if e.forbidden {
            format!("{e}\nthe snapshot needs `list` on the namespace's quotas, LimitRanges, workloads, pods and claims (the `view` ClusterRole has it)")
        } else {
            e.to_string()
        })
    })?;
    for n in &snapshot.notes {
        eprintln!("note: {n}");
    }
    let list = snapshot_list(snapshot);
    let text = match args.output {
        SnapshotOutput::Yaml => crate::render::yaml::to_string(&list).map_err(Fatal::input)?,
        SnapshotOutput::Json => serde_json::to_string_pretty(&list).map_err(|e| Fatal::input(e.to_string()))? + "\n",
    };
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(0)
}
