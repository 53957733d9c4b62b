//! Usage evaluators: which quota resources an object is charged for, and how much.
//!
//! One evaluator per kind of object, as in the API server's quota registry: pods, persistent
//! volume claims, services, and an object counter (`count/<resource>[.<group>]`, plus the
//! legacy names `configmaps`, `secrets`, `resourcequotas`, `replicationcontrollers`) for
//! everything else.
//!
//! ```
//! use kubectl_quota_engine::objects::{Container, Pod};
//! use kubectl_quota_engine::quantity::Quantity;
//! use kubectl_quota_engine::admission::usage::pod_usage;
//!
//! let c = |name: &str, cpu: &str| Container {
//!     name: name.into(),
//!     requests: [("cpu".to_string(), Quantity::parse(cpu).unwrap())].into(),
//!     ..Container::default()
//! };
//! // Init containers run one at a time before the app containers: the max rule applies.
//! let pod = Pod { containers: vec![c("app", "500m")].into(), init_containers: vec![c("init", "1")].into(), ..Pod::default() };
//! assert_eq!(pod_usage(&pod)["requests.cpu"].to_string(), "1");
//! ```
//!
//! Why one file of this length: the evaluators share the charge rules (request/limit
//! pairs, extended resources, the version switches), and reading them side by side is how a
//! difference from upstream is spotted; each evaluator is a section of its own below.

use std::collections::{BTreeMap, BTreeSet};

use crate::dra::DRA_EXTENDED_PREFIX;
use crate::objects::{Body, Object, Pod, Pvc, Service};
use crate::quantity::{Format, Quantity};
use crate::resource_names::{is_extended_resource_name, is_native_resource_name};
use crate::resources::ResourceList;
use crate::version::Rules;

pub use crate::pod_totals::{after_one_usage, aggregate, is_resize, pod_level_resources_set, pod_limits, pod_requests, PodSums};
use crate::pod_totals::{limits_of_pod, max_into, requests_of_pod};

impl PodSums {
    /// The sums of the release of `rules`.
    pub const fn of(rules: &Rules) -> PodSums {
        PodSums {
            dra_extended_resources: rules.dra_extended_resources,
            status_resources: rules.pod_resize,
            max_of_sums: rules.resize_max_of_sums,
            limits_all_or_nothing: rules.pod_limits_all_or_nothing,
            overhead_aliased: rules.pod_level_overhead_aliased,
        }
    }
}

/// Resources the API server never quota-checks.
const IGNORED: &[&str] = &[
    "bindings",
    "componentstatuses",
    "events",
    "events.events.k8s.io",
    "tokenreviews.authentication.k8s.io",
    "selfsubjectreviews.authentication.k8s.io",
    "subjectaccessreviews.authorization.k8s.io",
    "selfsubjectaccessreviews.authorization.k8s.io",
    "localsubjectaccessreviews.authorization.k8s.io",
    "selfsubjectrulesreviews.authorization.k8s.io",
];

/// Names the pod evaluator tracks exactly.
const POD_RESOURCES: &[&str] = &[
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
];

/// Quota names a container must declare when a matching quota limits them ("must specify").
const POD_VALIDATION_SET: &[&str] = &["cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"];

/// Every resource a "must specify" constraint can name. What a container lacks for one of
/// them does not depend on the others, so an object's findings for all of them, computed
/// once, serve every quota.
pub fn constrained_resources() -> &'static [&'static str] {
    POD_VALIDATION_SET
}

const PVC_RESOURCES: &[&str] = &["count/persistentvolumeclaims", "persistentvolumeclaims", "requests.storage"];
const STORAGE_CLASS_SUFFIX: &str = ".storageclass.storage.k8s.io/";
const SERVICE_RESOURCES: &[&str] = &["count/services", "services", "services.nodeports", "services.loadbalancers"];

/// The operation being admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    /// An update of a pod through its `resize` subresource, whatever it changes.
    Resize,
}

/// Which evaluator handles an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evaluator {
    /// Pods; with DRA extended resources (1.35) it also charges
    /// `requests.deviceclass.resource.kubernetes.io/<class>`.
    Pod(PodSums),
    /// ResourceClaims with the DRA device quota (1.34+; before, they are only counted);
    /// admin-access requests are charged from 1.34 as well.
    ResourceClaim {
        admin_access_counted: bool,
        /// 1.36: a claim is also charged `requests.deviceclass.resource.kubernetes.io/<class>`
        /// and its classes' `requests.<extendedResourceName>`.
        extended: bool,
        /// The cluster's DeviceClasses (`None`: unknown): with `extended`, which names a claim
        /// is charged and which quotas cover it depend on them.
        classes: Option<crate::dra::DeviceClasses>,
    },
    PersistentVolumeClaim,
    Service,
    /// Counted objects: the names charged one per object.
    Count(Vec<String>),
    /// Never checked (cluster-scoped objects, reviews, events).
    Ignored(&'static str),
}

impl Evaluator {
    /// The pod evaluator of the newest release.
    pub const POD: Evaluator = Evaluator::Pod(PodSums {
        dra_extended_resources: true,
        status_resources: true,
        max_of_sums: true,
        limits_all_or_nothing: true,
        overhead_aliased: false,
    });

    /// The evaluator of the newest release.
    pub fn for_object(obj: &Object) -> Evaluator {
        Evaluator::for_object_with(obj, &Rules::current())
    }

    /// The evaluator the release of `rules` registers for this object, in a cluster whose
    /// DeviceClasses are unknown.
    pub fn for_object_with(obj: &Object, rules: &Rules) -> Evaluator {
        Evaluator::for_object_in(obj, rules, None)
    }

    /// The evaluator the release of `rules` registers for this object, in a cluster with
    /// these DeviceClasses (`None`: unknown).
    pub fn for_object_in(obj: &Object, rules: &Rules, classes: Option<&crate::dra::DeviceClasses>) -> Evaluator {
        let gr = obj.type_info.group_resource();
        if !obj.type_info.namespaced {
            return Evaluator::Ignored("cluster-scoped objects are not subject to ResourceQuota");
        }
        if IGNORED.contains(&gr.as_str()) {
            return Evaluator::Ignored("the API server never checks this resource against quota");
        }
        match &obj.body {
            Body::Pod(_) => Evaluator::Pod(PodSums { status_resources: true, ..PodSums::of(rules) }),
            Body::ResourceClaim(_) if rules.dra => Evaluator::ResourceClaim {
                admin_access_counted: rules.dra_admin_access_counted,
                extended: rules.dra_claim_extended_resources,
                classes: classes.cloned(),
            },
            Body::PersistentVolumeClaim(_) => Evaluator::PersistentVolumeClaim,
            Body::Service(_) => Evaluator::Service,
            _ => {
                let mut names = vec![format!("count/{gr}")];
                if matches!(gr.as_str(), "configmaps" | "secrets" | "resourcequotas" | "replicationcontrollers") {
                    names.push(gr.clone());
                }
                Evaluator::Count(names)
            }
        }
    }

    /// `Handles`: whether quota admission acts on this operation at all (the newest rules,
    /// without the old object: pod updates are not handled).
    pub fn handles(&self, op: Operation) -> bool {
        match self {
            Evaluator::Ignored(_) => false,
            Evaluator::Pod(_) | Evaluator::Count(_) => op == Operation::Create,
            // Only pods have a resize subresource.
            Evaluator::PersistentVolumeClaim | Evaluator::Service | Evaluator::ResourceClaim { .. } => op != Operation::Resize,
        }
    }

    /// `Handles` as the release of `rules` decides it: a pod update is handled when it goes
    /// through `pods/resize` (1.33+; a plain update that changes resources is taken as one) or
    /// flips the Terminating scope (1.33+).
    pub fn handles_with(&self, op: Operation, obj: &Object, old: Option<&Object>, rules: &Rules) -> bool {
        match (self, op, &obj.body, old.map(|o| &o.body)) {
            (Evaluator::Pod(_), Operation::Resize, Body::Pod(_), Some(Body::Pod(_))) => rules.pod_resize,
            (Evaluator::Pod(_), Operation::Update, Body::Pod(new), Some(Body::Pod(prev))) => {
                (rules.pod_resize && is_resize(prev, new)) || (rules.scope_change_on_update && terminating(prev) != terminating(new))
            }
            _ => self.handles(op),
        }
    }

    /// `MatchingResources`: the quota resource names (of `names`) this evaluator charges,
    /// borrowed from `names`.
    pub fn matching_resources<'a, I: IntoIterator<Item = &'a String>>(&self, names: I) -> smallvec::SmallVec<[&'a str; 8]> {
        names.into_iter().filter(|n| self.tracks(n)).map(String::as_str).collect()
    }

    /// Whether this evaluator charges the quota resource `n`.
    pub fn tracks(&self, n: &str) -> bool {
        match self {
            Evaluator::Pod(sums) => {
                POD_RESOURCES.contains(&n)
                    || (sums.dra_extended_resources && n.strip_prefix("requests.").is_some_and(|r| r.starts_with(DRA_EXTENDED_PREFIX)))
                    || n.starts_with("hugepages-")
                    || n.starts_with("requests.hugepages-")
                    || (n.starts_with("requests.") && !is_native_resource_name(n))
            }
            Evaluator::PersistentVolumeClaim => {
                PVC_RESOURCES.contains(&n) || n.split_once(STORAGE_CLASS_SUFFIX).is_some_and(|(_, r)| r == "persistentvolumeclaims" || r == "requests.storage")
            }
            Evaluator::Service => SERVICE_RESOURCES.contains(&n),
            Evaluator::ResourceClaim { extended, classes, .. } => crate::dra::tracks(n) || (*extended && crate::dra::tracks_extended(n, classes.as_deref())),
            Evaluator::Count(names) => names.iter().any(|c| c == n),
            Evaluator::Ignored(_) => false,
        }
    }

    /// `Usage`: what the object consumes.
    pub fn usage(&self, obj: &Object) -> ResourceList {
        match (&obj.body, self) {
            (Body::Pod(p), Evaluator::Pod(sums)) => pod_usage_for(p, sums),
            (Body::ResourceClaim(c), Evaluator::ResourceClaim { admin_access_counted, extended, classes }) => {
                crate::dra::claim_usage(c, *admin_access_counted, *extended, classes.as_deref())
            }
            (Body::PersistentVolumeClaim(p), Evaluator::PersistentVolumeClaim) => pvc_usage(p, &obj.meta.annotations),
            (Body::Service(s), Evaluator::Service) => service_usage(s),
            (_, Evaluator::Count(names)) => names.iter().map(|n| (n.clone(), Quantity::from_int(1, Format::DecimalSI))).collect(),
            _ => ResourceList::new(),
        }
    }

    /// `Constraints`: the "must specify" rule for pods. Returns, per missing resource, the
    /// containers that lack it.
    pub fn constraints(&self, obj: &Object, restricted: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
        match (&obj.body, self) {
            (Body::Pod(p), Evaluator::Pod(_)) => pod_missing(p, restricted),
            _ => BTreeMap::new(),
        }
    }
}

/// The usage names a set of requests and limits produce (`podComputeUsageHelper`), added to
/// `out`.
fn compute_usage_into(out: &mut ResourceList, requests: &ResourceList, limits: &ResourceList, dra_extended: bool) {
    out.insert("pods".into(), Quantity::from_int(1, Format::DecimalSI));
    // The standard names spelled out: no formatting per pod.
    const BASES: [(&str, &str, &str); 3] = [
        ("cpu", "requests.cpu", "limits.cpu"),
        ("memory", "requests.memory", "limits.memory"),
        ("ephemeral-storage", "requests.ephemeral-storage", "limits.ephemeral-storage"),
    ];
    for (base, requested, limited) in BASES {
        if let Some(r) = requests.get(base) {
            out.insert(base.into(), r.clone());
            out.insert(requested.into(), r.clone());
        }
        if let Some(l) = limits.get(base) {
            out.insert(limited.into(), l.clone());
        }
    }
    for (k, v) in requests {
        if k.starts_with("hugepages-") {
            out.insert(k.clone(), v.clone());
            out.insert(format!("requests.{k}"), v.clone());
        } else if is_extended_resource_name(k) || (dra_extended && k.starts_with(DRA_EXTENDED_PREFIX)) {
            out.insert(format!("requests.{k}"), v.clone());
        }
    }
}

/// Whether quota charges the pod's compute resources: terminal pods count only as `count/pods`.
pub fn pod_is_counted(pod: &Pod) -> bool {
    !matches!(pod.phase.as_deref(), Some("Succeeded" | "Failed"))
}

/// `PodUsageFunc`: `count/pods`, then (for non-terminal pods) `pods` and compute resources
/// (the newest rules).
pub fn pod_usage(pod: &Pod) -> ResourceList {
    pod_usage_with(pod, &Rules::current())
}

/// [`pod_usage`] as the release of `rules` computes it.
pub fn pod_usage_with(pod: &Pod, rules: &Rules) -> ResourceList {
    pod_usage_for(pod, &PodSums::of(rules))
}

fn pod_usage_for(pod: &Pod, sums: &PodSums) -> ResourceList {
    let (dra_extended, use_status_resources, max_of_sums) = (sums.dra_extended_resources, sums.status_resources, sums.max_of_sums);
    let mut out = ResourceList::new();
    out.insert("count/pods".into(), Quantity::from_int(1, Format::DecimalSI));
    if !pod_is_counted(pod) {
        return out;
    }
    if use_status_resources && max_of_sums && !pod.container_statuses.is_empty() {
        let (requests, limits) = max_of_views(pod, sums.limits_all_or_nothing);
        compute_usage_into(&mut out, &requests, &limits, dra_extended);
        return out;
    }
    let effective;
    let pod = if use_status_resources && !pod.container_statuses.is_empty() {
        effective = with_status_resources(pod);
        &effective
    } else {
        pod
    };
    let aliased = crate::pod_totals::within_one_usage(pod, sums.overhead_aliased);
    let pod = aliased.as_ref().unwrap_or(pod);
    compute_usage_into(&mut out, &pod_requests(pod), &pod_limits(pod, sums), dra_extended);
    out
}

/// Whether the pod falls under the Terminating scope (`activeDeadlineSeconds` >= 0).
pub fn terminating(pod: &Pod) -> bool {
    pod.active_deadline_seconds.is_some_and(|s| s >= 0)
}

/// The resources quota charges a pod whose status reports resources (in-place resize): per
/// regular and sidecar container, the request is the largest of spec, status and allocated,
/// the limit the larger of spec and status; when the resize is Infeasible the spec is left
/// out. Plain init containers keep their spec.
pub fn with_status_resources(pod: &Pod) -> Pod {
    let mut out = pod.clone();
    let infeasible = pod.resize_infeasible;
    let apply = |c: &mut crate::objects::Container| {
        let Some(st) = pod.container_statuses.get(&c.name) else { return };
        if !st.has_resources && st.allocated.is_empty() {
            return;
        }
        let mut req = if infeasible { ResourceList::new() } else { c.requests.clone() };
        max_into(&mut req, &st.requests);
        max_into(&mut req, &st.allocated);
        let mut lim = if infeasible { ResourceList::new() } else { c.limits.clone() };
        max_into(&mut lim, &st.limits);
        c.requests = req;
        c.limits = lim;
    };
    std::sync::Arc::make_mut(&mut out.containers).iter_mut().for_each(apply);
    crate::objects::changing(&mut out.init_containers, |c| c.sidecar).iter_mut().filter(|c| c.sidecar).for_each(apply);
    out
}

/// The requests and limits quota charges a pod whose status reports resources, from 1.37.
///
/// The containers' totals are computed in three views, then per resource the largest of them
/// is taken (a name at zero in one view is kept):
/// - the spec (left out when the resize is Infeasible);
/// - what the node runs: a container's `status.resources.requests` when there (even empty),
///   else its `allocatedResources`, else its spec (nothing when Infeasible);
/// - what the kubelet admitted: a container's `allocatedResources` when there, else its spec
///   (nothing when Infeasible).
///
/// Limits: the larger of the spec's and the node's (`status.resources.limits`, else the spec;
/// nothing when Infeasible), or the node's alone when Infeasible. Pod-level resources (of the
/// spec) then replace what they set, and overhead is added, as for any pod.
fn max_of_views(pod: &Pod, limits_all_or_nothing: bool) -> (ResourceList, ResourceList) {
    use crate::objects::{Container, ContainerStatusResources};
    let infeasible = pod.resize_infeasible;
    let none = ResourceList::new();
    let status = |c: &Container| pod.container_statuses.get(&c.name);
    // The containers' totals of one view: `pick` gives a container's list from its spec and status.
    let total = |pick: &dyn Fn(&Container, Option<&ContainerStatusResources>) -> ResourceList| {
        let mut view = pod.clone();
        for c in std::sync::Arc::make_mut(&mut view.containers).iter_mut().chain(std::sync::Arc::make_mut(&mut view.init_containers).iter_mut()) {
            c.requests = pick(c, status(c));
        }
        aggregate(&view, |c| &c.requests)
    };
    let fallback = |spec: &ResourceList| if infeasible { none.clone() } else { spec.clone() };
    let allocated = total(&|c, st| match st {
        Some(st) if st.has_allocated => st.allocated.clone(),
        _ => fallback(&c.requests),
    });
    let actual = total(&|c, st| match st {
        Some(st) if st.has_requests => st.requests.clone(),
        Some(st) if st.has_allocated => st.allocated.clone(),
        _ => fallback(&c.requests),
    });
    let actual_limits = total(&|c, st| match st {
        Some(st) if st.has_limits => st.limits.clone(),
        _ => fallback(&c.limits),
    });
    let mut requests = if infeasible { ResourceList::new() } else { aggregate(pod, |c| &c.requests) };
    max_into(&mut requests, &actual);
    max_into(&mut requests, &allocated);
    let mut limits = if infeasible { ResourceList::new() } else { aggregate(pod, |c| &c.limits) };
    max_into(&mut limits, &actual_limits);
    if limits_all_or_nothing {
        crate::pod_totals::omit_partial_cpu_memory(pod, &mut limits);
    }
    // Pod-level resources and overhead, on the totals as on a pod's spec.
    (requests_of_pod(pod, requests), limits_of_pod(pod, limits))
}

fn pod_missing(pod: &Pod, restricted: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let mut missing: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    if pod_level_resources_set(pod) {
        return missing;
    }
    let required: Vec<&str> = restricted.iter().copied().filter(|r| POD_VALIDATION_SET.contains(r)).collect();
    if required.is_empty() {
        return missing;
    }
    for c in pod.containers.iter().chain(pod.init_containers.iter()) {
        for r in &required {
            if !container_charges(c, r) {
                missing.entry(r.to_string()).or_default().insert(c.name.clone());
            }
        }
    }
    missing
}

/// Whether a container's own usage (`compute_usage_into` its requests and limits) has the
/// validation resource `r`: `cpu` and `requests.cpu` come from a request, `limits.cpu` from
/// a limit.
fn container_charges(c: &crate::objects::Container, r: &str) -> bool {
    match r.strip_prefix("limits.") {
        Some(base) => c.limits.contains_key(base),
        None => c.requests.contains_key(r.strip_prefix("requests.").unwrap_or(r)),
    }
}

/// The must-specify text of the release of `rules`: containers named per resource since
/// 1.24, a bare list of resources before (`must specify limits.cpu,requests.memory`).
pub fn must_specify_message_for(missing: &BTreeMap<String, BTreeSet<String>>, rules: &Rules) -> String {
    if rules.must_specify_names_containers {
        must_specify_message(missing)
    } else {
        format!("must specify {}", missing.keys().cloned().collect::<Vec<_>>().join(","))
    }
}

/// The server's must-specify text: `limits.cpu for: app,init; requests.memory for: app`.
pub fn must_specify_message(missing: &BTreeMap<String, BTreeSet<String>>) -> String {
    let parts: Vec<String> = missing.iter().map(|(r, names)| format!("{r} for: {}", names.iter().cloned().collect::<Vec<_>>().join(","))).collect();
    format!("must specify {}", parts.join("; "))
}

/// The storage class a claim is charged to: the beta annotation if present (even empty),
/// else `spec.storageClassName`.
pub fn pvc_class(pvc: &Pvc, annotations: &BTreeMap<String, String>) -> String {
    pvc.class(annotations).unwrap_or_default().to_string()
}

/// PVC usage: counts, `requests.storage` (whole bytes, or allocated if larger) and the
/// per-storage-class names.
pub fn pvc_usage(pvc: &Pvc, annotations: &BTreeMap<String, String>) -> ResourceList {
    let one = || Quantity::from_int(1, Format::DecimalSI);
    let mut out = ResourceList::new();
    out.insert("persistentvolumeclaims".into(), one());
    out.insert("count/persistentvolumeclaims".into(), one());
    let class = pvc_class(pvc, annotations);
    if !class.is_empty() {
        out.insert(format!("{class}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"), one());
    }
    let mut storage = pvc.storage_request.as_ref().map(|q| q.round_up(0));
    if let Some(alloc) = &pvc.allocated_storage {
        let alloc = alloc.round_up(0);
        if storage.as_ref().is_none_or(|s| alloc > *s) {
            storage = Some(alloc);
        }
    }
    if let Some(s) = storage {
        if !class.is_empty() {
            out.insert(format!("{class}{STORAGE_CLASS_SUFFIX}requests.storage"), s.clone());
        }
        out.insert("requests.storage".into(), s);
    }
    out
}

/// Service usage: counts, load balancers, and node ports.
pub fn service_usage(svc: &Service) -> ResourceList {
    let n = |v: i64| Quantity::from_int(v, Format::DecimalSI);
    let mut out = ResourceList::new();
    out.insert("services".into(), n(1));
    out.insert("count/services".into(), n(1));
    out.insert("services.loadbalancers".into(), n(0));
    out.insert("services.nodeports".into(), n(0));
    match svc.type_.as_str() {
        "NodePort" => {
            out.insert("services.nodeports".into(), n(svc.node_ports.len() as i64));
        }
        "LoadBalancer" => {
            out.insert("services.loadbalancers".into(), n(1));
            let ports = if svc.allocate_load_balancer_node_ports == Some(false) {
                svc.node_ports.iter().filter(|p| p.is_some_and(|p| p != 0)).count()
            } else {
                svc.node_ports.len()
            };
            out.insert("services.nodeports".into(), n(ports as i64));
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::Container;
    use crate::resources;

    fn rl(pairs: &[(&str, &str)]) -> ResourceList {
        pairs.iter().map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap())).collect()
    }

    fn c(name: &str, req: &[(&str, &str)], lim: &[(&str, &str)]) -> Container {
        Container { name: name.into(), requests: rl(req), limits: rl(lim), ..Container::default() }
    }

    fn sidecar(name: &str, req: &[(&str, &str)]) -> Container {
        Container { sidecar: true, ..c(name, req, &[]) }
    }

    #[test]
    fn pod_requests_follow_sum_max_sidecar_and_overhead_rules() {
        let cases: Vec<(&str, Pod, &str)> = vec![
            (
                "containers are summed",
                Pod { containers: vec![c("a", &[("cpu", "500m")], &[]), c("b", &[("cpu", "700m")], &[])].into(), ..Pod::default() },
                "cpu=1200m",
            ),
            (
                "init container max beats the sum",
                Pod { containers: vec![c("a", &[("cpu", "500m")], &[])].into(), init_containers: vec![c("i", &[("cpu", "2")], &[])].into(), ..Pod::default() },
                "cpu=2",
            ),
            (
                "sum beats a smaller init container",
                Pod {
                    containers: vec![c("a", &[("cpu", "500m")], &[])].into(),
                    init_containers: vec![c("i", &[("cpu", "100m")], &[])].into(),
                    ..Pod::default()
                },
                "cpu=500m",
            ),
            (
                "sidecars add to the sum and to later init phases",
                Pod {
                    containers: vec![c("a", &[("cpu", "500m")], &[])].into(),
                    init_containers: vec![sidecar("s", &[("cpu", "300m")]), c("i", &[("cpu", "1")], &[])].into(),
                    ..Pod::default()
                },
                "cpu=1300m",
            ),
            (
                "an init container before the sidecar does not see it",
                Pod {
                    containers: vec![c("a", &[("cpu", "500m")], &[])].into(),
                    init_containers: vec![c("i", &[("cpu", "1")], &[]), sidecar("s", &[("cpu", "300m")])].into(),
                    ..Pod::default()
                },
                "cpu=1",
            ),
            (
                "resources only in init containers are charged",
                Pod { containers: vec![c("a", &[], &[])].into(), init_containers: vec![c("i", &[("memory", "1Gi")], &[])].into(), ..Pod::default() },
                "memory=1Gi",
            ),
            (
                "overhead is added to requests",
                Pod { containers: vec![c("a", &[("cpu", "1")], &[])].into(), overhead: rl(&[("cpu", "250m"), ("memory", "120Mi")]), ..Pod::default() },
                "cpu=1250m,memory=120Mi",
            ),
            (
                "pod-level requests replace the aggregate",
                Pod {
                    containers: vec![c("a", &[("cpu", "1"), ("ephemeral-storage", "1Gi")], &[])].into(),
                    pod_requests: rl(&[("cpu", "3")]),
                    ..Pod::default()
                },
                "cpu=3,ephemeral-storage=1Gi",
            ),
        ];
        for (name, pod, want) in cases {
            assert_eq!(resources::pretty_print(&pod_requests(&pod)), want, "{name}");
        }
    }

    #[test]
    fn overhead_is_added_only_to_existing_nonzero_limits() {
        let pod = Pod { containers: vec![c("a", &[], &[("cpu", "1")])].into(), overhead: rl(&[("cpu", "250m"), ("memory", "120Mi")]), ..Pod::default() };
        assert_eq!(resources::pretty_print(&pod_limits(&pod, &PodSums::of(&Rules::current()))), "cpu=1250m");
    }

    #[test]
    fn pod_usage_names() {
        let pod = Pod {
            containers: vec![c(
                "a",
                &[("cpu", "1"), ("memory", "1Gi"), ("ephemeral-storage", "2Gi"), ("hugepages-2Mi", "4Mi"), ("nvidia.com/gpu", "1")],
                &[("cpu", "2"), ("hugepages-2Mi", "4Mi"), ("nvidia.com/gpu", "1")],
            )]
            .into(),
            ..Pod::default()
        };
        assert_eq!(
            resources::pretty_print(&pod_usage(&pod)),
            "count/pods=1,cpu=1,ephemeral-storage=2Gi,hugepages-2Mi=4Mi,limits.cpu=2,memory=1Gi,pods=1,requests.cpu=1,requests.ephemeral-storage=2Gi,requests.hugepages-2Mi=4Mi,requests.memory=1Gi,requests.nvidia.com/gpu=1"
        );
        let done = Pod { phase: Some("Succeeded".into()), ..pod };
        assert_eq!(resources::pretty_print(&pod_usage(&done)), "count/pods=1");
    }

    #[test]
    fn pod_evaluator_tracks_only_its_names() {
        let names: Vec<String> = [
            "pods",
            "count/pods",
            "requests.cpu",
            "limits.memory",
            "hugepages-1Gi",
            "requests.hugepages-2Mi",
            "requests.nvidia.com/gpu",
            "nvidia.com/gpu",
            "limits.nvidia.com/gpu",
            "requests.storage",
            "services",
            "count/secrets",
            "requests.example.kubernetes.io/x",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            Evaluator::POD.matching_resources(&names).into_vec(),
            vec!["pods", "count/pods", "requests.cpu", "limits.memory", "hugepages-1Gi", "requests.hugepages-2Mi", "requests.nvidia.com/gpu"]
        );
    }

    #[test]
    fn must_specify_names_containers_per_resource() {
        let pod = Pod {
            containers: vec![c("app", &[("cpu", "1")], &[]), c("web", &[], &[("cpu", "1"), ("memory", "1Gi")])].into(),
            init_containers: vec![c("init", &[], &[])].into(),
            ..Pod::default()
        };
        let restricted = ["requests.cpu", "limits.memory", "pods", "requests.ephemeral-storage"];
        // No API defaulting here: web's cpu limit is not copied into its requests.
        let missing = pod_missing(&pod, &restricted);
        assert_eq!(must_specify_message(&missing), "must specify limits.memory for: app,init; requests.cpu for: init,web");
        let mut pod_level = pod.clone();
        pod_level.pod_limits = rl(&[("cpu", "2")]);
        assert!(pod_missing(&pod_level, &restricted).is_empty());
    }

    #[test]
    fn pvc_usage_by_class() {
        let annotated: BTreeMap<String, String> = [("volume.beta.kubernetes.io/storage-class".to_string(), "bronze".to_string())].into();
        let cases = [
            (Pvc { storage_class_name: Some("gold".into()), storage_request: Some(Quantity::parse("10Gi").unwrap()), ..Pvc::default() }, BTreeMap::new(),
             "count/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/requests.storage=10Gi,persistentvolumeclaims=1,requests.storage=10Gi"),
            (Pvc { storage_class_name: Some("".into()), storage_request: Some(Quantity::parse("100m").unwrap()), ..Pvc::default() }, BTreeMap::new(),
             "count/persistentvolumeclaims=1,persistentvolumeclaims=1,requests.storage=1"),
            (Pvc { storage_class_name: Some("gold".into()), ..Pvc::default() }, annotated,
             "bronze.storageclass.storage.k8s.io/persistentvolumeclaims=1,count/persistentvolumeclaims=1,persistentvolumeclaims=1"),
            (Pvc { storage_request: Some(Quantity::parse("1Gi").unwrap()), allocated_storage: Some(Quantity::parse("2Gi").unwrap()), ..Pvc::default() }, BTreeMap::new(),
             "count/persistentvolumeclaims=1,persistentvolumeclaims=1,requests.storage=2Gi"),
        ];
        for (pvc, ann, want) in cases {
            assert_eq!(resources::pretty_print(&pvc_usage(&pvc, &ann)), want);
        }
    }

    #[test]
    fn service_usage_by_type() {
        let cases = [
            (
                Service { type_: "ClusterIP".into(), node_ports: vec![None, None], allocate_load_balancer_node_ports: None },
                "count/services=1,services=1,services.loadbalancers=0,services.nodeports=0",
            ),
            (
                Service { type_: "NodePort".into(), node_ports: vec![None, Some(30001)], allocate_load_balancer_node_ports: None },
                "count/services=1,services=1,services.loadbalancers=0,services.nodeports=2",
            ),
            (
                Service { type_: "LoadBalancer".into(), node_ports: vec![None], allocate_load_balancer_node_ports: None },
                "count/services=1,services=1,services.loadbalancers=1,services.nodeports=1",
            ),
            (
                Service { type_: "LoadBalancer".into(), node_ports: vec![None, Some(30002)], allocate_load_balancer_node_ports: Some(false) },
                "count/services=1,services=1,services.loadbalancers=1,services.nodeports=1",
            ),
        ];
        for (svc, want) in cases {
            assert_eq!(resources::pretty_print(&service_usage(&svc)), want, "{}", svc.type_);
        }
    }
}
