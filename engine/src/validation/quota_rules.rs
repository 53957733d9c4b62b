//! The quota rules: what the server checks on a ResourceQuota (`ValidateResourceQuota` and
//! `ValidateObjectMeta`), in its order, with its reasons.

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::core::v1::{ResourceQuota, ResourceQuotaSpec, ScopeSelector};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::field_error::{dedup, FieldError, FieldErrorKind};
use super::go_format::{go_quantity, go_quote, ValueStyle, SCOPES_TYPE};
use crate::quantity::Quantity;
use crate::resource_names::{
    dns1123_label_errors, is_integer_resource_name, is_standard_quota_resource_name, is_standard_resource_name, label_value_errors, object_name_errors,
    qualified_name_errors, scope_valid_for_resource, QuotaScope, ScopeOperator,
};

/// The server's reason texts, for callers that want to recognise an error.
pub mod reasons {
    /// A key without `/` that is not a known resource at all.
    pub const NOT_STANDARD_OR_QUALIFIED: &str = "must be a standard resource type or fully qualified";
    /// A key without `/` that quota does not track (`storage`, `foo`, `Pods`...).
    pub const NOT_QUOTA_RESOURCE: &str = "must be a standard resource for quota";
    /// A negative quantity.
    pub const NEGATIVE: &str = "must be greater than or equal to 0";
    /// A fractional quantity for a counted resource.
    pub const NOT_INTEGER: &str = "must be an integer";
    /// A scope name the server does not know.
    pub const UNSUPPORTED_SCOPE: &str = "unsupported scope";
    /// A standard hard resource the scope cannot track.
    pub const SCOPE_NOT_FOR_RESOURCE: &str = "unsupported scope applied to resource";
    /// BestEffort + NotBestEffort or Terminating + NotTerminating.
    pub const CONFLICTING_SCOPES: &str = "conflicting scopes";
    /// An exists-only scope used with another operator (current servers' wording).
    pub const EXISTS_ONLY_OPERATOR: &str = "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity";
    /// The same rule as worded by servers before CrossNamespacePodAffinity (e.g. v1.20).
    pub const EXISTS_ONLY_OPERATOR_V1_20: &str = "must be 'Exist' only operator when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort and ResourceQuotaScopeNotBestEffort";
    /// In / NotIn without values.
    pub const VALUES_REQUIRED: &str = "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector";
    /// Exists / DoesNotExist with values.
    pub const VALUES_FORBIDDEN: &str = "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector";
    /// An operator other than In / NotIn / Exists / DoesNotExist.
    pub const INVALID_OPERATOR: &str = "not a valid selector operator";
    /// Neither `metadata.name` nor `metadata.generateName`.
    pub const NAME_REQUIRED: &str = "name or generateName is required";
}

/// Total size limit of `metadata.annotations` (keys + values), in bytes.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// Validates a ResourceQuota as the API server does on create: `metadata` (name or
/// generateName, namespace if set, labels, annotations, finalizers), `spec.hard` (key
/// names, negative and non-integer values), `spec.scopes`, `spec.scopeSelector`, and, when
/// present, `status.hard` / `status.used` (the server clears `status` on create before
/// validating, so status errors only matter for quotas read from elsewhere).
///
/// Quantities are rounded up to milli units first, as API defaulting does. Errors come in
/// the server's order (metadata, then hard keys in sorted order, scopes, scope selector,
/// status), duplicates removed. An empty result means the server would accept the object
/// (as far as validation goes; admission is separate).
pub fn validate_resource_quota(rq: &ResourceQuota, style: ValueStyle) -> Vec<FieldError> {
    let mut errs = metadata_errors(&rq.metadata, style);
    if let Some(spec) = &rq.spec {
        errs.extend(validate_resource_quota_spec(spec, style));
    }
    if let Some(status) = &rq.status {
        errs.extend(validate_resource_list(status.hard.as_ref(), "status.hard", style));
        errs.extend(validate_resource_list(status.used.as_ref(), "status.used", style));
    }
    dedup(errs)
}

/// Validates a ResourceQuota spec alone (paths start with `spec.`): what the server checks
/// for `spec.hard`, `spec.scopes` and `spec.scopeSelector`. Useful for a quota built from
/// command-line flags.
pub fn validate_resource_quota_spec(spec: &ResourceQuotaSpec, style: ValueStyle) -> Vec<FieldError> {
    let mut errs = validate_resource_list(spec.hard.as_ref(), "spec.hard", style);
    errs.extend(validate_scopes(spec, style));
    if let Some(selector) = &spec.scope_selector {
        errs.extend(validate_scope_selector(spec, selector, style));
    }
    dedup(errs)
}

/// The `ValidateObjectMeta` checks for a namespaced object named like a ResourceQuota
/// (RFC 1123 subdomain). The namespace is only checked when set: on create the server
/// fills it from the request. `ownerReferences` and `managedFields` are not checked.
pub fn validate_quota_metadata(meta: &ObjectMeta) -> Vec<FieldError> {
    metadata_errors(meta, ValueStyle::default())
}

/// [`validate_quota_metadata`], finalizers' values printed in `style`.
fn metadata_errors(meta: &ObjectMeta, style: ValueStyle) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let generate_name = meta.generate_name.as_deref().unwrap_or("");
    let name = meta.name.as_deref().unwrap_or("");
    if !generate_name.is_empty() {
        for msg in object_name_errors(generate_name, true) {
            errs.push(FieldError::invalid("metadata.generateName", go_quote(generate_name), msg));
        }
    }
    if !name.is_empty() {
        for msg in object_name_errors(name, false) {
            errs.push(FieldError::invalid("metadata.name", go_quote(name), msg));
        }
    } else if !generate_name.is_empty() {
        // The server generates the name before validating it: the prefix cut to 58 bytes plus
        // 5 random characters from "bcdfghjklmnpqrstvwxz2456789" ('x' stands for them here).
        let mut cut = generate_name.len().min(58);
        while !generate_name.is_char_boundary(cut) {
            cut -= 1;
        }
        let generated = format!("{}xxxxx", &generate_name[..cut]);
        for msg in object_name_errors(&generated, false) {
            errs.push(FieldError::invalid("metadata.name", go_quote(&generated), msg));
        }
    } else {
        errs.push(FieldError::required("metadata.name", reasons::NAME_REQUIRED));
    }
    if let Some(ns) = meta.namespace.as_deref().filter(|ns| !ns.is_empty()) {
        for msg in dns1123_label_errors(ns) {
            errs.push(FieldError::invalid("metadata.namespace", go_quote(ns), msg));
        }
    }
    if let Some(generation) = meta.generation.filter(|g| *g < 0) {
        errs.push(FieldError::invalid("metadata.generation", generation.to_string(), reasons::NEGATIVE));
    }
    if let Some(labels) = &meta.labels {
        for (k, v) in labels {
            for msg in qualified_name_errors(k) {
                errs.push(FieldError::invalid("metadata.labels", go_quote(k), msg));
            }
            for msg in label_value_errors(v) {
                errs.push(FieldError::invalid("metadata.labels", go_quote(v), msg));
            }
        }
    }
    if let Some(annotations) = &meta.annotations {
        let mut total = 0usize;
        for (k, v) in annotations {
            for msg in qualified_name_errors(&k.to_lowercase()) {
                errs.push(FieldError::invalid("metadata.annotations", go_quote(k), msg));
            }
            total += k.len() + v.len();
        }
        if total > TOTAL_ANNOTATION_SIZE_LIMIT {
            errs.push(FieldError {
                field: "metadata.annotations".into(),
                kind: FieldErrorKind::TooLong,
                bad_value: String::new(),
                detail: format!("may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
            });
        }
    }
    if let Some(finalizers) = &meta.finalizers {
        for f in finalizers {
            for msg in qualified_name_errors(f) {
                errs.push(FieldError::invalid("metadata.finalizers", go_quote(f), msg));
            }
        }
        let orphan = finalizers.iter().any(|f| f == "orphan");
        let foreground = finalizers.iter().any(|f| f == "foregroundDeletion");
        if orphan && foreground {
            errs.push(FieldError::invalid(
                "metadata.finalizers",
                style.strings("[]string", Some(finalizers)),
                "finalizer orphan and foregroundDeletion cannot be both set",
            ));
        }
    }
    errs
}

/// Validates one resource list (`spec.hard`, `status.hard`, `status.used`): per key, in
/// sorted order, the name checks then the value checks.
fn validate_resource_list(list: Option<&BTreeMap<String, ApiQuantity>>, path: &str, style: ValueStyle) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, value) in list.into_iter().flatten() {
        let field = format!("{path}[{key}]");
        errs.extend(validate_quota_resource_name(key, &field));
        errs.extend(validate_quota_resource_value(key, &value.0, &field, style));
    }
    errs
}

/// `ValidateResourceQuotaResourceName`: qualified name; then, for a name without `/`,
/// known resource (`must be a standard resource type or fully qualified`) and known to
/// quota (`must be a standard resource for quota`).
pub fn validate_quota_resource_name(name: &str, field: &str) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = qualified_name_errors(name).into_iter().map(|msg| FieldError::invalid(field, go_quote(name), msg)).collect();
    if errs.is_empty() && !name.contains('/') && !is_standard_resource_name(name) {
        errs.push(FieldError::invalid(field, go_quote(name), reasons::NOT_STANDARD_OR_QUALIFIED));
    }
    if !name.contains('/') && !is_standard_quota_resource_name(name) {
        errs.push(FieldError::invalid(field, go_quote(name), reasons::NOT_QUOTA_RESOURCE));
    }
    errs
}

/// `ValidateResourceQuantityValue` after milli round-up: not negative, and a whole number
/// for integer resources (`MilliValue() % 1000 == 0`, as the server computes it). A string
/// that is not a quantity gives one [`FieldErrorKind::Unparseable`] error. The negative value
/// is printed as a string (the server passes `String()`); the fractional one as the
/// `resource.Quantity` itself, which `style` renders.
pub fn validate_quota_resource_value(name: &str, raw: &str, field: &str, style: ValueStyle) -> Vec<FieldError> {
    let quantity = match Quantity::parse(raw) {
        Ok(q) => q.round_up(-3),
        Err(e) => return vec![FieldError { field: field.to_string(), kind: FieldErrorKind::Unparseable, bad_value: go_quote(raw), detail: e.to_string() }],
    };
    let mut errs = Vec::new();
    if quantity.sign() < 0 {
        errs.push(FieldError::invalid(field, go_quote(&quantity.to_string()), reasons::NEGATIVE));
    }
    // From 1.38 the value itself must be whole; before, its milli value (saturated here past
    // 64 bits, where the server's wrapped) had to be a multiple of 1000.
    let fractional = match style {
        ValueStyle::JsonExactIntegers => !quantity.is_integer(),
        _ => quantity.milli_value() % 1000 != 0,
    };
    if is_integer_resource_name(name) && fractional {
        let value = match style {
            ValueStyle::Json | ValueStyle::JsonExactIntegers => None,
            ValueStyle::GoSyntax | ValueStyle::GoSyntaxV1_20 => go_quantity(raw),
        };
        errs.push(FieldError::invalid(field, value.unwrap_or_else(|| go_quote(&quantity.to_string())), reasons::NOT_INTEGER));
    }
    errs
}

/// `validateResourceQuotaScopes`: only when `spec.scopes` is non-empty; every error is on
/// `spec.scopes` with the whole list as the value.
fn validate_scopes(spec: &ResourceQuotaSpec, style: ValueStyle) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let scopes = match spec.scopes.as_deref() {
        Some(s) if !s.is_empty() => s,
        _ => return errs,
    };
    let bad_value = style.strings(SCOPES_TYPE, spec.scopes.as_deref());
    let hard_keys: Vec<&String> = spec.hard.iter().flat_map(|h| h.keys()).collect();
    let mut seen = HashSet::new();
    for scope in scopes {
        let parsed = QuotaScope::parse(scope);
        if parsed.is_none() {
            errs.push(FieldError::invalid("spec.scopes", bad_value.clone(), reasons::UNSUPPORTED_SCOPE));
        }
        for key in &hard_keys {
            if is_standard_quota_resource_name(key) && !scope_allows(parsed, key) {
                errs.push(FieldError::invalid("spec.scopes", bad_value.clone(), reasons::SCOPE_NOT_FOR_RESOURCE));
            }
        }
        seen.insert(scope.as_str());
    }
    if conflicting(&seen) {
        errs.push(FieldError::invalid("spec.scopes", bad_value, reasons::CONFLICTING_SCOPES));
    }
    errs
}

/// `validateScopedResourceSelectorRequirement`, per expression in order.
fn validate_scope_selector(spec: &ResourceQuotaSpec, selector: &ScopeSelector, style: ValueStyle) -> Vec<FieldError> {
    const PATH: &str = "spec.scopeSelector.matchExpressions";
    let mut errs = Vec::new();
    let selector_value = style.selector(selector);
    let hard_keys: Vec<&String> = spec.hard.iter().flat_map(|h| h.keys()).collect();
    let mut seen = HashSet::new();
    for req in selector.match_expressions.iter().flatten() {
        let scope = QuotaScope::parse(&req.scope_name);
        if scope.is_none() {
            errs.push(FieldError::invalid(format!("{PATH}.scopeName"), go_quote(&req.scope_name), reasons::UNSUPPORTED_SCOPE));
        }
        for key in &hard_keys {
            if is_standard_quota_resource_name(key) && !scope_allows(scope, key) {
                errs.push(FieldError::invalid(PATH, selector_value.clone(), reasons::SCOPE_NOT_FOR_RESOURCE));
            }
        }
        let operator = ScopeOperator::parse(&req.operator);
        if scope.is_some_and(QuotaScope::requires_exists_operator) && operator != Some(ScopeOperator::Exists) {
            let reason = if style == ValueStyle::GoSyntaxV1_20 { reasons::EXISTS_ONLY_OPERATOR_V1_20 } else { reasons::EXISTS_ONLY_OPERATOR };
            errs.push(FieldError::invalid(format!("{PATH}.operator"), go_quote(&req.operator), reason));
        }
        let n_values = req.values.as_ref().map_or(0, Vec::len);
        match operator {
            Some(ScopeOperator::In | ScopeOperator::NotIn) => {
                if n_values == 0 {
                    errs.push(FieldError::required(format!("{PATH}.values"), reasons::VALUES_REQUIRED));
                }
            }
            Some(ScopeOperator::Exists | ScopeOperator::DoesNotExist) => {
                if n_values != 0 {
                    errs.push(FieldError::invalid(format!("{PATH}.values"), style.strings("[]string", req.values.as_deref()), reasons::VALUES_FORBIDDEN));
                }
            }
            None => errs.push(FieldError::invalid(format!("{PATH}.operator"), go_quote(&req.operator), reasons::INVALID_OPERATOR)),
        }
        seen.insert(req.scope_name.as_str());
    }
    if conflicting(&seen) {
        // The server reports the conflict with spec.scopes as the value, not the selector.
        errs.push(FieldError::invalid(PATH, style.strings(SCOPES_TYPE, spec.scopes.as_deref()), reasons::CONFLICTING_SCOPES));
    }
    errs
}

/// `IsResourceQuotaScopeValidForResource` for a possibly unknown scope (unknown: allowed).
fn scope_allows(scope: Option<QuotaScope>, resource: &str) -> bool {
    scope.is_none_or(|s| scope_valid_for_resource(s, resource))
}

/// BestEffort with NotBestEffort, or Terminating with NotTerminating.
fn conflicting(seen: &HashSet<&str>) -> bool {
    (seen.contains("BestEffort") && seen.contains("NotBestEffort")) || (seen.contains("Terminating") && seen.contains("NotTerminating"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::{has_decode_errors, render_server_message, status_message};

    fn quota(yaml: &str) -> ResourceQuota {
        serde_saphyr::from_str(yaml).expect("test manifest decodes")
    }

    /// The errors as a 1.20 server prints them (the tables below were written against it).
    fn lines(rq: &ResourceQuota) -> Vec<String> {
        validate_resource_quota(rq, ValueStyle::GoSyntax).iter().map(ToString::to_string).collect()
    }

    /// As 1.34 on words them: quantities as their canonical strings.
    fn json_lines(rq: &ResourceQuota) -> Vec<String> {
        validate_resource_quota(rq, ValueStyle::Json).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn current_servers_print_refused_values_as_json() {
        // Each message as the real 1.37.2 server answered it (`kubectl create -f --dry-run=server`).
        let cases: &[(&str, &str)] = &[
            (
                "metadata: {name: a}\nspec: {hard: {cpu: '1', services: '2'}, scopes: [BestEffort]}",
                "ResourceQuota \"a\" is invalid: spec.scopes: Invalid value: [\"BestEffort\"]: unsupported scope applied to resource",
            ),
            (
                "metadata: {name: b}\nspec: {hard: {pods: '1'}, scopeSelector: {matchExpressions: [{scopeName: VolumeAttributesClass, operator: Exists}]}}",
                "ResourceQuota \"b\" is invalid: spec.scopeSelector.matchExpressions: Invalid value: {\"MatchExpressions\":[{\"ScopeName\":\"VolumeAttributesClass\",\"Operator\":\"Exists\",\"Values\":null}]}: unsupported scope applied to resource",
            ),
            (
                "metadata: {name: c}\nspec: {hard: {pods: '1'}, scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: Exists, values: [a, b]}]}}",
                "ResourceQuota \"c\" is invalid: spec.scopeSelector.matchExpressions.values: Invalid value: [\"a\",\"b\"]: must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            ),
            (
                "metadata: {name: e}\nspec: {hard: {pods: '1'}, scopes: [BestEffort, NotBestEffort]}",
                "ResourceQuota \"e\" is invalid: spec.scopes: Invalid value: [\"BestEffort\",\"NotBestEffort\"]: conflicting scopes",
            ),
        ];
        for (yaml, want) in cases {
            let rq = quota(&format!("apiVersion: v1\nkind: ResourceQuota\n{yaml}\n"));
            let name = rq.metadata.name.clone().unwrap();
            assert_eq!(status_message(&name, &validate_resource_quota(&rq, ValueStyle::Json)), *want);
            assert_eq!(render_server_message(&name, &validate_resource_quota(&rq, ValueStyle::Json)), format!("The {want}"));
        }
        // Several causes: the Status message lists them in brackets, kubectl create -f one a line.
        let rq = quota("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: f, finalizers: [orphan, foregroundDeletion, 'bad one']}\n");
        let errs = validate_resource_quota(&rq, ValueStyle::Json);
        assert!(status_message("f", &errs).starts_with("ResourceQuota \"f\" is invalid: [metadata.finalizers: Invalid value: \"bad one\": "), "{errs:?}");
        assert!(status_message("f", &errs).ends_with(", metadata.finalizers: Invalid value: [\"orphan\",\"foregroundDeletion\",\"bad one\"]: finalizer orphan and foregroundDeletion cannot be both set]"));
        assert!(render_server_message("f", &errs).starts_with("The ResourceQuota \"f\" is invalid: \n* metadata.finalizers: "));
    }

    const HEAD: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\n";

    #[test]
    fn newer_server_scopes_table() {
        // (spec yaml, expected error lines)
        let table: &[(&str, &[&str])] = &[
            // VolumeAttributesClass tracks PVC count and storage only.
            (
                "spec:\n  hard:\n    persistentvolumeclaims: '5'\n    requests.storage: 10Gi\n    count/persistentvolumeclaims: '5'\n  scopeSelector:\n    matchExpressions:\n    - scopeName: VolumeAttributesClass\n      operator: In\n      values: [gold]\n",
                &[],
            ),
            (
                "spec:\n  hard:\n    pods: '5'\n  scopeSelector:\n    matchExpressions:\n    - scopeName: VolumeAttributesClass\n      operator: Exists\n",
                &["spec.scopeSelector.matchExpressions: Invalid value: core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{core.ScopedResourceSelectorRequirement{ScopeName:\"VolumeAttributesClass\", Operator:\"Exists\", Values:[]string(nil)}}}: unsupported scope applied to resource"],
            ),
            (
                "spec:\n  hard:\n    requests.storage: 1Gi\n  scopes: [VolumeAttributesClass]\n",
                &[],
            ),
            // CrossNamespacePodAffinity: pod resources, Exists only.
            ("spec:\n  hard:\n    pods: '2'\n  scopes: [CrossNamespacePodAffinity]\n", &[]),
            (
                "spec:\n  hard:\n    secrets: '2'\n  scopes: [CrossNamespacePodAffinity]\n",
                &["spec.scopes: Invalid value: []core.ResourceQuotaScope{\"CrossNamespacePodAffinity\"}: unsupported scope applied to resource"],
            ),
            (
                "spec:\n  hard:\n    pods: '2'\n  scopeSelector:\n    matchExpressions:\n    - scopeName: CrossNamespacePodAffinity\n      operator: In\n      values: [x]\n",
                &["spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"],
            ),
            // PriorityClass accepts every operator; unknown scope names in a selector.
            (
                "spec:\n  hard:\n    requests.cpu: '4'\n  scopeSelector:\n    matchExpressions:\n    - scopeName: PriorityClass\n      operator: DoesNotExist\n",
                &[],
            ),
            (
                "spec:\n  hard:\n    count/pods: '4'\n  scopeSelector:\n    matchExpressions:\n    - scopeName: Bogus\n      operator: Exists\n",
                &["spec.scopeSelector.matchExpressions.scopeName: Invalid value: \"Bogus\": unsupported scope"],
            ),
            // Conflicting scopes inside a selector report spec.scopes (here non-nil) as value.
            (
                "spec:\n  hard:\n    pods: '4'\n  scopes: [NotBestEffort]\n  scopeSelector:\n    matchExpressions:\n    - scopeName: Terminating\n      operator: Exists\n    - scopeName: NotTerminating\n      operator: Exists\n",
                &["spec.scopeSelector.matchExpressions: Invalid value: []core.ResourceQuotaScope{\"NotBestEffort\"}: conflicting scopes"],
            ),
        ];
        for (spec, want) in table {
            let rq = quota(&format!("{HEAD}{spec}"));
            assert_eq!(lines(&rq), *want, "{spec}");
        }
    }

    #[test]
    fn values_table() {
        let table: &[(&str, &str, &[&str])] = &[
            // defaulting rounds up to milli first: 0.1m pods is 1m, not an integer
            ("pods", "0.0001", &["spec.hard[pods]: Invalid value: \"1m\": must be an integer"]),
            ("requests.cpu", "0.0001", &[]),
            ("services", "1k", &[]),
            ("nvidia.com/gpu", "1.5", &["spec.hard[nvidia.com/gpu]: Invalid value: \"1500m\": must be an integer"]),
            ("requests.nvidia.com/gpu", "1.5", &[]),
            ("limits.nvidia.com/gpu", "500m", &["spec.hard[limits.nvidia.com/gpu]: Invalid value: \"500m\": must be an integer"]),
            (
                "pods",
                "-1.5",
                &[
                    "spec.hard[pods]: Invalid value: \"-1500m\": must be greater than or equal to 0",
                    "spec.hard[pods]: Invalid value: \"-1500m\": must be an integer",
                ],
            ),
            ("memory", "-1Gi", &["spec.hard[memory]: Invalid value: \"-1Gi\": must be greater than or equal to 0"]),
            ("memory", "0", &[]),
        ];
        for (key, value, want) in table {
            let rq = quota(&format!("{HEAD}spec:\n  hard:\n    {key}: '{value}'\n"));
            assert_eq!(json_lines(&rq), *want, "{key}: {value}");
        }
    }

    #[test]
    fn resource_name_table() {
        let subdomain = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
        let table: Vec<(&str, Vec<String>)> = vec![
            ("hugepages-2Mi", vec![]),
            ("requests.hugepages-1Gi", vec![]),
            ("count/widgets.example.com", vec![]),
            ("storage", vec!["spec.hard[storage]: Invalid value: \"storage\": must be a standard resource for quota".into()]),
            (
                "limits.hugepages-2Mi",
                vec![
                    "spec.hard[limits.hugepages-2Mi]: Invalid value: \"limits.hugepages-2Mi\": must be a standard resource type or fully qualified".into(),
                    "spec.hard[limits.hugepages-2Mi]: Invalid value: \"limits.hugepages-2Mi\": must be a standard resource for quota".into(),
                ],
            ),
            ("Example.com/gpu", vec![format!("spec.hard[Example.com/gpu]: Invalid value: \"Example.com/gpu\": {subdomain}")]),
        ];
        for (key, want) in table {
            let rq = quota(&format!("{HEAD}spec:\n  hard:\n    {key}: '1'\n"));
            assert_eq!(lines(&rq), want, "{key}");
        }
        // A name that fails the qualified-name rule and has no '/' also fails the quota list.
        let errs = validate_quota_resource_name("-x", "spec.hard[-x]");
        assert_eq!(errs.len(), 2);
        assert!(errs[0].detail.starts_with("name part must consist of"));
        assert_eq!(errs[1].detail, reasons::NOT_QUOTA_RESOURCE);
    }

    #[test]
    fn metadata_table() {
        let table: &[(&str, &[&str])] = &[
            ("metadata:\n  name: ok\n  namespace: team-a\n", &[]),
            ("metadata:\n  generateName: quota-\n", &[]),
            ("metadata: {}\n", &["metadata.name: Required value: name or generateName is required"]),
            (
                "metadata:\n  name: ok\n  namespace: Team_A\n",
                &["metadata.namespace: Invalid value: \"Team_A\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"],
            ),
            (
                "metadata:\n  name: ok\n  labels:\n    team: -bad\n",
                &["metadata.labels: Invalid value: \"-bad\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"],
            ),
        ];
        for (meta, want) in table {
            let rq = quota(&format!("apiVersion: v1\nkind: ResourceQuota\n{meta}"));
            assert_eq!(lines(&rq), *want, "{meta}");
        }
        let rq = quota("apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  generateName: Bad_\n");
        let fields: Vec<String> = validate_resource_quota(&rq, ValueStyle::Json).into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["metadata.generateName", "metadata.name"]);
        let long = "a".repeat(254);
        let rq = quota(&format!("apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: {long}\n"));
        assert_eq!(lines(&rq), [format!("metadata.name: Invalid value: \"{long}\": must be no more than 253 characters")]);
    }

    #[test]
    fn status_is_validated_when_present() {
        let rq = quota(&format!("{HEAD}status:\n  hard:\n    pods: '1.5'\n  used:\n    storage: '1'\n"));
        assert_eq!(
            json_lines(&rq),
            [
                "status.hard[pods]: Invalid value: \"1500m\": must be an integer",
                "status.used[storage]: Invalid value: \"storage\": must be a standard resource for quota",
            ]
        );
    }

    #[test]
    fn unparseable_quantity_is_a_decode_error() {
        let rq = quota(&format!("{HEAD}spec:\n  hard:\n    pods: ten\n    Pods: '1'\n"));
        let errs = validate_resource_quota(&rq, ValueStyle::Json);
        assert!(has_decode_errors(&errs));
        let decode: Vec<&FieldError> = errs.iter().filter(|e| e.is_decode_error()).collect();
        assert_eq!(decode.len(), 1);
        assert_eq!(decode[0].field, "spec.hard[pods]");
        assert_eq!(decode[0].bad_value, "\"ten\"");
        assert_eq!(
            render_server_message("q", &errs),
            "ResourceQuota in version \"v1\" cannot be handled as a ResourceQuota: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        );
    }

    #[test]
    fn each_release_words_the_refusals_as_it_does() {
        let fraction = quota("metadata: {name: q}\nspec: {hard: {pods: 500m}}");
        let operator =
            quota("metadata: {name: q}\nspec: {hard: {pods: '1'}, scopeSelector: {matchExpressions: [{scopeName: BestEffort, operator: In, values: [x]}]}}");
        let cases = [
            (ValueStyle::for_release(false, false), &fraction, "resource.Quantity{i:resource.int64Amount{value:500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"500m\", Format:\"DecimalSI\"}: must be an integer"),
            (ValueStyle::for_release(false, true), &fraction, "resource.Quantity{i:resource.int64Amount{value:500, scale:-3}"),
            (ValueStyle::for_release(true, true), &fraction, "spec.hard[pods]: Invalid value: \"500m\": must be an integer"),
            (ValueStyle::for_release(false, false), &operator, reasons::EXISTS_ONLY_OPERATOR_V1_20),
            (ValueStyle::for_release(false, true), &operator, reasons::EXISTS_ONLY_OPERATOR),
            (ValueStyle::for_release(true, true), &operator, reasons::EXISTS_ONLY_OPERATOR),
        ];
        for (style, rq, want) in cases {
            let got: Vec<String> = validate_resource_quota(rq, style).iter().map(ToString::to_string).collect();
            assert!(got.iter().any(|l| l.contains(want)), "{style:?}: {got:?} lacks {want:?}");
        }
    }
}
