//! `describe` as text: one Used/Hard table per quota with a percentage and a bar (yellow from
//! 80%, red at 100%), grouped by namespace when there are several.

use std::fmt::Write;

use colored::Colorize;
use kubectl_quota_engine::report::queue_view::QueueView;
use kubectl_quota_engine::report::quota_view::QuotaView;

use crate::escape::escape as esc;

/// A 20-cell bar for a percentage: green, yellow from 80%, red at 100% (`capacity` draws the same).
pub(crate) fn bar(p: Option<u64>) -> String {
    const WIDTH: u64 = 20;
    let Some(p) = p else { return String::new() };
    let filled = (p.min(100) * WIDTH / 100) as usize;
    format!("{}{}", "█".repeat(filled), "░".repeat(WIDTH as usize - filled))
}

/// `75%`, `over` (above a zero limit), `-` (none).
pub(crate) fn percent_text(p: Option<u64>) -> String {
    match p {
        None => "-".into(),
        Some(u64::MAX) => "over".into(),
        Some(p) => format!("{p}%"),
    }
}

/// The colours of a table's percentage (column `at`) and bar (the next) in each row under
/// its two header lines, after the layout: yellow from 80%, red at 100%, the bar green below.
fn percent_colours(percents: Vec<Option<u64>>, at: usize) -> impl Fn(usize, usize, &str) -> Option<String> {
    move |i, j, c| match (i.checked_sub(2).and_then(|k| percents[k]), j) {
        (Some(p), j) if j == at && p >= 100 => Some(c.red().bold().to_string()),
        (Some(p), j) if j == at && p >= 80 => Some(c.yellow().to_string()),
        (Some(p), j) if j == at + 1 && p >= 100 => Some(c.red().to_string()),
        (Some(p), j) if j == at + 1 && p >= 80 => Some(c.yellow().to_string()),
        (Some(_), j) if j == at + 1 => Some(c.green().to_string()),
        _ => None,
    }
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
        use super::table::{Align::Left, Table};
        let columns = if wide { 6 } else { 5 };
        let mut t = Table::new(&[Left; 6][..columns]);
        t.row(["Resource", "Used", "Hard", "Use%", "Usage", "Spec"]);
        t.row(["--------", "----", "----", "----", "-----", "----"]);
        for r in &v.rows {
            let used = r.used.as_ref().map(|u| u.to_string()).unwrap_or_else(|| "unknown".into());
            let spec = r.spec_hard.as_ref().map(|s| format!("spec.hard {s} (not synced)")).unwrap_or_default();
            t.row([esc(&r.resource).into_owned(), used, r.hard.to_string(), percent_text(r.percent), bar(r.percent), spec]);
        }
        // The percentage and the bar in colour (yellow from 80%, red at 100%), after the layout.
        let colour = percent_colours(v.rows.iter().map(|r| r.percent).collect(), 3);
        t.paint(&colour);
        t.write(&mut out, "");
    }
    w.write_all(out.as_bytes())
}

/// Writes Kueue's queues as text to `w`: each LocalQueue with its ClusterQueue's quota per
/// flavor and resource, what is reserved and admitted, the share of nominal reserved (coloured
/// as a quota's), and the borrowing and lending limits where any is set.
pub fn write_queues(w: &mut dyn std::io::Write, queues: &[QueueView]) -> std::io::Result<()> {
    use super::table::{Align::Left, Table};
    let mut out = String::new();
    for (n, q) in queues.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "LocalQueue:    {}", esc(&q.local_queue).bold());
        let _ = writeln!(out, "Namespace:     {}", esc(&q.namespace));
        let cohort = q.cohort.as_deref().map(|c| format!(" (cohort {})", esc(c))).unwrap_or_default();
        let _ = writeln!(out, "ClusterQueue:  {}{cohort}", esc(&q.cluster_queue));
        for note in &q.notes {
            let _ = writeln!(out, "Status:        {}", esc(note).yellow());
        }
        if !q.rows.is_empty() {
            let limits = q.rows.iter().any(|r| r.borrowing_limit.is_some() || r.lending_limit.is_some());
            let columns = if limits { 8 } else { 7 };
            let mut t = Table::new(&[Left; 8][..columns]);
            t.row(["Flavor", "Resource", "Reserved", "Admitted", "Nominal", "Use%", "Usage", "Limits"]);
            t.row(["------", "--------", "--------", "--------", "-------", "----", "-----", "------"]);
            for r in &q.rows {
                let limit = [r.borrowing_limit.as_deref().map(|b| format!("borrowing {b}")), r.lending_limit.as_deref().map(|l| format!("lending {l}"))]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(", ");
                t.row([
                    esc(&r.flavor).into_owned(),
                    esc(&r.resource).into_owned(),
                    r.reserved.clone(),
                    r.admitted.clone(),
                    r.nominal.clone(),
                    percent_text(r.percent),
                    bar(r.percent),
                    limit,
                ]);
            }
            let colour = percent_colours(q.rows.iter().map(|r| r.percent).collect(), 5);
            t.paint(&colour);
            t.write(&mut out, "");
        }
        w.write_all(out.as_bytes())?;
        out.clear();
    }
    Ok(())
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
