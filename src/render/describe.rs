//! `describe` as text: one Used/Hard table per quota with a percentage and a bar (yellow from
//! 80%, red at 100%), grouped by namespace when there are several.

use std::fmt::Write;

use colored::Colorize;
use kubectl_quota_engine::report::quota_view::QuotaView;

use crate::escape::escape as esc;

/// A 20-cell bar for a percentage: green, yellow from 80%, red at 100% (`capacity` draws the same).
pub(crate) fn bar(p: Option<u64>) -> String {
    const WIDTH: u64 = 20;
    let Some(p) = p else { return String::new() };
    let filled = (p.min(100) * WIDTH / 100) as usize;
    let s = format!("{}{}", "█".repeat(filled), "░".repeat(WIDTH as usize - filled));
    match p {
        p if p >= 100 => s.red().to_string(),
        p if p >= 80 => s.yellow().to_string(),
        _ => s.green().to_string(),
    }
}

/// `75%`, `over` (above a zero limit), `-` (none).
pub(crate) fn percent_text(p: Option<u64>) -> String {
    match p {
        None => "-".into(),
        Some(u64::MAX) => "over".into(),
        Some(p) => format!("{p}%"),
    }
}

/// Pads plain text to a width (colors are added after padding so they do not count).
fn pad(s: &str, w: usize) -> String {
    format!("{s:<w$}")
}

/// Renders quota views as text. `wide` adds the spec column for unsynced changes.
pub fn render_text(views: &[QuotaView], wide: bool) -> String {
    let mut out = Vec::new();
    write_text(&mut out, views, wide).expect("writing to memory");
    String::from_utf8(out).expect("text is UTF-8")
}

/// Writes quota views as text to `w`, one quota at a time (the same bytes as [`render_text`]).
pub fn write_text(w: &mut dyn std::io::Write, views: &[QuotaView], wide: bool) -> std::io::Result<()> {
    let mut out = String::new();
    let mut last_ns: Option<&str> = None;
    let grouped = views.iter().any(|v| v.namespace != views[0].namespace);
    for (n, v) in views.iter().enumerate() {
        if n > 0 {
            w.write_all(out.as_bytes())?;
            out.clear();
            out.push('\n');
        }
        if grouped && last_ns != Some(v.namespace.as_str()) {
            let _ = writeln!(out, "{}", format!("=== namespace {} ===", esc(&v.namespace)).bold());
            last_ns = Some(&v.namespace);
        }
        let _ = writeln!(out, "Name:       {}", esc(&v.name).bold());
        let _ = writeln!(out, "Namespace:  {}", esc(&v.namespace));
        if !v.scopes.is_empty() {
            let _ = writeln!(out, "Scopes:     {}", esc(&v.scopes.join("; ")));
        }
        if !v.synced {
            let _ = writeln!(out, "Status:     {}", "not synced: the quota controller has not set status.hard, so nothing is enforced yet".yellow());
        }
        if !v.pending.is_empty() {
            let _ = writeln!(out, "Pending:    {} (in spec.hard, not enforced until synced)", esc(&v.pending.join(", ")));
        }
        if !v.never_charged.is_empty() {
            let _ = writeln!(
                out,
                "Warning:    {}",
                format!("scoped, so {} is never charged (scopes match only pods, and claims for VolumeAttributesClass)", esc(&v.never_charged.join(", ")))
                    .yellow()
            );
        }
        if v.rows.is_empty() {
            continue;
        }
        let used: Vec<String> = v.rows.iter().map(|r| r.used.as_ref().map(|u| u.to_string()).unwrap_or_else(|| "unknown".into())).collect();
        let hard: Vec<String> = v.rows.iter().map(|r| r.hard.to_string()).collect();
        let pct: Vec<String> = v.rows.iter().map(|r| percent_text(r.percent)).collect();
        let resources: Vec<String> = v.rows.iter().map(|r| esc(&r.resource).into_owned()).collect();
        let w_res = resources.iter().map(String::len).max().unwrap_or(0).max(8);
        let w_used = used.iter().map(String::len).max().unwrap_or(0).max(4);
        let w_hard = hard.iter().map(String::len).max().unwrap_or(0).max(4);
        let w_pct = pct.iter().map(String::len).max().unwrap_or(0).max(4);
        let mut header = format!("{}  {}  {}  {}  ", pad("Resource", w_res), pad("Used", w_used), pad("Hard", w_hard), pad("Use%", w_pct));
        header.push_str("Usage");
        if wide {
            header.push_str("                 Spec");
        }
        let _ = writeln!(out, "{}", header.trim_end());
        let spec_sep = if wide { "                 ----" } else { "" };
        let _ = writeln!(out, "{}  {}  {}  {}  -----{spec_sep}", pad("--------", w_res), pad("----", w_used), pad("----", w_hard), pad("----", w_pct));
        for (i, r) in v.rows.iter().enumerate() {
            let pct_cell = pad(&pct[i], w_pct);
            let pct_cell = match r.percent {
                Some(p) if p >= 100 => pct_cell.red().bold().to_string(),
                Some(p) if p >= 80 => pct_cell.yellow().to_string(),
                _ => pct_cell,
            };
            let mut line = format!("{}  {}  {}  {}  {}", pad(&resources[i], w_res), pad(&used[i], w_used), pad(&hard[i], w_hard), pct_cell, bar(r.percent));
            if wide {
                if let Some(s) = &r.spec_hard {
                    let _ = write!(line, "  spec.hard {s} (not synced)");
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    w.write_all(out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubectl_quota_engine::manifest::parse_str;
    use kubectl_quota_engine::objects::{decode, Body};
    use kubectl_quota_engine::report::quota_view::view;

    #[test]
    fn unsynced_quotas_are_flagged() {
        let q = match decode(&parse_str("q.yaml", "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {pods: '4'}\n").unwrap()[0])
            .unwrap()
            .body
        {
            Body::ResourceQuota(q) => *q,
            _ => panic!(),
        };
        colored::control::set_override(false);
        assert!(render_text(&[view("ns", "q", &q)], false).contains("not synced"));
    }
}
