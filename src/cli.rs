//! The command line's root: the global flags and the subcommands (each in [`crate::commands`]).
//! Flags follow kubectl's conventions (`-n/--namespace`, `-A`,
//! `-o`, `--kubeconfig`, `--context`, ...), placed before or after the subcommand.

use clap::{Parser, Subcommand};

use crate::commands::blocked::{BlockedArgs, BLOCKED_HELP};
use crate::commands::capacity::{CapacityArgs, CAPACITY_HELP};
use crate::commands::check::{CheckArgs, CHECK_HELP};
use crate::commands::completion::COMPLETION_HELP;
use crate::commands::create::{CreateArgs, CREATE_HELP};
use crate::commands::describe::{DescribeArgs, DESCRIBE_HELP};
use crate::commands::guard::{GuardArgs, GUARD_HELP};
use crate::commands::plan::{PlanArgs, PLAN_HELP};
use crate::commands::snapshot::{SnapshotArgs, SNAPSHOT_HELP};
use crate::commands::uncovered::{UncoveredArgs, UNCOVERED_HELP};
use crate::commands::why::{WhyArgs, WHY_HELP};
use crate::global::GlobalFlags;

const ABOUT: &str = "Create ResourceQuotas, see Used/Hard at a glance, and check whether manifests fit before the API server says no.";

const TOP_HELP: &str = "\
Examples:
  # Will this release fit the namespace's quotas? Which quota, scope or resource says no?
  kubectl quota check -f deploy/ -n team-a

  # Used/Hard with percentages, closest to the limit first
  kubectl quota describe -A --sort usage

  # The cluster at a glance: quotas' promise against the nodes, overcommitted first
  kubectl quota capacity

  # Warnings at `kubectl apply` time, for everyone: the guard, an admission webhook
  kubectl quota guard install

  # A quota for high-priority pods only
  kubectl quota create critical --hard=pods=10,requests.cpu=4 --priority-class=high

Use \"kubectl quota <command> --help\" for more information about a given command.";

/// kubectl quota: ResourceQuota made legible.
#[derive(Debug, Parser)]
#[command(name = "kubectl quota", bin_name = "kubectl quota", version, about = ABOUT, propagate_version = true, after_help = TOP_HELP)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalFlags,
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
    /// The quota these manifests need: headroom missing per quota, or quotas sized to admit them.
    #[command(after_help = PLAN_HELP)]
    Plan(PlanArgs),
    /// Save quotas, LimitRanges, classes and workloads as one List, for offline checks (CI).
    #[command(after_help = SNAPSHOT_HELP)]
    Snapshot(SnapshotArgs),
    /// Why are a workload's pods missing? The quota that refuses them and the smallest fix.
    #[command(after_help = WHY_HELP)]
    Why(WhyArgs),
    /// The cluster's quotas against its nodes: allocatable, promised and used per resource.
    #[command(after_help = CAPACITY_HELP)]
    Capacity(CapacityArgs),
    /// Namespaces no quota caps: without any quota, or without a cap on one resource.
    #[command(after_help = UNCOVERED_HELP)]
    Uncovered(UncoveredArgs),
    /// Workloads a quota blocks right now, one line each with the smallest fix.
    #[command(after_help = BLOCKED_HELP)]
    Blocked(BlockedArgs),
    /// The same answers at `kubectl apply` time, from the API server itself: an admission webhook.
    #[command(after_help = GUARD_HELP)]
    Guard(GuardArgs),
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
        assert_eq!(a.global.namespace, b.global.namespace);
    }
}
