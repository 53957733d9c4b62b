//! What the three cluster views (`capacity`, `uncovered`, `blocked`) share: reading the
//! cluster into the engine's collector, live or from `--state` files, and printing a report
//! as text, JSON or YAML with its notes on standard error. Not a subcommand itself.

use clap::ValueEnum;
use serde::Serialize;

use kubectl_quota_engine::capacity::Collector;

use crate::error::{print_err, print_out, Fatal};
use crate::global::GlobalFlags;
use crate::input::collect_state;
use crate::live;
use crate::render::capacity::notes_text;

/// Output formats of the cluster views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ViewOutput {
    Text,
    Json,
    Yaml,
}

/// What a view looks at when neither `-n` nor `-A` is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unscoped {
    /// The context's namespace (offline: `default`), as kubectl's namespaced commands.
    CurrentNamespace,
    /// Every namespace: the cluster-wide views (`capacity`, `uncovered`).
    AllNamespaces,
}

/// Reads what `view` needs into a collector: from `state` when it names files, else from the
/// cluster. Returns it with the namespace the answer is about (`None`: every namespace): `-A`
/// is every namespace, `-n NS` is NS, and neither is `unscoped`'s. The same rule for every
/// view, as kubectl has it.
pub async fn collect(g: &GlobalFlags, state: &[String], view: live::View, all: bool, unscoped: Unscoped) -> Result<(Collector, Option<String>), Fatal> {
    let current = !all && (g.namespace.is_some() || unscoped == Unscoped::CurrentNamespace);
    if !state.is_empty() {
        let mut c = collector(view);
        collect_state(state, &mut c)?;
        for w in c.warnings.iter().cloned().chain(c.duplicates.warning()) {
            print_err(&format!("warning: {}\n", crate::escape::escape(&w)));
        }
        return Ok((c, current.then(|| g.namespace.clone().unwrap_or_else(|| "default".into()))));
    }
    let conn = live::connect(&g.kube, g.namespace.as_deref()).await?;
    let ns = current.then(|| conn.namespace.clone());
    // `-n NS` reads NS's quotas, pods and events only, so that `view` in NS is enough; the
    // nodes the promise is measured against stay the cluster's (cluster-scoped reads).
    let c = live::collect_view(&conn, view, ns.as_deref(), collector(view)).await.map_err(|e| {
        let code = if e.unreachable { 2 } else { 1 };
        Fatal(e.to_string(), code)
    })?;
    Ok((c, ns))
}

/// An empty collector for `view`: only `capacity` keeps workloads (for the autoscalers).
fn collector(view: live::View) -> Collector {
    let mut c = Collector::default();
    c.scale_targets = view == live::View::Capacity;
    c
}

/// Prints `report` as `output` asks (`text` renders the text form), then its `notes`.
pub fn print<T: Serialize>(report: &T, output: ViewOutput, text: impl FnOnce(&T) -> String, notes: &[String]) -> Result<(), Fatal> {
    let out = match output {
        ViewOutput::Text => text(report),
        ViewOutput::Json => serde_json::to_string_pretty(report).map_err(|e| Fatal::input(e.to_string()))? + "\n",
        ViewOutput::Yaml => crate::render::yaml::to_string(report).map_err(Fatal::input)?,
    };
    print_out(&out)?;
    print_err(&notes_text(notes));
    Ok(())
}
