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
use crate::render::why::{render_json, render_text, render_yaml};

pub const WHY_HELP: &str = "\
Examples:
  # Why does deployment web have fewer pods than it wants?
  kubectl quota why deployment/web -n team-a

  # The same, written as kubectl takes it too
  kubectl quota why deployment web -n team-a

  # The same for a StatefulSet, a Job, a CronJob's current run, ...
  kubectl quota why sts/db
  kubectl quota why cronjob/nightly -o json

Reads the workload, its ReplicaSets or Jobs, their FailedCreate events and ReplicaFailure
conditions, and replays its next pod against the namespace's quotas. Never writes.
Exit status: 0 nothing is missing (or an OrderedReady StatefulSet waits for its pods to be
Ready), 1 pods are missing, 2 the workload could not be read (one that does not exist
included).";

/// Output formats of `why`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WhyOutput {
    Text,
    Json,
    Yaml,
}

/// `kubectl quota why`.
#[derive(Debug, Args)]
pub struct WhyArgs {
    /// The workload: KIND/NAME, or KIND NAME (deployment, replicaset, statefulset, daemonset,
    /// job, cronjob, replicationcontroller, or their short names).
    #[arg(value_name = "KIND/NAME")]
    pub workload: String,
    /// The workload's name, when KIND is given alone.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: WhyOutput,
}

/// The kind and name of `why KIND/NAME` or `why KIND NAME`, as kubectl reads them.
fn workload_named<'a>(first: &'a str, second: Option<&'a str>) -> Result<(&'a str, &'a str), Fatal> {
    let named = match second {
        Some(name) if !first.contains('/') => Some((first, name)),
        Some(_) => {
            return Err(Fatal::input(
                "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl quota why deployment/web' instead of 'kubectl quota why deployment deployment/web')",
            ))
        }
        None => first.split_once('/'),
    };
    named.filter(|(k, n)| !k.is_empty() && !n.is_empty() && !n.contains('/')).ok_or_else(|| {
        Fatal::input(format!("{:?}: name the workload as KIND/NAME or KIND NAME, e.g. deployment/web or deployment web", crate::escape::escape(first)))
    })
}

/// Runs `why`.
pub async fn run(g: &GlobalFlags, args: &WhyArgs) -> Result<i32, Fatal> {
    let (kind, name) = workload_named(&args.workload, args.name.as_deref())?;
    let conn = live::connect(&g.kube, g.namespace.as_deref()).await?;
    let ns = conn.namespace.clone();
    let read = match live::workload(&conn, &ns, kind, name).await.map_err(|e| Fatal::input(e.to_string()))? {
        live::Workload::Read(read) => read,
        // As describe's: kubectl's words, exit status 2 (1 says pods are missing).
        live::Workload::NotFound(message) => return Err(Fatal::input(message)),
        live::Workload::NotAWorkload => {
            return Err(Fatal::input(format!(
                "{kind:?} is not a workload that creates pods: use deployment, replicaset, statefulset, daemonset, job, cronjob or replicationcontroller"
            )))
        }
    };
    let doc = Document { origin: Origin::new("cluster", 1), value: read.object.clone() };
    let mut obj = objects::decode(&doc).map_err(|e| Fatal::input(e.to_string()))?;
    obj.meta.namespace = Some(ns.clone());
    let (mut state, gaps) = live::cluster_state(&conn, &BTreeSet::from([ns.clone()])).await.map_err(|e| Fatal::input(e.to_string()))?;
    // The namespace's labels: its PodSecurity level decides the next pod as much as quota.
    if let Ok((existing, _)) = live::namespaces_existing(&conn, &BTreeSet::from([ns.clone()])).await {
        state.namespaces = Some(existing);
    }
    // Its ReplicaSets, Pending pods and existing claims as the state's objects: which pods
    // wait for claims, which claims the next pod's StatefulSet need not create.
    for v in read.children.iter().chain(&read.pending_pods).chain(&read.claims) {
        if let Ok(mut o) = objects::decode(&Document { origin: Origin::new("cluster", 1), value: v.clone() }) {
            o.meta.namespace = Some(ns.clone());
            state.existing.insert((ns.clone(), o.type_info.group_resource(), o.meta.name.clone()), o);
        }
    }
    // Where a mutating webhook sees its pods, the next pod is the one a dry run returns.
    let pods = kubectl_quota_engine::check::dry_run::pod_to_send(&read.object, &obj).and_then(|v| serde_json::to_string(&v).ok());
    let pods = pods.map(|p| [(kubectl_quota_engine::check::dry_run::source_of(&obj.origin), p)].into()).unwrap_or_default();
    live::dry_runs(&conn, &mut state, std::slice::from_ref(&obj), &pods).await;
    let rules = match live::server_version(&conn).await {
        Ok((_, v)) => Rules::for_version(v),
        Err(_) => Rules::current(),
    };
    let mut report = why::explain(&obj, &read.object, &read.children, &read.events, &state, rules);
    // What could not be read, where the replay of the next pod depended on it.
    let needed = report.replay.iter().flat_map(|d| &d.undecided).filter_map(|u| u.lacking).collect();
    report.notes.extend(Gap::relevant(&gaps, &needed).map(str::to_string));
    let text = match args.output {
        WhyOutput::Text => render_text(&report),
        WhyOutput::Json => render_json(&report),
        WhyOutput::Yaml => render_yaml(&report),
    };
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    // Missing pods are an answer to act on, unless the controller only waits its turn.
    Ok(if report.waiting > 0 && report.verdict != why::Verdict::WaitingForReady { 1 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_are_named_as_kubectl_names_them() {
        for (first, second) in [("deployment/web", None), ("deployment", Some("web"))] {
            assert_eq!(workload_named(first, second).unwrap(), ("deployment", "web"));
        }
        for (first, second, message) in [
            ("web", None, "name the workload as KIND/NAME or KIND NAME"),
            ("deployment/", None, "name the workload"),
            ("/web", None, "name the workload"),
            ("a/b/c", None, "name the workload"),
            ("deployment", Some("deployment/web"), "name the workload"),
            ("deployment/web", Some("web"), "no need to specify a resource type as a separate argument"),
        ] {
            let e = workload_named(first, second).unwrap_err();
            assert!(e.0.contains(message) && e.1 == 2, "{first} {second:?}: {e:?}");
        }
    }
}
