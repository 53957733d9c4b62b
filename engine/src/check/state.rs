//! The cluster state a check consults and charges: quotas, LimitRanges, classes, existing
//! objects, and the usage each admitted document adds.

use std::collections::{BTreeMap, BTreeSet};

use crate::admission::NamedQuota;
use crate::objects::{Body, LimitRangeItem, Object};
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
    /// StorageClasses (name, is default, creationTimestamp); `None` when unknown.
    pub storage_classes: Option<Vec<(String, bool, Option<String>)>>,
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
}

impl ClusterState {
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
        }
    }

    /// Adds one object (a later object of the same name replaces an earlier one).
    pub fn add(&mut self, o: Object, default_namespace: &str) {
        let ns = o.meta.namespace.clone().unwrap_or_else(|| default_namespace.to_string());
        let name = o.meta.name.clone();
        // A workload, pod or claim of the state (a snapshot) exists: creating it again is an
        // update, as a live check finds out by reading it.
        // Claim templates are looked up by name for the claims pods create; a stored pod is
        // the old object of a resize (which needs a resourceVersion to be charged by delta).
        if matches!(
            o.body,
            Body::Workload(_) | Body::Pod(_) | Body::PersistentVolumeClaim(_) | Body::ResourceClaim(_) | Body::ResourceClaimTemplate(_) | Body::Service(_)
        ) {
            let mut e = o;
            // The server's stored objects always have one: the update is charged by its delta.
            if matches!(e.body, Body::Pod(_) | Body::ResourceClaim(_) | Body::ResourceClaimTemplate(_) | Body::Service(_) | Body::PersistentVolumeClaim(_)) {
                e.meta.resource_version.get_or_insert_with(|| "1".into());
            }
            e.meta.namespace = Some(ns.clone());
            self.existing.insert((ns, e.type_info.group_resource(), name), e);
            return;
        }
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
            Body::StorageClass { is_default } => {
                let list = self.storage_classes.get_or_insert_with(Vec::new);
                list.retain(|x| x.0 != name);
                list.push((name, is_default, o.meta.creation_timestamp.clone()));
            }
            Body::RuntimeClass { overhead } => {
                self.runtime_classes.get_or_insert_with(BTreeMap::new).insert(name, overhead);
            }
            Body::DeviceClass { extended_resource_name } => {
                std::sync::Arc::make_mut(self.device_classes.get_or_insert_with(Default::default)).insert(name, extended_resource_name);
            }
            _ if o.type_info.kind == "Namespace" && o.type_info.group.is_empty() => {
                self.namespaces.get_or_insert_with(BTreeMap::new).insert(name, o.meta.labels);
            }
            _ => {}
        }
    }

    /// Namespaces that have quotas.
    pub fn quota_namespaces(&self) -> Vec<&str> {
        self.quotas.iter().filter(|(_, v)| !v.is_empty()).map(|(k, _)| k.as_str()).collect()
    }
}
