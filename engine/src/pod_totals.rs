//! A pod's totals as the scheduler and quota add them up (step 2½, below defaulting and
//! usage, which both need them): containers, sidecars and init phases; pod-level resources
//! replacing what they set; overhead; and whether an update resizes the pod.

use crate::objects::{Container, Pod};
use crate::quantity::Quantity;
use crate::resources::{self, ResourceList};

/// How a release adds a pod up for quota: the switches of `Rules` the sums read
/// (`PodSums::of`, beside the evaluators).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodSums {
    /// 1.35: implicit DRA extended resources are charged (`requests.deviceclass...`).
    pub dra_extended_resources: bool,
    /// 1.33: a running pod's `status.resources` and allocated resources count (in-place resize).
    pub status_resources: bool,
    /// 1.37: such a pod is charged the largest of three totals, not per container the largest.
    pub max_of_sums: bool,
    /// 1.38: the containers' cpu and memory limits count only when every init and regular
    /// container sets a non-zero one ([`omit_partial_cpu_memory`]).
    pub limits_all_or_nothing: bool,
    /// 1.34 to 1.37: a pod-level value Go holds as `inf.Dec` gains the overhead in place
    /// ([`within_one_usage`]).
    pub overhead_aliased: bool,
}

/// Per-resource max: `list[k] = max(list[k], v)`.
pub(crate) fn max_into(list: &mut ResourceList, other: &ResourceList) {
    for (k, v) in other {
        match list.get_mut(k) {
            Some(cur) if &*cur >= v => {}
            Some(cur) => *cur = v.clone(),
            None => {
                list.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Container requests (or limits) aggregated the way the scheduler and quota do: regular
/// containers and sidecars summed; each init container's phase is itself plus the sidecars
/// started before it; the pod needs the max of the sum and every init phase.
pub fn aggregate(pod: &Pod, pick: impl Fn(&Container) -> &ResourceList) -> ResourceList {
    let mut sum = ResourceList::new();
    for c in pod.containers.iter() {
        resources::add_into(&mut sum, pick(c));
    }
    let mut sidecars = ResourceList::new();
    let mut init_max = ResourceList::new();
    for c in pod.init_containers.iter() {
        if c.sidecar {
            resources::add_into(&mut sum, pick(c));
            resources::add_into(&mut sidecars, pick(c));
            max_into(&mut init_max, &sidecars);
        } else if sidecars.is_empty() {
            max_into(&mut init_max, pick(c));
        } else {
            max_into(&mut init_max, &resources::add(pick(c), &sidecars));
        }
    }
    max_into(&mut sum, &init_max);
    sum
}

/// Whether pod-level resources may set `k` (cpu, memory and hugepages).
pub(crate) fn pod_level_supported(k: &str) -> bool {
    k == "cpu" || k == "memory" || k.starts_with("hugepages-")
}

/// Whether pod-level resources (`spec.resources`) are set for a supported resource.
pub fn pod_level_resources_set(pod: &Pod) -> bool {
    pod.pod_requests.keys().chain(pod.pod_limits.keys()).any(|k| pod_level_supported(k))
}

/// `PodRequests`: aggregate container requests, overridden by pod-level requests, plus overhead.
pub fn pod_requests(pod: &Pod) -> ResourceList {
    requests_of_pod(pod, aggregate(pod, |c| &c.requests))
}

/// The pod's requests from its containers' total `reqs`: pod-level requests replace what they
/// set, and overhead is added.
pub(crate) fn requests_of_pod(pod: &Pod, mut reqs: ResourceList) -> ResourceList {
    if pod_level_resources_set(pod) {
        for (k, v) in pod.pod_requests.iter().filter(|(k, _)| pod_level_supported(k)) {
            reqs.insert(k.clone(), v.clone());
        }
    }
    resources::add_into(&mut reqs, &pod.overhead);
    reqs
}

/// `PodLimits`: aggregate container limits ([`aggregate_limits`]), overridden by pod-level
/// limits; overhead is added only to limits that exist and are non-zero.
pub fn pod_limits(pod: &Pod, sums: &PodSums) -> ResourceList {
    limits_of_pod(pod, aggregate_limits(pod, sums.limits_all_or_nothing))
}

/// The containers' limits aggregated as [`aggregate`] does; with `all_or_nothing` (1.38),
/// without cpu and memory unless every container sets them ([`omit_partial_cpu_memory`]).
pub(crate) fn aggregate_limits(pod: &Pod, all_or_nothing: bool) -> ResourceList {
    let mut limits = aggregate(pod, |c| &c.limits);
    if all_or_nothing {
        omit_partial_cpu_memory(pod, &mut limits);
    }
    limits
}

/// From 1.38 a pod's cpu (or memory) limit is left out of the containers' total when some
/// init or regular container sets none, or sets it to zero: the kubelet runs that container
/// unlimited, so a partial sum would understate the pod. Ephemeral containers are not looked
/// at; the other resources (hugepages, extended resources) still add up, a missing limit
/// counting as zero. The decision reads the spec even where `limits` came from the status.
pub(crate) fn omit_partial_cpu_memory(pod: &Pod, limits: &mut ResourceList) {
    for name in ["cpu", "memory"] {
        let unlimited = |c: &Container| c.limits.get(name).is_none_or(Quantity::is_zero);
        if limits.contains_key(name) && pod.init_containers.iter().chain(pod.containers.iter()).any(unlimited) {
            limits.remove(name);
        }
    }
}

/// The pod's limits from its containers' total `limits`: pod-level limits replace what they
/// set, and overhead is added to limits that exist and are non-zero.
pub(crate) fn limits_of_pod(pod: &Pod, mut limits: ResourceList) -> ResourceList {
    if pod_level_resources_set(pod) {
        for (k, v) in pod.pod_limits.iter().filter(|(k, _)| pod_level_supported(k)) {
            limits.insert(k.clone(), v.clone());
        }
    }
    for (k, o) in &pod.overhead {
        if let Some(l) = limits.get(k) {
            if !l.is_zero() {
                let sum = l.add(o);
                limits.insert(k.clone(), sum);
            }
        }
    }
    limits
}

// Upstream's `PodRequests` and `PodLimits` copy a pod-level request or limit into their
// result without a deep copy, then add the overhead to it in place. For a value Go holds as an
// `inf.Dec` (`4.5Gi`, or a sum that had one), that adds the overhead to the pod's own spec, and
// what reads the value later sees it added again. Two cases follow. Within one evaluation
// (`PodUsageFunc` calls both), a pod-level limit that defaulting set to the request itself
// (`Pod::pod_level_shared`) gets the overhead twice, and so does the request. Across
// evaluations, ResourceQuota's `CheckRequest` evaluates a pod twice when the admission
// configuration limits pods (`limitedResources`): the charged usage is the second's. Upstream
// 1.37.2's code does this (tests/oracle.rs finds it), so the servers built from it do too.

/// The pod-level values Go holds as `inf.Dec` that gain an overhead in place: for each
/// overhead resource, (name, new request, new limit). `evaluated`: as a whole evaluation leaves
/// them; else as its sums read a shared value, one overhead in, before the plain sums add
/// theirs.
fn in_place(pod: &Pod, evaluated: bool) -> Vec<(String, Option<Quantity>, Option<Quantity>)> {
    if pod.overhead.is_empty() || !pod_level_resources_set(pod) {
        return vec![];
    }
    let mut out = Vec::new();
    for (k, o) in pod.overhead.iter().filter(|(k, _)| pod_level_supported(k)) {
        let request = pod.pod_requests.get(k).filter(|v| v.is_go_dec());
        if pod.pod_level_shared.contains(k) {
            // One value: PodRequests adds the overhead, then PodLimits adds it again (the
            // value is not zero any more), and both results read it at the end.
            if let Some(v) = request {
                let v = if evaluated { v.add(o).add(o) } else { v.add(o) };
                out.push((k.clone(), Some(v.clone()), Some(v)));
            }
        } else if evaluated {
            // PodLimits adds overhead only to a limit that is there and not zero.
            let limit = pod.pod_limits.get(k).filter(|v| v.is_go_dec() && !v.is_zero());
            if request.is_some() || limit.is_some() {
                out.push((k.clone(), request.map(|v| v.add(o)), limit.map(|v| v.add(o))));
            }
        }
    }
    out
}

/// `pod` with the values [`in_place`] gives; `None` when there are none.
fn with_values(pod: &Pod, values: Vec<(String, Option<Quantity>, Option<Quantity>)>) -> Option<Pod> {
    if values.is_empty() {
        return None;
    }
    let mut p = pod.clone();
    for (k, request, limit) in values {
        if let Some(v) = request {
            p.pod_requests.insert(k.clone(), v);
        }
        if let Some(v) = limit {
            p.pod_limits.insert(k, v);
        }
    }
    Some(p)
}

/// The pod as one evaluation's sums read it, for a shared pod-level value held as `inf.Dec`:
/// request and limit, each already holding one overhead that the plain sums then add again.
/// `None` when nothing is shared so, and from 1.38, where a `Quantity` is a value and nothing
/// is ever shared (`aliased`: [`PodSums::overhead_aliased`]).
pub fn within_one_usage(pod: &Pod, aliased: bool) -> Option<Pod> {
    with_values(pod, if aliased { in_place(pod, false) } else { vec![] })
}

/// The pod as an evaluation leaves it: its `inf.Dec` pod-level values with the overhead added
/// in place. `None` when an evaluation changes nothing (always, from 1.38).
pub fn after_one_usage(pod: &Pod, aliased: bool) -> Option<Pod> {
    with_values(pod, if aliased { in_place(pod, true) } else { vec![] })
}

/// Whether an update of a pod changes its containers' resources (an in-place resize).
pub fn is_resize(old: &Pod, new: &Pod) -> bool {
    let res = |p: &Pod| -> Vec<(String, ResourceList, ResourceList)> {
        p.containers.iter().chain(p.init_containers.iter()).map(|c| (c.name.clone(), c.requests.clone(), c.limits.clone())).collect()
    };
    res(old) != res(new) || old.pod_requests != new.pod_requests || old.pod_limits != new.pod_limits
}
