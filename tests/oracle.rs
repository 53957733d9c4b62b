//! Differential test against upstream Kubernetes 1.37.2's own quota code (tests/oracle: a Go
//! program built from the k8s.io/kubernetes v1.37.2 module, see its README), and the same
//! quota, LimitRanger and PodSecurity tests against 1.38.0-beta.0's code with the engine's 1.38
//! rules (`*_1_38_code`: the oracle built with `--release 1.38`).
//!
//! Every run generates, from one seed:
//!
//! - 12,000 objects whose usage the engine must compute as upstream's evaluators do: pods
//!   (containers, init containers, restartable sidecars, overhead, pod-level resources including
//!   an empty `resources: {}`, hugepages, extended and DRA extended resources, assorted quantity
//!   formats), pods being resized (spec, status and allocated resources), ResourceClaims
//!   (ExactCount, All, firstAvailable, adminAccess), PersistentVolumeClaims (storage classes,
//!   VolumeAttributesClasses), Services of every type, and counted kinds;
//! - 2,000 admission requests of the last 2,000 of those objects (creates, updates that flip
//!   the Terminating scope or change a service's type, pod resizes), each against a generated
//!   set of 1-3 quotas (hard lists around
//!   the object's usage, scopes, scope selectors, used values, missing status), sometimes with
//!   limited resources: the engine's `check_request_with` must give upstream `CheckRequest`'s
//!   verdict, its message byte for byte and the quotas' usage after charging.
//!
//! Both sides see the object as admission does: defaulted by the API (upstream's scheme
//! defaulting and pod strategy in the oracle, `default_pod_api` in the engine). Pods upstream's
//! validation refuses (about one in seven) never reach quota in a cluster: they are counted, not
//! compared. The engine answers with the rules of Kubernetes 1.37.
//!
//! `pod_security_agrees_with_upstream_code` does the same for PodSecurity admission: 4,000
//! generated pods and namespace labels, judged by k8s.io/pod-security-admission v0.37.2 and by
//! `admission::pod_security` (verdict and message byte for byte; pods upstream's validation
//! refuses are counted, not compared; `KUBECTL_QUOTA_ORACLE_INVALID=1` prints why).
//!
//! `admission_policies_agree_with_upstream_code` does it for MutatingAdmissionPolicy and
//! ValidatingAdmissionPolicy: 400 generated clusters (namespace labels, ConfigMap params, at most
//! one policy of each kind that can deny or mutate plus warn-only ones, since upstream's order
//! among several is not defined) with 8 pods each, 3,200 in all, about 20 s in a debug build.
//! The validations are drawn from a grammar over pods (has(), all/exists/filter/map over
//! containers, `in`, quantities, string functions, ternaries, labels, namespaceObject, request,
//! params), with messages, messageExpressions, reasons, Deny/Warn/Audit, Fail/Ignore,
//! matchConditions, matchConstraints and binding matchResources, paramRefs by name or selector
//! (missing, Deny or Allow); the mutations are ApplyConfigurations and JSONPatches on containers'
//! resources, containers added, labels. The engine's whole check (`check::check`) must give
//! upstream's plugins' verdict, the server's error text byte for byte, the warnings and, after
//! mutation, quota's usage of the pod. Pods the mutations leave invalid are compared by verdict
//! only; cases upstream's type checker refuses are counted, not compared (the engine has none);
//! known differences are listed, with why, in `POLICY_EXCLUSIONS` and printed on every run.
//!
//! The seed comes from `KUBECTL_QUOTA_ORACLE_SEED` (or the clock) and is printed with every
//! failure, so a run can be repeated. `KUBECTL_QUOTA_ORACLE_DUMP=<file>` writes every
//! difference there, one JSON line each (the failure message shows two per group). Where the oracle cannot be built the test says so on stderr
//! and passes, except under `CI=true`, where it fails.
//!
//! Why one file of this length: the generator, the comparison and the triage of an
//! answer must agree on one model of the inputs; they are kept together on purpose.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use kubectl_quota_engine::admission::usage::Evaluator;
use kubectl_quota_engine::admission::{check_request_detailed, Detail, LimitedResource, NamedQuota, Request};
use kubectl_quota_engine::defaulting;
use kubectl_quota_engine::dra::DeviceClasses;
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::{decode, Body, Object, ScopeRequirement};
use kubectl_quota_engine::resources::ResourceList;
use kubectl_quota_engine::version::{KubeVersion, Rules};
use serde_json::{json, Map, Value};

const OBJECTS: usize = 10_000;
const QUOTA_SETS: usize = 2_000;
const NS: &str = "ns";

/// splitmix64: small, seedable, good enough to spread cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// A quantity string for `resource`, in one of the forms people write (all exact at milli).
fn quantity(rng: &mut Rng, resource: &str) -> String {
    match resource {
        "cpu" => match rng.below(8) {
            0 => format!("{}m", rng.below(4000)),
            1 => format!("{}", rng.below(8)),
            2 => format!("{}.{}", rng.below(4), rng.below(10)),
            3 => format!("{}m", 100 * (1 + rng.below(40))),
            4 => format!("{}e-3", rng.below(3000)),
            5 => format!("{}.{:02}", rng.below(3), rng.below(100)),
            6 => "0".to_string(),
            _ => format!("{}00m", 1 + rng.below(30)),
        },
        "memory" | "ephemeral-storage" | "storage" => match rng.below(10) {
            0 => format!("{}Mi", 1 + rng.below(4096)),
            1 => format!("{}Gi", rng.below(16)),
            2 => format!("{}M", 1 + rng.below(4000)),
            3 => format!("{}", 1024 * (1 + rng.below(1_000_000))),
            4 => format!("{}.5Gi", rng.below(8)),
            5 => format!("{}k", 1 + rng.below(100_000)),
            6 => format!("{}e6", 1 + rng.below(2000)),
            7 => format!("{}Ki", 1 + rng.below(2_000_000)),
            8 => format!("{}G", rng.below(10)),
            _ => format!("{}", 1 + rng.below(5_000_000_000)),
        },
        r if r.starts_with("hugepages-2Mi") => format!("{}Mi", 2 * rng.below(64)),
        r if r.starts_with("hugepages-1Gi") => format!("{}Gi", rng.below(4)),
        _ => format!("{}", rng.below(9)),
    }
}

/// A limit above anything [`quantity`] writes for `resource` (`times` that much above).
fn roomy(rng: &mut Rng, resource: &str, times: u64) -> String {
    match resource {
        "cpu" => format!("{}", times * (8 + rng.below(8))),
        _ => format!("{}Gi", times * (20 + rng.below(40))),
    }
}

/// The kind of quantity a quota resource name counts.
fn kind_of(name: &str) -> &'static str {
    if name.contains("cpu") {
        "cpu"
    } else if name.contains("memory") || name.contains("storage") {
        "memory"
    } else if name.contains("hugepages-2Mi") {
        "hugepages-2Mi"
    } else if name.contains("hugepages-1Gi") {
        "hugepages-1Gi"
    } else {
        "x"
    }
}

const DRA_GPU: &str = "deviceclass.resource.kubernetes.io/gpu";
const CONTAINER_RESOURCES: &[&str] = &["cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "hugepages-1Gi", "example.com/gpu", "nvidia.com/gpu", DRA_GPU];
const POD_LEVEL_RESOURCES: &[&str] = &["cpu", "memory", "hugepages-2Mi"];
const CLASSES: &[&str] = &["gpu", "fpga", "nic"];
const PRIORITIES: &[&str] = &["high", "low"];

fn list(rng: &mut Rng, names: &[&str], percent: u64, always: &[&str]) -> Map<String, Value> {
    let mut m = Map::new();
    for n in names {
        if always.contains(n) || rng.chance(percent) {
            m.insert(n.to_string(), Value::String(quantity(rng, n)));
        }
    }
    m
}

/// A container; `complete`: cpu and memory requests and limits always set (no must-specify).
fn container(rng: &mut Rng, name: String, sidecar: bool, complete: bool) -> Value {
    let always: &[&str] = if complete { &["cpu", "memory"] } else { &[] };
    let mut c = json!({"name": name, "image": "x"});
    if complete || rng.chance(90) {
        let mut resources = Map::new();
        let mut requests = list(rng, CONTAINER_RESOURCES, 30, always);
        let mut limits = list(rng, CONTAINER_RESOURCES, 25, always);
        // Mostly valid pods (the API server refuses the others before quota): hugepages and
        // extended resources requested as much as limited; requests often at their limits.
        // Hugepages need cpu or memory beside them.
        if requests.keys().chain(limits.keys()).any(|k| k.starts_with("hugepages-")) {
            let m = quantity(rng, "memory");
            requests.insert("memory".into(), json!(m));
            limits.remove("memory");
        }
        for (k, v) in requests.iter_mut() {
            let overcommit = matches!(k.as_str(), "cpu" | "memory" | "ephemeral-storage");
            match limits.get_mut(k) {
                Some(l) if !overcommit || rng.chance(50) => *v = l.clone(),
                Some(l) => *l = json!(roomy(rng, k, 1)),
                None if !overcommit => {
                    limits.insert(k.clone(), v.clone());
                }
                None => {}
            }
        }
        let fixed = limits.keys().any(|k| !matches!(k.as_str(), "cpu" | "memory" | "ephemeral-storage"));
        if complete || fixed || rng.chance(80) {
            resources.insert("requests".into(), Value::Object(requests));
        }
        if complete || fixed || !limits.is_empty() && rng.chance(55) {
            resources.insert("limits".into(), Value::Object(limits));
        }
        c["resources"] = Value::Object(resources);
    }
    if sidecar {
        c["restartPolicy"] = json!("Always");
    }
    c
}

fn pod_spec(rng: &mut Rng) -> Value {
    let complete = rng.chance(35);
    let containers: Vec<Value> = (0..1 + rng.below(3)).map(|i| container(rng, format!("c{i}"), false, complete)).collect();
    let inits: Vec<Value> = (0..rng.below(4))
        .map(|i| {
            let sidecar = rng.chance(50);
            container(rng, format!("i{i}"), sidecar, complete)
        })
        .collect();
    let mut spec = json!({"containers": containers});
    if !inits.is_empty() {
        spec["initContainers"] = Value::Array(inits);
    }
    if rng.chance(25) {
        spec["overhead"] = Value::Object(list(rng, &["cpu", "memory"], 70, &[]));
    }
    match rng.below(10) {
        0 => spec["resources"] = json!({}),
        1 => spec["resources"] = json!({"requests": {}, "limits": {}}),
        2..=4 => {
            let mut r = Map::new();
            let requests = list(rng, POD_LEVEL_RESOURCES, 55, &[]);
            // Pod-level limits hold every container's limit and the pod-level requests.
            let mut limits = Map::new();
            for k in ["cpu", "memory"] {
                if rng.chance(55) {
                    limits.insert(k.to_string(), json!(roomy(rng, k, 4)));
                }
            }
            if let Some(h) = requests.get("hugepages-2Mi") {
                limits.insert("hugepages-2Mi".into(), h.clone());
            }
            if rng.chance(80) {
                r.insert("requests".into(), Value::Object(requests));
            }
            if rng.chance(70) || limits.contains_key("hugepages-2Mi") {
                r.insert("limits".into(), Value::Object(limits));
            }
            spec["resources"] = Value::Object(r);
        }
        _ => {}
    }
    if rng.chance(40) {
        spec["priorityClassName"] = json!(rng.pick(PRIORITIES));
    }
    if rng.chance(30) {
        spec["activeDeadlineSeconds"] = json!(rng.pick(&[1, 30, 3600]));
    }
    if rng.chance(20) {
        let mut term = json!({"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "a"}}});
        match rng.below(3) {
            0 => term["namespaces"] = json!(["other"]),
            1 => term["namespaceSelector"] = json!({}),
            _ => {}
        }
        let which = if rng.chance(50) { "podAffinity" } else { "podAntiAffinity" };
        spec["affinity"] = if rng.chance(50) {
            json!({which: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
        } else {
            json!({which: {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": term}]}})
        };
    }
    spec
}

fn pod(rng: &mut Rng, name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": pod_spec(rng)})
}

/// Changes some container resources, as an in-place resize does.
fn resized(rng: &mut Rng, old: &Value) -> Value {
    let mut new = old.clone();
    for field in ["containers", "initContainers"] {
        let Some(cs) = new["spec"][field].as_array_mut() else { continue };
        for c in cs.iter_mut() {
            let sidecar = c["restartPolicy"] == "Always";
            if (field == "initContainers" && !sidecar) || !rng.chance(60) {
                continue;
            }
            for part in ["requests", "limits"] {
                for r in ["cpu", "memory"] {
                    if rng.chance(50) {
                        c["resources"][part][r] = Value::String(quantity(rng, r));
                    }
                }
            }
        }
    }
    new
}

/// A running pod's status: per container what the kubelet allocated and runs (from the spec,
/// sometimes another value, sometimes absent), and sometimes an infeasible resize.
fn running_status(rng: &mut Rng, pod: &Value) -> Value {
    let mut statuses = Vec::new();
    let mut init_statuses = Vec::new();
    for field in ["containers", "initContainers"] {
        for c in pod["spec"][field].as_array().into_iter().flatten() {
            let mut st = json!({"name": c["name"], "image": "x", "imageID": "", "ready": true, "restartCount": 0});
            let spec_res = |part: &str| c["resources"][part].as_object().cloned().unwrap_or_default();
            let vary = |m: Map<String, Value>, rng: &mut Rng| -> Map<String, Value> {
                m.into_iter()
                    .map(|(k, v)| if rng.chance(30) && (k == "cpu" || k == "memory") { (k.clone(), Value::String(quantity(rng, &k))) } else { (k, v) })
                    .collect()
            };
            if rng.chance(80) {
                st["allocatedResources"] = Value::Object(vary(spec_res("requests"), rng));
            }
            if rng.chance(70) {
                st["resources"] = json!({"requests": vary(spec_res("requests"), rng), "limits": vary(spec_res("limits"), rng)});
            }
            if field == "containers" {
                statuses.push(st);
            } else {
                init_statuses.push(st);
            }
        }
    }
    let mut status = json!({"phase": "Running", "containerStatuses": statuses});
    if !init_statuses.is_empty() {
        status["initContainerStatuses"] = Value::Array(init_statuses);
    }
    if rng.chance(15) {
        status["conditions"] = json!([{"type": "PodResizePending", "status": "True", "reason": "Infeasible", "message": "Node didn't have enough capacity"}]);
    }
    status
}

/// One device ask; `adminAccess` only outside `firstAvailable` (the API has no such field there).
fn device_ask(rng: &mut Rng, name: Option<String>) -> Value {
    let mut a = json!({"deviceClassName": rng.pick(CLASSES)});
    if let Some(n) = name {
        a["name"] = json!(n);
    }
    match rng.below(6) {
        0 => a["allocationMode"] = json!("All"),
        1 => {}
        2 => a["count"] = json!(1 + rng.below(4)),
        _ => {
            a["allocationMode"] = json!("ExactCount");
            a["count"] = json!(1 + rng.below(5));
        }
    }
    if a.get("name").is_none() && rng.chance(15) {
        a["adminAccess"] = json!(true);
    }
    a
}

fn claim(rng: &mut Rng, name: &str) -> Value {
    let requests: Vec<Value> = (0..1 + rng.below(3))
        .map(|i| {
            let mut r = json!({"name": format!("r{i}")});
            if rng.chance(30) {
                let subs: Vec<Value> = (0..1 + rng.below(3)).map(|j| device_ask(rng, Some(format!("s{j}")))).collect();
                r["firstAvailable"] = Value::Array(subs);
            } else {
                r["exactly"] = device_ask(rng, None);
            }
            r
        })
        .collect();
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": NS},
           "spec": {"devices": {"requests": requests}}})
}

fn pvc(rng: &mut Rng, name: &str) -> Value {
    let mut v = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": NS},
                       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": quantity(rng, "storage")}}}});
    match rng.below(5) {
        0 => {}
        1 => v["spec"]["storageClassName"] = json!(""),
        _ => v["spec"]["storageClassName"] = json!(rng.pick(&["gold", "silver"])),
    }
    if rng.chance(15) {
        v["metadata"]["annotations"] = json!({"volume.beta.kubernetes.io/storage-class": rng.pick(&["gold", "bronze", ""])});
    }
    if rng.chance(35) {
        v["spec"]["volumeAttributesClassName"] = json!(rng.pick(&["fast", "slow"]));
    }
    if rng.chance(10) {
        v["spec"]["resources"]["limits"] = json!({"storage": quantity(rng, "storage")});
    }
    v
}

const SERVICE_TYPES: &[Option<&str>] = &[None, Some("ClusterIP"), Some("NodePort"), Some("LoadBalancer"), Some("ExternalName")];

fn service_spec(rng: &mut Rng, type_: Option<&str>) -> Value {
    let ports: Vec<Value> = (0..1 + rng.below(3))
        .map(|i| {
            let mut p = json!({"name": format!("p{i}"), "port": 80 + i, "protocol": "TCP"});
            if matches!(type_, Some("NodePort" | "LoadBalancer")) && rng.chance(30) {
                p["nodePort"] = json!(30000 + i);
            }
            p
        })
        .collect();
    let mut spec = json!({"ports": ports, "selector": {"app": "a"}});
    if let Some(t) = type_ {
        spec["type"] = json!(t);
    }
    if type_ == Some("ExternalName") {
        spec = json!({"type": "ExternalName", "externalName": "example.com"});
    }
    if type_ == Some("LoadBalancer") && rng.chance(40) {
        spec["allocateLoadBalancerNodePorts"] = json!(rng.chance(50));
    }
    spec
}

fn service(rng: &mut Rng, name: &str) -> Value {
    let t = *rng.pick(SERVICE_TYPES);
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NS}, "spec": service_spec(rng, t)})
}

fn counted(rng: &mut Rng, name: &str) -> Value {
    let meta = json!({"name": name, "namespace": NS});
    match rng.below(5) {
        0 => json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"a": "b"}}),
        1 => json!({"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque"}),
        2 => json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
                    "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}),
        3 => json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
                    "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}),
        _ => json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": {"size": 3}}),
    }
}

/// The cluster's DeviceClasses of a case as the engine reads them (each decoded as a snapshot's
/// DeviceClass is): every class known, none other.
fn engine_classes(classes: &Value, rules: &Rules) -> Result<DeviceClasses, String> {
    let mut out = std::collections::BTreeMap::new();
    for c in classes.as_array().into_iter().flatten() {
        let o = engine_object(c, true, rules)?;
        let Body::DeviceClass { extended_resource_name } = o.body else { return Err(format!("not a DeviceClass: {c}")) };
        out.insert(o.meta.name, extended_resource_name);
    }
    Ok(std::sync::Arc::new(out))
}

/// The cluster's DeviceClasses a case runs with (resource.k8s.io/v1).
fn device_classes(rng: &mut Rng) -> Value {
    let class = |name: &str, extended: Option<&str>| {
        let mut c = json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": {}});
        if let Some(e) = extended {
            c["spec"]["extendedResourceName"] = json!(e);
        }
        c
    };
    match rng.below(3) {
        0 => json!([]),
        1 => json!([class("gpu", None), class("fpga", None), class("nic", None)]),
        _ => json!([class("gpu", Some("example.com/gpu")), class("fpga", None), class("nic", Some("example.com/nic"))]),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Create,
    Update,
    Resize,
}

struct Case {
    /// What the case is, for grouping differences: `pod`, `pod-resize`, `claim`, ...
    label: &'static str,
    op: Op,
    object: Value,
    old: Option<Value>,
    device_classes: Value,
}

fn with_version(mut v: Value) -> Value {
    v["metadata"]["resourceVersion"] = json!("1");
    v
}

fn case(rng: &mut Rng, i: usize, admit: bool) -> Case {
    let name = format!("o{i}");
    let device_classes = device_classes(rng);
    let roll = rng.below(100);
    let (label, op, object, old) = match roll {
        0..=39 => ("pod", Op::Create, pod(rng, &name), None),
        40..=49 => {
            let mut old = pod(rng, &name);
            let status = running_status(rng, &old);
            old["status"] = status;
            let new = resized(rng, &old);
            ("pod-resize", Op::Resize, with_version(new), Some(with_version(old)))
        }
        50..=54 if admit => {
            let mut old = pod(rng, &name);
            let mut new = old.clone();
            match rng.below(3) {
                0 => old["spec"]["activeDeadlineSeconds"] = json!(60),
                1 => new["spec"]["activeDeadlineSeconds"] = json!(60),
                _ => {}
            }
            ("pod-update", Op::Update, with_version(new), Some(with_version(old)))
        }
        50..=54 => {
            let mut p = pod(rng, &name);
            p["status"] = running_status(rng, &p);
            ("pod-with-status", Op::Create, p, None)
        }
        55..=69 => {
            if admit && rng.chance(25) {
                let old = claim(rng, &name);
                ("claim-update", Op::Update, with_version(claim(rng, &name)), Some(with_version(old)))
            } else {
                ("claim", Op::Create, claim(rng, &name), None)
            }
        }
        70..=81 => {
            if admit && rng.chance(25) {
                let old = pvc(rng, &name);
                let mut new = old.clone();
                new["spec"]["resources"]["requests"]["storage"] = json!(quantity(rng, "storage"));
                ("pvc-update", Op::Update, with_version(new), Some(with_version(old)))
            } else {
                ("pvc", Op::Create, pvc(rng, &name), None)
            }
        }
        82..=93 => {
            if admit && rng.chance(25) {
                let old = service(rng, &name);
                let t = *rng.pick(SERVICE_TYPES);
                let mut new = old.clone();
                new["spec"] = service_spec(rng, t);
                ("service-update", Op::Update, with_version(new), Some(with_version(old)))
            } else {
                ("service", Op::Create, service(rng, &name), None)
            }
        }
        _ => ("count", Op::Create, counted(rng, &name), None),
    };
    Case { label, op, object, old, device_classes }
}

/// Extra quota names per kind, beside the object's own usage names.
fn related_names(label: &str) -> &'static [&'static str] {
    if label.starts_with("pod") {
        &[
            "pods",
            "count/pods",
            "cpu",
            "memory",
            "requests.cpu",
            "requests.memory",
            "limits.cpu",
            "limits.memory",
            "requests.ephemeral-storage",
            "requests.hugepages-2Mi",
            "hugepages-1Gi",
            "requests.example.com/gpu",
            "requests.nvidia.com/gpu",
            "requests.deviceclass.resource.kubernetes.io/gpu",
        ]
    } else if label.starts_with("claim") {
        &[
            "count/resourceclaims.resource.k8s.io",
            "gpu.deviceclass.resource.k8s.io/devices",
            "fpga.deviceclass.resource.k8s.io/devices",
            "requests.deviceclass.resource.kubernetes.io/gpu",
            "requests.deviceclass.resource.kubernetes.io/nic",
            "requests.example.com/gpu",
            "requests.example.com/nic",
        ]
    } else if label.starts_with("pvc") {
        &[
            "persistentvolumeclaims",
            "count/persistentvolumeclaims",
            "requests.storage",
            "gold.storageclass.storage.k8s.io/requests.storage",
            "gold.storageclass.storage.k8s.io/persistentvolumeclaims",
            "silver.storageclass.storage.k8s.io/requests.storage",
        ]
    } else if label.starts_with("service") {
        &["services", "count/services", "services.nodeports", "services.loadbalancers"]
    } else {
        &["configmaps", "count/configmaps", "secrets", "count/secrets", "count/deployments.apps", "count/jobs.batch", "count/widgets.example.com"]
    }
}

const UNRELATED: &[&str] = &["count/configmaps", "services", "requests.storage", "limits.memory", "count/pods"];

fn scope_requirement(rng: &mut Rng, pvc: bool) -> Value {
    if pvc {
        let op = *rng.pick(&["In", "NotIn", "Exists", "DoesNotExist"]);
        let mut r = json!({"scopeName": "VolumeAttributesClass", "operator": op});
        if op == "In" || op == "NotIn" {
            r["values"] = json!(if rng.chance(50) { vec!["fast"] } else { vec!["fast", "slow"] });
        }
        return r;
    }
    match rng.below(4) {
        0 => {
            let op = *rng.pick(&["In", "NotIn", "Exists", "DoesNotExist"]);
            let mut r = json!({"scopeName": "PriorityClass", "operator": op});
            if op == "In" || op == "NotIn" {
                r["values"] = json!(if rng.chance(50) { vec!["high"] } else { vec!["high", "low"] });
            }
            r
        }
        _ => {
            json!({"scopeName": rng.pick(&["Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "CrossNamespacePodAffinity"]), "operator": "Exists"})
        }
    }
}

/// A set of 1-3 quotas around the object's usage (upstream's): limits at zero, exactly at the
/// usage, below and well above it; used values zero, assorted or missing (status unknown);
/// unrelated names; scopes and scope selectors.
fn quotas(rng: &mut Rng, label: &str, usage: &Map<String, Value>) -> Vec<Value> {
    let mut names: Vec<String> = usage.keys().cloned().collect();
    names.extend(related_names(label).iter().map(|s| s.to_string()));
    names.extend(UNRELATED.iter().map(|s| s.to_string()));
    names.sort();
    names.dedup();
    let pods = label.starts_with("pod");
    let pvcs = label.starts_with("pvc");
    (0..1 + rng.below(3))
        .map(|i| {
            let mut hard = Map::new();
            let mut used = Map::new();
            for n in &names {
                if !rng.chance(25) {
                    continue;
                }
                let asked = usage.get(n).and_then(Value::as_str).map(String::from);
                let roomy = match kind_of(n) {
                    "cpu" => format!("{}", 20 + rng.below(80)),
                    "memory" => format!("{}Gi", 100 + rng.below(100)),
                    "hugepages-2Mi" | "hugepages-1Gi" => format!("{}Gi", 10 + rng.below(10)),
                    _ => format!("{}", 50 + rng.below(50)),
                };
                let h = match (rng.below(20), &asked) {
                    (0, _) => "0".to_string(),
                    (1..=4, Some(a)) => a.clone(),
                    (5..=7, _) => quantity(rng, kind_of(n)),
                    _ => roomy,
                };
                let exact = asked.as_ref() == Some(&h);
                hard.insert(n.clone(), Value::String(h));
                if !rng.chance(4) {
                    let u = if exact || rng.chance(60) { "0".to_string() } else { quantity(rng, kind_of(n)) };
                    used.insert(n.clone(), Value::String(u));
                }
            }
            let mut spec = json!({"hard": hard.clone()});
            if (pods || pvcs) && rng.chance(35) {
                if pods && rng.chance(50) {
                    spec["scopes"] =
                        json!([rng.pick(&["Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity"])]);
                } else {
                    let exprs: Vec<Value> = (0..1 + rng.below(2)).map(|_| scope_requirement(rng, pvcs)).collect();
                    spec["scopeSelector"] = json!({"matchExpressions": exprs});
                }
            }
            let mut q = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": format!("q{i}"), "namespace": NS}, "spec": spec});
            if !rng.chance(3) {
                q["status"] = json!({"hard": hard, "used": used});
            }
            q
        })
        .collect()
}

/// Sometimes an admission configuration's limitedResources.
fn limited(rng: &mut Rng) -> Value {
    if !rng.chance(10) {
        return json!([]);
    }
    let choices = [
        json!({"resource": "pods", "matchContains": ["requests.cpu"]}),
        json!({"resource": "pods", "matchContains": ["memory"]}),
        json!({"resource": "persistentvolumeclaims", "matchContains": [".storageclass.storage.k8s.io/requests.storage"]}),
        json!({"resource": "pods", "matchScopes": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}),
        json!({"apiGroup": "resource.k8s.io", "resource": "resourceclaims", "matchContains": ["deviceclass"]}),
        json!({"resource": "services", "matchContains": ["loadbalancers"]}),
    ];
    json!([rng.pick(&choices).clone()])
}

fn engine_limited(v: &Value) -> Vec<LimitedResource> {
    let strings = |x: &Value| -> Vec<String> { x.as_array().into_iter().flatten().map(|s| s.as_str().unwrap().to_string()).collect() };
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| LimitedResource {
            api_group: l["apiGroup"].as_str().unwrap_or("").to_string(),
            resource: l["resource"].as_str().unwrap().to_string(),
            match_contains: strings(&l["matchContains"]),
            match_scopes: l["matchScopes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| ScopeRequirement {
                    scope_name: s["scopeName"].as_str().unwrap().to_string(),
                    operator: s["operator"].as_str().unwrap().to_string(),
                    values: strings(&s["values"]),
                })
                .collect(),
        })
        .collect()
}

/// The object as the engine sees it at admission: decoded, and defaulted as the API does.
fn engine_object(v: &Value, create: bool, rules: &Rules) -> Result<Object, String> {
    let doc = Document { origin: Origin::new("generated.json", 1), value: v.clone() };
    let mut obj = decode(&doc).map_err(|e| format!("{e:?}"))?;
    if let Body::Pod(p) = &mut obj.body {
        if create {
            defaulting::clear_pod_status(p);
        }
        defaulting::drop_disabled_fields(p, rules);
        defaulting::default_pod_api_for(p, rules);
        defaulting::default_pod_level_resources(p, rules);
    }
    Ok(obj)
}

fn as_json(l: &ResourceList) -> Value {
    Value::Object(l.iter().map(|(k, q)| (k.clone(), Value::String(q.to_string()))).collect())
}

/// A release the oracle is built for: upstream's code of that version against the engine's
/// rules for it.
#[derive(Debug, Clone, Copy)]
struct Release {
    minor: u32,
    /// The upstream version the oracle is built from.
    upstream: &'static str,
}

/// The newest release out, the default of every answer.
const R1_37: Release = Release { minor: 37, upstream: "1.37.2" };
/// The release not out yet, from the newest pre-release the Go module proxy serves (keep in
/// step with `PRERELEASES` in engine/src/version.rs and tests/oracle/go.1.38.mod).
const R1_38: Release = Release { minor: 38, upstream: "1.38.0-beta.0" };

impl Release {
    fn rules(self) -> Rules {
        Rules::for_version(KubeVersion::new(1, self.minor))
    }
}

/// The oracle binary of `release`, or why there is none.
fn oracle(release: Release) -> Result<String, String> {
    let script = common::root().join("tests/oracle/build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args(["--release", &format!("1.{}", release.minor)])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let path = stdout.lines().last().unwrap_or("").trim().to_string();
    if !out.status.success() || path.is_empty() || !Path::new(&path).exists() {
        return Err(format!("{} failed ({}): {}", script.display(), out.status, String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(path)
}

/// Two tests of one differential check: `$run` against upstream 1.37.2's code with the
/// engine's 1.37 rules, and against 1.38.0-beta.0's code with its 1.38 rules.
macro_rules! at_both_releases {
    ($run:ident: $at_1_37:ident, $at_1_38:ident) => {
        #[test]
        fn $at_1_37() {
            $run(R1_37);
        }

        #[test]
        fn $at_1_38() {
            $run(R1_38);
        }
    };
}

/// The oracle's binary and the run's seed (`KUBECTL_QUOTA_ORACLE_SEED`, else the clock);
/// `None`, said loudly, when the oracle cannot be built (under CI=true that fails instead).
fn oracle_and_seed(what: &str, release: Release) -> Option<(String, u64)> {
    let binary = match oracle(release) {
        Ok(b) => b,
        Err(why) => {
            eprintln!("\n!!!!!!!!!! ORACLE NOT AVAILABLE: {what} DID NOT RUN !!!!!!!!!!\n{why}\n");
            assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true: the oracle must be built ({why})");
            return None;
        }
    };
    let seed = std::env::var("KUBECTL_QUOTA_ORACLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64);
    Some((binary, seed))
}

/// Sends every line to the oracle at once and reads one answer per line.
fn ask(binary: &str, lines: &[String]) -> Vec<Value> {
    let mut child = Command::new(binary).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let n = lines.len();
    let owned = lines.to_vec();
    let writer = std::thread::spawn(move || {
        let mut w = std::io::BufWriter::new(&mut stdin);
        for l in owned {
            writeln!(w, "{l}").unwrap();
        }
    });
    let answers: Vec<Value> = BufReader::new(child.stdout.take().unwrap()).lines().map(|l| serde_json::from_str(&l.unwrap()).unwrap()).collect();
    writer.join().unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(answers.len(), n, "the oracle answered {} of {n} lines", answers.len());
    answers
}

/// `f` over `items` on every available core, results in order.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let chunk = items.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = items.chunks(chunk).map(|part| s.spawn(|| part.iter().map(&f).collect::<Vec<R>>())).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

/// Differences, grouped by what differs, with the first few requests of each group.
struct Differences {
    groups: BTreeMap<String, (usize, Vec<String>)>,
    total: usize,
    /// Every difference, one JSON line each, when `KUBECTL_QUOTA_ORACLE_DUMP` names a file.
    dump: Option<std::io::BufWriter<std::fs::File>>,
}

impl Differences {
    fn new() -> Differences {
        let dump = std::env::var_os("KUBECTL_QUOTA_ORACLE_DUMP").map(|p| std::io::BufWriter::new(std::fs::File::create(p).expect("KUBECTL_QUOTA_ORACLE_DUMP")));
        Differences { groups: BTreeMap::new(), total: 0, dump }
    }

    /// A case not compared (refused by upstream's validation), in the dump only.
    fn skip(&mut self, why: &Value) {
        if let Some(d) = &mut self.dump {
            writeln!(d, "{}", json!({"group": "invalid upstream", "detail": why})).unwrap();
        }
    }

    /// The engine's answer to compare with the oracle's answer `a`, or `None` when there is
    /// nothing to compare: the oracle failed (a difference), upstream's validation refuses the
    /// object (counted in `invalid`), or the engine cannot decode it (a difference).
    fn comparable(&mut self, label: &str, a: &Value, got: Result<Value, String>, request: &str, invalid: &mut usize) -> Option<Value> {
        if let Some(e) = a.get("error") {
            self.add(format!("{label}: oracle error"), format!("oracle: {e}\n    request {request}"));
            return None;
        }
        if let Some(why) = a.get("invalid") {
            *invalid += 1;
            self.skip(why);
            return None;
        }
        got.map_err(|e| self.add(format!("{label}: engine cannot decode"), format!("engine: {e}\n    request {request}"))).ok()
    }

    fn add(&mut self, group: String, detail: String) {
        if let Some(d) = &mut self.dump {
            writeln!(d, "{}", json!({"group": group, "detail": detail})).unwrap();
        }
        self.total += 1;
        let g = self.groups.entry(group).or_default();
        g.0 += 1;
        // Keep the shortest examples: they are the easiest to read.
        g.1.push(detail);
        g.1.sort_by_key(String::len);
        g.1.truncate(2);
    }
}

/// Which part of an admission answer differs.
fn admit_difference(got: &Value, want: &Value) -> &'static str {
    if got["allowed"] != want["allowed"] {
        "verdict"
    } else if got["message"] != want["message"] {
        "message"
    } else {
        "quota usage after charging"
    }
}

/// The engine's answer to a `usage` question: the evaluator's usage of `object`.
fn engine_usage(object: &Value, create: bool, device_classes: &Value, rules: &Rules) -> Result<Value, String> {
    let obj = engine_object(object, create, rules)?;
    let classes = engine_classes(device_classes, rules)?;
    let ev = Evaluator::for_object_in(&obj, rules, Some(&classes));
    Ok(json!({"ignored": matches!(ev, Evaluator::Ignored(_)), "usage": as_json(&ev.usage(&obj))}))
}

/// The engine's answer to an `admit` question: quota's verdict, message and the usage after.
fn engine_admit(
    object: &Value,
    old: Option<&Value>,
    quotas: &[Value],
    limited: &Value,
    device_classes: &Value,
    resize: bool,
    rules: &Rules,
) -> Result<Value, String> {
    let obj = engine_object(object, old.is_none(), rules)?;
    let old = old.map(|v| engine_object(v, false, rules)).transpose()?;
    let mut named: Vec<NamedQuota> = quotas
        .iter()
        .map(|q| {
            // The oracle takes a quota without its type (the pinned cases leave it out).
            let mut q = q.clone();
            for (k, v) in [("apiVersion", "v1"), ("kind", "ResourceQuota")] {
                if q.get(k).is_none() {
                    q[k] = json!(v);
                }
            }
            let o = engine_object(&q, true, rules).expect("the engine decodes a generated quota");
            let Body::ResourceQuota(rq) = o.body else { unreachable!() };
            NamedQuota { name: o.meta.name, quota: *rq }
        })
        .collect();
    let classes = engine_classes(device_classes, rules)?;
    let request = Request { classes: Some(&classes), detail: Detail::Full, resize };
    let d = check_request_detailed(&mut named, &obj, old.as_ref(), &engine_limited(limited), rules, &request);
    let message = d.refusal.as_ref().map(|r| r.server_error(&obj)).unwrap_or_default();
    let used: Vec<Value> = if d.allowed { named.iter().map(|q| as_json(&q.quota.status_used)).collect() } else { vec![] };
    Ok(json!({"allowed": d.allowed, "message": message, "quotas": used}))
}

at_both_releases!(quota_agrees_with_upstream: engine_agrees_with_upstream_code, engine_agrees_with_upstream_1_38_code);

fn quota_agrees_with_upstream(release: Release) {
    let Some((binary, seed)) = oracle_and_seed("the differential test against upstream Kubernetes code", release) else { return };
    let started = Instant::now();
    let mut rng = Rng(seed);
    let rules = release.rules();
    let upstream = release.upstream;

    // Usage of every object, the admitted ones included (their quotas are drawn around it).
    let cases: Vec<Case> = (0..OBJECTS + QUOTA_SETS).map(|i| case(&mut rng, i, i >= OBJECTS)).collect();
    let usage_lines: Vec<String> =
        cases.iter().enumerate().map(|(i, c)| json!({"id": i, "op": "usage", "object": c.object, "deviceClasses": c.device_classes}).to_string()).collect();
    let usages = ask(&binary, &usage_lines);
    let asked_usage = started.elapsed();

    // The engine's answers, on every core (decoding dominates in a debug build).
    let engine_usages: Vec<Result<Value, String>> = parallel_map(&cases, |c| engine_usage(&c.object, c.old.is_none(), &c.device_classes, &rules));
    let mut diffs = Differences::new();
    // Objects upstream's validation refuses never reach quota: not compared, only counted.
    let (mut invalid, mut invalid_admits) = (0, 0);
    for (i, ((c, a), got)) in cases.iter().zip(&usages).zip(engine_usages).enumerate() {
        let request = &usage_lines[i];
        let Some(got) = diffs.comparable(c.label, a, got, request, &mut invalid) else { continue };
        let want = json!({"ignored": a.get("ignored").cloned().unwrap_or(json!(false)), "usage": a["usage"]});
        if got != want {
            diffs.add(format!("{}: usage", c.label), format!("engine   {got}\n    upstream {want}\n    request {request}"));
        }
    }

    // Admission of the last QUOTA_SETS objects, each against its own quotas.
    let mut admits = Vec::with_capacity(QUOTA_SETS);
    let mut admit_lines = Vec::with_capacity(QUOTA_SETS);
    for (i, c) in cases.iter().enumerate().skip(OBJECTS) {
        let usage = usages[i]["usage"].as_object().cloned().unwrap_or_default();
        let qs = quotas(&mut rng, c.label, &usage);
        let lim = limited(&mut rng);
        let mut line = json!({"id": i, "op": "admit", "namespace": NS, "object": c.object, "quotas": qs, "deviceClasses": c.device_classes});
        if !lim.as_array().unwrap().is_empty() {
            line["limitedResources"] = lim.clone();
        }
        match c.op {
            Op::Create => {}
            Op::Update => {
                line["operation"] = json!("update");
                line["oldObject"] = c.old.clone().unwrap();
            }
            Op::Resize => {
                line["operation"] = json!("update");
                line["subresource"] = json!("resize");
                line["oldObject"] = c.old.clone().unwrap();
            }
        }
        admit_lines.push(line.to_string());
        admits.push((c, qs, lim));
    }
    let before_admit = Instant::now();
    let answers = ask(&binary, &admit_lines);
    let asked_admit = before_admit.elapsed();
    let engine_admits = parallel_map(&admits, |(c, qs, lim)| engine_admit(&c.object, c.old.as_ref(), qs, lim, &c.device_classes, c.op == Op::Resize, &rules));
    for ((((c, _, _), a), request), got) in admits.iter().zip(&answers).zip(&admit_lines).zip(engine_admits) {
        let label = format!("{} {:?}", c.label, c.op).to_lowercase();
        let Some(got) = diffs.comparable(&label, a, got, request, &mut invalid_admits) else { continue };
        let want = json!({"allowed": a["allowed"], "message": a["message"], "quotas": a["quotas"]});
        if got != want {
            diffs.add(format!("{label}: {}", admit_difference(&got, &want)), format!("engine   {got}\n    upstream {want}\n    request {request}"));
        }
    }

    let refused = answers.iter().filter(|a| a["allowed"] == false && a.get("invalid").is_none()).count();
    println!(
        "oracle {upstream} (seed {seed}): {} objects' usage ({invalid} invalid upstream, not compared), {QUOTA_SETS} quota sets ({invalid_admits} invalid, {refused} refused upstream), {} differences, {:.1} s (generating and asking for usage {:.1} s, admission {:.1} s)",
        OBJECTS + QUOTA_SETS,
        diffs.total,
        started.elapsed().as_secs_f64(),
        asked_usage.as_secs_f64(),
        asked_admit.as_secs_f64()
    );
    // Differences in the open gaps are printed on every run, loudly; any other fails the test.
    let gap_of = |group: &str| OPEN_GAPS.iter().find(|(families, _)| families.iter().any(|f| group.split([':', ' ']).next() == Some(*f)));
    let (mut open, mut unexpected) = (String::new(), 0);
    let mut report = String::new();
    for (group, (n, examples)) in &diffs.groups {
        let mut text = format!("\n== {group}: {n} differences; the shortest:\n");
        for e in examples {
            text.push_str(&format!("  {e}\n"));
        }
        match gap_of(group) {
            Some((_, why)) => open.push_str(&format!("{text}  (open gap: {why})\n")),
            None => {
                unexpected += n;
                report.push_str(&text);
            }
        }
    }
    if !open.is_empty() {
        // Straight to standard error: the test harness captures eprintln! of a passing test.
        let _ = writeln!(
            std::io::stderr(),
            "\n!!!!!!!!!! seed {seed}: {} differences from upstream Kubernetes {upstream} in OPEN GAPS of the engine (tests/oracle.rs OPEN_GAPS) !!!!!!!!!!\n{open}",
            diffs.total - unexpected
        );
    }
    assert!(
        unexpected == 0,
        "seed {seed} (repeat with KUBECTL_QUOTA_ORACLE_SEED={seed}): {unexpected} of {} checks differ from upstream Kubernetes {upstream} outside the open gaps:\n{report}",
        OBJECTS + 2 * QUOTA_SETS
    );
}

/// Case families (the first word of a difference's group) where the engine is known to differ
/// from upstream 1.37.2, and why. Each is an open item of the work on 1.37, not a tolerance:
/// what differs there is printed on every run, and a difference in any other family fails.
/// Shrink this list as the engine learns; never grow it to make a run pass.
const OPEN_GAPS: &[(&[&str], &str)] = &[];

/// A LimitRange of one to three items, each with some of min, max, default, defaultRequest and
/// (not for claims) maxLimitRequestRatio.
fn limit_range(rng: &mut Rng) -> Value {
    let cpu = ["100m", "250m", "500m", "1", "1500m", "2"];
    let memory = ["64Mi", "128Mi", "256Mi", "1Gi", "2Gi"];
    let storage = ["500Mi", "1Gi", "5Gi", "10Gi"];
    let ratio = ["1", "1500m", "2", "3"];
    let items: Vec<Value> = (0..1 + rng.below(3))
        .map(|_| {
            let kind = *rng.pick(&["Container", "Container", "Pod", "PersistentVolumeClaim"]);
            let mut item = Map::new();
            item.insert("type".into(), json!(kind));
            let fields: &[&str] = match kind {
                "Container" => &["min", "max", "default", "defaultRequest", "maxLimitRequestRatio"],
                "Pod" => &["min", "max", "maxLimitRequestRatio"],
                _ => &["min", "max"],
            };
            for f in fields {
                if !rng.chance(40) {
                    continue;
                }
                let mut list = Map::new();
                if kind == "PersistentVolumeClaim" {
                    list.insert("storage".into(), json!(rng.pick(&storage)));
                } else {
                    for (name, values) in [("cpu", &cpu[..]), ("memory", &memory[..])] {
                        if rng.chance(60) {
                            let v = if *f == "maxLimitRequestRatio" { *rng.pick(&ratio) } else { *rng.pick(values) };
                            list.insert(name.into(), json!(v));
                        }
                    }
                }
                if !list.is_empty() {
                    item.insert((*f).into(), Value::Object(list));
                }
            }
            Value::Object(item)
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": NS}, "spec": {"limits": items}})
}

/// A container with some cpu and memory requests and limits.
fn limited_container(rng: &mut Rng, name: &str) -> Value {
    let mut res = Map::new();
    for part in ["requests", "limits"] {
        let mut list = Map::new();
        if rng.chance(60) {
            list.insert("cpu".into(), json!(rng.pick(&["50m", "100m", "250m", "500m", "1", "2", "3"])));
        }
        if rng.chance(60) {
            list.insert("memory".into(), json!(rng.pick(&["32Mi", "64Mi", "128Mi", "512Mi", "1Gi", "3Gi"])));
        }
        if !list.is_empty() {
            res.insert(part.into(), Value::Object(list));
        }
    }
    json!({"name": name, "image": "x", "resources": res})
}

/// A pod of one or two containers and maybe an init container, with some cpu and memory
/// requests and limits; or a claim.
fn limited_object(rng: &mut Rng, i: usize) -> Value {
    if rng.chance(20) {
        let size = *rng.pick(&["100Mi", "500Mi", "1Gi", "3Gi", "5Gi", "20Gi"]);
        return json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": format!("c{i}"), "namespace": NS},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}});
    }
    let containers: Vec<Value> = (0..1 + rng.below(2)).map(|k| limited_container(rng, &format!("c{k}"))).collect();
    let mut spec = json!({"containers": containers});
    if rng.chance(25) {
        spec["initContainers"] = json!([limited_container(rng, "init")]);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("p{i}"), "namespace": NS}, "spec": spec})
}

/// An update of `old` for LimitRanger: a pod resize (some containers' cpu or memory values
/// moved, others kept) or a claim update (the same request, spelled alike or not, or another),
/// as (object, subresource). `None` for a pod without resources to move.
fn limited_update(rng: &mut Rng, old: &mut Value) -> (Value, &'static str) {
    // An update names the version it replaces.
    old["metadata"]["resourceVersion"] = json!("1");
    let mut new = old.clone();
    if old["kind"] == "PersistentVolumeClaim" {
        // The same request, or the same value spelled another way: a claim cannot shrink, and
        // growing it is the storage class's to allow, which is not LimitRanger's question.
        let same = match old["spec"]["resources"]["requests"]["storage"].as_str() {
            Some("1Gi") => "1024Mi",
            Some("20Gi") => "20480Mi",
            Some(other) => other,
            None => "1Gi",
        };
        if rng.chance(50) {
            new["spec"]["resources"]["requests"]["storage"] = json!(same);
        }
        new["metadata"]["labels"] = json!({"changed": "yes"});
        return (new, "");
    }
    // `get_mut`, not indexing: indexing a missing key writes a null into the object.
    for list in ["containers", "initContainers"] {
        let Some(containers) = new["spec"].get_mut(list).and_then(Value::as_array_mut) else { continue };
        for c in containers.iter_mut() {
            if !rng.chance(50) {
                continue;
            }
            for part in ["requests", "limits"] {
                let Some(values) = c.get_mut("resources").and_then(|r| r.get_mut(part)).and_then(Value::as_object_mut) else { continue };
                for (name, v) in values.iter_mut() {
                    if rng.chance(60) {
                        *v = json!(if name == "cpu" {
                            *rng.pick(&["50m", "100m", "250m", "500m", "1", "2", "3"])
                        } else {
                            *rng.pick(&["32Mi", "64Mi", "128Mi", "512Mi", "1Gi", "3Gi"])
                        });
                    }
                }
            }
        }
    }
    (new, "resize")
}

/// Values past `MaxMilliValue` (about 9.2e15), where 1.37 compared in whole units rounded up
/// and 1.38 compares exactly: a memory max and the limits and requests around it. Near and
/// past int64 only with `past_int64`: 1.37's `Value()` wraps there, and a pod's total of two
/// such containers too, which the engine does not replay (it saturates;
/// docs/kubernetes-1.38.md §7).
fn past_milli_limits(rng: &mut Rng, lr: &mut Value, object: &mut Value, past_int64: bool) {
    let all = ["10000000000000000", "10000000000000000.5", "10000000000000001", "9223372036854775807", "9223372036854775809"];
    let edge = if past_int64 { &all[..] } else { &all[..3] };
    if let Some(item) = lr["spec"]["limits"].as_array_mut().and_then(|items| items.first_mut()) {
        let key = if item["type"] == "PersistentVolumeClaim" { "storage" } else { "memory" };
        let field = *rng.pick(&["max", "min"]);
        item[field] = json!({ key: *rng.pick(edge) });
    }
    if object["kind"] == "PersistentVolumeClaim" {
        object["spec"]["resources"]["requests"]["storage"] = json!(*rng.pick(edge));
    } else if let Some(c) = object["spec"]["containers"].as_array_mut().and_then(|cs| cs.first_mut()) {
        let v = *rng.pick(edge);
        c["resources"] = json!({"requests": {"memory": v}, "limits": {"memory": *rng.pick(&[v, "10000000000000001", edge[edge.len() - 1]])}});
    }
}

/// A verdict in a form both sides give: `allowed`, `invalid` (a 422 before LimitRanger's own
/// validation), or the refusal with several violations as a sorted set (the server walks a
/// LimitRange's maps in random order).
fn limits_verdict(allowed: bool, invalid: bool, message: &str) -> String {
    if allowed {
        return "allowed".into();
    }
    if invalid {
        return "invalid".into();
    }
    match message.strip_prefix('[').and_then(|m| m.strip_suffix(']')) {
        Some(many) => {
            let mut parts: Vec<&str> = many.split(", ").collect();
            // A violation's own text holds no ", " but the ratio's (", but ..."): rejoin those.
            let mut joined: Vec<String> = Vec::new();
            for p in parts.drain(..) {
                if p.starts_with("but ") {
                    if let Some(last) = joined.last_mut() {
                        last.push_str(", ");
                        last.push_str(p);
                        continue;
                    }
                }
                joined.push(p.to_string());
            }
            joined.sort();
            format!("[{}]", joined.join(" | "))
        }
        None => message.to_string(),
    }
}

/// The engine's verdict on a `limits` question ([`limits_verdict`]): `object` checked in a
/// namespace with `limit_ranges` (and the stored `old` object of an update) and a roomy quota.
fn engine_limits(limit_ranges: &[Value], object: &Value, old: Option<&Value>, rules: &Rules) -> String {
    let quota = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: roomy, namespace: ns}\nspec: {hard: {pods: '1000'}}\nstatus: {hard: {pods: '1000'}, used: {pods: '0'}}\n";
    let docs = kubectl_quota_engine::manifest::parse_str("quota.yaml", quota).unwrap();
    let mut objects: Vec<Object> = docs.iter().map(|d| decode(d).unwrap()).collect();
    for lr in limit_ranges {
        let mut lr = lr.clone();
        lr["metadata"]["namespace"] = json!(NS);
        // The oracle takes a LimitRange without its type (the pinned cases leave it out).
        lr["apiVersion"] = json!("v1");
        lr["kind"] = json!("LimitRange");
        objects.push(decode(&Document { origin: Origin::new("lr", 1), value: lr }).unwrap());
    }
    // The stored object of an update is in the state: the check then answers the update.
    let in_ns = |v: &Value| {
        let mut v = v.clone();
        v["metadata"]["namespace"] = json!(NS);
        v
    };
    if let Some(old) = old {
        objects.push(decode(&Document { origin: Origin::new("stored", 1), value: in_ns(old) }).unwrap());
    }
    let obj = decode(&Document { origin: Origin::new("object", 1), value: in_ns(object) }).unwrap();
    // A claim whose update changes its request: the whole check also runs the claim update's
    // own validation (no shrinking, expansion only where the class allows it), which the
    // oracle's `limits` question leaves out; LimitRanger's half is asked alone.
    if let (Body::PersistentVolumeClaim(new), Some(Body::PersistentVolumeClaim(stored))) = (&obj.body, objects.last().map(|o| &o.body)) {
        if old.is_some() && new.storage_request != stored.storage_request {
            let ranges: Vec<(String, Vec<kubectl_quota_engine::objects::LimitRangeItem>)> = objects
                .iter()
                .filter_map(|o| match &o.body {
                    Body::LimitRange(items) => Some((o.meta.name.clone(), items.clone())),
                    _ => None,
                })
                .collect();
            let ranges: Vec<(&str, &[kubectl_quota_engine::objects::LimitRangeItem])> = ranges.iter().map(|(n, i)| (n.as_str(), i.as_slice())).collect();
            return match kubectl_quota_engine::admission::limit_ranger::validate_pvc(new, Some(stored), &ranges, rules) {
                Ok(()) => limits_verdict(true, false, ""),
                Err(m) => limits_verdict(false, false, &m),
            };
        }
    }
    let mut state = kubectl_quota_engine::check::ClusterState::from_objects(objects, NS);
    let opts = kubectl_quota_engine::check::CheckOptions { namespace: NS.into(), rules: *rules, ..Default::default() };
    let report = kubectl_quota_engine::check::check(&mut state, vec![obj], &opts);
    let d = &report.documents[0];
    let engine_invalid = d.refusal.as_ref().is_some_and(|r| r.reason == kubectl_quota_engine::admission::RefusalReason::Invalid);
    limits_verdict(d.allowed, engine_invalid, d.message.as_deref().unwrap_or(""))
}

/// Pinned cases where the engine is known to differ from one release's code, and why; printed
/// on every run. Never grown to make a run pass.
const PINNED_GAPS: &[(&str, u32, &str)] = &[(
    "k138-lr-ratio-int64-edge",
    37,
    "1.37's LimitRanger reads a limit past int64 through a wrapping Value() (9223372036854775809 becomes negative, so the ratio passes); the engine saturates at int64, as 1.38's checked accessors do",
)];

/// The cases tests/oracle/smoke.jsonl pins for the changes between 1.37 and 1.38 (ids
/// `k138-*`: partial and zero container limits, the pod-level overhead, LimitRanger past
/// MaxMilliValue and at the int64 edge, resizes and claim updates keeping stored values,
/// integer resources at any size), asked of both oracles and answered by the engine with each
/// release's rules: the same usage, verdict and words, case by case.
#[test]
fn the_changes_of_1_38_answer_as_upstream_code_at_both_releases() {
    let pinned: Vec<Value> = std::fs::read_to_string(common::root().join("tests/oracle/smoke.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["id"].as_str().is_some_and(|id| id.starts_with("k138-")))
        .collect();
    assert!(pinned.len() >= 30, "smoke.jsonl pins {} cases of 1.38", pinned.len());
    let lines: Vec<String> = pinned.iter().map(Value::to_string).collect();
    let mut differences = Vec::new();
    for release in [R1_37, R1_38] {
        let Some((binary, _)) = oracle_and_seed("the pinned cases of 1.38", release) else { return };
        let rules = release.rules();
        for (q, a) in pinned.iter().zip(ask(&binary, &lines)) {
            let (id, none) = (q["id"].as_str().unwrap(), json!(null));
            let classes = q.get("deviceClasses").unwrap_or(&none);
            let (got, want) = match q["op"].as_str() {
                Some("usage") => {
                    let got = engine_usage(&q["object"], true, classes, &rules);
                    match (got, a.get("invalid")) {
                        // The engine's validation gives the same 422 for what upstream's refuses.
                        (_, Some(why)) => {
                            let obj = engine_object(&q["object"], true, &rules).unwrap();
                            let Body::Pod(p) = &obj.body else { panic!("{id}: a usage question upstream finds invalid is a pod") };
                            let got = kubectl_quota_engine::object_validation::validate_pod_requests(p, "p", &rules, Default::default(), true);
                            (format!("{:?}", got.err()), format!("{:?}", Some(format!("Pod \"p\" is invalid: {}", why.as_str().unwrap()))))
                        }
                        (got, None) => (format!("{:?}", got.map(|g| g["usage"].clone())), format!("{:?}", Ok::<Value, String>(a["usage"].clone()))),
                    }
                }
                Some("admit") => {
                    let got = engine_admit(
                        &q["object"],
                        q.get("oldObject"),
                        q["quotas"].as_array().unwrap(),
                        q.get("limitedResources").unwrap_or(&json!([])),
                        classes,
                        q["subresource"] == "resize",
                        &rules,
                    );
                    (format!("{got:?}"), format!("{:?}", Ok::<Value, String>(json!({"allowed": a["allowed"], "message": a["message"], "quotas": a["quotas"]}))))
                }
                Some("limits") if a.get("ignored").is_some() => continue,
                Some("limits") => {
                    let ranges = q["limitRanges"].as_array().unwrap();
                    let got = engine_limits(ranges, &q["object"], q.get("oldObject"), &rules);
                    let want = limits_verdict(a["allowed"].as_bool().unwrap_or(false), a.get("invalid").is_some(), a["message"].as_str().unwrap_or(""));
                    // Of several LimitRanges the server's first refusal is the one its cache
                    // lists first, in no order a request can pin (the engine takes name order,
                    // the oracle the order asked): both refusing is agreement.
                    let refused = |v: &str| v != "allowed" && v != "invalid";
                    if ranges.len() > 1 && refused(&got) && refused(&want) {
                        continue;
                    }
                    (got, want)
                }
                other => panic!("{id}: op {other:?}"),
            };
            if got != want {
                match PINNED_GAPS.iter().find(|(gap, minor, _)| *gap == id && *minor == release.minor) {
                    Some((_, _, why)) => {
                        eprintln!("!!!!!!!!!! {id} ({}): a known gap, not compared: {why}\n    engine   {got}\n    upstream {want}", release.upstream)
                    }
                    None => differences.push(format!("{id} ({}):\n    engine   {got}\n    upstream {want}", release.upstream)),
                }
            }
        }
    }
    assert!(differences.is_empty(), "{} pinned answers differ from upstream:\n{}", differences.len(), differences.join("\n"));
}

// LimitRanger (docs/semantics.md §9) against upstream's own functions on generated
// LimitRanges, pods and claims: the same verdict and words, case by case.
at_both_releases!(limit_ranger_agrees_with_upstream: limit_ranger_agrees_with_upstream_code, limit_ranger_agrees_with_upstream_1_38_code);

fn limit_ranger_agrees_with_upstream(release: Release) {
    let Some((binary, seed)) = oracle_and_seed("the LimitRanger differential test", release) else { return };
    let mut rng = Rng(seed);
    let rules = release.rules();
    // Creates, one in ten with values past MaxMilliValue; and updates (pod resizes, claim
    // updates) of a stored object, which 1.38 checks only in what they change.
    let cases: Vec<(Value, Value, Option<(Value, &str)>)> = (0..3_000)
        .map(|i| {
            let (mut lr, mut o) = (limit_range(&mut rng), limited_object(&mut rng, i));
            if rng.chance(10) {
                past_milli_limits(&mut rng, &mut lr, &mut o, release.minor >= 38);
            }
            let update = rng
                .chance(30)
                .then(|| limited_update(&mut rng, &mut o))
                // A resize changes something (the same pod again is no resize at all).
                .filter(|(new, sub)| sub.is_empty() || new["spec"] != o["spec"])
                .map(|(new, sub)| (std::mem::replace(&mut o, new), sub));
            (lr, o, update)
        })
        .collect();
    let lines: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(i, (lr, o, update))| {
            let mut q = json!({"id": i, "op": "limits", "object": o, "limitRanges": [lr]});
            if let Some((old, sub)) = update {
                q["operation"] = json!("update");
                q["oldObject"] = old.clone();
                if !sub.is_empty() {
                    q["subresource"] = json!(sub);
                }
            }
            q.to_string()
        })
        .collect();
    let answers = ask(&binary, &lines);
    let mut differences = Vec::new();
    let mut invalid_updates = 0;
    for (i, ((lr, o, update), a)) in cases.iter().zip(&answers).enumerate() {
        if let Some(e) = a.get("error") {
            panic!("the oracle refused case {i} (seed {seed}): {e}\n{}", lines[i]);
        }
        // An update upstream's validation refuses (a resize that changes the QoS class, a
        // stored pod no create would have kept) never reaches LimitRanger: counted, not compared.
        if update.is_some() && a.get("invalid").is_some() {
            invalid_updates += 1;
            continue;
        }
        let got = engine_limits(std::slice::from_ref(lr), o, update.as_ref().map(|(old, _)| old), &rules);
        let want = limits_verdict(a["allowed"].as_bool().unwrap_or(false), a.get("invalid").is_some(), a["message"].as_str().unwrap_or(""));
        if got != want {
            differences.push(format!("case {i}:\n    engine   {got}\n    upstream {want}\n    request  {}", lines[i]));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} LimitRanger cases differ from upstream {} (seed {seed}, KUBECTL_QUOTA_ORACLE_SEED={seed} to repeat):\n{}",
        differences.len(),
        cases.len(),
        release.upstream,
        differences.iter().take(8).cloned().collect::<Vec<_>>().join("\n")
    );
    eprintln!(
        "LimitRanger: {} cases ({invalid_updates} updates invalid upstream, not compared), zero differences from upstream {} (seed {seed})",
        cases.len(),
        release.upstream
    );
}

// ---------------------------------------------------------------------------------------------
// PodSecurity: generated pods against k8s.io/pod-security-admission v0.37.2 (op "podsecurity")
// ---------------------------------------------------------------------------------------------

const PSA_LEVELS: &[Option<&str>] = &[None, Some("privileged"), Some("baseline"), Some("restricted"), Some("restricted"), Some("strict")];
const PSA_VERSIONS: &[Option<&str>] = &[
    None,
    Some("latest"),
    Some("v1.0"),
    Some("v1.18"),
    Some("v1.19"),
    Some("v1.22"),
    Some("v1.23"),
    Some("v1.25"),
    Some("v1.27"),
    Some("v1.30"),
    Some("v1.31"),
    Some("v1.34"),
    Some("v1.35"),
    Some("v1.37"),
    Some("v1.40"),
    Some("v1.030"),
    Some("1.30"),
];
const CAPABILITIES: &[&str] = &["NET_BIND_SERVICE", "CHOWN", "NET_ADMIN", "SYS_ADMIN", "KILL", "SYS_TIME", "ALL"];
const SECCOMP: &[&str] = &["RuntimeDefault", "Localhost", "Unconfined"];
const APPARMOR: &[&str] = &["RuntimeDefault", "Localhost", "Unconfined"];
const SELINUX_TYPES: &[&str] = &["container_t", "container_init_t", "container_engine_t", "spc_t", ""];
const SYSCTLS: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_notsent_lowat",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "kernel.msgmax",
    "net.core.somaxconn",
];

fn psa_seccomp(rng: &mut Rng) -> Value {
    match *rng.pick(SECCOMP) {
        "Localhost" => json!({"type": "Localhost", "localhostProfile": "p.json"}),
        t => json!({"type": t}),
    }
}

fn psa_apparmor(rng: &mut Rng) -> Value {
    match *rng.pick(APPARMOR) {
        "Localhost" => json!({"type": "Localhost", "localhostProfile": "p"}),
        t => json!({"type": t}),
    }
}

fn psa_selinux(rng: &mut Rng) -> Value {
    let mut o = Map::new();
    if rng.chance(80) {
        o.insert("type".into(), json!(rng.pick(SELINUX_TYPES)));
    }
    if rng.chance(15) {
        o.insert("user".into(), json!("u"));
    }
    if rng.chance(15) {
        o.insert("role".into(), json!("r"));
    }
    Value::Object(o)
}

fn psa_handler(rng: &mut Rng) -> Value {
    let host = if rng.chance(50) { json!({"host": rng.pick(&["10.0.0.1", "evil.example", "localhost"])}) } else { json!({}) };
    let mut h = host.as_object().unwrap().clone();
    h.insert("port".into(), json!(8080));
    if rng.chance(50) {
        json!({"httpGet": h})
    } else {
        json!({"tcpSocket": h})
    }
}

fn psa_container(rng: &mut Rng, name: &str, restricted_like: bool, user_namespace: bool, port_base: u64, init: bool) -> Value {
    let mut c = Map::new();
    c.insert("name".into(), json!(name));
    c.insert("image".into(), json!("registry.example/app:1"));
    let mut sc = Map::new();
    if restricted_like {
        sc.insert("allowPrivilegeEscalation".into(), json!(false));
        sc.insert("capabilities".into(), json!({"drop": ["ALL"]}));
    }
    let privileged = rng.chance(8);
    if privileged {
        sc.insert("privileged".into(), json!(true));
        sc.remove("allowPrivilegeEscalation");
    }
    if rng.chance(25) {
        sc.insert("allowPrivilegeEscalation".into(), json!(privileged || rng.chance(50)));
    }
    if rng.chance(25) {
        let mut caps = Map::new();
        if rng.chance(60) {
            caps.insert("add".into(), json!((0..1 + rng.below(2)).map(|_| *rng.pick(CAPABILITIES)).collect::<Vec<_>>()));
        }
        if rng.chance(60) {
            caps.insert("drop".into(), json!((0..1 + rng.below(2)).map(|_| *rng.pick(CAPABILITIES)).collect::<Vec<_>>()));
        }
        sc.insert("capabilities".into(), Value::Object(caps));
    }
    if rng.chance(20) {
        sc.insert("runAsNonRoot".into(), json!(rng.chance(60)));
    }
    if rng.chance(15) {
        sc.insert("runAsUser".into(), json!(*rng.pick(&[0, 1000])));
    }
    if rng.chance(10) {
        sc.insert("seccompProfile".into(), psa_seccomp(rng));
    }
    if rng.chance(8) {
        sc.insert("appArmorProfile".into(), psa_apparmor(rng));
    }
    if rng.chance(8) {
        sc.insert("seLinuxOptions".into(), psa_selinux(rng));
    }
    if user_namespace && rng.chance(30) {
        sc.insert("procMount".into(), json!(*rng.pick(&["Unmasked", "Default"])));
    }
    if !sc.is_empty() || rng.chance(50) {
        c.insert("securityContext".into(), Value::Object(sc));
    }
    if rng.chance(15) {
        let ports: Vec<Value> = (0..1 + rng.below(2)).map(|i| json!({"containerPort": port_base + i, "hostPort": *rng.pick(&[0, 0, port_base + i])})).collect();
        c.insert("ports".into(), json!(ports));
    }
    for probe in ["livenessProbe", "readinessProbe"] {
        if !init && rng.chance(10) {
            c.insert(probe.into(), psa_handler(rng));
        }
    }
    if rng.chance(8) {
        c.insert("lifecycle".into(), json!({"preStop": psa_handler(rng)}));
    }
    Value::Object(c)
}

/// A pod for PodSecurity: most set little, some set what restricted asks, many break a check
/// or two; the annotations, volumes and pod-level fields vary as much as the containers.
fn psa_pod(rng: &mut Rng, i: usize) -> Value {
    let restricted_like = rng.chance(40);
    let windows = rng.chance(4);
    let user_namespace = !windows && rng.chance(10);
    let names: Vec<String> = (0..1 + rng.below(3)).map(|j| format!("c{j}")).collect();
    let inits: Vec<String> = (0..rng.below(3).saturating_sub(1)).map(|j| format!("i{j}")).collect();
    let mut spec = Map::new();
    if windows {
        spec.insert("os".into(), json!({"name": "windows"}));
        let c: Vec<Value> = names.iter().map(|n| json!({"name": n, "image": "x"})).collect();
        spec.insert("containers".into(), json!(c));
        if rng.chance(50) {
            spec.insert("securityContext".into(), json!({"runAsNonRoot": rng.chance(70)}));
        }
    } else {
        let mut psc = Map::new();
        if restricted_like || rng.chance(20) {
            psc.insert("runAsNonRoot".into(), json!(restricted_like || rng.chance(50)));
        }
        if restricted_like || rng.chance(15) {
            psc.insert("seccompProfile".into(), psa_seccomp(rng));
        }
        if rng.chance(10) {
            psc.insert("runAsUser".into(), json!(*rng.pick(&[0, 1000])));
        }
        if rng.chance(8) {
            psc.insert("seLinuxOptions".into(), psa_selinux(rng));
        }
        if rng.chance(8) {
            psc.insert("appArmorProfile".into(), psa_apparmor(rng));
        }
        if rng.chance(12) {
            let s: Vec<Value> = (0..1 + rng.below(3)).map(|_| json!({"name": rng.pick(SYSCTLS), "value": "1"})).collect();
            psc.insert("sysctls".into(), json!(s));
        }
        if !psc.is_empty() {
            spec.insert("securityContext".into(), Value::Object(psc));
        }
        if user_namespace {
            spec.insert("hostUsers".into(), json!(false));
        } else {
            for f in ["hostNetwork", "hostPID", "hostIPC"] {
                if rng.chance(6) {
                    spec.insert(f.into(), json!(true));
                }
            }
        }
        let c: Vec<Value> =
            names.iter().enumerate().map(|(j, n)| psa_container(rng, n, restricted_like, user_namespace, 8000 + 10 * j as u64, false)).collect();
        spec.insert("containers".into(), json!(c));
        if !inits.is_empty() {
            let c: Vec<Value> =
                inits.iter().enumerate().map(|(j, n)| psa_container(rng, n, restricted_like, user_namespace, 9000 + 10 * j as u64, true)).collect();
            spec.insert("initContainers".into(), json!(c));
        }
        if rng.chance(30) {
            let kinds = [
                json!({"emptyDir": {}}),
                json!({"secret": {"secretName": "s"}}),
                json!({"configMap": {"name": "c"}}),
                json!({"hostPath": {"path": "/var"}}),
                json!({"nfs": {"server": "s", "path": "/"}}),
                json!({"iscsi": {"targetPortal": "1.2.3.4:3260", "iqn": "iqn.2001-04.com.example:storage", "lun": 0}}),
                json!({}),
            ];
            let vols: Vec<Value> = (0..1 + rng.below(3))
                .map(|j| {
                    let mut v = rng.pick(&kinds).as_object().unwrap().clone();
                    v.insert("name".into(), json!(format!("v{j}")));
                    Value::Object(v)
                })
                .collect();
            spec.insert("volumes".into(), json!(vols));
        }
    }
    let mut annotations = Map::new();
    if !windows {
        for n in names.iter().chain(&inits) {
            if rng.chance(6) {
                annotations
                    .insert(format!("container.apparmor.security.beta.kubernetes.io/{n}"), json!(rng.pick(&["runtime/default", "unconfined", "localhost/p"])));
            }
            if rng.chance(4) {
                annotations.insert(
                    format!("container.seccomp.security.alpha.kubernetes.io/{n}"),
                    json!(rng.pick(&["runtime/default", "unconfined", "localhost/p.json", "docker/default"])),
                );
            }
        }
        if rng.chance(4) {
            annotations.insert("seccomp.security.alpha.kubernetes.io/pod".into(), json!(rng.pick(&["runtime/default", "unconfined", "localhost/p.json"])));
        }
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("p{i}"), "annotations": annotations}, "spec": spec})
}

fn psa_labels(rng: &mut Rng) -> Map<String, Value> {
    let mut labels = Map::new();
    if let Some(l) = rng.pick(PSA_LEVELS) {
        labels.insert("pod-security.kubernetes.io/enforce".into(), json!(l));
    }
    if let Some(v) = rng.pick(PSA_VERSIONS) {
        labels.insert("pod-security.kubernetes.io/enforce-version".into(), json!(v));
    }
    labels
}

at_both_releases!(pod_security_agrees_with_upstream: pod_security_agrees_with_upstream_code, pod_security_agrees_with_upstream_1_38_code);

fn pod_security_agrees_with_upstream(release: Release) {
    use kubectl_quota_engine::admission::pod_security;
    let Some((binary, seed)) = oracle_and_seed("the PodSecurity differential test", release) else { return };
    let mut rng = Rng(seed);
    let rules = release.rules();
    let cases: Vec<(Map<String, Value>, Option<&str>, Value)> = (0..4_000)
        .map(|i| {
            let labels = psa_labels(&mut rng);
            let default = if rng.chance(15) { Some(*rng.pick(&["baseline", "restricted"])) } else { None };
            (labels, default, psa_pod(&mut rng, i))
        })
        .collect();
    let lines: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(i, (labels, default, pod))| {
            let mut q = json!({"id": i, "op": "podsecurity", "object": pod, "labels": labels});
            if let Some(d) = default {
                q["defaultEnforce"] = json!(d);
            }
            q.to_string()
        })
        .collect();
    let answers = ask(&binary, &lines);
    let (mut differences, mut invalid, mut refused) = (Vec::new(), 0, 0);
    for (i, ((labels, default, pod), a)) in cases.iter().zip(&answers).enumerate() {
        if let Some(e) = a.get("error") {
            panic!("the oracle refused case {i} (seed {seed}): {e}\n{}", lines[i]);
        }
        if let Some(why) = a.get("invalid") {
            invalid += 1;
            if std::env::var_os("KUBECTL_QUOTA_ORACLE_INVALID").is_some() {
                eprintln!("invalid: {why}");
            }
            continue;
        }
        let obj = decode(&Document { origin: Origin::new("pod", 1), value: pod.clone() }).unwrap_or_else(|e| panic!("case {i}: {e}"));
        let Body::Pod(p) = &obj.body else { unreachable!() };
        let labels: BTreeMap<String, String> = labels.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string())).collect();
        let config = default.map(|d| pod_security::Config { enforce: d.to_string(), ..pod_security::Config::default() });
        let req = pod_security::Request { pod: p, annotations: &obj.meta.annotations, old: None, namespace: NS, labels: Some(&labels) };
        let got = pod_security::refusal(&req, config.as_ref(), &rules).unwrap_or_else(|| "allowed".into());
        let want = if a["allowed"].as_bool() == Some(true) { "allowed".to_string() } else { a["message"].as_str().unwrap_or("").to_string() };
        if want != "allowed" {
            refused += 1;
        }
        if got != want {
            differences.push(format!("case {i}:\n    engine   {got}\n    upstream {want}\n    request  {}", lines[i]));
        }
    }
    let compared = cases.len() - invalid;
    assert!(
        differences.is_empty(),
        "{} of {compared} PodSecurity cases differ from upstream {} (seed {seed}, KUBECTL_QUOTA_ORACLE_SEED={seed} to repeat):\n{}",
        differences.len(),
        release.upstream,
        differences.iter().take(8).cloned().collect::<Vec<_>>().join("\n")
    );
    assert!(compared * 2 > cases.len() && refused * 4 > compared, "too few cases compared ({compared}) or refused ({refused}): the generator needs work");
    eprintln!(
        "PodSecurity: {compared} pods compared ({refused} refused, {invalid} invalid upstream, not compared), zero differences from upstream (seed {seed})"
    );
}

// ---------------------------------------------------------------------------------------------
// Admission policies: MutatingAdmissionPolicy and ValidatingAdmissionPolicy
// ---------------------------------------------------------------------------------------------

const POLICY_CONFIGS: usize = 400;
const PODS_PER_CONFIG: usize = 8;
const ADMISSION: &str = "admissionregistration.k8s.io/v1";

/// Differences the engine is known to have from upstream's policy plugins, by the group a
/// difference is counted under, each with why it is not fixed here. Counted and printed on
/// every run; a difference in any other group fails.
const POLICY_EXCLUSIONS: &[(&str, &str)] = &[
    ("policy: message (mutating upstream)", CEL_FIRST_OF_TWO),
    ("policy: message (validating upstream)", CEL_FIRST_OF_TWO),
    ("policy: warnings", CEL_FIRST_OF_TWO),
    (
        "policy: invalid pod admitted (no image)",
        "a container without an image: pod validation refuses it (`image: Required value`), the engine does not check images (many manifests in its own tests leave them out)",
    ),
];

/// Why two errors in one expression may be named differently: the verdict is the same (the
/// expression fails), the error quoted is not.
const CEL_FIRST_OF_TWO: &str = "two elements of one list that both fail an `exists`, `all` or `filter`: cel-go names the first one's error for `exists` and `all` and the last one's for `filter`, cel-rust the other (the macros are the crate's); or a list-map key twice, refused by upstream's typed conversion (`duplicate entries for key`)";

/// A quantity of cpu or memory, as people write them.
fn policy_quantity(rng: &mut Rng, memory: bool) -> String {
    if memory {
        rng.pick(&["64Mi", "128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "100M", "1.5Gi"]).to_string()
    } else {
        rng.pick(&["50m", "100m", "250m", "500m", "1", "1500m", "2", "0.5"]).to_string()
    }
}

/// A container with cpu and memory requests and limits, some left out (never above the limit).
fn policy_container(rng: &mut Rng, name: &str) -> Value {
    let mut c = json!({"name": name, "image": rng.pick(&["x", "nginx", "proxy:1"])});
    let mut requests = Map::new();
    let mut limits = Map::new();
    for (r, memory) in [("cpu", false), ("memory", true)] {
        match rng.below(4) {
            0 => {}
            1 => {
                requests.insert(r.into(), json!(policy_quantity(rng, memory)));
            }
            2 => {
                limits.insert(r.into(), json!(policy_quantity(rng, memory)));
            }
            _ => {
                let q = policy_quantity(rng, memory);
                requests.insert(r.into(), json!(q));
                limits.insert(
                    r.into(),
                    json!(if rng.chance(50) {
                        q
                    } else if memory {
                        "4Gi".to_string()
                    } else {
                        "4".to_string()
                    }),
                );
            }
        }
    }
    if !requests.is_empty() || !limits.is_empty() || rng.chance(50) {
        let mut res = Map::new();
        if !requests.is_empty() {
            res.insert("requests".into(), Value::Object(requests));
        }
        if !limits.is_empty() {
            res.insert("limits".into(), Value::Object(limits));
        }
        c["resources"] = Value::Object(res);
    }
    c
}

fn policy_pod(rng: &mut Rng, i: usize) -> Value {
    let name = format!("{}-{i}", rng.pick(&["web", "db", "batch", "webapp"]));
    let mut meta = json!({"name": name});
    if rng.chance(75) {
        let mut labels = Map::new();
        labels.insert("app".into(), json!(rng.pick(&["web", "db", "batch"])));
        if rng.chance(40) {
            labels.insert("tier".into(), json!(rng.pick(&["front", "back"])));
        }
        meta["labels"] = Value::Object(labels);
    }
    let containers: Vec<Value> = (0..1 + rng.below(3)).map(|i| policy_container(rng, &format!("c{i}"))).collect();
    let mut spec = json!({"containers": containers});
    if rng.chance(25) {
        spec["initContainers"] = json!([policy_container(rng, "init")]);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
}

/// A condition on one container `c`.
fn container_atom(rng: &mut Rng, params: bool) -> String {
    let r = *rng.pick(&["cpu", "memory"]);
    let side = *rng.pick(&["requests", "limits"]);
    let q = policy_quantity(rng, r == "memory");
    match rng.below(if params { 11 } else { 10 }) {
        0 => format!("has(c.resources.{side})"),
        1 => format!("has(c.resources.{side}) && '{r}' in c.resources.{side}"),
        2 => format!("'{r}' in c.resources.{side}"),
        3 => format!("!has(c.resources.{side}) || !('{r}' in c.resources.{side}) || quantity(c.resources.{side}.{r}).compareTo(quantity('{q}')) <= 0"),
        4 => format!("quantity(c.resources.{side}.{r}).isLessThan(quantity('{q}'))"),
        5 => format!("c.name.startsWith('{}')", rng.pick(&["c", "init", "side"])),
        6 => format!("c.image {} 'x'", rng.pick(&["==", "!="])),
        7 => format!("size(c.name) {} {}", rng.pick(&["<", ">=", "=="]), 1 + rng.below(3)),
        8 => format!("has(c.resources.{side}) && has(c.resources.{side}.{r}) && quantity(c.resources.{side}.{r}).isGreaterThan(quantity('{q}'))"),
        9 => format!("!has(c.resources.limits) || c.resources.limits.size() {} {}", rng.pick(&["<", ">=", "=="]), rng.below(3)),
        _ => {
            format!("!has(c.resources.{side}) || !('{r}' in c.resources.{side}) || quantity(c.resources.{side}.{r}).compareTo(quantity(params.data.max)) <= 0")
        }
    }
}

/// A boolean expression over the pod.
fn pod_predicate(rng: &mut Rng, params: bool, depth: u32) -> String {
    let n = 1 + rng.below(3);
    let cmp = *rng.pick(&["<", "<=", "==", ">"]);
    match rng.below(if params { 17 } else { 15 }) {
        0 | 1 => format!("object.spec.containers.all(c, {})", container_atom(rng, params)),
        2 => format!("object.spec.containers.exists(c, {})", container_atom(rng, params)),
        3 => format!("object.spec.containers.filter(c, {}).size() {cmp} {n}", container_atom(rng, params)),
        4 => format!("size(object.spec.containers.map(c, c.name)) {cmp} {n}"),
        5 => format!("object.metadata.name.startsWith('{}')", rng.pick(&["web", "db", "we"])),
        6 => "has(object.metadata.labels) && 'app' in object.metadata.labels".into(),
        7 => format!("object.metadata.labels['app'] == '{}'", rng.pick(&["web", "db"])),
        8 => format!("has(object.metadata.labels) && object.metadata.labels.?tier.orValue('none') == '{}'", rng.pick(&["front", "none"])),
        9 if depth < 2 => format!("size(object.spec.containers) > 1 ? {} : {}", pod_predicate(rng, params, depth + 1), pod_predicate(rng, params, depth + 1)),
        10 => format!("!has(object.spec.initContainers) || object.spec.initContainers.all(c, {})", container_atom(rng, params)),
        11 => format!("object.metadata.name.{}", rng.pick(&[
            "contains('-')",
            "endsWith('-1')",
            "lowerAscii() == object.metadata.name",
            "size() < 7",
            "matches('^web-[0-9]+$')",
            "indexOf('-') > 2",
            // Kubernetes' format, url, ip and cidr, and semver libraries on the name.
            "size() > 0 && !format.dns1123Label().validate(object.metadata.name).hasValue()",
            "size() > 0 && format.named('dns1035Label').value().validate(object.metadata.name).hasValue()",
            "size() > 0 && url('https://' + object.metadata.name + '.example.com:8443/p?x=1').getPort() == '8443'",
            "size() > 0 && isURL('https://' + object.metadata.name + '.example.com/')",
            "size() > 0 && cidr('10.0.0.0/30').containsIP('10.0.0.' + string(size(object.metadata.name)))",
            "size() > 0 && ip('10.0.0.' + string(size(object.metadata.name))).isGlobalUnicast()",
            "size() > 0 && semver(string(size(object.metadata.name)), true).isGreaterThan(semver('4.0.0'))",
        ])),
        12 => format!("namespaceObject.metadata.labels.{}", rng.pick(&["env == 'prod'", "?team.orValue('') == 'a'", "team == 'a'"])),
        13 => format!("request.{}", rng.pick(&["operation == 'CREATE'", "name.startsWith('web')", "namespace == 'ns'"])),
        14 if depth < 2 => format!("{} {} {}", pod_predicate(rng, params, depth + 1), rng.pick(&["&&", "||"]), pod_predicate(rng, params, depth + 1)),
        15 => "object.metadata.name.startsWith(params.data.prefix)".into(),
        16 => "object.spec.containers.all(c, !has(c.resources.limits) || !('cpu' in c.resources.limits) || quantity(c.resources.limits.cpu).compareTo(quantity(params.data.max)) <= 0)".into(),
        _ => format!("object.spec.containers.all(c, {})", container_atom(rng, params)),
    }
}

fn message_expression(rng: &mut Rng, params: bool) -> String {
    match rng.below(if params { 8 } else { 7 }) {
        0 => "'pod ' + object.metadata.name + ' refused'".into(),
        1 => "'has ' + string(size(object.spec.containers)) + ' containers'".into(),
        2 => "object.spec.containers.map(c, c.name).join(', ')".into(),
        3 => "''".into(),
        4 => "'multi\\nline'".into(),
        5 => "size(object.spec.containers) > 1 ? 'many' : ''".into(),
        6 => "object.metadata.labels['app'] + ' is not allowed'".into(),
        _ => "'above ' + params.data.max".into(),
    }
}

fn match_conditions(rng: &mut Rng, params: bool) -> Value {
    let conditions: Vec<Value> = (0..rng.below(3))
        .map(|i| {
            let expression = match rng.below(5) {
                0 => "has(object.metadata.labels)".to_string(),
                1 => "'app' in object.metadata.labels".to_string(),
                2 => format!("object.metadata.name.startsWith('{}')", rng.pick(&["web", "db"])),
                _ => pod_predicate(rng, params, 1),
            };
            json!({"name": format!("cond{i}"), "expression": expression})
        })
        .collect();
    json!(conditions)
}

fn match_constraints(rng: &mut Rng, pod_name_hint: &str) -> Value {
    let mut rule = json!({"apiGroups": [""], "apiVersions": ["v1"], "operations": [rng.pick(&["CREATE", "CREATE", "CREATE", "*", "UPDATE"])], "resources": [rng.pick(&["pods", "pods", "pods", "*", "deployments"])]});
    if rng.chance(10) {
        rule["resourceNames"] = json!([pod_name_hint]);
    }
    let mut m = json!({"resourceRules": [rule]});
    if rng.chance(15) {
        m["namespaceSelector"] = json!({"matchLabels": {"env": rng.pick(&["prod", "dev"])}});
    }
    if rng.chance(15) {
        m["objectSelector"] = json!({"matchExpressions": [{"key": "app", "operator": rng.pick(&["In", "NotIn", "Exists", "DoesNotExist"]), "values": []}]});
        let op = m["objectSelector"]["matchExpressions"][0]["operator"].as_str().unwrap().to_string();
        if op == "In" || op == "NotIn" {
            m["objectSelector"]["matchExpressions"][0]["values"] = json!([rng.pick(&["web", "db"])]);
        }
    }
    m
}

fn binding_match_resources(rng: &mut Rng) -> Option<Value> {
    match rng.below(8) {
        0 => Some(json!({"namespaceSelector": {"matchLabels": {"env": rng.pick(&["prod", "dev"])}}})),
        1 => Some(json!({"objectSelector": {"matchLabels": {"app": rng.pick(&["web", "db"])}}})),
        2 => Some(json!({"excludeResourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]})),
        3 => Some(
            json!({"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}], "objectSelector": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}}),
        ),
        _ => None,
    }
}

fn param_ref(rng: &mut Rng) -> Value {
    let action = *rng.pick(&["Deny", "Allow"]);
    match rng.below(5) {
        0 => json!({"name": "missing", "parameterNotFoundAction": action}),
        1 => json!({"selector": {"matchLabels": {"role": "limits"}}, "parameterNotFoundAction": action}),
        _ => json!({"name": "limits", "parameterNotFoundAction": action}),
    }
}

fn failure_policy(rng: &mut Rng, spec: &mut Value) {
    match rng.below(3) {
        0 => {}
        1 => spec["failurePolicy"] = json!("Fail"),
        _ => spec["failurePolicy"] = json!("Ignore"),
    }
}

/// A ValidatingAdmissionPolicy and its binding; `warn_only`: the binding never denies.
fn validating_policy(rng: &mut Rng, name: &str, warn_only: bool, params: bool, hint: &str) -> Vec<Value> {
    let validations: Vec<Value> = (0..1 + rng.below(3))
        .map(|_| {
            let mut v = json!({"expression": pod_predicate(rng, params, 0)});
            match rng.below(4) {
                0 => v["message"] = json!("not allowed here"),
                1 => v["messageExpression"] = json!(message_expression(rng, params)),
                2 => {
                    v["message"] = json!("static message");
                    v["messageExpression"] = json!(message_expression(rng, params));
                }
                _ => {}
            }
            if rng.chance(30) {
                v["reason"] = json!(rng.pick(&["Forbidden", "Invalid", "Unauthorized", "RequestEntityTooLarge"]));
            }
            v
        })
        .collect();
    let mut spec = json!({"matchConstraints": match_constraints(rng, hint), "validations": validations});
    failure_policy(rng, &mut spec);
    if params {
        spec["paramKind"] = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    }
    let conditions = match_conditions(rng, params);
    if !conditions.as_array().unwrap().is_empty() {
        spec["matchConditions"] = conditions;
    }
    const WARN_ONLY: &[&[&str]] = &[&["Warn"], &["Audit"], &["Warn", "Audit"]];
    const ANY: &[&[&str]] = &[&["Deny"], &["Deny"], &["Deny", "Audit"], &["Warn"], &["Audit"]];
    let actions = *rng.pick::<&[&str]>(if warn_only { WARN_ONLY } else { ANY });
    let mut bspec = json!({"policyName": name, "validationActions": actions});
    if params {
        bspec["paramRef"] = param_ref(rng);
    }
    if let Some(m) = binding_match_resources(rng) {
        bspec["matchResources"] = m;
    }
    vec![
        json!({"apiVersion": ADMISSION, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name}, "spec": spec}),
        json!({"apiVersion": ADMISSION, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": format!("{name}-binding")}, "spec": bspec}),
    ]
}

fn container_filter(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => "true".into(),
        1 => format!("!has(c.resources.requests) || !('{}' in c.resources.requests)", rng.pick(&["cpu", "memory"])),
        2 => format!("!has(c.resources.limits) || !('{}' in c.resources.limits)", rng.pick(&["cpu", "memory"])),
        _ => format!("c.name {} 'c0'", rng.pick(&["==", "!="])),
    }
}

fn resources_literal(rng: &mut Rng, params: bool) -> String {
    let mut parts = Vec::new();
    for side in ["requests", "limits"] {
        if rng.chance(60) || parts.is_empty() && side == "limits" {
            let r = *rng.pick(&["cpu", "memory"]);
            let q = if params && r == "cpu" && rng.chance(40) { "params.data.max".to_string() } else { format!("'{}'", policy_quantity(rng, r == "memory")) };
            parts.push(format!("{side}: {{'{r}': {q}}}"));
        }
    }
    format!("Object.spec.containers.resources{{{}}}", parts.join(", "))
}

fn mutation(rng: &mut Rng, params: bool) -> Value {
    let resources = resources_literal(rng, params);
    let sidecar = format!("Object.spec.containers{{name: '{}', image: 'proxy', resources: {resources}}}", rng.pick(&["sidecar", "c0", "c9"]));
    let apply = |e: String| json!({"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": e}});
    let patch = |e: String| json!({"patchType": "JSONPatch", "jsonPatch": {"expression": e}});
    match rng.below(9) {
        0 | 1 => apply(format!(
            "Object{{spec: Object.spec{{containers: object.spec.containers.filter(c, {}).map(c, Object.spec.containers{{name: c.name, resources: {resources}}})}}}}",
            container_filter(rng)
        )),
        2 => apply(format!("Object{{spec: Object.spec{{containers: [{sidecar}]}}}}")),
        3 => apply(format!("Object{{metadata: Object.metadata{{labels: {{'mutated': '{}'}}}}}}", rng.pick(&["yes", "no"]))),
        4 => apply(format!("Object{{spec: Object.spec{{initContainers: [Object.spec.initContainers{{name: 'setup', image: 'x', resources: {}}}]}}}}", resources_literal(rng, false).replace("Object.spec.containers.resources", "Object.spec.initContainers.resources"))),
        5 => patch(format!("[JSONPatch{{op: 'add', path: '/spec/containers/-', value: {sidecar}}}]")),
        6 => patch(format!("[JSONPatch{{op: 'replace', path: '/spec/containers/0/resources/requests/cpu', value: '{}'}}]", policy_quantity(rng, false))),
        7 => patch(format!("[JSONPatch{{op: 'add', path: '/spec/containers/0/resources/limits', value: {{'memory': '{}'}}}}]", policy_quantity(rng, true))),
        _ => patch(format!(
            "[JSONPatch{{op: 'test', path: '/metadata/name', value: '{}'}}, JSONPatch{{op: 'add', path: '/metadata/labels', value: {{'patched': 'yes'}}}}]",
            rng.pick(&["web-0", "db-1"])
        )),
    }
}

fn mutating_policy(rng: &mut Rng, name: &str, params: bool, hint: &str) -> Vec<Value> {
    let mutations: Vec<Value> = (0..1 + rng.below(2)).map(|_| mutation(rng, params)).collect();
    let mut spec = json!({"matchConstraints": match_constraints(rng, hint), "mutations": mutations, "reinvocationPolicy": rng.pick(&["Never", "IfNeeded"])});
    failure_policy(rng, &mut spec);
    if params {
        spec["paramKind"] = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    }
    let conditions = match_conditions(rng, params);
    if !conditions.as_array().unwrap().is_empty() {
        spec["matchConditions"] = conditions;
    }
    let mut bspec = json!({"policyName": name});
    if params {
        bspec["paramRef"] = param_ref(rng);
    }
    if let Some(m) = binding_match_resources(rng) {
        bspec["matchResources"] = m;
    }
    vec![
        json!({"apiVersion": ADMISSION, "kind": "MutatingAdmissionPolicy", "metadata": {"name": name}, "spec": spec}),
        json!({"apiVersion": ADMISSION, "kind": "MutatingAdmissionPolicyBinding", "metadata": {"name": format!("{name}-binding")}, "spec": bspec}),
    ]
}

/// One cluster: its namespace's labels, ConfigMaps, policies and the pods created in it.
struct PolicyConfig {
    labels: Map<String, Value>,
    params: Vec<Value>,
    policies: Vec<Value>,
    pods: Vec<Value>,
}

/// At most one policy of each kind that can deny or mutate (upstream takes policies and
/// bindings from informer caches in no set order, so which of several denials is reported, or
/// in which order several mutating policies run, is not defined), plus warn-only ones.
fn policy_config(rng: &mut Rng, i: usize) -> PolicyConfig {
    let mut labels = Map::new();
    if rng.chance(70) {
        labels.insert("env".into(), json!(rng.pick(&["prod", "dev"])));
    }
    if rng.chance(40) {
        labels.insert("team".into(), json!(rng.pick(&["a", "b"])));
    }
    let pods: Vec<Value> = (0..PODS_PER_CONFIG).map(|j| policy_pod(rng, i * PODS_PER_CONFIG + j)).collect();
    let hint = pods[0]["metadata"]["name"].as_str().unwrap().to_string();
    let uses_params = rng.chance(30);
    // The engine takes params of a kind it read none of as not read (offline, a state without
    // ConfigMaps says nothing of them): a cluster with params always holds one ConfigMap.
    let params: Vec<Value> = if uses_params {
        let mut ps = vec![
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": rng.pick(&["limits", "other"]), "labels": {"role": "limits"}}, "data": {"max": policy_quantity(rng, false), "prefix": rng.pick(&["web", "db"])}}),
        ];
        if rng.chance(30) {
            ps.push(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "unrelated"}, "data": {"max": "1"}}));
        }
        ps
    } else {
        vec![]
    };
    let mut policies = Vec::new();
    if rng.chance(80) {
        let with_params = uses_params && rng.chance(70);
        policies.extend(validating_policy(rng, "check", false, with_params, &hint));
    }
    if rng.chance(25) {
        policies.extend(validating_policy(rng, "advice", true, false, &hint));
    }
    if policies.is_empty() || rng.chance(45) {
        let with_params = uses_params && rng.chance(60);
        policies.extend(mutating_policy(rng, "mutate", with_params, &hint));
    }
    PolicyConfig { labels, params, policies, pods }
}

/// The engine's answer for one pod created in `config`'s cluster: the server's answer as the
/// oracle gives it (allowed, message, warnings, usage), or what it could not replay.
fn engine_policy_answer(config: &PolicyConfig, pod: &Value) -> Value {
    use kubectl_quota_engine::check::{self, CheckOptions, ClusterState};
    let mut labels = config.labels.clone();
    labels.insert("kubernetes.io/metadata.name".into(), json!(NS));
    let mut state = vec![json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": labels}})];
    state.extend(config.params.iter().cloned());
    state.extend(config.policies.iter().cloned());
    let decode_all = |values: &[Value]| -> Vec<Object> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let doc = Document { origin: Origin::new("state.json", i + 1), value: v.clone() };
                let mut o = decode(&doc).unwrap_or_else(|e| panic!("the engine cannot decode {v}: {e:?}"));
                kubectl_quota_engine::objects::keep_source(&mut o, v.clone(), true);
                o
            })
            .collect()
    };
    let mut cluster = ClusterState::from_objects(decode_all(&state), NS);
    let opts = CheckOptions { namespace: NS.into(), rules: R1_37.rules(), ..CheckOptions::default() };
    let report = check::check(&mut cluster, decode_all(std::slice::from_ref(pod)), &opts);
    let d = &report.documents[0];
    let unreplayed: Vec<&String> = d.mutations.iter().filter(|m| m.starts_with("not replayed")).collect();
    json!({
        "allowed": d.allowed,
        "message": d.server_error.clone().unwrap_or_default(),
        "warnings": d.warnings,
        "usage": if d.allowed { as_json(&d.usage) } else { json!(null) },
        "unreplayed": unreplayed,
    })
}

#[test]
fn admission_policies_agree_with_upstream_code() {
    let Some((binary, seed)) = oracle_and_seed("the admission policy differential test", R1_37) else { return };
    let started = Instant::now();
    let mut rng = Rng(seed);
    let configs: Vec<PolicyConfig> = (0..POLICY_CONFIGS).map(|i| policy_config(&mut rng, i)).collect();
    let lines: Vec<String> = configs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({"id": i, "op": "policy", "namespace": NS, "labels": c.labels, "params": c.params, "policies": c.policies, "pods": c.pods}).to_string()
        })
        .collect();
    let answers = ask(&binary, &lines);
    let asked = started.elapsed();
    let cases: Vec<(usize, usize)> = (0..configs.len()).flat_map(|i| (0..PODS_PER_CONFIG).map(move |j| (i, j))).collect();
    let engine: Vec<Value> = parallel_map(&cases, |&(i, j)| engine_policy_answer(&configs[i], &configs[i].pods[j]));
    let mut diffs = Differences::new();
    let (mut compared, mut invalid, mut refused, mut mutated, mut warned, mut type_checked) = (0, 0, 0, 0, 0, 0);
    for ((i, j), got) in cases.iter().zip(engine) {
        let a = &answers[*i];
        if let Some(e) = a.get("error") {
            panic!("the oracle refused config {i} (seed {seed}): {e}\n{}", lines[*i]);
        }
        let want = &a["results"][*j];
        let config = &configs[*i];
        let request = || json!({"labels": config.labels, "params": config.params, "policies": config.policies, "pod": config.pods[*j]}).to_string();
        if want.get("invalid").is_some() {
            // The pod the mutating policies left is invalid: a 422 before validating admission.
            invalid += 1;
            if got["allowed"] == true {
                // A container left without an image (an ApplyConfiguration replacing twins
                // with an item that names none) is a rule of pod validation the engine does
                // not replay; counted apart.
                let image_only =
                    want["invalid"].as_str().is_some_and(|m| m.split(", ").all(|e| e.trim_matches(['[', ']', '"']).ends_with(".image: Required value")));
                let group = if image_only { "policy: invalid pod admitted (no image)" } else { "policy: invalid pod admitted" };
                diffs.add(group.into(), format!("upstream invalid: {}\n    engine {got}\n    request {}", want["invalid"], request()));
            }
            continue;
        }
        // Upstream type-checks every expression when it compiles a policy; the engine has no
        // type checker and evaluates what upstream refuses to compile (`compilation error: ...`,
        // said as a denial or a warning). Counted, not compared.
        if want.to_string().contains("compilation error") {
            type_checked += 1;
            continue;
        }
        compared += 1;
        refused += usize::from(want["allowed"] == false);
        mutated += usize::from(want["mutated"] == true);
        let want_warnings: Vec<String> = want["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect();
        warned += usize::from(!want_warnings.is_empty());
        if !got["unreplayed"].as_array().unwrap().is_empty() {
            diffs.add("policy: engine cannot replay".into(), format!("engine {}\n    upstream {want}\n    request {}", got["unreplayed"], request()));
            continue;
        }
        let warnings_differ = {
            let mut g: Vec<String> = got["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect();
            let mut w = want_warnings.clone();
            g.sort();
            w.sort();
            g != w
        };
        let group = if got["allowed"] != want["allowed"] {
            "verdict"
        } else if want["allowed"] == false && got["message"] != want["message"] {
            "message"
        } else if warnings_differ {
            "warnings"
        } else if want["allowed"] == true && got["usage"] != want["usage"] {
            "usage after mutation"
        } else {
            continue;
        };
        let stage = want["stage"].as_str().unwrap_or(if want["mutated"] == true { "mutated" } else { "allowed" });
        diffs.add(format!("policy: {group} ({stage} upstream)"), format!("engine   {got}\n    upstream {want}\n    request {}", request()));
    }
    println!(
        "admission policies (seed {seed}): {} pods in {POLICY_CONFIGS} clusters, {compared} compared ({refused} refused, {mutated} mutated, {warned} warned upstream), {invalid} invalid after mutation (verdict only), {type_checked} not compared (upstream's type check refuses an expression), {} differences, {:.1} s (oracle {:.1} s)",
        cases.len(),
        diffs.total,
        started.elapsed().as_secs_f64(),
        asked.as_secs_f64()
    );
    let mut report = String::new();
    let mut excluded = String::new();
    let mut unexpected = 0;
    for (group, (n, examples)) in &diffs.groups {
        let mut text = format!("\n== {group}: {n} differences; the shortest:\n");
        for e in examples {
            text.push_str(&format!("  {e}\n"));
        }
        match POLICY_EXCLUSIONS.iter().find(|(g, _)| group.starts_with(g)) {
            Some((_, why)) => excluded.push_str(&format!("{text}  (excluded: {why})\n")),
            None => {
                unexpected += n;
                report.push_str(&text);
            }
        }
    }
    if !excluded.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "\n!!!!!!!!!! seed {seed}: differences from upstream in documented exclusions (tests/oracle.rs POLICY_EXCLUSIONS) !!!!!!!!!!\n{excluded}"
        );
    }
    assert!(
        unexpected == 0,
        "seed {seed} (repeat with KUBECTL_QUOTA_ORACLE_SEED={seed}): {unexpected} of {compared} pods differ from upstream's policy plugins:\n{report}"
    );
    // A floor that says the generator still makes refusals and mutations (about 6% and 4% of
    // the pods, varying with the seed), set well below them: not a line one seed in ten crosses.
    assert!(refused * 40 > compared && mutated * 50 > compared, "too few refused ({refused}) or mutated ({mutated}) of {compared}: the generator needs work");
}
