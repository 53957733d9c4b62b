//! The last step: reports as text a person reads in five seconds, or as JSON / YAML.
//!
//! Text: one verdict line per document, then per quota whether it applies and why, a table
//! of requested / used / hard / after, and the server's exact message.

use std::fmt::Write;

use colored::Colorize;
use comfy_table::{presets, CellAlignment, ContentArrangement, Table};

use kubectl_quota_engine::admission::{QuotaReport, QuotaVerdict, RefusalReason};
use kubectl_quota_engine::check::{DocumentReport, Report};

use super::escape::{escape as esc, escape_lines};

/// Output format of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Text,
    Json,
    Yaml,
}

/// Renders a report. `quiet` keeps only documents that would be refused.
pub fn render(report: &Report, output: Output, quiet: bool) -> String {
    let mut out = Vec::new();
    write_report(report, output, quiet, &mut out).expect("writing to memory cannot fail");
    String::from_utf8(out).expect("reports are UTF-8")
}

/// Writes a report as it is rendered (JSON and YAML are streamed, not built in memory first).
pub fn write_report<W: std::io::Write>(report: &Report, output: Output, quiet: bool, w: &mut W) -> std::io::Result<()> {
    match output {
        Output::Json => {
            serde_json::to_writer_pretty(&mut *w, report)?;
            w.write_all(b"\n")
        }
        Output::Yaml => serde_yaml::to_writer(&mut *w, report).map_err(std::io::Error::other),
        Output::Text => w.write_all(render_text(report, quiet).as_bytes()),
    }
}

/// The one-line verdict for a document.
pub fn verdict_line(d: &DocumentReport) -> String {
    let who = format!("{}/{}", esc(&d.kind.to_lowercase()), esc(&d.name));
    let Some(r) = &d.refusal else {
        let mut s = format!("{who}: {}", "admitted".green());
        if let (Some(w), Some(a)) = (d.replicas, d.replicas_admitted) {
            let fit = format!("{a} of {w} replicas fit");
            if a < w {
                let _ = write!(s, "; {}", fit.red().bold());
                if let Some(m) = &d.pod_message {
                    let _ = write!(s, " ({})", esc(m));
                }
            } else {
                let _ = write!(s, "; {fit}");
            }
        }
        return s;
    };
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

fn verdict_word(q: &QuotaReport) -> String {
    match q.verdict {
        QuotaVerdict::Fits => "fits".green().to_string(),
        QuotaVerdict::Exceeded => "exceeded".red().bold().to_string(),
        QuotaVerdict::MustSpecify => "must specify".red().bold().to_string(),
        QuotaVerdict::StatusUnknown => "usage unknown".red().to_string(),
        QuotaVerdict::NotEnforced => "not enforced".yellow().to_string(),
        QuotaVerdict::NotApplicable => "does not apply".dimmed().to_string(),
    }
}

fn quota_block(out: &mut String, q: &QuotaReport, indent: &str) {
    let _ = writeln!(out, "{indent}quota {}: {} — {}", esc(&q.name).bold(), verdict_word(q), esc(&q.why));
    for (res, containers) in &q.missing {
        let _ = writeln!(out, "{indent}  missing {} on container(s) {}", esc(res), esc(&containers.join(", ")));
    }
    if q.resources.is_empty() {
        return;
    }
    let mut t = Table::new();
    t.load_style(presets::NOTHING).set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(vec!["RESOURCE", "REQUESTED", "USED", "HARD", "AFTER", ""]);
    for row in &q.resources {
        let used = row.used.as_ref().map(|u| u.to_string()).unwrap_or_else(|| "?".into());
        let mark = if row.exceeded { "exceeded".red().bold().to_string() } else { String::new() };
        t.add_row(vec![esc(&row.resource).into_owned(), row.requested.to_string(), used, row.hard.to_string(), row.after.to_string(), mark]);
    }
    for i in 1..5 {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    for line in t.to_string().lines() {
        let _ = writeln!(out, "{indent}  {}", line.trim_end());
    }
}

/// Quota explanations: unrelated quotas (limiting nothing the object consumes) on one line.
fn quota_blocks(out: &mut String, quotas: &[QuotaReport], indent: &str, what: &str) {
    for q in quotas.iter().filter(|q| !q.unrelated) {
        quota_block(out, q, indent);
    }
    let unrelated: Vec<String> = quotas.iter().filter(|q| q.unrelated).map(|q| esc(&q.name).into_owned()).collect();
    if !unrelated.is_empty() {
        let _ = writeln!(out, "{indent}{}", format!("quotas limiting nothing {} consume: {}", esc(what), unrelated.join(", ")).dimmed());
    }
}

fn document_block(out: &mut String, d: &DocumentReport) {
    let _ = writeln!(out, "{}", verdict_line(d));
    let _ = writeln!(out, "  from {}{}", esc(&d.source.to_string()), d.namespace.as_ref().map(|n| format!(", namespace {}", esc(n))).unwrap_or_default());
    if let Some(e) = &d.server_error {
        // A validation message lists its errors on lines of their own (names in it are quoted,
        // so every line break is the message's own).
        let invalid = d.refusal.as_ref().is_some_and(|r| r.reason == RefusalReason::Invalid);
        let shown = if invalid { escape_lines(e).replace('\n', "\n    ") } else { esc(e).into_owned() };
        let _ = writeln!(out, "  server: {shown}");
    }
    for a in d.refusal.iter().flat_map(|r| &r.alternatives) {
        let _ = writeln!(out, "  or, as the server checks quotas in no fixed order: {}", esc(a));
    }
    for m in &d.mutations {
        let _ = writeln!(out, "  before quota: {}", esc(m));
    }
    let gr = d.quotas.first().map(|_| format!("{}s", d.kind.to_lowercase())).unwrap_or_default();
    quota_blocks(out, &d.quotas, "  ", &gr);
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
        quota_blocks(out, &p.quotas, "    ", "pods");
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

fn render_text(report: &Report, quiet: bool) -> String {
    let mut out = String::new();
    for d in report.documents.iter().filter(|d| !quiet || !d.fully_admitted()) {
        if quiet {
            let _ = writeln!(out, "{}", verdict_line(d));
        } else {
            document_block(&mut out, d);
        }
    }
    if !quiet {
        for n in &report.notes {
            let _ = writeln!(out, "note: {}", esc(n));
        }
        let refused = report.documents.iter().filter(|d| !d.fully_admitted()).count();
        let _ = writeln!(out, "{} document(s) checked, {} would be refused (in whole or in part)", report.documents.len(), refused);
    }
    out
}
