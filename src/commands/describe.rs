//! `kubectl quota describe`: Used/Hard at a glance. Flags -> the quotas (live, or from
//! `--state` files) -> the engine's views -> text, JSON or YAML.

use clap::{Args, ValueEnum};
use kubectl_quota_engine::objects::{Body, Object};
use kubectl_quota_engine::report::quota_view::{self, QuotaView};

use crate::error::Fatal;
use crate::global::GlobalFlags;
use crate::input::{decode_all, load_paths};
use crate::live;
use crate::render::describe::render_text;

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
    let (objs, namespace) = if args.state.is_empty() {
        let conn = live::connect(&g.kube, g.namespace.as_deref()).await.map_err(Fatal::input)?;
        let ns = (!args.all_namespaces).then_some(conn.namespace.as_str());
        (live::quotas(&conn, ns).await.map_err(|e| Fatal(e.to_string(), if e.unreachable { 2 } else { 1 }))?, conn.namespace.clone())
    } else {
        let namespace = g.namespace.clone().unwrap_or_else(|| "default".into());
        let objs = decode_all(&load_paths(&args.state, false)?)?
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

fn describe_objects(args: &DescribeArgs, objs: &[Object], namespace: &str) -> Result<i32, Fatal> {
    let mut views: Vec<QuotaView> = objs
        .iter()
        .filter(|o| args.name.as_ref().is_none_or(|n| *n == o.meta.name))
        .filter_map(|o| match &o.body {
            Body::ResourceQuota(q) => Some(quota_view::view(o.meta.namespace.as_deref().unwrap_or(namespace), &o.meta.name, q)),
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
    let text = match args.output {
        DescribeOutput::Json => format!("{}\n", serde_json::to_string_pretty(&views).map_err(|e| Fatal::input(e.to_string()))?),
        DescribeOutput::Yaml => serde_yaml::to_string(&views).map_err(|e| Fatal::input(e.to_string()))?,
        DescribeOutput::Text | DescribeOutput::Wide if views.is_empty() => {
            let ns = crate::render::escape::escape(namespace);
            format!("No resource quota{}.\n", if args.all_namespaces { String::new() } else { format!(" in namespace {ns}") })
        }
        DescribeOutput::Text | DescribeOutput::Wide => render_text(&views, args.output == DescribeOutput::Wide),
    };
    crate::error::print_out(&text)?;
    Ok(0)
}
