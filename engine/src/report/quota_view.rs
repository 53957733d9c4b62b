//! The data behind `describe`: one view per quota, Used/Hard per resource with an exact
//! percentage, scopes and scope selectors in words (kubectl prints no selectors), and whether
//! the quota controller has synced it (the API server does not enforce it until then).
//! Rendering it is the plugin's job.
//!
//! ```
//! use kubectl_quota_engine::report::quota_view::percent;
//! use kubectl_quota_engine::quantity::Quantity;
//!
//! let q = |s: &str| Quantity::parse(s).unwrap();
//! assert_eq!(percent(&q("2500m"), &q("4")), Some(62));
//! assert_eq!(percent(&q("6Gi"), &q("8Gi")), Some(75));
//! assert_eq!(percent(&q("0"), &q("0")), None);
//! ```

use serde::Serialize;

use crate::admission::scopes::describe as describe_selector;
use crate::objects::ResourceQuota;
use crate::quantity::Quantity;

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

/// Exact whole percent of `hard` that `used` is (rounded down); see [`Quantity::percent_of`].
/// A zero limit with use is reported as 100% and more (`u64::MAX` stands for "over a zero
/// limit").
pub fn percent(used: &Quantity, hard: &Quantity) -> Option<u64> {
    used.percent_of(hard)
}

/// Builds the view of one quota.
pub fn view(namespace: &str, name: &str, q: &ResourceQuota) -> QuotaView {
    let scopes = q.selectors().iter().map(|s| describe_selector(s).into_owned()).collect();
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
    QuotaView {
        namespace: namespace.into(),
        name: name.into(),
        scopes,
        synced: q.has_status,
        rows,
        pending,
        never_charged: crate::admission::scopes::never_charged(q),
    }
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
    }
}
