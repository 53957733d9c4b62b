//! The last step: reports as text a person reads in five seconds, or as JSON / YAML.
//!
//! Text: one verdict line per document, then per quota whether it applies and why, a table
//! of requested / used / hard / after, and the server's exact message.

use std::borrow::Cow;
use std::fmt::Write;

use colored::Colorize;

use kubectl_quota_engine::admission::{QuotaReport, QuotaVerdict, RefusalReason, Stage};
use kubectl_quota_engine::check::{DocumentReport, Outcome, Report};
use kubectl_quota_engine::quantity::Quantity;
use kubectl_quota_engine::version::VersionReport;

use crate::escape::{escape as esc, escape_lines};

/// Output format of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Text,
    Json,
    Yaml,
}

/// How much the text report says of each document (JSON and YAML say everything).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Text {
    /// `--quiet`: a verdict line for each document that would be refused (or whose
    /// autoscaling quota caps), nothing else.
    Refusals,
    /// The default: a line per document; the whole explanation of what is refused,
    /// undecided, capped or charged near a limit ([`worth_explaining`]); the notes of an answer
    /// that rests on something.
    Concise,
    /// `--explain`: the whole explanation of every document.
    Explain,
}

/// Renders a report.
pub fn render(report: &Report, output: Output, text: Text) -> String {
    let mut out = Vec::new();
    write_report(report, output, text, &mut out).expect("writing to memory cannot fail");
    String::from_utf8(out).expect("reports are UTF-8")
}

/// Writes a whole report (the same bytes as [`ReportWriter`] fed document by document).
pub fn write_report<W: std::io::Write>(report: &Report, output: Output, text: Text, w: &mut W) -> std::io::Result<()> {
    let mut writer = ReportWriter::new(w, output, text, &report.kubernetes);
    for d in &report.documents {
        writer.document(d)?;
    }
    writer.finish(&report.notes)?;
    Ok(())
}

/// Writes a report as its documents are decided: each document is rendered when it arrives
/// and can be dropped right after, so memory does not grow with the number of documents.
/// JSON and YAML come out byte for byte as the whole [`Report`] serialized at once.
pub struct ReportWriter<W: std::io::Write> {
    w: W,
    output: Output,
    text: Text,
    documents: usize,
    refused: usize,
    undecided: usize,
    /// The release whose rules were applied: the report's first field.
    kubernetes: VersionReport,
}

/// serde_json's pretty printer (two spaces a level), starting `depth` levels deep: a value
/// nested in the report is written straight to the output, indented as if the whole report
/// were printed at once.
struct NestedPretty {
    depth: usize,
    has_value: bool,
}

impl NestedPretty {
    /// A line break (after a comma for every entry but the first) and the indentation.
    fn entry<W: ?Sized + std::io::Write>(&self, w: &mut W, first: bool) -> std::io::Result<()> {
        // The comma, the line break and the indentation in one write for the usual depths.
        const BREAK: &[u8; 66] = b",\n                                                                ";
        let line = &BREAK[usize::from(first)..];
        match line.get(..line.len() - 64 + 2 * self.depth) {
            Some(all) => w.write_all(all),
            None => {
                w.write_all(&line[..line.len() - 64])?;
                (0..self.depth).try_for_each(|_| w.write_all(b"  "))
            }
        }
    }
    fn open<W: ?Sized + std::io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }
    /// The closing bracket goes on a line of its own unless the collection is empty.
    fn close<W: ?Sized + std::io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.entry(w, true)?;
        }
        w.write_all(bracket)
    }
}

impl serde_json::ser::Formatter for NestedPretty {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        self.entry(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        self.entry(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

fn write_nested_json<W: std::io::Write, T: serde::Serialize + ?Sized>(w: &mut W, value: &T, depth: usize) -> std::io::Result<()> {
    value.serialize(&mut serde_json::Serializer::with_formatter(w, NestedPretty { depth, has_value: false })).map_err(std::io::Error::from)
}

/// The `kubernetes` field of a report, serialized as its first field.
#[derive(serde::Serialize)]
struct Kubernetes<'a> {
    kubernetes: &'a VersionReport,
}

/// The `notes` of a report, serialized as the report's last field.
#[derive(serde::Serialize)]
struct Notes<'a> {
    notes: &'a [String],
}

impl<W: std::io::Write> ReportWriter<W> {
    pub fn new(w: W, output: Output, text: Text, kubernetes: &VersionReport) -> Self {
        ReportWriter { w, output, text, documents: 0, refused: 0, undecided: 0, kubernetes: kubernetes.clone() }
    }

    /// JSON and YAML: the report's fields before `documents`.
    fn header(&mut self) -> std::io::Result<()> {
        match self.output {
            Output::Json => {
                self.w.write_all(b"{\n  \"kubernetes\": ")?;
                write_nested_json(&mut self.w, &self.kubernetes, 1)?;
                self.w.write_all(b",\n")
            }
            Output::Yaml => super::yaml::to_writer(&mut self.w, &Kubernetes { kubernetes: &self.kubernetes }),
            Output::Text => Ok(()),
        }
    }

    /// Writes one document.
    pub fn document(&mut self, d: &DocumentReport) -> std::io::Result<()> {
        let first = self.documents == 0;
        if first {
            self.header()?;
        }
        self.documents += 1;
        match d.outcome {
            Outcome::Admitted => {}
            Outcome::Undecided => self.undecided += 1,
            _ => self.refused += 1,
        }
        match self.output {
            Output::Json => {
                self.w.write_all(if first { b"  \"documents\": [\n    " } else { b",\n    " })?;
                write_nested_json(&mut self.w, d, 2)
            }
            Output::Yaml => {
                if first {
                    self.w.write_all(b"documents:\n")?;
                }
                super::yaml::to_writer(&mut self.w, &std::slice::from_ref(d))
            }
            Output::Text => {
                if self.text == Text::Refusals && d.fully_admitted() && !capped(d) {
                    return Ok(());
                }
                let mut out = String::new();
                match self.text {
                    Text::Refusals => {
                        let _ = writeln!(out, "{}", verdict_line(d));
                        autoscaling_line(&mut out, d);
                    }
                    Text::Concise if !worth_explaining(d) => concise_block(&mut out, d),
                    text => document_block(&mut out, d, text == Text::Explain),
                }
                self.w.write_all(out.as_bytes())
            }
        }
    }

    /// Writes what follows the documents (the run's notes; the count line in text) and
    /// returns the writer.
    pub fn finish(mut self, notes: &[String]) -> std::io::Result<W> {
        if self.documents == 0 {
            self.header()?;
        }
        match self.output {
            Output::Json => {
                self.w.write_all(if self.documents == 0 { b"  \"documents\": [],\n  \"notes\": " } else { b"\n  ],\n  \"notes\": " })?;
                write_nested_json(&mut self.w, notes, 1)?;
                self.w.write_all(b"\n}\n")?;
            }
            Output::Yaml => {
                if self.documents == 0 {
                    self.w.write_all(b"documents: []\n")?;
                }
                super::yaml::to_writer(&mut self.w, &Notes { notes })?;
            }
            Output::Text => {
                if self.text != Text::Refusals {
                    let mut out = String::new();
                    for n in notes {
                        let _ = writeln!(out, "note: {}", esc(n));
                    }
                    let _ = write!(out, "{} document(s) checked, {} would be refused (in whole or in part)", self.documents, self.refused);
                    if self.undecided > 0 {
                        let _ = write!(out, ", {} cannot be decided from what could be read", self.undecided);
                    }
                    out.push('\n');
                    self.w.write_all(out.as_bytes())?;
                }
            }
        }
        Ok(self.w)
    }
}

/// Whether quota stops the document's autoscaler (or VPA) below what it asks for.
fn capped(d: &DocumentReport) -> bool {
    d.autoscaling.as_ref().is_some_and(|c| c.capped()) || d.vpa.as_ref().is_some_and(|v| v.capped())
}

/// How little of a limit may be left after a document for its report to explain it whole.
const NEAR_LIMIT_PERCENT: u64 = 20;

/// Whether a document's default text explains it whole: something refused or undecided, an
/// autoscaler capped, or a quota charged to within [`NEAR_LIMIT_PERCENT`] of a limit (by the
/// object or its pods).
fn worth_explaining(d: &DocumentReport) -> bool {
    let near = |quotas: &[QuotaReport]| {
        quotas.iter().filter(|q| q.applies).flat_map(|q| &q.resources).any(|r| {
            r.requested.sign() > 0
                && kubectl_quota_engine::report::quota_view::percent(&r.hard.sub(&r.after), &r.hard).is_none_or(|left| left <= NEAR_LIMIT_PERCENT)
        })
    };
    let held = d.kueue.as_ref().is_some_and(|k| k.holds());
    !d.fully_admitted() || capped(d) || held || near(&d.quotas) || d.pods.as_ref().is_some_and(|p| near(&p.quotas))
}

use kubectl_quota_engine::report::hints::HEADROOM;

/// A document the default text does not explain whole: its verdict and what is left of the
/// tightest limit that charges it (or the quotas that charge it), then what its answer rests
/// on (its notes, the server's warnings, a policy not replayed) and the other hints, each on a
/// line of its own.
fn concise_block(out: &mut String, d: &DocumentReport) {
    let mut line = verdict_line(d);
    match d.hints.iter().find_map(|h| h.strip_prefix(HEADROOM)) {
        Some(left) => {
            let _ = write!(line, "; after it {}", esc(left));
        }
        None => {
            let mut names: Vec<&str> = Vec::new();
            for q in d.quotas.iter().chain(d.pods.iter().flat_map(|p| &p.quotas)).filter(|q| q.applies) {
                if !names.contains(&q.name.as_str()) {
                    names.push(&q.name);
                }
            }
            if !names.is_empty() {
                let _ = write!(line, " (charged to quota {})", esc(&names.join(", ")));
            }
        }
    }
    let _ = writeln!(out, "{line}");
    kueue_line(out, d);
    for m in d.mutations.iter().chain(d.pods.iter().flat_map(|p| &p.mutations)).filter(|m| m.starts_with("not replayed: ")) {
        let _ = writeln!(out, "  before quota: {}", esc(m));
    }
    for w in &d.warnings {
        let _ = writeln!(out, "  Warning: {}", esc(w));
    }
    for n in &d.notes {
        let _ = writeln!(out, "  note: {}", esc(n));
    }
    for h in d.hints.iter().filter(|h| !h.starts_with(HEADROOM)) {
        let _ = writeln!(out, "  {} {}", "hint:".cyan(), esc(h));
    }
}

/// The one-line verdict for a document.
pub fn verdict_line(d: &DocumentReport) -> String {
    let who = format!("{}/{}", esc(&d.kind.to_lowercase()), esc(&d.name));
    if d.outcome == Outcome::Undecided {
        let why: Vec<String> = d.undecided.iter().map(|u| esc(&u.why).into_owned()).collect();
        return format!("{who}: {}: {}", "cannot be decided".yellow().bold(), why.join("; "));
    }
    told_line(&who, d)
}

/// The verdict as far as the state tells (for an undecided document, as if what the state
/// lacks changed nothing).
fn told_line(who: &str, d: &DocumentReport) -> String {
    let Some(r) = &d.refusal else {
        return admitted_line(who, d, d.told_outcome());
    };
    if matches!(r.by, Stage::ValidatingAdmissionPolicy | Stage::MutatingAdmissionPolicy) {
        // The message names the policy and the binding.
        return format!("{who}: {}", format!("refused before quota: {}", esc(&r.message)).red().bold());
    }
    let why = match r.reason {
        RefusalReason::ExceededQuota => {
            let q = d.quotas.iter().find(|q| Some(&q.name) == r.quota.as_ref());
            let parts: Vec<String> = q
                .map(|q| {
                    q.resources
                        .iter()
                        .filter(|row| row.exceeded)
                        .map(|row| {
                            let used = row.used.as_ref().map(|u| u.to_string()).unwrap_or_else(|| "0".into());
                            format!("{} {} + used {used} > hard {}", esc(&row.resource), row.requested, row.hard)
                        })
                        .collect()
                })
                .unwrap_or_default();
            format!("refused by quota {}: {}", esc(r.quota.as_deref().unwrap_or("?")), parts.join("; "))
        }
        RefusalReason::MustSpecify => {
            let msg = r.message.split_once(": must specify ").map(|(_, m)| m).unwrap_or(&r.message);
            format!("refused by quota {}: must specify {}", esc(r.quota.as_deref().unwrap_or("?")), esc(msg))
        }
        RefusalReason::Invalid => {
            // Several errors come as `... is invalid: ` and a `* error` line each: name the first.
            let mut lines = r.message.lines();
            let first = lines.next().unwrap_or_default();
            match lines.next() {
                Some(next) if first.ends_with(": ") => format!("invalid: {}{}", esc(first), esc(next.trim_start_matches("* "))),
                _ => format!("invalid: {}", esc(first)),
            }
        }
        RefusalReason::Admission => format!("refused before quota: {}", esc(&r.message)),
        _ => format!("refused: {}", esc(&r.message)),
    };
    format!("{who}: {}", why.red().bold())
}

/// The verdict of a document whose object the server admits: the object, then what happens to
/// its pods and its rollout, in words that keep the two apart (`the Deployment is admitted, but
/// quota refuses 4 of its 6 pods`).
fn admitted_line(who: &str, d: &DocumentReport, outcome: Outcome) -> String {
    let kind = esc(&d.kind);
    // An autoscaler's pods are its target's.
    let its = match &d.autoscaling {
        Some(c) if c.target != format!("{}/{}", d.kind.to_lowercase(), d.name) => format!("{}'s", esc(&c.target)),
        _ => "its".to_string(),
    };
    // A Job Kueue holds: its pods are what comes once Kueue admits it.
    let held = d.kueue.as_ref().and_then(|k| match &k.decision {
        kubectl_quota_engine::kueue::Decision::Admitted => None,
        kubectl_quota_engine::kueue::Decision::Pending(_) => Some("Kueue holds it (no room in its ClusterQueue now); once it runs, "),
        kubectl_quota_engine::kueue::Decision::Inadmissible(_) => Some("Kueue cannot admit it; were it to run, "),
        kubectl_quota_engine::kueue::Decision::Undecided(_) => Some("whether Kueue admits it now is not decided; once it runs, "),
    });
    match outcome {
        Outcome::PodsRefused => {
            let (w, a) = (d.replicas.unwrap_or(0), d.replicas_admitted.unwrap_or(0));
            let fits = match d.replicas_existing {
                Some(e) => format!("{e} exist, {} more fit", a - e),
                None => format!("{a} fit"),
            };
            let mut s = format!("{who}: the {kind} is admitted, but {}", held.unwrap_or_default());
            let refuser = match d.pod_refuser {
                // A webhook's or a policy's refusal of a dry run: the server's, in its words.
                Some(Stage::MutatingAdmissionWebhook) => "the API server",
                by => by.and_then(Stage::pod_refuser).unwrap_or("quota"),
            };
            let _ = write!(s, "{} ({fits})", format!("{refuser} refuses {} of {its} {w} pods", w - a).red().bold());
            if let Some(m) = &d.pod_message {
                let _ = write!(s, ": {}", esc(m));
            }
            s
        }
        Outcome::PodsPending => {
            let pending = d.pods_pending.unwrap_or(0);
            let mut s = format!("{who}: the {kind} is admitted, but ");
            let _ = write!(s, "{}", format!("{pending} of its pods stay Pending: quota refuses their ResourceClaims").red().bold());
            if let Some(m) = &d.pod_message {
                let _ = write!(s, ": {}", esc(m));
            }
            s
        }
        Outcome::RolloutStalls => {
            let mut s = format!("{who}: the {kind} is admitted, but ");
            match d.rollout.as_ref().and_then(|r| r.stall.as_ref().map(|st| (r, st))) {
                Some((r, st)) => {
                    let _ =
                        write!(s, "{}", format!("its rollout stalls with {} of {} new pods ({} old left)", st.new_pods, r.replicas, st.old_pods).red().bold());
                    let _ = write!(s, ": {}", esc(&st.message));
                }
                None => {
                    let _ = write!(s, "{}", "its rollout stalls".red().bold());
                }
            }
            s
        }
        _ if held.is_some() => {
            let mut s = format!("{who}: the {kind} is admitted, but {}", held.unwrap_or_default().yellow());
            let _ = write!(s, "{its} {} pods fit", d.replicas.unwrap_or(0));
            s
        }
        _ => {
            let mut s = format!("{who}: {}", "admitted".green());
            if let Some(w) = d.replicas {
                match d.replicas_existing {
                    Some(e) if e >= w => {
                        let _ = write!(s, "; {its} {w} pods exist");
                    }
                    Some(e) => {
                        let _ = write!(s, "; {its} {w} pods fit ({e} exist, {} more fit)", w - e);
                    }
                    None => {
                        let _ = write!(s, "; {its} {w} pods fit");
                    }
                }
            }
            s
        }
    }
}

/// `text` styled by `style` when colours are on; borrowed as it is when they are off (the
/// usual case when the report goes to a file or a pipe), so that nothing is allocated.
fn paint<'a>(text: &'a str, style: impl FnOnce(&'a str) -> colored::ColoredString) -> Cow<'a, str> {
    if colored::control::SHOULD_COLORIZE.should_colorize() {
        Cow::Owned(style(text).to_string())
    } else {
        Cow::Borrowed(text)
    }
}

fn verdict_word(q: &QuotaReport) -> Cow<'static, str> {
    match q.verdict {
        QuotaVerdict::Fits => paint("fits", |s| s.green()),
        QuotaVerdict::Exceeded => paint("exceeded", |s| s.red().bold()),
        QuotaVerdict::MustSpecify => paint("must specify", |s| s.red().bold()),
        QuotaVerdict::StatusUnknown => paint("usage unknown", |s| s.red()),
        QuotaVerdict::NotEnforced => paint("not enforced", |s| s.yellow()),
        QuotaVerdict::NotApplicable => paint("does not apply", |s| s.dimmed()),
    }
}

fn quota_block(out: &mut String, q: &QuotaReport, indent: &str) {
    let name = esc(&q.name);
    let _ = writeln!(out, "{indent}quota {}: {} — {}", paint(&name, |s| s.bold()), verdict_word(q), esc(&q.why));
    for (res, containers) in &q.missing {
        let _ = writeln!(out, "{indent}  missing {} on container(s) {}", esc(res), esc(&containers.join(", ")));
    }
    if q.resources.is_empty() {
        return;
    }
    use super::table::{Align::*, Table};
    let mut t = Table::new(&[Left, Right, Right, Right, Right, Left]);
    t.row(["RESOURCE", "REQUESTED", "USED", "HARD", "AFTER", ""]);
    for row in &q.resources {
        t.cell(|t| t.push_str(&esc(&row.resource)));
        t.cell(|t| quantity(t, &row.requested));
        t.cell(|t| match &row.used {
            Some(u) => quantity(t, u),
            None => t.push('?'),
        });
        t.cell(|t| quantity(t, &row.hard));
        t.cell(|t| quantity(t, &row.after));
        t.cell(|t| {
            if row.exceeded {
                t.push_str("exceeded")
            }
        });
    }
    // The mark is coloured after the layout, so that escape codes never count in a width.
    let mark = |_: usize, j: usize, c: &str| (j == 5 && colored::control::SHOULD_COLORIZE.should_colorize()).then(|| paint(c, |s| s.red().bold()).into_owned());
    t.paint(&mark);
    t.write(out, &format!("{indent}   "));
}

/// A quantity's canonical text, appended.
fn quantity(text: &mut String, q: &Quantity) {
    let _ = q.write_canonical(text);
}

/// Why the server may give another refusal than the one named: the order it checks quotas in,
/// or takes its ValidatingAdmissionPolicies in, is not fixed.
pub(crate) fn alternatives_why(r: &kubectl_quota_engine::admission::Refusal) -> &'static str {
    if r.by == kubectl_quota_engine::admission::Stage::ValidatingAdmissionPolicy {
        "takes the denying admission policies in no fixed order"
    } else {
        "checks quotas in no fixed order"
    }
}

/// Quota explanations: unrelated quotas (limiting nothing the object consumes) on one line.
fn quota_blocks(out: &mut String, quotas: &[QuotaReport], indent: &str, what: Option<&str>) {
    for q in quotas.iter().filter(|q| !q.unrelated) {
        quota_block(out, q, indent);
    }
    // Named only when every document is explained: a line per kind of object no quota charges.
    let Some(what) = what else { return };
    let unrelated: Vec<String> = quotas.iter().filter(|q| q.unrelated).map(|q| esc(&q.name).into_owned()).collect();
    if !unrelated.is_empty() {
        let _ = writeln!(out, "{indent}{}", format!("quotas limiting nothing {} consume: {}", esc(what), unrelated.join(", ")).dimmed());
    }
}

/// How far quota lets the document's autoscalers scale it (the replicas, then the requests),
/// one sentence each.
fn autoscaling_line(out: &mut String, d: &DocumentReport) {
    let lines =
        [d.autoscaling.as_ref().map(|c| ("autoscaling", c.sentence(), c.capped())), d.vpa.as_ref().map(|v| ("vertical autoscaling", v.sentence(), v.capped()))];
    for (label, sentence, capped) in lines.into_iter().flatten() {
        let sentence = esc(&sentence).into_owned();
        let _ = writeln!(out, "  {label}: {}", if capped { paint(&sentence, |s| s.yellow()).into_owned() } else { sentence });
    }
}

/// Kueue's answer for a Job in one of its queues.
fn kueue_line(out: &mut String, d: &DocumentReport) {
    use kubectl_quota_engine::kueue::Decision;
    let Some(k) = &d.kueue else { return };
    let cq = k.cluster_queue.as_deref().map(|c| format!(", ClusterQueue {}", esc(c))).unwrap_or_default();
    let queue = format!("LocalQueue {}{cq}", esc(&k.local_queue));
    let line = match &k.decision {
        Decision::Admitted => {
            let flavors: Vec<String> = k.flavors.iter().map(|(r, f)| format!("{} in {}", esc(r), esc(f))).collect();
            format!("admitted now ({queue}; {}): the Job's {} pods are created", flavors.join(", "), k.count).green().to_string()
        }
        Decision::Pending(m) => {
            format!("waits ({queue}): {}; the Job stays suspended, and its pods below come once it is admitted", esc(m)).yellow().to_string()
        }
        Decision::Inadmissible(m) => format!("inadmissible ({queue}): {}; the Job stays suspended", esc(m)).red().bold().to_string(),
        Decision::Undecided(m) => format!("not decided ({queue}): {}", esc(m)).yellow().to_string(),
    };
    let _ = writeln!(out, "  kueue: {line}");
    for n in &k.notes {
        let _ = writeln!(out, "  kueue note: {}", esc(n));
    }
}

fn document_block(out: &mut String, d: &DocumentReport, explain: bool) {
    let _ = writeln!(out, "{}", verdict_line(d));
    if d.outcome == Outcome::Undecided {
        let who = format!("{}/{}", esc(&d.kind.to_lowercase()), esc(&d.name));
        let told = told_line(&who, d);
        let _ = writeln!(out, "  as far as what was read tells: {}", told.strip_prefix(&format!("{who}: ")).unwrap_or(&told));
    }
    autoscaling_line(out, d);
    kueue_line(out, d);
    let _ = writeln!(out, "  from {}{}", esc(&d.source.to_string()), d.namespace.as_ref().map(|n| format!(", namespace {}", esc(n))).unwrap_or_default());
    if let Some(e) = &d.server_error {
        // A validation message lists its errors on lines of their own (names in it are quoted,
        // so every line break is the message's own).
        let invalid = d.refusal.as_ref().is_some_and(|r| r.reason == RefusalReason::Invalid);
        let shown = if invalid { escape_lines(e).replace('\n', "\n    ") } else { esc(e).into_owned() };
        let _ = writeln!(out, "  server: {shown}");
    }
    if let Some(r) = &d.refusal {
        for a in &r.alternatives {
            let _ = writeln!(out, "  or, as the server {}: {}", alternatives_why(r), esc(a));
        }
    }
    for m in &d.mutations {
        let _ = writeln!(out, "  before quota: {}", esc(m));
    }
    for w in &d.warnings {
        let _ = writeln!(out, "  Warning: {}", esc(w));
    }
    let gr = d.quotas.first().map(|_| kubectl_quota_engine::objects::plural_of_kind(&d.kind)).unwrap_or_default();
    quota_blocks(out, &d.quotas, "  ", explain.then_some(gr.as_str()));
    if let Some(p) = &d.pods {
        let state = if p.allowed { "admitted".green().to_string() } else { "refused".red().bold().to_string() };
        let _ = writeln!(out, "  pods (explained for {}: {state}):", esc(&p.pod));
        if let Some(m) = &d.pod_message {
            let _ = writeln!(out, "    server: {}", esc(m));
        }
        for a in &d.pod_message_alternatives {
            let _ = writeln!(out, "    or, as the server checks quotas in no fixed order: {}", esc(a));
        }
        for m in &p.mutations {
            let _ = writeln!(out, "    before quota: {}", esc(m));
        }
        quota_blocks(out, &p.quotas, "    ", explain.then_some("pods"));
    } else if let Some(m) = &d.pod_message {
        let _ = writeln!(out, "  pods: {}", esc(m));
    }
    for n in &d.notes {
        let _ = writeln!(out, "  note: {}", esc(n));
    }
    for h in &d.hints {
        let _ = writeln!(out, "  {} {}", "hint:".cyan(), esc(h));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubectl_quota_engine::check::{check, CheckOptions, ClusterState};
    use kubectl_quota_engine::{manifest, objects, report};

    fn objects_of(file: &str, text: &str) -> Vec<objects::Object> {
        manifest::parse_str(file, text).unwrap().iter().map(|d| objects::decode(d).unwrap()).collect()
    }

    const STATE: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: ns}\nspec: {hard: {requests.cpu: '1', pods: '3'}}\nstatus: {hard: {requests.cpu: '1', pods: '3'}, used: {requests.cpu: '0', pods: '0'}}\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: r, namespace: ns}\nspec: {hard: {requests.cpu: '1'}}\nstatus: {hard: {requests.cpu: '1'}, used: {requests.cpu: '0'}}\n";
    const PODS: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: \"a\\nb\"}\nspec: {containers: [{name: app, image: x, resources: {requests: {cpu: 600m}}}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: [{name: app, image: x, resources: {requests: {cpu: 600m}}}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: c}\nspec: {containers: [{name: app, image: x}]}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 5, selector: {}, template: {spec: {containers: [{name: app, image: x, resources: {requests: {cpu: 100m}}}]}}}\n";

    fn report_of(pods: &str) -> Report {
        let mut state = ClusterState::from_objects(objects_of("state.yaml", STATE), "ns");
        let opts = CheckOptions { namespace: "ns".into(), ..CheckOptions::default() };
        let mut r = check(&mut state, objects_of("pods.yaml", pods), &opts);
        report::explain(&mut r, &state);
        r
    }

    #[test]
    fn streamed_json_and_yaml_are_the_whole_report_serialized_at_once() {
        for pods in [PODS, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"] {
            let mut r = report_of(pods);
            for notes in [vec![], vec!["one".to_string(), "two \"quoted\"\nline".to_string()]] {
                r.notes = notes;
                assert_eq!(render(&r, Output::Json, Text::Explain), serde_json::to_string_pretty(&r).unwrap() + "\n");
                assert_eq!(render(&r, Output::Yaml, Text::Explain), crate::render::yaml::to_string(&r).unwrap());
            }
            r.documents.clear();
            assert_eq!(render(&r, Output::Json, Text::Explain), serde_json::to_string_pretty(&r).unwrap() + "\n");
            assert_eq!(render(&r, Output::Yaml, Text::Explain), crate::render::yaml::to_string(&r).unwrap());
        }
    }
}
