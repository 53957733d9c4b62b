//! `kubectl quota describe`: Used/Hard at a glance. Flags -> the quotas (live, or from
//! `--state` files) -> the engine's views -> text, JSON or YAML.

use clap::{Args, ValueEnum};
use std::io::Write;

use kubectl_quota_engine::kueue::{self, Kueue};
use kubectl_quota_engine::objects::{Body, LabelSelector, Object};
use kubectl_quota_engine::report::queue_view::{self, QueueView};
use kubectl_quota_engine::report::quota_view::{self, QuotaView};

use crate::error::Fatal;
use crate::global::GlobalFlags;
use crate::input::for_each_object;
use crate::live;
use crate::render::describe::{write_queues, write_text};

pub const DESCRIBE_HELP: &str = "\
Examples:
  # Every quota of the current namespace
  kubectl quota describe

  # One quota, another namespace
  kubectl quota describe compute -n team-a

  # Several quotas, named as kubectl names them
  kubectl quota describe compute resourcequota/objects

  # The quotas with a label
  kubectl quota describe -A -l team=platform

  # All namespaces, the quotas closest to their limits first
  kubectl quota describe -A --sort usage

  # Machine-readable
  kubectl quota describe -o json

  # Offline, from files (e.g. `kubectl get resourcequota -A -o yaml` saved earlier)
  kubectl quota describe -A --state quotas.yaml

A quota named that does not exist is said as kubectl says it (`Error from server (NotFound):
resourcequotas \"x\" not found`) after the others are shown; the exit status is then 2, as
`why`'s for a workload that does not exist. Never writes to the cluster.";
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
    /// Only these quotas: NAME or resourcequota/NAME (also quota/NAME, resourcequotas/NAME).
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// Only quotas whose labels match this selector (`-l team=a`, `env in (prod,staging)`,
    /// `!legacy`; `=`, `==`, `!=`, `in`, `notin`, `key`, `!key`, comma-separated).
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Quotas of every namespace, grouped by namespace.
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
    /// Order: by name, or by how close to a limit (highest use first). Default: by name, or
    /// in the order the quotas are named.
    #[arg(long, value_enum)]
    pub sort: Option<SortBy>,
    /// Output format; wide adds spec.hard values the quota controller has not synced yet.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: DescribeOutput,
    /// Offline: describe the ResourceQuotas in these files instead of the cluster's.
    #[arg(long, value_name = "FILE")]
    pub state: Vec<String>,
}

/// Which quotas `describe` shows: the names asked for (none: all) and a label selector.
struct Wanted {
    names: Vec<String>,
    selector: Option<Selector>,
}

impl Wanted {
    fn from(args: &DescribeArgs) -> Result<Wanted, Fatal> {
        let names = args.names.iter().map(|n| quota_name(n)).collect::<Result<_, _>>()?;
        let selector = args.selector.as_deref().map(Selector::parse).transpose().map_err(Fatal::input)?;
        Ok(Wanted { names, selector })
    }

    /// Whether every quota is wanted (no name, no selector): Kueue's queues are shown then.
    fn all(&self) -> bool {
        self.names.is_empty() && self.selector.is_none()
    }

    fn wants(&self, o: &Object) -> bool {
        (self.names.is_empty() || self.names.contains(&o.meta.name)) && self.selector.as_ref().is_none_or(|s| s.matches(&o.meta.labels))
    }
}

/// A quota's name as `describe` takes it: `NAME`, or `resourcequota/NAME` as kubectl prints
/// it (`quota/` and `resourcequotas/` too).
fn quota_name(arg: &str) -> Result<String, Fatal> {
    let name = match arg.split_once('/') {
        Some(("resourcequota" | "resourcequotas" | "quota", name)) => name,
        Some(_) => {
            return Err(Fatal::input(format!("{:?}: describe shows ResourceQuotas only: name one as NAME or resourcequota/NAME", crate::escape::escape(arg))))
        }
        None => arg,
    };
    if name.is_empty() || name.contains('/') {
        return Err(Fatal::input(format!("{:?}: name a quota as NAME or resourcequota/NAME", crate::escape::escape(arg))));
    }
    Ok(name.to_string())
}

/// Runs `describe`: one paginated LIST live, or the quotas of `--state` files.
pub async fn run(g: &GlobalFlags, args: &DescribeArgs) -> Result<i32, Fatal> {
    let wanted = Wanted::from(args)?;
    let mut queues = Vec::new();
    let (views, namespace, live) = if args.state.is_empty() {
        let conn = live::connect(&g.kube, g.namespace.as_deref()).await?;
        let ns = (!args.all_namespaces).then_some(conn.namespace.as_str());
        // Each quota becomes its view as its page arrives: the objects are never all held.
        // The server filters by the selector; it is applied here again, which changes nothing.
        let mut views = Vec::new();
        live::for_each_quota(&conn, ns, args.selector.as_deref(), |o| views.extend(view_of(&wanted, &o, &conn.namespace))).await.map_err(|e| {
            let code = if e.unreachable { 2 } else { 1 };
            Fatal(e.on(&conn.server).to_string(), code)
        })?;
        // Kueue's queues beside them, where Kueue is installed; quotas named or selected: not.
        if wanted.all() {
            match live::kueue_queues(&conn, ns).await {
                Ok(k) => queues = k.map(|k| queue_view::views(&k, ns)).unwrap_or_default(),
                Err(e) => crate::error::print_err(&format!("warning: Kueue's queues are not shown: {}\n", e.on(&conn.server))),
            }
        }
        (views, conn.namespace.clone(), true)
    } else {
        let namespace = g.namespace.clone().unwrap_or_else(|| "default".into());
        // Each quota becomes its view as it is decoded, as live: the objects are never all held.
        let mut views = Vec::new();
        let mut kueue = Kueue::default();
        for_each_object(&args.state, false, |mut o| {
            o.meta.namespace.get_or_insert_with(|| namespace.clone());
            match &o.body {
                Body::Kept(v) if o.type_info.group == kueue::GROUP && wanted.all() => kueue.add(v, o.meta.namespace.as_deref().unwrap_or(&namespace)),
                _ if args.all_namespaces || o.meta.namespace.as_deref() == Some(namespace.as_str()) => views.extend(view_of(&wanted, &o, &namespace)),
                _ => {}
            }
        })?;
        queues = queue_view::views(&kueue, (!args.all_namespaces).then_some(namespace.as_str()));
        (views, namespace, false)
    };
    let missing: Vec<&String> = wanted.names.iter().filter(|n| !views.iter().any(|v| v.name == **n)).collect();
    let mut code = describe_views(args, views, queues, &namespace, &wanted.names)?;
    // As kubectl: the quotas found are shown, then each one not found is said.
    for name in &missing {
        let name = crate::escape::escape(name);
        let line = match live {
            true => format!("Error from server (NotFound): resourcequotas {name:?} not found\n"),
            false => format!("error: resourcequotas {name:?} not found in namespace {:?} of the --state files\n", crate::escape::escape(&namespace)),
        };
        crate::error::print_err(&line);
        code = NOT_FOUND;
    }
    Ok(code)
}

/// The exit status when something named does not exist, as `why`'s: the command could not
/// do what it was asked (1 is `why`'s "pods are missing").
const NOT_FOUND: i32 = 2;

/// The view of a quota `describe` shows (`None`: not a quota, or not one asked for).
fn view_of(wanted: &Wanted, o: &Object, namespace: &str) -> Option<QuotaView> {
    if !wanted.wants(o) {
        return None;
    }
    match &o.body {
        Body::ResourceQuota(q) => Some(quota_view::view(o.meta.namespace.as_deref().unwrap_or(namespace), &o.meta.name, q)),
        _ => None,
    }
}

/// One entry of `describe -o json`: a quota or a Kueue queue, told apart by `kind`.
#[derive(serde::Serialize)]
#[serde(tag = "kind")]
enum Described<'a> {
    ResourceQuota(&'a QuotaView),
    LocalQueue(&'a QueueView),
}

/// Writes the views, then Kueue's queues (`queues`). With quotas `named`, finding none is not
/// "No resource quota", and they come in the order named unless `--sort` says otherwise.
fn describe_views(args: &DescribeArgs, mut views: Vec<QuotaView>, queues: Vec<QueueView>, namespace: &str, named: &[String]) -> Result<i32, Fatal> {
    if !named.is_empty() && views.is_empty() {
        return Ok(0);
    }
    match args.sort {
        None if !named.is_empty() => {
            let place = |v: &QuotaView| named.iter().position(|n| *n == v.name);
            views.sort_by(|a, b| a.namespace.cmp(&b.namespace).then(place(a).cmp(&place(b))))
        }
        None | Some(SortBy::Name) => views.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name))),
        Some(SortBy::Usage) => {
            for v in views.iter_mut() {
                v.rows.sort_by(|a, b| b.percent.cmp(&a.percent).then(a.resource.cmp(&b.resource)));
            }
            // Namespaces too: the one whose quota is nearest a limit first, its quotas in order.
            let mut nearest: std::collections::BTreeMap<String, _> = std::collections::BTreeMap::new();
            for v in &views {
                let e = nearest.entry(v.namespace.clone()).or_insert(v.max_percent());
                *e = (*e).max(v.max_percent());
            }
            views.sort_by(|a, b| {
                (nearest[&b.namespace].cmp(&nearest[&a.namespace]))
                    .then(a.namespace.cmp(&b.namespace))
                    .then(b.max_percent().cmp(&a.max_percent()))
                    .then(a.name.cmp(&b.name))
            })
        }
    }
    // Written straight to standard output, never built as one string.
    let described = || views.iter().map(Described::ResourceQuota).chain(queues.iter().map(Described::LocalQueue)).collect::<Vec<_>>();
    write_out(|w| match args.output {
        DescribeOutput::Json => {
            serde_json::to_writer_pretty(&mut *w, &described()).map_err(std::io::Error::from)?;
            w.write_all(b"\n")
        }
        DescribeOutput::Yaml => crate::render::yaml::to_writer(w, &described()),
        DescribeOutput::Text | DescribeOutput::Wide => {
            if views.is_empty() {
                let ns = crate::escape::escape(namespace);
                writeln!(w, "No resource quota{}.", if args.all_namespaces { String::new() } else { format!(" in namespace {ns}") })?;
            } else {
                write_text(w, &views, args.output == DescribeOutput::Wide)?;
            }
            if !queues.is_empty() {
                w.write_all(b"\n")?;
                write_queues(w, &queues)?;
            }
            Ok(())
        }
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

/// A label selector as kubectl takes one (`-l`): requirements separated by commas, each
/// `key=value` (or `==`), `key!=value`, `key in (a,b)`, `key notin (a,b)`, `key` or `!key`.
/// Live, the server applies it; offline, [`Selector::matches`] does, with the same meaning
/// (`!=` and `notin` also match objects without the key).
#[derive(Debug, PartialEq)]
struct Selector(LabelSelector);

impl Selector {
    fn parse(text: &str) -> Result<Selector, String> {
        let bad = |why: &str| format!("invalid --selector {:?}: {why}", crate::escape::escape(text));
        let mut selector = LabelSelector::default();
        for part in split_outside_parentheses(text) {
            let part = part.trim();
            if part.is_empty() {
                if text.trim().is_empty() {
                    continue;
                }
                return Err(bad("an empty requirement"));
            }
            selector.match_expressions.push(requirement(part).map_err(|e| bad(&e))?);
        }
        Ok(Selector(selector))
    }

    /// As the API server matches labels (the engine's selectors, webhooks' among them).
    fn matches(&self, labels: &std::collections::BTreeMap<String, String>) -> bool {
        self.0.matches(labels)
    }
}

/// `text` split at the commas that are not inside `( )`.
fn split_outside_parentheses(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// One requirement of `-l` as a selector expression: (key, operator, values).
fn requirement(part: &str) -> Result<(String, String, Vec<String>), String> {
    let key = |k: &str| -> Result<String, String> {
        let k = k.trim();
        let ok = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
        ok.then(|| k.to_string()).ok_or_else(|| format!("{k:?} is not a label key"))
    };
    let value = |v: &str| -> Result<String, String> {
        let v = v.trim();
        let ok = v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        ok.then(|| v.to_string()).ok_or_else(|| format!("{v:?} is not a label value"))
    };
    if let Some(k) = part.strip_prefix('!') {
        return Ok((key(k)?, "DoesNotExist".into(), vec![]));
    }
    if let Some((k, v)) = part.split_once("!=") {
        return Ok((key(k)?, "NotIn".into(), vec![value(v)?]));
    }
    if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
        return Ok((key(k)?, "In".into(), vec![value(v)?]));
    }
    let words: Vec<&str> = part.splitn(2, char::is_whitespace).collect();
    if let [k, rest] = words.as_slice() {
        let rest = rest.trim_start();
        let (op, list) = rest.split_at(rest.find('(').ok_or_else(|| format!("{part:?}: expected in (...) or notin (...)"))?);
        let list = list.strip_prefix('(').and_then(|l| l.strip_suffix(')')).ok_or_else(|| format!("{part:?}: unbalanced parentheses"))?;
        let values = list.split(',').map(value).collect::<Result<Vec<_>, _>>()?;
        return match op.trim() {
            "in" => Ok((key(k)?, "In".into(), values)),
            "notin" => Ok((key(k)?, "NotIn".into(), values)),
            other => Err(format!("{other:?} is not an operator: use =, ==, !=, in or notin")),
        };
    }
    Ok((key(part)?, "Exists".into(), vec![]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_read_and_match_as_kubectl_s() {
        let labels: std::collections::BTreeMap<String, String> = [("team", "a"), ("env", "prod")].into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        let cases = [
            ("team=a", true),
            ("team==a", true),
            ("team=b", false),
            ("team!=b", true),
            ("owner!=x", true),
            ("env in (prod, staging)", true),
            ("env notin (prod)", false),
            ("owner notin (x)", true),
            ("team", true),
            ("!team", false),
            ("!owner", true),
            ("team=a,env=prod", true),
            ("team=a, env in (dev,staging)", false),
            ("example.com/tier", false),
            ("", true),
        ];
        for (text, want) in cases {
            let s = Selector::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(s.matches(&labels), want, "{text}");
        }
        for bad in ["team=a,", "a b", "env in (prod", "env within (x)", "=a", "team=a b", "a,,b"] {
            let e = Selector::parse(bad).unwrap_err();
            assert!(e.starts_with(&format!("invalid --selector {bad:?}: ")), "{bad}: {e}");
        }
    }

    #[test]
    fn quotas_are_named_as_kubectl_names_them() {
        for arg in ["q", "resourcequota/q", "resourcequotas/q", "quota/q"] {
            assert_eq!(quota_name(arg).unwrap(), "q");
        }
        for arg in ["deployment/web", "resourcequota/", "a/b/c", ""] {
            assert_eq!(quota_name(arg).unwrap_err().1, 2, "{arg}");
        }
    }
}
