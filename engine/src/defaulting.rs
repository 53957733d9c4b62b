//! Step 3 of the pipeline: what the API server does to an object before quota admission sees
//! it. Each change is recorded as a sentence, so the explanation can say why a pod was charged
//! more than its manifest shows.
//!
//! - API defaulting: a container's limits are copied into its missing requests; pod-level
//!   limits into missing pod-level requests (quantities were already rounded up to milli when
//!   the object was decoded).
//! - LimitRanger: LimitRange `default` / `defaultRequest` fill missing container limits and
//!   requests (init containers included).
//! - Priority: an empty `priorityClassName` takes the global-default PriorityClass, if any;
//!   a name no PriorityClass has is refused.
//! - RuntimeClass: `spec.overhead` from the pod's RuntimeClass.
//! - DefaultStorageClass: a claim with no class at all gets the default StorageClass.
//!
//! ```
//! use kubectl_quota_engine::defaulting::default_pod_api;
//! use kubectl_quota_engine::objects::{Container, Pod};
//! use kubectl_quota_engine::quantity::Quantity;
//!
//! let mut pod = Pod { containers: vec![Container {
//!     name: "app".into(),
//!     limits: [("cpu".to_string(), Quantity::parse("1").unwrap())].into(),
//!     ..Container::default()
//! }], ..Pod::default() };
//! let notes = default_pod_api(&mut pod);
//! assert_eq!(pod.containers[0].requests["cpu"].to_string(), "1");
//! assert_eq!(notes, vec!["API defaulting: container app requests.cpu=1 copied from its limit"]);
//! ```

use std::collections::BTreeMap;

use crate::objects::{LimitRangeItem, Pod, Pvc, StorageClassInfo};
use crate::resources::ResourceList;
use crate::version::Rules;

/// Cluster objects the mutating plugins consult.
#[derive(Debug, Clone, Default)]
pub struct Mutators<'a> {
    /// LimitRanges of the object's namespace: (name, items).
    pub limit_ranges: Vec<(&'a str, &'a [LimitRangeItem])>,
    /// PriorityClasses by name: (globalDefault, value). `None` when unknown (not loaded).
    pub priority_classes: Option<&'a BTreeMap<String, (bool, i32)>>,
    /// RuntimeClass overheads by name.
    pub runtime_classes: Option<&'a BTreeMap<String, ResourceList>>,
    /// StorageClasses.
    pub storage_classes: Option<&'a [StorageClassInfo]>,
}

/// What the API server drops from a new pod because the release's feature gate for it is
/// off: restartable init containers before 1.29 become plain init containers, pod-level
/// resources before 1.34 disappear. Returns one sentence per change.
pub fn drop_disabled_fields(pod: &mut Pod, rules: &Rules) -> Vec<String> {
    let mut notes = Vec::new();
    if !rules.restartable_sidecars {
        for c in pod.init_containers.iter_mut().filter(|c| c.sidecar) {
            c.sidecar = false;
            notes.push(format!(
                "Kubernetes {}: init container {} restartPolicy: Always dropped (sidecars are on by default from 1.29): it runs, and is charged, as a plain init container",
                rules.version, c.name
            ));
        }
    }
    if !rules.pod_level_resources && (!pod.pod_requests.is_empty() || !pod.pod_limits.is_empty()) {
        pod.pod_requests.clear();
        pod.pod_limits.clear();
        notes.push(format!(
            "Kubernetes {}: pod-level spec.resources dropped (on by default from 1.34): only the containers' resources are charged",
            rules.version
        ));
    }
    if !rules.dra && !pod.resource_claim_templates.is_empty() {
        pod.resource_claim_templates.clear();
        notes.push(format!("Kubernetes {}: spec.resourceClaims dropped (DRA is on by default from 1.34): no ResourceClaim is created", rules.version));
    }
    notes
}

/// Validation of a pod update: before 1.33 a running pod's resources cannot change (no
/// in-place resize); the server's message.
pub fn validate_pod_update(old: &Pod, new: &Pod, name: &str, rules: &Rules) -> Result<(), String> {
    if rules.pod_resize || !crate::pod_totals::is_resize(old, new) {
        return Ok(());
    }
    let fields = if rules.pod_update_grace_period {
        "`spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
    } else {
        "`spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds` or `spec.tolerations` (only additions to existing tolerations)"
    };
    Err(format!("Pod {name:?} is invalid: spec: Forbidden: pod updates may not change fields other than {fields}"))
}

/// Pod-level requests the pod leaves out: overcommittable ones (`cpu`, `memory`) from the
/// containers' aggregate requests first, then any supported one from its pod-level limit.
fn default_pod_level_requests(pod: &mut Pod) -> Vec<String> {
    let mut notes = Vec::new();
    let requests = crate::pod_totals::aggregate(pod, |c| &c.requests);
    for k in ["cpu", "memory"] {
        if let (Some(v), false) = (requests.get(k), pod.pod_requests.contains_key(k)) {
            notes.push(format!("API defaulting: pod-level requests.{k}={v} from the containers' requests"));
            pod.pod_requests.insert(k.to_string(), v.clone());
        }
    }
    for (k, v) in pod.pod_limits.clone() {
        if crate::pod_totals::pod_level_supported(&k) && !pod.pod_requests.contains_key(&k) {
            notes.push(format!("API defaulting: pod-level requests.{k}={v} copied from the pod-level limit"));
            pod.pod_requests.insert(k, v);
        }
    }
    notes
}

/// 1.37's pod strategy (PodLevelResourcesFixDefaulting), on create after mutating admission
/// (LimitRanger's container defaults included): a pod that sets pod-level resources gets
/// what it leaves out completed from its containers' spec, in this order:
/// 1. a hugepages pod-level limit from the containers' aggregate limit, where the pod sets
///    neither a request nor a limit for it;
/// 2. pod-level `cpu` and `memory` requests from the containers' aggregate requests, then a
///    request from each pod-level limit still without one;
/// 3. a pod-level limit for a request without one, for a resource every container limits:
///    the larger of the request and the containers' aggregate limit.
///
/// Before 1.37 the API's defaulting ([`default_pod_api`]) does the pod-level part, only when
/// the pod sets pod-level limits.
pub fn default_pod_level_resources(pod: &mut Pod, rules: &Rules) -> Vec<String> {
    let mut notes = Vec::new();
    if !rules.pod_level_limits_defaulting || (pod.pod_requests.is_empty() && pod.pod_limits.is_empty()) {
        return notes;
    }
    let limits = crate::pod_totals::aggregate(pod, |c| &c.limits);
    for (k, v) in &limits {
        if k.starts_with("hugepages-") && !pod.pod_requests.contains_key(k) && !pod.pod_limits.contains_key(k) {
            notes.push(format!("API defaulting: pod-level limits.{k}={v} from the containers' limits"));
            pod.pod_limits.insert(k.clone(), v.clone());
        }
    }
    notes.extend(default_pod_level_requests(pod));
    for (k, request) in pod.pod_requests.clone() {
        if !crate::pod_totals::pod_level_supported(&k)
            || pod.pod_limits.contains_key(&k)
            || !pod.containers.iter().chain(&pod.init_containers).all(|c| c.limits.contains_key(&k))
        {
            continue;
        }
        let Some(limit) = limits.get(&k) else { continue };
        let v = if request > *limit {
            // Go assigns the request's value itself, not a copy of it.
            pod.pod_level_shared.push(k.clone());
            request
        } else {
            limit.clone()
        };
        notes.push(format!("API defaulting: pod-level limits.{k}={v}, the larger of the pod-level request and the containers' limits"));
        pod.pod_limits.insert(k, v);
    }
    notes
}

/// The warning the API server gives (1.35+) for a quota whose `requests.X` (or bare `X`)
/// exceeds its `limits.X`.
pub fn quota_request_limit_warnings(hard: &ResourceList) -> Vec<String> {
    let mut out = Vec::new();
    for (k, limit) in hard {
        let Some(base) = k.strip_prefix("limits.") else { continue };
        for req_name in [format!("requests.{base}"), base.to_string()] {
            if let Some(req) = hard.get(&req_name) {
                if req > limit {
                    out.push(format!("Warning: ResourceQuota {req_name} ({req}) should be less than {k} ({limit})"));
                }
            }
        }
    }
    out
}

/// PriorityClasses every cluster has.
pub const SYSTEM_PRIORITY_CLASSES: &[&str] = &["system-node-critical", "system-cluster-critical"];

/// `SetDefaults_Pod` of the release of `rules`: from 1.37 the pod-level part is left to the
/// pod strategy ([`default_pod_level_resources`]).
pub fn default_pod_api_for(pod: &mut Pod, rules: &Rules) -> Vec<String> {
    if rules.pod_level_limits_defaulting {
        default_container_requests(pod)
    } else {
        default_pod_api(pod)
    }
}

/// `SetDefaults_Pod` before 1.37: limits copied into missing requests, per container and init
/// container; pod-level limits into missing pod-level requests.
pub fn default_pod_api(pod: &mut Pod) -> Vec<String> {
    let mut notes = default_container_requests(pod);
    if !pod.pod_limits.is_empty() {
        notes.extend(default_pod_level_requests(pod));
    }
    notes
}

/// Notes about what defaulting did, one per container and resource, kept to the first
/// [`Bounded::KEPT`]: a pod of 100,000 containers gets one line for the rest, not 400,000
/// strings held while it is checked.
#[derive(Default)]
struct Bounded {
    kept: Vec<String>,
    more: usize,
}

impl Bounded {
    const KEPT: usize = 100;

    fn push(&mut self, note: impl FnOnce() -> String) {
        if self.kept.len() < Self::KEPT {
            self.kept.push(note());
        } else {
            self.more += 1;
        }
    }

    fn into_vec(mut self) -> Vec<String> {
        if self.more > 0 {
            self.kept.push(format!("... and {} more like these", self.more));
        }
        self.kept
    }
}

/// Each container's and init container's limits copied into its missing requests.
fn default_container_requests(pod: &mut Pod) -> Vec<String> {
    let mut notes = Bounded::default();
    for c in pod.containers.iter_mut().chain(pod.init_containers.iter_mut()) {
        for (k, v) in c.limits.clone() {
            if !c.requests.contains_key(&k) {
                notes.push(|| format!("API defaulting: container {} requests.{k}={v} copied from its limit", c.name));
                c.requests.insert(k, v);
            }
        }
    }
    notes.into_vec()
}

/// LimitRanger's defaults for every container and init container. Within one LimitRange the
/// Container items' defaults are gathered first, a later item's value replacing an earlier
/// one's; then each container gets those it lacks (a first LimitRange's stay).
pub fn apply_limit_ranges(pod: &mut Pod, limit_ranges: &[(&str, &[LimitRangeItem])]) -> Vec<String> {
    let mut notes = Bounded::default();
    for (lr_name, items) in limit_ranges {
        let (mut limits, mut requests) = (ResourceList::new(), ResourceList::new());
        for item in items.iter().filter(|i| i.type_ == "Container") {
            limits.extend(item.default.iter().map(|(k, v)| (k.clone(), v.clone())));
            requests.extend(item.default_request.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        for c in pod.containers.iter_mut().chain(pod.init_containers.iter_mut()) {
            for (k, v) in &limits {
                if !c.limits.contains_key(k) {
                    notes.push(|| format!("LimitRange {lr_name}: container {} limits.{k}={v} (default)", c.name));
                    c.limits.insert(k.clone(), v.clone());
                }
            }
            for (k, v) in &requests {
                if !c.requests.contains_key(k) {
                    notes.push(|| format!("LimitRange {lr_name}: container {} requests.{k}={v} (defaultRequest)", c.name));
                    c.requests.insert(k.clone(), v.clone());
                }
            }
        }
    }
    notes.into_vec()
}

/// The Priority plugin: fills an empty class from the global default, refuses unknown names.
/// Returns notes, or the refusal text.
pub fn apply_priority(pod: &mut Pod, classes: Option<&BTreeMap<String, (bool, i32)>>) -> Result<Vec<String>, String> {
    let Some(classes) = classes else {
        return Ok(vec![]);
    };
    if pod.priority_class_name.is_empty() {
        // When several classes claim to be the global default (a race the API allows), the
        // plugin takes the one with the lowest value.
        let default = classes.iter().filter(|(_, (g, _))| *g).min_by_key(|(_, (_, v))| *v).map(|(n, _)| n.clone());
        if let Some(name) = default {
            pod.priority_class_name = name.clone();
            return Ok(vec![format!("Priority: priorityClassName={name} (the global default PriorityClass)")]);
        }
        return Ok(vec![]);
    }
    if classes.contains_key(&pod.priority_class_name) || SYSTEM_PRIORITY_CLASSES.contains(&pod.priority_class_name.as_str()) {
        return Ok(vec![]);
    }
    Err(format!("no PriorityClass with name {} was found", pod.priority_class_name))
}

/// The RuntimeClass plugin: the pod's overhead from its RuntimeClass.
pub fn apply_runtime_class(pod: &mut Pod, classes: Option<&BTreeMap<String, ResourceList>>) -> Result<Vec<String>, String> {
    const UNDECLARED: &str = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead";
    let Some(name) = pod.runtime_class_name.clone() else {
        return if pod.overhead.is_empty() { Ok(vec![]) } else { Err(UNDECLARED.into()) };
    };
    let Some(classes) = classes else {
        return Ok(vec![]);
    };
    let Some(overhead) = classes.get(&name) else {
        return Err(format!("pod rejected: RuntimeClass \"{name}\" not found"));
    };
    if overhead.is_empty() {
        return if pod.overhead.is_empty() { Ok(vec![]) } else { Err(UNDECLARED.into()) };
    }
    if !pod.overhead.is_empty() && &pod.overhead != overhead {
        return Err("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead".into());
    }
    pod.overhead = overhead.clone();
    Ok(vec![format!("RuntimeClass {name}: overhead {}", crate::resources::pretty_print(overhead))])
}

/// DefaultStorageClass: a claim with neither the beta annotation nor `storageClassName` gets
/// the default class (the newest default wins; ties go to the first name).
pub fn apply_default_storage_class(pvc: &mut Pvc, annotations: &BTreeMap<String, String>, classes: Option<&[StorageClassInfo]>) -> Vec<String> {
    if pvc.storage_class_name.is_some() || annotations.contains_key("volume.beta.kubernetes.io/storage-class") {
        return vec![];
    }
    let Some(classes) = classes else { return vec![] };
    let mut defaults: Vec<&StorageClassInfo> = classes.iter().filter(|c| c.is_default).collect();
    // Newest creationTimestamp first (RFC 3339 strings sort by time), then name ascending.
    defaults.sort_by(|a, b| b.created.cmp(&a.created).then(a.name.cmp(&b.name)));
    match defaults.first() {
        Some(StorageClassInfo { name, .. }) => {
            pvc.storage_class_name = Some(name.clone());
            vec![format!("DefaultStorageClass: storageClassName={name}")]
        }
        None => vec![],
    }
}

/// A created pod's status is reset by the server (`PrepareForCreate`): a manifest's
/// `status.phase` or `status.qosClass` does not count.
pub fn clear_pod_status(pod: &mut Pod) {
    pod.phase = None;
    pod.status_qos_class = None;
}

/// A created claim's status is discarded by the server (`PrepareForCreate`).
pub fn clear_pvc_status(pvc: &mut Pvc) {
    pvc.allocated_storage = None;
    pvc.current_volume_attributes_class_name = None;
    pvc.target_volume_attributes_class_name = None;
}

/// Pod field validation that mutation can break: a request above its limit (e.g. a
/// LimitRange default limit below the container's request), and pod-level requests below the
/// containers' aggregate (e.g. after LimitRange default requests). The server answers 422 before
/// quota (`Pod "p" is invalid: ...`; from 1.34 the limit is named: `... cpu limit of 500m`).
pub fn validate_pod_requests(pod: &Pod, name: &str, rules: &Rules) -> Result<(), String> {
    let mut errors = Vec::new();
    let groups = [("spec.containers", &pod.containers), ("spec.initContainers", &pod.init_containers)];
    for (path, containers) in groups {
        for (i, c) in containers.iter().enumerate() {
            for (k, req) in &c.requests {
                if let Some(lim) = c.limits.get(k) {
                    if req > lim {
                        let of = if rules.request_limit_message_names_limit { format!(" of {lim}") } else { String::new() };
                        errors
                            .push(format!("{path}[{i}].resources.requests: Invalid value: {:?}: must be less than or equal to {k} limit{of}", req.to_string()));
                    }
                }
            }
        }
    }
    // Pod-level requests must cover what the containers ask for in all (containers and
    // sidecars summed, the largest init phase), after LimitRange defaults filled them in.
    if rules.pod_level_resources && !pod.pod_requests.is_empty() {
        for (k, containers) in crate::pod_totals::aggregate(pod, |c| &c.requests) {
            if let Some(at_pod) = pod.pod_requests.get(&k).filter(|p| containers > **p) {
                errors.push(format!(
                    "spec.resources.requests[{k}]: Invalid value: {:?}: must be greater than or equal to aggregate container requests of {containers}",
                    at_pod.to_string()
                ));
            }
        }
    }
    match errors.len() {
        0 => Ok(()),
        1 => Err(format!("Pod {name:?} is invalid: {}", errors[0])),
        _ => Err(format!("Pod {name:?} is invalid: [{}]", errors.join(", "))),
    }
}

/// Everything that happens to a pod being created before quota admission, in the server's
/// order.
pub fn mutate_pod(pod: &mut Pod, m: &Mutators, rules: &Rules) -> Result<Vec<String>, String> {
    clear_pod_status(pod);
    let mut notes = default_pod_api_for(pod, rules);
    notes.extend(apply_limit_ranges(pod, &m.limit_ranges));
    notes.extend(apply_priority(pod, m.priority_classes)?);
    notes.extend(apply_runtime_class(pod, m.runtime_classes)?);
    // The strategy's PrepareForCreate, after mutating admission.
    notes.extend(default_pod_level_resources(pod, rules));
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::Container;
    use crate::quantity::Quantity;

    fn rl(pairs: &[(&str, &str)]) -> ResourceList {
        pairs.iter().map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap())).collect()
    }

    fn pod_with(req: &[(&str, &str)], lim: &[(&str, &str)]) -> Pod {
        Pod { containers: vec![Container { name: "app".into(), requests: rl(req), limits: rl(lim), sidecar: false }], ..Pod::default() }
    }

    #[test]
    fn defaulting_notes_are_kept_to_a_hundred_with_a_count_of_the_rest() {
        let containers = (0..150).map(|i| Container { name: format!("c{i}"), requests: rl(&[]), limits: rl(&[]), sidecar: false }).collect();
        let mut pod = Pod { containers, ..Pod::default() };
        let item =
            LimitRangeItem { type_: "Container".into(), default: rl(&[("cpu", "1")]), default_request: rl(&[("cpu", "500m")]), ..LimitRangeItem::default() };
        let notes = apply_limit_ranges(&mut pod, &[("lr", std::slice::from_ref(&item))]);
        assert_eq!(notes.len(), 101);
        assert_eq!(notes[0], "LimitRange lr: container c0 limits.cpu=1 (default)");
        assert_eq!(notes[100], "... and 200 more like these");
        // Every container is defaulted all the same.
        assert!(pod.containers.iter().all(|c| c.limits.len() == 1 && c.requests.len() == 1));
    }

    #[test]
    fn explicit_requests_are_never_overwritten() {
        let mut p = pod_with(&[("cpu", "0")], &[("cpu", "1"), ("memory", "1Gi")]);
        default_pod_api(&mut p);
        assert_eq!(crate::resources::pretty_print(&p.containers[0].requests), "cpu=0,memory=1Gi");
    }

    #[test]
    fn limit_range_fills_only_missing_values() {
        let item = LimitRangeItem {
            type_: "Container".into(),
            default: rl(&[("cpu", "500m")]),
            default_request: rl(&[("cpu", "100m"), ("memory", "64Mi")]),
            ..LimitRangeItem::default()
        };
        let items = [item];
        let cases = [
            (pod_with(&[], &[]), "cpu=100m,memory=64Mi", "cpu=500m"),
            (pod_with(&[("cpu", "200m")], &[]), "cpu=200m,memory=64Mi", "cpu=500m"),
            (pod_with(&[], &[("cpu", "2")]), "cpu=2,memory=64Mi", "cpu=2"),
        ];
        for (mut p, req, lim) in cases {
            default_pod_api(&mut p);
            apply_limit_ranges(&mut p, &[("lr", &items)]);
            assert_eq!(crate::resources::pretty_print(&p.containers[0].requests), req);
            assert_eq!(crate::resources::pretty_print(&p.containers[0].limits), lim);
        }
    }

    #[test]
    fn priority_defaults_and_refusals() {
        let classes: BTreeMap<String, (bool, i32)> =
            [("low".to_string(), (false, 1)), ("std".to_string(), (true, 10)), ("top".to_string(), (true, 100))].into();
        let mut p = Pod::default();
        apply_priority(&mut p, Some(&classes)).unwrap();
        assert_eq!(p.priority_class_name, "std");
        let mut p = Pod { priority_class_name: "nope".into(), ..Pod::default() };
        assert_eq!(apply_priority(&mut p, Some(&classes)).unwrap_err(), "no PriorityClass with name nope was found");
        let mut p = Pod { priority_class_name: "system-node-critical".into(), ..Pod::default() };
        assert!(apply_priority(&mut p, Some(&classes)).is_ok());
        let no_default: BTreeMap<String, (bool, i32)> = [("low".to_string(), (false, 1))].into();
        let mut p = Pod::default();
        apply_priority(&mut p, Some(&no_default)).unwrap();
        assert_eq!(p.priority_class_name, "");
    }

    #[test]
    fn default_storage_class_only_for_claims_without_any_class() {
        let class = |name: &str, is_default: bool, created: Option<&str>| StorageClassInfo {
            name: name.to_string(),
            is_default,
            created: created.map(str::to_string),
            allow_volume_expansion: false,
        };
        let classes = vec![class("old", true, Some("2020-01-01T00:00:00Z")), class("new", true, Some("2024-01-01T00:00:00Z")), class("gold", false, None)];
        let none = BTreeMap::new();
        let mut pvc = Pvc::default();
        apply_default_storage_class(&mut pvc, &none, Some(&classes));
        assert_eq!(pvc.storage_class_name.as_deref(), Some("new"));
        let mut explicit_empty = Pvc { storage_class_name: Some(String::new()), ..Pvc::default() };
        apply_default_storage_class(&mut explicit_empty, &none, Some(&classes));
        assert_eq!(explicit_empty.storage_class_name.as_deref(), Some(""));
        let annotated: BTreeMap<String, String> = [("volume.beta.kubernetes.io/storage-class".to_string(), String::new())].into();
        let mut pvc = Pvc::default();
        apply_default_storage_class(&mut pvc, &annotated, Some(&classes));
        assert_eq!(pvc.storage_class_name, None);
    }

    #[test]
    fn requests_above_limits_are_invalid() {
        let ok = pod_with(&[("cpu", "1")], &[("cpu", "1")]);
        let v120 = Rules::for_version(crate::version::KubeVersion::new(1, 20));
        assert!(validate_pod_requests(&ok, "p", &v120).is_ok());
        let bad = pod_with(&[("cpu", "2"), ("memory", "1Gi")], &[("cpu", "500m"), ("memory", "2Gi")]);
        assert_eq!(
            validate_pod_requests(&bad, "p", &v120).unwrap_err(),
            "Pod \"p\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit"
        );
    }

    #[test]
    fn runtime_class_sets_overhead() {
        let classes: BTreeMap<String, ResourceList> = [("kata".to_string(), rl(&[("cpu", "250m")]))].into();
        let mut p = Pod { runtime_class_name: Some("kata".into()), ..Pod::default() };
        apply_runtime_class(&mut p, Some(&classes)).unwrap();
        assert_eq!(crate::resources::pretty_print(&p.overhead), "cpu=250m");
        let mut p = Pod { runtime_class_name: Some("gvisor".into()), ..Pod::default() };
        assert!(apply_runtime_class(&mut p, Some(&classes)).is_err());
        let mut p = Pod { overhead: rl(&[("cpu", "250m")]), ..Pod::default() };
        assert_eq!(
            apply_runtime_class(&mut p, Some(&classes)).unwrap_err(),
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
        );
    }
}
