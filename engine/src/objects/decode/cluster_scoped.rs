//! Cluster-scoped classes (PriorityClass, StorageClass, RuntimeClass) and the DRA kinds
//! (ResourceClaim, ResourceClaimTemplate, DeviceClass); any other group's kind by its
//! metadata alone.

use super::*;

fn int_field(v: &Value, key: &str, path: &str) -> FieldResult<i64> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(x) => x.as_i64().ok_or_else(|| (format!("{path}.{key}"), format!("invalid value {x}: expected an integer"))),
    }
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

fn device_ask(v: &Value, path: &str) -> FieldResult<DeviceAsk> {
    let class = str_field(v, "deviceClassName");
    if class.is_empty() {
        return Err((format!("{path}.deviceClassName"), "Required value".into()));
    }
    let mode = str_field(v, "allocationMode");
    let mode = if mode.is_empty() { "ExactCount".to_string() } else { mode };
    if mode != "ExactCount" && mode != "All" {
        return Err((format!("{path}.allocationMode"), format!("Unsupported value: {mode:?}: supported values: \"All\", \"ExactCount\"")));
    }
    Ok(DeviceAsk {
        device_class_name: class,
        allocation_mode: mode,
        count: int_field(v, "count", path)?,
        admin_access: v.get("adminAccess").and_then(Value::as_bool) == Some(true),
    })
}

/// A claim spec (`spec` of a ResourceClaim, `spec.spec` of a template), in the v1 and v1beta2
/// shape (`exactly` / `firstAvailable`) or the v1beta1 one (the ask inline in the request).
fn claim_spec(spec: &Value, path: &str) -> FieldResult<Claim> {
    let mut requests = Vec::new();
    let list = spec.get("devices").and_then(|d| d.get("requests")).and_then(Value::as_array).cloned().unwrap_or_default();
    for (i, r) in list.iter().enumerate() {
        let p = format!("{path}.devices.requests[{i}]");
        let first: Vec<DeviceAsk> = r
            .get("firstAvailable")
            .and_then(Value::as_array)
            .map(|a| a.iter().enumerate().map(|(j, s)| device_ask(s, &format!("{p}.firstAvailable[{j}]"))).collect::<FieldResult<Vec<_>>>())
            .transpose()?
            .unwrap_or_default();
        let exactly = if let Some(e) = r.get("exactly") {
            Some(device_ask(e, &format!("{p}.exactly"))?)
        } else if first.is_empty() {
            Some(device_ask(r, &p)?)
        } else {
            None
        };
        requests.push(DeviceRequest { name: str_field(r, "name"), exactly, first_available: first });
    }
    Ok(Claim { requests })
}

impl Doc<'_> {
    /// PriorityClass, StorageClass, RuntimeClass and the DRA kinds; any other group's kind
    /// is read for its metadata alone.
    pub(super) fn cluster_scoped(&self, group: &str, kind: &str) -> FieldResult<(Meta, Body)> {
        let v = self.v;
        Ok(match (group, kind) {
            ("scheduling.k8s.io", "PriorityClass") => {
                let pc: k8s_openapi::api::scheduling::v1::PriorityClass = typed(v)?;
                (meta(pc.metadata), Body::PriorityClass { global_default: pc.global_default.unwrap_or(false), value: pc.value.unwrap_or(0) })
            }
            ("storage.k8s.io", "StorageClass") => {
                let m = self.generic_meta()?;
                let is_default = ["storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"]
                    .iter()
                    .any(|a| m.annotations.get(*a).is_some_and(|v| v == "true"));
                let allow_volume_expansion = v.get("allowVolumeExpansion").and_then(serde_json::Value::as_bool).unwrap_or(false);
                (m, Body::StorageClass { is_default, allow_volume_expansion })
            }
            ("node.k8s.io", "RuntimeClass") => {
                let rc: k8s_openapi::api::node::v1::RuntimeClass = typed(v)?;
                let overhead = resource_list(rc.overhead.as_ref().map_or(&None, |o| &o.pod_fixed), &"overhead.podFixed", true)?;
                (meta(rc.metadata), Body::RuntimeClass { overhead })
            }
            ("resource.k8s.io", "ResourceClaim") => {
                let spec = v.get("spec").cloned().unwrap_or(Value::Null);
                (self.generic_meta()?, Body::ResourceClaim(claim_spec(&spec, "spec")?))
            }
            ("resource.k8s.io", "ResourceClaimTemplate") => {
                let spec = v.get("spec").and_then(|s| s.get("spec")).cloned().unwrap_or(Value::Null);
                (self.generic_meta()?, Body::ResourceClaimTemplate(claim_spec(&spec, "spec.spec")?))
            }
            ("resource.k8s.io", "DeviceClass") => {
                let ext = v.get("spec").and_then(|s| s.get("extendedResourceName")).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
                (self.generic_meta()?, Body::DeviceClass { extended_resource_name: ext })
            }
            ("admissionregistration.k8s.io", "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration") => {
                let mutating = kind == "MutatingWebhookConfiguration";
                let config = webhook_configuration(v, mutating, self.ti.api_version.ends_with("/v1beta1"))?;
                (self.generic_meta()?, Body::WebhookConfiguration(Box::new(config)))
            }
            ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy" | "MutatingAdmissionPolicy") => {
                (self.generic_meta()?, Body::AdmissionPolicy(Box::new(policy(v, kind == "MutatingAdmissionPolicy")?)))
            }
            ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding" | "MutatingAdmissionPolicyBinding") => {
                (self.generic_meta()?, Body::PolicyBinding(Box::new(binding(v, kind == "MutatingAdmissionPolicyBinding")?)))
            }
            _ => self.other()?,
        })
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default()
}

/// A label selector at `path` (`None`: absent, every label set).
fn label_selector(v: Option<&Value>, path: &str) -> FieldResult<Option<LabelSelector>> {
    let Some(v) = v.filter(|v| !v.is_null()) else { return Ok(None) };
    let mut sel = LabelSelector::default();
    if let Some(m) = v.get("matchLabels").and_then(Value::as_object) {
        for (k, x) in m {
            let x = x.as_str().ok_or_else(|| (format!("{path}.matchLabels.{k}"), "must be a string".to_string()))?;
            sel.match_labels.insert(k.clone(), x.to_string());
        }
    }
    for (i, e) in v.get("matchExpressions").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let key = e.get("key").and_then(Value::as_str).ok_or_else(|| (format!("{path}.matchExpressions[{i}].key"), "Required value".to_string()))?;
        let op = e.get("operator").and_then(Value::as_str).unwrap_or_default();
        sel.match_expressions.push((key.to_string(), op.to_string(), strings(e.get("values"))));
    }
    Ok(Some(sel))
}

/// A webhook configuration's webhooks, with their API version's defaults (v1: failurePolicy
/// Fail, matchPolicy Equivalent; v1beta1: Ignore, Exact).
fn webhook_configuration(v: &Value, mutating: bool, beta: bool) -> FieldResult<webhooks::WebhookConfiguration> {
    let mut out = webhooks::WebhookConfiguration { mutating, webhooks: Vec::new() };
    for (i, w) in v.get("webhooks").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let path = format!("webhooks[{i}]");
        let text = |k: &str, default: &str| w.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).unwrap_or(default).to_string();
        let rules = named_rules(w.get("rules")).into_iter().map(|n| n.rule).collect();
        out.webhooks.push(webhooks::Webhook {
            name: text("name", ""),
            rules,
            namespace_selector: label_selector(w.get("namespaceSelector"), &format!("{path}.namespaceSelector"))?,
            object_selector: label_selector(w.get("objectSelector"), &format!("{path}.objectSelector"))?,
            match_conditions: w
                .get("matchConditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| c.get("name").and_then(Value::as_str).unwrap_or_default().to_string())
                .collect(),
            failure_policy: text("failurePolicy", if beta { "Ignore" } else { "Fail" }),
            match_policy: text("matchPolicy", if beta { "Exact" } else { "Equivalent" }),
            reinvocation_policy: text("reinvocationPolicy", "Never"),
        });
    }
    Ok(out)
}

fn text(v: &Value, key: &str, default: &str) -> String {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).unwrap_or(default).to_string()
}

fn named_rules(v: Option<&Value>) -> Vec<policies::NamedRule> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| policies::NamedRule {
            rule: webhooks::WebhookRule {
                operations: strings(r.get("operations")),
                api_groups: strings(r.get("apiGroups")),
                api_versions: strings(r.get("apiVersions")),
                resources: strings(r.get("resources")),
                scope: text(r, "scope", "*"),
            },
            resource_names: strings(r.get("resourceNames")),
        })
        .collect()
}

fn match_resources(v: Option<&Value>, path: &str) -> FieldResult<Option<policies::MatchResources>> {
    let Some(v) = v.filter(|v| !v.is_null()) else { return Ok(None) };
    Ok(Some(policies::MatchResources {
        namespace_selector: label_selector(v.get("namespaceSelector"), &format!("{path}.namespaceSelector"))?,
        object_selector: label_selector(v.get("objectSelector"), &format!("{path}.objectSelector"))?,
        resource_rules: named_rules(v.get("resourceRules")),
        exclude_resource_rules: named_rules(v.get("excludeResourceRules")),
        match_policy: text(v, "matchPolicy", "Equivalent"),
    }))
}

fn named_list(v: Option<&Value>) -> Vec<policies::Named> {
    v.and_then(Value::as_array).into_iter().flatten().map(|n| policies::Named { name: text(n, "name", ""), expression: text(n, "expression", "") }).collect()
}

/// A ValidatingAdmissionPolicy's or MutatingAdmissionPolicy's spec, with the API's defaults
/// (failurePolicy Fail, matchPolicy Equivalent).
fn policy(v: &Value, mutating: bool) -> FieldResult<policies::Policy> {
    let spec = v.get("spec").unwrap_or(&Value::Null);
    let param_kind = spec.get("paramKind").filter(|p| !p.is_null()).map(|p| (text(p, "apiVersion", ""), text(p, "kind", "")));
    let validations = spec
        .get("validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|x| policies::Validation {
            expression: text(x, "expression", ""),
            message: text(x, "message", ""),
            message_expression: text(x, "messageExpression", ""),
            reason: text(x, "reason", ""),
        })
        .collect();
    let mut mutations = Vec::new();
    for (i, m) in spec.get("mutations").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let expr = |k: &str| m.get(k).and_then(|a| a.get("expression")).and_then(Value::as_str).map(str::to_string);
        match (text(m, "patchType", "").as_str(), expr("applyConfiguration"), expr("jsonPatch")) {
            ("ApplyConfiguration", Some(e), _) => mutations.push(policies::Mutation::ApplyConfiguration(e)),
            ("JSONPatch", _, Some(e)) => mutations.push(policies::Mutation::JsonPatch(e)),
            (t, _, _) => {
                return Err((
                    format!("spec.mutations[{i}].patchType"),
                    format!("Unsupported value: {t:?}: supported values: \"ApplyConfiguration\", \"JSONPatch\""),
                ))
            }
        }
    }
    Ok(policies::Policy {
        mutating,
        param_kind,
        match_constraints: match_resources(spec.get("matchConstraints"), "spec.matchConstraints")?.unwrap_or_default(),
        match_conditions: named_list(spec.get("matchConditions")),
        variables: named_list(spec.get("variables")),
        failure_policy: text(spec, "failurePolicy", "Fail"),
        validations,
        mutations,
        reinvocation_policy: text(spec, "reinvocationPolicy", "Never"),
    })
}

/// A policy binding's spec.
fn binding(v: &Value, mutating: bool) -> FieldResult<policies::Binding> {
    let spec = v.get("spec").unwrap_or(&Value::Null);
    let param_ref = match spec.get("paramRef").filter(|p| !p.is_null()) {
        None => None,
        Some(p) => Some(policies::ParamRef {
            name: text(p, "name", ""),
            namespace: text(p, "namespace", ""),
            selector: label_selector(p.get("selector"), "spec.paramRef.selector")?,
            parameter_not_found_action: text(p, "parameterNotFoundAction", "Deny"),
        }),
    };
    Ok(policies::Binding {
        mutating,
        policy_name: text(spec, "policyName", ""),
        param_ref,
        match_resources: match_resources(spec.get("matchResources"), "spec.matchResources")?,
        validation_actions: strings(spec.get("validationActions")),
    })
}
