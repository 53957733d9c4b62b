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
use crate::commands::version::{VersionArgs, VERSION};
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
#[command(name = "kubectl quota", bin_name = "kubectl quota", version = VERSION, about = ABOUT, propagate_version = true, after_help = TOP_HELP)]
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
    /// Print the version, as --version does (-o json|yaml: with the Kubernetes releases it knows).
    #[command(after_help = "Examples:\n  kubectl quota version\n  kubectl quota version -o json")]
    Version(VersionArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    #[command(after_help = COMPLETION_HELP)]
    Completion {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// The widest help clap lays out, whatever the terminal (its default).
const MAX_HELP_WIDTH: usize = 100;

/// The command line as the program parses it: [`Cli`]'s, with one version string for every
/// command and help laid out for the terminal's width ([`layout_examples`]).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    // As clap measures it: the terminal, else COLUMNS, else 100; at most 100.
    let width = terminal_size::terminal_size()
        .map(|(w, _)| usize::from(w.0))
        .or_else(|| std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse().ok()))
        .unwrap_or(MAX_HELP_WIDTH)
        .clamp(1, MAX_HELP_WIDTH);
    prepared(Cli::command().term_width(width), width)
}

/// `cmd` and its subcommands with `--version` saying `kubectl quota vX.Y.Z` (clap would name
/// each subcommand) and their examples laid out for `width`.
fn prepared(cmd: clap::Command, width: usize) -> clap::Command {
    let cmd = match cmd.get_after_help().map(ToString::to_string) {
        Some(text) => cmd.after_help(layout_examples(&text, width)),
        None => cmd,
    };
    cmd.display_name("kubectl quota").mut_subcommands(|sc| prepared(sc, width))
}

/// An example command is a line indented by two spaces that is not a `#` comment; one ending
/// in ` \` goes on in the next line.
fn is_command(line: &str) -> bool {
    line.starts_with("  ") && !line.trim_start().starts_with('#')
}

/// Help's examples laid out for `width` columns, so that clap, which wraps every line longer
/// than that at any space, never breaks a command where a shell would read two: a command too
/// wide goes on in continuation lines (` \`, indented six spaces), broken only between
/// words and never inside quotes; a comment too wide goes on in more `#` lines. Prose is left
/// to clap.
pub fn layout_examples(text: &str, width: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if is_command(line) {
            let mut command = line.trim().to_string();
            while let Some(head) = command.strip_suffix('\\') {
                let Some(next) = lines.next() else { break };
                command = format!("{} {}", head.trim_end(), next.trim());
            }
            out.extend(fill(&flag_units(shell_words(&command)), "  ", "      ", " \\", width));
        } else if let Some(comment) = line.strip_prefix("  # ") {
            let words: Vec<String> = comment.split(' ').filter(|w| !w.is_empty()).map(str::to_string).collect();
            out.extend(fill(&words, "  # ", "  # ", "", width));
        } else {
            out.push(line.to_string());
        }
    }
    out.join("\n")
}

/// The words of a command line, a quoted string kept whole with its quotes.
fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    for c in command.chars() {
        match (quote, c) {
            (None, ' ') => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                continue;
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        word.push(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The words of a command with each flag kept with its value (`-o yaml`), so that a line
/// breaks before a flag rather than between a flag and its value.
fn flag_units(words: Vec<String>) -> Vec<String> {
    let mut units: Vec<String> = Vec::new();
    let mut words = words.into_iter().peekable();
    while let Some(w) = words.next() {
        let takes_value = w.starts_with('-') && !w.contains('=') && words.peek().is_some_and(|next| !next.starts_with('-'));
        match takes_value {
            true => units.push(format!("{w} {}", words.next().expect("peeked"))),
            false => units.push(w),
        }
    }
    units
}

/// `words` in lines of at most `width` columns: the first after `first`, the others after
/// `next`, every line but the last ending with `end`. A word wider than a line has one alone.
fn fill(words: &[String], first: &str, next: &str, end: &str, width: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for (i, word) in words.iter().enumerate() {
        // The room the line needs for this word and, unless it is the last, the end mark.
        let tail = if i + 1 < words.len() { end.width() } else { 0 };
        if !empty && line.width() + 1 + word.width() + tail > width {
            lines.push(format!("{line}{end}"));
            line = next.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    lines.push(line);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every command and comment of every help's examples, whole: (line, is a command).
    fn examples(text: &str) -> Vec<(String, bool)> {
        let mut out: Vec<(String, bool)> = Vec::new();
        let mut continued = false;
        for line in text.lines() {
            let (body, more) = match line.strip_suffix(" \\") {
                Some(b) => (b, true),
                None => (line, false),
            };
            if continued {
                out.last_mut().expect("a command goes on").0.push_str(&format!(" {}", body.trim()));
            } else if is_command(line) {
                out.push((body.trim().to_string(), true));
            } else if let Some(c) = line.strip_prefix("  # ") {
                match out.last_mut() {
                    // A comment line after a comment line: the same comment, laid out.
                    Some((prev, false)) if !prev.is_empty() => prev.push_str(&format!(" {c}")),
                    _ => out.push((c.to_string(), false)),
                }
            } else {
                out.push((String::new(), false));
            }
            continued = more;
        }
        out
    }

    #[test]
    fn examples_are_never_broken_inside_a_command() {
        fn walk(cmd: &clap::Command, texts: &mut Vec<String>) {
            texts.extend(cmd.get_after_help().map(ToString::to_string));
            cmd.get_subcommands().for_each(|sc| walk(sc, texts));
        }
        let mut texts = Vec::new();
        walk(&Cli::command(), &mut texts);
        assert!(texts.len() > 10);
        for text in &texts {
            let whole = examples(&layout_examples(text, 1000));
            for width in 20..=MAX_HELP_WIDTH {
                let laid = layout_examples(text, width);
                assert_eq!(examples(&laid), whole, "width {width}:\n{laid}");
                for line in laid.lines().filter(|l| is_command(l) || l.starts_with("  # ")) {
                    let one_word = flag_units(shell_words(line.trim().trim_start_matches("# ").trim_end_matches(" \\"))).len() == 1;
                    assert!(unicode_width::UnicodeWidthStr::width(line) <= width || one_word, "width {width}: {line:?}");
                }
            }
        }
        // The guard's own continuation is laid out again, not doubled.
        let guard = layout_examples("Examples:\n  kubectl quota guard serve --a b \\\n      --c d\n", 1000);
        assert_eq!(guard, "Examples:\n  kubectl quota guard serve --a b --c d");
        let quoted = layout_examples("  kubectl quota create q --scope-selector 'PriorityClass NotIn batch' -o yaml", 50);
        assert_eq!(quoted, "  kubectl quota create q \\\n      --scope-selector 'PriorityClass NotIn batch' \\\n      -o yaml");
    }

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
