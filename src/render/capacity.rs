//! The cluster views as text: `capacity` (a table per resource with describe's bars),
//! `uncovered` and `blocked` (one line per namespace or workload). JSON and YAML are the
//! engine's reports serialized as they are.

use std::fmt::Write;

use colored::Colorize;
use kubectl_quota_engine::capacity::{BlockedReport, CapacityReport, Headroom, HeadroomRow, Offer, ResourceRow, UncoveredReport};
use kubectl_quota_engine::quantity::Quantity;

use super::describe::{bar, percent_text};
use super::table::{Align, Table};
use crate::escape::escape as esc;

/// Namespace names shown inline before `+N more`.
const NAMES_SHOWN: usize = 3;
/// Left-out nodes named in the text before `+N more`.
const NODES_SHOWN: usize = 5;

fn names(list: &[String]) -> String {
    let mut s: Vec<String> = list.iter().take(NAMES_SHOWN).map(|n| esc(n).into_owned()).collect();
    if list.len() > NAMES_SHOWN {
        s.push(format!("+{} more", list.len() - NAMES_SHOWN));
    }
    s.join(", ")
}

/// The shared table layout: a header, its dashes, the rows; `color` paints a body cell
/// (row, column, text) after the padding.
fn table(out: &mut String, header: &[&str], rows: &[Vec<String>], color: impl Fn(usize, usize, String) -> String) {
    let aligns = vec![Align::Left; header.len()];
    let mut t = Table::new(&aligns);
    t.row(header.iter().copied());
    t.row(header.iter().map(|h| "-".repeat(h.len())));
    for r in rows {
        t.row(r.iter());
    }
    let body = |i: usize, j: usize, c: &str| (i >= 2).then(|| color(i - 2, j, c.to_string()));
    t.paint(&body);
    t.write(out, "");
}

fn offered(r: &ResourceRow) -> String {
    match &r.offered_by {
        Offer::Node(n) => esc(n).into_owned(),
        Offer::DeviceClass(c) => format!("device class {}", esc(c)),
    }
}

fn quantity(q: &Option<Quantity>) -> String {
    q.as_ref().map_or_else(|| "unknown".into(), Quantity::to_string)
}

/// What a resource's caps promise: `unbounded` when no namespace caps it.
fn promised(r: &ResourceRow) -> String {
    r.promised.as_ref().map_or_else(|| "unbounded".into(), Quantity::to_string)
}

/// Rows of a section without a header, indented, their columns aligned.
fn lines(out: &mut String, rows: &[Vec<String>]) {
    let aligns = [Align::Left, Align::Left];
    let mut t = Table::new(&aligns);
    for r in rows {
        t.row(r.iter());
    }
    t.write(out, "  ");
}

/// `capacity` as text: the nodes and namespaces counted, the table of resources, then the
/// sections that apply (scoped quotas, resources no node offers, autoscalers at their
/// maximum, each resource's namespaces).
pub fn capacity_text(r: &CapacityReport) -> String {
    let mut out = String::new();
    counted(&mut out, r);
    let (offered_rows, nowhere): (Vec<&ResourceRow>, Vec<&ResourceRow>) = r.resources.iter().partition(|x| !x.offered_nowhere());
    if !offered_rows.is_empty() {
        resources_table(&mut out, &offered_rows);
    }
    scoped_quotas(&mut out, r);
    if !nowhere.is_empty() {
        offered_nowhere(&mut out, &nowhere);
    }
    if !r.autoscalers.is_empty() {
        autoscalers(&mut out, r);
    }
    namespaces_per_resource(&mut out, r);
    out
}

/// The `Nodes:` and `Namespaces:` lines: what the promise counts and what it leaves out.
fn counted(out: &mut String, r: &CapacityReport) {
    let mut nodes = format!("{} of {} schedulable", r.nodes_counted, r.nodes);
    if !r.nodes_left_out.is_empty() {
        let mut left: Vec<String> = r.nodes_left_out.iter().take(NODES_SHOWN).map(|l| format!("{} ({})", esc(&l.name), esc(&l.reasons.join(", ")))).collect();
        if r.nodes_left_out.len() > NODES_SHOWN {
            left.push(format!("+{} more (-o json lists them)", r.nodes_left_out.len() - NODES_SHOWN));
        }
        let _ = write!(nodes, "; left out: {}", left.join("; "));
    }
    let _ = writeln!(out, "Nodes:       {nodes}");
    let mut ns = format!("{} in the promise ({})", r.namespaces, esc(&r.scope));
    if !r.namespaces_excluded.is_empty() {
        let _ = write!(ns, "; left out (--exclude-namespaces): {}", r.namespaces_excluded.iter().map(|n| esc(n).into_owned()).collect::<Vec<_>>().join(", "));
    }
    let _ = writeln!(out, "Namespaces:  {ns}");
}

/// The table of the resources some schedulable node offers: allocatable, promised, used.
fn resources_table(out: &mut String, offered_rows: &[&ResourceRow]) {
    out.push('\n');
    let rows: Vec<Vec<String>> = offered_rows
        .iter()
        .map(|x| {
            vec![
                esc(&x.resource).into_owned(),
                quantity(&x.allocatable),
                promised(x),
                percent_text(x.promised_percent),
                x.used.to_string(),
                percent_text(x.used_percent),
                bar(x.used_percent),
                if x.unbounded.is_empty() { "none".into() } else { format!("{}: {}", x.unbounded.len(), names(&x.unbounded)) },
            ]
        })
        .collect();
    table(out, &["Resource", "Allocatable", "Promised", "Promised%", "Used", "Used%", "Usage", "Unbounded"], &rows, |n, i, cell| {
        let x = offered_rows[n];
        // Promised% red when overcommitted; the bar as describe colours it.
        match (i, x.promised_percent, x.used_percent) {
            (3, Some(p), _) if p > 100 => cell.red().bold().to_string(),
            (3, Some(p), _) if p >= 80 => cell.yellow().to_string(),
            (6, _, Some(p)) if p >= 100 => cell.red().to_string(),
            (6, _, Some(p)) if p >= 80 => cell.yellow().to_string(),
            (6, _, Some(_)) => cell.green().to_string(),
            _ => cell,
        }
    });
}

/// The scoped quotas, apart from the promise, when there are any.
fn scoped_quotas(out: &mut String, r: &CapacityReport) {
    let scoped: Vec<Vec<String>> = r
        .resources
        .iter()
        .filter(|x| x.scoped_quotas > 0)
        .map(|x| vec![esc(&x.resource).into_owned(), format!("{} in {} quota(s)", x.scoped_hard, x.scoped_quotas)])
        .collect();
    if !scoped.is_empty() {
        let _ = writeln!(out, "\nScoped quotas (apart: they cap only some pods, so they are not in Promised):");
        lines(out, &scoped);
    }
}

/// Quotas on resources that no schedulable node offers.
fn offered_nowhere(out: &mut String, nowhere: &[&ResourceRow]) {
    let _ = writeln!(out, "\nQuotas on resources no schedulable node offers:");
    let rows: Vec<Vec<String>> = nowhere
        .iter()
        .map(|x| {
            let said = format!("promised {}, used {} ({} is offered by no schedulable node)", promised(x), x.used, offered(x));
            vec![esc(&x.resource).into_owned(), said]
        })
        .collect();
    lines(out, &rows);
}

/// The autoscalers at their maximum against each namespace's quota room.
fn autoscalers(out: &mut String, r: &CapacityReport) {
    let _ = writeln!(out, "\nAutoscalers at their maximum, against the quotas' room (where a spike hits quota first, first):");
    let rows: Vec<Vec<String>> = r.autoscalers.iter().map(headroom_row).collect();
    table(out, &["Namespace", "Autoscalers", "Resource", "May ask", "Room", "At the maximum"], &rows, |n, i, cell| {
        if i == 5 && r.autoscalers[n].spike_refused() {
            cell.red().to_string()
        } else {
            cell
        }
    });
}

/// One namespace's row of the autoscalers' table: who, the tightest resource, what they may
/// ask, the room, and whether it fits.
fn headroom_row(h: &Headroom) -> Vec<String> {
    let who: Vec<String> = h
        .autoscalers
        .iter()
        .map(|a| match a.autoscaler.starts_with("VPA ") {
            // A VPA changes what the running pods ask for, not how many run.
            true => format!("{} ({}: {} pods at its target)", esc(&a.autoscaler), esc(&a.target), a.current),
            false => format!("{} ({}: {} of max {})", esc(&a.autoscaler), esc(&a.target), a.current, a.max_replicas),
        })
        .collect();
    let row = h.tightest().or(h.resources.first());
    let (res, ask, room) = match row {
        Some(x) => (
            esc(&x.resource).into_owned(),
            x.may_ask.to_string(),
            match (&x.room, &x.quota) {
                (Some(room), Some(q)) => format!("{room} in {}", esc(q)),
                _ => "no quota caps it".into(),
            },
        ),
        None => ("-".into(), "-".into(), "-".into()),
    };
    let verdict = match row {
        Some(HeadroomRow { short: Some(s), .. }) => format!("refused: {s} short"),
        Some(HeadroomRow { room: Some(_), percent_of_room: Some(p), .. }) => format!("fits ({p}% of the room)"),
        Some(HeadroomRow { room: Some(_), .. }) => "fits".into(),
        _ => "unbounded".into(),
    };
    vec![esc(&h.namespace).into_owned(), names(&who), res, ask, room, verdict]
}

/// Each capped resource's namespaces: cap, quota, share, used, scoped.
fn namespaces_per_resource(out: &mut String, r: &CapacityReport) {
    for x in r.resources.iter().filter(|x| !x.namespaces.is_empty()) {
        let _ = writeln!(out, "\n{} (allocatable {}):", esc(&x.resource).bold(), quantity(&x.allocatable));
        let rows: Vec<Vec<String>> = x
            .namespaces
            .iter()
            .map(|s| {
                vec![
                    esc(&s.namespace).into_owned(),
                    s.cap.as_ref().map_or_else(|| "unbounded".into(), Quantity::to_string),
                    s.quota.as_deref().map_or_else(String::new, |q| esc(q).into_owned()),
                    s.percent.map_or_else(String::new, |p| percent_text(Some(p))),
                    s.used.to_string(),
                    if s.scoped_hard.is_zero() { String::new() } else { s.scoped_hard.to_string() },
                ]
            })
            .collect();
        let mut t = String::new();
        table(&mut t, &["Namespace", "Cap", "Quota", "Share", "Used", "Scoped"], &rows, |_, _, c| c);
        for l in t.lines() {
            let _ = writeln!(out, "  {l}");
        }
    }
}

/// What could not be read, for standard error: one `note:` line each.
pub fn notes_text(notes: &[String]) -> String {
    notes.iter().map(|n| format!("note: {}\n", crate::escape::escape_lines(n))).collect()
}

/// `uncovered` as text.
pub fn uncovered_text(r: &UncoveredReport) -> String {
    let mut out = String::new();
    let what = match &r.resource {
        Some(res) => format!("Namespaces with no cap on {} for every pod", esc(res)),
        None => "Namespaces without any ResourceQuota".into(),
    };
    let left = if r.excluded.is_empty() {
        String::new()
    } else {
        format!("; left out (--exclude-namespaces): {}", r.excluded.iter().map(|n| esc(n).into_owned()).collect::<Vec<_>>().join(", "))
    };
    let _ = writeln!(out, "{what}: {} of {} ({}){left}", r.uncovered.len(), r.namespaces, esc(&r.scope));
    if r.uncovered.is_empty() {
        return out;
    }
    out.push('\n');
    let used_header = if r.resource.is_some() { "Requested" } else { "Pods" };
    let rows: Vec<Vec<String>> = r
        .uncovered
        .iter()
        .map(|u| {
            vec![
                esc(&u.namespace).into_owned(),
                u.quotas.to_string(),
                u.used.as_ref().map_or_else(|| "-".into(), Quantity::to_string),
                esc(&u.reason).into_owned(),
            ]
        })
        .collect();
    table(&mut out, &["Namespace", "Quotas", used_header, "Why"], &rows, |_, _, c| c);
    out
}

/// `blocked` as text.
pub fn blocked_text(r: &BlockedReport) -> String {
    let mut out = String::new();
    if r.blocked.is_empty() {
        let hint = if r.scope == "all namespaces" { "" } else { " (-A looks in every namespace)" };
        let _ = writeln!(out, "No workload is blocked in {}{hint}.", esc(&r.scope));
        return out;
    }
    let rows: Vec<Vec<String>> = r
        .blocked
        .iter()
        .map(|b| {
            vec![
                esc(&b.namespace).into_owned(),
                esc(&b.workload).into_owned(),
                b.waiting.map_or_else(|| "?".into(), |w| w.to_string()),
                b.blocker.name().to_string(),
                b.quota.as_deref().map_or_else(|| "-".into(), |q| esc(q).into_owned()),
                if b.resources.is_empty() { "-".into() } else { esc(&b.resources.join(",")).into_owned() },
                // One short line: the first fix; the rest are `why`'s and the JSON's.
                match b.fixes.split_first() {
                    Some((first, [])) => esc(first).into_owned(),
                    Some((first, rest)) => format!("{} (+{} more: kubectl quota why {} -n {})", esc(first), rest.len(), esc(&b.workload), esc(&b.namespace)),
                    None => esc(&b.fix).into_owned(),
                },
            ]
        })
        .collect();
    table(&mut out, &["Namespace", "Workload", "Waiting", "Blocked by", "Quota", "Resource", "Smallest fix"], &rows, |_, i, c| {
        if i == 1 {
            c.bold().to_string()
        } else {
            c
        }
    });
    // The autoscalers behind what the workloads want.
    let scaled: Vec<&kubectl_quota_engine::capacity::Blocked> = r.blocked.iter().filter(|b| b.autoscaler.is_some()).collect();
    if !scaled.is_empty() {
        let _ = writeln!(out, "\nAutoscaled:");
        for b in scaled {
            let _ = writeln!(out, "  {}/{}: {}", esc(&b.namespace), esc(&b.workload), esc(b.autoscaler.as_deref().unwrap_or_default()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_namespace_lists_are_cut_with_a_count() {
        let list: Vec<String> = ["a", "b", "c", "d", "e"].iter().map(|s| s.to_string()).collect();
        assert_eq!(names(&list), "a, b, c, +2 more");
        assert_eq!(names(&list[..2]), "a, b");
    }

    #[test]
    fn section_lines_are_aligned() {
        let rows =
            vec![vec!["requests.cpu".to_string(), "4 in 1 quota(s)".to_string()], vec!["requests.nvidia.com/gpu".to_string(), "2 in 2 quota(s)".to_string()]];
        let mut out = String::new();
        lines(&mut out, &rows);
        assert_eq!(out, "  requests.cpu             4 in 1 quota(s)\n  requests.nvidia.com/gpu  2 in 2 quota(s)\n");
    }

    #[test]
    fn a_blocked_table_cell_is_the_first_fix_and_points_at_why_for_the_rest() {
        colored::control::set_override(false);
        let fixes: Vec<String> = vec!["lower limits.cpu to 1 or less in each container".into(), "or lower the namespace's level".into()];
        let b = kubectl_quota_engine::capacity::Blocked {
            namespace: "t".into(),
            workload: "deployment/web".into(),
            via: None,
            waiting: Some(2),
            blocker: kubectl_quota_engine::why::fixes::Blocker::LimitRange,
            quota: None,
            resources: vec![],
            fix: fixes.join("; "),
            fixes,
            autoscaler: None,
            message: String::new(),
            from: String::new(),
        };
        let r = BlockedReport { scope: "namespace t".into(), blocked: vec![b], notes: vec![] };
        let text = blocked_text(&r);
        assert!(text.contains("lower limits.cpu to 1 or less in each container (+1 more: kubectl quota why deployment/web -n t)"), "{text}");
        assert!(!text.contains("namespace's level"), "{text}");
    }

    #[test]
    fn control_characters_in_names_are_made_visible() {
        assert_eq!(names(&["evil\u{1b}[31m".to_string()]), "evil^[[31m");
    }
}
