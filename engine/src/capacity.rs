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
//! assert_eq!(cpu.promised.as_ref().unwrap().to_string(), "6");
//! assert_eq!(cpu.promised_percent, Some(150));
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::admission::scopes::describe as describe_selector;
use crate::admission::usage;
use crate::dra::DEVICE_CLASS_SUFFIX;
use crate::manifest::{Document, InputError};
use crate::objects::{self, Body};
use crate::quantity::Quantity;
use crate::resource_names::is_extended_resource_name;
use crate::resources::ResourceList;
use crate::why::is_quota_message;

mod blocked;
mod headroom;
mod promise;
mod uncovered;

pub use crate::why::{parse_refusal, Refusal};
pub use blocked::{Blocked, BlockedReport};
pub use headroom::{Headroom, HeadroomRow, Scaled};
pub use promise::{ratio_percent, rows_named, CapacityReport, ResourceRow, Share};
pub use uncovered::{Uncovered, UncoveredReport};

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
    /// Only these namespaces (`-n`; `None`: all, `-A`): the promise, `uncovered` and `blocked`
    /// speak of them alone. Nodes are the whole cluster's whatever the scope.
    pub namespaces: Option<BTreeSet<String>>,
}

impl Options {
    /// Where the views looked, in words: `all namespaces`, `namespace team-a`.
    pub fn scope(&self) -> String {
        match &self.namespaces {
            None => "all namespaces".into(),
            Some(s) if s.len() == 1 => format!("namespace {}", s.iter().next().expect("one")),
            Some(s) => format!("namespaces {}", s.iter().cloned().collect::<Vec<_>>().join(", ")),
        }
    }
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
/// assert_eq!(row_of("requests.deviceclass.resource.kubernetes.io/gpu").unwrap().1, Offer::DeviceClass("gpu".into()));
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
    // A device class requested as an extended resource (1.36): its devices all the same.
    if let Some(class) = name.strip_prefix("requests.").and_then(|n| n.strip_prefix(crate::dra::DRA_EXTENDED_PREFIX)) {
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

/// A workload an autoscaler may scale (Deployment, StatefulSet, ReplicationController, a
/// ReplicaSet no Deployment owns), as `capacity` needs it.
#[derive(Debug, Clone, Default)]
struct Scalable {
    current: i64,
    per_pod: ResourceList,
    /// Its pod template, when a VerticalPodAutoscaler targets it: the VPA's webhook writes
    /// its pods from it.
    template: Option<objects::Pod>,
}

/// What one pod charges quota, per capacity row (its requests and limits as written).
fn pod_charge(pod: &objects::Pod) -> ResourceList {
    let mut per_pod = ResourceList::new();
    for (k, q) in &usage::pod_usage(pod) {
        if matches!(k.as_str(), "cpu" | "memory" | "ephemeral-storage") || k.starts_with("hugepages-") {
            continue;
        }
        if let Some((row, _)) = row_of(k) {
            add_to(&mut per_pod, &row, q);
        }
    }
    per_pod
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

/// What one node gives the sum: its allocatable (a shape shared by every node with the same
/// allocatable: a large cluster has few), or nothing, and why.
#[derive(Debug, Clone)]
enum NodeEntry {
    Counted(u32),
    LeftOut(LeftOut),
}

/// The nodes read, each once (a node read again replaces what it gave: the later wins).
#[derive(Debug, Clone, Default)]
struct Nodes {
    /// Name -> its entry, in the order first read.
    index: std::collections::HashMap<String, u32>,
    entries: Vec<NodeEntry>,
    /// Distinct allocatable lists, and each one's canonical text -> its place.
    shapes: Vec<ResourceList>,
    shape_of: std::collections::HashMap<String, u32>,
}

/// The nodes' sums, as the views read them.
struct NodeSums {
    total: usize,
    allocatable: ResourceList,
    left_out: Vec<LeftOut>,
}

impl Nodes {
    /// Records `name`'s entry; `true` when the node was read before (its old entry replaced).
    fn put(&mut self, name: String, allocatable: Option<ResourceList>, left_out: Option<LeftOut>) -> bool {
        let entry = match (left_out, allocatable) {
            (Some(l), _) => NodeEntry::LeftOut(l),
            (None, alloc) => {
                let alloc = alloc.unwrap_or_default();
                let text: String = alloc.iter().map(|(k, v)| format!("{k}={v};")).collect();
                let next = self.shapes.len() as u32;
                let id = *self.shape_of.entry(text).or_insert(next);
                if id == next {
                    self.shapes.push(alloc);
                }
                NodeEntry::Counted(id)
            }
        };
        match self.index.get(&name) {
            Some(&i) => {
                self.entries[i as usize] = entry;
                true
            }
            None => {
                self.index.insert(name, self.entries.len() as u32);
                self.entries.push(entry);
                false
            }
        }
    }

    fn sums(&self) -> NodeSums {
        let mut per_shape = vec![0u64; self.shapes.len()];
        let mut left_out = Vec::new();
        for e in &self.entries {
            match e {
                NodeEntry::Counted(id) => per_shape[*id as usize] += 1,
                NodeEntry::LeftOut(l) => left_out.push(l.clone()),
            }
        }
        let mut allocatable = ResourceList::new();
        for (shape, n) in self.shapes.iter().zip(per_shape) {
            for (k, q) in shape {
                // Doubling: a shape shared by many nodes is added a few dozen times, not once
                // per node.
                let (mut times, mut power) = (n, q.clone());
                while times > 0 {
                    if times & 1 == 1 {
                        add_to(&mut allocatable, k, &power);
                    }
                    times >>= 1;
                    if times > 0 {
                        power = power.add(&power);
                    }
                }
            }
        }
        NodeSums { total: self.entries.len(), allocatable, left_out }
    }
}

/// Objects a state holds more than once, named up to [`DUPLICATES_NAMED`].
#[derive(Debug, Clone, Default)]
pub struct Duplicates {
    pub named: Vec<String>,
    pub count: usize,
}

/// Duplicates named in the one warning about them; the rest are counted.
pub const DUPLICATES_NAMED: usize = 10;

impl Duplicates {
    pub fn add(&mut self, what: impl FnOnce() -> String) {
        self.count += 1;
        if self.named.len() < DUPLICATES_NAMED {
            self.named.push(what());
        }
    }

    /// The one warning: `None` when nothing was read twice.
    pub fn warning(&self) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let more = if self.count > self.named.len() { format!(" and {} more", self.count - self.named.len()) } else { String::new() };
        let (n, them) = if self.count == 1 { ("1 object", "it") } else { (&*format!("{} objects", self.count), "each") };
        Some(format!("the state holds {n} more than once, counted once ({them} as last read): {}{more}", self.named.join(", ")))
    }
}

/// Everything read, folded as it arrives.
#[derive(Debug, Clone, Default)]
pub struct Collector {
    nodes: Nodes,
    /// Objects read more than once (nodes, quotas): each counted once, the later wins.
    pub duplicates: Duplicates,
    /// Said on standard error, not gaps in the answer (a file given twice, read once).
    pub warnings: Vec<String>,
    slices: BTreeMap<(String, String), Slice>,
    slice_drivers: BTreeMap<(String, String), String>,
    classes: BTreeMap<String, Option<String>>,
    namespaces: BTreeMap<String, Namespace>,
    controllers: BTreeMap<(String, String), Controller>,
    failures: BTreeMap<(String, String), Failure>,
    /// Pending pods whose ResourceClaims from templates were not all created, by (namespace,
    /// controller `kind/name`): their names (up to [`MAX_PENDING_NAMES`]) and how many.
    claims_pending: BTreeMap<(String, String), (Vec<String>, i64)>,
    /// The autoscalers (HPAs, KEDA ScaledObjects) by (namespace, target `kind/name`): by name,
    /// what `blocked` names when one sets the count a blocked workload wants.
    autoscalers: BTreeMap<(String, String), Vec<(String, objects::Autoscaler)>>,
    /// The workloads an autoscaler may scale, by (namespace, `kind/name`): the pods they run
    /// and what one pod of their template charges quota, per capacity row.
    workloads: BTreeMap<(String, String), Scalable>,
    /// The VerticalPodAutoscalers by (namespace, target `kind/name`): (name, creation time,
    /// object).
    vpas: BTreeMap<(String, String), Vec<(String, String, objects::VerticalAutoscaler)>>,
    /// Targets of autoscalers known not to exist, by (namespace, `kind/name`): a GET answered
    /// 404, or a state that holds every workload of that kind. A normal state of a cluster (an
    /// HPA left behind by a deleted Deployment), not a gap in the answer.
    absent_targets: BTreeSet<(String, String)>,
    /// Targets of autoscalers that were read but do not decode: not absent, unread.
    undecoded_targets: BTreeSet<(String, String)>,
    /// Whether workloads are kept for the autoscalers' headroom (`capacity` only: the other
    /// views never decode a workload's template).
    pub scale_targets: bool,
    /// What could not be read (RBAC, an API not served): said in every view.
    pub notes: Vec<String>,
    /// Kinds seen at least once (`Node`, `Namespace`, `Event`, ...).
    seen: BTreeSet<&'static str>,
}

/// Pod names kept per controller for [`Collector::claims_pending`]: the refusal is looked up
/// among their events.
const MAX_PENDING_NAMES: usize = 1000;

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

    /// Says an autoscaler's target does not exist (its GET answered 404): the views name the
    /// autoscaler and count nothing for it, without calling the answer incomplete.
    pub fn target_absent(&mut self, namespace: &str, target: &objects::ScaleTarget) {
        self.absent_targets.insert((namespace.to_string(), format!("{}/{}", target.kind.to_lowercase(), target.name)));
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
                        name: name.clone(),
                        scoped,
                        hard: rows_min(enforced),
                        used: rows_min(&q.status_used),
                        all_hard: enforced.clone(),
                        all_used: q.status_used.clone(),
                    };
                    let quotas = &mut self.ns(&namespace).quotas;
                    let again = match quotas.iter_mut().find(|q| q.name == quota.name) {
                        Some(old) => {
                            *old = quota;
                            true
                        }
                        None => {
                            quotas.push(quota);
                            false
                        }
                    };
                    if again {
                        self.duplicates.add(|| format!("ResourceQuota {namespace}/{name}"));
                    }
                }
            }
            ("", "Pod") => {
                self.seen.insert("Pod");
                let o = objects::decode(d)?;
                if let Body::Pod(p) = &o.body {
                    if let (true, Some((kind, owner))) = (p.waits_for_claims(), &o.meta.controller) {
                        let e = self.claims_pending.entry((namespace.clone(), format!("{}/{owner}", kind.to_lowercase()))).or_default();
                        if e.0.len() < MAX_PENDING_NAMES {
                            e.0.push(name.clone());
                        }
                        e.1 += 1;
                    }
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
            ("autoscaling", "HorizontalPodAutoscaler") | ("keda.sh", "ScaledObject") => {
                self.seen.insert("Autoscaler");
                let o = objects::decode(d)?;
                if let Body::Autoscaler(a) = o.body {
                    if let Some(t) = &a.target {
                        let list = self.autoscalers.entry((namespace, format!("{}/{}", t.kind.to_lowercase(), t.name))).or_default();
                        list.retain(|(n, b)| !(n == &name && b.kind == a.kind));
                        list.push((name, *a));
                    }
                }
            }
            ("autoscaling.k8s.io", "VerticalPodAutoscaler") => {
                self.seen.insert("Autoscaler");
                let o = objects::decode(d)?;
                let created = o.meta.creation_timestamp.clone().unwrap_or_default();
                if let Body::VerticalAutoscaler(v) = o.body {
                    if let Some(t) = &v.target {
                        let list = self.vpas.entry((namespace, format!("{}/{}", t.kind.to_lowercase(), t.name))).or_default();
                        list.retain(|(n, _, _)| n != &name);
                        list.push((name, created, *v));
                    }
                }
            }
            ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") | ("batch", "Job") | ("", "ReplicationController") => {
                self.seen.insert("Controller");
                self.scalable(d, kind, &name, &namespace);
                self.controller(v, kind, name, namespace);
            }
            _ => {}
        }
        Ok(())
    }

    fn node(&mut self, d: &Document, name: String) -> Result<(), InputError> {
        let v = &d.value;
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
        // The API server refuses a Node whose allocatable is negative (ValidateNodeResources).
        if let Some((k, q)) = alloc.iter().find(|(_, q)| q.sign() < 0) {
            let said = format!("Node {name:?} is invalid: status.allocatable.{k}: Invalid value: \"{q}\": {}", crate::validation::reasons::NEGATIVE);
            return Err(InputError::at(&d.origin, None, said));
        }
        let (allocatable, left_out) = if reasons.is_empty() { (Some(alloc), None) } else { (None, Some(LeftOut { name: name.clone(), reasons })) };
        if self.nodes.put(name.clone(), allocatable, left_out) {
            self.duplicates.add(|| format!("Node {name}"));
        }
        Ok(())
    }

    fn event(&mut self, v: &Value, namespace: String) {
        let reason = str_at(v, &["reason"]).unwrap_or("");
        // FailedCreate: a controller's pod; FailedResourceClaimCreation: a pod's claim.
        if reason != "FailedCreate" && reason != "FailedResourceClaimCreation" {
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

    /// A workload an autoscaler may scale: its pods and one pod's charge (its template's
    /// requests and limits; LimitRange defaults are not applied). One that does not decode is
    /// left out (the views it matters to name its autoscaler).
    fn scalable(&mut self, d: &Document, kind: &str, name: &str, namespace: &str) {
        let key = (namespace.to_string(), format!("{}/{name}", kind.to_lowercase()));
        // Only a workload an autoscaler read before targets: without autoscalers nothing is
        // decoded (a target read before its autoscaler is read again, [`Self::add_scale_target`]).
        let by_vpa = self.vpas.contains_key(&key);
        if !self.scale_targets || !(by_vpa || self.autoscalers.contains_key(&key)) || self.workloads.contains_key(&key) {
            return;
        }
        let owned = d.value.get("metadata").and_then(|m| m.get("ownerReferences")).and_then(Value::as_array).is_some_and(|r| !r.is_empty());
        if !matches!(kind, "Deployment" | "StatefulSet" | "ReplicationController" | "ReplicaSet") || (kind == "ReplicaSet" && owned) {
            return;
        }
        let decoded = objects::decode(d);
        let Some(w) = decoded.as_ref().ok().and_then(|o| if let Body::Workload(w) = &o.body { Some(w) } else { None }) else {
            self.undecoded_targets.insert(key);
            return;
        };
        let current = i64::from(w.current.or(w.replicas).unwrap_or(1));
        let template = by_vpa.then(|| w.template.clone());
        self.workloads.insert(key, Scalable { current, per_pod: pod_charge(&w.template), template });
    }

    /// Takes a workload an autoscaler targets that was not kept when first read (it came
    /// before its autoscaler): the caller reads the input again for [`Self::unread_scale_targets`].
    /// Anything else is ignored.
    pub fn add_scale_target(&mut self, d: &Document) {
        let v = &d.value;
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        let name = str_at(v, &["metadata", "name"]).unwrap_or("");
        let namespace = str_at(v, &["metadata", "namespace"]).unwrap_or("");
        self.scalable(d, kind, name, namespace);
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
            // A Deployment's own pods are its new ReplicaSet's: missing while that ReplicaSet
            // cannot be created (its pods otherwise show on the ReplicaSet).
            "Deployment" => (int_at(v, &["spec", "replicas"]).unwrap_or(1), 0),
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
        // A Deployment whose new ReplicaSet quota refused says so in its Progressing condition.
        let condition = if kind == "Deployment" {
            crate::why::replicaset_refused(kind, v).filter(|m| is_quota_message(m))
        } else {
            v.get("status").and_then(|s| s.get("conditions")).and_then(Value::as_array).and_then(|cs| {
                cs.iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some("ReplicaFailure") && c.get("status").and_then(Value::as_str) == Some("True"))
                    .and_then(|c| c.get("message").and_then(Value::as_str))
                    .filter(|m| is_quota_message(m))
                    .map(str::to_string)
            })
        };
        self.controllers.insert((namespace, format!("{}/{name}", kind.to_lowercase())), Controller { owner, wanted, current, condition });
    }

    /// The namespaces the views speak of: those listed, or (a state without Namespace
    /// objects) those anything was seen in.
    fn all_namespaces(&self) -> impl Iterator<Item = (&String, &Namespace)> {
        let listed = self.seen.contains("Namespace");
        self.namespaces.iter().filter(move |(n, ns)| !n.is_empty() && (!listed || ns.listed))
    }

    /// [`Self::all_namespaces`] within the scope `opts` asks for.
    fn in_scope<'a>(&'a self, opts: &'a Options) -> impl Iterator<Item = (&'a String, &'a Namespace)> {
        self.all_namespaces().filter(move |(n, _)| opts.namespaces.as_ref().is_none_or(|s| s.contains(*n)))
    }

    fn notes_for_views(&self) -> Vec<String> {
        let mut notes = self.notes.clone();
        if !self.seen.contains("Namespace") {
            notes.push("no Namespace objects were read: the namespaces are those quotas or pods were seen in".into());
        }
        notes
    }
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
