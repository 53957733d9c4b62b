//! The cluster state a check consults and charges: quotas, LimitRanges, classes, existing
//! objects, and the usage each admitted document adds.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::admission::NamedQuota;
use crate::objects::{autoscaler_types, Body, LimitRangeItem, Object, Sets, StorageClassInfo, AUTOSCALER_TYPES};
use crate::resources::ResourceList;

/// What the cluster holds that admission consults.
#[derive(Debug, Clone, Default)]
pub struct ClusterState {
    /// Quotas per namespace, sorted by name.
    pub quotas: BTreeMap<String, Vec<NamedQuota>>,
    /// LimitRanges per namespace: (name, items).
    pub limit_ranges: BTreeMap<String, Vec<(String, Vec<LimitRangeItem>)>>,
    /// PriorityClasses (globalDefault, value); `None` when the state says nothing about them.
    pub priority_classes: Option<BTreeMap<String, (bool, i32)>>,
    /// StorageClasses; `None` when unknown.
    pub storage_classes: Option<Vec<StorageClassInfo>>,
    /// RuntimeClass overheads; `None` when unknown.
    pub runtime_classes: Option<BTreeMap<String, ResourceList>>,
    /// Objects that already exist, by (namespace, group-resource, name): creating one again is
    /// an update.
    pub existing: BTreeMap<(String, String, String), Object>,
    /// Objects created by earlier documents that no later document names again: only their
    /// keys are kept (a workload's replicas skip the names that exist), so memory does not
    /// hold every object of a large input.
    pub seen: BTreeSet<(String, String, String)>,
    /// DeviceClasses (name -> extendedResourceName); `None` when unknown.
    pub device_classes: Option<crate::dra::DeviceClasses>,
    /// Namespaces known to exist, with their labels; `None` when unknown. When known, an object
    /// in another namespace is refused as the server refuses it (`namespaces "x" not found`),
    /// and a claim asking for admin access needs its namespace's label.
    pub namespaces: Option<BTreeMap<String, BTreeMap<String, String>>>,
    /// Namespaces known to be being terminated: nothing new is created in them.
    pub terminating: BTreeSet<String>,
    /// The ServiceAccounts (names) of the namespaces whose ServiceAccounts are known: a pod
    /// there naming another is refused. A namespace not in the map: unknown, nothing refused
    /// (and a pod naming a ServiceAccount other than `default` there cannot be decided).
    pub service_accounts: BTreeMap<String, BTreeSet<String>>,
    /// ServiceAccounts (namespace, name) the input created in a namespace whose ServiceAccounts
    /// are not known: they exist, whatever else does.
    pub service_accounts_created: BTreeSet<(String, String)>,
    /// The namespaces' ResourceClaimTemplates could not be read: a pod naming one that is not
    /// in the state cannot be decided (when false, a template not in the state does not exist).
    pub claim_templates_unknown: bool,
    /// The namespaces' VerticalPodAutoscalers could not be read: a workload's pods may get
    /// requests no one can tell (when false, a VPA not in the state does not exist).
    pub vpas_unknown: bool,
    /// The admission webhook configurations, by name (mutating and validating): which webhooks
    /// a request meets. `None`: not read (a state without them, a user who may not list them).
    pub webhooks: Option<std::sync::Arc<BTreeMap<String, crate::objects::webhooks::WebhookConfiguration>>>,
    /// The admission policies (validating and mutating) and their bindings, compiled.
    /// `None`: not read (a state without them, a user who may not list them).
    pub policies: Option<std::sync::Arc<crate::admission::policy::PolicySet>>,
    /// The objects a policy may read as its params (ConfigMaps, custom resources), whole.
    pub params: crate::admission::policy::Params,
    /// Kueue's ResourceFlavors, ClusterQueues and LocalQueues; `None`: none read (Kueue not
    /// installed, or not read).
    pub kueue: Option<std::sync::Arc<crate::kueue::Kueue>>,
    /// What the API server answered dry runs of the pods mutating webhooks see, by the document
    /// they come from (a live check asks: see `dry_run`); empty: none asked.
    pub dry_runs: std::sync::Arc<BTreeMap<super::dry_run::PodSource, super::dry_run::DryRun>>,
}

/// The group-resource VerticalPodAutoscalers are stored under.
pub const VPA_RESOURCE: &str = autoscaler_types::VPA.group_resource;

/// A kind of cluster object the state can lack: it could not be read (RBAC), or an offline
/// state does not hold it. A document whose answer depends on it cannot be decided; one that
/// does not (a pod naming no PriorityClass, where no quota selects by class) is answered in
/// full without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Lacking {
    PriorityClasses,
    RuntimeClasses,
    StorageClasses,
    DeviceClasses,
    ResourceClaimTemplates,
    /// Known per namespace ([`ClusterState::service_accounts`]), not as one kind: what the
    /// state lacks is a namespace's, so it is "lacked" whenever a pod's answer needs it.
    ServiceAccounts,
    /// An add-on's kind (autoscaling.k8s.io), not in the built-in `view` ClusterRole.
    VerticalPodAutoscalers,
}

impl Lacking {
    pub const ALL: [Lacking; 7] = [
        Lacking::PriorityClasses,
        Lacking::RuntimeClasses,
        Lacking::StorageClasses,
        Lacking::DeviceClasses,
        Lacking::ResourceClaimTemplates,
        Lacking::ServiceAccounts,
        Lacking::VerticalPodAutoscalers,
    ];

    /// Its row of the cluster-data kinds.
    pub fn row(self) -> &'static super::cluster_kinds::ClusterKind {
        super::cluster_kinds::CLUSTER_KINDS.iter().find(|k| k.lacking == Some(self)).expect("every kind the state can lack has a row")
    }

    /// The resource as a snapshot records what it could not read (`plural.group`).
    pub fn resource(self) -> String {
        self.row().recorded_as()
    }

    /// The kind a `plural.group` names, if the state can lack it.
    pub fn of_resource(resource: &str) -> Option<Lacking> {
        Lacking::ALL.into_iter().find(|l| l.resource() == resource)
    }
}

/// Something a check could not read, in words, and the kind it leaves the state without
/// (`None`: every answer depends on it, e.g. whether the namespace exists). Said only when
/// some document's answer depends on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    pub lacking: Option<Lacking>,
    pub text: String,
}

impl Gap {
    /// A gap every answer depends on.
    pub fn always(text: impl Into<String>) -> Gap {
        Gap { lacking: None, text: text.into() }
    }

    /// The texts of the gaps some answer depended on: those that leave the state without a
    /// kind in `needed`, and those every answer depends on.
    pub fn relevant<'a>(gaps: &'a [Gap], needed: &'a BTreeSet<Lacking>) -> impl Iterator<Item = &'a str> + 'a {
        gaps.iter().filter(|g| g.lacking.is_none_or(|l| needed.contains(&l))).map(|g| g.text.as_str())
    }
}

impl ClusterState {
    /// The stored object that `obj`, created in `ns`, would update.
    pub fn existing_for(&self, ns: &str, obj: &Object) -> Option<&Object> {
        self.existing.get(&(ns.to_string(), obj.type_info.group_resource(), obj.meta.name.clone()))
    }

    /// The objects of group-resource `gr` in `ns` that the state holds whose controlling owner
    /// is `kind`/`name` (a Deployment's ReplicaSets, a ReplicaSet's pods).
    pub fn owned(&self, ns: &str, gr: &str, kind: &str, name: &str) -> Vec<&Object> {
        self.existing
            .range((ns.to_string(), gr.to_string(), String::new())..)
            .take_while(|((n, g, _), _)| n == ns && g == gr)
            .filter(|(_, o)| o.meta.controller.as_ref().is_some_and(|(k, owner)| k == kind && owner == name))
            .map(|(_, o)| o)
            .collect()
    }

    /// The pods of workload `kind`/`name` in `ns` that the state holds (a Deployment's through
    /// its ReplicaSets) that wait for ResourceClaims not created ([`crate::objects::Pod::waits_for_claims`]).
    pub fn pods_without_claims(&self, ns: &str, kind: &str, name: &str) -> Vec<&Object> {
        self.pods_of(ns, kind, name).into_iter().filter(|o| matches!(&o.body, Body::Pod(p) if p.waits_for_claims())).collect()
    }

    /// The pods of workload `kind`/`name` in `ns` that the state holds (a Deployment's through
    /// its ReplicaSets), finished ones left out.
    pub fn pods_of(&self, ns: &str, kind: &str, name: &str) -> Vec<&Object> {
        let owners: Vec<(&str, &str)> = if kind == "Deployment" {
            self.owned(ns, "replicasets.apps", "Deployment", name).into_iter().map(|rs| ("ReplicaSet", rs.meta.name.as_str())).collect()
        } else {
            vec![(kind, name)]
        };
        owners
            .into_iter()
            .flat_map(|(k, n)| self.owned(ns, "pods", k, n))
            .filter(|o| matches!(&o.body, Body::Pod(p) if !matches!(p.phase.as_deref(), Some("Succeeded" | "Failed"))))
            .collect()
    }

    /// The ReplicaSets of Deployment `name` in `ns` that the state holds (those whose
    /// controlling owner it is), each with its template and the pods its status counts.
    pub fn revisions_of(&self, ns: &str, name: &str) -> Vec<&crate::objects::Workload> {
        self.owned(ns, "replicasets.apps", "Deployment", name)
            .into_iter()
            .filter_map(|o| match &o.body {
                Body::Workload(w) => Some(&**w),
                _ => None,
            })
            .collect()
    }

    /// Builds the state from decoded objects; objects without a namespace are placed in
    /// `default_namespace`. Kinds admission does not consult are ignored.
    pub fn from_objects<I: IntoIterator<Item = Object>>(objects: I, default_namespace: &str) -> ClusterState {
        let mut s = ClusterState::default();
        let mut quotas: BTreeMap<String, Vec<NamedQuota>> = BTreeMap::new();
        for o in objects {
            match o.body {
                // Quotas are sorted once at the end: thousands of them load in linear time.
                Body::ResourceQuota(q) => {
                    let ns = o.meta.namespace.clone().unwrap_or_else(|| default_namespace.to_string());
                    quotas.entry(ns).or_default().push(NamedQuota { name: o.meta.name, quota: *q });
                }
                _ => s.add(o, default_namespace),
            }
        }
        for (ns, mut list) in quotas {
            // A later object of the same name replaces an earlier one.
            list.reverse();
            list.sort_by(|a, b| a.name.cmp(&b.name));
            list.dedup_by(|later, earlier| later.name == earlier.name);
            s.quotas.insert(ns, list);
        }
        s
    }

    /// The autoscalers the state holds in namespace `ns` (HPAs, then KEDA's kinds) that target
    /// `workload`, by name.
    pub fn autoscalers_of<'a>(&'a self, ns: &'a str, workload: &'a Object) -> impl Iterator<Item = (&'a str, &'a crate::objects::Autoscaler)> + 'a {
        let (group, kind, name) = (workload.type_info.group.as_str(), workload.type_info.kind.as_str(), workload.meta.name.as_str());
        AUTOSCALER_TYPES.iter().filter(|t| t.sets != Sets::Requests).map(|t| t.group_resource).flat_map(move |gr| {
            let from = (ns.to_string(), gr.to_string(), String::new());
            self.existing.range(from..).take_while(move |(k, _)| k.0 == ns && k.1 == gr).filter_map(move |(k, o)| match &o.body {
                Body::Autoscaler(a) if crate::autoscaling::targets(a, group, kind, name) => Some((k.2.as_str(), a.as_ref())),
                _ => None,
            })
        })
    }

    /// Every VerticalPodAutoscaler the state holds in `ns` that targets `workload`: (name,
    /// creation time, object).
    pub fn vpas_of<'a>(&'a self, ns: &'a str, workload: &'a Object) -> impl Iterator<Item = (&'a str, &'a str, &'a crate::objects::Vpa)> + 'a {
        let from = (ns.to_string(), VPA_RESOURCE.to_string(), String::new());
        self.existing.range(from..).take_while(move |(k, _)| k.0 == ns && k.1 == VPA_RESOURCE).filter_map(move |(k, o)| match &o.body {
            Body::Vpa(v)
                if v.target
                    .as_ref()
                    .is_some_and(|t| crate::autoscaling::names(t, &workload.type_info.group, &workload.type_info.kind, &workload.meta.name)) =>
            {
                Some((k.2.as_str(), o.meta.creation_timestamp.as_deref().unwrap_or_default(), v.as_ref()))
            }
            _ => None,
        })
    }

    /// The LimitRanges of `ns`, in name order, as LimitRanger reads them.
    pub fn limit_ranges_in(&self, ns: &str) -> Vec<(&str, &[LimitRangeItem])> {
        self.limit_ranges.get(ns).map(Vec::as_slice).unwrap_or_default().iter().map(|(n, items)| (n.as_str(), items.as_slice())).collect()
    }

    /// A copy with only what admitting into `ns` consults (no existing objects): enough to
    /// try something out without charging it.
    pub fn scratch_for(&self, ns: &str) -> ClusterState {
        ClusterState {
            quotas: self.quotas.get(ns).map(|q| [(ns.to_string(), q.clone())].into()).unwrap_or_default(),
            limit_ranges: self.limit_ranges.get(ns).map(|l| [(ns.to_string(), l.clone())].into()).unwrap_or_default(),
            priority_classes: self.priority_classes.clone(),
            storage_classes: self.storage_classes.clone(),
            runtime_classes: self.runtime_classes.clone(),
            // Claim templates: a CronJob's pods get their claims from them.
            existing: self
                .existing
                .iter()
                .filter(|(k, o)| k.0 == ns && matches!(o.body, Body::ResourceClaimTemplate(_)))
                .map(|(k, o)| (k.clone(), o.clone()))
                .collect(),
            device_classes: self.device_classes.clone(),
            seen: BTreeSet::new(),
            namespaces: self.namespaces.clone(),
            terminating: self.terminating.clone(),
            service_accounts: self.service_accounts.get(ns).map(|s| [(ns.to_string(), s.clone())].into()).unwrap_or_default(),
            service_accounts_created: self.service_accounts_created.iter().filter(|(n, _)| n == ns).cloned().collect(),
            claim_templates_unknown: self.claim_templates_unknown,
            vpas_unknown: self.vpas_unknown,
            webhooks: self.webhooks.clone(),
            policies: self.policies.clone(),
            params: self.params.clone(),
            dry_runs: self.dry_runs.clone(),
            kueue: self.kueue.clone(),
        }
    }

    /// Keeps `o` among the objects that exist when it is a workload, pod or claim, and gives
    /// back any other. Such an object of the state (a snapshot) exists: creating it
    /// again is an update, as a live check finds out by reading it. Claim templates are looked
    /// up by name for the claims pods create; a stored pod is the old object of a resize
    /// (which needs a resourceVersion to be charged by delta).
    fn add_existing(&mut self, mut o: Object, ns: &str) -> Option<Object> {
        let kept = matches!(
            o.body,
            Body::Workload(_)
                | Body::Pod(_)
                | Body::PersistentVolumeClaim(_)
                | Body::ResourceClaim(_)
                | Body::ResourceClaimTemplate(_)
                | Body::Service(_)
                | Body::Autoscaler(_)
                | Body::Vpa(_)
        );
        if !kept {
            return Some(o);
        }
        // The server's stored objects always have one: the update is charged by its delta.
        if matches!(o.body, Body::Pod(_) | Body::ResourceClaim(_) | Body::ResourceClaimTemplate(_) | Body::Service(_) | Body::PersistentVolumeClaim(_)) {
            o.meta.resource_version.get_or_insert_with(|| "1".into());
        }
        o.meta.namespace = Some(ns.to_string());
        self.existing.insert((ns.to_string(), o.type_info.group_resource(), o.meta.name.clone()), o);
        None
    }

    /// Adds one object (a later object of the same name replaces an earlier one).
    pub fn add(&mut self, o: Object, default_namespace: &str) {
        let ns = o.meta.namespace.clone().unwrap_or_else(|| default_namespace.to_string());
        let name = o.meta.name.clone();
        let Some(o) = self.add_existing(o, &ns) else { return };
        match o.body {
            Body::ResourceQuota(q) => {
                let list = self.quotas.entry(ns).or_default();
                let nq = NamedQuota { name, quota: *q };
                match list.binary_search_by(|x| x.name.cmp(&nq.name)) {
                    Ok(i) => list[i] = nq,
                    Err(i) => list.insert(i, nq),
                }
            }
            Body::LimitRange(items) => {
                let list = self.limit_ranges.entry(ns).or_default();
                list.retain(|x| x.0 != name);
                list.push((name, items));
                list.sort_by(|a, b| a.0.cmp(&b.0));
            }
            Body::PriorityClass { global_default, value } => {
                self.priority_classes.get_or_insert_with(BTreeMap::new).insert(name, (global_default, value));
            }
            Body::StorageClass { is_default, allow_volume_expansion } => {
                let list = self.storage_classes.get_or_insert_with(Vec::new);
                list.retain(|x| x.name != name);
                list.push(StorageClassInfo { name, is_default, created: o.meta.creation_timestamp.clone(), allow_volume_expansion });
            }
            Body::RuntimeClass { overhead } => {
                self.runtime_classes.get_or_insert_with(BTreeMap::new).insert(name, overhead);
            }
            Body::DeviceClass { extended_resource_name } => {
                std::sync::Arc::make_mut(self.device_classes.get_or_insert_with(Default::default)).insert(name, extended_resource_name);
            }
            Body::WebhookConfiguration(c) => {
                // Mutating and validating configurations may share a name: kept apart.
                let key = format!("{}/{name}", if c.mutating { "mutating" } else { "validating" });
                std::sync::Arc::make_mut(self.webhooks.get_or_insert_with(Default::default)).insert(key, *c);
            }
            // Kueue's queues and flavors: what its ClusterQueues admit.
            Body::Kept(v) if o.type_info.group == crate::kueue::GROUP => {
                std::sync::Arc::make_mut(self.kueue.get_or_insert_with(Default::default)).add(&v, &ns);
            }
            Body::Kept(v) => {
                let ns = if o.type_info.namespaced { ns } else { String::new() };
                self.params.insert((o.type_info.group.clone(), o.type_info.kind.clone(), ns, name), v);
            }
            // A set shared already (a namespace's view) is copied first: its compiled policies
            // are shared, not compiled again.
            Body::AdmissionPolicy(p) => std::sync::Arc::make_mut(self.policies.get_or_insert_with(Default::default)).add_policy(name, *p),
            Body::PolicyBinding(b) => std::sync::Arc::make_mut(self.policies.get_or_insert_with(Default::default)).add_binding(name, *b),
            Body::Namespace { terminating } => {
                if terminating {
                    self.terminating.insert(name.clone());
                } else {
                    self.terminating.remove(&name);
                }
                self.namespaces.get_or_insert_with(BTreeMap::new).insert(name, o.meta.labels);
            }
            _ if o.type_info.kind == "ServiceAccount" && o.type_info.group.is_empty() => {
                self.service_accounts.entry(ns).or_default().insert(name);
            }
            _ => {}
        }
    }

    /// Whether the state lacks a kind (see [`Lacking`]).
    pub fn lacks(&self, kind: Lacking) -> bool {
        match kind {
            Lacking::PriorityClasses => self.priority_classes.is_none(),
            Lacking::RuntimeClasses => self.runtime_classes.is_none(),
            Lacking::StorageClasses => self.storage_classes.is_none(),
            Lacking::DeviceClasses => self.device_classes.is_none(),
            Lacking::ResourceClaimTemplates => self.claim_templates_unknown,
            // Whether a namespace's are known is asked of that namespace (see the field).
            Lacking::ServiceAccounts => true,
            Lacking::VerticalPodAutoscalers => self.vpas_unknown,
        }
    }

    /// Says the state holds every object of a kind there is, none being none (a snapshot
    /// that read the kind and found none of it).
    pub fn know_all(&mut self, kind: Lacking) {
        match kind {
            Lacking::PriorityClasses => _ = self.priority_classes.get_or_insert_with(BTreeMap::new),
            Lacking::RuntimeClasses => _ = self.runtime_classes.get_or_insert_with(BTreeMap::new),
            Lacking::StorageClasses => _ = self.storage_classes.get_or_insert_with(Vec::new),
            Lacking::DeviceClasses => _ = self.device_classes.get_or_insert_with(Default::default),
            Lacking::ResourceClaimTemplates => self.claim_templates_unknown = false,
            Lacking::ServiceAccounts => {}
            Lacking::VerticalPodAutoscalers => self.vpas_unknown = false,
        }
    }

    /// Takes a kind of cluster data as read in full: none of it that the state does not hold
    /// exists.
    pub fn read_in_full(&mut self, k: &super::cluster_kinds::ClusterKind) {
        if let Some(l) = k.lacking {
            self.know_all(l);
        }
        if k.is_webhook_configuration() {
            _ = self.webhooks.get_or_insert_with(Default::default);
        }
    }

    /// Takes a kind of cluster data as not read (in full), whatever the state holds of it;
    /// after [`ClusterState::read_in_full`] of the others. The webhook configurations are
    /// known together or not at all: the webhooks a request meets are named in full or not;
    /// so are Kueue's kinds.
    pub fn not_read(&mut self, k: &super::cluster_kinds::ClusterKind) {
        if let Some(l) = k.lacking {
            self.forget(l);
        }
        if k.is_webhook_configuration() {
            self.webhooks = None;
        }
        // Kueue's kinds answer together: without one of them its ClusterQueues are not
        // replayed (a LocalQueue not read is not one that does not exist).
        if k.group == crate::kueue::GROUP {
            self.kueue = None;
        }
    }

    /// Says the state does not know a kind (it could not be read), whatever it holds of it.
    pub fn forget(&mut self, kind: Lacking) {
        match kind {
            Lacking::PriorityClasses => self.priority_classes = None,
            Lacking::RuntimeClasses => self.runtime_classes = None,
            Lacking::StorageClasses => self.storage_classes = None,
            Lacking::DeviceClasses => self.device_classes = None,
            Lacking::ResourceClaimTemplates => self.claim_templates_unknown = true,
            Lacking::ServiceAccounts => self.service_accounts.clear(),
            Lacking::VerticalPodAutoscalers => self.vpas_unknown = true,
        }
    }

    /// Namespaces that have quotas.
    pub fn quota_namespaces(&self) -> Vec<&str> {
        self.quotas.iter().filter(|(_, v)| !v.is_empty()).map(|(k, _)| k.as_str()).collect()
    }
}
