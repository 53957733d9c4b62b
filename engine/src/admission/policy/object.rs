//! The object as the policies see it (JSON), and back: a pod's spec as written
//! ([`crate::objects::Pod::source`]) with what the plugins before them changed laid over it
//! (resources, service account, priority class, overhead), and the pod a mutating policy left,
//! decoded again with the API's defaults.

use serde_json::{json, Map, Value};

use crate::manifest::Document;
use crate::objects::{Body, Container, Object, Pod};
use crate::resources::ResourceList;

fn quantities(list: &ResourceList) -> Value {
    Value::Object(list.iter().map(|(k, q)| (k.clone(), Value::String(q.to_string()))).collect())
}

/// Lays a container's resources over its JSON.
fn lay_container(json: &mut Map<String, Value>, c: &Container) {
    json.insert("name".into(), Value::String(c.name.clone()));
    let res = json.entry("resources").or_insert_with(|| json!({}));
    if let Some(res) = res.as_object_mut() {
        for (key, list) in [("requests", &c.requests), ("limits", &c.limits)] {
            if list.is_empty() {
                res.remove(key);
            } else {
                res.insert(key.into(), quantities(list));
            }
        }
    }
}

/// The container list `key` of a spec: each container's JSON as written (`written`, the
/// spec's list as the pod was sent), with its resources laid over it. Each is cloned once,
/// found by name in one pass (the first of a name, as a search from the start finds it): a
/// lookup per container would be quadratic, and a pod may have tens of thousands.
fn lay_containers(written: Option<&Value>, list: &[Container]) -> Value {
    let written = written.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut by_name: std::collections::HashMap<&str, &Map<String, Value>> = std::collections::HashMap::with_capacity(written.len());
    for w in written {
        if let (Some(name), Some(m)) = (w.get("name").and_then(Value::as_str), w.as_object()) {
            by_name.entry(name).or_insert(m);
        }
    }
    let out = list
        .iter()
        .map(|c| {
            let mut j = by_name.get(c.name.as_str()).map(|m| (*m).clone()).unwrap_or_default();
            if c.sidecar {
                j.insert("restartPolicy".into(), Value::String("Always".into()));
            }
            lay_container(&mut j, c);
            Value::Object(j)
        })
        .collect();
    Value::Array(out)
}

/// A pod's spec as JSON: as written, with the plugins' changes laid over it.
fn spec_json(p: &Pod) -> Value {
    // The spec as written, every field but the container lists cloned; those are built anew
    // (cloning them first would copy each container twice).
    let source = p.source.0.as_deref().and_then(Value::as_object);
    let lists: [(&str, &[Container]); 2] = [("containers", &p.containers), ("initContainers", &p.init_containers)];
    let mut spec: Map<String, Value> = source
        .into_iter()
        .flatten()
        .filter(|(k, _)| !lists.iter().any(|(key, list)| k == key && !list.is_empty()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (key, list) in lists {
        if !list.is_empty() {
            spec.insert(key.into(), lay_containers(source.and_then(|s| s.get(key)), list));
        }
    }
    let mut set = |k: &str, v: &str| {
        if !v.is_empty() {
            spec.insert(k.into(), Value::String(v.into()));
        }
    };
    set("serviceAccountName", &p.service_account_name);
    set("priorityClassName", &p.priority_class_name);
    if !p.overhead.is_empty() {
        spec.insert("overhead".into(), quantities(&p.overhead));
    }
    if !p.pod_requests.is_empty() || !p.pod_limits.is_empty() {
        let mut r = Map::new();
        if !p.pod_requests.is_empty() {
            r.insert("requests".into(), quantities(&p.pod_requests));
        }
        if !p.pod_limits.is_empty() {
            r.insert("limits".into(), quantities(&p.pod_limits));
        }
        spec.insert("resources".into(), Value::Object(r));
    }
    Value::Object(spec)
}

/// Whether the object is known as the policies see it ([`as_json`] gives it).
pub fn kept(obj: &Object) -> bool {
    match &obj.body {
        Body::Pod(_) | Body::Kept(_) => true,
        _ => obj.source.0.is_some(),
    }
}

/// The object as the policies see it (`None`: it was not kept, see
/// [`crate::objects::keep_source`]): a pod as written with the plugins' changes laid over it;
/// any other object as written, its namespace the request's, with the defaults the API gives
/// the fields a policy commonly reads ([`api_defaults`]); a workload's template spec as written
/// (the API copies no limits into a template's requests: that is a pod's defaulting).
pub fn as_json(obj: &Object, ns: &str) -> Option<Value> {
    let mut v = match &obj.body {
        Body::Pod(p) => return Some(pod_json(obj, p, ns)),
        Body::Kept(v) => (**v).clone(),
        Body::Workload(w) => {
            let mut v = obj.source.0.as_deref()?.clone();
            let mut spec = w.template.source.0.as_deref().cloned().unwrap_or_else(|| spec_json(&w.template));
            // A container's `resources` is a struct the API always writes, if only as `{}`.
            for list in ["containers", "initContainers"] {
                for c in spec.get_mut(list).and_then(Value::as_array_mut).into_iter().flatten().filter_map(Value::as_object_mut) {
                    c.entry("resources").or_insert_with(|| json!({}));
                }
            }
            if let Some(slot) = v.pointer_mut(&format!("/{}/spec", w.template_path.replace('.', "/"))) {
                *slot = spec;
            }
            v
        }
        _ => obj.source.0.as_deref()?.clone(),
    };
    if obj.type_info.namespaced {
        if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("namespace".into(), Value::String(ns.into()));
        }
    }
    api_defaults(&obj.type_info.kind, &mut v);
    Some(v)
}

/// The API's defaults of the counts a policy on workloads reads, where the object leaves them
/// out: `spec.replicas` 1 (Deployment, ReplicaSet, StatefulSet, ReplicationController);
/// a Job's `spec.parallelism` 1, and `spec.completions` 1 when both are left out; a
/// Service's `spec.type` ClusterIP, its ports' `protocol` TCP and `targetPort` the port.
fn api_defaults(kind: &str, v: &mut Value) {
    let Some(spec) = v.get_mut("spec").and_then(Value::as_object_mut) else { return };
    let mut default = |field: &str| {
        if spec.get(field).is_none_or(Value::is_null) {
            spec.insert(field.into(), json!(1));
        }
    };
    match kind {
        "Deployment" | "ReplicaSet" | "StatefulSet" | "ReplicationController" => default("replicas"),
        "Job" => {
            let neither = ["parallelism", "completions"].iter().all(|f| spec.get(*f).is_none_or(Value::is_null));
            if neither {
                spec.insert("completions".into(), json!(1));
            }
            if spec.get("parallelism").is_none_or(Value::is_null) {
                spec.insert("parallelism".into(), json!(1));
            }
        }
        "Service" => {
            if spec.get("type").is_none_or(Value::is_null) {
                spec.insert("type".into(), json!("ClusterIP"));
            }
            for port in spec.get_mut("ports").and_then(Value::as_array_mut).into_iter().flatten().filter_map(Value::as_object_mut) {
                if port.get("protocol").is_none_or(Value::is_null) {
                    port.insert("protocol".into(), json!("TCP"));
                }
                if let (None, Some(p)) = (port.get("targetPort"), port.get("port").cloned()) {
                    port.insert("targetPort".into(), p);
                }
            }
        }
        _ => {}
    }
}

/// A pod's whole JSON: its metadata from its `meta`, its spec as written with the plugins'
/// changes laid over it.
fn pod_json(obj: &Object, p: &Pod, ns: &str) -> Value {
    let m = &obj.meta;
    let mut meta = Map::new();
    match &m.generate_name {
        Some(g) => {
            meta.insert("generateName".into(), Value::String(g.clone()));
        }
        None => {
            meta.insert("name".into(), Value::String(m.name.clone()));
        }
    }
    meta.insert("namespace".into(), Value::String(ns.into()));
    if !m.labels.is_empty() {
        meta.insert("labels".into(), json!(m.labels));
    }
    if !m.annotations.is_empty() {
        meta.insert("annotations".into(), json!(m.annotations));
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec_json(p)})
}

/// Takes the object a mutating policy left: decoded again (the API's defaults applied by the
/// caller), what the request's status and the chain before carried kept (a pod's status, a
/// workload's existing pods and its VerticalPodAutoscaler). An object the API would not decode
/// is refused in the decoder's words.
pub fn set_from_json(obj: &mut Object, v: Value) -> Result<(), String> {
    let doc = Document { origin: obj.origin.clone(), value: v };
    let mut decoded = crate::objects::decode(&doc).map_err(|e| match e.field {
        Some(f) => format!("{f}: {}", e.message),
        None => e.message,
    })?;
    crate::objects::keep_source(&mut decoded, doc.value, true);
    if decoded.type_info.kind != obj.type_info.kind || decoded.type_info.group != obj.type_info.group {
        return Err("the policy changed the object's kind".into());
    }
    match (&obj.body, decoded.body) {
        (Body::Pod(old), Body::Pod(mut new)) => {
            new.phase = old.phase.clone();
            new.status_qos_class = old.status_qos_class.clone();
            new.container_statuses = old.container_statuses.clone();
            new.claims_created = old.claims_created.clone();
            new.resize_infeasible = old.resize_infeasible;
            obj.body = Body::Pod(new);
        }
        (Body::Workload(old), Body::Workload(mut new)) => {
            new.current = old.current;
            new.succeeded = old.succeeded;
            new.vpa = old.vpa.clone();
            obj.body = Body::Workload(new);
        }
        (_, body) => obj.body = body,
    }
    obj.source = decoded.source;
    obj.meta.labels = decoded.meta.labels;
    obj.meta.annotations = decoded.meta.annotations;
    Ok(())
}

/// What changed in a pod's containers, in words (`container app: requests.cpu=400m`,
/// `added container proxy: requests.cpu=100m, limits.cpu=2`); empty when nothing that quota
/// reads changed.
pub fn pod_change(before: &Pod, after: &Pod) -> String {
    let list = |c: &Container| {
        let mut parts: Vec<String> = c.requests.iter().map(|(k, q)| format!("requests.{k}={q}")).collect();
        parts.extend(c.limits.iter().map(|(k, q)| format!("limits.{k}={q}")));
        parts.join(", ")
    };
    let mut out = Vec::new();
    for (what, old, new) in [("container", &*before.containers, &*after.containers), ("init container", &before.init_containers, &after.init_containers)] {
        // By name, in one pass each way: the first of a name, as a search from the start finds it.
        let mut old_by_name: std::collections::HashMap<&str, &Container> = std::collections::HashMap::with_capacity(old.len());
        for o in old {
            old_by_name.entry(o.name.as_str()).or_insert(o);
        }
        let new_names: std::collections::HashSet<&str> = new.iter().map(|c| c.name.as_str()).collect();
        for c in new {
            match old_by_name.get(c.name.as_str()).copied() {
                None => out.push(format!("added {what} {}{}", c.name, if list(c).is_empty() { String::new() } else { format!(": {}", list(c)) })),
                Some(o) if o.requests != c.requests || o.limits != c.limits => out.push(format!("{what} {}: {}", c.name, list(c))),
                Some(_) => {}
            }
        }
        for o in old.iter().filter(|o| !new_names.contains(o.name.as_str())) {
            out.push(format!("removed {what} {}", o.name));
        }
    }
    out.join("; ")
}
