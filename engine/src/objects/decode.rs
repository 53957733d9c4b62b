//! JSON documents into the typed models: through k8s-openapi's types (so structural
//! mistakes carry their JSON path), every quantity parsed exactly, every field error named.

use super::*;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::manifest::{Document, InputError};
use crate::quantity::Quantity;
use crate::resources::ResourceList;

type FieldResult<T> = Result<T, (String, String)>;

/// A document as a k8s-openapi type; on failure, the field path and what is wrong with it.
/// Tracking the path costs every document (8% of a `--quiet` check of 10,000 documents), so
/// it is done only to explain a failure: the second, tracked pass meets the same first error.
fn typed<T: DeserializeOwned>(value: &Value) -> FieldResult<T> {
    if let Ok(t) = T::deserialize(value) {
        return Ok(t);
    }
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let path = e.path().to_string();
        (if path == "." { String::new() } else { path }, type_message(&e.into_inner().to_string()))
    })
}

/// serde's "invalid type" in the words of a field that wants a whole number: a YAML float
/// reaches the decoder as kubectl sends it (text such as `1.5`), JSON as a number.
fn type_message(raw: &str) -> String {
    let integer =
        [", expected i32", ", expected i64", ", expected u32", ", expected u64", ", expected i16", ", expected u16", ", expected u8", ", expected i8"];
    if let Some(rest) = raw.strip_prefix("invalid type: ") {
        if let Some(got) = integer.iter().find_map(|suffix| rest.strip_suffix(suffix)) {
            let shown = got.strip_prefix("string ").or_else(|| got.strip_prefix("floating point ")).unwrap_or(got).trim_matches(['"', '`']);
            return format!("must be an integer, got {shown}");
        }
    }
    if let Some(rest) = raw.strip_prefix("invalid value: integer `") {
        if let Some((n, _)) = rest.split_once('`') {
            return format!("{n} is out of range for this integer field");
        }
    }
    raw.to_string()
}

/// A field's path, written out only when there is an error to name it in.
type Path<'a> = &'a dyn std::fmt::Display;

fn quantity(q: &K8sQuantity, path: Path<'_>) -> FieldResult<Quantity> {
    Quantity::parse(&q.0).map_err(|e| (path.to_string(), format!("invalid quantity {:?}: {e}", q.0)))
}

/// Parses a resource list, rounding every value up to milli as the API server's defaulting
/// (`SetDefaults_ResourceList`) does when `round_to_milli`.
pub fn resource_list(list: &Option<BTreeMap<String, K8sQuantity>>, path: Path<'_>, round_to_milli: bool) -> FieldResult<ResourceList> {
    let mut out = ResourceList::new();
    for (k, v) in list.iter().flatten() {
        let q = quantity(v, &format_args!("{path}.{k}"))?;
        out.insert(k.clone(), if round_to_milli { q.round_up(-3) } else { q });
    }
    Ok(out)
}

/// An object's metadata, taken over from the decoded object (nothing copied).
fn meta(m: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Meta {
    let name = match (m.name, &m.generate_name) {
        (Some(n), _) if !n.is_empty() => n,
        (_, Some(g)) => format!("{g}<generated>"),
        _ => String::new(),
    };
    Meta {
        name,
        generate_name: m.generate_name,
        namespace: m.namespace.filter(|n| !n.is_empty()),
        labels: m.labels.unwrap_or_default(),
        annotations: m.annotations.unwrap_or_default(),
        resource_version: m.resource_version.filter(|v| !v.is_empty()),
        creation_timestamp: m.creation_timestamp.map(|t| t.0.to_string()),
        controller: m.owner_references.into_iter().flatten().find(|r| r.controller == Some(true)).map(|r| (r.kind, r.name)),
        too_large: false,
    }
}

fn container(c: &core::Container, path: Path<'_>) -> FieldResult<Container> {
    if c.name.is_empty() {
        return Err((format!("{path}.name"), "Required value: every container needs a name".into()));
    }
    let (requests, limits) = c.resources.as_ref().map_or((&None, &None), |r| (&r.requests, &r.limits));
    Ok(Container {
        name: c.name.clone(),
        requests: resource_list(requests, &format_args!("{path}.resources.requests"), true)?,
        limits: resource_list(limits, &format_args!("{path}.resources.limits"), true)?,
        sidecar: c.restart_policy.as_deref() == Some("Always"),
        image: c.image.clone().unwrap_or_default(),
        security: super::security::container(c),
    })
}

/// What the engine keeps of an ephemeral container: its name, image and security settings.
fn ephemeral_container(c: &core::EphemeralContainer) -> Container {
    Container { name: c.name.clone(), image: c.image.clone().unwrap_or_default(), security: super::security::ephemeral(c), ..Container::default() }
}

fn affinity_term_is_cross_namespace(t: &core::PodAffinityTerm) -> bool {
    t.namespaces.as_ref().is_some_and(|n| !n.is_empty()) || t.namespace_selector.is_some()
}

fn cross_namespace_affinity(a: &Option<core::Affinity>) -> bool {
    let Some(a) = a else { return false };
    let required = |r: &Option<Vec<core::PodAffinityTerm>>| r.iter().flatten().any(affinity_term_is_cross_namespace);
    let preferred = |p: &Option<Vec<core::WeightedPodAffinityTerm>>| p.iter().flatten().any(|w| affinity_term_is_cross_namespace(&w.pod_affinity_term));
    let aff = a.pod_affinity.as_ref().is_some_and(|p| {
        required(&p.required_during_scheduling_ignored_during_execution) || preferred(&p.preferred_during_scheduling_ignored_during_execution)
    });
    let anti = a.pod_anti_affinity.as_ref().is_some_and(|p| {
        required(&p.required_during_scheduling_ignored_during_execution) || preferred(&p.preferred_during_scheduling_ignored_during_execution)
    });
    aff || anti
}

/// The quota-relevant parts of a pod spec; `path` is the JSON path of the spec.
pub fn pod_spec(spec: &core::PodSpec, path: &str) -> FieldResult<Pod> {
    lean_pod_spec(spec, path, None)
}

/// Container lists past this length are decoded one container at a time: k8s-openapi's
/// `Container` takes about 2 KB however little the manifest says, so a Pod of 100,000
/// containers held 270 MB of them at once before the engine kept its 100 bytes of each.
const MANY_CONTAINERS: usize = 1000;

/// A pod spec's container lists decoded one container at a time ([`long_container_lists`]).
struct TakenContainers {
    containers: Vec<Container>,
    init_containers: Vec<Container>,
    /// `name=image` of each, init containers first (a workload's rollout compares them).
    images: Vec<String>,
}

/// When a pod spec (at the JSON `pointer` in `v`, named `path` in errors) has a container
/// list longer than [`MANY_CONTAINERS`]: a copy of `v` with both lists empty, and the lists
/// decoded one container at a time, each checked as the whole object would have been.
fn long_container_lists(v: &Value, pointer: &str, path: &str) -> FieldResult<Option<(Value, TakenContainers)>> {
    let Some(spec) = v.pointer(pointer) else { return Ok(None) };
    let len = |k: &str| spec.get(k).and_then(Value::as_array).map_or(0, Vec::len);
    if len("containers") <= MANY_CONTAINERS && len("initContainers") <= MANY_CONTAINERS {
        return Ok(None);
    }
    let mut taken = TakenContainers { containers: Vec::new(), init_containers: Vec::new(), images: Vec::new() };
    for (field, out) in [("initContainers", &mut taken.init_containers), ("containers", &mut taken.containers)] {
        for (i, c) in spec.get(field).and_then(Value::as_array).into_iter().flatten().enumerate() {
            let at = format!("{path}.{field}[{i}]");
            let c: core::Container = typed(c).map_err(|(p, e)| (if p.is_empty() { at.clone() } else { format!("{at}.{p}") }, e))?;
            out.push(container(&c, &at)?);
            taken.images.push(format!("{}={}", c.name, c.image.unwrap_or_default()));
        }
    }
    let keys: Vec<&str> = pointer.split('/').skip(1).collect();
    Ok(Some((without_container_lists(v, &keys), taken)))
}

/// A copy of `v` in which the object at `keys` has empty container lists (the lists are
/// never copied).
fn without_container_lists(v: &Value, keys: &[&str]) -> Value {
    let Value::Object(map) = v else { return v.clone() };
    let out = map
        .iter()
        .map(|(k, x)| match keys.split_first() {
            Some((first, rest)) if k == first => (k.clone(), without_container_lists(x, rest)),
            None if k == "containers" || k == "initContainers" => (k.clone(), Value::Array(Vec::new())),
            _ => (k.clone(), x.clone()),
        })
        .collect();
    Value::Object(out)
}

/// [`pod_spec`], with container lists already decoded when they were long.
fn lean_pod_spec(spec: &core::PodSpec, path: &str, taken: Option<TakenContainers>) -> FieldResult<Pod> {
    let (containers, init_containers) = match taken {
        Some(t) => (t.containers, t.init_containers),
        None => (
            spec.containers.iter().enumerate().map(|(i, c)| container(c, &format_args!("{path}.containers[{i}]"))).collect::<FieldResult<Vec<_>>>()?,
            spec.init_containers
                .iter()
                .flatten()
                .enumerate()
                .map(|(i, c)| container(c, &format_args!("{path}.initContainers[{i}]")))
                .collect::<FieldResult<Vec<_>>>()?,
        ),
    };
    let (requests, limits) = spec.resources.as_ref().map_or((&None, &None), |r| (&r.requests, &r.limits));
    let (mut containers, mut init_containers) = (containers, init_containers);
    if spec.host_network == Some(true) {
        super::security::default_host_network_ports(&mut containers, &spec.containers);
        super::security::default_host_network_ports(&mut init_containers, spec.init_containers.as_deref().unwrap_or_default());
    }
    Ok(Pod {
        containers,
        init_containers,
        ephemeral_containers: spec.ephemeral_containers.iter().flatten().map(ephemeral_container).collect(),
        overhead: resource_list(&spec.overhead, &format_args!("{path}.overhead"), true)?,
        pod_requests: resource_list(requests, &format_args!("{path}.resources.requests"), true)?,
        pod_limits: resource_list(limits, &format_args!("{path}.resources.limits"), true)?,
        pod_level_shared: Vec::new(),
        priority_class_name: spec.priority_class_name.clone().unwrap_or_default(),
        service_account_name: spec.service_account_name.clone().filter(|s| !s.is_empty()).or_else(|| spec.service_account.clone()).unwrap_or_default(),
        active_deadline_seconds: spec.active_deadline_seconds,
        runtime_class_name: spec.runtime_class_name.clone().filter(|s| !s.is_empty()),
        cross_namespace_affinity: cross_namespace_affinity(&spec.affinity),
        phase: None,
        status_qos_class: None,
        resource_claim_templates: spec
            .resource_claims
            .iter()
            .flatten()
            .filter_map(|c| c.resource_claim_template_name.clone().filter(|t| !t.is_empty()).map(|t| (c.name.clone(), t)))
            .collect(),
        container_statuses: BTreeMap::new(),
        resize_infeasible: false,
        claims_created: vec![],
        security: super::security::pod(spec),
    })
}

/// The container statuses' resources of a pod object (for in-place resize).
fn pod_status(status: &core::PodStatus, path: &str) -> FieldResult<(BTreeMap<String, ContainerStatusResources>, bool)> {
    let mut out = BTreeMap::new();
    for (field, list) in [("containerStatuses", &status.container_statuses), ("initContainerStatuses", &status.init_container_statuses)] {
        for (i, cs) in list.iter().flatten().enumerate() {
            let p = format!("{path}.{field}[{i}]");
            let (requests, limits) = cs.resources.as_ref().map_or((&None, &None), |r| (&r.requests, &r.limits));
            let found = ContainerStatusResources {
                requests: resource_list(requests, &format_args!("{p}.resources.requests"), true)?,
                limits: resource_list(limits, &format_args!("{p}.resources.limits"), true)?,
                allocated: resource_list(&cs.allocated_resources, &format_args!("{p}.allocatedResources"), true)?,
                has_resources: cs.resources.is_some(),
                has_requests: requests.is_some(),
                has_limits: limits.is_some(),
                has_allocated: cs.allocated_resources.is_some(),
            };
            // A name is looked up among the containers' statuses first.
            out.entry(cs.name.clone()).or_insert(found);
        }
    }
    // The first PodResizePending condition says whether the resize is Infeasible.
    let infeasible = status.conditions.iter().flatten().find(|c| c.type_ == "PodResizePending").is_some_and(|c| c.reason.as_deref() == Some("Infeasible"));
    Ok((out, infeasible))
}

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

fn pvc(spec: &Option<core::PersistentVolumeClaimSpec>, status: &Option<core::PersistentVolumeClaimStatus>, path: &str) -> FieldResult<Pvc> {
    let spec = spec.clone().unwrap_or_default();
    let requests = resource_list(spec.resources.as_ref().map_or(&None, |r| &r.requests), &format_args!("{path}.resources.requests"), true)?;
    let status = status.clone().unwrap_or_default();
    let allocated = resource_list(&status.allocated_resources, &"status.allocatedResources", true)?;
    Ok(Pvc {
        storage_class_name: spec.storage_class_name.clone(),
        storage_request: requests.get("storage").cloned(),
        allocated_storage: allocated.get("storage").cloned(),
        volume_attributes_class_name: spec.volume_attributes_class_name.clone().filter(|s| !s.is_empty()),
        current_volume_attributes_class_name: status.current_volume_attributes_class_name.clone().filter(|s| !s.is_empty()),
        target_volume_attributes_class_name: status
            .modify_volume_status
            .as_ref()
            .and_then(|m| m.target_volume_attributes_class_name.clone())
            .filter(|s| !s.is_empty()),
        bound: status.phase.as_deref() == Some("Bound"),
    })
}

/// Applies the API server's LimitRangeItem defaulting (type Container): default limit from
/// max, default request from default limit, then from min.
fn limit_range_item(item: &core::LimitRangeItem, path: &str) -> FieldResult<LimitRangeItem> {
    let mut out = LimitRangeItem {
        type_: item.type_.clone(),
        default: resource_list(&item.default, &format_args!("{path}.default"), true)?,
        default_request: resource_list(&item.default_request, &format_args!("{path}.defaultRequest"), true)?,
        max: resource_list(&item.max, &format_args!("{path}.max"), true)?,
        min: resource_list(&item.min, &format_args!("{path}.min"), true)?,
        max_limit_request_ratio: resource_list(&item.max_limit_request_ratio, &format_args!("{path}.maxLimitRequestRatio"), true)?,
    };
    if out.type_ == "Container" {
        for (k, v) in &out.max {
            out.default.entry(k.clone()).or_insert_with(|| v.clone());
        }
        for (k, v) in &out.default {
            out.default_request.entry(k.clone()).or_insert_with(|| v.clone());
        }
        for (k, v) in &out.min {
            out.default_request.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    Ok(out)
}

fn quota(rq: core::ResourceQuota) -> FieldResult<ResourceQuota> {
    let spec = rq.spec.clone().unwrap_or_default();
    let status = rq.status.clone().unwrap_or_default();
    Ok(ResourceQuota {
        spec_hard: resource_list(&spec.hard, &"spec.hard", true)?,
        scopes: spec.scopes.clone().unwrap_or_default(),
        scope_selector: spec.scope_selector.as_ref().map(|s| {
            s.match_expressions
                .iter()
                .flatten()
                .map(|e| ScopeRequirement { scope_name: e.scope_name.clone(), operator: e.operator.clone(), values: e.values.clone().unwrap_or_default() })
                .collect()
        }),
        has_status: status.hard.is_some(),
        status_hard: resource_list(&status.hard, &"status.hard", true)?,
        status_used: resource_list(&status.used, &"status.used", true)?,
        raw: Some(Box::new(rq)),
    })
}

fn workload_template(t: &core::PodTemplateSpec, path: &str, taken: Option<TakenContainers>) -> FieldResult<(Pod, Meta)> {
    let spec = t.spec.as_ref().ok_or_else(|| (format!("{path}.spec"), "Required value".to_string()))?;
    let pod = lean_pod_spec(spec, &format!("{path}.spec"), taken)?;
    Ok((pod, t.metadata.clone().map(meta).unwrap_or_default()))
}

/// The group whose current version decodes an object of an older group version:
/// `extensions/v1beta1` workloads decode as `apps/v1`. Older versions that did not require a
/// selector get an empty one, as their defaulting derived it from the template.
fn older_version_shape(ti: &TypeInfo, v: &Value) -> (String, Option<Value>) {
    let old = matches!(ti.api_version.as_str(), "extensions/v1beta1" | "apps/v1beta1" | "apps/v1beta2");
    let group =
        if ti.group == "extensions" && matches!(ti.kind.as_str(), "Deployment" | "DaemonSet" | "ReplicaSet") { "apps".to_string() } else { ti.group.clone() };
    let typed_groups = ["apps", "batch", "scheduling.k8s.io", "node.k8s.io"];
    if !typed_groups.contains(&group.as_str()) || ti.api_version.strip_prefix(group.as_str()) == Some("/v1") {
        return (group, None);
    }
    let current = format!("{group}/v1");
    // Decoded with the current version's type: same fields for what quota reads.
    let mut v = v.clone();
    v["apiVersion"] = Value::String(current);
    if old && v.get("spec").is_some_and(|s| s.get("selector").is_none()) {
        v["spec"]["selector"] = serde_json::json!({});
    }
    (group, Some(v))
}

/// The JSON pointer and the field path of a kind's pod spec, if it has one.
fn pod_spec_at(group: &str, kind: &str) -> Option<(&'static str, &'static str)> {
    match (group, kind) {
        ("", "Pod") => Some(("/spec", "spec")),
        ("batch", "CronJob") => Some(("/spec/jobTemplate/spec/template/spec", "spec.jobTemplate.spec.template.spec")),
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") | ("batch", "Job") | ("", "ReplicationController") => {
            Some(("/spec/template/spec", "spec.template.spec"))
        }
        _ => None,
    }
}

/// One document being decoded: its JSON (reshaped to the current version, long container
/// lists taken out) and the containers taken, which the one pod spec decoded uses.
struct Doc<'v> {
    ti: &'v TypeInfo,
    v: &'v Value,
    taken: std::cell::Cell<Option<TakenContainers>>,
}

/// The typed object of a document: its metadata and the body the engine reads, decoded with
/// the kind's k8s-openapi type (the current version's, for older group versions).
fn body(ti: &TypeInfo, v: &Value) -> FieldResult<(Meta, Body)> {
    let (group, reshaped) = older_version_shape(ti, v);
    let v = reshaped.as_ref().unwrap_or(v);
    let (stripped, taken) = match pod_spec_at(&group, &ti.kind) {
        Some((pointer, path)) => long_container_lists(v, pointer, path)?.unzip(),
        None => (None, None),
    };
    let doc = Doc { ti, v: stripped.as_ref().unwrap_or(v), taken: std::cell::Cell::new(taken) };
    match (group.as_str(), ti.kind.as_str()) {
        ("", "Pod") => doc.pod(),
        ("", kind) => doc.core(kind),
        ("apps", kind) => doc.apps(kind),
        ("batch", kind) => doc.batch(kind),
        ("autoscaling", "HorizontalPodAutoscaler") => doc.autoscaler(AutoscalerKind::HorizontalPodAutoscaler),
        ("keda.sh", "ScaledObject") => doc.autoscaler(AutoscalerKind::ScaledObject),
        ("keda.sh", "ScaledJob") => doc.autoscaler(AutoscalerKind::ScaledJob),
        ("autoscaling.k8s.io", "VerticalPodAutoscaler") => doc.vertical_autoscaler(),
        (group, kind) => doc.cluster_scoped(group, kind),
    }
}

impl Doc<'_> {
    fn generic_meta(&self) -> FieldResult<Meta> {
        let m: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta =
            typed(self.v.get("metadata").unwrap_or(&Value::Null)).map_err(|(p, e)| (format!("metadata{}{p}", if p.is_empty() { "" } else { "." }), e))?;
        Ok(meta(m))
    }

    fn other(&self) -> FieldResult<(Meta, Body)> {
        Ok((self.generic_meta()?, Body::Other))
    }

    fn pod(&self) -> FieldResult<(Meta, Body)> {
        let p: core::Pod = typed(self.v)?;
        let spec = p.spec.as_ref().ok_or_else(|| ("spec".to_string(), "Required value".to_string()))?;
        let mut pod = lean_pod_spec(spec, "spec", self.taken.take())?;
        pod.phase = p.status.as_ref().and_then(|s| s.phase.clone());
        pod.status_qos_class = p.status.as_ref().and_then(|s| s.qos_class.clone());
        pod.claims_created = p
            .status
            .iter()
            .flat_map(|s| s.resource_claim_statuses.iter().flatten())
            .filter(|c| c.resource_claim_name.as_deref().is_some_and(|n| !n.is_empty()))
            .map(|c| c.name.clone())
            .collect();
        if let Some(st) = &p.status {
            (pod.container_statuses, pod.resize_infeasible) = pod_status(st, "status")?;
        }
        Ok((meta(p.metadata), Body::Pod(pod)))
    }

    /// The core group's other kinds.
    fn core(&self, kind: &str) -> FieldResult<(Meta, Body)> {
        Ok(match kind {
            "PersistentVolumeClaim" => {
                let p: core::PersistentVolumeClaim = typed(self.v)?;
                (meta(p.metadata), Body::PersistentVolumeClaim(pvc(&p.spec, &p.status, "spec")?))
            }
            "Service" => {
                let s: core::Service = typed(self.v)?;
                let spec = s.spec.unwrap_or_default();
                let svc = Service {
                    type_: spec.type_.clone().unwrap_or_else(|| "ClusterIP".into()),
                    node_ports: spec.ports.iter().flatten().map(|p| p.node_port).collect(),
                    allocate_load_balancer_node_ports: spec.allocate_load_balancer_node_ports,
                };
                (meta(s.metadata), Body::Service(svc))
            }
            "ResourceQuota" => {
                let rq: core::ResourceQuota = typed(self.v)?;
                // The raw quota, metadata included, is kept for validation.
                let m = meta(rq.metadata.clone());
                (m, Body::ResourceQuota(Box::new(quota(rq)?)))
            }
            "LimitRange" => {
                let lr: core::LimitRange = typed(self.v)?;
                let items = lr
                    .spec
                    .iter()
                    .flat_map(|s| s.limits.iter())
                    .enumerate()
                    .map(|(i, item)| limit_range_item(item, &format!("spec.limits[{i}]")))
                    .collect::<FieldResult<Vec<_>>>()?;
                (meta(lr.metadata), Body::LimitRange(items))
            }
            "Namespace" => {
                // The server refuses creates by the phase alone; a deleted namespace has it.
                let phase = self.v.get("status").and_then(|s| s.get("phase")).and_then(Value::as_str);
                let deleted = self.v.get("metadata").and_then(|m| m.get("deletionTimestamp")).is_some_and(|t| !t.is_null());
                (self.generic_meta()?, Body::Namespace { terminating: phase == Some("Terminating") || deleted })
            }
            "ReplicationController" => {
                let rc: core::ReplicationController = typed(self.v)?;
                let spec = rc.spec.unwrap_or_default();
                let t = spec.template.ok_or_else(|| ("spec.template".to_string(), "Required value".to_string()))?;
                (meta(rc.metadata), self.workload(Some(spec.replicas.unwrap_or(1)), &t, "spec.template", vec![], UpdateStrategy::None)?)
            }
            _ => self.other()?,
        })
    }

    fn apps(&self, kind: &str) -> FieldResult<(Meta, Body)> {
        use k8s_openapi::api::apps::v1 as apps;
        Ok(match kind {
            "Deployment" => {
                let d: apps::Deployment = typed(self.v)?;
                let spec = d.spec;
                let st = spec.strategy.unwrap_or_default();
                let strategy = if st.type_.as_deref() == Some("Recreate") {
                    UpdateStrategy::Recreate
                } else {
                    let ru = st.rolling_update.unwrap_or_default();
                    rolling_update(&ru.max_surge, &ru.max_unavailable, IntOrPercent::Percent(25), IntOrPercent::Percent(25))
                };
                (meta(d.metadata), self.workload(Some(spec.replicas.unwrap_or(1)), &spec.template, "spec.template", vec![], strategy)?)
            }
            "ReplicaSet" => {
                let d: apps::ReplicaSet = typed(self.v)?;
                let spec = d.spec;
                let t = spec.template.ok_or_else(|| ("spec.template".to_string(), "Required value".to_string()))?;
                (meta(d.metadata), self.workload(Some(spec.replicas.unwrap_or(1)), &t, "spec.template", vec![], UpdateStrategy::None)?)
            }
            "StatefulSet" => {
                let d: apps::StatefulSet = typed(self.v)?;
                let spec = d.spec;
                let claims = spec
                    .volume_claim_templates
                    .iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, c)| Ok((c.metadata.name.clone().unwrap_or_default(), pvc(&c.spec, &None, &format!("spec.volumeClaimTemplates[{i}].spec"))?)))
                    .collect::<FieldResult<Vec<_>>>()?;
                let st = spec.update_strategy.unwrap_or_default();
                let strategy = if st.type_.as_deref() == Some("OnDelete") {
                    UpdateStrategy::OnDelete
                } else {
                    UpdateStrategy::Ordered { partition: st.rolling_update.and_then(|r| r.partition).unwrap_or(0) }
                };
                (meta(d.metadata), self.workload(Some(spec.replicas.unwrap_or(1)), &spec.template, "spec.template", claims, strategy)?)
            }
            "DaemonSet" => {
                let d: apps::DaemonSet = typed(self.v)?;
                let spec = d.spec;
                let st = spec.update_strategy.unwrap_or_default();
                let strategy = if st.type_.as_deref() == Some("OnDelete") {
                    UpdateStrategy::OnDelete
                } else {
                    let ru = st.rolling_update.unwrap_or_default();
                    rolling_update(&ru.max_surge, &ru.max_unavailable, IntOrPercent::Int(0), IntOrPercent::Int(1))
                };
                (meta(d.metadata), self.workload(None, &spec.template, "spec.template", vec![], strategy)?)
            }
            _ => self.other()?,
        })
    }

    fn batch(&self, kind: &str) -> FieldResult<(Meta, Body)> {
        use k8s_openapi::api::batch::v1 as batch;
        Ok(match kind {
            "Job" => {
                let j: batch::Job = typed(self.v)?;
                let spec = j.spec.unwrap_or_default();
                (meta(j.metadata), self.workload(Some(job_pods(&spec)), &spec.template, "spec.template", vec![], UpdateStrategy::None)?)
            }
            "CronJob" => {
                let c: batch::CronJob = typed(self.v)?;
                let job = c.spec.job_template.spec.clone().unwrap_or_default();
                (meta(c.metadata), self.workload(Some(job_pods(&job)), &job.template, "spec.jobTemplate.spec.template", vec![], UpdateStrategy::None)?)
            }
            _ => self.other()?,
        })
    }

    /// An HPA (any autoscaling version: the fields read are the same) or a KEDA ScaledObject
    /// or ScaledJob, with the defaults its API or operator gives.
    fn autoscaler(&self, kind: AutoscalerKind) -> FieldResult<(Meta, Body)> {
        let m = self.generic_meta()?;
        let v = self.v;
        let spec = v.get("spec").unwrap_or(&Value::Null);
        let keda = kind != AutoscalerKind::HorizontalPodAutoscaler;
        let count = |field: &str, at: &str| -> FieldResult<Option<i32>> { count_at(v, at, field) };
        let (min_field, max_field) = if keda { ("minReplicaCount", "maxReplicaCount") } else { ("minReplicas", "maxReplicas") };
        let min = count(min_field, "spec")?.unwrap_or(if keda { 0 } else { 1 });
        let max = count(max_field, "spec")?.unwrap_or(if keda { 100 } else { 0 });
        let target = spec.get("scaleTargetRef").filter(|_| kind != AutoscalerKind::ScaledJob).map(|t| {
            let text = |f: &str| t.get(f).and_then(Value::as_str).unwrap_or_default().to_string();
            let kind_written = text("kind");
            ScaleTarget {
                api_version: text("apiVersion"),
                kind: if kind_written.is_empty() && keda { "Deployment".into() } else { kind_written },
                name: text("name"),
            }
        });
        let job = match (kind, spec.get("jobTargetRef")) {
            (AutoscalerKind::ScaledJob, Some(j)) => {
                let job: k8s_openapi::api::batch::v1::JobSpec =
                    typed(j).map_err(|(p, e)| (format!("spec.jobTargetRef{}{p}", if p.is_empty() { "" } else { "." }), e))?;
                match self.workload(Some(job_pods(&job)), &job.template, "spec.jobTargetRef.template", vec![], UpdateStrategy::None)? {
                    Body::Workload(w) => Some(w),
                    _ => None,
                }
            }
            _ => None,
        };
        // An HPA KEDA made carries its ScaledObject as owner.
        let made_for = m.controller.as_ref().filter(|(k, _)| k == "ScaledObject").map(|(_, n)| n.clone());
        let a = Autoscaler {
            kind,
            target,
            min,
            max,
            idle: if keda { count("idleReplicaCount", "spec")? } else { None },
            desired: count("desiredReplicas", "status")?,
            made_for,
            job,
        };
        Ok((m, Body::Autoscaler(Box::new(a))))
    }

    /// A VerticalPodAutoscaler (`autoscaling.k8s.io/v1`): its target, mode, container
    /// policies and the recommendation in its status.
    fn vertical_autoscaler(&self) -> FieldResult<(Meta, Body)> {
        let m = self.generic_meta()?;
        let v = self.v;
        let spec = v.get("spec").unwrap_or(&Value::Null);
        let text = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).unwrap_or_default().to_string();
        let target = spec.get("targetRef").filter(|t| t.is_object()).map(|t| ScaleTarget {
            api_version: text(t, "apiVersion"),
            kind: text(t, "kind"),
            name: text(t, "name"),
        });
        let mode_written = match spec.get("updatePolicy").and_then(|p| p.get("updateMode")).filter(|m| !m.is_null()) {
            None => String::new(),
            Some(Value::String(m)) => m.clone(),
            // YAML 1.1 reads an unquoted Off as false: the server refuses it as not a string.
            Some(other) => return Err(("spec.updatePolicy.updateMode".into(), format!("must be a string (quote it: \"Off\"), got {other}"))),
        };
        let mode = match mode_written.as_str() {
            // The webhook and updater take a mode left out (or empty) as Recreate.
            "" | "Recreate" => Some(VpaMode::Recreate),
            "Off" => Some(VpaMode::Off),
            "Initial" => Some(VpaMode::Initial),
            "Auto" => Some(VpaMode::Auto),
            "InPlaceOrRecreate" => Some(VpaMode::InPlaceOrRecreate),
            _ => None,
        };
        let list = |at: &Value, field: &str, path: &str| -> FieldResult<ResourceList> {
            let raw: Option<BTreeMap<String, K8sQuantity>> =
                at.get(field).filter(|l| !l.is_null()).map(|l| typed(l).map_err(|(p, e)| (format!("{path}.{field}{p}"), e))).transpose()?;
            resource_list(&raw, &format_args!("{path}.{field}"), false)
        };
        let mut policies = Vec::new();
        let entries = spec.get("resourcePolicy").and_then(|p| p.get("containerPolicies")).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for (i, p) in entries.iter().enumerate() {
            let path = format!("spec.resourcePolicy.containerPolicies[{i}]");
            policies.push(VpaContainerPolicy {
                container: text(p, "containerName"),
                min_allowed: list(p, "minAllowed", &path)?,
                max_allowed: list(p, "maxAllowed", &path)?,
                requests_only: text(p, "controlledValues") == "RequestsOnly",
            });
        }
        let recommendation = match v.get("status").and_then(|s| s.get("recommendation")).filter(|r| !r.is_null()) {
            None => None,
            Some(r) => {
                let mut out = Vec::new();
                let entries = r.get("containerRecommendations").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                for (i, c) in entries.iter().enumerate() {
                    out.push((text(c, "containerName"), list(c, "target", &format!("status.recommendation.containerRecommendations[{i}]"))?));
                }
                Some(out)
            }
        };
        Ok((m, Body::VerticalAutoscaler(Box::new(VerticalAutoscaler { target, mode, mode_written, policies, recommendation }))))
    }

    /// PriorityClass, StorageClass, RuntimeClass and the DRA kinds; any other group's kind
    /// is read for its metadata alone.
    fn cluster_scoped(&self, group: &str, kind: &str) -> FieldResult<(Meta, Body)> {
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
            _ => self.other()?,
        })
    }

    /// A workload: its template decoded as the pods its controller creates (`path` is the
    /// template's field path), and what the rest of the engine reads of its spec and status.
    fn workload(
        &self,
        replicas: Option<i32>,
        t: &core::PodTemplateSpec,
        path: &str,
        claims: Vec<(String, Pvc)>,
        update_strategy: UpdateStrategy,
    ) -> FieldResult<Body> {
        let (ti, v) = (self.ti, self.v);
        let mut taken = self.taken.take();
        let taken_images = taken.as_mut().map(|t| std::mem::take(&mut t.images));
        let (template, template_meta) = workload_template(t, path, taken)?;
        let spec_path = path.strip_suffix(".template").unwrap_or("spec");
        let spec = if spec_path == "spec" { v.get("spec") } else { v.get("spec").and_then(|s| s.get("jobTemplate")).and_then(|j| j.get("spec")) };
        let counts = ["replicas", "parallelism", "completions"].iter().filter_map(|f| Some((format!("{spec_path}.{f}"), spec?.get(*f)?.as_i64()?))).collect();
        let images = taken_images.unwrap_or_else(|| {
            t.spec
                .as_ref()
                .into_iter()
                .flat_map(|s| s.init_containers.iter().flatten().chain(s.containers.iter()))
                .map(|c| format!("{}={}", c.name, c.image.clone().unwrap_or_default()))
                .collect()
        });
        Ok(Body::Workload(Box::new(Workload {
            replicas,
            template,
            template_meta,
            volume_claim_templates: claims,
            template_path: path.into(),
            counts,
            update_strategy,
            images,
            current: pods_existing(&ti.kind, v),
            succeeded: (ti.kind == "Job")
                .then(|| v.get("status").and_then(|s| s.get("succeeded")).and_then(Value::as_i64))
                .flatten()
                .map_or(0, |n| i32::try_from(n.max(0)).unwrap_or(i32::MAX)),
            restart_policy: t.spec.as_ref().and_then(|s| s.restart_policy.clone()).filter(|p| !p.is_empty()),
            selector: spec.and_then(|s| s.get("selector")).and_then(|sel| workload_selector(&ti.kind, sel)),
            vpa: None,
        })))
    }
}

/// A replica count at `at.field` (`spec.maxReplicas`): absent, or an integer that fits an
/// int32, as the API's schema requires.
fn count_at(v: &Value, at: &str, field: &str) -> FieldResult<Option<i32>> {
    let Some(n) = v.get(at).and_then(|s| s.get(field)).filter(|n| !n.is_null()) else { return Ok(None) };
    n.as_i64().and_then(|n| i32::try_from(n).ok()).map(Some).ok_or_else(|| (format!("{at}.{field}"), format!("expected an integer (int32), got {n}")))
}

/// `spec.selector` as a label selector; a ReplicationController's is a plain label map.
fn workload_selector(kind: &str, sel: &Value) -> Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector> {
    if kind == "ReplicationController" {
        let labels: BTreeMap<String, String> = serde_json::from_value(sel.clone()).ok()?;
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector { match_labels: Some(labels), match_expressions: None })
    } else {
        serde_json::from_value(sel.clone()).ok()
    }
}

/// A rolling update's surge and unavailability, each defaulted as the kind defaults it.
fn rolling_update(
    max_surge: &Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    max_unavailable: &Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    surge_default: IntOrPercent,
    unavailable_default: IntOrPercent,
) -> UpdateStrategy {
    UpdateStrategy::RollingUpdate {
        max_surge: IntOrPercent::from_k8s(max_surge, surge_default),
        max_unavailable: IntOrPercent::from_k8s(max_unavailable, unavailable_default),
    }
}

/// Pods a Job starts at once: parallelism (default 1), capped by completions when set;
/// a suspended Job starts none.
fn job_pods(spec: &k8s_openapi::api::batch::v1::JobSpec) -> i32 {
    if spec.suspend == Some(true) {
        return 0;
    }
    let parallelism = spec.parallelism.unwrap_or(1);
    match spec.completions {
        Some(c) => parallelism.min(c),
        None => parallelism,
    }
}

/// Decodes one document. Errors name the document and the field.
pub fn decode(doc: &Document) -> Result<Object, InputError> {
    let v = &doc.value;
    let api_version = v.get("apiVersion").and_then(Value::as_str).filter(|s| !s.is_empty());
    let kind = v.get("kind").and_then(Value::as_str).filter(|s| !s.is_empty());
    let (Some(api_version), Some(kind)) = (api_version, kind) else {
        let field = if api_version.is_none() { "apiVersion" } else { "kind" };
        return Err(InputError::at(&doc.origin, Some(field.into()), "Required value: every object needs apiVersion and kind"));
    };
    let ti = type_info(api_version, kind);
    if doc.origin.too_large || larger_than_a_request(v) {
        // The server reads no further than its limit: only what names the object is taken.
        let field = |k: &str| v.get("metadata").and_then(|m| m.get(k)).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        let name = field("name").or_else(|| field("generateName").map(|g| format!("{g}<generated>"))).unwrap_or_else(|| "<unnamed>".into());
        let meta = Meta { name, namespace: field("namespace"), too_large: true, ..Meta::default() };
        return Ok(Object { origin: doc.origin.clone(), type_info: ti, meta, body: Body::Other });
    }
    let (meta, body) = body(&ti, v).map_err(|(field, msg)| InputError::at(&doc.origin, (!field.is_empty()).then_some(field), msg))?;
    if meta.name.is_empty() {
        return Err(InputError::at(&doc.origin, Some("metadata.name".into()), "Required value: name or generateName is required"));
    }
    Ok(Object { origin: doc.origin.clone(), type_info: ti, meta, body })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse_str;

    fn one(text: &str) -> Result<Object, InputError> {
        decode(&parse_str("t.yaml", text).unwrap()[0])
    }

    /// A pod spec's text with `n` containers, the first one `first`.
    fn many_containers(first: &str, n: usize) -> String {
        let rest: String = (1..n).map(|i| format!(", {{name: c{i}, image: x{i}, resources: {{requests: {{cpu: {i}m}}}}}}")).collect();
        format!("{{containers: [{first}{rest}], initContainers: [{{name: i, image: busybox, resources: {{limits: {{memory: 1Gi}}}}}}]}}")
    }

    #[test]
    fn long_container_lists_decode_as_short_ones_do() {
        let n = MANY_CONTAINERS + 5;
        let spec = many_containers("{name: c0, image: x0}", n);
        let pod = one(&format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {spec}\n")).unwrap();
        // The same spec through k8s-openapi's whole PodSpec, as a short list is decoded.
        let typed_spec: core::PodSpec = serde_json::from_value(parse_str("s.yaml", &spec).unwrap()[0].value.clone()).unwrap();
        let Body::Pod(got) = &pod.body else { panic!("{pod:?}") };
        assert_eq!(*got, pod_spec(&typed_spec, "spec").unwrap());
        assert_eq!(got.containers.len(), n);
        let d = one(&format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec: {{selector: {{}}, template: {{spec: {spec}}}}}\n")).unwrap();
        let Body::Workload(w) = &d.body else { panic!("{d:?}") };
        assert_eq!(w.template, *got);
        assert_eq!(w.images.len(), n + 1);
        assert_eq!((w.images[0].as_str(), w.images[n].as_str()), ("i=busybox", &*format!("c{}=x{}", n - 1, n - 1)));
        // A mistake in one of many containers is named as in a short list.
        for (bad, field) in [
            ("{image: x}", "containers[0].name"),
            ("{name: a, resources: {limits: {memory: 1K}}}", "containers[0].resources.limits.memory"),
            ("{name: a, ports: 3}", "containers[0].ports"),
        ] {
            for (kind, head, prefix) in [
                ("Pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: ", "spec."),
                (
                    "CronJob",
                    "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec: {schedule: x, jobTemplate: {spec: {template: {spec: ",
                    "spec.jobTemplate.spec.template.spec.",
                ),
            ] {
                let close = if kind == "CronJob" { "}}}}" } else { "" };
                let short = one(&format!("{head}{{containers: [{bad}]}}{close}\n")).unwrap_err();
                let long = one(&format!("{head}{}{close}\n", many_containers(bad, n))).unwrap_err();
                assert_eq!(long.field.as_deref(), Some(&*format!("{prefix}{field}")), "{long}");
                assert_eq!((&long.field, long.to_string()), (&short.field, short.to_string()), "{kind}: {bad}");
            }
        }
    }

    #[test]
    fn kinds_resolve_to_group_resources() {
        let cases = [
            ("v1", "Pod", "pods", false),
            ("apps/v1", "Deployment", "deployments.apps", false),
            ("batch/v1", "CronJob", "cronjobs.batch", false),
            ("example.com/v1", "Widget", "widgets.example.com", true),
            ("example.com/v1", "Policy", "policies.example.com", true),
            ("example.com/v1", "Gateway", "gateways.example.com", true),
            ("example.com/v1", "Ingress", "ingresses.example.com", true),
        ];
        for (av, kind, want, guessed) in cases {
            let ti = type_info(av, kind);
            assert_eq!((ti.group_resource().as_str(), ti.guessed), (want, guessed), "{av} {kind}");
        }
    }

    #[test]
    fn structural_errors_name_the_field() {
        let cases = [
            ("kind: Pod\nmetadata: {name: p}\n", "apiVersion"),
            ("apiVersion: v1\nmetadata: {name: p}\n", "kind"),
            ("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "metadata.name"),
            ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{image: x}]}\n", "spec.containers[0].name"),
            ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, resources: {limits: {memory: 1K}}}]}\n", "spec.containers[0].resources.limits.memory"),
            ("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {pods: x}}\n", "spec.hard.pods"),
            ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {selector: {}, template: {spec: {containers: [{name: a, resources: {requests: {cpu: '1.2.3'}}}]}}}\n", "spec.template.spec.containers[0].resources.requests.cpu"),
        ];
        for (text, field) in cases {
            let err = one(text).unwrap_err();
            assert_eq!(err.field.as_deref(), Some(field), "{err}");
        }
    }

    #[test]
    fn quantities_are_rounded_up_to_milli_like_api_defaulting() {
        let obj = one("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, resources: {requests: {cpu: 0.1m, memory: '1.5'}}}]}\n")
            .unwrap();
        let Body::Pod(p) = obj.body else { panic!() };
        assert_eq!(p.containers[0].requests["cpu"].to_string(), "1m");
        assert_eq!(p.containers[0].requests["memory"].to_string(), "1500m");
    }

    #[test]
    fn limit_range_items_get_server_defaults() {
        let obj =
            one("apiVersion: v1\nkind: LimitRange\nmetadata: {name: l}\nspec: {limits: [{type: Container, max: {cpu: '2'}, min: {memory: 64Mi}}]}\n").unwrap();
        let Body::LimitRange(items) = obj.body else { panic!() };
        assert_eq!(items[0].default["cpu"].to_string(), "2");
        assert_eq!(items[0].default_request["cpu"].to_string(), "2");
        assert_eq!(items[0].default_request["memory"].to_string(), "64Mi");
    }

    #[test]
    fn cross_namespace_affinity_is_detected() {
        let base = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a}]\n";
        let cases = [
            ("", false),
            ("  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: k}]}}\n", false),
            ("  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: k, namespaces: [other]}]}}\n", true),
            ("  affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: {topologyKey: k, namespaceSelector: {}}}]}}\n", true),
        ];
        for (extra, want) in cases {
            let Body::Pod(p) = one(&format!("{base}{extra}")).unwrap().body else { panic!() };
            assert_eq!(p.cross_namespace_affinity, want, "{extra}");
        }
    }

    #[test]
    fn job_pods_follow_parallelism_and_completions() {
        let base = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template: {spec: {containers: [{name: a}], restartPolicy: Never}}\n";
        for (extra, want) in [("", 1), ("  parallelism: 5\n", 5), ("  parallelism: 5\n  completions: 2\n", 2), ("  suspend: true\n", 0)] {
            let Body::Workload(w) = one(&format!("{base}{extra}")).unwrap().body else { panic!() };
            assert_eq!(w.replicas, Some(want), "{extra}");
        }
    }
}
