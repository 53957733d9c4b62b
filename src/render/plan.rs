//! `plan`'s output: per namespace and quota, what the manifests add, what is used, the hard
//! limit and the headroom missing (text); the plan as JSON; or the ResourceQuota manifests
//! sized to admit the manifests (YAML, ready for `kubectl apply -f -`).

use std::fmt::Write;

use super::table::{Align::*, Table};
use colored::Colorize;
use kubectl_quota_engine::plan::Plan;

/// Control characters made visible, as in every text output ([`crate::escape`]).
pub fn clean(s: &str) -> String {
    crate::escape::escape(s).into_owned()
}

/// The plan for people.
pub fn render_text(plan: &Plan) -> String {
    let mut out = String::new();
    let mut namespace: Option<&str> = None;
    for q in &plan.quotas {
        if namespace != Some(q.namespace.as_str()) {
            if namespace.is_some() {
                out.push('\n');
            }
            let _ = writeln!(out, "Namespace {}", clean(&q.namespace).bold());
            namespace = Some(&q.namespace);
        }
        let verdict = if q.proposed {
            "proposed: the namespace has no quota".yellow().to_string()
        } else if q.must_grow {
            "must grow".red().bold().to_string()
        } else {
            "fits".green().to_string()
        };
        let _ = writeln!(out, "  quota {}: {verdict}", clean(&q.name));
        let mut t = Table::new(&[Left, Right, Right, Right, Right, Right]);
        t.row(["RESOURCE", "REQUESTED", "USED", "HARD", "NEEDED", "MISSING"]);
        for r in &q.resources {
            let hard = r.hard.as_ref().map(|h| h.to_string()).unwrap_or_else(|| "-".into());
            let missing = r.missing.as_ref().map(|m| format!("+{m}")).unwrap_or_default();
            t.row([clean(&r.resource), r.requested.to_string(), r.used.to_string(), hard, r.needed.to_string(), missing]);
        }
        // What is missing in red, coloured after the layout.
        let missing = |i: usize, j: usize, c: &str| (i > 0 && j == 5).then(|| c.red().bold().to_string());
        t.paint(&missing);
        t.write(&mut out, "     ");
    }
    if plan.quotas.is_empty() {
        let _ = writeln!(out, "No quota would be charged for these manifests.");
    }
    if !plan.blocked.is_empty() {
        let _ = writeln!(out, "\n{}", "Not a matter of headroom:".red().bold());
        for b in &plan.blocked {
            let ns = b.namespace.as_deref().map(|n| format!(" (namespace {})", clean(n))).unwrap_or_default();
            let _ = writeln!(out, "  {}/{}{ns}: {}", b.kind.to_lowercase(), clean(&b.name), clean(&b.message));
        }
    }
    let grow: Vec<String> = plan
        .quotas
        .iter()
        .filter(|q| q.must_grow)
        .map(|q| {
            let adds: Vec<String> = q.resources.iter().filter_map(|r| r.missing.as_ref().map(|m| format!("{} +{m}", r.resource))).collect();
            format!("{}/{} ({})", clean(&q.namespace), clean(&q.name), clean(&adds.join(", ")))
        })
        .collect();
    out.push('\n');
    let refused = match plan.blocked.len() {
        1 => "1 document is".to_string(),
        n => format!("{n} documents are"),
    };
    if grow.is_empty() && !plan.blocked.is_empty() {
        // True whatever else is charged: raising a quota admits none of those.
        let _ = writeln!(out, "{}", format!("No quota needs to grow, but {refused} refused for reasons no quota fixes (above).").red().bold());
    } else if grow.is_empty() && plan.quotas.is_empty() {
        let _ = writeln!(out, "Nothing to grow.");
    } else if grow.is_empty() {
        let _ = writeln!(out, "{}", "Everything fits the quotas as they are.".green());
    } else {
        let _ = writeln!(
            out,
            "{} {}",
            format!("{} must grow:", if grow.len() == 1 { "1 quota".to_string() } else { format!("{} quotas", grow.len()) }).red().bold(),
            grow.join("; ")
        );
        let _ = writeln!(out, "The quotas sized to admit them: add -o yaml (and pipe to `kubectl apply -f -` to raise them).");
        if !plan.blocked.is_empty() {
            let _ = writeln!(out, "Besides, {refused} refused for reasons no quota fixes (above).");
        }
    }
    for n in &plan.notes {
        let _ = writeln!(out, "note: {}", clean(n));
    }
    out
}

/// The quota manifests: raised existing quotas and proposed new ones, as one YAML stream.
/// Quotas that already fit are left out (nothing to change).
pub fn render_yaml(plan: &Plan) -> String {
    let mut out = String::new();
    for q in plan.quotas.iter().filter(|q| q.must_grow || q.proposed) {
        out.push_str("---\n");
        out.push_str(&super::yaml::to_string(&q.manifest).unwrap_or_default());
    }
    out
}

/// The plan as JSON.
pub fn render_json(plan: &Plan) -> String {
    serde_json::to_string_pretty(plan).unwrap_or_default() + "\n"
}
