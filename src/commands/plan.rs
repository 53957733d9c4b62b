//! `kubectl quota plan`: the quota these manifests need. Flags -> the state (files or the live
//! cluster, as `check`) -> [`kubectl_quota_engine::plan`] -> [`crate::render::plan`].

use clap::{Args, ValueEnum};
use kubectl_quota_engine::check::{CheckOptions, ClusterState};
use kubectl_quota_engine::plan;
use kubectl_quota_engine::version::Rules;

use crate::error::Fatal;
use crate::global::GlobalFlags;
use crate::input::{load_limited, load_manifests_keeping, load_state, namespaces_known, offline_rules, PodsToSend};
use crate::live;
use crate::render::plan::{render_json, render_text, render_yaml};

use super::input_args::InputArgs;

pub const PLAN_HELP: &str = "\
Examples:
  # How much more quota does this release need in team-a? (reads the cluster; never writes)
  kubectl quota plan -f deploy/ -n team-a

  # Offline, against a snapshot
  kubectl quota plan -f deploy/ --state state.yaml -n team-a

  # The ResourceQuotas sized to admit the release, ready to apply
  kubectl quota plan -f deploy/ -n team-a -o yaml | kubectl apply -f -

Every replica of a workload counts (and a StatefulSet's claims); an existing workload only
counts the replicas it adds. A namespace without quota gets a proposed one, <namespace>-plan.
Exit status: 0 everything fits, 1 a quota must grow (or something else blocks), 2 bad input.";

/// Output formats of `plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanOutput {
    Text,
    Json,
    Yaml,
}

/// `kubectl quota plan`.
#[derive(Debug, Args)]
#[command(
    mut_arg("filename", |a| a.help("Manifests of the release: files, directories, http(s) URLs, or - for standard input (repeatable)")),
    mut_arg("state", |a| a.help("Offline mode: the cluster's objects from files (e.g. `kubectl quota snapshot`)")),
    mut_arg("nodes", |a| a.help("Schedulable node count, to count a DaemonSet's pods"))
)]
pub struct PlanArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Size the quotas for every autoscaler (HPA, KEDA ScaledObject) at its maximum: each
    /// workload one targets runs its maxReplicas.
    #[arg(long = "autoscalers-at-max")]
    pub autoscalers_at_max: bool,
    /// Output: text, JSON, or YAML ResourceQuota manifests sized to admit the release.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: PlanOutput,
}

fn print(p: &plan::Plan, args: &PlanArgs) -> i32 {
    let text = match args.output {
        PlanOutput::Text => render_text(p),
        PlanOutput::Json => render_json(p),
        PlanOutput::Yaml => render_yaml(p),
    };
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    p.exit_code()
}

/// Runs `plan`: offline when `--state` is given, against the live cluster otherwise.
pub async fn run(g: &GlobalFlags, args: &PlanArgs) -> Result<i32, Fatal> {
    let limited = load_limited(args.input.admission_config.as_deref())?;
    let pod_security = crate::input::load_pod_security(args.input.admission_config.as_deref())?;
    // Live, the Pod each document leads to is kept as JSON for the dry runs (as for `check`).
    let mut pods = PodsToSend::new();
    let keep = args.input.state.is_empty().then_some(&mut pods);
    // Every pod's spec as written is kept: admission policies may read it (plan's inputs are
    // a release's manifests, not a large generated input).
    let mut objs = load_manifests_keeping(&args.input.filename, args.input.kustomize.as_deref(), args.input.recursive, keep, true)?;
    if !args.input.state.is_empty() {
        let namespace = g.namespace.clone().unwrap_or_else(|| "default".into());
        let loaded = load_state(&args.input.state)?;
        if let Some(w) = &loaded.duplicates {
            crate::error::print_err(&format!("warning: {}\n", crate::escape::escape(w)));
        }
        // A snapshot's server decides the rules, as for `check`.
        let offline = offline_rules(&loaded.recorded, None)?;
        let rules = offline.rules;
        let mut state = ClusterState::from_objects(loaded.objects, &namespace);
        // Which namespaces exist, as check reads it; a namespace outside what the snapshot
        // covers is a note (one merely without anything yet is what plan proposes quotas for).
        let known = namespaces_known(&mut state, &loaded.recorded, &objs, &namespace);
        let opts = CheckOptions {
            namespace,
            limited,
            pod_security: pod_security.clone(),
            nodes: args.input.nodes,
            rules,
            enforce_namespace: g.namespace.is_some(),
            ..CheckOptions::default()
        };
        let mut p = if args.autoscalers_at_max { plan::plan_at_max(&state, objs, &opts) } else { plan::plan(&state, objs, &opts) };
        p.notes.extend(offline.notes.into_iter().chain(offline.incomplete.into_iter().map(|g| g.text)).chain(known.outside));
        return Ok(print(&p, args));
    }
    let conn = live::connect(&g.kube, g.namespace.as_deref()).await?;
    let live::LiveState { mut state, mut notes, incomplete } = live::live_state(&conn, &mut objs).await.map_err(|e| Fatal::input(e.to_string()))?;
    live::dry_runs(&conn, &mut state, &objs, &pods).await;
    drop(pods);
    notes.extend(incomplete.into_iter().map(|g| g.text));
    // The server's own release decides the rules, as for `check`.
    let rules = match live::server_version(&conn).await {
        Ok((_, v)) => Rules::for_version(v),
        Err(_) => Rules::current(),
    };
    let opts = CheckOptions {
        namespace: conn.namespace.clone(),
        limited,
        pod_security,
        nodes: args.input.nodes,
        rules,
        enforce_namespace: g.namespace.is_some(),
        ..CheckOptions::default()
    };
    let mut p = if args.autoscalers_at_max { plan::plan_at_max(&state, objs, &opts) } else { plan::plan(&state, objs, &opts) };
    p.notes.extend(notes);
    Ok(print(&p, args))
}
