//! What a decided document leaves behind: the object stored where the next documents see it,
//! a new quota's status, and the summary's tallies.

use super::{DocumentReport, Key, Outcome};
use crate::autoscaling::{Ceiling, VpaCeiling};
use crate::objects::{Body, Object, ResourceQuota};

impl super::Checker<'_> {
    /// What later documents see of an admitted one: an update replaces the stored object (a
    /// workload keeps the pods the replay admitted); a create is stored, and the kinds
    /// admission consults join the state's lists.
    pub(super) fn remember(&mut self, mut obj: Object, ns: String, key: Key, was_existing: bool, report: &mut DocumentReport) {
        if was_existing {
            if let Some(prev) = self.state.existing.get(&key) {
                let mut stored = obj;
                stored.meta.resource_version = prev.meta.resource_version.clone();
                stored.meta.namespace = Some(ns);
                if let Body::Workload(w) = &mut stored.body {
                    w.current = report.replicas_admitted.or(w.current);
                }
                self.state.existing.insert(key, stored);
            }
            return;
        }
        if obj.type_info.kind == "Namespace" && obj.type_info.group.is_empty() {
            self.created_namespaces.insert(obj.meta.name.clone());
            // The serviceaccounts controller gives a new namespace its `default` at once, and
            // the plugin waits for that one (it retries the lookup for about a second).
            self.state.service_accounts.entry(obj.meta.name.clone()).or_default().insert(crate::admission::service_account::DEFAULT.into());
        }
        if obj.type_info.kind == "ServiceAccount" && obj.type_info.group.is_empty() {
            match self.state.service_accounts.get_mut(&ns) {
                Some(known) => {
                    known.insert(obj.meta.name.clone());
                }
                None => {
                    self.state.service_accounts_created.insert((ns.clone(), obj.meta.name.clone()));
                }
            }
        }
        if let Body::ResourceQuota(q) = &mut obj.body {
            report.notes.push(self.new_quota_status(q, &ns));
        }
        let mut stored = obj;
        stored.meta.resource_version = Some("1".into());
        stored.meta.namespace = Some(ns.clone());
        // The server ignores a created namespace's status (it starts Active); applying one being
        // terminated leaves it so.
        if let Body::Namespace { terminating } = &mut stored.body {
            *terminating = self.state.terminating.contains(&stored.meta.name);
        }
        // Only the kinds admission consults go into the state's lists (no copy of the rest).
        if matches!(
            stored.body,
            Body::ResourceQuota(_) | Body::LimitRange(_) | Body::PriorityClass { .. } | Body::StorageClass { .. } | Body::RuntimeClass { .. }
        ) || (stored.type_info.kind == "Namespace" && self.state.namespaces.is_some())
        {
            self.state.add(stored.clone(), &ns);
        }
        if self.named_again(&key, &stored.body) {
            self.state.existing.insert(key, stored);
        } else {
            self.state.seen.insert(key);
        }
    }

    /// The status a new quota has when later documents are checked, and the note that says so.
    pub(super) fn new_quota_status(&self, q: &mut ResourceQuota, ns: &str) -> String {
        if self.created_namespaces.contains(ns) {
            // The quota controller syncs a new quota within moments of its creation, which
            // kubectl's next requests seldom beat: from then on it is enforced, with what the
            // new namespace holds counted.
            let quotas_here = self.state.quotas.get(ns).map_or(0, Vec::len) + 1;
            q.status_hard = q.spec_hard.clone();
            q.status_used = q
                .spec_hard
                .keys()
                .map(|k| {
                    let n = if matches!(k.as_str(), "resourcequotas" | "count/resourcequotas") { quotas_here } else { 0 };
                    (k.clone(), crate::quantity::Quantity::from_int(n as i64, crate::quantity::Format::DecimalSI))
                })
                .collect();
            q.has_status = true;
            format!(
                "the quota is created in namespace {ns}, which these manifests create too: the quota controller syncs it within moments, and from then the API server enforces it; the documents after it are checked against it. One sent before the sync passes unchecked (and is counted by it), so which object is refused can depend on that timing"
            )
        } else {
            // A new quota has no status until the quota controller syncs it.
            q.status_hard.clear();
            q.status_used.clear();
            q.has_status = false;
            "a new quota is enforced only once the quota controller has synced it (status.hard set), usually within seconds".into()
        }
    }

    /// The run's counts after a document.
    pub(super) fn tally(&mut self, report: &mut DocumentReport) {
        report.outcome = report.outcome();
        self.summary.documents += 1;
        match report.outcome {
            Outcome::Admitted => {
                let capped = report.autoscaling.as_ref().is_some_and(Ceiling::capped) || report.vpa.as_ref().is_some_and(VpaCeiling::capped);
                self.summary.capped += usize::from(capped);
            }
            Outcome::Undecided => {
                self.summary.undecided += 1;
                self.summary.lacking.extend(report.undecided.iter().filter_map(|u| u.lacking));
            }
            _ => self.summary.refused += 1,
        }
        if report.refusal.as_ref().is_some_and(|r| !r.alternatives.is_empty()) || !report.pod_message_alternatives.is_empty() {
            self.order_matters = true;
        }
    }
}
