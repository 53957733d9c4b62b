//! `describe`: Used/Hard at a glance. One table per quota with a percentage and a bar, scopes
//! and scope selectors in words (kubectl prints no selectors), and quotas the quota controller
//! has not synced yet flagged, since the API server does not enforce them.
//!
//! ```
//! use kubectl_quota::describe::percent;
//! use kubectl_quota::quantity::Quantity;
//!
//! let q = |s: &str| Quantity::parse(s).unwrap();
//! assert_eq!(percent(&q("2500m"), &q("4")), Some(62));
//! assert_eq!(percent(&q("6Gi"), &q("8Gi")), Some(75));
//! assert_eq!(percent(&q("0"), &q("0")), None);
//! ```

use std::fmt::Write;

use colored::Colorize;
use serde::Serialize;

use crate::objects::ResourceQuota;
use crate::quantity::Quantity;
use crate::scopes::describe as describe_selector;

/// One resource row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub resource: String,
    /// `None` when the quota controller has not recorded usage for it.
    pub used: Option<Quantity>,
    pub hard: Quantity,
    /// Whole percent of hard used (rounded down); `None` for a zero hard limit with no use.
    pub percent: Option<u64>,
    /// `spec.hard` when it differs from the enforced `status.hard` (a change not synced yet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_hard: Option<Quantity>,
}

/// One quota, ready to print.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaView {
    pub namespace: String,
    pub name: String,
    /// Scopes and scope-selector expressions in words.
    pub scopes: Vec<String>,
    /// False until the quota controller has set `status.hard`: not enforced until then.
    pub synced: bool,
    pub rows: Vec<Row>,
    /// `spec.hard` keys not in `status.hard` yet.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
    /// Resources the quota lists but, being scoped, can never charge.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub never_charged: Vec<String>,
}

impl QuotaView {
    /// The highest percentage of any row (for sorting by how close to the limit).
    pub fn max_percent(&self) -> u64 {
        self.rows.iter().filter_map(|r| r.percent).max().unwrap_or(0)
    }
}

/// Exact whole percent of `hard` that `used` is (rounded down). A zero limit with use is
/// reported as 100% and more (`u64::MAX` stands for "over a zero limit").
pub fn percent(used: &Quantity, hard: &Quantity) -> Option<u64> {
    let h = hard.milli_value() as i128;
    let u = used.milli_value() as i128;
    if h <= 0 {
        return if u > 0 { Some(u64::MAX) } else { None };
    }
    Some((u.max(0) * 100 / h).min(u64::MAX as i128 - 1) as u64)
}

/// Builds the view of one quota.
pub fn view(namespace: &str, name: &str, q: &ResourceQuota) -> QuotaView {
    let scopes = q.selectors().iter().map(describe_selector).collect();
    let rows = q
        .status_hard
        .iter()
        .map(|(k, hard)| {
            let used = q.status_used.get(k).cloned();
            let spec_hard = q.spec_hard.get(k).filter(|s| *s != hard).cloned();
            Row { resource: k.clone(), percent: used.as_ref().and_then(|u| percent(u, hard)), used, hard: hard.clone(), spec_hard }
        })
        .collect();
    let pending = q.spec_hard.keys().filter(|k| !q.status_hard.contains_key(*k)).cloned().collect();
    QuotaView { namespace: namespace.into(), name: name.into(), scopes, synced: q.has_status, rows, pending, never_charged: crate::hints::never_charged(q) }
}

fn bar(p: Option<u64>) -> String {
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

fn percent_text(p: Option<u64>) -> String {
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
    let mut out = String::new();
    let mut last_ns: Option<&str> = None;
    let grouped = views.iter().any(|v| v.namespace != views[0].namespace);
    for v in views {
        if !out.is_empty() {
            out.push('\n');
        }
        if grouped && last_ns != Some(v.namespace.as_str()) {
            let _ = writeln!(out, "{}", format!("=== namespace {} ===", v.namespace).bold());
            last_ns = Some(&v.namespace);
        }
        let _ = writeln!(out, "Name:       {}", v.name.bold());
        let _ = writeln!(out, "Namespace:  {}", v.namespace);
        if !v.scopes.is_empty() {
            let _ = writeln!(out, "Scopes:     {}", v.scopes.join("; "));
        }
        if !v.synced {
            let _ = writeln!(out, "Status:     {}", "not synced: the quota controller has not set status.hard, so nothing is enforced yet".yellow());
        }
        if !v.pending.is_empty() {
            let _ = writeln!(out, "Pending:    {} (in spec.hard, not enforced until synced)", v.pending.join(", "));
        }
        if !v.never_charged.is_empty() {
            let _ = writeln!(
                out,
                "Warning:    {}",
                format!("scoped, so {} is never charged (scopes match only pods, and claims for VolumeAttributesClass)", v.never_charged.join(", ")).yellow()
            );
        }
        if v.rows.is_empty() {
            continue;
        }
        let used: Vec<String> = v.rows.iter().map(|r| r.used.as_ref().map(|u| u.to_string()).unwrap_or_else(|| "unknown".into())).collect();
        let hard: Vec<String> = v.rows.iter().map(|r| r.hard.to_string()).collect();
        let pct: Vec<String> = v.rows.iter().map(|r| percent_text(r.percent)).collect();
        let w_res = v.rows.iter().map(|r| r.resource.len()).max().unwrap_or(0).max(8);
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
            let mut line = format!("{}  {}  {}  {}  {}", pad(&r.resource, w_res), pad(&used[i], w_used), pad(&hard[i], w_hard), pct_cell, bar(r.percent));
            if wide {
                if let Some(s) = &r.spec_hard {
                    let _ = write!(line, "  spec.hard {s} (not synced)");
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse_str;
    use crate::objects::{decode, Body};

    fn quota(yaml: &str) -> ResourceQuota {
        match decode(&parse_str("q.yaml", yaml).unwrap()[0]).unwrap().body {
            Body::ResourceQuota(q) => *q,
            _ => panic!(),
        }
    }

    #[test]
    fn percent_is_exact_and_rounds_down() {
        let q = |s: &str| Quantity::parse(s).unwrap();
        let cases = [
            ("1", "3", Some(33)),
            ("999m", "1", Some(99)),
            ("1", "1", Some(100)),
            ("5", "4", Some(125)),
            ("1", "0", Some(u64::MAX)),
            ("1536Mi", "2Gi", Some(75)),
        ];
        for (u, h, want) in cases {
            assert_eq!(percent(&q(u), &q(h)), want, "{u}/{h}");
        }
    }

    #[test]
    fn views_show_selectors_and_unsynced_state() {
        let v = view(
            "ns",
            "q",
            &quota("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {pods: '4', requests.cpu: '2'}\n  scopes: [NotTerminating]\n  scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]}\nstatus:\n  hard: {pods: '2'}\n  used: {pods: '1'}\n"),
        );
        assert_eq!(v.scopes, vec!["NotTerminating", "PriorityClass In [high]"]);
        assert!(v.synced);
        assert_eq!(v.pending, vec!["requests.cpu"]);
        assert_eq!(v.rows[0].spec_hard.as_ref().map(|q| q.to_string()), Some("4".into()));
        let unsynced = view("ns", "q", &quota("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {pods: '4'}\n"));
        assert!(!unsynced.synced);
        colored::control::set_override(false);
        assert!(render_text(&[unsynced], false).contains("not synced"));
    }
}
