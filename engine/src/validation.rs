//! ResourceQuota validation with kube-apiserver's rules and messages.
//!
//! [`validate_resource_quota`] reproduces what the API server checks when a ResourceQuota is
//! created (`ValidateResourceQuota` in `pkg/apis/core/validation/validation.go`, plus the
//! object-metadata checks of `ValidateObjectMeta`), after the API defaulting that matters
//! (every quantity rounded up to milli units). Each problem is a [`FieldError`] whose
//! `Display` is the server's rendering, e.g.
//! `spec.hard[foo]: Invalid value: "foo": must be a standard resource for quota`, and
//! [`render_server_message`] builds the whole refusal as kubectl prints it
//! (`The ResourceQuota "q" is invalid: ...`, one error inline, several as `\n* ` lines).
//!
//! Rules follow current servers (1.3x): the `CrossNamespacePodAffinity` and
//! `VolumeAttributesClass` scopes exist. The wording is the release's, as [`ValueStyle`] says:
//! a refused value that is not a string or a number as JSON (1.34 on) or as Go's `%#v` (a
//! `must be an integer` quantity then as the server's `resource.Quantity{...}` struct, its
//! cached string `s` included, [`go_quantity`]); the exists-only operator rule as current
//! servers word it (`must be 'Exists' when scope is any of ..., ResourceQuotaScopeNotBestEffort
//! or ResourceQuotaScopeCrossNamespacePodAffinity`) or as 1.20 does (`must be 'Exist' only
//! operator when scope is any of ... and ResourceQuotaScopeNotBestEffort`).
//!
//! Deliberate differences from the server's text:
//! - a `must be an integer` quantity that Go holds as an `inf.Dec` (more than 18 digits, finer
//!   than nano units, or a fractional binary suffix such as `1.5Ki`) is printed as its
//!   canonical string: Go prints that struct with a pointer's address;
//! - resource names are quoted (`"foo"`) as older servers print them (the v1.20 corpus does);
//!   current servers pass a `core.ResourceName`, which Go prints unquoted;
//! - a quantity that does not parse is reported as a [`FieldErrorKind::Unparseable`] error on
//!   its field (the server refuses the whole body while decoding, before validation; see
//!   [`render_server_message`]).
//!
//! Why one file of this length: it follows the server's validation in its order, field
//! by field, so a message can be traced to the rule that makes it; half of it is tables.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use k8s_openapi::api::core::v1::{ResourceQuota, ResourceQuotaSpec, ScopeSelector};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

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

/// What kind of problem a [`FieldError`] is (`field.ErrorType`), plus decode failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldErrorKind {
    /// `Invalid value` (HTTP 422).
    Invalid,
    /// `Required value` (HTTP 422).
    Required,
    /// `Forbidden` (HTTP 422).
    Forbidden,
    /// `Too long` (HTTP 422).
    TooLong,
    /// `Unsupported value` (HTTP 422): the value, then `supported values: ` and the list (the
    /// error's detail).
    NotSupported,
    /// The value is not a quantity: the server would refuse the request body while decoding
    /// it (HTTP 400), before any validation. Callers should treat it as a usage error.
    Unparseable,
}

impl FieldErrorKind {
    /// The server's words for the kind, as printed after the field path.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldErrorKind::Invalid | FieldErrorKind::Unparseable => "Invalid value",
            FieldErrorKind::Required => "Required value",
            FieldErrorKind::Forbidden => "Forbidden",
            FieldErrorKind::TooLong => "Too long",
            FieldErrorKind::NotSupported => "Unsupported value",
        }
    }
}

impl fmt::Display for FieldErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One validation problem, like apimachinery's `field.Error`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldError {
    /// The field path, e.g. `spec.hard[requests.cpu]`, `spec.scopeSelector.matchExpressions.operator`.
    pub field: String,
    /// The kind of problem.
    pub kind: FieldErrorKind,
    /// The offending value, already rendered the way the server prints it after
    /// `Invalid value: ` (a Go-quoted string such as `"foo"`, or a Go literal such as
    /// `[]core.ResourceQuotaScope{"BestEffort"}`). Empty for `Required` / `TooLong`,
    /// which print no value.
    pub bad_value: String,
    /// The server's reason, e.g. `must be a standard resource for quota`.
    pub detail: String,
}

impl FieldError {
    /// An `Invalid value` error.
    pub fn invalid(field: impl Into<String>, bad_value: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError { field: field.into(), kind: FieldErrorKind::Invalid, bad_value: bad_value.into(), detail: detail.into() }
    }

    /// An `Unsupported value` error: `supported` are the values allowed, each Go-quoted.
    pub fn not_supported(field: impl Into<String>, bad_value: &str, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|v| go_quote(v)).collect();
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::NotSupported,
            bad_value: go_quote(bad_value),
            detail: format!("supported values: {}", list.join(", ")),
        }
    }

    /// A `Forbidden` error.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError { field: field.into(), kind: FieldErrorKind::Forbidden, bad_value: String::new(), detail: detail.into() }
    }

    /// A `Required value` error.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError { field: field.into(), kind: FieldErrorKind::Required, bad_value: String::new(), detail: detail.into() }
    }

    /// True for a value that could not even be decoded (see [`FieldErrorKind::Unparseable`]).
    pub fn is_decode_error(&self) -> bool {
        self.kind == FieldErrorKind::Unparseable
    }

    /// The part after the field path: `Invalid value: "foo": must be ...` (`ErrorBody`).
    pub fn body(&self) -> String {
        let mut s = self.kind.as_str().to_string();
        match self.kind {
            FieldErrorKind::Invalid | FieldErrorKind::Unparseable | FieldErrorKind::NotSupported => {
                s.push_str(": ");
                s.push_str(&self.bad_value);
            }
            FieldErrorKind::Required | FieldErrorKind::Forbidden | FieldErrorKind::TooLong => {}
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// True when any error is a decode error ([`FieldErrorKind::Unparseable`]).
pub fn has_decode_errors(errors: &[FieldError]) -> bool {
    errors.iter().any(FieldError::is_decode_error)
}

/// The whole refusal as kubectl shows it for `kubectl create` of a ResourceQuota named
/// `name` (use `metadata.generateName` when the name is empty):
///
/// - validation errors: `The ResourceQuota "q" is invalid: <error>` for one error, and
///   `The ResourceQuota "q" is invalid: ` followed by one `\n* <error>` line per error for
///   several (identical messages are listed once, as the server and kubectl do);
/// - if any error is a decode error, the server never validates: the message is the
///   decode failure, `ResourceQuota in version "v1" cannot be handled as a ResourceQuota:
///   <reason>` (the first such error's reason).
///
/// Returns an empty string when `errors` is empty.
pub fn render_server_message(name: &str, errors: &[FieldError]) -> String {
    match status_message(name, errors) {
        m if m.starts_with("ResourceQuota \"") => {
            let errors = dedup(errors.to_vec());
            let head = format!("The ResourceQuota {} is invalid: ", go_quote(name));
            match errors.as_slice() {
                [one] => format!("{head}{one}"),
                many => many.iter().fold(head, |s, e| format!("{s}\n* {e}")),
            }
        }
        other => other,
    }
}

/// The message of the server's 422 for a ResourceQuota, as its Status carries it and as Go
/// prints the error (`ResourceQuota "q" is invalid: spec.scopes: ...`; several causes in
/// brackets, comma-separated); a decode error as the server words it. Empty for no errors.
pub fn status_message(name: &str, errors: &[FieldError]) -> String {
    if let Some(decode) = errors.iter().find(|e| e.is_decode_error()) {
        return format!("ResourceQuota in version \"v1\" cannot be handled as a ResourceQuota: {}", decode.detail);
    }
    let errors = dedup(errors.to_vec());
    match errors.len() {
        0 => String::new(),
        1 => format!("ResourceQuota {} is invalid: {}", go_quote(name), errors[0]),
        _ => format!("ResourceQuota {} is invalid: [{}]", go_quote(name), errors.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")),
    }
}

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
    if is_integer_resource_name(name) && quantity.milli_value() % 1000 != 0 {
        let value = match style {
            ValueStyle::Json => None,
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

/// Removes repeated messages, keeping the first (`ErrorList.ToAggregate`).
fn dedup(errors: Vec<FieldError>) -> Vec<FieldError> {
    let mut seen = HashSet::new();
    errors.into_iter().filter(|e| seen.insert(e.to_string())).collect()
}

// ---------------------------------------------------------------------------------------
// Go value rendering (`%q` and `%#v`), as the server prints bad values.
// ---------------------------------------------------------------------------------------

/// How a release words a refusal: a refused value that is not a string or a number as Go's
/// `%#v` (`[]core.ResourceQuotaScope{"BestEffort"}`, `resource.Quantity{...}`, before 1.34)
/// or as JSON (`["BestEffort"]`, `"500m"`, apimachinery 0.34 on; a struct of the server's
/// internal types keeps its Go field names,
/// `{"MatchExpressions":[{"ScopeName":"X","Operator":"In","Values":["a"]}]}`); and, before the
/// CrossNamespacePodAffinity scope (1.20), the exists-only operator rule in its old words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValueStyle {
    /// 1.20: Go's `%#v`, and [`reasons::EXISTS_ONLY_OPERATOR_V1_20`].
    GoSyntaxV1_20,
    /// 1.21 to 1.33: Go's `%#v`.
    GoSyntax,
    /// 1.34 on.
    #[default]
    Json,
}

impl ValueStyle {
    /// The wording of a release, from its rules `invalidValuesAsJson` and
    /// `crossNamespacePodAffinityScope` (the operator rule was reworded with that scope).
    pub fn for_release(invalid_values_as_json: bool, cross_namespace_pod_affinity_scope: bool) -> ValueStyle {
        match (invalid_values_as_json, cross_namespace_pod_affinity_scope) {
            (true, _) => ValueStyle::Json,
            (false, true) => ValueStyle::GoSyntax,
            (false, false) => ValueStyle::GoSyntaxV1_20,
        }
    }

    /// A list of strings: `spec.scopes` (`[]core.ResourceQuotaScope`) or `[]string`.
    fn strings(self, go_type: &str, items: Option<&[String]>) -> String {
        match self {
            ValueStyle::GoSyntax | ValueStyle::GoSyntaxV1_20 => go_slice(go_type, items),
            ValueStyle::Json => json_strings(items),
        }
    }

    /// `spec.scopeSelector`.
    fn selector(self, selector: &ScopeSelector) -> String {
        match self {
            ValueStyle::GoSyntax | ValueStyle::GoSyntaxV1_20 => go_scope_selector(selector),
            ValueStyle::Json => {
                let exprs = match &selector.match_expressions {
                    None => "null".to_string(),
                    Some(list) => {
                        let items: Vec<String> = list
                            .iter()
                            .map(|r| {
                                format!(
                                    "{{\"ScopeName\":{},\"Operator\":{},\"Values\":{}}}",
                                    json_string(&r.scope_name),
                                    json_string(&r.operator),
                                    json_strings(r.values.as_deref())
                                )
                            })
                            .collect();
                        format!("[{}]", items.join(","))
                    }
                };
                format!("{{\"MatchExpressions\":{exprs}}}")
            }
        }
    }
}

/// A string as Go's `encoding/json` writes it (`<`, `>` and `&` escaped too).
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A list of strings as JSON (`null` for none, as Go marshals a nil slice).
fn json_strings(items: Option<&[String]>) -> String {
    match items {
        None => "null".into(),
        Some(items) => format!("[{}]", items.iter().map(|s| json_string(s)).collect::<Vec<_>>().join(",")),
    }
}

/// Go's `%q` of a string: double-quoted with Go escapes.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => {
                let v = c as u32;
                if v <= 0xffff {
                    out.push_str(&format!("\\u{v:04x}"));
                } else {
                    out.push_str(&format!("\\U{v:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn go_slice(type_name: &str, items: Option<&[String]>) -> String {
    match items {
        None => format!("{type_name}(nil)"),
        Some(items) => {
            let inner: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
            format!("{type_name}{{{}}}", inner.join(", "))
        }
    }
}

/// `%#v` of `[]string`: `[]string{"a", "b"}` or `[]string(nil)`.
pub fn go_string_slice(items: Option<&[String]>) -> String {
    go_slice("[]string", items)
}

/// `%#v` of `spec.scopes`: `[]core.ResourceQuotaScope{"BestEffort"}` or `[]core.ResourceQuotaScope(nil)`.
pub fn go_scopes(scopes: Option<&[String]>) -> String {
    go_slice(SCOPES_TYPE, scopes)
}

/// The Go type of `spec.scopes`, as `%#v` names it.
const SCOPES_TYPE: &str = "[]core.ResourceQuotaScope";

/// `%#v` of `spec.scopeSelector`:
/// `core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{core.ScopedResourceSelectorRequirement{ScopeName:"X", Operator:"In", Values:[]string{"a"}}}}`.
pub fn go_scope_selector(selector: &ScopeSelector) -> String {
    const REQ: &str = "core.ScopedResourceSelectorRequirement";
    let exprs = match &selector.match_expressions {
        None => format!("[]{REQ}(nil)"),
        Some(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|r| {
                    format!(
                        "{REQ}{{ScopeName:{}, Operator:{}, Values:{}}}",
                        go_quote(&r.scope_name),
                        go_quote(&r.operator),
                        go_string_slice(r.values.as_deref())
                    )
                })
                .collect();
            format!("[]{REQ}{{{}}}", items.join(", "))
        }
    };
    format!("core.ScopeSelector{{MatchExpressions:{exprs}}}")
}

/// `%#v` of the `resource.Quantity` the server holds for `raw` once API defaulting has rounded
/// it up to milli units, as a release before 1.34 prints it in `must be an integer`:
/// `resource.Quantity{i:resource.int64Amount{value:5, scale:-1}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"DecimalSI"}`.
///
/// apimachinery's parser keeps the number as written, digits and scale (`0.5`: 5 at scale -1),
/// and caches the text in `s` only when it is already canonical (`500m`; not `0.5`, `1.50`
/// nor `5e-1`); rounding to milli units keeps both unless the scale is finer, when it rounds
/// away from zero and drops `s`. `None` when Go would hold the number as an `inf.Dec` (more
/// than 18 digits, finer than nano, a fractional binary suffix, an overflow), whose `%#v` is a
/// pointer's address, or when `raw` is not a quantity.
pub fn go_quantity(raw: &str) -> Option<String> {
    let s = raw.trim();
    if s.is_empty() {
        return None;
    }
    let b = s.as_bytes();
    let digits_from = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut pos = 0;
    let positive = match b[0] {
        b'-' => {
            pos = 1;
            false
        }
        b'+' => {
            pos = 1;
            true
        }
        _ => true,
    };
    while pos < b.len() && b[pos] == b'0' {
        pos += 1;
    }
    let end = digits_from(pos);
    let num = if end == pos { "0" } else { &s[pos..end] };
    pos = end;
    let mut denom = "";
    if pos < b.len() && b[pos] == b'.' {
        let end = digits_from(pos + 1);
        denom = &s[pos + 1..end];
        pos = end;
    }
    #[derive(PartialEq)]
    enum Format {
        DecimalSi,
        BinarySi,
        DecimalExponent,
    }
    let (exponent, format): (i64, Format) = match &s[pos..] {
        "" => (0, Format::DecimalSi),
        "n" => (-9, Format::DecimalSi),
        "u" => (-6, Format::DecimalSi),
        "m" => (-3, Format::DecimalSi),
        "k" => (3, Format::DecimalSi),
        "M" => (6, Format::DecimalSi),
        "G" => (9, Format::DecimalSi),
        "T" => (12, Format::DecimalSi),
        "P" => (15, Format::DecimalSi),
        "E" => (18, Format::DecimalSi),
        "Ki" => (10, Format::BinarySi),
        "Mi" => (20, Format::BinarySi),
        "Gi" => (30, Format::BinarySi),
        "Ti" => (40, Format::BinarySi),
        "Pi" => (50, Format::BinarySi),
        "Ei" => (60, Format::BinarySi),
        e if e.len() > 1 && (e.starts_with('e') || e.starts_with('E')) => (e[1..].parse().ok()?, Format::DecimalExponent),
        _ => return None,
    };
    let n_digits = (num.len() + denom.len()) as i64;
    let (mut scale, mantissa, precision) = match format {
        Format::BinarySi if exponent >= 0 && denom.is_empty() && exponent < 63 => {
            (0i64, 1i64 << exponent, 15 - num.len() as i64 - (exponent as f32 * 3.0 / 10.0) as i64 - 1)
        }
        Format::BinarySi => return None,
        _ => (exponent, 1, 18 - n_digits),
    };
    if precision < 0 {
        return None;
    }
    scale -= denom.len() as i64;
    if scale < -9 {
        return None;
    }
    let shifted = format!("{num}{denom}");
    let value: i64 = shifted.parse().ok()?;
    let mut value = value.checked_mul(mantissa)?;
    if !positive {
        value = -value;
    }
    let canonical = match format {
        Format::BinarySi => exponent % 10 == 0 && (shifted.parse::<i64>().ok()? & 7) != 0,
        _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
    };
    let mut cached = if canonical { s } else { "" };
    if scale < -3 {
        // RoundUp(Milli): away from zero, and the cached text dropped.
        cached = "";
        let base = value;
        let mut fraction = false;
        for _ in 0..(-3 - scale) {
            if value % 10 != 0 {
                fraction = true;
            }
            value /= 10;
        }
        if fraction {
            value += base.signum();
        }
        scale = -3;
    }
    let format = match format {
        Format::DecimalSi => "DecimalSI",
        Format::BinarySi => "BinarySI",
        Format::DecimalExponent => "DecimalExponent",
    };
    Some(format!(
        "resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{}, Format:{}}}",
        go_quote(cached),
        go_quote(format)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(json_string("<a&\"\\\n\u{1}>"), "\"\\u003ca\\u0026\\\"\\\\\\n\\u0001\\u003e\"");
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
    fn server_message_forms() {
        let one = FieldError::invalid("spec.hard[foo]", "\"foo\"", reasons::NOT_QUOTA_RESOURCE);
        let two = FieldError::required("spec.scopeSelector.matchExpressions.values", reasons::VALUES_REQUIRED);
        assert_eq!(render_server_message("q", &[]), "");
        assert_eq!(
            render_server_message("q", std::slice::from_ref(&one)),
            "The ResourceQuota \"q\" is invalid: spec.hard[foo]: Invalid value: \"foo\": must be a standard resource for quota"
        );
        assert_eq!(
            render_server_message("q", &[one.clone(), two.clone(), one.clone()]),
            "The ResourceQuota \"q\" is invalid: \n* spec.hard[foo]: Invalid value: \"foo\": must be a standard resource for quota\n* spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
        );
    }

    #[test]
    fn go_quantity_is_the_struct_a_release_before_1_34_prints() {
        let q = |v: i64, scale: i64, s: &str, f: &str| {
            format!("resource.Quantity{{i:resource.int64Amount{{value:{v}, scale:{scale}}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:\"{s}\", Format:\"{f}\"}}")
        };
        let cases: &[(&str, Option<String>)] = &[
            // As the real 1.20.2 server printed them (tests/conformance-validation).
            ("500m", Some(q(500, -3, "500m", "DecimalSI"))),
            ("0.5", Some(q(5, -1, "", "DecimalSI"))),
            ("1.5", Some(q(15, -1, "", "DecimalSI"))),
            // Canonical text is cached, other spellings are not.
            ("1500m", Some(q(1500, -3, "1500m", "DecimalSI"))),
            ("2.50", Some(q(250, -2, "", "DecimalSI"))),
            ("-500m", Some(q(-500, -3, "-500m", "DecimalSI"))),
            ("5e-1", Some(q(5, -1, "", "DecimalExponent"))),
            // Finer than milli: rounded up, away from zero, the text dropped.
            ("0.0005", Some(q(1, -3, "", "DecimalSI"))),
            ("1500u", Some(q(2, -3, "", "DecimalSI"))),
            ("-0.0015", Some(q(-2, -3, "", "DecimalSI"))),
            // Held as an inf.Dec by Go: no struct we could print.
            ("1.5Ki", None),
            ("0.0000000001", None),
            ("1234567890123456789m", None),
            ("abc", None),
        ];
        for (raw, want) in cases {
            assert_eq!(&go_quantity(raw), want, "{raw}");
        }
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

    #[test]
    fn go_rendering() {
        assert_eq!(go_quote("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\x01é\"");
        assert_eq!(go_scopes(None), "[]core.ResourceQuotaScope(nil)");
        assert_eq!(go_scopes(Some(&[])), "[]core.ResourceQuotaScope{}");
        assert_eq!(go_string_slice(Some(&["a".into(), "b".into()])), "[]string{\"a\", \"b\"}");
        assert_eq!(
            go_scope_selector(&ScopeSelector { match_expressions: None }),
            "core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement(nil)}"
        );
    }
}
