//! The flags every subcommand takes, as kubectl has them: connection flags and the namespace.
//! Subcommands receive these, never the whole command line.

use clap::Args;

/// The help heading of the flags every subcommand takes.
pub const GLOBAL_HEADING: &str = "Global options (every command)";

/// Connection flags, as kubectl has them. In every help they stand under their own heading,
/// after the command's own flags, as kubectl keeps them apart (`kubectl options`).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = GLOBAL_HEADING)]
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
    /// The length of time to wait before giving up on a single server request: seconds, or
    /// numbers with units (e.g. 30s, 1m30s, 500ms); 0 waits for ever. Without it, a command's
    /// requests must end within 5m0s together (`guard serve` excepted).
    #[arg(long = "request-timeout", global = true, value_name = "DURATION")]
    pub request_timeout: Option<String>,
}

/// The global flags: connection and namespace.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = GLOBAL_HEADING)]
pub struct GlobalFlags {
    #[command(flatten)]
    pub kube: KubeFlags,
    /// The namespace (default: the kubeconfig context's namespace; offline: `default`).
    #[arg(short = 'n', long, global = true)]
    pub namespace: Option<String>,
}
