//! `kubectl quota why KIND/NAME`: why a workload's pods are missing. Reads the workload, what
//! it owns, their events and the namespace's quota state (never writes), and hands them to
//! [`kubectl_quota_engine::why`]; [`crate::render::why`] writes the answer.

use std::collections::BTreeSet;

use clap::{Args, ValueEnum};
use kubectl_quota_engine::check::Gap;
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects;
use kubectl_quota_engine::version::Rules;
use kubectl_quota_engine::why;

use crate::error::Fatal;
use crate::global::GlobalFlags;
use crate::live;
use crate::render::why::{render_json, render_text};

pub const WHY_HELP: &str = "\
Examples:
  # Why does deployment web have fewer pods than it wants?
  kubectl quota why deployment/web -n team-a

  # The same for a StatefulSet, a Job, a CronJob's current run, ...
  kubectl quota why sts/db
  kubectl quota why cronjob/nightly -o json

Reads the workload, its ReplicaSets or Jobs, their FailedCreate events and ReplicaFailure
conditions, and replays its next pod against the namespace's quotas. Never writes.
Exit status: 0 nothing is missing, 1 pods are missing, 2 the workload could not be read.";

/// Output formats of `why`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WhyOutput {
    Text,
    Json,
}

/// `kubectl quota why`.
#[derive(Debug, Args)]
pub struct WhyArgs {
    /// The workload: KIND/NAME (deployment, replicaset, statefulset, daemonset, job, cronjob,
    /// replicationcontroller, or their short names).
    #[arg(value_name = "KIND/NAME")]
    pub workload: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: WhyOutput,
}

/// Runs `why`.
pub async fn run(g: &GlobalFlags, args: &WhyArgs) -> Result<i32, Fatal> {
    let Some((kind, name)) = args.workload.split_once('/').filter(|(k, n)| !k.is_empty() && !n.is_empty()) else {
        return Err(Fatal::input(format!("{:?}: name the workload as KIND/NAME, e.g. deployment/web", args.workload)));
    };
    let conn = live::connect(&g.kube, g.namespace.as_deref()).await.map_err(Fatal::input)?;
    let ns = conn.namespace.clone();
    let read = live::workload(&conn, &ns, kind, name).await.map_err(|e| Fatal::input(e.to_string()))?.ok_or_else(|| {
        Fatal::input(format!(
            "{kind:?} is not a workload that creates pods: use deployment, replicaset, statefulset, daemonset, job, cronjob or replicationcontroller"
        ))
    })?;
    let doc = Document { origin: Origin::new("cluster", 1), value: read.object.clone() };
    let mut obj = objects::decode(&doc).map_err(|e| Fatal::input(e.to_string()))?;
    obj.meta.namespace = Some(ns.clone());
    let (state, gaps) = live::cluster_state(&conn, &BTreeSet::from([ns.clone()])).await.map_err(|e| Fatal::input(e.to_string()))?;
    let rules = match live::server_version(&conn).await {
        Ok((_, v)) => Rules::for_version(v),
        Err(_) => Rules::newest(),
    };
    let mut report = why::explain(&obj, &read.object, &read.children, &read.events, &state, rules);
    // What could not be read, where the replay of the next pod depended on it.
    let needed = report.replay.iter().flat_map(|d| &d.undecided).map(|u| u.lacking).collect();
    report.notes.extend(Gap::relevant(&gaps, &needed).map(str::to_string));
    let text = match args.output {
        WhyOutput::Text => render_text(&report),
        WhyOutput::Json => render_json(&report),
    };
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(if report.waiting > 0 { 1 } else { 0 })
}
