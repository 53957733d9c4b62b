//! Command-line interface: flags follow kubectl's conventions (`-n/--namespace`, `-A`,
//! `-o`, `--kubeconfig`, `--context`, ...), placed before or after the subcommand.

use clap::{Args, Parser, Subcommand, ValueEnum};

const ABOUT: &str = "Create ResourceQuotas, see Used/Hard at a glance, and check whether manifests fit before the API server says no.";

const TOP_HELP: &str = "\
Examples:
  # Will this release fit the namespace's quotas? Which quota, scope or resource says no?
  kubectl quota check -f deploy/ -n team-a

  # Used/Hard with percentages, closest to the limit first
  kubectl quota describe -A --sort usage

  # A quota for high-priority pods only
  kubectl quota create critical --hard=pods=10,requests.cpu=4 --priority-class=high

Use \"kubectl quota <command> --help\" for more information about a given command.";

const CHECK_HELP: &str = "\
Examples:
  # Would these manifests pass the namespace's quotas? (reads quotas, LimitRanges,
  # PriorityClasses and StorageClasses from the cluster; never writes)
  kubectl quota check -f deploy/ -n team-a

  # Offline: the cluster's state comes from files, no cluster is contacted
  kubectl quota check -f app.yaml --state quotas.yaml --state cluster-scoped.yaml -n team-a

  # Only the refusals, for CI (exit status 1 when anything would be refused)
  kubectl quota check -f app.yaml --state state.yaml --quiet

  # Machine-readable
  kubectl quota check -f app.yaml --state state.yaml -o json

Exit status: 0 everything fits, 1 something would be refused, 2 the input could not be read.";

/// Output formats of `check` and `describe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    Yaml,
}

/// Connection flags, as kubectl has them.
#[derive(Debug, Clone, Default, Args)]
pub struct KubeFlags {
    /// Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<String>,
    /// The name of the kubeconfig context to use.
    #[arg(long, global = true)]
    pub context: Option<String>,
    /// The name of the kubeconfig cluster to use.
    #[arg(long, global = true)]
    pub cluster: Option<String>,
    /// The name of the kubeconfig user to use.
    #[arg(long, global = true)]
    pub user: Option<String>,
    /// Username to impersonate for the operation.
    #[arg(long = "as", global = true, value_name = "USER")]
    pub as_user: Option<String>,
    /// Group to impersonate for the operation (repeatable).
    #[arg(long = "as-group", global = true, value_name = "GROUP")]
    pub as_group: Vec<String>,
    /// The length of time to wait before giving up on a single server request (e.g. 30s, 1m).
    #[arg(long = "request-timeout", global = true, value_name = "DURATION")]
    pub request_timeout: Option<String>,
}

/// kubectl quota: ResourceQuota made legible.
#[derive(Debug, Parser)]
#[command(name = "kubectl quota", bin_name = "kubectl quota", version, about = ABOUT, propagate_version = true, after_help = TOP_HELP)]
pub struct Cli {
    #[command(flatten)]
    pub kube: KubeFlags,
    /// The namespace (default: the kubeconfig context's namespace; offline: `default`).
    #[arg(short = 'n', long, global = true)]
    pub namespace: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Would these manifests pass ResourceQuota admission? Explain every match and every miss.
    #[command(after_help = CHECK_HELP)]
    Check(CheckArgs),
    /// Create a ResourceQuota: hard limits, scopes, and priority-class scope selectors.
    #[command(after_help = CREATE_HELP, visible_alias = "resourcequota")]
    Create(CreateArgs),
    /// Show quotas as Used/Hard tables with percentages; scopes and selectors in words.
    #[command(after_help = DESCRIBE_HELP)]
    Describe(DescribeArgs),
    /// Print the version.
    #[command(after_help = "Examples:\n  kubectl quota version")]
    Version,
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    #[command(after_help = COMPLETION_HELP)]
    Completion {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

const COMPLETION_HELP: &str = "\
Examples:
  # bash, for the plugin binary itself
  source <(kubectl-quota completion bash)

  # For `kubectl quota <TAB>`, put completions/kubectl_complete-quota on your PATH
  # (kubectl 1.26+ calls it); krew installs it next to the plugin.";

const CREATE_HELP: &str = "\
Examples:
  # A compute quota for the current namespace
  kubectl quota create compute --hard=requests.cpu=4,requests.memory=8Gi,limits.cpu=8,limits.memory=16Gi,pods=20

  # Only pods with the high or medium PriorityClass (a scope selector kubectl create cannot express)
  kubectl quota create critical --hard=pods=10,requests.cpu=4 --priority-class=high,medium

  # Any selector expression, and plain scopes
  kubectl quota create long-running --hard=pods=50 --scopes=NotTerminating --scope-selector 'PriorityClass NotIn batch'

  # Print the object without contacting the cluster
  kubectl quota create q --hard=pods=3 --dry-run=client -o yaml

The quota is validated with the API server's rules before anything is sent.";

const DESCRIBE_HELP: &str = "\
Examples:
  # Every quota of the current namespace
  kubectl quota describe

  # One quota, another namespace
  kubectl quota describe compute -n team-a

  # All namespaces, the quotas closest to their limits first
  kubectl quota describe -A --sort usage

  # Machine-readable
  kubectl quota describe -o json

  # Offline, from files (e.g. `kubectl get resourcequota -A -o yaml` saved earlier)
  kubectl quota describe -A --state quotas.yaml

Never writes to the cluster.";

/// `--dry-run` values, as kubectl has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DryRun {
    None,
    Client,
    Server,
}

/// Output formats of `create`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CreateOutput {
    Yaml,
    Json,
    Name,
}

/// `kubectl quota create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The quota's name.
    pub name: String,
    /// A comma-delimited set of resource=quantity pairs that define a hard limit.
    #[arg(long, value_name = "RESOURCE=QUANTITY,...")]
    pub hard: Option<String>,
    /// A comma-delimited set of quota scopes that must all match each object tracked by the quota.
    #[arg(long, value_name = "SCOPE,...")]
    pub scopes: Option<String>,
    /// Track only pods with one of these PriorityClasses (a `PriorityClass In` scope selector).
    #[arg(long = "priority-class", value_name = "NAME,...")]
    pub priority_class: Vec<String>,
    /// A scope selector expression: 'SCOPE OPERATOR [VALUE,...]' (repeatable), e.g.
    /// 'PriorityClass In high,medium', 'PriorityClass DoesNotExist'.
    #[arg(long = "scope-selector", value_name = "EXPRESSION")]
    pub scope_selector: Vec<String>,
    /// Must be "none", "server", or "client". client: print the object, send nothing;
    /// server: submit with dryRun=All, persist nothing.
    #[arg(long = "dry-run", value_enum, default_value = "none", num_args = 0..=1, default_missing_value = "client")]
    pub dry_run: DryRun,
    /// Output format (default: `resourcequota/NAME created`).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<CreateOutput>,
}

/// Sort orders of `describe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortBy {
    Name,
    Usage,
}

/// Output formats of `describe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DescribeOutput {
    Text,
    Wide,
    Json,
    Yaml,
}

/// `kubectl quota describe`.
#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// Only this quota.
    pub name: Option<String>,
    /// Quotas of every namespace, grouped by namespace.
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
    /// Order: by name, or by how close to a limit (highest use first).
    #[arg(long, value_enum, default_value = "name")]
    pub sort: SortBy,
    /// Output format; wide adds spec.hard values the quota controller has not synced yet.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: DescribeOutput,
    /// Offline: describe the ResourceQuotas in these files instead of the cluster's.
    #[arg(long, value_name = "FILE")]
    pub state: Vec<String>,
}

/// `kubectl quota check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Manifests to check: files, directories, or - for standard input (repeatable).
    #[arg(short = 'f', long = "filename", required = true, value_name = "FILE")]
    pub filename: Vec<String>,
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
    #[arg(long, value_name = "N")]
    pub nodes: Option<u32>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: OutputFormat,
    /// Print only what would be refused.
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_flags_go_before_or_after_the_subcommand() {
        let a = Cli::try_parse_from(["kubectl-quota", "-n", "x", "check", "-f", "a.yaml"]).unwrap();
        let b = Cli::try_parse_from(["kubectl-quota", "check", "-f", "a.yaml", "-n", "x"]).unwrap();
        assert_eq!(a.namespace, b.namespace);
    }
}
