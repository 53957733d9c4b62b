//! Hints that save a second trip: after the verdict, what the user can do about it.
//!
//! - "must specify": which field to add to which container, or the LimitRange that would do it;
//! - a scoped quota that lists resources no scoped quota can ever charge;
//! - a pod that only a priority-class-scoped quota would track, and the class it needs;
//! - a limited scope no quota covers, with the `create` command that would cover it;
//! - headroom: what is left of the tightest limit after the object.

use crate::admission::scopes::never_charged;
use crate::admission::{QuotaReport, QuotaVerdict, RefusalReason};
use crate::check::{ClusterState, DocumentReport};
use crate::quantity::Quantity;

/// Where a "must specify" resource goes in a container, and the LimitRange key that fills it.
fn field_for(resource: &str) -> (String, &'static str) {
    match resource.split_once('.') {
        Some(("limits", r)) => (format!("resources.limits.{r}"), "default"),
        Some(("requests", r)) => (format!("resources.requests.{r}"), "defaultRequest"),
        _ => (format!("resources.requests.{resource}"), "defaultRequest"),
    }
}

fn must_specify_hints(q: &QuotaReport, has_limit_range: bool, out: &mut Vec<String>) {
    for (res, containers) in &q.missing {
        let (field, lr_key) = field_for(res);
        let base = res.rsplit('.').next().unwrap_or(res);
        let lr = if has_limit_range {
            format!("or add {base} to a LimitRange {lr_key} in the namespace (the LimitRange there does not set it)")
        } else {
            format!("or give the namespace a LimitRange with a Container {lr_key} for {base}")
        };
        out.push(format!("add {field} to container(s) {} ({lr}): quota {} requires it", containers.join(", "), q.name));
    }
}

/// How the headroom hint begins (`headroom after this: quota q has requests.cpu 600m left of
/// 1 (60%)`): a renderer that folds it into a verdict line strips it.
pub const HEADROOM: &str = "headroom after this: ";

fn headroom(quotas: &[QuotaReport]) -> Option<String> {
    let mut tightest: Option<(u64, &QuotaReport, &crate::admission::ResourceRow)> = None;
    for q in quotas.iter().filter(|q| q.verdict == QuotaVerdict::Fits) {
        for row in q.resources.iter().filter(|r| r.requested.sign() > 0) {
            let pct = crate::report::quota_view::percent(&row.hard.sub(&row.after), &row.hard).unwrap_or(0);
            if tightest.as_ref().is_none_or(|(p, _, _)| pct < *p) {
                tightest = Some((pct, q, row));
            }
        }
    }
    tightest.map(|(pct, q, row)| {
        let left = row.hard.sub(&row.after).max(Quantity::zero());
        format!("{HEADROOM}quota {} has {} {left} left of {} ({pct}%)", q.name, row.resource, row.hard)
    })
}

fn priority_hint(doc: &DocumentReport, quotas: &[QuotaReport]) -> Option<String> {
    if quotas.iter().any(|q| q.applies) {
        return None;
    }
    let excluded: Vec<&QuotaReport> =
        quotas.iter().filter(|q| !q.applies && q.scopes.iter().any(|s| s.selector.starts_with("PriorityClass") && !s.matched)).collect();
    let q = excluded.first()?;
    let sel = q.scopes.iter().find(|s| s.selector.starts_with("PriorityClass") && !s.matched)?;
    Some(format!(
        "no quota tracks {}/{}: quota {} applies only to pods with {} ({})",
        doc.kind.to_lowercase(),
        doc.name,
        q.name,
        sel.selector,
        sel.reason.rsplit_once(" excluded ").map(|(_, r)| r).unwrap_or(&sel.reason)
    ))
}

/// What a document's hints need from the cluster's state, read as soon as the document is
/// decided (the next document changes the state): whether its namespace has a LimitRange, and
/// the scoped quotas its explanation mentions that list resources they can never charge.
/// The rest of the hints come from the document alone ([`for_document_with`]), so they can be
/// worked out later, on another thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StateFacts {
    has_limit_range: bool,
    /// Quota name and the resources it never charges, in the state's quota order.
    never_charged: Vec<(String, Vec<String>)>,
}

/// [`StateFacts`] for `doc` from the state right after it was decided.
pub fn state_facts(doc: &DocumentReport, state: &ClusterState) -> StateFacts {
    let ns = doc.namespace.as_deref().unwrap_or_default();
    let has_limit_range = state.limit_ranges.get(ns).is_some_and(|l| !l.is_empty());
    let pod_quotas = doc.pods.as_ref().map(|p| p.quotas.as_slice()).unwrap_or(&[]);
    // The quotas the explanation mentions, looked up by name: thousands of quotas must not
    // cost thousands times thousands comparisons per document. Most quotas never have
    // anything to say here, so the names are gathered only once one does.
    let mut mentioned: Option<std::collections::BTreeSet<&str>> = None;
    let never_charged = state
        .quotas
        .get(ns)
        .into_iter()
        .flatten()
        .map(|q| (q, never_charged(&q.quota)))
        .filter(|(_, never)| !never.is_empty())
        .filter(|(q, _)| {
            let mentioned = mentioned.get_or_insert_with(|| doc.quotas.iter().chain(pod_quotas).filter(|r| !r.unrelated).map(|r| r.name.as_str()).collect());
            mentioned.contains(q.name.as_str())
        })
        .map(|(q, never)| (q.name.clone(), never))
        .collect();
    StateFacts { has_limit_range, never_charged }
}

/// Hints for one document of a report, from the state right after it was decided.
pub fn for_document(doc: &DocumentReport, state: &ClusterState) -> Vec<String> {
    for_document_with(doc, &state_facts(doc, state))
}

/// Hints for one document, with what they need from the state read beforehand.
pub fn for_document_with(doc: &DocumentReport, facts: &StateFacts) -> Vec<String> {
    let mut out = Vec::new();
    let ns = doc.namespace.as_deref().unwrap_or_default();
    let pod_quotas = doc.pods.as_ref().map(|p| p.quotas.as_slice()).unwrap_or(&[]);
    for q in doc.quotas.iter().chain(pod_quotas) {
        must_specify_hints(q, facts.has_limit_range, &mut out);
    }
    if let Some(r) = &doc.refusal {
        if r.reason == RefusalReason::InsufficientQuotaToMatchScopes {
            out.push(format!(
                "the API server only admits pods with these scopes where a quota covers them: create one, e.g. `kubectl quota create {}-pods -n {ns} --hard=pods=10 --scope-selector '<scope> In <values>'`, or change the pod's priorityClassName",
                doc.name
            ));
        }
    }
    for (quota, never) in &facts.never_charged {
        out.push(format!(
            "quota {quota} is scoped, so it never charges {}: only pods (and claims, for VolumeAttributesClass) are matched by scopes",
            never.join(", ")
        ));
    }
    if doc.kind == "Pod" {
        out.extend(priority_hint(doc, &doc.quotas));
    } else if let Some(p) = &doc.pods {
        out.extend(priority_hint(doc, &p.quotas));
    }
    if doc.fully_admitted() {
        let quotas = if doc.pods.is_some() { pod_quotas } else { &doc.quotas[..] };
        out.extend(headroom(quotas));
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse_str;
    use crate::objects::{decode, Body, ResourceQuota};

    fn quota(spec: &str) -> ResourceQuota {
        let text = format!("apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: q}}\nspec: {spec}\n");
        match decode(&parse_str("q.yaml", &text).unwrap()[0]).unwrap().body {
            Body::ResourceQuota(q) => *q,
            _ => panic!(),
        }
    }

    #[test]
    fn scoped_quotas_that_list_what_they_cannot_charge() {
        let cases = [
            ("{hard: {pods: '1', count/secrets: '2'}, scopes: [NotTerminating]}", vec!["count/secrets"]),
            ("{hard: {pods: '1', requests.cpu: '1', count/pods: '1'}, scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: Exists}]}}", vec![]),
            ("{hard: {services: '1'}}", vec![]),
            ("{hard: {requests.storage: 1Gi, pods: '1'}, scopeSelector: {matchExpressions: [{scopeName: VolumeAttributesClass, operator: In, values: [gold]}]}}", vec!["pods"]),
        ];
        for (spec, want) in cases {
            assert_eq!(never_charged(&quota(spec)), want, "{spec}");
        }
    }

    #[test]
    fn hints_from_facts_read_at_decision_time_are_the_hints_from_the_state_then() {
        use crate::check::{check_each, CheckOptions, ClusterState};
        // A LimitRange, a scoped quota listing what it cannot charge, a must-specify quota, and
        // documents that change the state as they go (a LimitRange added part way).
        let state_text = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: scoped, namespace: ns}\nspec: {hard: {pods: '9', count/secrets: '2'}, scopes: [NotTerminating]}\nstatus: {hard: {pods: '9', count/secrets: '2'}, used: {pods: '0', count/secrets: '0'}}\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: cpu, namespace: ns}\nspec: {hard: {requests.cpu: '1'}}\nstatus: {hard: {requests.cpu: '1'}, used: {requests.cpu: '0'}}\n";
        let docs = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: app, image: x}]}\n---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec: {limits: [{type: Container, max: {memory: 1Gi}}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: [{name: app, image: x}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: c}\nspec: {containers: [{name: app, image: x, resources: {requests: {cpu: 100m}}}]}\n";
        let objects = |text: &str| parse_str("t.yaml", text).unwrap().iter().map(|d| decode(d).unwrap()).collect::<Vec<_>>();
        let opts = CheckOptions { namespace: "ns".into(), ..CheckOptions::default() };
        let (mut from_state, mut from_facts) = (vec![], vec![]);
        let mut state = ClusterState::from_objects(objects(state_text), "ns");
        check_each(&mut state, objects(docs), &opts, |d, st| from_state.push(for_document(&d, st)));
        let mut state = ClusterState::from_objects(objects(state_text), "ns");
        crate::report::decide_each(&mut state, objects(docs), &opts, |mut d| from_facts.push(d.finish().hints.clone()));
        assert_eq!(from_state, from_facts);
        assert!(from_state.iter().flatten().any(|h| h.starts_with("quota scoped is scoped")), "{from_state:?}");
        assert!(from_state.iter().flatten().any(|h| h.contains("give the namespace a LimitRange")), "{from_state:?}");
        assert!(from_state.iter().flatten().any(|h| h.contains("the LimitRange there does not set it")), "{from_state:?}");
    }

    #[test]
    fn must_specify_fields() {
        assert_eq!(field_for("limits.cpu"), ("resources.limits.cpu".to_string(), "default"));
        assert_eq!(field_for("requests.memory"), ("resources.requests.memory".to_string(), "defaultRequest"));
        assert_eq!(field_for("cpu"), ("resources.requests.cpu".to_string(), "defaultRequest"));
    }
}
