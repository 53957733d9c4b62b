//! `uncovered`: namespaces without any quota, or without a cap on one resource for every pod.

use serde::Serialize;

use super::{cap_of, normalize_resource, Collector, Options, Quota};
use crate::quantity::Quantity;

/// A namespace `uncovered` lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Uncovered {
    pub namespace: String,
    /// Quotas it has (none, or none that caps the resource asked about).
    pub quotas: usize,
    /// Why it is listed, in words.
    pub reason: String,
    /// What its pods request of the resource asked about (without one: how many pods run);
    /// `None` when the pods could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used: Option<Quantity>,
}

/// `uncovered`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UncoveredReport {
    /// The resource asked about (its quota row), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Where it looked: `all namespaces`, `namespace team-a`.
    pub scope: String,
    /// Namespaces looked at (excluded ones left out).
    pub namespaces: usize,
    pub excluded: Vec<String>,
    pub uncovered: Vec<Uncovered>,
    pub notes: Vec<String>,
}

impl Collector {
    /// Namespaces without any quota, or (with `opts.resource`) without a cap on it for every
    /// pod.
    pub fn uncovered(&self, opts: &Options) -> UncoveredReport {
        let row = opts.resource.as_deref().map(normalize_resource);
        let mut out = Vec::new();
        let mut looked = 0;
        let mut excluded = Vec::new();
        let pods_read = self.seen.contains("Pod");
        for (name, ns) in self.in_scope(opts) {
            if opts.excluded.contains(name) {
                excluded.push(name.clone());
                continue;
            }
            looked += 1;
            let Some(row) = &row else {
                if ns.quotas.is_empty() {
                    out.push(Uncovered {
                        namespace: name.clone(),
                        quotas: 0,
                        reason: "no quota".into(),
                        used: pods_read.then(|| ns.pods.get("pods").cloned().unwrap_or_default()),
                    });
                }
                continue;
            };
            if cap_of(ns, row).is_some() {
                continue;
            }
            let scoped: Vec<&Quota> = ns.quotas.iter().filter(|q| q.scoped.is_some() && q.hard.contains_key(row)).collect();
            let reason = if ns.quotas.is_empty() {
                "no quota".to_string()
            } else if let Some(q) = scoped.first() {
                format!("only scoped quotas cap it ({} for {})", q.name, q.scoped.as_deref().unwrap_or(""))
            } else {
                format!("{} quota(s), none on {row}", ns.quotas.len())
            };
            out.push(Uncovered {
                namespace: name.clone(),
                quotas: ns.quotas.len(),
                reason,
                used: pods_read.then(|| ns.pods.get(row).cloned().unwrap_or_default()),
            });
        }
        UncoveredReport { resource: row, scope: opts.scope(), namespaces: looked, excluded, uncovered: out, notes: self.notes_for_views() }
    }
}
