//! The program: parses the command line and dispatches to a subcommand.
//!
//! It lives in the library, and `main.rs` only calls [`main`]: the binary crate then compiles
//! nothing of its own, instead of compiling again every generic function the dispatch uses
//! (kube's clients, the renderers), which took a fifth of a cold build's critical path.

use std::io::IsTerminal;
use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::commands::{blocked, capacity, check, completion, create, describe, guard, plan, snapshot, uncovered, version, why};
use crate::error::{print_err, Fatal};
use crate::escape::escape_lines;
use clap::{CommandFactory, FromArgMatches};

async fn dispatch(cli: &Cli) -> Result<i32, Fatal> {
    match &cli.command {
        Command::Check(args) => check::run(&cli.global, args).await,
        Command::Create(args) => create::run(&cli.global, args).await,
        Command::Describe(args) => describe::run(&cli.global, args).await,
        Command::Plan(args) => plan::run(&cli.global, args).await,
        Command::Snapshot(args) => snapshot::run(&cli.global, args).await,
        Command::Why(args) => why::run(&cli.global, args).await,
        Command::Capacity(args) => capacity::run(&cli.global, args).await,
        Command::Uncovered(args) => uncovered::run(&cli.global, args).await,
        Command::Blocked(args) => blocked::run(&cli.global, args).await,
        Command::Guard(args) => guard::run(&cli.global, args).await,
        Command::Version(args) => version::run(args),
        Command::Completion { shell } => completion::run(Cli::command(), *shell),
    }
}

/// Runs `kubectl-quota` with the process's arguments and returns its exit status.
pub fn main() -> ExitCode {
    crate::alloc::configure();
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    colored::control::set_override(color);
    let args: Vec<String> = std::env::args().collect();
    // The guard's server answers requests on every core; every other command is one client.
    let serving = args.iter().skip(1).any(|a| a == "guard") && args.iter().any(|a| a == "serve");
    let built = if serving {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    };
    let runtime = match built {
        Ok(r) => r,
        Err(e) => {
            print_err(&format!("error: cannot start: {e}\n"));
            return ExitCode::from(2);
        }
    };
    if args.get(1).map(String::as_str) == Some("__complete") {
        return ExitCode::from(runtime.block_on(completion::run_protocol(&Cli::command(), &args[2..])) as u8);
    }
    let cli = match crate::cli::command().try_get_matches().and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match runtime.block_on(dispatch(&cli)) {
        Ok(code) => ExitCode::from(code as u8),
        Err(Fatal(msg, code)) => {
            // Messages quote names and files from the input: nothing in them reaches the
            // terminal as a control sequence.
            // A server's own answer stands as kubectl prints it (`Error from server
            // (Forbidden): ...`, `The ResourceQuota "q" is invalid: ...`); anything else is ours,
            // after `error: `, as kubectl words its own.
            let shown = escape_lines(&msg);
            if crate::error::is_server_answer(&msg) {
                print_err(&format!("{shown}\n"));
            } else {
                print_err(&format!("error: {shown}\n"));
            }
            ExitCode::from(code)
        }
    }
}
