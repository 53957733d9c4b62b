//! `capacity`: per resource, what the schedulable nodes offer, what the namespaces' caps
//! promise, and what is used, overcommitted first; `--by namespace`, each namespace's part.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{cap_of, row_of, Collector, LeftOut, Offer, Options};
use crate::quantity::Quantity;

/// Whole percent of `b` that `a` is: [`Quantity::percent_of`], under the name the views use.
pub fn ratio_percent(a: &Quantity, b: &Quantity) -> Option<u64> {
    a.percent_of(b)
}

/// The rows `capacity --resource NAME` shows: the row NAME is spelled as (`cpu` and
/// `requests.cpu` are `requests.cpu`), and for a bare cpu, memory or ephemeral-storage, its
/// `limits.` row too. `None`: NAME is not a resource nodes offer and quotas cap.
pub fn rows_named(name: &str) -> Option<Vec<String>> {
    let (row, _) = row_of(name)?;
    let mut rows = vec![row];
    if matches!(name, "cpu" | "memory" | "ephemeral-storage") {
        rows.push(format!("limits.{name}"));
    }
    Some(rows)
}

/// One resource of `capacity`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRow {
    /// The quota spelling: `requests.cpu`, `limits.memory`, `pods`, `requests.nvidia.com/gpu`,
    /// `gpu.deviceclass.resource.k8s.io/devices`.
    pub resource: String,
    pub offered_by: Offer,
    /// Sum over the schedulable nodes (devices the ResourceSlices publish for a class);
    /// `None` when nothing offers it, or (a device class) when which devices it selects is
    /// not known.
    pub allocatable: Option<Quantity>,
    /// Sum of the namespaces' effective caps; `None` when no namespace caps it and some are
    /// unbounded: the promise has no bound (not a promise of 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promised: Option<Quantity>,
    /// Namespaces with no cap on it (excluded ones left out).
    pub unbounded: Vec<String>,
    /// The quotas' `status.used`, and the requests of pods where no quota caps it.
    pub used: Quantity,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promised_percent: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_percent: Option<u64>,
    /// Scoped quotas' hard limits, summed apart (never in `promised`).
    pub scoped_hard: Quantity,
    pub scoped_quotas: usize,
    /// `--by namespace`: each namespace's part, largest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<Share>,
}

impl ResourceRow {
    /// Quotas promise it but no node offers any (a GPU quota in a cluster without GPUs).
    pub fn offered_nowhere(&self) -> bool {
        self.allocatable.as_ref().is_none_or(Quantity::is_zero) && !matches!(&self.offered_by, Offer::DeviceClass(_) if self.allocatable.is_none())
    }
}

/// A namespace's part of a resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Share {
    pub namespace: String,
    /// Its effective cap and the quota that sets it (`None`: unbounded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap: Option<Quantity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<String>,
    pub used: Quantity,
    /// Of the allocatable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent: Option<u64>,
    /// Scoped quotas' hard limits (not in the cap).
    #[serde(skip_serializing_if = "Quantity::is_zero")]
    pub scoped_hard: Quantity,
}

/// `capacity`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityReport {
    pub nodes: usize,
    pub nodes_counted: usize,
    /// Nodes not in the sums, and why.
    pub nodes_left_out: Vec<LeftOut>,
    /// Namespaces in the promise.
    pub namespaces: usize,
    /// Namespaces left out of the promise (present and excluded).
    pub namespaces_excluded: Vec<String>,
    /// Where it looked: `all namespaces`, `namespace team-a`.
    pub scope: String,
    /// Overcommitted first (highest promised/allocatable), then quotas on resources no node
    /// offers.
    pub resources: Vec<ResourceRow>,
    /// Per namespace with autoscalers: what they may still ask for against each quota's room,
    /// where a spike hits quota first first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub autoscalers: Vec<super::Headroom>,
    /// What could not be read first, then remarks on the state (an autoscaler whose target
    /// does not exist).
    pub notes: Vec<String>,
    /// Whether something could not be read (the first notes): the answer is incomplete.
    #[serde(skip)]
    pub incomplete: bool,
}

impl Collector {
    /// The capacity view: one row per resource the nodes offer or a quota promises, each
    /// summed over the namespaces in scope, overcommitted first.
    pub fn capacity(&self, opts: &Options) -> CapacityReport {
        let nodes = self.nodes.sums();
        let devices = self.devices_per_class(&nodes.left_out);
        let mut out: Vec<ResourceRow> = self
            .rows_to_show(&nodes, opts)
            .into_iter()
            .map(|(row, offer)| {
                let allocatable = match &offer {
                    Offer::Node(r) => nodes.allocatable.get(r).cloned(),
                    Offer::DeviceClass(c) => devices.get(c).cloned().flatten(),
                };
                self.resource_row(row, offer, allocatable, opts)
            })
            .collect();
        // Overcommitted first; quotas on what no node offers last, in their own section.
        out.sort_by(|a, b| {
            a.offered_nowhere()
                .cmp(&b.offered_nowhere())
                .then(b.promised_percent.unwrap_or(0).cmp(&a.promised_percent.unwrap_or(0)))
                .then(b.used_percent.unwrap_or(0).cmp(&a.used_percent.unwrap_or(0)))
                .then(a.resource.cmp(&b.resource))
        });
        // A row no node offers and no quota promises says nothing.
        out.retain(|r| !(r.offered_nowhere() && r.promised.as_ref().is_none_or(Quantity::is_zero) && r.scoped_hard.is_zero()));
        let (mut notes, mut remarks) = (self.capacity_notes(&out), Vec::new());
        let autoscalers = self.headroom(opts, &mut notes, &mut remarks);
        let incomplete = !notes.is_empty();
        notes.append(&mut remarks);
        let namespaces_excluded: Vec<String> = self.in_scope(opts).map(|(n, _)| n).filter(|n| opts.excluded.contains(*n)).cloned().collect();
        CapacityReport {
            nodes: nodes.total,
            nodes_counted: nodes.total - nodes.left_out.len(),
            nodes_left_out: nodes.left_out,
            namespaces: self.in_scope(opts).count() - namespaces_excluded.len(),
            scope: opts.scope(),
            namespaces_excluded,
            resources: out,
            autoscalers,
            notes,
            incomplete,
        }
    }

    /// The rows: what the nodes offer (not zero) and what any quota caps, narrowed to
    /// `--resource`.
    fn rows_to_show(&self, nodes: &super::NodeSums, opts: &Options) -> BTreeMap<String, Offer> {
        let mut rows: BTreeMap<String, Offer> = BTreeMap::new();
        for k in nodes.allocatable.keys() {
            if let Some((row, offer)) = row_of(k) {
                if nodes.allocatable.get(k).is_some_and(|q| !q.is_zero()) {
                    rows.insert(row, offer);
                }
            }
        }
        for k in self.namespaces.values().flat_map(|ns| &ns.quotas).flat_map(|q| q.hard.keys()) {
            if let Some((row, offer)) = row_of(k) {
                rows.insert(row, offer);
            }
        }
        if let Some(r) = &opts.resource {
            let want = rows_named(r).unwrap_or_default();
            rows.retain(|k, _| want.contains(k));
        }
        rows
    }

    /// One resource: what the namespaces in scope are promised (their caps), what they use,
    /// which have no cap, and (with `--by-namespace`) each one's share.
    fn resource_row(&self, row: String, offer: Offer, allocatable: Option<Quantity>, opts: &Options) -> ResourceRow {
        let mut promised = Quantity::zero();
        let mut capped = false;
        let mut used = Quantity::zero();
        let mut unbounded = Vec::new();
        let (mut scoped_hard, mut scoped_quotas) = (Quantity::zero(), 0);
        let mut shares = Vec::new();
        for (name, ns) in self.in_scope(opts) {
            let cap = cap_of(ns, &row);
            let ns_used = match cap {
                Some((_, q)) => q.used.get(&row).cloned().or_else(|| ns.pods.get(&row).cloned()),
                None => ns.pods.get(&row).cloned(),
            }
            .unwrap_or_default();
            used = used.add(&ns_used);
            if opts.excluded.contains(name) {
                continue;
            }
            let mut ns_scoped = Quantity::zero();
            for h in ns.quotas.iter().filter(|q| q.scoped.is_some()).filter_map(|q| q.hard.get(&row)) {
                ns_scoped = ns_scoped.add(h);
                scoped_quotas += 1;
            }
            scoped_hard = scoped_hard.add(&ns_scoped);
            match cap {
                Some((h, _)) => {
                    promised = promised.add(h);
                    capped = true;
                }
                None => unbounded.push(name.clone()),
            }
            if opts.by_namespace {
                shares.push(Share {
                    namespace: name.clone(),
                    cap: cap.map(|(h, _)| h.clone()),
                    quota: cap.map(|(_, q)| q.name.clone()),
                    percent: match (cap, &allocatable) {
                        (Some((h, _)), Some(a)) => ratio_percent(h, a),
                        _ => None,
                    },
                    used: ns_used,
                    scoped_hard: ns_scoped,
                });
            }
        }
        // Largest share first; unbounded namespaces (no cap) after, by used.
        shares.sort_by(|a, b| match (&a.cap, &b.cap) {
            (Some(x), Some(y)) => y.cmp(x).then(a.namespace.cmp(&b.namespace)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => b.used.cmp(&a.used).then(a.namespace.cmp(&b.namespace)),
        });
        let pct = |x: &Quantity| allocatable.as_ref().and_then(|a| ratio_percent(x, a));
        let promised = (capped || unbounded.is_empty()).then_some(promised);
        ResourceRow {
            promised_percent: promised.as_ref().and_then(pct),
            used_percent: pct(&used),
            resource: row,
            offered_by: offer,
            allocatable,
            promised,
            unbounded,
            used,
            scoped_hard,
            scoped_quotas,
            namespaces: shares,
        }
    }

    /// The view's notes: what was not read, and device classes whose allocatable is unknown.
    fn capacity_notes(&self, rows: &[ResourceRow]) -> Vec<String> {
        let mut notes = self.notes_for_views();
        if !self.seen.contains("Node") && !self.notes.iter().any(|n| n.contains("nodes")) {
            notes.push("no Node objects were read: nothing is allocatable".into());
        }
        for (class, driver) in &self.classes {
            if driver.is_none() && rows.iter().any(|r| r.offered_by == Offer::DeviceClass(class.clone())) {
                notes.push(format!("device class {class} selects devices by an expression this tool does not evaluate: its allocatable is unknown"));
            }
        }
        notes
    }

    /// Devices the ResourceSlices publish per device class (newest generation of each pool,
    /// slices of left-out nodes not counted); `None` for a class whose selectors are not a
    /// plain driver match.
    fn devices_per_class(&self, left_out: &[LeftOut]) -> BTreeMap<String, Option<Quantity>> {
        let left: BTreeSet<&str> = left_out.iter().map(|l| l.name.as_str()).collect();
        let mut per_driver: BTreeMap<&str, i64> = BTreeMap::new();
        for (key, s) in &self.slices {
            if s.node.as_deref().is_some_and(|n| left.contains(n)) {
                continue;
            }
            *per_driver.entry(self.slice_drivers.get(key).map_or("", String::as_str)).or_default() += s.devices;
        }
        self.classes
            .iter()
            .map(|(c, d)| {
                let n = d.as_deref().map(|d| per_driver.get(d).copied().unwrap_or(0));
                (c.clone(), n.map(|n| Quantity::from_int(n, crate::quantity::Format::DecimalSI)))
            })
            .collect()
    }
}
