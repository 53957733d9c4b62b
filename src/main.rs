//! `kubectl-quota`: a thin shell over the `kubectl_quota` library.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use kubectl_quota::cli::{CheckArgs, Cli, Command, OutputFormat};
use kubectl_quota::{admission_config, check, manifest, objects, render};

/// An error that ends the command with exit status 2 (bad input, unreachable cluster).
struct Fatal(String);

impl<E: std::fmt::Display> From<E> for Fatal {
    fn from(e: E) -> Self {
        Fatal(e.to_string())
    }
}

fn decode_all(docs: &[manifest::Document]) -> Result<Vec<objects::Object>, Fatal> {
    let mut objs = Vec::new();
    let mut errors = Vec::new();
    for d in docs {
        match objects::decode(d) {
            Ok(o) => objs.push(o),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if errors.is_empty() {
        Ok(objs)
    } else {
        Err(Fatal(errors.join("\nerror: ")))
    }
}

fn run_check(cli: &Cli, args: &CheckArgs) -> Result<i32, Fatal> {
    if args.state.is_empty() {
        return Err(Fatal("a live check is not available in this build yet: pass --state FILE with the cluster's quotas (offline mode)".into()));
    }
    let namespace = cli.namespace.clone().unwrap_or_else(|| "default".into());
    let state_docs = manifest::load_paths(&args.state, false)?;
    let mut state = check::ClusterState::from_objects(decode_all(&state_docs)?, &namespace);
    let limited = match &args.admission_config {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| Fatal(format!("{path}: cannot read: {e}")))?;
            admission_config::parse(path, &text)?
        }
        None => vec![],
    };
    let docs = manifest::load_paths(&args.filename, args.recursive)?;
    if docs.is_empty() {
        return Err(Fatal(format!("no objects found in {}", args.filename.join(", "))));
    }
    let objs = decode_all(&docs)?;
    let opts = check::CheckOptions { namespace: namespace.clone(), limited, nodes: args.nodes };
    let mut report = check::check(&mut state, objs, &opts);
    if cli.namespace.is_none() && state.quotas.get(&namespace).is_none_or(|q| q.is_empty()) {
        let others = state.quota_namespaces();
        if !others.is_empty() {
            report.notes.push(format!("the state has no quota in namespace {namespace:?}, only in {}: pass -n to check there", others.join(", ")));
        }
    }
    let output = match args.output {
        OutputFormat::Text => render::Output::Text,
        OutputFormat::Json => render::Output::Json,
        OutputFormat::Yaml => render::Output::Yaml,
    };
    print!("{}", render::render(&report, output, args.quiet));
    Ok(report.exit_code())
}

fn main() -> ExitCode {
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    colored::control::set_override(color);
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Check(args) => run_check(&cli, args),
        Command::Version => {
            println!("kubectl-quota {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
    };
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(Fatal(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}
