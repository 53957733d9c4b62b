//! Completion for `kubectl quota <TAB>`: kubectl (1.26+) runs `kubectl_complete-quota` with the
//! words typed after `kubectl quota`, the last being the one to complete, and reads candidates
//! one per line followed by `:<directive>` (cobra's protocol: 0 = let the shell complete files,
//! 4 = no file completion).
//!
//! [`plan`] decides *what* to complete from the words alone; [`run_protocol`] fetches contexts,
//! namespaces and quota names when asked. `kubectl quota completion SHELL` ([`run`]) prints a
//! shell script for the plugin binary itself.
//!
//! ```
//! use clap::CommandFactory;
//! use kubectl_quota::cli::Cli;
//! use kubectl_quota::commands::completion::{plan, Plan};
//!
//! let root = Cli::command();
//! assert_eq!(plan(&root, &["desc".into()]), Plan::Words(vec!["describe".into()]));
//! assert_eq!(plan(&root, &["check".into(), "-f".into(), "".into()]), Plan::Files);
//! assert_eq!(plan(&root, &["-n".into(), "".into()]), Plan::Namespaces);
//! ```

use crate::error::Fatal;
use crate::global::KubeFlags;
use crate::live;

pub const COMPLETION_HELP: &str = concat!(
    "\
Examples:
  # bash, for the plugin binary itself
  source <(kubectl-quota completion bash)

  # For `kubectl quota <TAB>` (kubectl 1.26+ and its own completion set up): kubectl runs
  # kubectl_complete-quota from your PATH. krew installs it in the plugin's directory, not on
  # PATH: link it there once
  ln -s \"${KREW_ROOT:-$HOME/.krew}/store/quota/v",
    env!("CARGO_PKG_VERSION"),
    "/kubectl_complete-quota\" ~/.local/bin/

  # Installed by hand: copy completions/kubectl_complete-quota from the source (or the
  # release archive) next to kubectl-quota"
);

/// What to offer for the word being completed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// These words (already filtered by the typed prefix).
    Words(Vec<String>),
    /// Files: the shell's own completion.
    Files,
    /// Namespaces of the cluster.
    Namespaces,
    /// Contexts of the kubeconfig.
    Contexts,
    /// Quota names in the namespace the words name (or the context's).
    Quotas { namespace: Option<String> },
}

/// Flags whose value is a file.
const FILE_FLAGS: &[&str] = &["-f", "--filename", "-k", "--kustomize", "--state", "--admission-config", "--kubeconfig"];

/// Decides what to complete; `words` are the words after `kubectl quota`, the last one the
/// (possibly empty) word being completed.
pub fn plan(root: &clap::Command, words: &[String]) -> Plan {
    let cmd = root;
    let (typed, before) = match words.split_last() {
        Some((last, rest)) => (last.as_str(), rest),
        None => ("", &[][..]),
    };
    let prefixed = |items: Vec<String>| Plan::Words(items.into_iter().filter(|w| w.starts_with(typed)).collect());
    let namespace = before.windows(2).rev().find(|w| w[0] == "-n" || w[0] == "--namespace").map(|w| w[1].clone());
    let subcommand = before.iter().find_map(|w| cmd.get_subcommands().find(|s| s.get_name() == w).map(|s| s.get_name().to_string()));
    let sub = subcommand.as_deref().and_then(|n| cmd.find_subcommand(n));

    // The value of a flag.
    if let Some(prev) = before.last().map(String::as_str) {
        if FILE_FLAGS.contains(&prev) {
            return Plan::Files;
        }
        match prev {
            "-n" | "--namespace" => return Plan::Namespaces,
            "--context" => return Plan::Contexts,
            _ => {}
        }
        let flag = sub
            .into_iter()
            .chain(std::iter::once(cmd))
            .flat_map(|c| c.get_arguments())
            .find(|a| a.get_long().is_some_and(|l| prev == format!("--{l}")) || a.get_short().is_some_and(|s| prev == format!("-{s}")));
        if let Some(a) = flag.filter(|a| a.get_action().takes_values()) {
            let values: Vec<String> = a.get_possible_values().iter().map(|v| v.get_name().to_string()).collect();
            if !values.is_empty() {
                return prefixed(values);
            }
            if a.get_long() == Some("scopes") {
                return prefixed(["Terminating", "NotTerminating", "BestEffort", "NotBestEffort"].iter().map(|s| s.to_string()).collect());
            }
            return Plan::Words(vec![]);
        }
    }
    if typed.starts_with('-') {
        let mut flags: Vec<String> = sub
            .into_iter()
            .chain(std::iter::once(cmd))
            .flat_map(|c| c.get_arguments())
            .filter(|a| !a.is_hide_set())
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        flags.sort();
        flags.dedup();
        return prefixed(flags);
    }
    match subcommand.as_deref() {
        None => prefixed(cmd.get_subcommands().filter(|s| !s.is_hide_set()).map(|s| s.get_name().to_string()).collect()),
        Some("describe") => Plan::Quotas { namespace },
        Some("completion") => prefixed(["bash", "zsh", "fish", "powershell", "elvish"].iter().map(|s| s.to_string()).collect()),
        Some(_) => Plan::Words(vec![]),
    }
}

/// Renders candidates in the protocol kubectl reads. A candidate holding a control character
/// (a kubeconfig's context name with a newline or an escape sequence) is dropped: printed, it
/// would inject a candidate of its own or drive the terminal, and escaped it would complete to
/// a name that does not exist.
pub fn render(candidates: &[String], files: bool) -> String {
    let mut out: String = candidates.iter().filter(|c| crate::escape::is_plain(c)).map(|c| format!("{c}\n")).collect();
    out.push_str(if files { ":0\n" } else { ":4\n" });
    out
}

/// How long completion may wait for the cluster: a person is waiting at the prompt, and a
/// server that never answers must not hold the shell.
const COMPLETION_DEADLINE: std::time::Duration = std::time::Duration::from_millis(1500);

/// `kubectl-quota __complete WORDS...`: candidates for kubectl's plugin completion. Cluster
/// lookups that fail just offer nothing.
pub async fn run_protocol(root: &clap::Command, words: &[String]) -> i32 {
    // Connection flags typed so far, so completion asks the cluster the user is talking to.
    let flag = |names: &[&str]| words.windows(2).rev().find(|w| names.contains(&w[0].as_str())).map(|w| w[1].clone());
    let kube = KubeFlags { kubeconfig: flag(&["--kubeconfig"]), context: flag(&["--context"]), ..Default::default() };
    let (items, files) = match plan(root, words) {
        Plan::Words(w) => (w, false),
        Plan::Files => (vec![], true),
        Plan::Contexts => {
            let kc = live::load_kubeconfig(kube.kubeconfig.as_deref()).ok().flatten();
            (kc.map(|k| k.contexts.into_iter().map(|c| c.name).collect()).unwrap_or_default(), false)
        }
        Plan::Namespaces => {
            let names = async {
                match live::connect(&kube, None).await {
                    Ok(conn) => live::namespace_names(&conn).await,
                    Err(_) => vec![],
                }
            };
            (tokio::time::timeout(COMPLETION_DEADLINE, names).await.unwrap_or_default(), false)
        }
        Plan::Quotas { namespace } => {
            let names = async {
                match live::connect(&kube, namespace.as_deref()).await {
                    Ok(conn) => live::quotas(&conn, Some(&conn.namespace)).await.map(|q| q.into_iter().map(|o| o.meta.name).collect()).unwrap_or_default(),
                    Err(_) => vec![],
                }
            };
            (tokio::time::timeout(COMPLETION_DEADLINE, names).await.unwrap_or_default(), false)
        }
    };
    let typed = words.last().map(String::as_str).unwrap_or("");
    let items: Vec<String> = items.into_iter().filter(|i| i.starts_with(typed)).collect();
    let _ = crate::error::print_out(&render(&items, files));
    0
}

/// `kubectl quota completion SHELL`: the completion script of the plugin binary.
pub fn run(mut root: clap::Command, shell: clap_complete::Shell) -> Result<i32, Fatal> {
    let cmd = &mut root;
    clap_complete::generate(shell, cmd, "kubectl-quota", &mut std::io::stdout());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(words: &[&str]) -> Plan {
        plan(&<crate::cli::Cli as clap::CommandFactory>::command(), &words.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    fn words(items: &[&str]) -> Plan {
        Plan::Words(items.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn completion_plans() {
        let cases: Vec<(Vec<&str>, Plan)> = vec![
            (
                vec![""],
                words(&["check", "create", "describe", "plan", "snapshot", "why", "capacity", "uncovered", "blocked", "guard", "version", "completion"]),
            ),
            (vec!["capacity", "--by", ""], words(&["namespace"])),
            (vec!["c"], words(&["check", "create", "capacity", "completion"])),
            (vec!["check", "-f", ""], Plan::Files),
            (vec!["check", "--state", "st"], Plan::Files),
            (vec!["check", "-o", ""], words(&["text", "json", "yaml", "junit", "github"])),
            (vec!["check", "-k", ""], Plan::Files),
            (vec!["describe", "--sort", "u"], words(&["usage"])),
            (vec!["create", "q", "--dry-run", ""], words(&["none", "client", "server"])),
            (vec!["create", "q", "--scopes", "Not"], words(&["NotTerminating", "NotBestEffort"])),
            (vec!["-n", ""], Plan::Namespaces),
            (vec!["describe", "--namespace", "te"], Plan::Namespaces),
            (vec!["--context", ""], Plan::Contexts),
            (vec!["describe", ""], Plan::Quotas { namespace: None }),
            (vec!["-n", "team", "describe", "c"], Plan::Quotas { namespace: Some("team".into()) }),
            (vec!["describe", "--so"], words(&["--sort"])),
            (vec!["completion", "z"], words(&["zsh"])),
        ];
        for (input, want) in cases {
            assert_eq!(p(&input), want, "{input:?}");
        }
    }

    #[test]
    fn flags_of_the_subcommand_and_globals_are_offered() {
        let Plan::Words(w) = p(&["check", "--"]) else { panic!() };
        for f in ["--filename", "--state", "--quiet", "--namespace", "--kubeconfig", "--context"] {
            assert!(w.contains(&f.to_string()), "{f} missing from {w:?}");
        }
    }

    #[test]
    fn protocol_ends_with_a_directive() {
        assert_eq!(render(&["a".into(), "b".into()], false), "a\nb\n:4\n");
        assert_eq!(render(&[], true), ":0\n");
    }

    #[test]
    fn candidates_with_control_characters_are_dropped() {
        let names = ["prod", "evil\ninjected", "esc\x1b]0;title\x07", "cr\rx", "csi\u{9b}1m", "rtl\u{202e}x", "ls\u{2028}x", "caf\u{e9}"];
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        assert_eq!(render(&names, false), "prod\ncaf\u{e9}\n:4\n");
    }
}
