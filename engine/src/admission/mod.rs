//! Step 3 of the pipeline: the API server's admission chain, replayed in its plugin order.
//!
//! kube-apiserver runs its admission plugins in one fixed order (its `AllOrderedPlugins`), of
//! which a default cluster enables these, in this order; the ones that decide whether quota is
//! asked, and what it is asked, are replayed here, one file each:
//!
//! | order | plugin | halves | here |
//! |---|---|---|---|
//! | 1 | NamespaceLifecycle | mutating | [`namespace_lifecycle`]: a namespace that does not exist, or is being terminated |
//! | 2 | LimitRanger | mutating, validating | [`limit_ranger`]: defaults; min, max, ratio |
//! | 3 | ServiceAccount | mutating, validating | [`service_account`]: `default`; a ServiceAccount that does not exist |
//! | 4 | PodSecurity | validating | [`pod_security`]: a namespace's enforced level, every check, exemptions |
//! | 5 | Priority | mutating | [`priority`]: the class, the global default |
//! | 6 | DefaultStorageClass | mutating | [`default_storage_class`] |
//! | 7 | PersistentVolumeClaimResize | validating | [`pvc_resize`] |
//! | 8 | RuntimeClass | mutating, validating | [`runtime_class`]: the pod's overhead |
//! | ... | MutatingAdmissionWebhook | mutating | [`vpa_webhook`]: a VerticalPodAutoscaler's requests and limits; other webhooks are not replayed |
//! | ... | ValidatingAdmissionWebhook, policies | | not replayed |
//! | last | ResourceQuota | validating | [`resource_quota`]: usage, scopes, the verdict |
//!
//! One request goes through [`admit`] as the server takes it: on a create, what the registry
//! does first ([`crate::defaulting::as_decoded`]), then every plugin's mutating half in that
//! order, the registry's own preparation and validation of the object
//! ([`crate::object_validation`]), then every plugin's validating half in the same order, quota
//! last. The first refusal ends the request: nothing after it runs, and quota charges nothing.

pub mod default_storage_class;
pub mod limit_ranger;
pub mod namespace_lifecycle;
pub mod pod_security;
pub mod priority;
pub mod pvc_resize;
pub mod resource_quota;
pub mod runtime_class;
pub mod service_account;
pub mod vpa_webhook;

pub use resource_quota::{
    check_request, check_request_detailed, check_request_with, scopes, usage, Decision, Detail, LimitedResource, NamedQuota, QuotaReport, QuotaVerdict,
    Refusal, RefusalReason, Request, ResourceRow,
};

use std::collections::{BTreeMap, BTreeSet};

pub use crate::object_validation::ServerFlags;

use crate::dra::DeviceClasses;
use crate::objects::{Body, LimitRangeItem, Object, StorageClassInfo, VerticalAutoscaler};
use crate::resources::ResourceList;
use crate::version::Rules;

/// What the plugins consult: the object's namespace and the cluster-wide classes. A class
/// list that is `None` is unknown (not read): the plugin that needs it refuses nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cluster<'a> {
    /// Namespaces known to exist, with their labels.
    pub namespaces: Option<&'a BTreeMap<String, BTreeMap<String, String>>>,
    /// Namespaces known to be being terminated.
    pub terminating: Option<&'a BTreeSet<String>>,
    /// The ServiceAccounts of the object's namespace, by name; `None`: unknown.
    pub service_accounts: Option<&'a BTreeSet<String>>,
    /// LimitRanges of the object's namespace: (name, items), in name order.
    pub limit_ranges: &'a [(String, Vec<LimitRangeItem>)],
    /// PriorityClasses by name: (globalDefault, value).
    pub priority_classes: Option<&'a BTreeMap<String, (bool, i32)>>,
    /// RuntimeClass overheads by name.
    pub runtime_classes: Option<&'a BTreeMap<String, ResourceList>>,
    pub storage_classes: Option<&'a [StorageClassInfo]>,
    pub device_classes: Option<&'a DeviceClasses>,
    /// The VerticalPodAutoscaler (name, object) whose webhook writes the requests of the pod
    /// being created: the one that targets the workload the pod is made for.
    pub vpa: Option<(&'a str, &'a VerticalAutoscaler)>,
}

/// How a request is sent and judged.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    pub rules: &'a Rules,
    /// The ResourceQuota admission configuration's `limitedResources`.
    pub limited: &'a [LimitedResource],
    pub detail: Detail,
    /// The object is a document as a user sent it (its name and template are validated);
    /// `false` for an object a controller makes, whose name is the controller's.
    pub as_sent: bool,
    /// The API server's flags its validation reads (`--allow-privileged`).
    pub flags: ServerFlags,
    /// The server's PodSecurityConfiguration (`None`: not given; upstream's defaults).
    pub pod_security: Option<&'a pod_security::Config>,
}

/// One request through the chain: `obj` created in (or, with `old`, updated in) namespace
/// `ns`. Returns the decision and the sentences saying what the server changed; on admission
/// the namespace's `quotas` are charged.
pub fn admit(obj: &mut Object, old: Option<&Object>, ns: &str, cluster: &Cluster, quotas: &mut [NamedQuota], opts: &Options) -> (Decision, Vec<String>) {
    if obj.type_info.namespaced {
        if let Some(message) = namespace_lifecycle::refusal(ns, cluster.namespaces) {
            return (Decision::refused(RefusalReason::NamespaceNotFound, message), vec![]);
        }
        if old.is_none() {
            if let Some(message) = namespace_lifecycle::terminating_refusal(ns, cluster.terminating) {
                return (Decision::refused(RefusalReason::Admission, message), vec![]);
            }
        }
    }
    let mutations = match old {
        None => match mutating_half(obj, ns, cluster, opts.rules) {
            Ok(m) => m,
            Err(refused) => return (refused, vec![]),
        },
        Some(prev) => {
            crate::defaulting::prepare_for_update(obj, prev);
            vec![]
        }
    };
    let labels = cluster.namespaces.and_then(|n| n.get(ns));
    if let Some(message) = crate::object_validation::refusal(obj, old, labels, opts.rules, opts.flags, opts.as_sent) {
        return (Decision::refused(RefusalReason::Invalid, message), mutations);
    }
    if let Err(message) = validating_half(obj, old, ns, cluster, opts) {
        return (Decision::refused(RefusalReason::Admission, message), mutations);
    }
    let request = Request { classes: cluster.device_classes, detail: opts.detail, resize: false };
    (check_request_detailed(quotas, obj, old, opts.limited, opts.rules, &request), mutations)
}

/// A pod template as a VerticalPodAutoscaler's webhook writes the pods made from it:
/// LimitRanger's defaults first, then the webhook. Returns what the webhook changed, in words.
pub fn as_the_vpa_writes(pod: &mut crate::objects::Pod, limit_ranges: &[(String, Vec<LimitRangeItem>)], name: &str, vpa: &VerticalAutoscaler) -> Vec<String> {
    let ranges: Vec<(&str, &[LimitRangeItem])> = limit_ranges.iter().map(|(n, i)| (n.as_str(), i.as_slice())).collect();
    limit_ranger::apply_limit_ranges(pod, &ranges);
    vpa_webhook::write_pod(pod, name, vpa, &ranges)
}

/// A create, up to the validation of the object: what the registry does first, every
/// plugin's mutating half in the server's order (NamespaceLifecycle's, which acts on every
/// request, came first), then the strategy's preparation.
fn mutating_half(obj: &mut Object, ns: &str, cluster: &Cluster, rules: &Rules) -> Result<Vec<String>, Decision> {
    let mut notes = crate::defaulting::as_decoded(obj, rules);
    let refused = |message| Decision::refused(RefusalReason::Admission, message);
    match &mut obj.body {
        Body::Pod(p) => {
            let limit_ranges: Vec<(&str, &[LimitRangeItem])> = cluster.limit_ranges.iter().map(|(n, i)| (n.as_str(), i.as_slice())).collect();
            notes.extend(limit_ranger::apply_limit_ranges(p, &limit_ranges));
            service_account::admit_pod(p, &obj.meta.annotations, ns, cluster.service_accounts).map_err(refused)?;
            notes.extend(priority::apply_priority(p, cluster.priority_classes).map_err(refused)?);
            notes.extend(runtime_class::set_overhead(p, cluster.runtime_classes).map_err(refused)?);
            // Webhooks come after every built-in mutating plugin.
            if let Some((name, vpa)) = cluster.vpa {
                notes.extend(vpa_webhook::write_pod(p, name, vpa, &limit_ranges));
            }
        }
        Body::PersistentVolumeClaim(p) => notes.extend(default_storage_class::apply_default_storage_class(p, &obj.meta.annotations, cluster.storage_classes)),
        _ => {}
    }
    notes.extend(crate::defaulting::prepare_for_create(obj, rules));
    Ok(notes)
}

/// Every plugin's validating half before quota, in the server's order: LimitRanger (a pod on
/// create or resize, a claim on create and update), PodSecurity (a pod),
/// PersistentVolumeClaimResize (a claim that grows), RuntimeClass (a pod's overhead, on create).
fn validating_half(obj: &Object, old: Option<&Object>, ns: &str, cluster: &Cluster, opts: &Options) -> Result<(), String> {
    let rules = opts.rules;
    let limit_ranges: Vec<(&str, &[LimitRangeItem])> = cluster.limit_ranges.iter().map(|(n, i)| (n.as_str(), i.as_slice())).collect();
    match (&obj.body, old.map(|o| &o.body)) {
        (Body::Pod(p), None) => limit_ranger::validate_pod(p, &limit_ranges, rules)?,
        (Body::Pod(p), Some(Body::Pod(prev))) => limit_ranger::validate_pod_update(prev, p, &limit_ranges, rules)?,
        (Body::PersistentVolumeClaim(c), _) => limit_ranger::validate_pvc(c, &limit_ranges)?,
        _ => {}
    }
    if let Body::Pod(p) = &obj.body {
        let old = old.and_then(|o| if let Body::Pod(prev) = &o.body { Some(prev) } else { None });
        let req = pod_security::Request { pod: p, annotations: &obj.meta.annotations, old, namespace: ns, labels: cluster.namespaces.and_then(|n| n.get(ns)) };
        if let Some(message) = pod_security::refusal(&req, opts.pod_security, rules) {
            return Err(message);
        }
    }
    if let Some(message) = old.and_then(|prev| pvc_resize::resize_refusal(prev, obj, cluster.storage_classes)) {
        return Err(message);
    }
    match (&obj.body, old) {
        (Body::Pod(p), None) => runtime_class::validate_overhead(p, cluster.runtime_classes),
        _ => Ok(()),
    }
}
