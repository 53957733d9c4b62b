//! `kubectl-quota`: a thin shell over the `kubectl_quota` library and the live API.

mod live;

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use kubectl_quota::cli::{CheckArgs, Cli, Command, CreateArgs, CreateOutput, DescribeArgs, DescribeOutput, DryRun, OutputFormat, SortBy};
use kubectl_quota::objects::Body;
use kubectl_quota::{admission_config, check, create, describe, manifest, objects, render, validation};

/// An error that ends the command: the message (printed as `error: ...`) and the exit status.
struct Fatal(String, u8);

impl Fatal {
    /// Bad input or an unusable environment: exit status 2.
    fn input(msg: impl Into<String>) -> Fatal {
        Fatal(msg.into(), 2)
    }
}

impl From<manifest::InputError> for Fatal {
    fn from(e: manifest::InputError) -> Self {
        Fatal::input(e.to_string())
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
        Err(Fatal::input(errors.join("\nerror: ")))
    }
}

fn load_limited(args: &CheckArgs) -> Result<Vec<kubectl_quota::admission::LimitedResource>, Fatal> {
    match &args.admission_config {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| Fatal::input(format!("{path}: cannot read: {e}")))?;
            Ok(admission_config::parse(path, &text)?)
        }
        None => Ok(vec![]),
    }
}

fn print_report(report: &check::Report, args: &CheckArgs) -> i32 {
    let output = match args.output {
        OutputFormat::Text => render::Output::Text,
        OutputFormat::Json => render::Output::Json,
        OutputFormat::Yaml => render::Output::Yaml,
    };
    print!("{}", render::render(report, output, args.quiet));
    report.exit_code()
}

fn run_check_offline(cli: &Cli, args: &CheckArgs) -> Result<i32, Fatal> {
    let namespace = cli.namespace.clone().unwrap_or_else(|| "default".into());
    let state_docs = manifest::load_paths(&args.state, false)?;
    let mut state = check::ClusterState::from_objects(decode_all(&state_docs)?, &namespace);
    let limited = load_limited(args)?;
    let docs = manifest::load_paths(&args.filename, args.recursive)?;
    if docs.is_empty() {
        return Err(Fatal::input(format!("no objects found in {}", args.filename.join(", "))));
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
    Ok(print_report(&report, args))
}

async fn run_check_live(cli: &Cli, args: &CheckArgs) -> Result<i32, Fatal> {
    let limited = load_limited(args)?;
    let docs = manifest::load_paths(&args.filename, args.recursive)?;
    if docs.is_empty() {
        return Err(Fatal::input(format!("no objects found in {}", args.filename.join(", "))));
    }
    let mut objs = decode_all(&docs)?;
    let conn = live::connect(&cli.kube, cli.namespace.as_deref()).await.map_err(Fatal::input)?;
    let namespaces: BTreeSet<String> = objs.iter().map(|o| o.meta.namespace.clone().unwrap_or_else(|| conn.namespace.clone())).collect();
    let (mut state, mut notes) = live::cluster_state(&conn, &namespaces).await.map_err(|e| {
        Fatal::input(if e.forbidden {
            format!("{e}\nthe check cannot decide anything without the quotas: it needs `list` on resourcequotas (the `view` ClusterRole has it)")
        } else {
            e.to_string()
        })
    })?;
    notes.extend(live::resolve_and_existing(&conn, &mut objs, &mut state).await);
    let opts = check::CheckOptions { namespace: conn.namespace.clone(), limited, nodes: args.nodes };
    let mut report = check::check(&mut state, objs, &opts);
    report.notes.extend(notes);
    Ok(print_report(&report, args))
}

async fn run_create(cli: &Cli, args: &CreateArgs) -> Result<i32, Fatal> {
    let flags = create::QuotaFlags {
        hard: args.hard.clone(),
        scopes: args.scopes.clone(),
        priority_classes: args.priority_class.clone(),
        scope_selectors: args.scope_selector.clone(),
    };
    // Client dry-run names no namespace unless one was given, as kubectl does.
    let mut quota = create::build_quota(&args.name, cli.namespace.as_deref(), &flags).map_err(Fatal::input)?;
    let errors = validation::validate_resource_quota(&quota);
    if !errors.is_empty() {
        return Err(Fatal::input(validation::render_server_message(&args.name, &errors)));
    }
    for w in create::warnings(&quota) {
        eprintln!("Warning: {w}");
    }
    let (created, suffix) = match args.dry_run {
        DryRun::Client => (quota, " (dry run)"),
        mode => {
            let conn = live::connect(&cli.kube, cli.namespace.as_deref()).await.map_err(Fatal::input)?;
            quota.metadata.namespace = Some(conn.namespace.clone());
            let server_dry = mode == DryRun::Server;
            let created = live::create_quota(&conn, &conn.namespace, &quota, server_dry)
                .await
                .map_err(|e| Fatal(format!("failed to create quota: {e}"), 1))?;
            (created, if server_dry { " (server dry run)" } else { "" })
        }
    };
    match args.output {
        Some(CreateOutput::Yaml) => print!("{}", serde_yaml::to_string(&created).map_err(|e| Fatal::input(e.to_string()))?),
        Some(CreateOutput::Json) => println!("{}", serde_json::to_string_pretty(&created).map_err(|e| Fatal::input(e.to_string()))?),
        Some(CreateOutput::Name) => println!("resourcequota/{}", args.name),
        None => println!("resourcequota/{} created{suffix}", args.name),
    }
    Ok(0)
}

async fn run_describe(cli: &Cli, args: &DescribeArgs) -> Result<i32, Fatal> {
    let conn = live::connect(&cli.kube, cli.namespace.as_deref()).await.map_err(Fatal::input)?;
    let ns = (!args.all_namespaces).then_some(conn.namespace.as_str());
    let objs = live::quotas(&conn, ns).await.map_err(|e| Fatal(e.to_string(), 1))?;
    let mut views: Vec<describe::QuotaView> = objs
        .iter()
        .filter(|o| args.name.as_ref().is_none_or(|n| *n == o.meta.name))
        .filter_map(|o| match &o.body {
            Body::ResourceQuota(q) => Some(describe::view(o.meta.namespace.as_deref().unwrap_or(&conn.namespace), &o.meta.name, q)),
            _ => None,
        })
        .collect();
    if let (Some(name), true) = (&args.name, views.is_empty()) {
        return Err(Fatal(format!("resourcequotas {name:?} not found in namespace {:?}", conn.namespace), 1));
    }
    match args.sort {
        SortBy::Name => views.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name))),
        SortBy::Usage => views.sort_by(|a, b| a.namespace.cmp(&b.namespace).then(b.max_percent().cmp(&a.max_percent())).then(a.name.cmp(&b.name))),
    }
    match args.output {
        DescribeOutput::Json => println!("{}", serde_json::to_string_pretty(&views).map_err(|e| Fatal::input(e.to_string()))?),
        DescribeOutput::Yaml => print!("{}", serde_yaml::to_string(&views).map_err(|e| Fatal::input(e.to_string()))?),
        DescribeOutput::Text | DescribeOutput::Wide if views.is_empty() => {
            println!("No resource quota{}.", if args.all_namespaces { String::new() } else { format!(" in namespace {}", conn.namespace) })
        }
        DescribeOutput::Text | DescribeOutput::Wide => print!("{}", describe::render_text(&views, args.output == DescribeOutput::Wide)),
    }
    Ok(0)
}

async fn run(cli: &Cli) -> Result<i32, Fatal> {
    match &cli.command {
        Command::Check(args) if !args.state.is_empty() => run_check_offline(cli, args),
        Command::Check(args) => run_check_live(cli, args).await,
        Command::Create(args) => run_create(cli, args).await,
        Command::Describe(args) => run_describe(cli, args).await,
        Command::Version => {
            println!("kubectl-quota {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
    }
}

fn main() -> ExitCode {
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    colored::control::set_override(color);
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(&cli)) {
        Ok(code) => ExitCode::from(code as u8),
        Err(Fatal(msg, code)) => {
            eprintln!("error: {msg}");
            ExitCode::from(code)
        }
    }
}
