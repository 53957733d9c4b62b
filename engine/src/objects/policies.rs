//! Admission policies (`admissionregistration.k8s.io/v1`): ValidatingAdmissionPolicy and
//! MutatingAdmissionPolicy with their bindings, as declared. A policy says what to check or
//! change (CEL expressions); a binding says where it applies (its own match resources, its
//! params) and, for a validating policy, what a failed validation does (Deny, Warn, Audit).

use super::webhooks::WebhookRule;
use super::LabelSelector;

/// A resource rule of a policy's or binding's match resources, with the object names it is
/// limited to (`resourceNames`; empty: every name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamedRule {
    pub rule: WebhookRule,
    pub resource_names: Vec<String>,
}

/// `matchConstraints` of a policy, `matchResources` of a binding.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MatchResources {
    /// `None`: every namespace.
    pub namespace_selector: Option<LabelSelector>,
    /// `None`: every object.
    pub object_selector: Option<LabelSelector>,
    pub resource_rules: Vec<NamedRule>,
    pub exclude_resource_rules: Vec<NamedRule>,
    /// `Equivalent` (the default) or `Exact`.
    pub match_policy: String,
}

/// A named CEL expression: a variable or a match condition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    pub expression: String,
}

/// One validation of a ValidatingAdmissionPolicy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validation {
    pub expression: String,
    pub message: String,
    pub message_expression: String,
    /// `Unauthorized`, `Forbidden`, `Invalid` or `RequestEntityTooLarge`; empty: Invalid.
    pub reason: String,
}

/// One mutation of a MutatingAdmissionPolicy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    /// An expression giving an `Object{...}` merged into the object as server-side apply merges.
    ApplyConfiguration(String),
    /// An expression giving a list of `JSONPatch{...}` operations (RFC 6902).
    JsonPatch(String),
}

/// A ValidatingAdmissionPolicy or MutatingAdmissionPolicy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    pub mutating: bool,
    /// `paramKind` as (apiVersion, kind); `None`: the policy takes no params.
    pub param_kind: Option<(String, String)>,
    pub match_constraints: MatchResources,
    pub match_conditions: Vec<Named>,
    pub variables: Vec<Named>,
    /// `Fail` (the default) or `Ignore`.
    pub failure_policy: String,
    pub validations: Vec<Validation>,
    pub mutations: Vec<Mutation>,
    /// `Never` or `IfNeeded` (mutating policies).
    pub reinvocation_policy: String,
}

/// How a binding names its params.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParamRef {
    pub name: String,
    pub namespace: String,
    pub selector: Option<LabelSelector>,
    /// `Deny` or `Allow`: what a missing param does.
    pub parameter_not_found_action: String,
}

impl ParamRef {
    /// The namespace its params are read in, for a request in `request_namespace`: its own,
    /// else the request's, for a namespaced params kind; `None` for a cluster-scoped one.
    pub fn namespace_for<'a>(&'a self, namespaced: bool, request_namespace: &'a str) -> Option<&'a str> {
        match (namespaced, self.namespace.is_empty()) {
            (false, _) => None,
            (true, true) => Some(request_namespace),
            (true, false) => Some(&self.namespace),
        }
    }
}

/// A ValidatingAdmissionPolicyBinding or MutatingAdmissionPolicyBinding.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Binding {
    pub mutating: bool,
    pub policy_name: String,
    pub param_ref: Option<ParamRef>,
    /// `None`: the policy's own constraints alone.
    pub match_resources: Option<MatchResources>,
    /// `Deny`, `Warn`, `Audit` (validating bindings).
    pub validation_actions: Vec<String>,
}
