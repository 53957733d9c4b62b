//! `kubectl-quota`: a thin shell over the `kubectl_quota` library and the live API.

mod live;

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use kubectl_quota::cli::{CheckArgs, Cli, Command, CreateArgs, CreateOutput, DescribeArgs, DescribeOutput, DryRun, OutputFormat, SortBy};
use kubectl_quota::completion::{self, Plan};
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

/// The manifests to check, decoded (at least one object).
fn load_candidates(args: &CheckArgs) -> Result<Vec<objects::Object>, Fatal> {
    let docs = manifest::load_paths(&args.filename, args.recursive)?;
    if docs.is_empty() {
        return Err(Fatal::input(format!("no objects found in {}", args.filename.join(", "))));
    }
    decode_all(&docs)
}

fn print_report(report: &check::Report, args: &CheckArgs) -> i32 {
    let output = match args.output {
        OutputFormat::Text => render::Output::Text,
        OutputFormat::Json => render::Output::Json,
        OutputFormat::Yaml => render::Output::Yaml,
    };
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    // A closed pipe (`| head`) is not an error of the check.
    let _ = render::write_report(report, output, args.quiet, &mut w).and_then(|_| std::io::Write::flush(&mut w));
    report.exit_code()
}

fn run_check_offline(cli: &Cli, args: &CheckArgs) -> Result<i32, Fatal> {
    let namespace = cli.namespace.clone().unwrap_or_else(|| "default".into());
    let state_docs = manifest::load_paths(&args.state, false)?;
    let mut state = check::ClusterState::from_objects(decode_all(&state_docs)?, &namespace);
    let limited = load_limited(args)?;
    let objs = load_candidates(args)?;
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
    let mut objs = load_candidates(args)?;
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
            let created = live::create_quota(&conn, &conn.namespace, &quota, server_dry).await.map_err(|e| Fatal(format!("failed to create quota: {e}"), 1))?;
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
    let (objs, namespace) = if args.state.is_empty() {
        let conn = live::connect(&cli.kube, cli.namespace.as_deref()).await.map_err(Fatal::input)?;
        let ns = (!args.all_namespaces).then_some(conn.namespace.as_str());
        (live::quotas(&conn, ns).await.map_err(|e| Fatal(e.to_string(), 1))?, conn.namespace.clone())
    } else {
        let namespace = cli.namespace.clone().unwrap_or_else(|| "default".into());
        let objs = decode_all(&manifest::load_paths(&args.state, false)?)?
            .into_iter()
            .map(|mut o| {
                o.meta.namespace.get_or_insert_with(|| namespace.clone());
                o
            })
            .filter(|o| args.all_namespaces || o.meta.namespace.as_deref() == Some(namespace.as_str()))
            .collect();
        (objs, namespace)
    };
    describe_objects(args, &objs, &namespace)
}

fn describe_objects(args: &DescribeArgs, objs: &[objects::Object], namespace: &str) -> Result<i32, Fatal> {
    let mut views: Vec<describe::QuotaView> = objs
        .iter()
        .filter(|o| args.name.as_ref().is_none_or(|n| *n == o.meta.name))
        .filter_map(|o| match &o.body {
            Body::ResourceQuota(q) => Some(describe::view(o.meta.namespace.as_deref().unwrap_or(namespace), &o.meta.name, q)),
            _ => None,
        })
        .collect();
    if let (Some(name), true) = (&args.name, views.is_empty()) {
        return Err(Fatal(format!("resourcequotas {name:?} not found in namespace {namespace:?}"), 1));
    }
    match args.sort {
        SortBy::Name => views.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name))),
        SortBy::Usage => {
            for v in views.iter_mut() {
                v.rows.sort_by(|a, b| b.percent.cmp(&a.percent).then(a.resource.cmp(&b.resource)));
            }
            views.sort_by(|a, b| a.namespace.cmp(&b.namespace).then(b.max_percent().cmp(&a.max_percent())).then(a.name.cmp(&b.name)))
        }
    }
    match args.output {
        DescribeOutput::Json => println!("{}", serde_json::to_string_pretty(&views).map_err(|e| Fatal::input(e.to_string()))?),
        DescribeOutput::Yaml => print!("{}", serde_yaml::to_string(&views).map_err(|e| Fatal::input(e.to_string()))?),
        DescribeOutput::Text | DescribeOutput::Wide if views.is_empty() => {
            println!("No resource quota{}.", if args.all_namespaces { String::new() } else { format!(" in namespace {namespace}") })
        }
        DescribeOutput::Text | DescribeOutput::Wide => print!("{}", describe::render_text(&views, args.output == DescribeOutput::Wide)),
    }
    Ok(0)
}

/// `kubectl-quota __complete WORDS...`: candidates for kubectl's plugin completion. Cluster
/// lookups that fail just offer nothing.
async fn run_complete(words: &[String]) -> i32 {
    // Connection flags typed so far, so completion asks the cluster the user is talking to.
    let flag = |names: &[&str]| words.windows(2).rev().find(|w| names.contains(&w[0].as_str())).map(|w| w[1].clone());
    let kube = kubectl_quota::cli::KubeFlags { kubeconfig: flag(&["--kubeconfig"]), context: flag(&["--context"]), ..Default::default() };
    let (items, files) = match completion::plan(words) {
        Plan::Words(w) => (w, false),
        Plan::Files => (vec![], true),
        Plan::Contexts => {
            let kc = match &kube.kubeconfig {
                Some(p) => kube::config::Kubeconfig::read_from(p).ok(),
                None => kube::config::Kubeconfig::read().ok(),
            };
            (kc.map(|k| k.contexts.into_iter().map(|c| c.name).collect()).unwrap_or_default(), false)
        }
        Plan::Namespaces => match live::connect(&kube, None).await {
            Ok(conn) => (live::namespace_names(&conn).await, false),
            Err(_) => (vec![], false),
        },
        Plan::Quotas { namespace } => {
            let names = match live::connect(&kube, namespace.as_deref()).await {
                Ok(conn) => live::quotas(&conn, Some(&conn.namespace)).await.map(|q| q.into_iter().map(|o| o.meta.name).collect()).unwrap_or_default(),
                Err(_) => vec![],
            };
            (names, false)
        }
    };
    let typed = words.last().map(String::as_str).unwrap_or("");
    let items: Vec<String> = items.into_iter().filter(|i| i.starts_with(typed)).collect();
    print!("{}", completion::render(&items, files));
    0
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
        Command::Completion { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(*shell, &mut cmd, "kubectl-quota", &mut std::io::stdout());
            Ok(0)
        }
    }
}

fn main() -> ExitCode {
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    colored::control::set_override(color);
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start: {e}");
            return ExitCode::from(2);
        }
    };
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("__complete") {
        return ExitCode::from(runtime.block_on(run_complete(&args[2..])) as u8);
    }
    let cli = Cli::parse();
    match runtime.block_on(run(&cli)) {
        Ok(code) => ExitCode::from(code as u8),
        Err(Fatal(msg, code)) => {
            eprintln!("error: {msg}");
            ExitCode::from(code)
        }
    }
}
