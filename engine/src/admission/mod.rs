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
//! | ... | MutatingAdmissionPolicy | mutating | [`policy`]: the policies' ApplyConfigurations and JSON patches |
//! | ... | MutatingAdmissionWebhook | mutating | [`vpa_webhook`]: a VerticalPodAutoscaler's requests and limits; other webhooks are not replayed, but a live check asks the server for the pod they return (a dry run: [`ServerAnswer`]) |
//! | ... | ValidatingAdmissionPolicy | validating | [`policy`]: the policies' validations (Deny, Warn) |
//! | ... | ValidatingAdmissionWebhook | | not replayed (named) |
//! | last | ResourceQuota | validating | [`resource_quota`]: usage, scopes, the verdict |
//!
//! One request goes through [`admit`] as the server takes it: on a create, what the registry
//! does first ([`crate::defaulting::as_decoded`]), then every plugin's mutating half in that
//! order, the registry's own preparation and validation of the object
//! ([`crate::object_validation`]), then every plugin's validating half in the same order, quota
//! last. The first refusal ends the request: nothing after it runs, and quota charges nothing.
//!
//! Every plugin has one shape, [`Plugin`]: which requests it handles, a mutating half and a
//! validating half, and whether it is external (a webhook or a policy). [`CHAIN`] lists them in
//! the server's order. Reinvocation is the chain's: when an external plugin changed the object,
//! the mutating half runs once more, the built-in plugins all again and the external ones only
//! where they ask to be called again (`reinvocationPolicy: IfNeeded`). Each plugin's rules stay
//! in its own file, a leaf that imports nothing of the chain; `adapters.rs` adapts it to the shape.
//! ResourceQuota comes last in [`CHAIN`] too; its answer is the decision itself (the usage and
//! every quota's verdict, refused or not): [`Plugin::decide`], which no other plugin has.

pub mod default_storage_class;
pub mod limit_ranger;
pub mod namespace_lifecycle;
pub mod pod_security;
pub mod policy;
pub mod priority;
pub mod pvc_resize;
pub mod resource_quota;
pub mod runtime_class;
pub mod service_account;
pub mod stage;
pub mod vpa_webhook;

// The plugins as the chain takes them (the chain's own, not a plugin).
mod adapters;
use adapters::{
    DefaultStorageClass, LimitRanger, MutatingAdmissionPolicy, MutatingAdmissionWebhook, NamespaceLifecycle, PersistentVolumeClaimResize, PodSecurity,
    Priority, ResourceQuota, RuntimeClass, ServiceAccount, ValidatingAdmissionPolicy,
};

pub use resource_quota::{
    check_request, check_request_detailed, check_request_with, scopes, usage, Decision, Detail, LimitedResource, NamedQuota, QuotaReport, QuotaVerdict,
    Refusal, RefusalReason, Request, ResourceRow,
};
pub use stage::Stage;

use std::collections::{BTreeMap, BTreeSet};

pub use crate::object_validation::ServerFlags;

use crate::dra::DeviceClasses;
use crate::objects::{Body, LimitRangeItem, Object, StorageClassInfo, Vpa};
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
    pub vpa: Option<(&'a str, &'a Vpa)>,
    /// The cluster's admission policies and their bindings; `None`: not read.
    pub policies: Option<&'a policy::PolicySet>,
    /// The objects policies may read as params (ConfigMaps, custom resources).
    pub params: Option<&'a policy::Params>,
    /// What the API server answered a dry run of the pod being created, and the mutating
    /// webhooks that see it (their names): the webhooks' changes, which no API describes,
    /// are the server's.
    pub server: Option<ServerPod<'a>>,
}

/// The API server's answer to a create of a pod sent with `?dryRun=All`: the whole chain ran,
/// its webhooks included, and nothing was stored.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerAnswer {
    /// The pod as the server would store it: what its mutating webhooks added is in it.
    Admitted(Box<crate::objects::Pod>),
    /// The server refused it, in its words (a webhook, a policy, quota for the pod alone): the
    /// decision it is (a quota's refusal with the rows its message gives).
    Refused(Box<Decision>),
}

/// What a dry run of a pod was asked without because the input creates it before the pod and
/// the server does not hold it yet (a chart's own ServiceAccount, PriorityClass or
/// RuntimeClass): the server would refuse the pod for it, where the input's own order admits
/// it. The pod the server returns keeps the chain's own value of what was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StandIn {
    ServiceAccount(String),
    PriorityClass(String),
    RuntimeClass(String),
    /// A LimitRange of the input: the pod is sent with the defaults it gives (which the server,
    /// holding none of it yet, would not give, and its quota would then refuse a container
    /// without a request); the server's pod has them as values of its own.
    LimitRange(String),
}

impl StandIn {
    /// What was left out, in words (`ServiceAccount "builder"`).
    pub fn what(&self) -> String {
        match self {
            StandIn::ServiceAccount(n) => format!("ServiceAccount {n:?}"),
            StandIn::PriorityClass(n) => format!("PriorityClass {n:?}"),
            StandIn::RuntimeClass(n) => format!("RuntimeClass {n:?}"),
            StandIn::LimitRange(n) => format!("LimitRange {n:?} (the defaults it gives were sent in the pod)"),
        }
    }

    /// Puts back into `server` (the pod the server returned) the fields the chain set in
    /// `mine` for what was left out: the name, and what the chain derived from it.
    pub fn restore(&self, server: &mut crate::objects::Pod, mine: &crate::objects::Pod) {
        match self {
            StandIn::ServiceAccount(_) => server.service_account_name = mine.service_account_name.clone(),
            StandIn::PriorityClass(_) => server.priority_class_name = mine.priority_class_name.clone(),
            StandIn::RuntimeClass(_) => {
                server.runtime_class_name = mine.runtime_class_name.clone();
                server.overhead = mine.overhead.clone();
            }
            StandIn::LimitRange(_) => {}
        }
    }
}

/// The API server's answer to a dry run of a pod, the mutating webhooks that see it, and what
/// it was asked without ([`StandIn`]).
pub type ServerPod<'a> = (&'a ServerAnswer, &'a [String], &'a [StandIn]);

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

/// What a plugin sees of a request besides the object: its namespace, the object it replaces
/// (an update), what the cluster holds, how it is judged, and whether this is the mutating
/// half's second run.
#[derive(Clone, Copy)]
pub struct Attributes<'a> {
    pub ns: &'a str,
    pub old: Option<&'a Object>,
    pub cluster: &'a Cluster<'a>,
    pub opts: &'a Options<'a>,
    pub reinvoked: bool,
}

impl Attributes<'_> {
    fn creating(&self) -> bool {
        self.old.is_none()
    }

    /// Whether `obj` updates a stored pod's resources in place (`pods/resize`), where the
    /// release has it.
    fn resizing(&self, obj: &Object) -> bool {
        match (&obj.body, self.old.map(|o| &o.body)) {
            (Body::Pod(new), Some(Body::Pod(old))) => self.opts.rules.pod_resize && resource_quota::usage::is_resize(old, new),
            _ => false,
        }
    }

    /// The namespace's LimitRanges as the LimitRanger reads them.
    fn limit_ranges(&self) -> Vec<(&str, &[LimitRangeItem])> {
        self.cluster.limit_ranges.iter().map(|(n, i)| (n.as_str(), i.as_slice())).collect()
    }
}

/// A plugin's refusal: its reason (most are `Admission`, a 403) and the server's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    pub reason: RefusalReason,
    pub message: String,
    /// The decision whole, when another than the plugin gave it (the API server's, from a dry
    /// run: quota's, a webhook's, a policy's).
    pub decision: Option<Box<Decision>>,
    /// What the plugin says beside its refusal (the warnings the server sends with it).
    pub notes: Vec<String>,
}

impl From<String> for Denial {
    fn from(message: String) -> Denial {
        Denial::new(RefusalReason::Admission, message)
    }
}

impl Denial {
    /// The plugin's own refusal, saying nothing beside it.
    fn new(reason: RefusalReason, message: String) -> Denial {
        Denial { reason, message, decision: None, notes: vec![] }
    }

    /// The decision it is, given by `stage` unless it carries its own refusal.
    fn decision(self, stage: Stage) -> Decision {
        match self.decision {
            Some(d) => *d,
            None => Decision::refused_by(stage, self.reason, self.message),
        }
    }
}

/// One admission plugin, as the server has them: the requests it handles, a mutating half
/// (it may change the object, saying what it changed in words, or refuse) and a validating
/// half (it may refuse).
pub trait Plugin: Sync {
    /// Who it is, as a refusal names it.
    fn stage(&self) -> Stage;
    /// Whether it looks at this request at all.
    fn handles(&self, obj: &Object, a: &Attributes) -> bool;
    /// A webhook or a policy: when it changes the object, the mutating half runs again.
    fn external(&self) -> bool {
        false
    }
    /// An external plugin called again on that second run (`reinvocationPolicy: IfNeeded`).
    fn reinvoke_if_needed(&self) -> bool {
        false
    }
    fn mutate(&self, _obj: &mut Object, _a: &Attributes) -> Result<Vec<String>, Denial> {
        Ok(vec![])
    }
    fn validate(&self, _obj: &Object, _a: &Attributes) -> Result<(), Denial> {
        Ok(())
    }
    /// The validating half with what it says without refusing: the server's warnings, and
    /// where an answer rests on what could not be replayed.
    fn validate_saying(&self, obj: &Object, a: &Attributes) -> Result<Vec<String>, Denial> {
        self.validate(obj, a).map(|_| vec![])
    }
    /// The last word, for the plugin that gives the request's decision whole (ResourceQuota:
    /// the usage and every quota's verdict, refused or not), charging `quotas` when it admits.
    fn decide(&self, _obj: &Object, _a: &Attributes, _quotas: &mut [NamedQuota]) -> Option<Decision> {
        None
    }
}

/// The plugins replayed, in kube-apiserver's order ([`Stage`]'s), ResourceQuota last.
pub const CHAIN: &[&dyn Plugin] = &[
    &NamespaceLifecycle,
    &LimitRanger,
    &ServiceAccount,
    &PodSecurity,
    &Priority,
    &DefaultStorageClass,
    &PersistentVolumeClaimResize,
    &RuntimeClass,
    &MutatingAdmissionPolicy,
    &MutatingAdmissionWebhook,
    &ValidatingAdmissionPolicy,
    &ResourceQuota,
];

/// One request through the chain: `obj` created in (or, with `old`, updated in) namespace
/// `ns`. Returns the decision and the sentences saying what the server changed; on admission
/// the namespace's `quotas` are charged.
pub fn admit(obj: &mut Object, old: Option<&Object>, ns: &str, cluster: &Cluster, quotas: &mut [NamedQuota], opts: &Options) -> (Decision, Vec<String>) {
    let a = Attributes { ns, old, cluster, opts, reinvoked: false };
    let mutations = match old {
        None => {
            let mut notes = crate::defaulting::as_decoded(obj, opts.rules);
            match mutating_half(obj, &a) {
                Ok(m) => notes.extend(m),
                Err(refused) => return (*refused, vec![]),
            }
            notes.extend(crate::defaulting::prepare_for_create(obj, opts.rules));
            notes
        }
        Some(prev) => {
            // Every write is decoded and defaulted: a resized container's limit without a
            // request gets the limit as its request, as on create.
            if let Body::Pod(p) = &mut obj.body {
                crate::defaulting::default_pod_api_for(p, opts.rules);
            }
            if let Err(refused) = mutating_half(obj, &a) {
                return (*refused, vec![]);
            }
            crate::defaulting::prepare_for_update(obj, prev);
            vec![]
        }
    };
    let labels = cluster.namespaces.and_then(|n| n.get(ns));
    if let Some(message) = crate::object_validation::refusal(obj, old, labels, opts.rules, opts.flags, opts.as_sent) {
        return (Decision::refused(RefusalReason::Invalid, message), mutations);
    }
    let mut mutations = mutations;
    for p in CHAIN.iter().filter(|p| p.handles(obj, &a)) {
        match p.validate_saying(obj, &a) {
            Ok(said) => mutations.extend(said),
            Err(mut d) => {
                mutations.append(&mut d.notes);
                return (d.decision(p.stage()), mutations);
            }
        }
    }
    // The last word is quota's: the chain ends with it.
    let decided = CHAIN.iter().filter(|p| p.handles(obj, &a)).find_map(|p| p.decide(obj, &a, quotas));
    (decided.unwrap_or_else(|| Decision::allow(ResourceList::new(), vec![])), mutations)
}

/// Every plugin's mutating half in the chain's order, and once more where an external plugin
/// changed the object: the built-in plugins all again, the external ones that ask for it. A
/// sentence the second run repeats is said once.
fn mutating_half(obj: &mut Object, a: &Attributes) -> Result<Vec<String>, Box<Decision>> {
    mutating_half_of(CHAIN, obj, a)
}

/// [`mutating_half`] of the plugins `chain`.
fn mutating_half_of(chain: &[&dyn Plugin], obj: &mut Object, a: &Attributes) -> Result<Vec<String>, Box<Decision>> {
    let mut notes = Vec::new();
    let mut changed = false;
    for p in chain {
        if !p.handles(obj, a) {
            continue;
        }
        let before = p.external().then(|| obj.clone());
        notes.extend(p.mutate(obj, a).map_err(|d| Box::new(d.decision(p.stage())))?);
        changed |= before.is_some_and(|b| b != *obj);
    }
    if !changed {
        return Ok(notes);
    }
    let again = Attributes { reinvoked: true, ..*a };
    for p in chain {
        if (p.external() && !p.reinvoke_if_needed()) || !p.handles(obj, &again) {
            continue;
        }
        for n in p.mutate(obj, &again).map_err(|d| Box::new(d.decision(p.stage())))? {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    Ok(notes)
}

/// The pod a create is about, when it is one.
fn pod_of(obj: &Object) -> Option<&crate::objects::Pod> {
    if let Body::Pod(p) = &obj.body {
        Some(p)
    } else {
        None
    }
}

/// How a plugin's warning starts among the chain's sentences (the report keeps them apart).
pub const WARNING: &str = "Warning: ";

/// A pod template as a VerticalPodAutoscaler's webhook writes the pods made from it:
/// LimitRanger's defaults first, then the webhook. Returns what the webhook changed, in words.
pub fn as_the_vpa_writes(pod: &mut crate::objects::Pod, limit_ranges: &[(String, Vec<LimitRangeItem>)], name: &str, vpa: &Vpa) -> Vec<String> {
    let ranges: Vec<(&str, &[LimitRangeItem])> = limit_ranges.iter().map(|(n, i)| (n.as_str(), i.as_slice())).collect();
    limit_ranger::apply_limit_ranges(pod, &ranges);
    vpa_webhook::write_pod(pod, name, vpa, &ranges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse_str;
    use crate::objects::{decode, Container};

    /// A sidecar injector as a webhook is: it adds a container with no resources, once.
    struct Injector;
    impl Plugin for Injector {
        fn stage(&self) -> Stage {
            Stage::MutatingAdmissionWebhook
        }
        fn handles(&self, obj: &Object, _: &Attributes) -> bool {
            matches!(obj.body, Body::Pod(_))
        }
        fn external(&self) -> bool {
            true
        }
        fn mutate(&self, obj: &mut Object, _: &Attributes) -> Result<Vec<String>, Denial> {
            let Body::Pod(p) = &mut obj.body else { return Ok(vec![]) };
            if p.containers.iter().any(|c| c.name == "proxy") {
                return Ok(vec![]);
            }
            std::sync::Arc::make_mut(&mut p.containers).push(Container { name: "proxy".into(), ..Container::default() });
            Ok(vec!["injected proxy".into()])
        }
    }

    fn one(yaml: &str) -> Object {
        decode(&parse_str("t.yaml", yaml).unwrap().remove(0)).unwrap()
    }

    #[test]
    fn a_webhooks_change_runs_the_built_in_mutating_plugins_again() {
        // k8s.io/apiserver's reinvocation: when a webhook changed the object, every in-tree
        // mutating plugin runs once more, so LimitRanger defaults the injected container.
        let lr = one("apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr, namespace: ns}\nspec: {limits: [{type: Container, defaultRequest: {cpu: 100m}, default: {cpu: 200m}}]}\n");
        let Body::LimitRange(items) = &lr.body else { panic!("a LimitRange") };
        let ranges = vec![("lr".to_string(), items.clone())];
        let cluster = Cluster { limit_ranges: &ranges, ..Cluster::default() };
        let rules = crate::version::Rules::default();
        let opts = Options { rules: &rules, limited: &[], detail: Detail::default(), as_sent: true, flags: ServerFlags::default(), pod_security: None };
        let a = Attributes { ns: "ns", old: None, cluster: &cluster, opts: &opts, reinvoked: false };
        let chain: [&dyn Plugin; 2] = [&LimitRanger, &Injector];
        let mut pod = one("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{name: app, image: x}]}\n");
        let notes = mutating_half_of(&chain, &mut pod, &a).unwrap();
        let Body::Pod(p) = &pod.body else { panic!("a pod") };
        let cpu: Vec<(String, Option<String>)> = p.containers.iter().map(|c| (c.name.clone(), c.requests.get("cpu").map(|q| q.to_string()))).collect();
        assert_eq!(cpu, [("app".to_string(), Some("100m".to_string())), ("proxy".to_string(), Some("100m".to_string()))], "{notes:?}");
        assert_eq!(notes.iter().filter(|n| *n == "injected proxy").count(), 1, "{notes:?}");
    }
}
