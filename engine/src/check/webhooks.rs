//! The admission webhooks a document's object and its pods meet, as their configurations
//! declare (rules, namespace and object selectors): what a webhook changes or answers is in no
//! API, so an answer that passes through one rests on it, and the report says so, naming it.
//! The VerticalPodAutoscaler's webhook is not named (its changes are replayed), nor this tool's
//! own guard (it only warns).

use serde::Serialize;

use super::ClusterState;
use crate::objects::webhooks::Webhook;
use crate::objects::{Body, Object};

/// Configurations whose webhooks are replayed or never refuse: the VPA's admission
/// controller (replayed where a VPA acts) and kubectl-quota's guard (warnings only).
const NOT_NAMED: [&str; 2] = ["vpa-webhook-config", "kubectl-quota-guard"];

/// One webhook a document's object or pods meet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSeen {
    /// The webhook's name (`sidecar-injector.istio.io`).
    pub webhook: String,
    /// Its configuration's name.
    pub configuration: String,
    pub mutating: bool,
    /// What it sees: `the object`, `its pods`.
    pub sees: String,
    pub failure_policy: String,
    /// Its matchConditions (CEL, not evaluated here): it sees the request only when they hold.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub if_conditions: Vec<String>,
    /// The namespace's labels are not known: its namespaceSelector was not evaluated.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub namespace_unknown: bool,
    /// A mutating webhook whose changes are the API server's: the pods are as a dry run of
    /// them returned them (a live check).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

impl WebhookSeen {
    /// The sentence a report says it in.
    pub fn sentence(&self) -> String {
        let who = format!("{} webhook {} ({})", if self.mutating { "mutating" } else { "validating" }, self.webhook, self.configuration);
        let when = match (self.if_conditions.is_empty(), self.namespace_unknown) {
            (true, false) => String::new(),
            (false, false) => format!(" when its matchConditions {} hold (not evaluated here)", self.if_conditions.join(", ")),
            (true, true) => " if its namespaceSelector selects the namespace (its labels were not read)".into(),
            (false, true) => format!(
                " if its namespaceSelector selects the namespace (its labels were not read) and its matchConditions {} hold",
                self.if_conditions.join(", ")
            ),
        };
        if self.mutating && self.dry_run {
            format!("{who} sees {}{when}: {} are as the API server returned them from a dry run (dryRun=All), its changes included", self.sees, self.sees)
        } else if self.mutating {
            format!(
                "{who} sees {}{when}: what it changes (a sidecar's requests, say) is in no API, so this answer is for {} as written and rests on it",
                self.sees, self.sees
            )
        } else {
            format!("{who} sees {}{when}: it may refuse what this answer admits (failurePolicy {})", self.sees, self.failure_policy)
        }
    }
}

/// The webhooks `obj` (sent as `operation` to namespace `ns`) and, for a workload, the pods its
/// controller creates meet, mutating ones first, each configuration in name order.
pub fn seen_by(state: &ClusterState, obj: &Object, ns: &str, operation: &str) -> Vec<WebhookSeen> {
    let Some(configs) = &state.webhooks else { return vec![] };
    let ns_labels = state.namespaces.as_ref().and_then(|n| n.get(ns));
    let version = obj.type_info.api_version.rsplit('/').next().unwrap_or_default();
    let ti = &obj.type_info;
    let mut requests = vec![("the object", operation, ti.group.as_str(), version, ti.resource.as_str(), ti.namespaced, &obj.meta.labels)];
    if let Body::Workload(w) = &obj.body {
        requests.push(("its pods", "CREATE", "", "v1", "pods", true, &w.template_meta.labels));
    }
    let mut out = Vec::new();
    for mutating in [true, false] {
        for (key, config) in configs.iter().filter(|(_, c)| c.mutating == mutating) {
            let name = key.split_once('/').map_or(key.as_str(), |(_, n)| n);
            if NOT_NAMED.contains(&name) {
                continue;
            }
            for hook in &config.webhooks {
                for (sees, op, group, version, resource, namespaced, labels) in &requests {
                    let exact = hook.match_policy == "Exact";
                    if !hook.rules.iter().any(|r| r.covers(op, group, version, resource, *namespaced, exact)) {
                        continue;
                    }
                    if hook.object_selector.as_ref().is_some_and(|s| !s.matches(labels)) {
                        continue;
                    }
                    let Some(namespace_unknown) = namespace_match(hook, *namespaced, ns_labels) else { continue };
                    out.push(WebhookSeen {
                        webhook: hook.name.clone(),
                        configuration: name.to_string(),
                        mutating,
                        sees: sees.to_string(),
                        failure_policy: hook.failure_policy.clone(),
                        if_conditions: hook.match_conditions.clone(),
                        namespace_unknown,
                        dry_run: false,
                    });
                }
            }
        }
    }
    out
}

/// Whether the webhook's namespaceSelector lets a request in the namespace through: `None`
/// when it does not, else whether that rests on labels not known.
fn namespace_match(hook: &Webhook, namespaced: bool, labels: Option<&std::collections::BTreeMap<String, String>>) -> Option<bool> {
    let Some(sel) = hook.namespace_selector.as_ref().filter(|s| namespaced && (!s.match_labels.is_empty() || !s.match_expressions.is_empty())) else {
        return Some(false);
    };
    match labels {
        Some(l) if sel.matches(l) => Some(false),
        Some(_) => None,
        None => Some(true),
    }
}
