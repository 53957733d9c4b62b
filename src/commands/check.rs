//! `kubectl quota check`: would these manifests pass ResourceQuota admission? Flags ->
//! options -> run: the state comes from files (`--state`, offline) or the live cluster, the
//! engine decides, [`crate::render::check`] writes the report.

use std::sync::mpsc;

use clap::{Args, ValueEnum};
use kubectl_quota_engine::admission::{Detail, LimitedResource};
use kubectl_quota_engine::check::{CheckOptions, ClusterState, DocumentReport, Gap, Summary};
use kubectl_quota_engine::objects::Object;
use kubectl_quota_engine::report::{self, Decided};
use kubectl_quota_engine::version::{KubeVersion, Rules, VersionReport, CURRENT, NEWEST, OLDEST};

use crate::error::Fatal;
use crate::global::GlobalFlags;
use crate::input::{kinds_known, load_limited, load_manifests_keeping, load_state, namespaces_known, offline_rules, PodsToSend};
use crate::live;
use crate::render::output::{Output, ReportWriter, Text};

use super::input_args::InputArgs;

pub const CHECK_HELP: &str = "\
Examples:
  # Would these manifests pass the namespace's quotas? (reads quotas, LimitRanges,
  # PriorityClasses and StorageClasses from the cluster; never writes)
  kubectl quota check -f deploy/ -n team-a

  # Offline: the cluster's state comes from files, no cluster is contacted
  kubectl quota check -f app.yaml --state quotas.yaml --state cluster-scoped.yaml -n team-a

  # Only the refusals, for CI (exit status 1 when anything would be refused)
  kubectl quota check -f app.yaml --state state.yaml --quiet

  # Machine-readable
  kubectl quota check -f app.yaml --state state.yaml -o json

  # A kustomization (built as `kubectl apply -k` builds it), a URL, a Helm chart
  kubectl quota check -k overlays/prod --state state.yaml
  kubectl quota check -f https://example.com/app.yaml --state state.yaml
  helm template web ./chart | kubectl quota check -f - --state state.yaml -n web

  # CI: JUnit XML for GitLab or Jenkins; GitHub Actions annotations (the default output
  # under GitHub Actions is the text report followed by them)
  kubectl quota check -f deploy/ --state state.yaml -o junit > quota.xml
  kubectl quota check -f deploy/ --state state.yaml -o github

Exit status: 0 everything fits, 1 something would be refused (an object, a workload's pods,
or a rollout; with --fail-on-ceiling also an autoscaler quota stops below its maximum), 2 the input could not be read, 3 nothing would be refused but the answer is
incomplete (something it needed could not be read; said on standard error).";
/// Output formats of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    Yaml,
    // JUnit XML: a test case per document and per workload's pods, a failure per refusal.
    // (Plain comments: a doc comment here would switch clap to its long help layout.)
    Junit,
    // GitHub Actions annotations: an error at each refused document's first line.
    Github,
}
/// `kubectl quota check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format: junit is JUnit XML, github GitHub Actions annotations (default: text;
    /// under GitHub Actions, GITHUB_ACTIONS=true, the text report followed by annotations).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<OutputFormat>,
    /// Print only what would be refused.
    #[arg(short = 'q', long, conflicts_with = "explain")]
    pub quiet: bool,
    /// Explain every document in full (text output), as -o json|yaml does; by default only what
    /// is refused, undecided or charged near a limit is explained, and the rest is a line each.
    #[arg(long)]
    pub explain: bool,
    /// Exit 1 when quota stops an autoscaler (HPA, KEDA ScaledObject) below its maximum, not
    /// only when it refuses what runs now.
    #[arg(long = "fail-on-ceiling")]
    pub fail_on_ceiling: bool,
    /// Answer as this Kubernetes release would (1.20 to 1.38, e.g. 1.33 or v1.33.2; 1.38's
    /// rules are read from its pre-release). Offline default: the snapshot's release, else
    /// 1.37; live: the server's own version.
    #[arg(long = "kubernetes-version", value_name = "X.Y")]
    pub kubernetes_version: Option<String>,
    /// Whether the API server runs with --allow-privileged=true, which no API shows: false
    /// refuses privileged containers as upstream's default does. Default: allowed, as most
    /// distributions run it; a report with a privileged container says it rests on this.
    #[arg(long = "allow-privileged", value_name = "BOOL", value_parser = clap::value_parser!(bool))]
    pub allow_privileged: Option<bool>,
    /// How long one document may take to decide (as --request-timeout takes a duration). Past
    /// it, the rest of that document is reported undecided, saying so, and the next one is
    /// checked.
    #[arg(long = "decision-timeout", value_name = "DURATION", default_value = "10s", value_parser = super::flags::above_zero("--decision-timeout", "a decision"))]
    pub decision_timeout: std::time::Duration,
}

/// The release asked for with --kubernetes-version: refused outside the supported range.
fn version_flag(args: &CheckArgs) -> Result<Option<KubeVersion>, Fatal> {
    let Some(s) = &args.kubernetes_version else { return Ok(None) };
    let v = KubeVersion::parse(s).map_err(|e| Fatal::input(format!("--kubernetes-version: {e}")))?;
    if !v.supported() {
        return Err(Fatal::input(format!("--kubernetes-version: {v} is not supported: the rules of Kubernetes {OLDEST} to {NEWEST} are known")));
    }
    Ok(Some(v))
}

/// The output: as chosen with `-o`, else text, followed by annotations under GitHub Actions
/// (the log keeps the report people read; the pull request shows the annotations).
fn output_of(args: &CheckArgs) -> Output {
    match args.output {
        Some(OutputFormat::Text) => Output::Text,
        Some(OutputFormat::Json) => Output::Json,
        Some(OutputFormat::Yaml) => Output::Yaml,
        Some(OutputFormat::Junit) => Output::Junit,
        Some(OutputFormat::Github) => Output::Github,
        None if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") => Output::TextAndGithub,
        None => Output::Text,
    }
}

/// How much the text report says of each document.
fn text_of(args: &CheckArgs) -> Text {
    if args.quiet {
        Text::Refusals
    } else if args.explain {
        Text::Explain
    } else {
        Text::Concise
    }
}

/// How much the engine explains: `--quiet` text prints a verdict line per refused document,
/// which names only the refusing quota; every other output shows every quota.
fn detail_of(args: &CheckArgs) -> Detail {
    if args.quiet && matches!(output_of(args), Output::Text | Output::TextAndGithub) {
        Detail::Refusals
    } else {
        Detail::Full
    }
}

/// Decides the documents in order and writes each one's report as soon as it is decided, then
/// the run's notes (`notes`, those `more_notes` derives from the charged state, and the `gaps`
/// some answer depended on), and says what the answer lacks on standard error; returns the
/// exit status.
fn check_and_print(
    state: &mut ClusterState,
    objs: Vec<Object>,
    opts: &CheckOptions,
    kubernetes: &VersionReport,
    args: &CheckArgs,
    (notes, gaps): (Vec<String>, &[Gap]),
    more_notes: impl FnOnce(&ClusterState) -> Vec<String>,
) -> i32 {
    let mut relevant = Vec::new();
    let decide = |each: &mut dyn FnMut(Decided)| {
        let mut summary = report::decide_each(state, objs, opts, each);
        summary.notes.extend(more_notes(state));
        summary.notes.extend(notes);
        summary.notes.extend(kubernetes.prerelease_note());
        relevant.extend(Gap::relevant(gaps, &summary.lacking).map(str::to_string));
        summary.notes.extend(relevant.iter().cloned());
        summary
    };
    let (output, text) = (output_of(args), text_of(args));
    let summary = if opts.detail == Detail::Refusals {
        // Verdict lines only: printing them costs less than handing reports to another thread.
        print_here(decide, output, text, kubernetes)
    } else {
        print_beside(decide, output, text, kubernetes)
    };
    let code = incomplete_status(&summary, &relevant);
    if args.fail_on_ceiling && summary.capped > 0 && code != 1 && code != 2 {
        1
    } else {
        code
    }
}

/// Bytes written to the output at a time: explained reports run to hundreds of megabytes,
/// and a small buffer makes one system call per few kilobytes of them.
const OUTPUT_BUFFER: usize = 256 * 1024;

/// Writes each report on this thread as soon as it is decided.
fn print_here(decide: impl FnOnce(&mut dyn FnMut(Decided)) -> Summary, output: Output, text: Text, kubernetes: &VersionReport) -> Summary {
    let stdout = std::io::stdout();
    let mut writer = ReportWriter::new(std::io::BufWriter::with_capacity(OUTPUT_BUFFER, stdout.lock()), output, text, kubernetes);
    // A closed pipe (`| head`) is not an error of the check: stop writing, finish deciding.
    let mut failed = false;
    let summary = decide(&mut |mut d| {
        if !failed {
            failed = writer.document(d.finish()).is_err();
        }
    });
    if !failed {
        let _ = writer.finish(&summary.notes).and_then(|mut w| std::io::Write::flush(&mut w));
    }
    summary
}

/// Writes the reports on a second thread while the next documents are decided.
///
/// Deciding is sequential (each document is charged to the quotas before the next), but
/// working out a decided document's hints and rendering its report are not. Reports cross in
/// small batches, a few at a time, so memory stays flat and neither thread waits on the other
/// for every document; the output is the same bytes in the same order as [`print_here`]'s.
/// Batches come back to be dropped where they were built (the hints excepted, which the
/// printer built and drops), so that each thread reuses its own freed memory: dropping them
/// on the printer measured 7–13 % slower, with mimalloc as with glibc's malloc (1.7×).
fn print_beside(decide: impl FnOnce(&mut dyn FnMut(Decided)) -> Summary, output: Output, text: Text, kubernetes: &VersionReport) -> Summary {
    std::thread::scope(|scope| {
        let (send, receive) = mpsc::sync_channel::<Batch>(BATCHES_IN_FLIGHT);
        let (give_back, returned) = mpsc::channel::<Batch>();
        let printer = scope.spawn(move || print_batches(receive, give_back, output, text, kubernetes));
        let mut batch = Batch::default();
        // When the printer has stopped (a closed pipe), sending fails: deciding goes on.
        let summary = decide(&mut |d| {
            batch.weight += weight(d.report());
            batch.documents.push(d);
            if batch.documents.len() == BATCH || batch.weight >= BATCH_WEIGHT {
                // Every batch the printer is done with is dropped here; one is kept for reuse.
                let next = returned.try_iter().map(Batch::emptied).last().unwrap_or_default();
                let _ = send.send(std::mem::replace(&mut batch, next));
            }
        });
        batch.notes = Some(summary.notes.clone());
        let _ = send.send(batch);
        drop(send);
        // The printer only writes; a panic there is a bug, and shows as one.
        if let Err(panic) = printer.join() {
            std::panic::resume_unwind(panic);
        }
        summary
    })
}

/// Reports per batch handed to the printer, at most.
const BATCH: usize = 32;
/// A batch is handed over once its reports explain this many quotas ([`weight`]): a report
/// grows with the quotas it explains, and thousands of quotas must not make the reports in
/// flight thousands of times larger.
const BATCH_WEIGHT: usize = 1024;
/// How many full batches may wait for the printer.
const BATCHES_IN_FLIGHT: usize = 4;

/// A report's size in quota explanations (one for the document itself).
fn weight(d: &DocumentReport) -> usize {
    1 + d.quotas.len() + d.pods.as_ref().map_or(0, |p| p.quotas.len())
}

/// Decided reports on their way to the printer; the last batch carries the run's notes.
#[derive(Default)]
struct Batch {
    documents: Vec<Decided>,
    /// The [`weight`] of the reports in it.
    weight: usize,
    notes: Option<Vec<String>>,
}

impl Batch {
    /// The batch's reports dropped (on the deciding thread, which allocated them); the list kept.
    fn emptied(mut self) -> Batch {
        self.documents.clear();
        self.weight = 0;
        self
    }
}

/// The printer: finishes each batch's reports (their hints) and writes them as they arrive, then
/// the notes. A closed pipe (`| head`) is not an error of the check: the printer stops
/// writing and receiving, and deciding finishes on its own.
fn print_batches(receive: mpsc::Receiver<Batch>, give_back: mpsc::Sender<Batch>, output: Output, text: Text, kubernetes: &VersionReport) {
    let stdout = std::io::stdout();
    let mut writer = ReportWriter::new(std::io::BufWriter::with_capacity(OUTPUT_BUFFER, stdout.lock()), output, text, kubernetes);
    for mut batch in receive {
        for d in &mut batch.documents {
            let d = d.finish();
            if writer.document(d).is_err() {
                return;
            }
            // Dropped here, where they were built.
            d.hints = Vec::new();
        }
        if let Some(notes) = &batch.notes {
            let _ = writer.finish(notes).and_then(|mut w| std::io::Write::flush(&mut w));
            return;
        }
        let _ = give_back.send(batch);
    }
}

/// The check's options from the flags, for documents that name no namespace going to
/// `namespace`.
fn options(g: &GlobalFlags, args: &CheckArgs, namespace: String, limited: Vec<LimitedResource>, rules: Rules) -> Result<CheckOptions, Fatal> {
    let pod_security = crate::input::load_pod_security(args.input.admission_config.as_deref())?;
    Ok(CheckOptions {
        namespace,
        limited,
        pod_security,
        nodes: args.input.nodes,
        rules,
        detail: detail_of(args),
        enforce_namespace: g.namespace.is_some(),
        allow_privileged: args.allow_privileged,
        decide_within: Some(args.decision_timeout),
        ..CheckOptions::default()
    })
}

fn run_offline(g: &GlobalFlags, args: &CheckArgs) -> Result<i32, Fatal> {
    let namespace = g.namespace.clone().unwrap_or_else(|| "default".into());
    let flag = version_flag(args)?;
    let loaded = load_state(&args.input.state)?;
    if let Some(w) = &loaded.duplicates {
        crate::error::print_err(&format!("warning: {}\n", crate::escape::escape(w)));
    }
    // A snapshot's server decides the rules; --kubernetes-version overrides it.
    let offline = offline_rules(&loaded.recorded, flag)?;
    let (rules, notes) = (offline.rules, offline.notes);
    let mut state = ClusterState::from_objects(loaded.objects, &namespace);
    kinds_known(&mut state, &loaded.recorded);
    let limited = load_limited(args.input.admission_config.as_deref())?;
    // A pod's spec as written is kept only where policies will read it.
    let objs = load_manifests_keeping(&args.input.filename, args.input.kustomize.as_deref(), args.input.recursive, None, state.policies.is_some())?;
    let opts = options(g, args, namespace.clone(), limited, rules)?;
    let kubernetes = VersionReport::new(&rules, offline.source, offline.server_version);
    let unnamed = g.namespace.is_none();
    let mut incomplete = offline.incomplete;
    let known = namespaces_known(&mut state, &loaded.recorded, &objs, &namespace);
    incomplete.extend(known.outside.into_iter().chain(known.unlisted).map(Gap::always));
    for ns in known.unlimited {
        crate::error::print_err(&format!(
            "note: namespace {} has no ResourceQuota in the state: nothing limits what is checked there\n",
            crate::escape::escape(&format!("{ns:?}"))
        ));
    }
    Ok(check_and_print(&mut state, objs, &opts, &kubernetes, args, (notes, &incomplete), |state| {
        let mut notes = vec![];
        if unnamed && state.quotas.get(&namespace).is_none_or(|q| q.is_empty()) {
            let others = state.quota_namespaces();
            if !others.is_empty() {
                notes.push(format!("the state has no quota in namespace {namespace:?}, only in {}: pass -n to check there", others.join(", ")));
            }
        }
        notes
    }))
}

/// The exit status once the answer's gaps are known: what could not be read, where an answer
/// depended on it, is said on standard error (under `--quiet` too), and a check that refused
/// nothing but is incomplete (a gap, or a document that cannot be decided) exits 3, not 0: it
/// is not a clean pass.
fn incomplete_status(summary: &Summary, incomplete: &[String]) -> i32 {
    for gap in incomplete {
        crate::error::print_err(&format!("warning: the answer is incomplete: {}\n", crate::escape::escape(gap)));
    }
    let code = summary.exit_code();
    if code == 0 && (!incomplete.is_empty() || summary.undecided > 0) {
        crate::error::INCOMPLETE
    } else {
        code
    }
}

async fn run_live(g: &GlobalFlags, args: &CheckArgs) -> Result<i32, Fatal> {
    let flag = version_flag(args)?;
    let limited = load_limited(args.input.admission_config.as_deref())?;
    // The Pod each document leads to, kept as JSON: a mutating webhook that sees it is asked
    // through a dry run (dropped once asked).
    let mut pods = PodsToSend::new();
    // The cluster's policies are read after the manifests: every pod's spec is kept.
    let mut objs = load_manifests_keeping(&args.input.filename, args.input.kustomize.as_deref(), args.input.recursive, Some(&mut pods), true)?;
    let conn = live::connect(&g.kube, g.namespace.as_deref()).await?;
    let live::LiveState { mut state, mut notes, incomplete } = live::live_state(&conn, &mut objs).await.map_err(|e| {
        let e = e.on(&conn.server);
        Fatal::input(if e.forbidden {
            format!("{e}\nthe check cannot decide anything without the quotas: it needs `list` on resourcequotas (the `view` ClusterRole has it)")
        } else {
            e.to_string()
        })
    })?;
    live::dry_runs(&conn, &mut state, &objs, &pods).await;
    drop(pods);
    // The server's own release decides the rules; --kubernetes-version overrides it.
    let server = live::server_version(&conn).await;
    let (rules, source, server_version) = match (flag, &server) {
        (Some(v), s) => (Rules::for_version(v), "flag", s.as_ref().ok().map(|(raw, _)| raw.clone())),
        (None, Ok((raw, v))) => {
            if !v.supported() {
                notes.push(format!(
                    "the server reports Kubernetes {raw}, outside the {OLDEST} to {NEWEST} this tool knows: answering with the rules of {}",
                    v.nearest_supported()
                ));
            }
            (Rules::for_version(*v), "server", Some(raw.clone()))
        }
        (None, Err(e)) => {
            notes.push(format!("the server's version could not be read ({e}): answering with the rules of {CURRENT}"));
            (Rules::current(), "default", None)
        }
    };
    let opts = options(g, args, conn.namespace.clone(), limited, rules)?;
    let kubernetes = VersionReport::new(&rules, source, server_version);
    Ok(check_and_print(&mut state, objs, &opts, &kubernetes, args, (notes, &incomplete), |_| vec![]))
}

/// Runs `check`: offline when `--state` is given, against the live cluster otherwise.
pub async fn run(g: &GlobalFlags, args: &CheckArgs) -> Result<i32, Fatal> {
    if matches!(output_of(args), Output::Junit | Output::Github | Output::TextAndGithub) {
        // Reports for CI systems, which show colour codes as text.
        colored::control::set_override(false);
    }
    let result = if args.input.state.is_empty() { run_live(g, args).await } else { run_offline(g, args) };
    match (&result, output_of(args)) {
        // A check that could not run is annotated too: the run's page then says why (the error
        // is still printed on standard error, as always).
        (Err(e), Output::Github | Output::TextAndGithub) => {
            let _ = crate::error::print_out(&crate::render::github::error_annotation(&e.0));
        }
        // And a JUnit report says so in a failed test case: a CI's JUnit step finds a report.
        (Err(e), Output::Junit) => {
            let _ = crate::error::print_out(&crate::render::junit::error_report(&e.0));
        }
        _ => {}
    }
    result
}
