//! The cluster at a glance for its admin: what the quotas promise against what the nodes offer
//! (`capacity`), which namespaces no quota caps (`uncovered`), and which workloads a quota
//! blocks right now (`blocked`).
//!
//! The plugin hands every object it reads (live, a page at a time, or from files) to
//! [`Collector::add`], which keeps only per-namespace sums: nodes, ResourceSlices and
//! DeviceClasses, Namespaces, ResourceQuotas, Pods, the controllers that create pods
//! (ReplicaSets, Jobs, StatefulSets, DaemonSets, ReplicationControllers) and their
//! `FailedCreate` events. The three views are then built from the sums.
//!
//! What a namespace is promised for a resource is its *effective cap*: the smallest `hard`
//! among its quotas that apply to every pod (no scopes, no scope selector; `cpu` and
//! `requests.cpu` are one limit). Scoped quotas are summed apart and never added to the
//! promise; a namespace with no cap on a resource is *unbounded* on it and named.
//!
//! ```
//! use kubectl_quota_engine::capacity::{Collector, Options};
//! use kubectl_quota_engine::manifest::parse_str;
//!
//! let text = "\
//! apiVersion: v1
//! kind: Node
//! metadata: {name: n1}
//! status:
//!   allocatable: {cpu: '4', memory: 8Gi, pods: '110'}
//!   conditions: [{type: Ready, status: 'True'}]
//! ---
//! apiVersion: v1
//! kind: ResourceQuota
//! metadata: {name: compute, namespace: team-a}
//! spec: {hard: {requests.cpu: '6'}}
//! status: {hard: {requests.cpu: '6'}, used: {requests.cpu: '1'}}
//! ";
//! let mut c = Collector::default();
//! for d in parse_str("state.yaml", text).unwrap() {
//!     c.add(&d).unwrap();
//! }
//! let r = c.capacity(&Options::default());
//! let cpu = r.resources.iter().find(|r| r.resource == "requests.cpu").unwrap();
//! assert_eq!(cpu.allocatable.as_ref().unwrap().to_string(), "4");
//! assert_eq!(cpu.promised.to_string(), "6");
//! assert_eq!(cpu.promised_percent, Some(150));
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::dra::DEVICE_CLASS_SUFFIX;
use crate::manifest::{Document, InputError};
use crate::objects::{self, Body};
use crate::quantity::Quantity;
use crate::resource_names::is_extended_resource_name;
use crate::resources::ResourceList;
use crate::scopes::describe as describe_selector;
use crate::usage;
use crate::why::{is_quota_message, raise_change};

/// The namespaces left out of the promise and of `uncovered` unless the user says otherwise:
/// the control plane's own, which run without quotas by design.
pub const DEFAULT_EXCLUDED_NAMESPACES: &[&str] = &["kube-system", "kube-public", "kube-node-lease"];

/// What the views are asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// Namespaces left out of the promise and of `uncovered` (their pods still count as used).
    pub excluded: BTreeSet<String>,
    /// Only this resource (quota spelling: `requests.cpu`, `cpu`, `nvidia.com/gpu`, ...).
    pub resource: Option<String>,
    /// `capacity --by namespace`: each resource's promise per namespace.
    pub by_namespace: bool,
    /// `blocked`: only these namespaces (`None`: all).
    pub namespaces: Option<BTreeSet<String>>,
}

impl Default for Options {
    fn default() -> Self {
        Options { excluded: DEFAULT_EXCLUDED_NAMESPACES.iter().map(|s| s.to_string()).collect(), resource: None, by_namespace: false, namespaces: None }
    }
}

/// The row a quota resource name belongs to and what offers it: `cpu` and `requests.cpu` are
/// both `requests.cpu`, offered by the nodes' `cpu`; `nvidia.com/gpu` requests are
/// `requests.nvidia.com/gpu`; a device class's devices are offered by ResourceSlices.
/// `None` for names that are not capacity (object counts, storage, services).
///
/// ```
/// use kubectl_quota_engine::capacity::{row_of, Offer};
///
/// assert_eq!(row_of("cpu"), Some(("requests.cpu".to_string(), Offer::Node("cpu".into()))));
/// assert_eq!(row_of("limits.memory"), Some(("limits.memory".to_string(), Offer::Node("memory".into()))));
/// assert_eq!(row_of("nvidia.com/gpu"), Some(("requests.nvidia.com/gpu".to_string(), Offer::Node("nvidia.com/gpu".into()))));
/// assert_eq!(row_of("gpu.deviceclass.resource.k8s.io/devices").unwrap().1, Offer::DeviceClass("gpu".into()));
/// assert_eq!(row_of("count/pods"), None);
/// assert_eq!(row_of("requests.storage"), None);
/// ```
pub fn row_of(name: &str) -> Option<(String, Offer)> {
    let node = |r: &str| Offer::Node(r.to_string());
    if name == "pods" {
        return Some((name.into(), node("pods")));
    }
    if let Some(class) = name.strip_suffix(DEVICE_CLASS_SUFFIX) {
        return (!class.is_empty()).then(|| (name.into(), Offer::DeviceClass(class.into())));
    }
    let (limits, base) = match name.split_once('.') {
        Some(("requests", b)) => (false, b),
        Some(("limits", b)) => (true, b),
        _ => (false, name),
    };
    let standard = matches!(base, "cpu" | "memory" | "ephemeral-storage");
    let huge = base.starts_with("hugepages-") && !limits;
    let extended = !standard && !huge && base.contains('/') && !base.starts_with("count/") && is_extended_resource_name(base);
    // An extended resource has no limit of its own in quota; a bare `nvidia.com/gpu` key is
    // not a valid quota name, but a node's allocatable is spelled so.
    if !(standard || huge || (extended && !limits)) {
        return None;
    }
    Some((format!("{}.{base}", if limits { "limits" } else { "requests" }), node(base)))
}

/// What offers a row's resource.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Offer {
    /// A node resource (`status.allocatable`).
    Node(String),
    /// A DRA device class: the devices the ResourceSlices publish that it selects.
    DeviceClass(String),
}

/// A node left out of the sum, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeftOut {
    pub name: String,
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Default)]
struct Slice {
    generation: i64,
    node: Option<String>,
    devices: i64,
}

/// A quota of a namespace, as the views need it.
#[derive(Debug, Clone)]
struct Quota {
    name: String,
    scoped: Option<String>,
    /// Capacity rows: enforced hard (status, or spec before the controller syncs it).
    hard: ResourceList,
    used: ResourceList,
    /// Every enforced hard and used, for `blocked`'s fixes.
    all_hard: ResourceList,
    all_used: ResourceList,
}

#[derive(Debug, Clone, Default)]
struct Namespace {
    /// Seen as a Namespace object (not only through what lives in it).
    listed: bool,
    quotas: Vec<Quota>,
    /// Requests of the pods that count (not terminal), per capacity row.
    pods: ResourceList,
}

/// A controller that creates pods, as `blocked` needs it.
#[derive(Debug, Clone, Default)]
struct Controller {
    /// `deployment/web` when a Deployment owns the ReplicaSet, a CronJob the Job.
    owner: Option<String>,
    wanted: i64,
    current: i64,
    /// A `ReplicaFailure` condition's message.
    condition: Option<String>,
}

#[derive(Debug, Clone)]
struct Failure {
    message: String,
    count: i64,
    last_seen: String,
}

/// Everything read, folded as it arrives.
#[derive(Debug, Clone, Default)]
pub struct Collector {
    nodes_total: usize,
    allocatable: ResourceList,
    left_out: Vec<LeftOut>,
    slices: BTreeMap<(String, String), Slice>,
    slice_drivers: BTreeMap<(String, String), String>,
    classes: BTreeMap<String, Option<String>>,
    namespaces: BTreeMap<String, Namespace>,
    controllers: BTreeMap<(String, String), Controller>,
    failures: BTreeMap<(String, String), Failure>,
    /// What could not be read (RBAC, an API not served): said in every view.
    pub notes: Vec<String>,
    /// Kinds seen at least once (`Node`, `Namespace`, `Event`, ...).
    seen: BTreeSet<&'static str>,
}

fn at(d: &Document, field: &str, msg: impl Into<String>) -> InputError {
    InputError::at(&d.origin, Some(field.to_string()), msg)
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_str)
}

fn int_at(v: &Value, path: &[&str]) -> Option<i64> {
    path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_i64)
}

fn quantities(d: &Document, v: Option<&Value>, field: &str) -> Result<ResourceList, InputError> {
    let mut out = ResourceList::new();
    let Some(v) = v.filter(|v| !v.is_null()) else { return Ok(out) };
    let map = v.as_object().ok_or_else(|| at(d, field, "must be a map of resource names to quantities"))?;
    for (k, q) in map {
        let text = match q {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => return Err(at(d, &format!("{field}.{k}"), "must be a quantity")),
        };
        let q = Quantity::parse(&text).map_err(|e| at(d, &format!("{field}.{k}"), format!("{text:?}: {e}")))?;
        out.insert(k.clone(), q);
    }
    Ok(out)
}

fn add_to(list: &mut ResourceList, k: &str, v: &Quantity) {
    match list.get_mut(k) {
        Some(sum) => *sum = sum.add(v),
        None => {
            list.insert(k.to_string(), v.clone());
        }
    }
}

/// A device class's driver, when its selectors say it plainly (`device.driver == "x"`):
/// other CEL expressions are not evaluated.
fn class_driver(v: &Value) -> Option<String> {
    let sels = v.get("spec")?.get("selectors")?.as_array()?;
    sels.iter().find_map(|s| {
        let e = s.get("cel")?.get("expression")?.as_str()?.trim();
        let rest = e.strip_prefix("device.driver")?.trim_start().strip_prefix("==")?.trim();
        let q = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let inner = rest.strip_prefix(q)?.strip_suffix(q)?;
        (!inner.contains(q) && !inner.is_empty()).then(|| inner.to_string())
    })
}

/// Capacity rows of a list: quota (or pod usage) names folded into their rows, the smallest
/// value kept when two names share a row (`cpu` and `requests.cpu` in one quota).
fn rows_min(list: &ResourceList) -> ResourceList {
    let mut out = ResourceList::new();
    for (k, v) in list {
        let Some((row, _)) = row_of(k) else { continue };
        match out.get_mut(&row) {
            Some(cur) if *v < *cur => *cur = v.clone(),
            Some(_) => {}
            None => {
                out.insert(row, v.clone());
            }
        }
    }
    out
}

impl Collector {
    fn ns(&mut self, name: &str) -> &mut Namespace {
        if !self.namespaces.contains_key(name) {
            self.namespaces.insert(name.to_string(), Namespace::default());
        }
        self.namespaces.get_mut(name).expect("inserted")
    }

    /// Says the views are missing something (`cannot list nodes (RBAC): ...`).
    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// Says a kind was read in full, even when there was none of it (a LIST with no items):
    /// the views then say nothing is missing.
    pub fn mark_read(&mut self, kind: &'static str) {
        self.seen.insert(match kind {
            "ReplicaSet" | "StatefulSet" | "DaemonSet" | "Job" | "ReplicationController" => "Controller",
            k => k,
        });
    }

    /// Whether a kind was seen (a state file without Nodes says nothing about them).
    pub fn saw(&self, kind: &str) -> bool {
        self.seen.contains(kind)
    }

    /// Takes one object. Kinds the views do not read are skipped; an object they read that
    /// is malformed is an error naming its document and field.
    pub fn add(&mut self, d: &Document) -> Result<(), InputError> {
        let v = &d.value;
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        let group = v.get("apiVersion").and_then(Value::as_str).and_then(|a| a.rsplit_once('/')).map_or("", |(g, _)| g);
        let name = str_at(v, &["metadata", "name"]).unwrap_or("").to_string();
        let namespace = str_at(v, &["metadata", "namespace"]).unwrap_or("").to_string();
        match (group, kind) {
            ("", "Node") => {
                self.seen.insert("Node");
                self.node(d, name)?;
            }
            ("", "Namespace") => {
                self.seen.insert("Namespace");
                self.ns(&name).listed = true;
            }
            ("resource.k8s.io", "ResourceSlice") => {
                self.seen.insert("ResourceSlice");
                let spec = v.get("spec").unwrap_or(&Value::Null);
                let driver = str_at(spec, &["driver"]).unwrap_or("").to_string();
                let pool = str_at(spec, &["pool", "name"]).unwrap_or(&name).to_string();
                let generation = int_at(spec, &["pool", "generation"]).unwrap_or(0);
                let devices = spec.get("devices").and_then(Value::as_array).map_or(0, |a| a.len() as i64);
                let node = str_at(spec, &["nodeName"]).map(str::to_string);
                let key = (driver.clone(), pool);
                let e = self.slices.entry(key.clone()).or_default();
                if generation > e.generation {
                    *e = Slice { generation, node, devices };
                } else if generation == e.generation {
                    e.devices += devices;
                    e.node = e.node.take().or(node);
                }
                self.slice_drivers.insert(key, driver);
            }
            ("resource.k8s.io", "DeviceClass") => {
                self.seen.insert("DeviceClass");
                self.classes.insert(name, class_driver(v));
            }
            ("", "Event") | ("events.k8s.io", "Event") => {
                self.seen.insert("Event");
                self.event(v, namespace);
            }
            ("", "ResourceQuota") => {
                self.seen.insert("ResourceQuota");
                let o = objects::decode(d)?;
                if let Body::ResourceQuota(q) = o.body {
                    let sels = q.selectors();
                    let scoped = (!sels.is_empty()).then(|| sels.iter().map(|s| describe_selector(s).into_owned()).collect::<Vec<_>>().join("; "));
                    let enforced = if q.has_status { &q.status_hard } else { &q.spec_hard };
                    let quota = Quota {
                        name,
                        scoped,
                        hard: rows_min(enforced),
                        used: rows_min(&q.status_used),
                        all_hard: enforced.clone(),
                        all_used: q.status_used.clone(),
                    };
                    self.ns(&namespace).quotas.push(quota);
                }
            }
            ("", "Pod") => {
                self.seen.insert("Pod");
                let o = objects::decode(d)?;
                if let Body::Pod(p) = &o.body {
                    if usage::pod_is_counted(p) {
                        let used = usage::pod_usage(p);
                        let ns = self.ns(&namespace);
                        for (k, q) in &used {
                            // `cpu` and `requests.cpu` are the same request: one of them.
                            if matches!(k.as_str(), "cpu" | "memory" | "ephemeral-storage") || k.starts_with("hugepages-") {
                                continue;
                            }
                            if let Some((row, _)) = row_of(k) {
                                add_to(&mut ns.pods, &row, q);
                            }
                        }
                    }
                }
            }
            ("apps", "ReplicaSet" | "StatefulSet" | "DaemonSet") | ("batch", "Job") | ("", "ReplicationController") => {
                self.seen.insert("Controller");
                self.controller(v, kind, name, namespace);
            }
            _ => {}
        }
        Ok(())
    }

    fn node(&mut self, d: &Document, name: String) -> Result<(), InputError> {
        let v = &d.value;
        self.nodes_total += 1;
        let mut reasons = Vec::new();
        if v.get("spec").and_then(|s| s.get("unschedulable")).and_then(Value::as_bool) == Some(true) {
            reasons.push("unschedulable (cordoned)".to_string());
        }
        for t in v.get("spec").and_then(|s| s.get("taints")).and_then(Value::as_array).into_iter().flatten() {
            let effect = t.get("effect").and_then(Value::as_str).unwrap_or("");
            if effect == "NoSchedule" || effect == "NoExecute" {
                let key = t.get("key").and_then(Value::as_str).unwrap_or("");
                let value = t.get("value").and_then(Value::as_str).filter(|s| !s.is_empty()).map(|s| format!("={s}")).unwrap_or_default();
                reasons.push(format!("taint {key}{value}:{effect}"));
            }
        }
        let ready = v.get("status").and_then(|s| s.get("conditions")).and_then(Value::as_array).and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
                .map(|c| c.get("status").and_then(Value::as_str).unwrap_or("Unknown").to_string())
        });
        match ready.as_deref() {
            Some("True") => {}
            Some(s) => reasons.push(format!("not Ready ({s})")),
            None => reasons.push("no Ready condition".into()),
        }
        let alloc = quantities(d, v.get("status").and_then(|s| s.get("allocatable")), "status.allocatable")?;
        if !reasons.is_empty() {
            self.left_out.push(LeftOut { name, reasons });
            return Ok(());
        }
        for (k, q) in &alloc {
            add_to(&mut self.allocatable, k, q);
        }
        Ok(())
    }

    fn event(&mut self, v: &Value, namespace: String) {
        let reason = str_at(v, &["reason"]).unwrap_or("");
        if reason != "FailedCreate" {
            return;
        }
        let message = str_at(v, &["message"]).or_else(|| str_at(v, &["note"])).unwrap_or("");
        if !is_quota_message(message) {
            return;
        }
        let obj = v.get("involvedObject").or_else(|| v.get("regarding")).unwrap_or(&Value::Null);
        let (Some(kind), Some(name)) = (str_at(obj, &["kind"]), str_at(obj, &["name"])) else { return };
        let ns = str_at(obj, &["namespace"]).map(str::to_string).unwrap_or(namespace);
        let last_seen = ["lastTimestamp", "eventTime", "firstTimestamp"]
            .iter()
            .find_map(|k| str_at(v, &[k]))
            .or_else(|| str_at(v, &["series", "lastObservedTime"]))
            .or_else(|| str_at(v, &["metadata", "creationTimestamp"]))
            .unwrap_or("")
            .to_string();
        let count = int_at(v, &["count"]).or_else(|| int_at(v, &["series", "count"])).unwrap_or(1);
        let key = (ns, format!("{}/{name}", kind.to_lowercase()));
        let f = Failure { message: message.to_string(), count, last_seen };
        match self.failures.get_mut(&key) {
            Some(old) if old.last_seen > f.last_seen => {}
            Some(old) => *old = f,
            None => {
                self.failures.insert(key, f);
            }
        }
    }

    fn controller(&mut self, v: &Value, kind: &str, name: String, namespace: String) {
        let status = |k: &str| int_at(v, &["status", k]).unwrap_or(0);
        let (wanted, current) = match kind {
            "DaemonSet" => (status("desiredNumberScheduled"), status("currentNumberScheduled")),
            "Job" => {
                if v.get("spec").and_then(|s| s.get("suspend")).and_then(Value::as_bool) == Some(true)
                    || v.get("status").and_then(|s| s.get("completionTime")).is_some()
                {
                    (0, 0)
                } else {
                    let parallelism = int_at(v, &["spec", "parallelism"]).unwrap_or(1);
                    let left = int_at(v, &["spec", "completions"]).map(|c| c - status("succeeded")).unwrap_or(parallelism);
                    (parallelism.min(left).max(0), status("active"))
                }
            }
            _ => (int_at(v, &["spec", "replicas"]).unwrap_or(1), status("replicas")),
        };
        let owner = v.get("metadata").and_then(|m| m.get("ownerReferences")).and_then(Value::as_array).and_then(|refs| {
            refs.iter()
                .find(|r| {
                    r.get("controller").and_then(Value::as_bool) == Some(true)
                        && matches!(r.get("kind").and_then(Value::as_str), Some("Deployment" | "CronJob"))
                })
                .map(|r| format!("{}/{}", r["kind"].as_str().unwrap_or("").to_lowercase(), r["name"].as_str().unwrap_or("")))
        });
        let condition = v.get("status").and_then(|s| s.get("conditions")).and_then(Value::as_array).and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("ReplicaFailure") && c.get("status").and_then(Value::as_str) == Some("True"))
                .and_then(|c| c.get("message").and_then(Value::as_str))
                .filter(|m| is_quota_message(m))
                .map(str::to_string)
        });
        self.controllers.insert((namespace, format!("{}/{name}", kind.to_lowercase())), Controller { owner, wanted, current, condition });
    }

    /// The namespaces the views speak of: those listed, or (a state without Namespace
    /// objects) those anything was seen in.
    fn all_namespaces(&self) -> impl Iterator<Item = (&String, &Namespace)> {
        let listed = self.seen.contains("Namespace");
        self.namespaces.iter().filter(move |(n, ns)| !n.is_empty() && (!listed || ns.listed))
    }

    fn notes_for_views(&self) -> Vec<String> {
        let mut notes = self.notes.clone();
        if !self.seen.contains("Namespace") {
            notes.push("no Namespace objects were read: the namespaces are those quotas or pods were seen in".into());
        }
        notes
    }
}

/// Whole percent of `b` that `a` is, rounded down, computed at the finest scale at which
/// neither value saturates (memory summed over a large cluster exceeds milli-units).
pub fn ratio_percent(a: &Quantity, b: &Quantity) -> Option<u64> {
    for scale in [-3, 0, 3, 6, 9, 12, 15, 18] {
        let (x, y) = (a.scaled_value(scale), b.scaled_value(scale));
        if x == i64::MAX || y == i64::MAX {
            continue;
        }
        if y <= 0 {
            return if x > 0 { Some(u64::MAX) } else { None };
        }
        return Some(((x.max(0) as i128) * 100 / y as i128).min(u64::MAX as i128 - 1) as u64);
    }
    None
}

/// One resource of `capacity`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRow {
    /// The quota spelling: `requests.cpu`, `limits.memory`, `pods`, `requests.nvidia.com/gpu`,
    /// `gpu.deviceclass.resource.k8s.io/devices`.
    pub resource: String,
    pub offered_by: Offer,
    /// Sum over the schedulable nodes (devices the ResourceSlices publish for a class);
    /// `None` when nothing offers it, or (a device class) when which devices it selects is
    /// not known.
    pub allocatable: Option<Quantity>,
    /// Sum of the namespaces' effective caps.
    pub promised: Quantity,
    /// Namespaces with no cap on it (excluded ones left out).
    pub unbounded: Vec<String>,
    /// The quotas' `status.used`, and the requests of pods where no quota caps it.
    pub used: Quantity,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promised_percent: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_percent: Option<u64>,
    /// Scoped quotas' hard limits, summed apart (never in `promised`).
    pub scoped_hard: Quantity,
    pub scoped_quotas: usize,
    /// `--by namespace`: each namespace's part, largest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<Share>,
}

impl ResourceRow {
    /// Quotas promise it but no node offers any (a GPU quota in a cluster without GPUs).
    pub fn offered_nowhere(&self) -> bool {
        self.allocatable.as_ref().is_none_or(Quantity::is_zero) && !matches!(&self.offered_by, Offer::DeviceClass(_) if self.allocatable.is_none())
    }
}

/// A namespace's part of a resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Share {
    pub namespace: String,
    /// Its effective cap and the quota that sets it (`None`: unbounded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap: Option<Quantity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<String>,
    pub used: Quantity,
    /// Of the allocatable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent: Option<u64>,
    /// Scoped quotas' hard limits (not in the cap).
    #[serde(skip_serializing_if = "Quantity::is_zero")]
    pub scoped_hard: Quantity,
}

/// `capacity`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityReport {
    pub nodes: usize,
    pub nodes_counted: usize,
    /// Nodes not in the sums, and why.
    pub nodes_left_out: Vec<LeftOut>,
    /// Namespaces in the promise.
    pub namespaces: usize,
    /// Namespaces left out of the promise (present and excluded).
    pub namespaces_excluded: Vec<String>,
    /// Overcommitted first (highest promised/allocatable), then quotas on resources no node
    /// offers.
    pub resources: Vec<ResourceRow>,
    pub notes: Vec<String>,
}

/// What a namespace is capped at on a row: the smallest hard among its unscoped quotas, with
/// that quota's name and usage.
fn cap_of<'a>(ns: &'a Namespace, row: &str) -> Option<(&'a Quantity, &'a Quota)> {
    ns.quotas.iter().filter(|q| q.scoped.is_none()).filter_map(|q| q.hard.get(row).map(|h| (h, q))).min_by(|a, b| a.0.cmp(b.0))
}

/// The row a `--resource` names (`cpu` is `requests.cpu`; an unknown name stands for itself).
pub fn normalize_resource(name: &str) -> String {
    if let Some((row, _)) = row_of(name) {
        return row;
    }
    if is_extended_resource_name(name) && !name.starts_with("count/") && name.contains('/') {
        return format!("requests.{name}");
    }
    name.to_string()
}

impl Collector {
    /// The capacity view.
    pub fn capacity(&self, opts: &Options) -> CapacityReport {
        let mut rows: BTreeMap<String, Offer> = BTreeMap::new();
        for k in self.allocatable.keys() {
            if let Some((row, offer)) = row_of(k) {
                if self.allocatable.get(k).is_some_and(|q| !q.is_zero()) {
                    rows.insert(row, offer);
                }
            }
        }
        for ns in self.namespaces.values() {
            for q in &ns.quotas {
                for k in q.hard.keys() {
                    if let Some((row, offer)) = row_of(k) {
                        rows.insert(row, offer);
                    }
                }
            }
        }
        if let Some(r) = &opts.resource {
            let want = normalize_resource(r);
            rows.retain(|k, _| *k == want);
        }
        let devices = self.devices_per_class();
        let mut out = Vec::new();
        for (row, offer) in rows {
            let allocatable = match &offer {
                Offer::Node(r) => self.allocatable.get(r).cloned(),
                Offer::DeviceClass(c) => devices.get(c).cloned().flatten(),
            };
            let mut promised = Quantity::zero();
            let mut used = Quantity::zero();
            let mut unbounded = Vec::new();
            let (mut scoped_hard, mut scoped_quotas) = (Quantity::zero(), 0);
            let mut shares = Vec::new();
            for (name, ns) in self.all_namespaces() {
                let excluded = opts.excluded.contains(name);
                let cap = cap_of(ns, &row);
                let ns_used = match cap {
                    Some((_, q)) => q.used.get(&row).cloned().or_else(|| ns.pods.get(&row).cloned()),
                    None => ns.pods.get(&row).cloned(),
                }
                .unwrap_or_default();
                used = used.add(&ns_used);
                if excluded {
                    continue;
                }
                let mut ns_scoped = Quantity::zero();
                for q in ns.quotas.iter().filter(|q| q.scoped.is_some()) {
                    if let Some(h) = q.hard.get(&row) {
                        ns_scoped = ns_scoped.add(h);
                        scoped_quotas += 1;
                    }
                }
                scoped_hard = scoped_hard.add(&ns_scoped);
                match cap {
                    Some((h, _)) => promised = promised.add(h),
                    None => unbounded.push(name.clone()),
                }
                if opts.by_namespace {
                    shares.push(Share {
                        namespace: name.clone(),
                        cap: cap.map(|(h, _)| h.clone()),
                        quota: cap.map(|(_, q)| q.name.clone()),
                        percent: match (cap, &allocatable) {
                            (Some((h, _)), Some(a)) => ratio_percent(h, a),
                            _ => None,
                        },
                        used: ns_used,
                        scoped_hard: ns_scoped,
                    });
                }
            }
            // Largest share first; unbounded namespaces (no cap) after, by used.
            shares.sort_by(|a, b| match (&a.cap, &b.cap) {
                (Some(x), Some(y)) => y.cmp(x).then(a.namespace.cmp(&b.namespace)),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => b.used.cmp(&a.used).then(a.namespace.cmp(&b.namespace)),
            });
            let pct = |x: &Quantity| allocatable.as_ref().and_then(|a| ratio_percent(x, a));
            out.push(ResourceRow {
                promised_percent: pct(&promised),
                used_percent: pct(&used),
                resource: row,
                offered_by: offer,
                allocatable,
                promised,
                unbounded,
                used,
                scoped_hard,
                scoped_quotas,
                namespaces: shares,
            });
        }
        // Overcommitted first; quotas on what no node offers last, in their own section.
        out.sort_by(|a, b| {
            a.offered_nowhere()
                .cmp(&b.offered_nowhere())
                .then(b.promised_percent.unwrap_or(0).cmp(&a.promised_percent.unwrap_or(0)))
                .then(b.used_percent.unwrap_or(0).cmp(&a.used_percent.unwrap_or(0)))
                .then(a.resource.cmp(&b.resource))
        });
        // A row no node offers and no quota promises says nothing.
        out.retain(|r| !(r.offered_nowhere() && r.promised.is_zero() && r.scoped_hard.is_zero()));
        let mut notes = self.notes_for_views();
        if !self.seen.contains("Node") && !self.notes.iter().any(|n| n.contains("nodes")) {
            notes.push("no Node objects were read: nothing is allocatable".into());
        }
        for (class, driver) in &self.classes {
            if driver.is_none() && out.iter().any(|r| r.offered_by == Offer::DeviceClass(class.clone())) {
                notes.push(format!("device class {class} selects devices by an expression this tool does not evaluate: its allocatable is unknown"));
            }
        }
        let namespaces_excluded: Vec<String> = self.all_namespaces().map(|(n, _)| n).filter(|n| opts.excluded.contains(*n)).cloned().collect();
        CapacityReport {
            nodes: self.nodes_total,
            nodes_counted: self.nodes_total - self.left_out.len(),
            nodes_left_out: self.left_out.clone(),
            namespaces: self.all_namespaces().count() - namespaces_excluded.len(),
            namespaces_excluded,
            resources: out,
            notes,
        }
    }

    /// Devices the ResourceSlices publish per device class (newest generation of each pool,
    /// slices of left-out nodes not counted); `None` for a class whose selectors are not a
    /// plain driver match.
    fn devices_per_class(&self) -> BTreeMap<String, Option<Quantity>> {
        let left: BTreeSet<&str> = self.left_out.iter().map(|l| l.name.as_str()).collect();
        let mut per_driver: BTreeMap<&str, i64> = BTreeMap::new();
        for (key, s) in &self.slices {
            if s.node.as_deref().is_some_and(|n| left.contains(n)) {
                continue;
            }
            *per_driver.entry(self.slice_drivers.get(key).map_or("", String::as_str)).or_default() += s.devices;
        }
        self.classes
            .iter()
            .map(|(c, d)| {
                let n = d.as_deref().map(|d| per_driver.get(d).copied().unwrap_or(0));
                (c.clone(), n.map(|n| Quantity::from_int(n, crate::quantity::Format::DecimalSI)))
            })
            .collect()
    }
}

/// A namespace `uncovered` lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Uncovered {
    pub namespace: String,
    /// Quotas it has (none, or none that caps the resource asked about).
    pub quotas: usize,
    /// Why it is listed, in words.
    pub reason: String,
    /// What its pods request of the resource asked about (without one: how many pods run);
    /// `None` when the pods could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used: Option<Quantity>,
}

/// `uncovered`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UncoveredReport {
    /// The resource asked about (its quota row), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Namespaces looked at (excluded ones left out).
    pub namespaces: usize,
    pub excluded: Vec<String>,
    pub uncovered: Vec<Uncovered>,
    pub notes: Vec<String>,
}

impl Collector {
    /// Namespaces without any quota, or (with `opts.resource`) without a cap on it for every
    /// pod.
    pub fn uncovered(&self, opts: &Options) -> UncoveredReport {
        let row = opts.resource.as_deref().map(normalize_resource);
        let mut out = Vec::new();
        let mut looked = 0;
        let mut excluded = Vec::new();
        let pods_read = self.seen.contains("Pod");
        for (name, ns) in self.all_namespaces() {
            if opts.excluded.contains(name) {
                excluded.push(name.clone());
                continue;
            }
            looked += 1;
            let Some(row) = &row else {
                if ns.quotas.is_empty() {
                    out.push(Uncovered {
                        namespace: name.clone(),
                        quotas: 0,
                        reason: "no quota".into(),
                        used: pods_read.then(|| ns.pods.get("pods").cloned().unwrap_or_default()),
                    });
                }
                continue;
            };
            if cap_of(ns, row).is_some() {
                continue;
            }
            let scoped: Vec<&Quota> = ns.quotas.iter().filter(|q| q.scoped.is_some() && q.hard.contains_key(row)).collect();
            let reason = if ns.quotas.is_empty() {
                "no quota".to_string()
            } else if let Some(q) = scoped.first() {
                format!("only scoped quotas cap it ({} for {})", q.name, q.scoped.as_deref().unwrap_or(""))
            } else {
                format!("{} quota(s), none on {row}", ns.quotas.len())
            };
            out.push(Uncovered {
                namespace: name.clone(),
                quotas: ns.quotas.len(),
                reason,
                used: pods_read.then(|| ns.pods.get(row).cloned().unwrap_or_default()),
            });
        }
        UncoveredReport { resource: row, namespaces: looked, excluded, uncovered: out, notes: self.notes_for_views() }
    }
}

/// A workload a quota blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Blocked {
    pub namespace: String,
    /// `deployment/web`, `cronjob/nightly`, `statefulset/db`, ...
    pub workload: String,
    /// The controller the server refused (`replicaset/web-5d4f8`), when not the workload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Pods missing (`None`: the controller was not read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<String>,
    pub resources: Vec<String>,
    /// The smallest fix, as `why` words it.
    pub fix: String,
    /// The server's message and where it was read.
    pub message: String,
    pub from: String,
}

/// `blocked`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockedReport {
    pub blocked: Vec<Blocked>,
    pub notes: Vec<String>,
}

/// What a quota refusal says: the quota, and per resource (requested, used, limited) for an
/// "exceeded quota" message, or the resources to specify for a "must specify" one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Refusal {
    pub quota: Option<String>,
    pub exceeded: Vec<(String, Quantity, Quantity, Quantity)>,
    pub must_specify: Vec<String>,
}

fn pairs(s: &str) -> BTreeMap<String, Quantity> {
    s.split(',').filter_map(|p| p.split_once('=')).filter_map(|(k, v)| Some((k.trim().to_string(), Quantity::parse(v.trim()).ok()?))).collect()
}

/// Reads the quota admission plugin's message (`exceeded quota: compute, requested:
/// requests.cpu=500m, used: requests.cpu=1500m, limited: requests.cpu=2`; `failed quota:
/// compute: must specify requests.cpu`).
///
/// ```
/// use kubectl_quota_engine::capacity::parse_refusal;
///
/// let r = parse_refusal("pods \"web-1\" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=1800m, limited: requests.cpu=2");
/// assert_eq!(r.quota.as_deref(), Some("compute"));
/// assert_eq!(r.exceeded[0].0, "requests.cpu");
/// let m = parse_refusal("pods \"web-1\" is forbidden: failed quota: compute: must specify limits.cpu for: app; requests.cpu for: app");
/// assert_eq!(m.must_specify, vec!["limits.cpu", "requests.cpu"]);
/// ```
pub fn parse_refusal(message: &str) -> Refusal {
    let mut r = Refusal::default();
    if let Some(rest) = message.split_once("exceeded quota: ").map(|x| x.1) {
        let (name, rest) = rest.split_once(", requested: ").unwrap_or((rest, ""));
        r.quota = Some(name.trim().to_string());
        let (requested, rest) = rest.split_once(", used: ").unwrap_or((rest, ""));
        let (used, limited) = rest.split_once(", limited: ").unwrap_or((rest, ""));
        let (req, used, lim) = (pairs(requested), pairs(used), pairs(limited));
        let row = |k: &String, hard: &Quantity| (k.clone(), req.get(k).cloned().unwrap_or_default(), used.get(k).cloned().unwrap_or_default(), hard.clone());
        r.exceeded = lim.iter().map(|(k, h)| row(k, h)).filter(|(_, q, u, h)| u.add(q) > *h).collect();
        // The server listed only what it found exceeded: trust it when its numbers do not say.
        if r.exceeded.is_empty() {
            r.exceeded = lim.iter().map(|(k, h)| row(k, h)).collect();
        }
    } else if let Some(rest) = message.split_once("failed quota: ").map(|x| x.1) {
        if let Some((name, what)) = rest.split_once(": must specify ") {
            r.quota = Some(name.trim().to_string());
            // `limits.cpu,requests.cpu` before 1.24; `limits.cpu for: app; requests.cpu for: app` after.
            for part in what.split(';') {
                let res = part.split(" for:").next().unwrap_or("");
                r.must_specify.extend(res.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string));
            }
        } else {
            r.quota = rest.split(':').next().map(|s| s.trim().to_string());
        }
    }
    r
}

impl Collector {
    /// Workloads whose pods a quota refused: the newest quota `FailedCreate` event of each
    /// controller (else its `ReplicaFailure` condition), kept only while pods are missing.
    pub fn blocked(&self, opts: &Options) -> BlockedReport {
        let mut keys: BTreeSet<&(String, String)> = self.failures.keys().collect();
        keys.extend(self.controllers.iter().filter(|(_, c)| c.condition.is_some()).map(|(k, _)| k));
        let mut out = Vec::new();
        for key in keys {
            let (ns, obj) = key;
            if opts.namespaces.as_ref().is_some_and(|s| !s.contains(ns)) {
                continue;
            }
            let c = self.controllers.get(key);
            let waiting = c.map(|c| (c.wanted - c.current).max(0));
            if waiting == Some(0) {
                continue;
            }
            let (message, from) = match self.failures.get(key) {
                Some(f) => {
                    (f.message.clone(), format!("event FailedCreate on {obj}{}", if f.count > 1 { format!(", {} times", f.count) } else { String::new() }))
                }
                None => match c.and_then(|c| c.condition.clone()) {
                    Some(m) => (m, format!("condition ReplicaFailure on {obj}")),
                    None => continue,
                },
            };
            let refusal = parse_refusal(&message);
            let quota = refusal.quota.as_ref().and_then(|name| self.namespaces.get(ns).and_then(|n| n.quotas.iter().find(|q| q.name == *name)));
            let mut resources = Vec::new();
            let mut fixes = Vec::new();
            for (res, requested, used_then, hard_then) in &refusal.exceeded {
                resources.push(res.clone());
                let name = refusal.quota.as_deref().unwrap_or("");
                // The quota as it stands now, when it was read; as the message says otherwise.
                let (used, hard) = match quota {
                    Some(q) => (q.all_used.get(res).cloned().unwrap_or_default(), q.all_hard.get(res).cloned().unwrap_or_else(|| hard_then.clone())),
                    None => (used_then.clone(), hard_then.clone()),
                };
                if used.add(requested) <= hard {
                    fixes.push(format!("quota {name}'s {res} fits the next pod now: the controller creates it at its next retry"));
                } else {
                    fixes.push(raise_change(name, res, &used, requested, &hard, waiting.unwrap_or(1).clamp(1, i32::MAX as i64) as i32));
                }
            }
            for res in &refusal.must_specify {
                resources.push(res.clone());
                let (side, base) = res.split_once('.').unwrap_or(("requests", res));
                fixes.push(format!(
                    "add resources.{side}.{base} to the pod template's containers, or a LimitRange {} for {base}: quota {} requires it",
                    if side == "limits" { "default" } else { "defaultRequest" },
                    refusal.quota.as_deref().unwrap_or("")
                ));
            }
            if fixes.is_empty() {
                fixes.push(format!("see `kubectl quota why {} -n {ns}`", c.and_then(|c| c.owner.clone()).unwrap_or_else(|| obj.clone())));
            }
            let (workload, via) = match c.and_then(|c| c.owner.clone()) {
                Some(owner) => (owner, Some(obj.clone())),
                None => (obj.clone(), None),
            };
            out.push(Blocked { namespace: ns.clone(), workload, via, waiting, quota: refusal.quota.clone(), resources, fix: fixes.join("; "), message, from });
        }
        let mut notes = self.notes.clone();
        if !self.seen.contains("Event") && !self.notes.iter().any(|n| n.contains("events")) {
            notes.push("no Event objects were read: only ReplicaFailure conditions say what is blocked (a Job or StatefulSet has none)".into());
        }
        BlockedReport { blocked: out, notes }
    }
}
