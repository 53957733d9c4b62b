//! `kubectl quota uncovered`: the namespaces no quota caps: without any ResourceQuota, or
//! (`--resource`) without a cap on that resource for every pod. Flags -> the cluster views'
//! reads (live, or `--state` files) -> the engine's [`Collector`] -> text, JSON or YAML.

use clap::{Args, ValueEnum};

use kubectl_quota_engine::capacity::{Collector, Options};

use crate::error::{print_err, print_out, Fatal, INCOMPLETE};
use crate::global::GlobalFlags;
use crate::input::collect_state;
use crate::live;
use crate::render::capacity::{notes_text, uncovered_text};

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

/// Output formats of `uncovered`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UncoveredOutput {
    Text,
    Json,
    Yaml,
}

/// `kubectl quota uncovered`.
#[derive(Debug, Args)]
pub struct UncoveredArgs {
    /// Namespaces with no cap on this resource for every pod (cpu, memory, nvidia.com/gpu, ...).
    #[arg(long, value_name = "RESOURCE")]
    pub resource: Option<String>,
    /// Namespaces not looked at (comma-separated; empty for none).
    #[arg(long, value_name = "NAMESPACES", value_delimiter = ',', default_value = "kube-system,kube-public,kube-node-lease")]
    pub exclude_namespaces: Vec<String>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: UncoveredOutput,
    /// Offline: read these files (a `snapshot -A`) instead of the cluster.
    #[arg(long, value_name = "FILE")]
    pub state: Vec<String>,
}

/// Runs `uncovered`.
pub async fn run(g: &GlobalFlags, args: &UncoveredArgs) -> Result<i32, Fatal> {
    let collector = if args.state.is_empty() {
        let conn = live::connect(&g.kube, g.namespace.as_deref()).await.map_err(Fatal::input)?;
        live::collect_view(&conn, live::View::Uncovered, None, Collector::default()).await.map_err(|e| {
            let code = if e.unreachable { 2 } else { 1 };
            Fatal(e.to_string(), code)
        })?
    } else {
        let mut c = Collector::default();
        collect_state(&args.state, &mut c)?;
        c
    };
    let opts = Options {
        excluded: args.exclude_namespaces.iter().filter(|s| !s.is_empty()).cloned().collect(),
        resource: args.resource.clone(),
        ..Options::default()
    };
    let report = collector.uncovered(&opts);
    let text = match args.output {
        UncoveredOutput::Text => uncovered_text(&report),
        UncoveredOutput::Json => serde_json::to_string_pretty(&report).map_err(|e| Fatal::input(e.to_string()))? + "\n",
        UncoveredOutput::Yaml => crate::render::yaml::to_string(&report).map_err(Fatal::input)?,
    };
    print_out(&text)?;
    print_err(&notes_text(&report.notes));
    Ok(if report.notes.is_empty() { 0 } else { INCOMPLETE })
}
