//! `describe`'s view of Kueue's queues: each LocalQueue of a namespace with its ClusterQueue's
//! quota per flavor and resource (nominal, and the borrowing and lending limits where set)
//! beside what its Workloads reserve and what the admitted ones use, as Kueue's status says,
//! and the share of nominal reserved. Amounts are printed as Kueue prints them.
//!
//! ```
//! use kubectl_quota_engine::kueue::Kueue;
//! use kubectl_quota_engine::report::queue_view::views;
//! use serde_json::json;
//!
//! let mut k = Kueue::default();
//! k.add(&json!({"kind": "ResourceFlavor", "metadata": {"name": "default"}}), "ns");
//! k.add(&json!({"kind": "ClusterQueue", "metadata": {"name": "cq"},
//!     "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"],
//!         "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "10"}]}]}]},
//!     "status": {"flavorsReservation": [{"name": "default", "resources": [{"name": "cpu", "total": "9"}]}]}}), "ns");
//! k.add(&json!({"kind": "LocalQueue", "metadata": {"name": "q"}, "spec": {"clusterQueue": "cq"}}), "ns");
//! let v = &views(&k, Some("ns"))[0];
//! assert_eq!((v.local_queue.as_str(), v.cluster_queue.as_str()), ("q", "cq"));
//! assert_eq!((v.rows[0].reserved.as_str(), v.rows[0].nominal.as_str(), v.rows[0].percent), ("9", "10", Some(90)));
//! ```

use serde::Serialize;

use crate::kueue::{printed, Kueue};

/// One LocalQueue, ready to print.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueView {
    pub namespace: String,
    pub local_queue: String,
    pub cluster_queue: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    /// Why the queue admits nothing now, in Kueue's words (an inactive queue, a missing one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The ClusterQueue's quota, flavor by flavor in its order.
    pub rows: Vec<QueueRow>,
}

/// One resource of one flavor of a ClusterQueue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueRow {
    pub flavor: String,
    pub resource: String,
    /// Quota its Workloads reserve (admitted or not yet), `status.flavorsReservation`.
    pub reserved: String,
    /// Quota of its admitted Workloads, `status.flavorsUsage`.
    pub admitted: String,
    pub nominal: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub borrowing_limit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lending_limit: Option<String>,
    /// Whole percent of nominal reserved, rounded down (more than 100 where it borrows);
    /// `u64::MAX` for a reservation over a nominal of zero, `None` for neither.
    pub percent: Option<u64>,
}

/// The LocalQueues of `namespace` (`None`: of every namespace), by namespace and name.
pub fn views(k: &Kueue, namespace: Option<&str>) -> Vec<QueueView> {
    k.local_queues
        .iter()
        .filter(|((ns, _), _)| namespace.is_none_or(|n| n == ns))
        .map(|((ns, name), (cq_name, lq_stopped))| {
            let mut notes = Vec::new();
            if *lq_stopped {
                notes.push(format!("LocalQueue {name} is inactive"));
            }
            let cq = k.cluster_queues.get(cq_name);
            let mut rows = Vec::new();
            match cq {
                None => notes.push(format!("ClusterQueue {cq_name} doesn't exist")),
                Some(cq) => {
                    let missing: Vec<&str> =
                        cq.groups.iter().flat_map(|g| &g.flavors).map(|(f, _)| f.as_str()).filter(|f| !k.flavors.contains_key(*f)).collect();
                    if !missing.is_empty() {
                        notes.push(format!("ClusterQueue {cq_name} references missing ResourceFlavor(s): {}", missing.join(", ")));
                    }
                    if cq.stopped || !missing.is_empty() {
                        notes.push(format!("ClusterQueue {cq_name} is inactive"));
                    }
                    for g in &cq.groups {
                        for (flavor, nominals) in &g.flavors {
                            for resource in &g.covered {
                                let key = (flavor.clone(), resource.clone());
                                let nominal = nominals.get(resource).copied().unwrap_or(0);
                                let reserved = cq.reserved.get(&key).copied().unwrap_or(0);
                                let (borrowing, lending) = cq.limits.get(&key).copied().unwrap_or((None, None));
                                rows.push(QueueRow {
                                    flavor: flavor.clone(),
                                    resource: resource.clone(),
                                    reserved: printed(resource, reserved),
                                    admitted: printed(resource, cq.admitted.get(&key).copied().unwrap_or(0)),
                                    nominal: printed(resource, nominal),
                                    borrowing_limit: borrowing.map(|b| printed(resource, b)),
                                    lending_limit: lending.map(|l| printed(resource, l)),
                                    percent: share(reserved, nominal),
                                });
                            }
                        }
                    }
                }
            }
            QueueView {
                namespace: ns.clone(),
                local_queue: name.clone(),
                cluster_queue: cq_name.clone(),
                cohort: cq.and_then(|c| c.cohort.clone()),
                notes,
                rows,
            }
        })
        .collect()
}

/// Whole percent of `nominal` that `reserved` is, rounded down, exactly.
fn share(reserved: i64, nominal: i64) -> Option<u64> {
    match (reserved, nominal) {
        (0, 0) => None,
        (_, 0) => Some(u64::MAX),
        (r, n) => Some(u64::try_from(i128::from(r.max(0)) * 100 / i128::from(n.max(1))).unwrap_or(u64::MAX)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A ClusterQueue's flavors in order, each covered resource with what is reserved and
    /// admitted and its limits; a queue that admits nothing says why in Kueue's words.
    #[test]
    fn each_local_queue_shows_its_cluster_queues_quota_and_why_it_admits_nothing() {
        let mut k = Kueue::default();
        k.add(&json!({"kind": "ResourceFlavor", "metadata": {"name": "spot"}}), "ns");
        k.add(&json!({"kind": "ResourceFlavor", "metadata": {"name": "on-demand"}}), "ns");
        k.add(
            &json!({"kind": "ClusterQueue", "metadata": {"name": "team"}, "spec": {"cohortName": "org", "namespaceSelector": {}, "resourceGroups": [{
                "coveredResources": ["cpu", "memory"],
                "flavors": [
                    {"name": "spot", "resources": [{"name": "cpu", "nominalQuota": "4", "borrowingLimit": "2"}, {"name": "memory", "nominalQuota": "8Gi", "lendingLimit": "4Gi"}]},
                    {"name": "on-demand", "resources": [{"name": "cpu", "nominalQuota": "0"}, {"name": "memory", "nominalQuota": "0"}]},
                ]}]},
                "status": {
                    "flavorsReservation": [{"name": "spot", "resources": [{"name": "cpu", "total": "4500m"}, {"name": "memory", "total": "2Gi"}]}],
                    "flavorsUsage": [{"name": "spot", "resources": [{"name": "cpu", "total": "3"}]}],
                }}),
            "ns",
        );
        k.add(&json!({"kind": "ClusterQueue", "metadata": {"name": "stopped"}, "spec": {"stopPolicy": "Hold", "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "gone", "resources": [{"name": "cpu", "nominalQuota": "1"}]}]}]}}), "ns");
        k.add(&json!({"kind": "LocalQueue", "metadata": {"name": "a", "namespace": "ns"}, "spec": {"clusterQueue": "team"}}), "ns");
        k.add(&json!({"kind": "LocalQueue", "metadata": {"name": "b", "namespace": "ns"}, "spec": {"clusterQueue": "stopped", "stopPolicy": "Hold"}}), "ns");
        k.add(&json!({"kind": "LocalQueue", "metadata": {"name": "c", "namespace": "other"}, "spec": {"clusterQueue": "missing"}}), "ns");
        let v = views(&k, Some("ns"));
        assert_eq!(v.len(), 2);
        let rows: Vec<_> = v[0]
            .rows
            .iter()
            .map(|r| {
                (
                    r.flavor.as_str(),
                    r.resource.as_str(),
                    r.reserved.as_str(),
                    r.admitted.as_str(),
                    r.nominal.as_str(),
                    r.borrowing_limit.as_deref(),
                    r.lending_limit.as_deref(),
                    r.percent,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("spot", "cpu", "4500m", "3", "4", Some("2"), None, Some(112)),
                ("spot", "memory", "2Gi", "0", "8Gi", None, Some("4Gi"), Some(25)),
                ("on-demand", "cpu", "0", "0", "0", None, None, None),
                ("on-demand", "memory", "0", "0", "0", None, None, None),
            ]
        );
        assert_eq!((v[0].cohort.as_deref(), v[0].notes.len()), (Some("org"), 0));
        assert_eq!(
            v[1].notes,
            ["LocalQueue b is inactive", "ClusterQueue stopped references missing ResourceFlavor(s): gone", "ClusterQueue stopped is inactive"]
        );
        let all = views(&k, None);
        assert_eq!(all[2].notes, ["ClusterQueue missing doesn't exist"]);
        assert!(all[2].rows.is_empty());
        assert_eq!(share(1, 0), Some(u64::MAX));
    }
}
