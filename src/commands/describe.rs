//! `kubectl quota describe`: Used/Hard at a glance. Flags -> the quotas (live, or from
//! `--state` files) -> the engine's views -> text, JSON or YAML.

use clap::{Args, ValueEnum};
use std::io::Write;

use kubectl_quota_engine::objects::{Body, Object};
use kubectl_quota_engine::report::quota_view::{self, QuotaView};

use crate::error::Fatal;
use crate::global::GlobalFlags;
use crate::input::for_each_object;
use crate::live;
use crate::render::describe::write_text;

pub const DESCRIBE_HELP: &str = "\
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

/// Runs `describe`: one paginated LIST live, or the quotas of `--state` files.
pub async fn run(g: &GlobalFlags, args: &DescribeArgs) -> Result<i32, Fatal> {
    let (views, namespace) = if args.state.is_empty() {
        let conn = live::connect(&g.kube, g.namespace.as_deref()).await.map_err(Fatal::input)?;
        let ns = (!args.all_namespaces).then_some(conn.namespace.as_str());
        // Each quota becomes its view as its page arrives: the objects are never all held.
        let mut views = Vec::new();
        live::for_each_quota(&conn, ns, |o| views.extend(view_of(args, &o, &conn.namespace))).await.map_err(|e| {
            let code = if e.unreachable { 2 } else { 1 };
            Fatal(e.on(&conn.server).to_string(), code)
        })?;
        (views, conn.namespace.clone())
    } else {
        let namespace = g.namespace.clone().unwrap_or_else(|| "default".into());
        // Each quota becomes its view as it is decoded, as live: the objects are never all held.
        let mut views = Vec::new();
        for_each_object(&args.state, false, |mut o| {
            o.meta.namespace.get_or_insert_with(|| namespace.clone());
            if args.all_namespaces || o.meta.namespace.as_deref() == Some(namespace.as_str()) {
                views.extend(view_of(args, &o, &namespace));
            }
        })?;
        (views, namespace)
    };
    describe_views(args, views, &namespace)
}

/// The view of a quota `describe` shows (`None`: not a quota, or not the one asked for).
fn view_of(args: &DescribeArgs, o: &Object, namespace: &str) -> Option<QuotaView> {
    if args.name.as_ref().is_some_and(|n| *n != o.meta.name) {
        return None;
    }
    match &o.body {
        Body::ResourceQuota(q) => Some(quota_view::view(o.meta.namespace.as_deref().unwrap_or(namespace), &o.meta.name, q)),
        _ => None,
    }
}

fn describe_views(args: &DescribeArgs, mut views: Vec<QuotaView>, namespace: &str) -> Result<i32, Fatal> {
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
    // Written straight to standard output, never built as one string.
    write_out(|w| match args.output {
        DescribeOutput::Json => {
            serde_json::to_writer_pretty(&mut *w, &views).map_err(std::io::Error::from)?;
            w.write_all(b"\n")
        }
        DescribeOutput::Yaml => crate::render::yaml::to_writer(w, &views),
        DescribeOutput::Text | DescribeOutput::Wide if views.is_empty() => {
            let ns = crate::escape::escape(namespace);
            writeln!(w, "No resource quota{}.", if args.all_namespaces { String::new() } else { format!(" in namespace {ns}") })
        }
        DescribeOutput::Text | DescribeOutput::Wide => write_text(w, &views, args.output == DescribeOutput::Wide),
    })?;
    // The process ends right after: freeing thousands of views one allocation at a time
    // would only add to its run time.
    std::mem::forget(views);
    Ok(0)
}

/// Runs `f` on buffered standard output. As `error::print_out`: a closed pipe ends output
/// quietly (the reader has seen enough); any other write error is fatal.
fn write_out(f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), Fatal> {
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    match f(&mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Fatal::input(format!("cannot write to standard output: {e}"))),
    }
}
