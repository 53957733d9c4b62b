//! JSON documents into the typed models: through k8s-openapi's types (so structural
//! mistakes carry their JSON path), every quantity parsed exactly, every field error named.
//!
//! The entry ([`decode`]), what every kind shares (metadata, quantities, the typed pass and
//! its error paths, an older group version read as the current one) and the dispatch by
//! kind; each family of kinds in a file of its own: [`pod`] (pod specs, containers, a pod's
//! status), [`core_kinds`] (the core group's other kinds), [`workloads`] (apps and batch),
//! [`autoscalers`] (HPA, KEDA, VPA) and [`cluster_scoped`] (classes and the DRA kinds).

mod autoscalers;
mod cluster_scoped;
mod core_kinds;
mod pod;
mod workloads;

use pod::{long_container_lists, long_volume_list, TakenContainers, TakenVolumes};
pub use pod::{pod_spec, ContainerList, ContainerLists, MANY_CONTAINERS};

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

/// The group whose current version decodes an object of an older group version:
/// `extensions/v1beta1` workloads decode as `apps/v1`. Older versions that did not require a
/// selector get an empty one, as their defaulting derived it from the template.
fn older_version_shape(ti: &TypeInfo, v: &Value) -> (String, Option<Value>) {
    let old = matches!(ti.api_version.as_str(), "extensions/v1beta1" | "apps/v1beta1" | "apps/v1beta2");
    let group = current_group(ti);
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

/// The group an object of `ti` is decoded as ([`older_version_shape`]).
fn current_group(ti: &TypeInfo) -> String {
    if ti.group == "extensions" && matches!(ti.kind.as_str(), "Deployment" | "DaemonSet" | "ReplicaSet") {
        "apps".to_string()
    } else {
        ti.group.clone()
    }
}

/// The field path (`spec.template.spec`) of the pod spec whose long container lists an
/// object of `api_version` and `kind` decodes a container at a time: where a caller reading
/// the object's text may take them as it reads ([`ContainerLists`], [`decode_with_lists`]).
pub fn container_lists_at(api_version: &str, kind: &str) -> Option<&'static str> {
    pod_spec_at(&current_group(&type_info(api_version, kind)), kind).map(|(_, path)| path)
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
/// and volume lists taken out) and the containers and volumes taken, which the one pod spec
/// decoded uses.
struct Doc<'v> {
    ti: &'v TypeInfo,
    v: &'v Value,
    taken: std::cell::Cell<Option<TakenContainers>>,
    volumes: std::cell::Cell<Option<TakenVolumes>>,
}

/// The typed object of a document: its metadata and the body the engine reads, decoded with
/// the kind's k8s-openapi type (the current version's, for older group versions).
fn body(ti: &TypeInfo, v: &Value, lists: Option<ContainerLists>) -> FieldResult<(Meta, Body)> {
    let (group, reshaped) = older_version_shape(ti, v);
    let v = reshaped.as_ref().unwrap_or(v);
    let at = pod_spec_at(&group, &ti.kind);
    let (stripped, taken) = match (at, lists) {
        // Taken already, as they were read: the tree has them empty.
        (Some(_), Some(lists)) => (None, Some(lists.taken()?)),
        (Some((pointer, path)), None) => long_container_lists(v, pointer, path)?.unzip(),
        (None, _) => (None, None),
    };
    let v = stripped.as_ref().unwrap_or(v);
    let (stripped, volumes) = match at {
        Some((pointer, path)) => long_volume_list(v, pointer, path)?.unzip(),
        None => (None, None),
    };
    let doc = Doc { ti, v: stripped.as_ref().unwrap_or(v), taken: std::cell::Cell::new(taken), volumes: std::cell::Cell::new(volumes) };
    match (group.as_str(), ti.kind.as_str()) {
        ("", "Pod") => doc.pod(),
        ("", kind) => doc.core(kind),
        ("apps", kind) => doc.apps(kind),
        ("batch", kind) => doc.batch(kind),
        (group, kind) => match super::autoscaler_type(group, kind).map(|t| t.sets) {
            Some(Sets::Replicas(k) | Sets::Jobs(k)) => doc.autoscaler(k),
            Some(Sets::Requests) => doc.vpa(),
            None => doc.cluster_scoped(group, kind),
        },
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
}

/// Keeps the object as written, for the admission policies that read the whole of it: a
/// pod's spec (a Pod's, a workload's template's) in its [`Pod::source`], taken out of the
/// document's `value`, which is moved here, not copied; the rest of the document (or all of
/// it, for a kind without a pod spec) in [`Object::source`]. A ConfigMap or an object of a kind
/// not known here is kept whole ([`Body::Kept`]) in any case: a policy may read it as its
/// params; so is one of Kueue's, which [`crate::kueue`] reads.
///
/// With `pod_specs` false only the params are kept: the rest is needed only where admission
/// policies run, and holding every object would hold most of a large input.
pub fn keep_source(obj: &mut Object, mut value: Value, pod_specs: bool) {
    let ti = &obj.type_info;
    if matches!(obj.body, Body::Other) && ((ti.group.is_empty() && ti.kind == "ConfigMap") || ti.guessed || ti.group == super::KUEUE_GROUP) {
        obj.body = Body::Kept(std::sync::Arc::new(value));
        return;
    }
    if !pod_specs || obj.meta.too_large {
        return;
    }
    let (pod, pointer) = match &mut obj.body {
        Body::Pod(p) => (p, "/spec".to_string()),
        Body::Workload(w) => (&mut w.template, format!("/{}/spec", w.template_path.replace('.', "/"))),
        Body::Kept(_) => return,
        _ => {
            obj.source = Source(Some(std::sync::Arc::new(value)));
            return;
        }
    };
    if let Some(spec) = value.pointer_mut(&pointer).filter(|s| s.is_object()) {
        pod.source = Source(Some(std::sync::Arc::new(spec.take())));
    }
    // A pod's metadata is its `meta`'s; a workload's rest (its counts, selector, strategy,
    // the template's metadata) is read from here.
    if matches!(obj.body, Body::Workload(_)) {
        obj.source = Source(Some(std::sync::Arc::new(value)));
    }
}

/// Decodes one document. Errors name the document and the field.
pub fn decode(doc: &Document) -> Result<Object, InputError> {
    decode_lists(doc, None)
}

/// [`decode`] for a document whose pod spec's long container lists were decoded as they were
/// read ([`ContainerLists`], at [`container_lists_at`]), and are empty in its tree: the same
/// object, or the same error, as [`decode`] of the whole tree.
pub fn decode_with_lists(doc: &Document, lists: ContainerLists) -> Result<Object, InputError> {
    decode_lists(doc, Some(lists))
}

fn decode_lists(doc: &Document, lists: Option<ContainerLists>) -> Result<Object, InputError> {
    let v = &doc.value;
    let api_version = v.get("apiVersion").and_then(Value::as_str).filter(|s| !s.is_empty());
    let kind = v.get("kind").and_then(Value::as_str).filter(|s| !s.is_empty());
    let (Some(api_version), Some(kind)) = (api_version, kind) else {
        let field = if api_version.is_none() { "apiVersion" } else { "kind" };
        return Err(InputError::at(&doc.origin, Some(field.into()), "Required value: every object needs apiVersion and kind"));
    };
    let ti = type_info(api_version, kind);
    if doc.origin.too_large || larger_than_a_request(v, lists.as_ref().map_or(0, ContainerLists::json_bytes)) {
        // The server reads no further than its limit: only what names the object is taken.
        let field = |k: &str| v.get("metadata").and_then(|m| m.get(k)).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        let name = field("name").or_else(|| field("generateName").map(|g| format!("{g}<generated>"))).unwrap_or_else(|| "<unnamed>".into());
        let meta = Meta { name, namespace: field("namespace"), too_large: true, ..Meta::default() };
        return Ok(Object { origin: doc.origin.clone(), type_info: ti, meta, body: Body::Other, source: Source::default() });
    }
    let (meta, body) = body(&ti, v, lists).map_err(|(field, msg)| InputError::at(&doc.origin, (!field.is_empty()).then_some(field), msg))?;
    if meta.name.is_empty() {
        return Err(InputError::at(&doc.origin, Some("metadata.name".into()), "Required value: name or generateName is required"));
    }
    Ok(Object { origin: doc.origin.clone(), type_info: ti, meta, body, source: Source::default() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse_str;

    pub(super) fn one(text: &str) -> Result<Object, InputError> {
        decode(&parse_str("t.yaml", text).unwrap()[0])
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
}
