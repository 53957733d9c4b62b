//! Step 2 of the pipeline: turn a JSON document into a typed object.
//!
//! Kubernetes objects are first decoded with k8s-openapi's types (so structural mistakes are
//! reported with their JSON path), then reduced to the plain models below, with every quantity
//! parsed exactly. Everything later in the pipeline works on these models only.
//!
//! ```
//! use kubectl_quota_engine::manifest::parse_str;
//! use kubectl_quota_engine::objects::{decode, Body};
//!
//! let doc = &parse_str("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: app\n    resources: {limits: {cpu: 500m}}\n").unwrap()[0];
//! let obj = decode(doc).unwrap();
//! assert_eq!(obj.type_info.group_resource(), "pods");
//! let Body::Pod(pod) = &obj.body else { panic!() };
//! assert_eq!(pod.containers[0].limits["cpu"].to_string(), "500m");
//!
//! let bad = &parse_str("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: app\n    resources: {requests: {cpu: lots}}\n").unwrap()[0];
//! let err = decode(bad).unwrap_err();
//! assert_eq!(err.field.as_deref(), Some("spec.containers[0].resources.requests.cpu"));
//! ```

pub mod autoscaler_types;
mod decode;
mod kinds;
mod labels;
pub mod policies;
mod scaling;
pub mod security;
pub mod webhooks;

pub use autoscaler_types::{autoscaler_type, read_autoscaler_types, AutoscalerType, Sets, AUTOSCALER_TYPES};
pub use decode::{container_lists_at, decode, decode_with_lists, keep_source, pod_spec, resource_list, ContainerList, ContainerLists, MANY_CONTAINERS};
pub use kinds::{guess_plural, plural_of_kind, type_info, KUEUE_GROUP};
pub use labels::LabelSelector;
pub use scaling::{Autoscaler, AutoscalerKind, ScaleTarget, Vpa, VpaContainerPolicy, VpaMode};

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use serde_json::Value;

use crate::manifest::Origin;
use crate::quantity::Quantity;
use crate::resources::ResourceList;

/// The API type of an object: what the API server calls its resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeInfo {
    pub api_version: String,
    pub kind: String,
    pub group: String,
    /// The plural resource name (`pods`, `deployments`).
    pub resource: String,
    pub namespaced: bool,
    /// True when the kind is unknown to us and `resource` is a guess from the kind.
    pub guessed: bool,
    /// True when the cluster's discovery says it does not serve this kind (a live check):
    /// kubectl finds no resource for it and sends nothing.
    pub unserved: bool,
}

impl TypeInfo {
    /// `pods` for the core group, `deployments.apps` otherwise (GroupResource.String()).
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

/// The metadata the evaluation needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// `metadata.name`, or for a `generateName` object the prefix followed by `<generated>`.
    pub name: String,
    pub generate_name: Option<String>,
    pub namespace: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub resource_version: Option<String>,
    pub creation_timestamp: Option<String>,
    /// The controller that owns the object (its ownerReference with `controller: true`), as
    /// (kind, name): a Deployment for its ReplicaSets.
    pub controller: Option<(String, String)>,
    /// The object is larger, as the JSON kubectl sends, than the API server reads
    /// ([`MAX_REQUEST_BODY_BYTES`]): it was not decoded further than its name, and the server
    /// refuses it before anything else looks at it.
    pub too_large: bool,
}

/// The most bytes of a request body the API server reads (`--max-request-body-bytes`, 3 MiB
/// by default); past it the answer is `Request entity too large: limit is 3145728` (413).
pub const MAX_REQUEST_BODY_BYTES: usize = crate::manifest::MAX_REQUEST_BODY_BYTES;

/// Whether the object, as compact JSON (what kubectl sends), with `more` bytes besides, is
/// larger than [`MAX_REQUEST_BODY_BYTES`]; the count stops as soon as it is.
fn larger_than_a_request(v: &Value, more: usize) -> bool {
    compact_len_from(v, more) > MAX_REQUEST_BODY_BYTES
}

/// The length of `v` as compact JSON, or any length past [`MAX_REQUEST_BODY_BYTES`] once it is
/// longer.
fn compact_len(v: &Value) -> usize {
    compact_len_from(v, 0)
}

/// `start` plus the length of `v` as compact JSON, counted no further than past
/// [`MAX_REQUEST_BODY_BYTES`].
fn compact_len_from(v: &Value, start: usize) -> usize {
    /// Counts bytes, failing once past the limit so that encoding stops there.
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            if self.0 > MAX_REQUEST_BODY_BYTES {
                return Err(std::io::Error::other("too large"));
            }
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    if start > MAX_REQUEST_BODY_BYTES {
        return start;
    }
    let mut n = Counter(start);
    // Past the limit, the count stops where the write failed: above the limit all the same.
    let _ = serde_json::to_writer(&mut n, v);
    n.0
}

/// A container's resources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Container {
    pub name: String,
    pub requests: ResourceList,
    pub limits: ResourceList,
    /// A restartable init container (`restartPolicy: Always`), i.e. a sidecar.
    pub sidecar: bool,
    /// `image` (PodSecurity evaluates a pod update only when an image changes).
    pub image: String,
    /// What PodSecurity reads of it; `None`: it sets none of it.
    pub security: Option<Box<security::ContainerSecurity>>,
}

/// The containers of `list` to change, when `needs` says some one must be: then the list is
/// copied if it is shared, else left alone (an empty slice). Templates share their container
/// lists with the pods made from them; most plugins change nothing.
pub fn changing(list: &mut std::sync::Arc<Vec<Container>>, needs: impl Fn(&Container) -> bool) -> &mut [Container] {
    if list.iter().any(needs) {
        std::sync::Arc::make_mut(list).as_mut_slice()
    } else {
        &mut []
    }
}

/// The parts of a pod that quota, its scopes and the mutating plugins before it look at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pod {
    /// Shared between a workload's template and the pods made from it, copied only when
    /// something changes them (`Arc::make_mut`): a template's pod is admitted once per
    /// replica replayed and once per rollout charge, and 19,000 containers are 30 MB.
    pub containers: std::sync::Arc<Vec<Container>>,
    /// Shared as `containers` are (a template of 41,500 init containers is 30 MB).
    pub init_containers: std::sync::Arc<Vec<Container>>,
    /// `spec.ephemeralContainers` (only a pod update through its subresource may add them:
    /// a create or a template with any is refused).
    pub ephemeral_containers: Vec<Container>,
    pub overhead: ResourceList,
    /// Pod-level `spec.resources` (PodLevelResources).
    pub pod_requests: ResourceList,
    pub pod_limits: ResourceList,
    /// Resources whose pod-level limit the API server's defaulting set to the pod-level request
    /// itself, one Go value for both (see `pod_totals::within_one_usage`).
    pub pod_level_shared: Vec<String>,
    pub priority_class_name: String,
    /// `spec.serviceAccountName` (or the deprecated `serviceAccount` when that is empty, as
    /// the v1 conversion takes it); empty: the ServiceAccount plugin sets `default`.
    pub service_account_name: String,
    pub active_deadline_seconds: Option<i64>,
    pub runtime_class_name: Option<String>,
    /// Some pod (anti-)affinity term names other namespaces (`namespaces` or `namespaceSelector`).
    pub cross_namespace_affinity: bool,
    pub phase: Option<String>,
    /// The QoS class recorded in `status.qosClass`, when the object carries one.
    pub status_qos_class: Option<String>,
    /// `spec.resourceClaims` entries that name a ResourceClaimTemplate: (claim name in the
    /// pod, template name). The resourceclaim controller creates one claim per pod from each.
    pub resource_claim_templates: Vec<(String, String)>,
    /// `status.resourceClaimStatuses` entries with a claim: the pod's claims (by name in the
    /// pod) that the resourceclaim controller has created.
    pub claims_created: Vec<String>,
    /// What the kubelet reports per container (`status.containerStatuses` and
    /// `initContainerStatuses`), by container name: used by quota during an in-place resize.
    pub container_statuses: BTreeMap<String, ContainerStatusResources>,
    /// The `PodResizePending` condition says `Infeasible`.
    pub resize_infeasible: bool,
    /// What PodSecurity reads of the pod's own fields; `None`: it sets none of them.
    pub security: Option<Box<security::PodSecurity>>,
    /// Where the pod may run, as Kueue matches it against ResourceFlavors; `None`: no
    /// nodeSelector and no tolerations.
    pub placement: Option<Box<Placement>>,
    /// The spec as written (JSON), for the admission policies that read the whole object
    /// ([`keep_source`]).
    pub source: Source,
}

/// A pod's `nodeSelector` and `tolerations`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
}

/// One toleration, as written (`operator` empty means `Equal`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toleration {
    pub key: String,
    pub operator: String,
    pub value: String,
    pub effect: String,
}

/// A pod's spec as written (JSON), kept for the admission policies that read the whole object;
/// `None`: only the fields a [`Pod`] has are known. It never makes two pods different: a
/// template read from a file and the same one read from the cluster (without it) are one.
#[derive(Debug, Clone, Default)]
pub struct Source(pub Option<std::sync::Arc<serde_json::Value>>);

impl PartialEq for Source {
    fn eq(&self, _: &Source) -> bool {
        true
    }
}

impl Eq for Source {}

impl Container {
    /// `securityContext.privileged: true`: refused unless the API server runs with
    /// `--allow-privileged=true` (and by PodSecurity's baseline level).
    pub fn privileged(&self) -> bool {
        self.security.as_ref().is_some_and(|s| s.privileged == Some(true))
    }
}

impl Pod {
    /// The names of its privileged containers (containers, init containers, ephemeral ones).
    pub fn privileged_containers(&self) -> impl Iterator<Item = &str> {
        self.containers.iter().chain(self.init_containers.iter()).chain(&self.ephemeral_containers).filter(|c| c.privileged()).map(|c| c.name.as_str())
    }

    /// Pending, with a claim from a ResourceClaimTemplate that the resourceclaim controller has
    /// not created (quota refused it, say): the pod cannot start.
    pub fn waits_for_claims(&self) -> bool {
        self.phase.as_deref().is_none_or(|ph| ph == "Pending") && self.resource_claim_templates.iter().any(|(c, _)| !self.claims_created.contains(c))
    }
}

/// A container's resources as its status reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerStatusResources {
    /// `status.resources.requests` / `.limits`: what is configured on the node now.
    pub requests: ResourceList,
    pub limits: ResourceList,
    /// `allocatedResources`: what the kubelet has admitted.
    pub allocated: ResourceList,
    /// Whether `resources`, `resources.requests` (so `resources` too), `resources.limits`
    /// (likewise) and `allocatedResources` are there at all (an empty map is there): a view
    /// that is there, even empty, is what the container has; one that is not falls back to
    /// the next.
    pub has_resources: bool,
    pub has_requests: bool,
    pub has_limits: bool,
    pub has_allocated: bool,
}

/// How a device request asks for devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceAsk {
    pub device_class_name: String,
    /// `ExactCount` (the default) or `All`.
    pub allocation_mode: String,
    /// `count`, for ExactCount (0 or absent means 1 after defaulting).
    pub count: i64,
    pub admin_access: bool,
}

/// One `spec.devices.requests[]` entry of a ResourceClaim: either exactly one ask, or
/// `firstAvailable` alternatives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceRequest {
    pub name: String,
    pub exactly: Option<DeviceAsk>,
    pub first_available: Vec<DeviceAsk>,
}

/// A ResourceClaim's (or a template's claim) device requests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Claim {
    pub requests: Vec<DeviceRequest>,
}

/// A PersistentVolumeClaim as quota sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pvc {
    /// `spec.storageClassName`: `None` when absent, `Some("")` for an explicit empty class.
    pub storage_class_name: Option<String>,
    pub storage_request: Option<Quantity>,
    pub allocated_storage: Option<Quantity>,
    pub volume_attributes_class_name: Option<String>,
    pub current_volume_attributes_class_name: Option<String>,
    pub target_volume_attributes_class_name: Option<String>,
    /// `status.phase` is `Bound`: only a bound claim's requests may change.
    pub bound: bool,
}

impl Pvc {
    /// The claim's class as the server reads it: the beta annotation
    /// `volume.beta.kubernetes.io/storage-class` if present (even empty), else
    /// `spec.storageClassName`; `None` when it names none.
    pub fn class<'a>(&'a self, annotations: &'a BTreeMap<String, String>) -> Option<&'a str> {
        match annotations.get("volume.beta.kubernetes.io/storage-class") {
            Some(c) => Some(c),
            None => self.storage_class_name.as_deref(),
        }
    }
}

/// A StorageClass as admission reads it: DefaultStorageClass picks the default for a claim
/// that names none, PersistentVolumeClaimResize lets a bound claim grow only where the class
/// allows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageClassInfo {
    pub name: String,
    /// Annotated as the default class.
    pub is_default: bool,
    /// `metadata.creationTimestamp` (the newest default wins).
    pub created: Option<String>,
    pub allow_volume_expansion: bool,
}

/// A Service as quota sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Service {
    pub type_: String,
    /// One entry per port: its explicit `nodePort`, if any.
    pub node_ports: Vec<Option<i32>>,
    pub allocate_load_balancer_node_ports: Option<bool>,
}

/// One `scopeSelector` expression (or a plain scope, as `Exists`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeRequirement {
    pub scope_name: String,
    pub operator: String,
    pub values: Vec<String>,
}

/// A ResourceQuota.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceQuota {
    pub spec_hard: ResourceList,
    pub scopes: Vec<String>,
    pub scope_selector: Option<Vec<ScopeRequirement>>,
    pub status_hard: ResourceList,
    pub status_used: ResourceList,
    /// Whether the object carried a status at all (`status.hard` set by the quota controller).
    pub has_status: bool,
    /// The k8s-openapi object, for validating a quota checked as a document (and for `plan`'s
    /// manifests). Boxed and optional: a state of many quotas holds a pointer each, and a
    /// holder that never validates (the guard's cache) drops it.
    pub raw: Option<Box<core::ResourceQuota>>,
}

impl ResourceQuota {
    /// Scopes as selectors (`Exists`) followed by the scope selector's expressions, the order
    /// the server evaluates them in.
    /// Borrowed when the quota has no plain scopes (most quotas): no copy per object checked.
    pub fn selectors(&self) -> std::borrow::Cow<'_, [ScopeRequirement]> {
        let selector = self.scope_selector.as_deref().unwrap_or_default();
        if self.scopes.is_empty() {
            return std::borrow::Cow::Borrowed(selector);
        }
        let mut out: Vec<ScopeRequirement> =
            self.scopes.iter().map(|s| ScopeRequirement { scope_name: s.clone(), operator: "Exists".into(), values: vec![] }).collect();
        out.extend(selector.iter().cloned());
        std::borrow::Cow::Owned(out)
    }
}

/// One LimitRange item, after the server's defaulting of LimitRange items.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitRangeItem {
    pub type_: String,
    pub default: ResourceList,
    pub default_request: ResourceList,
    pub max: ResourceList,
    pub min: ResourceList,
    /// `maxLimitRequestRatio`: the most a limit may be of its request.
    pub max_limit_request_ratio: ResourceList,
}

/// A pod-creating workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// How many pods the controller wants now (replicas, or parallelism for a Job).
    pub replicas: Option<i32>,
    /// The pod template, as the pods the controller will create.
    pub template: Pod,
    pub template_meta: Meta,
    /// StatefulSet volumeClaimTemplates: one PVC per template per replica.
    pub volume_claim_templates: Vec<(String, Pvc)>,
    /// `spec.template` path prefix for messages (`spec.template`, `spec.jobTemplate.spec.template`).
    pub template_path: String,
    /// How the controller replaces pods when the template changes.
    pub update_strategy: UpdateStrategy,
    /// `container=image` of every container: an image change rolls the pods out too.
    pub images: Vec<String>,
    /// The pod counts as written (`spec.replicas`, `spec.parallelism`, `spec.completions`),
    /// with their paths, for the server's validation (none may be negative).
    pub counts: Vec<(String, i64)>,
    /// The pods that exist now, as the object's status reports them (see [`pods_existing`]);
    /// `None` when the object carries no status (a manifest, or a hand-written state).
    pub current: Option<i32>,
    /// A Job's pods that succeeded (`status.succeeded`): they are not run again.
    pub succeeded: i32,
    /// The template's `restartPolicy` as written (`None`: the server defaults it to `Always`).
    pub restart_policy: Option<String>,
    /// `spec.selector` as written (a ReplicationController's is a plain label map, read as
    /// `matchLabels`; `None` where the kind has none or it is left to the server).
    pub selector: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
    /// The VerticalPodAutoscaler (name, object) whose webhook writes its new pods' requests;
    /// set by `check` from the input and the state, never decoded.
    pub vpa: Option<(String, Box<Vpa>)>,
}

/// The pods a workload's status says exist: `status.replicas` of a Deployment, ReplicaSet,
/// ReplicationController or StatefulSet, `status.active` of a Job,
/// `status.currentNumberScheduled` of a DaemonSet. The server omits zero counts, so a status
/// without the field means none. A CronJob's pods belong to its Jobs: `None`, as for an
/// object without status.
pub fn pods_existing(kind: &str, object: &Value) -> Option<i32> {
    let status = object.get("status").filter(|s| s.is_object())?;
    let field = match kind {
        "Deployment" | "ReplicaSet" | "ReplicationController" | "StatefulSet" => "replicas",
        "Job" => "active",
        "DaemonSet" => "currentNumberScheduled",
        _ => return None,
    };
    let n = status.get(field).and_then(Value::as_i64).unwrap_or(0);
    Some(i32::try_from(n.max(0)).unwrap_or(i32::MAX))
}

/// An `IntOrString` of a rollout: a count or a percentage of the replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOrPercent {
    Int(i32),
    Percent(i32),
}

impl IntOrPercent {
    fn from_k8s(v: &Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>, default: IntOrPercent) -> IntOrPercent {
        use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
        match v {
            Some(IntOrString::Int(i)) => IntOrPercent::Int(*i),
            Some(IntOrString::String(s)) => s.trim_end_matches('%').parse().map(IntOrPercent::Percent).unwrap_or(default),
            None => default,
        }
    }
}

/// A workload's update strategy, with the server's defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UpdateStrategy {
    /// Pods are not replaced on a template change (ReplicaSet, Job, ...).
    #[default]
    None,
    /// Deployment or DaemonSet RollingUpdate.
    RollingUpdate { max_surge: IntOrPercent, max_unavailable: IntOrPercent },
    /// Deployment Recreate: every old pod goes before the first new one.
    Recreate,
    /// StatefulSet RollingUpdate: one pod at a time, highest ordinal first, down to `partition`.
    Ordered { partition: i32 },
    /// StatefulSet or DaemonSet OnDelete: nothing happens until pods are deleted.
    OnDelete,
}

/// What kind of object this is, with the fields quota needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Pod(Pod),
    PersistentVolumeClaim(Pvc),
    Service(Service),
    ResourceQuota(Box<ResourceQuota>),
    LimitRange(Vec<LimitRangeItem>),
    PriorityClass {
        global_default: bool,
        value: i32,
    },
    StorageClass {
        is_default: bool,
        /// `allowVolumeExpansion`: a bound claim of the class may grow.
        allow_volume_expansion: bool,
    },
    RuntimeClass {
        overhead: ResourceList,
    },
    Workload(Box<Workload>),
    /// A ResourceClaim (resource.k8s.io).
    ResourceClaim(Claim),
    /// A ResourceClaimTemplate: the claim each pod referencing it gets.
    ResourceClaimTemplate(Claim),
    /// A DeviceClass and the extended resource name it can be requested by (1.36).
    DeviceClass {
        extended_resource_name: Option<String>,
    },
    /// A HorizontalPodAutoscaler, or a KEDA ScaledObject or ScaledJob: who decides how many
    /// pods a workload runs.
    Autoscaler(Box<Autoscaler>),
    /// A VerticalPodAutoscaler: what the VPA's admission webhook writes into the requests
    /// (and limits) of the pods of its target.
    Vpa(Box<Vpa>),
    /// A Namespace: whether it is being terminated (`status.phase: Terminating`, which the
    /// server sets when the namespace is deleted), when nothing may be created in it.
    Namespace {
        terminating: bool,
    },
    /// A MutatingWebhookConfiguration or ValidatingWebhookConfiguration: which requests
    /// its webhooks see.
    WebhookConfiguration(Box<webhooks::WebhookConfiguration>),
    /// A ValidatingAdmissionPolicy or MutatingAdmissionPolicy.
    AdmissionPolicy(Box<policies::Policy>),
    /// A ValidatingAdmissionPolicyBinding or MutatingAdmissionPolicyBinding.
    PolicyBinding(Box<policies::Binding>),
    /// Anything else: only counted (`count/<resource>`).
    Other,
    /// A ConfigMap, or an object of a kind this tool does not know (a custom resource), kept
    /// whole: an admission policy may take it as its params. Otherwise as [`Body::Other`].
    Kept(std::sync::Arc<serde_json::Value>),
}

/// A decoded object.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub origin: Origin,
    pub type_info: TypeInfo,
    pub meta: Meta,
    pub body: Body,
    /// The object as written (JSON), less what its body keeps itself (a pod's spec, a
    /// workload's template spec: their [`Pod::source`]), for the admission policies that
    /// read the whole object ([`keep_source`]); `None`: not kept.
    pub source: Source,
}

impl Object {
    /// `kind/name`, lower-case kind, the way kubectl names objects.
    pub fn display_name(&self) -> String {
        format!("{}/{}", self.type_info.kind.to_lowercase(), self.meta.name)
    }
}

/// Builders the unit tests of several modules share.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Container, Pod};
    use crate::quantity::Quantity;
    use crate::resources::ResourceList;

    /// A resource list from `(name, quantity)` pairs.
    pub fn rl(pairs: &[(&str, &str)]) -> ResourceList {
        pairs.iter().map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap())).collect()
    }

    /// A pod of one container `app` with these requests and limits.
    pub fn pod_with(req: &[(&str, &str)], lim: &[(&str, &str)]) -> Pod {
        Pod { containers: vec![Container { name: "app".into(), requests: rl(req), limits: rl(lim), ..Container::default() }].into(), ..Pod::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_a_pod_was_read_from_never_makes_it_another_pod() {
        // A template from a file (its spec kept for the policies) and the same template read
        // from the cluster (nothing kept): one template, no rollout.
        let written = Pod { source: Source(Some(std::sync::Arc::new(serde_json::json!({"containers": []})))), ..testing::pod_with(&[("cpu", "1")], &[]) };
        let read = testing::pod_with(&[("cpu", "1")], &[]);
        assert_eq!(written, read);
        assert_ne!(written, testing::pod_with(&[("cpu", "2")], &[]));
    }
}
