//! Kueue (kueue.x-k8s.io): whether its ClusterQueue reserves quota now for a Job labelled
//! `kueue.x-k8s.io/queue-name`, in Kueue's own words (docs/kueue.md).
//!
//! Kueue keeps such a Job suspended until its ClusterQueue has quota for it; only then does
//! the Job controller create pods, which ResourceQuota charges as any other. This module
//! replays Kueue's side for one Job: the Workload it builds (one pod set `main` of
//! min(parallelism, completions) pods, each pod's requests after LimitRange defaults, limits
//! copied to missing requests, RuntimeClass overhead), the checks before assignment (the
//! LocalQueue and ClusterQueue exist and are active, the namespace selector), then flavor
//! assignment in the ClusterQueue's order: untolerated taints, nodeSelector against the
//! flavors' labels, and whether the request fits the flavor's nominal quota less what its
//! Workloads reserve (`status.flavorsReservation`), with, in a cohort, what the other
//! ClusterQueues lend (past their lending limits, up to its borrowing limit), counted as
//! Kueue's quota tree counts it. A hierarchical cohort (a Cohort object with a parent or
//! quota of its own) is not replayed: its answer is undecided and says so.
//!
//! Amounts are Kueue's integers: cpu in millicores, everything else in whole units (rounded
//! up), printed as Kueue prints them.
//!
//! ```
//! use kubectl_quota_engine::kueue::{Kueue, Decision};
//! use kubectl_quota_engine::objects::{Container, Pod};
//! use kubectl_quota_engine::quantity::Quantity;
//! use serde_json::json;
//!
//! let mut k = Kueue::default();
//! k.add(&json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}}), "ns");
//! k.add(&json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
//!     "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"],
//!         "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "10"}]}]}]},
//!     "status": {"flavorsReservation": [{"name": "default", "resources": [{"name": "cpu", "total": "9", "borrowed": "0"}]}]}}), "ns");
//! k.add(&json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "q"}, "spec": {"clusterQueue": "cq"}}), "ns");
//! let pod = Pod { containers: vec![Container { name: "c".into(), requests: [("cpu".to_string(), Quantity::parse("2").unwrap())].into(), ..Default::default() }].into(), ..Default::default() };
//! let (d, _) = k.decide("ns", Some(&Default::default()), "q", &pod, 1, &[], None);
//! assert_eq!(d.decision, Decision::Pending("couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed".into()));
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::objects::{LimitRangeItem, Pod, Toleration};
use crate::quantity::{Format, Quantity};
use crate::resources::ResourceList;

/// The label that puts a Job in a LocalQueue.
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
/// Kueue's API group.
pub const GROUP: &str = crate::objects::KUEUE_GROUP;
/// The name Kueue gives a Job's one pod set.
pub const POD_SET: &str = "main";

/// A ResourceFlavor: the nodes it stands for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flavor {
    pub node_labels: BTreeMap<String, String>,
    /// (key, value, effect) of `nodeTaints`.
    pub node_taints: Vec<(String, String, String)>,
    pub tolerations: Vec<Toleration>,
}

/// One resource group of a ClusterQueue: the resources it covers and, per flavor in order,
/// each resource's nominal quota (Kueue's integer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Group {
    pub covered: Vec<String>,
    pub flavors: Vec<(String, BTreeMap<String, i64>)>,
}

/// A ClusterQueue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterQueue {
    /// `None`: no selector, which selects no namespace.
    pub namespace_selector: Option<Value>,
    pub groups: Vec<Group>,
    pub cohort: Option<String>,
    /// `stopPolicy` other than `None`.
    pub stopped: bool,
    /// `preemption.withinClusterQueue` (or, in a cohort, `reclaimWithinCohort`) other than
    /// `Never`: Workloads may be preempted to make room.
    pub preempts: bool,
    /// `flavorFungibility.whenCanBorrow` is `TryNextFlavor` (the default, `MayStopSearch`,
    /// takes the first flavor that fits, borrowing or not).
    pub try_next_when_borrowing: bool,
    /// Reserved quota per (flavor, resource), from `status.flavorsReservation`.
    pub reserved: BTreeMap<(String, String), i64>,
    /// Quota of admitted Workloads per (flavor, resource), from `status.flavorsUsage`.
    pub admitted: BTreeMap<(String, String), i64>,
    /// (borrowingLimit, lendingLimit) per (flavor, resource), where the spec sets either.
    pub limits: BTreeMap<(String, String), (Option<i64>, Option<i64>)>,
}

/// What the cluster runs of Kueue: its flavors, ClusterQueues, LocalQueues and Cohorts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kueue {
    pub flavors: BTreeMap<String, Flavor>,
    pub cluster_queues: BTreeMap<String, ClusterQueue>,
    /// The Cohort objects: name -> its parent (`spec.parentName`) and whether it holds quota
    /// of its own (`spec.resourceGroups`). A cohort a ClusterQueue names needs no object.
    pub cohorts: BTreeMap<String, (Option<String>, bool)>,
    /// Each cohort's totals, counted once and kept until a ClusterQueue changes.
    totals: CohortTotals,
    /// (namespace, name) -> (ClusterQueue, stopped).
    pub local_queues: BTreeMap<(String, String), (String, bool)>,
}

/// A cohort's totals per (cohort, flavor, resource): the quota its members lend and what
/// they use of it, as [`Kueue::capacity`] counts them. A copy starts empty (and counts again);
/// two are always equal (a cache, not data).
#[derive(Debug, Default)]
struct CohortTotals(std::sync::Mutex<BTreeMap<(String, String, String), (i64, i64)>>);

impl Clone for CohortTotals {
    fn clone(&self) -> Self {
        CohortTotals::default()
    }
}

impl PartialEq for CohortTotals {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for CohortTotals {}

impl CohortTotals {
    fn forget(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// Kueue's answer for a Job now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "verdict", content = "message")]
pub enum Decision {
    /// Quota is reserved now: the Job is unsuspended and its pods are created.
    Admitted,
    /// The Workload waits (`QuotaReserved=False`, reason `Pending`), with Kueue's message.
    Pending(String),
    /// The Workload cannot be admitted as things are (`QuotaReserved=False`, reason
    /// `Inadmissible`).
    Inadmissible(String),
    /// Not replayed here: why.
    Undecided(String),
}

/// Kueue's answer for one Job, with what it is based on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KueueReport {
    pub local_queue: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_queue: Option<String>,
    #[serde(flatten)]
    pub decision: Decision,
    /// Pods in the pod set.
    pub count: i64,
    /// The pod set's requests as Kueue adds them (all its pods), printed as Kueue prints them.
    pub requests: BTreeMap<String, String>,
    /// The flavor assigned to each resource, when admitted.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub flavors: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl KueueReport {
    /// Whether Kueue keeps the Job suspended now (anything but admitted).
    pub fn holds(&self) -> bool {
        self.decision != Decision::Admitted
    }

    /// Kueue's answer for `what` (`job/train`) in one sentence, where it holds the Job for
    /// a known reason (`None`: admitted, or not decided here).
    pub fn sentence(&self, what: &str) -> Option<String> {
        let queue = match &self.cluster_queue {
            Some(cq) => format!("LocalQueue {}, ClusterQueue {cq}", self.local_queue),
            None => format!("LocalQueue {}", self.local_queue),
        };
        match &self.decision {
            Decision::Pending(m) => Some(format!("Kueue will keep {what} suspended for now ({queue}): {m}")),
            Decision::Inadmissible(m) => Some(format!("Kueue cannot admit {what} ({queue}): {m}; it stays suspended")),
            Decision::Admitted | Decision::Undecided(_) => None,
        }
    }
}

/// One resource a flavor lacks, as Kueue's flavor-assignment message names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortfall<'a> {
    pub resource: &'a str,
    pub flavor: &'a str,
    pub short: Short<'a>,
}

/// How a flavor falls short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Short<'a> {
    /// `insufficient unused quota for R in flavor F, N more needed`: N more now.
    More(&'a str),
    /// `insufficient quota for R in flavor F, ... > maximum capacity (C)`: the most it ever
    /// holds is C, less than asked.
    Never(&'a str),
}

/// The shortfalls a message of Kueue's names (`couldn't assign flavors to pod set main: ...`),
/// in its order; its other reasons (taints, node affinity) are not shortfalls.
pub fn shortfalls(message: &str) -> Vec<Shortfall<'_>> {
    message
        .split("insufficient ")
        .skip(1)
        .filter_map(|part| {
            let (never, rest) = match part.strip_prefix("unused quota for ") {
                Some(rest) => (false, rest),
                None => (true, part.strip_prefix("quota for ")?),
            };
            let (resource, rest) = rest.split_once(" in flavor ")?;
            let (flavor, rest) = rest.split_once(", ")?;
            let short = match never {
                true => Short::Never(rest.split_once("maximum capacity (")?.1.split_once(')')?.0),
                false => Short::More(rest.split_once(" more needed")?.0),
            };
            Some(Shortfall { resource, flavor, short })
        })
        .collect()
}

/// Kueue's integer for a quantity of `resource`: millicores for cpu, else whole units.
fn amount(resource: &str, q: &Quantity) -> i64 {
    if resource == "cpu" {
        q.milli_value()
    } else {
        q.value()
    }
}

/// An amount as Kueue prints it.
pub fn printed(resource: &str, v: i64) -> String {
    if resource == "cpu" {
        Quantity::from_milli(v, Format::DecimalSI).to_string()
    } else if resource == "memory" || resource == "ephemeral-storage" || resource.starts_with("hugepages-") {
        Quantity::from_int(v, Format::BinarySI).to_string()
    } else {
        Quantity::from_int(v, Format::DecimalSI).to_string()
    }
}

fn text(v: &Value, path: &[&str]) -> Option<String> {
    path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_str).map(str::to_string)
}

/// The items of array `key` of `v` (none when it is missing or not an array).
fn items<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    v.get(key).and_then(Value::as_array).into_iter().flatten()
}

/// Each (flavor, resource) of list `key` of `v` (`[{name, resources: [{name, ...}]}]`), with
/// the resource's entry.
fn per_flavor<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = ((String, String), &'a Value)> + 'a {
    items(v, key).flat_map(|f| {
        let flavor = text(f, &["name"]).unwrap_or_default();
        items(f, "resources").filter_map(move |r| Some(((flavor.clone(), text(r, &["name"])?), r)))
    })
}

/// Field `field` of a resource's entry `r` (of resource `res`) as Kueue's integer: `None`
/// where unset or not a quantity.
fn amount_at(r: &Value, res: &str, field: &str) -> Option<i64> {
    r.get(field).and_then(quantity_of).map(|q| amount(res, &q))
}

fn quantity_of(v: &Value) -> Option<Quantity> {
    match v {
        Value::String(s) => Quantity::parse(s).ok(),
        Value::Number(n) => Quantity::parse(&n.to_string()).ok(),
        _ => None,
    }
}

impl Kueue {
    /// Takes one object of Kueue's group (v1beta2 or v1beta1); other kinds are left. A
    /// LocalQueue without a namespace is in `namespace`.
    pub fn add(&mut self, v: &Value, namespace: &str) {
        self.totals.forget();
        let name = text(v, &["metadata", "name"]).unwrap_or_default();
        let spec = v.get("spec").unwrap_or(&Value::Null);
        match v.get("kind").and_then(Value::as_str) {
            Some("ResourceFlavor") => {
                let node_labels = spec
                    .get("nodeLabels")
                    .and_then(Value::as_object)
                    .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect())
                    .unwrap_or_default();
                let node_taints = items(spec, "nodeTaints")
                    .map(|t| (text(t, &["key"]).unwrap_or_default(), text(t, &["value"]).unwrap_or_default(), text(t, &["effect"]).unwrap_or_default()))
                    .collect();
                let tolerations = items(spec, "tolerations").map(toleration).collect();
                self.flavors.insert(name, Flavor { node_labels, node_taints, tolerations });
            }
            Some("ClusterQueue") => {
                let groups = items(spec, "resourceGroups")
                    .map(|g| {
                        let covered: Vec<String> = items(g, "coveredResources").filter_map(|r| r.as_str().map(str::to_string)).collect();
                        let flavors = items(g, "flavors")
                            .map(|f| {
                                let quotas = items(f, "resources")
                                    .filter_map(|r| {
                                        let res = text(r, &["name"])?;
                                        let nominal = amount_at(r, &res, "nominalQuota").unwrap_or(0);
                                        Some((res, nominal))
                                    })
                                    .collect();
                                (text(f, &["name"]).unwrap_or_default(), quotas)
                            })
                            .collect();
                        Group { covered, flavors }
                    })
                    .collect();
                let status = v.get("status").unwrap_or(&Value::Null);
                let totals = |list| {
                    per_flavor(status, list)
                        .map(|(k, r)| {
                            let total = amount_at(r, &k.1, "total").unwrap_or(0);
                            (k, total)
                        })
                        .collect()
                };
                let (reserved, admitted) = (totals("flavorsReservation"), totals("flavorsUsage"));
                let limits = items(spec, "resourceGroups")
                    .flat_map(|g| per_flavor(g, "flavors"))
                    .map(|(k, r)| {
                        let limit = |field| amount_at(r, &k.1, field);
                        let limits = (limit("borrowingLimit"), limit("lendingLimit"));
                        (k, limits)
                    })
                    .filter(|(_, (b, l))| b.is_some() || l.is_some())
                    .collect();
                let cohort = text(spec, &["cohortName"]).or_else(|| text(spec, &["cohort"])).filter(|c| !c.is_empty());
                let stopped = text(spec, &["stopPolicy"]).is_some_and(|p| p != "None");
                let preempts = ["withinClusterQueue", "reclaimWithinCohort"].iter().any(|k| text(spec, &["preemption", k]).is_some_and(|p| p != "Never"));
                let try_next_when_borrowing = text(spec, &["flavorFungibility", "whenCanBorrow"]).as_deref() == Some("TryNextFlavor");
                let namespace_selector = spec.get("namespaceSelector").filter(|s| !s.is_null()).cloned();
                self.cluster_queues
                    .insert(name, ClusterQueue { namespace_selector, groups, cohort, stopped, preempts, try_next_when_borrowing, reserved, admitted, limits });
            }
            Some("Cohort") => {
                let parent = text(spec, &["parentName"]).filter(|p| !p.is_empty());
                let quota = items(spec, "resourceGroups").next().is_some();
                self.cohorts.insert(name, (parent, quota));
            }
            Some("LocalQueue") => {
                let ns = text(v, &["metadata", "namespace"]).unwrap_or_else(|| namespace.to_string());
                let cq = text(spec, &["clusterQueue"]).unwrap_or_default();
                let stopped = text(spec, &["stopPolicy"]).is_some_and(|p| p != "None");
                self.local_queues.insert((ns, name), (cq, stopped));
            }
            _ => {}
        }
    }

    /// Kueue's answer now for a Job in `namespace` (its labels: `None` when not read) in
    /// LocalQueue `queue`, whose pods are `template` and which runs `count` at once;
    /// `limit_ranges` the namespace's, `overhead` its RuntimeClass's. With it, the pod set's
    /// requests as Kueue counts them (`pods` too where the ClusterQueue covers it): what the
    /// Job reserves once admitted ([`Kueue::reserve`]).
    #[allow(clippy::too_many_arguments)]
    pub fn decide(
        &self,
        namespace: &str,
        labels: Option<&BTreeMap<String, String>>,
        queue: &str,
        template: &Pod,
        count: i64,
        limit_ranges: &[(&str, &[LimitRangeItem])],
        overhead: Option<&ResourceList>,
    ) -> (KueueReport, BTreeMap<String, i64>) {
        let mut requests = pod_set_requests(template, count, limit_ranges, overhead);
        let mut report = KueueReport {
            local_queue: queue.to_string(),
            cluster_queue: None,
            decision: Decision::Admitted,
            count,
            requests: BTreeMap::new(),
            flavors: BTreeMap::new(),
            notes: vec![],
        };
        report.decision = self.decision(namespace, labels, queue, template, &mut requests, &mut report);
        report.requests = requests.iter().map(|(k, v)| (k.clone(), printed(k, *v))).collect();
        (report, requests)
    }

    fn decision(
        &self,
        namespace: &str,
        labels: Option<&BTreeMap<String, String>>,
        queue: &str,
        template: &Pod,
        requests: &mut BTreeMap<String, i64>,
        report: &mut KueueReport,
    ) -> Decision {
        let count = report.count;
        let Some((cq_name, lq_stopped)) = self.local_queues.get(&(namespace.to_string(), queue.to_string())) else {
            return Decision::Inadmissible(format!("LocalQueue {queue} doesn't exist"));
        };
        if *lq_stopped {
            return Decision::Inadmissible(format!("LocalQueue {queue} is inactive"));
        }
        report.cluster_queue = Some(cq_name.clone());
        let Some(cq) = self.cluster_queues.get(cq_name) else {
            return Decision::Inadmissible(format!("ClusterQueue {cq_name} doesn't exist"));
        };
        let missing: Vec<&str> = cq.groups.iter().flat_map(|g| &g.flavors).map(|(f, _)| f.as_str()).filter(|f| !self.flavors.contains_key(*f)).collect();
        if cq.stopped || !missing.is_empty() {
            if !missing.is_empty() {
                report.notes.push(format!("ClusterQueue {cq_name} references missing ResourceFlavor(s): {}", missing.join(", ")));
            }
            return Decision::Inadmissible(format!("ClusterQueue {cq_name} is inactive"));
        }
        match selects(cq.namespace_selector.as_ref(), labels) {
            Some(true) => {}
            Some(false) => return Decision::Pending("Workload namespace doesn't match ClusterQueue selector".into()),
            None => {
                return Decision::Undecided(format!(
                    "the labels of namespace {namespace} were not read: whether ClusterQueue {cq_name}'s namespaceSelector selects it is not known"
                ))
            }
        }
        if let Some(cohort) = cq.cohort.as_ref().filter(|c| self.hierarchical(c)) {
            return Decision::Undecided(format!(
                "ClusterQueue {cq_name} is in cohort {cohort}, which has a parent, children or quota of its own (a Cohort object): hierarchical cohorts are not replayed, so whether it fits is not decided"
            ));
        }
        if cq.groups.iter().any(|g| g.covered.iter().any(|r| r == "pods")) {
            requests.insert("pods".into(), count);
        }
        let mut reasons: Vec<String> = Vec::new();
        let mut assigned = BTreeMap::new();
        let mut could_preempt = false;
        let wanted: Vec<&String> = requests.iter().filter(|(_, v)| **v > 0).map(|(r, _)| r).collect();
        reasons.extend(wanted.iter().filter(|r| !cq.groups.iter().any(|g| g.covered.contains(r))).map(|r| format!("resource {r} unavailable in ClusterQueue")));
        if reasons.is_empty() {
            for group in &cq.groups {
                let asked: BTreeMap<&String, i64> = requests.iter().filter(|(r, v)| **v > 0 && group.covered.contains(r)).map(|(r, v)| (r, *v)).collect();
                if asked.is_empty() {
                    continue;
                }
                // The label keys the group's flavors name: only those of the nodeSelector count.
                let keys: BTreeSet<&String> = group.flavors.iter().filter_map(|(f, _)| self.flavors.get(f)).flat_map(|f| f.node_labels.keys()).collect();
                let mut found = None;
                // A flavor that fits only by borrowing, kept while later ones are tried
                // (`whenCanBorrow: TryNextFlavor`).
                let mut borrowing = None;
                for (flavor_name, _) in &group.flavors {
                    if let Some(why) = flavor_refuses(flavor_name, &self.flavors[flavor_name], template, &keys) {
                        reasons.push(why);
                        continue;
                    }
                    match self.fits(cq, flavor_name, &asked) {
                        Ok(borrows) if borrows && cq.try_next_when_borrowing => {
                            borrowing.get_or_insert_with(|| flavor_name.clone());
                        }
                        Ok(_) => {
                            found = Some(flavor_name.clone());
                            break;
                        }
                        Err((why, preempt)) => {
                            could_preempt |= preempt && cq.preempts;
                            reasons.push(why);
                        }
                    }
                }
                let found = found.or(borrowing);
                match found {
                    Some(f) => assigned.extend(asked.keys().map(|r| ((*r).clone(), f.clone()))),
                    None => break,
                }
            }
        }
        // A flavor that fits drops the reasons of those tried before it.
        if wanted.iter().all(|r| assigned.contains_key(*r)) {
            report.flavors = assigned;
            return Decision::Admitted;
        }
        if could_preempt {
            report.notes.push(format!(
                "ClusterQueue {cq_name} may preempt lower-priority Workloads (preemption.withinClusterQueue): whether that makes room is not replayed"
            ));
        }
        reasons.sort();
        Decision::Pending(format!("couldn't assign flavors to pod set {POD_SET}: {}", reasons.join(", ")))
    }

    /// Forgets the object of `kind` (`ResourceFlavor`, `ClusterQueue`, `Cohort`, `LocalQueue`) named
    /// `name` (in `namespace`, for a LocalQueue): a watch's deletion.
    pub fn remove(&mut self, kind: &str, namespace: &str, name: &str) {
        self.totals.forget();
        match kind {
            "ResourceFlavor" => _ = self.flavors.remove(name),
            "ClusterQueue" => _ = self.cluster_queues.remove(name),
            "Cohort" => _ = self.cohorts.remove(name),
            "LocalQueue" => _ = self.local_queues.remove(&(namespace.to_string(), name.to_string())),
            _ => {}
        }
    }

    /// Replaces every object of `kind` with `other`'s: a watch's list, swapped in whole.
    pub fn replace_kind(&mut self, kind: &str, other: &Kueue) {
        self.totals.forget();
        match kind {
            "ResourceFlavor" => self.flavors.clone_from(&other.flavors),
            "ClusterQueue" => self.cluster_queues.clone_from(&other.cluster_queues),
            "Cohort" => self.cohorts.clone_from(&other.cohorts),
            "LocalQueue" => self.local_queues.clone_from(&other.local_queues),
            _ => {}
        }
    }

    /// How many objects of `kind` are held.
    pub fn count(&self, kind: &str) -> usize {
        match kind {
            "ResourceFlavor" => self.flavors.len(),
            "ClusterQueue" => self.cluster_queues.len(),
            "Cohort" => self.cohorts.len(),
            "LocalQueue" => self.local_queues.len(),
            _ => 0,
        }
    }

    /// Reserves what an admitted Job's pod set takes, so later Jobs see it.
    pub fn reserve(&mut self, report: &KueueReport, requests: &BTreeMap<String, i64>) {
        let Some(cq) = report.cluster_queue.as_ref().and_then(|c| self.cluster_queues.get_mut(c)) else { return };
        let mut totals = self.totals.0.lock().unwrap_or_else(|e| e.into_inner());
        for (res, flavor) in &report.flavors {
            let Some(v) = requests.get(res) else { continue };
            let fr = (flavor.clone(), res.clone());
            let local = cq.local(&fr);
            let used = cq.reserved.entry(fr).or_default();
            // The cohort's usage counted so far moves by what this member now uses past what
            // it keeps.
            if let Some((_, usage)) = cq.cohort.as_ref().and_then(|c| totals.get_mut(&(c.clone(), flavor.clone(), res.clone()))) {
                *usage += (*used + v - local).max(0) - (*used - local).max(0);
            }
            *used += v;
        }
    }
}

fn toleration(t: &Value) -> Toleration {
    Toleration {
        key: text(t, &["key"]).unwrap_or_default(),
        operator: text(t, &["operator"]).unwrap_or_default(),
        value: text(t, &["value"]).unwrap_or_default(),
        effect: text(t, &["effect"]).unwrap_or_default(),
    }
}

/// Whether a label selector (`matchLabels`, `matchExpressions`) selects `labels`: `None` when
/// the labels are not known. No selector selects nothing.
fn selects(selector: Option<&Value>, labels: Option<&BTreeMap<String, String>>) -> Option<bool> {
    let Some(sel) = selector else { return Some(false) };
    let empty = sel.get("matchLabels").and_then(Value::as_object).is_none_or(|m| m.is_empty())
        && sel.get("matchExpressions").and_then(Value::as_array).is_none_or(|e| e.is_empty());
    if empty {
        return Some(true);
    }
    let labels = labels?;
    let by_labels = sel.get("matchLabels").and_then(Value::as_object).into_iter().flatten().all(|(k, v)| labels.get(k).map(String::as_str) == v.as_str());
    let by_expressions = items(sel, "matchExpressions").all(|e| {
        let key = text(e, &["key"]).unwrap_or_default();
        let values: Vec<&str> = items(e, "values").filter_map(Value::as_str).collect();
        match text(e, &["operator"]).as_deref() {
            Some("In") => labels.get(&key).is_some_and(|v| values.contains(&v.as_str())),
            Some("NotIn") => labels.get(&key).is_none_or(|v| !values.contains(&v.as_str())),
            Some("Exists") => labels.contains_key(&key),
            Some("DoesNotExist") => !labels.contains_key(&key),
            _ => false,
        }
    });
    Some(by_labels && by_expressions)
}

/// A pod set's requests as Kueue adds them: each pod's after LimitRange defaults, limits
/// copied to missing requests, the scheduler's sum (containers and sidecars, the largest init
/// phase, pod-level requests), overhead; then times the pods.
fn pod_set_requests(template: &Pod, count: i64, limit_ranges: &[(&str, &[LimitRangeItem])], overhead: Option<&ResourceList>) -> BTreeMap<String, i64> {
    let mut pod = template.clone();
    crate::admission::limit_ranger::apply_limit_ranges(&mut pod, limit_ranges);
    let copy = |list: &mut std::sync::Arc<Vec<crate::objects::Container>>| {
        for c in std::sync::Arc::make_mut(list).iter_mut() {
            for (k, v) in c.limits.clone() {
                c.requests.entry(k).or_insert(v);
            }
        }
    };
    copy(&mut pod.containers);
    copy(&mut pod.init_containers);
    let mut per_pod = crate::pod_totals::aggregate(&pod, |c| &c.requests);
    for (k, v) in pod.pod_requests.iter().filter(|(k, _)| *k == "cpu" || *k == "memory" || k.starts_with("hugepages-")) {
        per_pod.insert(k.clone(), v.clone());
    }
    let overhead = if pod.overhead.is_empty() { overhead } else { Some(&pod.overhead) };
    for (k, v) in overhead.into_iter().flatten() {
        let sum = per_pod.get(k).map_or_else(|| v.clone(), |x| x.add(v));
        per_pod.insert(k.clone(), sum);
    }
    per_pod.iter().map(|(k, v)| (k.clone(), amount(k, v).saturating_mul(count))).collect()
}

/// Why a flavor cannot take the pods at all (a taint they do not tolerate, a nodeSelector its
/// labels do not match), as Kueue says it.
fn flavor_refuses(name: &str, flavor: &Flavor, pod: &Pod, keys: &BTreeSet<&String>) -> Option<String> {
    let placement = pod.placement.as_deref();
    let tolerations: Vec<&Toleration> = placement.map(|p| p.tolerations.iter()).into_iter().flatten().chain(&flavor.tolerations).collect();
    for (key, value, effect) in flavor.node_taints.iter().filter(|(_, _, e)| e == "NoSchedule" || e == "NoExecute") {
        let tolerated = tolerations.iter().any(|t| {
            (t.effect.is_empty() || t.effect == *effect)
                && match t.operator.as_str() {
                    "Exists" => t.key.is_empty() || t.key == *key,
                    _ => t.key == *key && t.value == *value,
                }
        });
        if !tolerated {
            return Some(format!("untolerated taint {{{key} {value} {effect} <nil>}} in flavor {name}"));
        }
    }
    let selector = placement.map(|p| &p.node_selector);
    let mismatch = selector.into_iter().flatten().filter(|(k, _)| keys.contains(k)).any(|(k, v)| flavor.node_labels.get(k) != Some(v));
    mismatch.then(|| format!("flavor {name} doesn't match node affinity"))
}

impl ClusterQueue {
    /// Its nominal quota of flavor and resource `fr`.
    fn nominal(&self, fr: &(String, String)) -> i64 {
        self.groups.iter().flat_map(|g| &g.flavors).find(|(f, _)| *f == fr.0).and_then(|(_, q)| q.get(&fr.1).copied()).unwrap_or(0)
    }

    /// What it keeps for itself of `fr`, never lent to its cohort: its nominal quota past
    /// its lending limit.
    fn local(&self, fr: &(String, String)) -> i64 {
        self.limits.get(fr).and_then(|(_, l)| *l).map_or(0, |l| (self.nominal(fr) - l).max(0))
    }

    /// What its Workloads reserve of `fr`.
    fn used(&self, fr: &(String, String)) -> i64 {
        self.reserved.get(fr).copied().unwrap_or(0)
    }
}

impl Kueue {
    /// Whether cohort `name` is more than the ClusterQueues that name it: a Cohort object
    /// with a parent or quota of its own, or one whose parent it is.
    fn hierarchical(&self, name: &str) -> bool {
        self.cohorts.get(name).is_some_and(|(parent, quota)| parent.is_some() || *quota) || self.cohorts.values().any(|(p, _)| p.as_deref() == Some(name))
    }

    /// Whether ClusterQueue `cq` fits `asked` in `flavor` now: `Ok(true)` where it does only
    /// by borrowing from its cohort; else Kueue's reason, and whether preempting could make
    /// room (the request is within the nominal quota, or quota lent may be reclaimed).
    fn fits(&self, cq: &ClusterQueue, flavor: &str, asked: &BTreeMap<&String, i64>) -> Result<bool, (String, bool)> {
        let mut borrows = false;
        for (res, want) in asked.iter().filter(|(_, v)| **v > 0) {
            let fr = (flavor.to_string(), (*res).clone());
            let q = self.capacity(cq, &fr);
            if *want > q.potential {
                return Err((
                    format!(
                        "insufficient quota for {res} in flavor {flavor}, previously considered podsets requests ({}) + current podset request ({}) > maximum capacity ({})",
                        printed(res, 0),
                        printed(res, *want),
                        printed(res, q.potential)
                    ),
                    false,
                ));
            }
            if *want > q.available {
                return Err((
                    format!("insufficient unused quota for {res} in flavor {flavor}, {} more needed", printed(res, want - q.available)),
                    *want <= q.nominal || cq.cohort.is_some(),
                ));
            }
            borrows |= q.used + want > q.nominal;
        }
        Ok(borrows)
    }

    /// What ClusterQueue `cq` has of flavor and resource `fr`, as Kueue's quota tree counts
    /// it: alone, its nominal quota less what its Workloads reserve; in a cohort, also what the
    /// cohort's other ClusterQueues lend (their nominal quota past their lending limits, less
    /// what they use of it), up to its own borrowing limit.
    fn capacity(&self, cq: &ClusterQueue, fr: &(String, String)) -> Capacity {
        let (nominal, used) = (cq.nominal(fr), cq.used(fr));
        let Some(cohort) = &cq.cohort else {
            return Capacity { nominal, used, available: nominal - used, potential: nominal };
        };
        let key = (cohort.clone(), fr.0.clone(), fr.1.clone());
        let mut totals = self.totals.0.lock().unwrap_or_else(|e| e.into_inner());
        let (subtree, usage) = *totals.entry(key).or_insert_with(|| {
            let members = self.cluster_queues.values().filter(|c| c.cohort.as_ref() == Some(cohort));
            members.fold((0, 0), |(q, u), c| (q + c.nominal(fr) - c.local(fr), u + (c.used(fr) - c.local(fr)).max(0)))
        });
        drop(totals);
        let local = cq.local(fr);
        let borrowing = cq.limits.get(fr).and_then(|(b, _)| *b);
        let mut from_cohort = subtree - usage;
        let mut potential = local + subtree;
        if let Some(b) = borrowing {
            let stored = nominal - local;
            let used_in_cohort = (used - local).max(0);
            from_cohort = from_cohort.min(stored - used_in_cohort + b);
            potential = potential.min(nominal + b);
        }
        Capacity { nominal, used, available: (local - used).max(0) + from_cohort, potential }
    }
}

/// One flavor and resource of a ClusterQueue, in Kueue's integers.
struct Capacity {
    nominal: i64,
    used: i64,
    /// What it may still reserve now (borrowing included).
    available: i64,
    /// The most it could ever hold (with nothing used).
    potential: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kueue's shortfalls among its other reasons (sorted as Kueue sorts them): a taint's
    /// reason after a shortfall is not part of it.
    #[test]
    fn the_shortfalls_of_a_message_are_read_apart_from_its_other_reasons() {
        let m = "couldn't assign flavors to pod set main: insufficient quota for gpu in flavor a100, previously considered podsets requests (0) + current podset request (12) > maximum capacity (8), insufficient unused quota for cpu in flavor default, 1500m more needed, untolerated taint {instance spot NoSchedule <nil>} in flavor spot";
        assert_eq!(
            shortfalls(m),
            [
                Shortfall { resource: "gpu", flavor: "a100", short: Short::Never("8") },
                Shortfall { resource: "cpu", flavor: "default", short: Short::More("1500m") },
            ]
        );
        assert!(shortfalls("LocalQueue q doesn't exist").is_empty());
    }
}
