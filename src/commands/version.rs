//! `kubectl quota version`: the one version string, also what `--version` prints.

use clap::{Args, ValueEnum};
use serde::Serialize;

use kubectl_quota_engine::version::{CURRENT, NEWEST, OLDEST};

use crate::error::Fatal;

/// The plugin's version as every output and the krew manifest write it: `v` and Cargo's.
pub const VERSION: &str = concat!("v", env!("CARGO_PKG_VERSION"));

/// Output formats of `version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VersionOutput {
    Json,
    Yaml,
}

/// `kubectl quota version`.
#[derive(Debug, Args)]
pub struct VersionArgs {
    /// Output format (default: one line, as `--version` prints it).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<VersionOutput>,
}

/// What `version -o json|yaml` says: the version and the Kubernetes releases it answers for.
#[derive(Serialize)]
struct Info {
    name: &'static str,
    version: &'static str,
    kubernetes: Releases,
}

#[derive(Serialize)]
struct Releases {
    oldest: String,
    newest: String,
    /// The newest release out; `newest` may be one whose rules come from a pre-release.
    current: String,
}

/// Prints the plugin's version.
pub fn run(args: &VersionArgs) -> Result<i32, Fatal> {
    let info = Info {
        name: "kubectl-quota",
        version: VERSION,
        kubernetes: Releases { oldest: OLDEST.to_string(), newest: NEWEST.to_string(), current: CURRENT.to_string() },
    };
    let text = match args.output {
        None => format!("kubectl quota {VERSION}\n"),
        Some(VersionOutput::Json) => format!("{}\n", serde_json::to_string_pretty(&info).map_err(|e| Fatal::input(e.to_string()))?),
        Some(VersionOutput::Yaml) => crate::render::yaml::to_string(&info).map_err(Fatal::input)?,
    };
    crate::error::print_out(&text)?;
    Ok(0)
}
