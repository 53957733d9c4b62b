//! Admission webhook configurations (`admissionregistration.k8s.io`): which requests each
//! webhook is sent, as declared (rules, namespace and object selectors, match conditions). What
//! a webhook answers or changes is in no API; which requests it sees is, and is replayed.

use super::LabelSelector;

/// One rule of a webhook: the operations and resources it is sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookRule {
    pub operations: Vec<String>,
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    /// `Namespaced`, `Cluster` or `*` (the default).
    pub scope: String,
}

impl WebhookRule {
    /// Whether the rule covers `operation` on `group`'s `resource` (the main resource, not a
    /// subresource) at `version`. Under matchPolicy `Equivalent` (the v1 default) the server
    /// also sends a request for another version of the same resource, so the version is
    /// compared only under `Exact`.
    pub fn covers(&self, operation: &str, group: &str, version: &str, resource: &str, namespaced: bool, exact: bool) -> bool {
        let any = |list: &[String], v: &str| list.iter().any(|x| x == "*" || x == v);
        let resource_ok = self.resources.iter().any(|r| r == "*" || r == "*/*" || r == resource);
        let scope_ok = match self.scope.as_str() {
            "Namespaced" => namespaced,
            "Cluster" => !namespaced,
            _ => true,
        };
        any(&self.operations, operation) && any(&self.api_groups, group) && (!exact || any(&self.api_versions, version)) && resource_ok && scope_ok
    }
}

/// One webhook of a configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Webhook {
    pub name: String,
    pub rules: Vec<WebhookRule>,
    /// `None`: every namespace.
    pub namespace_selector: Option<LabelSelector>,
    /// `None`: every object.
    pub object_selector: Option<LabelSelector>,
    /// `matchConditions` by name: CEL expressions this tool does not evaluate.
    pub match_conditions: Vec<String>,
    /// `Fail` (the v1 default) or `Ignore`.
    pub failure_policy: String,
    /// `Exact` or `Equivalent` (the v1 default).
    pub match_policy: String,
    /// `IfNeeded`: called again when a later plugin changed the object (mutating only).
    pub reinvocation_policy: String,
}

/// A MutatingWebhookConfiguration or ValidatingWebhookConfiguration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookConfiguration {
    pub mutating: bool,
    pub webhooks: Vec<Webhook>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_cover_the_main_resource_in_scope() {
        let rule = |ops: &[&str], groups: &[&str], versions: &[&str], res: &[&str], scope: &str| WebhookRule {
            operations: ops.iter().map(|s| s.to_string()).collect(),
            api_groups: groups.iter().map(|s| s.to_string()).collect(),
            api_versions: versions.iter().map(|s| s.to_string()).collect(),
            resources: res.iter().map(|s| s.to_string()).collect(),
            scope: scope.into(),
        };
        let cases: [(&str, WebhookRule, bool, bool); 7] = [
            ("pods on create", rule(&["CREATE"], &[""], &["v1"], &["pods"], ""), false, true),
            ("any operation, any resource", rule(&["*"], &["*"], &["*"], &["*"], "*"), false, true),
            ("only updates", rule(&["UPDATE"], &[""], &["v1"], &["pods"], ""), false, false),
            ("a subresource only", rule(&["CREATE"], &[""], &["v1"], &["pods/binding"], ""), false, false),
            ("cluster scope only", rule(&["CREATE"], &[""], &["v1"], &["pods"], "Cluster"), false, false),
            ("another version, Equivalent", rule(&["CREATE"], &[""], &["v2"], &["pods"], ""), false, true),
            ("another version, Exact", rule(&["CREATE"], &[""], &["v2"], &["pods"], ""), true, false),
        ];
        for (what, r, exact, want) in cases {
            assert_eq!(r.covers("CREATE", "", "v1", "pods", true, exact), want, "{what}");
        }
    }
}
