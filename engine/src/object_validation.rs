//! What the API server validates on any object before admission, as far as a check can see
//! it: the name (per kind), `generateName`, the namespace, labels and annotations, and the
//! counts a controller turns into pods (replicas, parallelism, completions) must not be
//! negative. A failure is the server's 422 answer, with its message; quota is never asked.
//!
//! The server runs it after the mutating plugins and before the validating ones (the
//! registry's `Validate`); [`refusal`] is that step as the admission chain
//! ([`crate::admission::admit`]) calls it.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::objects::{Body, Object, Pod};
use crate::resource_names::{dns1123_label_errors, regex_error};
use crate::validation::{go_quote, validate_quota_metadata, FieldError};
use crate::version::Rules;

/// What the API server was started with that its validation reads and no API shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerFlags {
    /// `--allow-privileged`: privileged containers are allowed. Upstream's default is false;
    /// most distributions set true, which is the default here.
    pub allow_privileged: bool,
}

impl Default for ServerFlags {
    fn default() -> Self {
        ServerFlags { allow_privileged: true }
    }
}

/// The name rule a kind's `metadata.name` follows on the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// `NameIsDNSSubdomain`: most kinds.
    Subdomain,
    /// `NameIsDNSLabel`: Namespace.
    Label,
    /// `NameIsDNS1035Label`: Service (its name becomes a DNS label that must not start
    /// with a digit).
    Dns1035Label,
}

/// The quota validation of the release of `rules`: its wording, and its integer check.
pub fn value_style(rules: &Rules) -> crate::validation::ValueStyle {
    crate::validation::ValueStyle::for_rules(rules.invalid_values_as_json, rules.cross_namespace_pod_affinity_scope, rules.integer_values_exact)
}

/// Kinds whose validation we know (core, apps, batch and the cluster objects the check
/// reads). Others (RBAC roles allow `:` in names, custom resources have their own schemas)
/// are left to the server.
pub fn name_rule(group: &str, kind: &str) -> Option<NameRule> {
    match (group, kind) {
        ("", "Namespace") => Some(NameRule::Label),
        ("", "Service") => Some(NameRule::Dns1035Label),
        (
            "",
            "Pod"
            | "ConfigMap"
            | "Secret"
            | "PersistentVolumeClaim"
            | "ReplicationController"
            | "ResourceQuota"
            | "LimitRange"
            | "ServiceAccount"
            | "Endpoints",
        )
        | ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
        | ("batch", "Job" | "CronJob")
        | ("scheduling.k8s.io", "PriorityClass")
        | ("storage.k8s.io", "StorageClass")
        | ("node.k8s.io", "RuntimeClass") => Some(NameRule::Subdomain),
        _ => None,
    }
}

const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR_MSG: &str =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";

/// `IsDNS1035Label`: at most 63 characters, `[a-z]([-a-z0-9]*[a-z0-9])?`.
pub fn dns1035_label_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    let b = value.as_bytes();
    let ok = match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_lowercase()
                && (l.is_ascii_lowercase() || l.is_ascii_digit())
                && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        }
        _ => false,
    };
    if !ok {
        errs.push(regex_error(DNS1035_LABEL_ERR_MSG, DNS1035_LABEL_FMT, &["my-name", "abc-123"]));
    }
    errs
}

/// The server's field errors for `obj`, in its order (metadata, then spec); empty when it
/// would pass validation. ResourceQuotas have their own, fuller validation
/// ([`crate::validation::validate_resource_quota`]).
pub fn validate_object(obj: &Object) -> Vec<FieldError> {
    let Some(rule) = name_rule(&obj.type_info.group, &obj.type_info.kind) else { return vec![] };
    let m = &obj.meta;
    let generated = m.generate_name.is_some() && m.name.ends_with("<generated>");
    let meta = ObjectMeta {
        name: (!generated).then(|| m.name.clone()),
        generate_name: m.generate_name.clone(),
        namespace: m.namespace.clone(),
        labels: (!m.labels.is_empty()).then(|| m.labels.clone()),
        annotations: (!m.annotations.is_empty()).then(|| m.annotations.clone()),
        ..Default::default()
    };
    let mut errs = validate_quota_metadata(&meta);
    if rule != NameRule::Subdomain {
        // Same checks, but the name follows a stricter rule than the subdomain one above.
        errs.retain(|e| e.field != "metadata.name");
        let name_errors = |name: &str| match rule {
            NameRule::Label => dns1123_label_errors(name),
            _ => dns1035_label_errors(name),
        };
        let mut name_errs: Vec<FieldError> = Vec::new();
        if !generated {
            for msg in name_errors(&m.name) {
                name_errs.push(FieldError::invalid("metadata.name", go_quote(&m.name), msg));
            }
        }
        errs.splice(0..0, name_errs);
    }
    if let Body::Workload(w) = &obj.body {
        for (field, value) in &w.counts {
            if *value < 0 {
                errs.push(FieldError::invalid(field.clone(), value.to_string(), "must be greater than or equal to 0"));
            }
        }
    }
    errs
}

/// The server's refusal of a workload whose pod template its kind's validation refuses
/// ([`template_errors`]), as the API server words its 422: `Deployment.apps "web" is invalid:
/// <error>`, several as `[a, b]`.
pub fn invalid_template_message(obj: &Object, rules: &crate::version::Rules, flags: ServerFlags) -> Option<String> {
    let Body::Workload(w) = &obj.body else { return None };
    let errs = template_errors(&obj.type_info.kind, w, rules, flags);
    let kind = if obj.type_info.group.is_empty() { obj.type_info.kind.clone() } else { format!("{}.{}", obj.type_info.kind, obj.type_info.group) };
    let shown: Vec<String> = errs.iter().map(ToString::to_string).collect();
    match shown.as_slice() {
        [] => None,
        [one] => Some(format!("{kind} {} is invalid: {one}", go_quote(&obj.meta.name))),
        many => Some(format!("{kind} {} is invalid: [{}]", go_quote(&obj.meta.name), many.join(", "))),
    }
}

/// What the server's workload validation refuses in a pod template, in its order: a selector
/// the template's labels do not match, then the pod spec's rules at the template's path
/// ([`pod_spec_errors`]: requests above limits, pod-level resources below the containers'),
/// then the restart policy the kind allows (an empty one
/// is defaulted to `Always` first, so a Job must name `OnFailure` or `Never`), then
/// `activeDeadlineSeconds`, which only a Job's pods may have (docs/semantics.md §10). Ephemeral
/// containers are refused in any template (`ValidatePodTemplateSpec`, after the pod spec).
fn template_errors(kind: &str, w: &crate::objects::Workload, rules: &crate::version::Rules, flags: ServerFlags) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let path = &w.template_path;
    let policy = w.restart_policy.as_deref().unwrap_or("Always");
    match kind {
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" | "ReplicationController" => {
            if let Some(sel) = w.selector.as_ref().filter(|s| !selector_empty(s)) {
                if !selector_matches(sel, &w.template_meta.labels) {
                    let labels = if rules.invalid_values_as_json { json_string_map(&w.template_meta.labels) } else { go_string_map(&w.template_meta.labels) };
                    errs.push(FieldError::invalid(format!("{path}.metadata.labels"), labels, "`selector` does not match template `labels`"));
                }
            }
            errs.extend(pod_spec_errors(&w.template, &format!("{path}.spec"), rules, flags));
            errs.extend(ephemeral_in_template(w, rules));
            if policy != "Always" {
                errs.push(FieldError::not_supported(format!("{path}.spec.restartPolicy"), policy, &["Always"]));
            }
            if w.template.active_deadline_seconds.is_some() {
                // A Deployment's template is validated as its ReplicaSets' is.
                let owner = if kind == "Deployment" { "ReplicaSet" } else { kind };
                errs.push(FieldError::forbidden(format!("{path}.spec.activeDeadlineSeconds"), format!("activeDeadlineSeconds in {owner} is not Supported")));
            }
        }
        "Job" | "CronJob" => {
            errs.extend(pod_spec_errors(&w.template, &format!("{path}.spec"), rules, flags));
            errs.extend(ephemeral_in_template(w, rules));
            if policy != "OnFailure" && policy != "Never" {
                errs.push(FieldError::required(format!("{path}.spec.restartPolicy"), "valid values: \"OnFailure\", \"Never\""));
            }
        }
        _ => {}
    }
    errs
}

/// `ValidatePodTemplateSpec`: no template may hold ephemeral containers.
fn ephemeral_in_template(w: &crate::objects::Workload, rules: &Rules) -> Option<FieldError> {
    (rules.ephemeral_containers && !w.template.ephemeral_containers.is_empty())
        .then(|| FieldError::forbidden(format!("{}.spec.ephemeralContainers", w.template_path), "ephemeral containers not allowed in pod template"))
}

fn selector_empty(s: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector) -> bool {
    s.match_labels.as_ref().is_none_or(BTreeMap::is_empty) && s.match_expressions.as_ref().is_none_or(Vec::is_empty)
}

/// Whether a label selector selects these labels (`matchLabels` and every expression).
fn selector_matches(s: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let labels_ok = s.match_labels.iter().flatten().all(|(k, v)| labels.get(k) == Some(v));
    let exprs_ok = s.match_expressions.iter().flatten().all(|e| {
        let values = e.values.as_deref().unwrap_or_default();
        let value = labels.get(&e.key);
        match e.operator.as_str() {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    labels_ok && exprs_ok
}

/// A label map as JSON, as field errors print values from 1.33: `{"app":"web","tier":"db"}`.
fn json_string_map(m: &BTreeMap<String, String>) -> String {
    if m.is_empty() {
        return "null".to_string();
    }
    serde_json::to_string(m).unwrap_or_default()
}

/// A label map as Go's `%#v` prints it: `map[string]string{"app":"web", "tier":"db"}`.
fn go_string_map(m: &BTreeMap<String, String>) -> String {
    if m.is_empty() {
        return "map[string]string(nil)".to_string();
    }
    let items: Vec<String> = m.iter().map(|(k, v)| format!("{}:{}", go_quote(k), go_quote(v))).collect();
    format!("map[string]string{{{}}}", items.join(", "))
}

/// The refusal as kubectl prints the server's 422: `The Pod "Foo_Bar" is invalid: <error>`,
/// or one `\n* <error>` line per error when there are several.
pub fn render_invalid(kind: &str, name: &str, errors: &[FieldError]) -> String {
    let mut seen = BTreeMap::new();
    let errors: Vec<&FieldError> = errors.iter().filter(|e| seen.insert(e.to_string(), ()).is_none()).collect();
    match errors.as_slice() {
        [] => String::new(),
        [one] => format!("The {kind} {} is invalid: {one}", go_quote(name)),
        many => {
            let mut s = format!("The {kind} {} is invalid: ", go_quote(name));
            for e in many {
                s.push_str("\n* ");
                s.push_str(&e.to_string());
            }
            s
        }
    }
}

/// [`validate_object`] rendered, or `None` when the object is valid.
pub fn invalid_message(obj: &Object) -> Option<String> {
    let errors = validate_object(obj);
    (!errors.is_empty()).then(|| render_invalid(&obj.type_info.kind, &obj.meta.name, &errors))
}

/// What the server's update validation refuses before quota, for the kinds whose specs are
/// (mostly) immutable: a PersistentVolumeClaim's spec may change only in `resources.requests`
/// (and, from the VolumeAttributesClass GA, `volumeAttributesClassName`) and only once it is
/// bound; a ResourceClaim's spec not at all. What is compared is what quota reads of them
/// (the requested storage and class; the device requests). The server's message goes on with a
/// dump of the two specs, which is not reproduced: its first line is.
pub fn invalid_update(old: &Object, new: &Object, rules: &crate::version::Rules) -> Option<String> {
    match (&old.body, &new.body) {
        (Body::PersistentVolumeClaim(o), Body::PersistentVolumeClaim(n)) => {
            let class_changed = matches!((&o.storage_class_name, &n.storage_class_name), (Some(a), Some(b)) if a != b);
            let requests_changed = o.storage_request != n.storage_request;
            (class_changed || (requests_changed && !o.bound)).then(|| {
                let vac = if rules.volume_attributes_class_scope { " and volumeAttributesClassName" } else { "" };
                format!(
                    "PersistentVolumeClaim {:?} is invalid: spec: Forbidden: spec is immutable after creation except resources.requests{vac} for bound claims",
                    new.meta.name
                )
            })
        }
        (Body::ResourceClaim(o), Body::ResourceClaim(n)) if claim_defaulted(o) != claim_defaulted(n) => {
            let value = if rules.claim_update_value_null { "null".to_string() } else { claim_spec_value(n) };
            Some(format!("ResourceClaim.resource.k8s.io {:?} is invalid: spec: Invalid value: {value}: field is immutable", new.meta.name))
        }
        _ => None,
    }
}

/// A claim as the server stores it, so that a manifest re-applied unchanged compares equal to
/// it: an ask's `allocationMode` defaults to `ExactCount`, whose `count` defaults to 1.
fn claim_defaulted(c: &crate::objects::Claim) -> crate::objects::Claim {
    let ask = |a: &crate::objects::DeviceAsk| {
        let mut a = a.clone();
        if a.allocation_mode.is_empty() {
            a.allocation_mode = "ExactCount".into();
        }
        if a.allocation_mode == "ExactCount" && a.count == 0 {
            a.count = 1;
        }
        a
    };
    let mut c = c.clone();
    for r in &mut c.requests {
        r.exactly = r.exactly.as_ref().map(ask);
        r.first_available = r.first_available.iter().map(ask).collect();
    }
    c
}

/// A claim's spec as releases before 1.37 print it in the refusal of a changed spec: the API
/// server's internal type as JSON, Go field names in declaration order and absent fields as
/// `null`. Selectors, tolerations, capacity, constraints and config are not kept by the engine
/// and print as `null`; so does a `firstAvailable` list (its subrequests' names are not kept).
fn claim_spec_value(c: &crate::objects::Claim) -> String {
    let requests: Vec<String> = c
        .requests
        .iter()
        .map(|r| {
            let exactly = match &r.exactly {
                Some(a) => format!(
                    r#"{{"DeviceClassName":{},"Selectors":null,"AllocationMode":{},"Count":{},"AdminAccess":{},"Tolerations":null,"Capacity":null}}"#,
                    go_json(&a.device_class_name),
                    go_json(&a.allocation_mode),
                    if a.allocation_mode == "ExactCount" { a.count.max(1) } else { a.count },
                    if a.admin_access { "true" } else { "null" }
                ),
                None => "null".into(),
            };
            format!(r#"{{"Name":{},"Exactly":{exactly},"FirstAvailable":null}}"#, go_json(&r.name))
        })
        .collect();
    let requests = if requests.is_empty() { "null".to_string() } else { format!("[{}]", requests.join(",")) };
    format!(r#"{{"Devices":{{"Requests":{requests},"Constraints":null,"Config":null}}}}"#)
}

/// A string as Go's encoding/json writes it.
fn go_json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The rules of the server's pod spec validation that the engine replays, on a pod (`spec`
/// is `spec`) and on a workload's pod template alike (`spec` is the template's spec path,
/// `spec.template.spec`, `spec.jobTemplate.spec.template.spec`): one field error each, in the
/// server's order.
/// - A container's request above its limit (containers, then init containers; from 1.34 the
///   limit is named: `... cpu limit of 500m`). On a pod, mutation can cause it (a LimitRange
///   default limit below the request).
/// - Pod-level resources (from 1.34, when the release serves them) against the containers':
///   a pod-level request below the containers' aggregate request (containers and sidecars
///   summed, the largest init phase, zero values included), a pod-level hugepages limit below
///   their aggregate limit, a container's limit above the pod-level limit.
///
/// - A privileged container (`securityContext.privileged: true`, after its resources) where
///   the server runs without `--allow-privileged=true` ([`ServerFlags`]).
///
/// A template is validated as written (the API's defaulting of requests from limits is a
/// pod's, not a template's); a pod after defaulting and the mutating plugins.
pub fn pod_spec_errors(pod: &Pod, spec: &str, rules: &Rules, flags: ServerFlags) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let ephemeral: &[_] = if rules.ephemeral_containers { &pod.ephemeral_containers } else { &[] };
    let groups = [("containers", pod.containers.as_slice()), ("initContainers", pod.init_containers.as_slice()), ("ephemeralContainers", ephemeral)];
    // Container names are unique across every list (a policy or a webhook may add one twice).
    let mut names = std::collections::BTreeSet::new();
    for (field, containers) in groups {
        for (i, c) in containers.iter().enumerate() {
            if !names.insert(c.name.as_str()) {
                errors.push(FieldError::duplicate(format!("{spec}.{field}[{i}].name"), &c.name));
            }
            if c.image.is_empty() {
                errors.push(FieldError::required(format!("{spec}.{field}[{i}].image"), ""));
            }
            // Limits first, then each request: its value, then against its limit (the
            // server's order; within a list it walks a Go map, here in name order).
            errors.extend(fractional_integers(&c.limits, &format!("{spec}.{field}[{i}].resources.limits"), rules));
            for (k, req) in &c.requests {
                errors.extend(fractional_integers(&[(k.clone(), req.clone())].into(), &format!("{spec}.{field}[{i}].resources.requests"), rules));
                if let Some(lim) = c.limits.get(k) {
                    if req > lim {
                        let of = if rules.request_limit_message_names_limit { format!(" of {lim}") } else { String::new() };
                        errors.push(FieldError::invalid(
                            format!("{spec}.{field}[{i}].resources.requests"),
                            go_quote(&req.to_string()),
                            format!("must be less than or equal to {k} limit{of}"),
                        ));
                    }
                }
            }
            if c.privileged() && !flags.allow_privileged {
                errors.push(FieldError::forbidden(format!("{spec}.{field}[{i}].securityContext.privileged"), "disallowed by cluster policy"));
            }
        }
    }
    if let Some(name) = &pod.runtime_class_name {
        for msg in crate::resource_names::dns1123_subdomain_errors(name) {
            errors.push(FieldError::invalid(format!("{spec}.runtimeClassName"), go_quote(name), msg));
        }
    }
    if rules.pod_level_resources && (!pod.pod_requests.is_empty() || !pod.pod_limits.is_empty()) {
        errors.extend(pod_level_errors(pod, spec));
    }
    errors
}

/// `ValidateResourceQuantityValue` of a container's requests or limits (rounded up to
/// milli-units by API defaulting): an integer resource (an extended resource such as
/// `nvidia.com/gpu`) must be a whole number; before 1.38 its 64-bit milli value had to be a
/// multiple of 1000 (saturated here where the server's wrapped).
fn fractional_integers(list: &BTreeMap<String, crate::quantity::Quantity>, path: &str, rules: &Rules) -> Vec<FieldError> {
    list.iter()
        .filter(|(k, _)| crate::resource_names::is_integer_resource_name(k))
        .filter(|(_, v)| {
            let v = v.round_up(-3);
            if rules.integer_values_exact {
                !v.is_integer()
            } else {
                v.milli_value() % 1000 != 0
            }
        })
        .map(|(k, v)| FieldError::invalid(format!("{path}[{k}]"), go_quote(&v.round_up(-3).to_string()), crate::validation::reasons::NOT_INTEGER))
        .collect()
}

/// `validatePodResourceConsistency`: pod-level resources must cover the containers'. The
/// server walks Go maps, so several errors come in any order; here in resource-name order.
fn pod_level_errors(pod: &Pod, spec: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (k, containers) in crate::pod_totals::aggregate(pod, |c| &c.requests) {
        if let Some(at_pod) = pod.pod_requests.get(&k).filter(|p| containers > **p) {
            errors.push(FieldError::invalid(
                format!("{spec}.resources.requests[{k}]"),
                go_quote(&at_pod.to_string()),
                format!("must be greater than or equal to aggregate container requests of {containers}"),
            ));
        }
    }
    for (k, containers) in crate::pod_totals::aggregate(pod, |c| &c.limits) {
        if !k.starts_with("hugepages-") {
            continue;
        }
        if let Some(at_pod) = pod.pod_limits.get(&k).filter(|p| containers > **p) {
            errors.push(FieldError::invalid(
                format!("{spec}.resources.limits[{k}]"),
                go_quote(&at_pod.to_string()),
                format!("must be greater than or equal to aggregate container limits of {containers}"),
            ));
        }
    }
    for (i, c) in pod.containers.iter().enumerate() {
        for (k, limit) in &c.limits {
            if let Some(at_pod) = pod.pod_limits.get(k).filter(|p| limit > *p) {
                // The server's path, as it builds it: the container under `resources`.
                errors.push(FieldError::invalid(
                    format!("{spec}.resources.containers[{i}][{k}].limits"),
                    go_quote(&limit.to_string()),
                    format!("must be less than or equal to pod limits of {at_pod}"),
                ));
            }
        }
    }
    errors
}

/// A pod's field validation after mutation ([`pod_spec_errors`] at `spec`; on a create, no
/// ephemeral container): the server answers 422 before quota (`Pod "p" is invalid: ...`).
pub fn validate_pod_requests(pod: &Pod, name: &str, rules: &Rules, flags: ServerFlags, create: bool) -> Result<(), String> {
    let mut errors = pod_spec_errors(pod, "spec", rules, flags);
    if create && rules.ephemeral_containers && !pod.ephemeral_containers.is_empty() {
        errors.push(FieldError::forbidden("spec.ephemeralContainers", "cannot be set on create"));
    }
    let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
    match errors.len() {
        0 => Ok(()),
        1 => Err(format!("Pod {name:?} is invalid: {}", errors[0])),
        _ => Err(format!("Pod {name:?} is invalid: [{}]", errors.join(", "))),
    }
}

/// Validation of a pod update: before 1.33 a running pod's resources cannot change (no
/// in-place resize); the server's message.
pub fn validate_pod_update(old: &Pod, new: &Pod, name: &str, rules: &Rules) -> Result<(), String> {
    if rules.pod_resize || !crate::pod_totals::is_resize(old, new) {
        return Ok(());
    }
    let fields = if rules.pod_update_grace_period {
        "`spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
    } else {
        "`spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds` or `spec.tolerations` (only additions to existing tolerations)"
    };
    Err(format!("Pod {name:?} is invalid: spec: Forbidden: pod updates may not change fields other than {fields}"))
}

/// The label a namespace needs for its ResourceClaims to ask for admin access to devices.
pub const ADMIN_ACCESS_LABEL: &str = "resource.kubernetes.io/admin-access";

/// A ResourceClaim asking for admin access in a namespace without [`ADMIN_ACCESS_LABEL`] set to
/// `true`: the server's refusal. `labels` are the namespace's (`None`: unknown, not decided).
pub fn admin_access_refusal(claim: &Object, labels: Option<&BTreeMap<String, String>>) -> Option<String> {
    let Body::ResourceClaim(c) = &claim.body else { return None };
    let labels = labels?;
    if labels.get(ADMIN_ACCESS_LABEL).is_some_and(|v| v == "true") {
        return None;
    }
    let i = c.requests.iter().position(|r| r.exactly.as_ref().is_some_and(|a| a.admin_access))?;
    Some(format!(
        "ResourceClaim.resource.k8s.io {:?} is invalid: spec.devices.requests[{i}].adminAccess: Forbidden: admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the containing namespace",
        claim.meta.name
    ))
}

/// The validation step of a request, in the order the checks are made here: the document as
/// sent (its name, labels, template or quota spec: not for objects a controller makes, whose
/// names are the controller's), then an update's immutable fields or a claim's admin access,
/// then a pod's requests against its limits and an update's resize. The server's 422 message.
pub fn refusal(
    obj: &Object,
    old: Option<&Object>,
    namespace_labels: Option<&BTreeMap<String, String>>,
    rules: &Rules,
    flags: ServerFlags,
    as_sent: bool,
) -> Option<String> {
    if as_sent {
        if let Some(message) = document_refusal(obj, rules, flags) {
            return Some(message);
        }
    }
    let invalid = match old {
        Some(prev) => invalid_update(prev, obj, rules),
        None if rules.dra => admin_access_refusal(obj, namespace_labels),
        None => None,
    };
    if invalid.is_some() {
        return invalid;
    }
    let Body::Pod(p) = &obj.body else { return None };
    if let Err(message) = validate_pod_requests(p, &obj.meta.name, rules, flags, old.is_none()) {
        return Some(message);
    }
    match old.map(|o| &o.body) {
        Some(Body::Pod(prev)) => validate_pod_update(prev, p, &obj.meta.name, rules).err(),
        _ => None,
    }
}

/// The document as sent: a ResourceQuota's spec (its status discarded first, as the server
/// does for a new quota), the scopes the release supports; any other object's name,
/// namespace, labels, negative counts and template.
fn document_refusal(obj: &Object, rules: &Rules, flags: ServerFlags) -> Option<String> {
    match &obj.body {
        Body::ResourceQuota(q) => {
            let mut raw = q.raw.as_deref().cloned().unwrap_or_default();
            raw.status = None;
            let style = value_style(rules);
            let errors = crate::validation::validate_resource_quota(&raw, style);
            (!errors.is_empty()).then(|| crate::validation::render_server_message(&obj.meta.name, &errors)).or_else(|| {
                crate::version::unsupported_scope(rules, &q.scopes, q.scope_selector.as_deref())
                    .map(|e| format!("ResourceQuota {:?} is invalid: {e}", obj.meta.name))
            })
        }
        _ => invalid_message(obj).or_else(|| invalid_template_message(obj, rules, flags)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::Container;
    use crate::quantity::Quantity;

    fn pod_with(req: &[(&str, &str)], lim: &[(&str, &str)]) -> Pod {
        let rl = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap())).collect();
        let c = Container { name: "app".into(), image: "nginx".into(), requests: rl(req), limits: rl(lim), ..Container::default() };
        Pod { containers: vec![c].into(), ..Pod::default() }
    }

    #[test]
    fn a_container_without_an_image_is_refused_before_quota() {
        let mut pod = pod_with(&[("cpu", "1")], &[]);
        let mut init = pod.containers[0].clone();
        init.name = "init".into();
        init.image.clear();
        pod.init_containers = vec![init].into();
        let rules = Rules::for_version(crate::version::KubeVersion::new(1, 37));
        assert_eq!(
            validate_pod_requests(&pod, "p", &rules, ServerFlags::default(), true).unwrap_err(),
            "Pod \"p\" is invalid: spec.initContainers[0].image: Required value"
        );
    }

    #[test]
    fn requests_above_limits_are_invalid() {
        let ok = pod_with(&[("cpu", "1")], &[("cpu", "1")]);
        let v120 = Rules::for_version(crate::version::KubeVersion::new(1, 20));
        assert!(validate_pod_requests(&ok, "p", &v120, ServerFlags::default(), true).is_ok());
        let bad = pod_with(&[("cpu", "2"), ("memory", "1Gi")], &[("cpu", "500m"), ("memory", "2Gi")]);
        assert_eq!(
            validate_pod_requests(&bad, "p", &v120, ServerFlags::default(), true).unwrap_err(),
            "Pod \"p\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit"
        );
    }
}
