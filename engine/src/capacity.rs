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

use crate::admission::usage;
use crate::dra::DEVICE_CLASS_SUFFIX;
use crate::objects;
use crate::quantity::Quantity;
use crate::resource_names::is_extended_resource_name;
use crate::resources::ResourceList;

mod blocked;
mod collect;
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
    /// Each allocatable as written (its JSON) -> its shape: read once, however many nodes
    /// share it.
    written: std::collections::HashMap<String, u32>,
}

/// The nodes' sums, as the views read them.
struct NodeSums {
    total: usize,
    allocatable: ResourceList,
    left_out: Vec<LeftOut>,
}

impl Nodes {
    /// The shape of an allocatable read before as `written` ([`Self::shape`]).
    fn written_shape(&self, written: &str) -> Option<u32> {
        self.written.get(written).copied()
    }

    /// The place of `alloc` among the shapes (added when new), remembered for the text it was
    /// `written` as.
    fn shape(&mut self, alloc: ResourceList, written: Option<String>) -> u32 {
        let text: String = alloc.iter().map(|(k, v)| format!("{k}={v};")).collect();
        let next = self.shapes.len() as u32;
        let id = *self.shape_of.entry(text).or_insert(next);
        if id == next {
            self.shapes.push(alloc);
        }
        if let Some(w) = written {
            self.written.insert(w, id);
        }
        id
    }

    /// Records `name`'s entry; `true` when the node was read before (its old entry replaced).
    fn put(&mut self, name: String, entry: NodeEntry) -> bool {
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

/// A VerticalPodAutoscaler as kept: its name, creation time and object.
type NamedVpa = (String, String, objects::Vpa);

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
    vpas: BTreeMap<(String, String), Vec<NamedVpa>>,
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
    /// Kueue's Workloads waiting for quota, by (namespace, owner `kind/name`).
    kueue_pending: BTreeMap<(String, String), KueuePending>,
    /// Kueue's LocalQueues: (namespace, name) -> ClusterQueue.
    local_queues: BTreeMap<(String, String), String>,
}

/// A Workload of Kueue's that waits for quota: `QuotaReserved` is False.
#[derive(Debug, Clone, Default)]
struct KueuePending {
    workload: String,
    queue: String,
    /// `Pending` or `Inadmissible`.
    reason: String,
    message: String,
    pods: i64,
}

fn add_to(list: &mut ResourceList, k: &str, v: &Quantity) {
    match list.get_mut(k) {
        Some(sum) => *sum = sum.add(v),
        None => {
            list.insert(k.to_string(), v.clone());
        }
    }
}

impl Collector {
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
