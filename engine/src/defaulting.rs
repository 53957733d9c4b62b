//! What the API server itself does to an object around the admission chain (the registry's
//! defaulting and its strategy, not an admission plugin). Each change is recorded as a
//! sentence, so the explanation can say why a pod was charged more than its manifest shows.
//!
//! - Before the chain ([`as_decoded`]): API defaulting (a container's limits are copied into
//!   its missing requests; before 1.37 pod-level limits into missing pod-level requests), the
//!   fields the release's feature gates drop, and the status a create discards.
//! - After the mutating plugins ([`prepare_for_create`]): 1.37's pod strategy completes
//!   pod-level resources from the containers.
//! - On an update ([`prepare_for_update`]): the stored status is carried along.
//!
//! The admission plugins' own changes (LimitRanger, Priority, DefaultStorageClass,
//! RuntimeClass) are in [`crate::admission`].
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
//! }].into(), ..Pod::default() };
//! let notes = default_pod_api(&mut pod);
//! assert_eq!(pod.containers[0].requests["cpu"].to_string(), "1");
//! assert_eq!(notes, vec!["API defaulting: container app requests.cpu=1 copied from its limit"]);
//! ```

use crate::objects::{Body, Object, Pod, Pvc};
use crate::resources::ResourceList;
use crate::version::Rules;

/// A created object as the server has it before the admission chain: API defaulting, the
/// fields the release's gates drop, the status a create discards. Returns one sentence per
/// change.
pub fn as_decoded(obj: &mut Object, rules: &Rules) -> Vec<String> {
    match &mut obj.body {
        Body::Pod(p) => {
            let mut notes = drop_disabled_fields(p, rules);
            clear_pod_status(p);
            notes.extend(default_pod_api_for(p, rules));
            notes
        }
        Body::Service(s) if !rules.service_lb_node_port_control => {
            // The gate is off: the server drops the field.
            s.allocate_load_balancer_node_ports = None;
            vec![]
        }
        Body::PersistentVolumeClaim(p) => {
            clear_pvc_status(p);
            vec![]
        }
        _ => vec![],
    }
}

/// The strategy's `PrepareForCreate`, after the mutating plugins: 1.37 completes a pod's
/// pod-level resources ([`default_pod_level_resources`]).
pub fn prepare_for_create(obj: &mut Object, rules: &Rules) -> Vec<String> {
    match &mut obj.body {
        Body::Pod(p) => default_pod_level_resources(p, rules),
        _ => vec![],
    }
}

/// An update of a pod carries the stored status along (what the kubelet reported).
pub fn prepare_for_update(obj: &mut Object, old: &Object) {
    if let (Body::Pod(new), Body::Pod(prev)) = (&mut obj.body, &old.body) {
        new.container_statuses = prev.container_statuses.clone();
        new.resize_infeasible = prev.resize_infeasible;
        new.phase = prev.phase.clone();
    }
}

/// What the API server drops from a new pod because the release's feature gate for it is
/// off: restartable init containers before 1.29 become plain init containers, pod-level
/// resources before 1.34 disappear. Returns one sentence per change.
pub fn drop_disabled_fields(pod: &mut Pod, rules: &Rules) -> Vec<String> {
    let mut notes = Vec::new();
    if !rules.restartable_sidecars {
        for c in crate::objects::changing(&mut pod.init_containers, |c| c.sidecar).iter_mut().filter(|c| c.sidecar) {
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
    if !rules.ephemeral_containers && !pod.ephemeral_containers.is_empty() {
        pod.ephemeral_containers.clear();
        notes.push(format!("Kubernetes {}: spec.ephemeralContainers dropped (on by default from 1.23)", rules.version));
    }
    if !rules.dra && !pod.resource_claim_templates.is_empty() {
        pod.resource_claim_templates.clear();
        notes.push(format!("Kubernetes {}: spec.resourceClaims dropped (DRA is on by default from 1.34): no ResourceClaim is created", rules.version));
    }
    notes
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
    let limits = crate::pod_totals::aggregate_limits(pod, rules.pod_limits_all_or_nothing);
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
            || !pod.containers.iter().chain(pod.init_containers.iter()).all(|c| c.limits.contains_key(&k))
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
pub(crate) struct Bounded {
    kept: Vec<String>,
    more: usize,
}

impl Bounded {
    const KEPT: usize = 100;

    pub(crate) fn push(&mut self, note: impl FnOnce() -> String) {
        if self.kept.len() < Self::KEPT {
            self.kept.push(note());
        } else {
            self.more += 1;
        }
    }

    pub(crate) fn into_vec(mut self) -> Vec<String> {
        if self.more > 0 {
            self.kept.push(format!("... and {} more like these", self.more));
        }
        self.kept
    }
}

/// Each container's and init container's limits copied into its missing requests.
fn default_container_requests(pod: &mut Pod) -> Vec<String> {
    let mut notes = Bounded::default();
    // The containers are changed (and so copied, when shared) only when some one lacks a request.
    let lacks = |c: &crate::objects::Container| c.limits.keys().any(|k| !c.requests.contains_key(k));
    let containers = crate::objects::changing(&mut pod.containers, lacks);
    for c in containers.iter_mut().chain(crate::objects::changing(&mut pod.init_containers, lacks)) {
        for (k, v) in c.limits.clone() {
            if !c.requests.contains_key(&k) {
                notes.push(|| format!("API defaulting: container {} requests.{k}={v} copied from its limit", c.name));
                c.requests.insert(k, v);
            }
        }
    }
    notes.into_vec()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::testing::pod_with;

    #[test]
    fn explicit_requests_are_never_overwritten() {
        let mut p = pod_with(&[("cpu", "0")], &[("cpu", "1"), ("memory", "1Gi")]);
        default_pod_api(&mut p);
        assert_eq!(crate::resources::pretty_print(&p.containers[0].requests), "cpu=0,memory=1Gi");
    }
}
