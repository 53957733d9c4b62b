//! What the guard answers from: every ResourceQuota, LimitRange, PriorityClass, StorageClass,
//! RuntimeClass, DeviceClass, Namespace, HorizontalPodAutoscaler and KEDA ScaledObject (where
//! served), the admission policies with their bindings (where served) and the admission webhook
//! configurations, kept by list+watch (`live::watch_kind`), so no
//! API call is made while a request waits. A request takes a copy of its namespace's part
//! ([`Cache::for_namespace`]) and decides without holding any lock.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::RwLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use kubectl_quota_engine::admission::NamedQuota;
use kubectl_quota_engine::check::cluster_kinds::{self, ClusterKind};
use kubectl_quota_engine::check::ClusterState;
use kubectl_quota_engine::objects::{autoscaler_types, Object};
use kubectl_quota_engine::quantity::Quantity;
use kubectl_quota_engine::resources::ResourceList;

use super::review::LABEL;
use crate::live::Change;

/// The kinds the guard caches, in the order they are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    ResourceQuotas,
    LimitRanges,
    PriorityClasses,
    StorageClasses,
    RuntimeClasses,
    DeviceClasses,
    Namespaces,
    /// HorizontalPodAutoscalers: the replicas of the workloads they target.
    Autoscalers,
    /// Names only: a workload's pods naming one that does not exist are refused.
    ServiceAccounts,
    /// KEDA's ScaledObjects (where keda.sh is served): the autoscaler behind the HPA KEDA makes.
    ScaledObjects,
    /// VerticalPodAutoscalers (where autoscaling.k8s.io is served): the requests their
    /// webhook writes into the pods of the workloads they target.
    Vpas,
    /// The admission policies and their bindings (where served: validating from 1.30,
    /// mutating from 1.36): what they change or refuse in a workload's pods.
    ValidatingPolicies,
    ValidatingPolicyBindings,
    MutatingPolicies,
    MutatingPolicyBindings,
    /// The admission webhook configurations: which webhooks a workload's pods meet (named
    /// where the answer rests on them; a mutating one's pod asked for in a dry run where the
    /// guard was told to).
    MutatingWebhooks,
    ValidatingWebhooks,
    /// Kueue's flavors and queues (where kueue.x-k8s.io is served): whether a Job in one of
    /// its queues is admitted now.
    ResourceFlavors,
    ClusterQueues,
    LocalQueues,
    Cohorts,
}

impl Kind {
    pub const ALL: [Kind; 21] = [
        Kind::ResourceQuotas,
        Kind::LimitRanges,
        Kind::PriorityClasses,
        Kind::StorageClasses,
        Kind::RuntimeClasses,
        Kind::DeviceClasses,
        Kind::Namespaces,
        Kind::Autoscalers,
        Kind::ServiceAccounts,
        Kind::ScaledObjects,
        Kind::Vpas,
        Kind::ValidatingPolicies,
        Kind::ValidatingPolicyBindings,
        Kind::MutatingPolicies,
        Kind::MutatingPolicyBindings,
        Kind::MutatingWebhooks,
        Kind::ValidatingWebhooks,
        Kind::ResourceFlavors,
        Kind::ClusterQueues,
        Kind::LocalQueues,
        Kind::Cohorts,
    ];

    /// Its row of the cluster-data kinds: what is watched, at which version, where served.
    pub fn row(self) -> &'static ClusterKind {
        let (group, kind) = match self {
            Kind::ResourceQuotas => ("", "ResourceQuota"),
            Kind::LimitRanges => ("", "LimitRange"),
            Kind::PriorityClasses => ("scheduling.k8s.io", "PriorityClass"),
            Kind::StorageClasses => ("storage.k8s.io", "StorageClass"),
            Kind::RuntimeClasses => ("node.k8s.io", "RuntimeClass"),
            Kind::DeviceClasses => ("resource.k8s.io", "DeviceClass"),
            Kind::Namespaces => ("", "Namespace"),
            Kind::Autoscalers => (autoscaler_types::HPA.group, autoscaler_types::HPA.kind),
            Kind::ServiceAccounts => ("", "ServiceAccount"),
            Kind::ScaledObjects => (autoscaler_types::SCALED_OBJECT.group, autoscaler_types::SCALED_OBJECT.kind),
            Kind::Vpas => (autoscaler_types::VPA.group, autoscaler_types::VPA.kind),
            Kind::ValidatingPolicies => (ADMISSION, "ValidatingAdmissionPolicy"),
            Kind::ValidatingPolicyBindings => (ADMISSION, "ValidatingAdmissionPolicyBinding"),
            Kind::MutatingPolicies => (ADMISSION, "MutatingAdmissionPolicy"),
            Kind::MutatingPolicyBindings => (ADMISSION, "MutatingAdmissionPolicyBinding"),
            Kind::MutatingWebhooks => (ADMISSION, "MutatingWebhookConfiguration"),
            Kind::ValidatingWebhooks => (ADMISSION, "ValidatingWebhookConfiguration"),
            Kind::ResourceFlavors | Kind::ClusterQueues | Kind::LocalQueues | Kind::Cohorts => {
                (kubectl_quota_engine::kueue::GROUP, self.kueue_kind().unwrap_or_default())
            }
        };
        cluster_kinds::row(group, kind).expect("every kind the guard caches has a row")
    }

    /// The resource's name (`plural.group`), as metrics and `/status` show it.
    pub fn resource(self) -> &'static str {
        self.row().group_resource
    }

    /// For an admission policy kind: (mutating, bindings).
    fn policy_kind(self) -> Option<(bool, bool)> {
        match self {
            Kind::ValidatingPolicies => Some((false, false)),
            Kind::ValidatingPolicyBindings => Some((false, true)),
            Kind::MutatingPolicies => Some((true, false)),
            Kind::MutatingPolicyBindings => Some((true, true)),
            _ => None,
        }
    }

    /// For a kind of Kueue's: its kind.
    fn kueue_kind(self) -> Option<&'static str> {
        match self {
            Kind::ResourceFlavors => Some("ResourceFlavor"),
            Kind::ClusterQueues => Some("ClusterQueue"),
            Kind::LocalQueues => Some("LocalQueue"),
            Kind::Cohorts => Some("Cohort"),
            _ => None,
        }
    }

    /// For a webhook configuration kind: whether it is the mutating one.
    fn webhook_kind(self) -> Option<bool> {
        match self {
            Kind::MutatingWebhooks => Some(true),
            Kind::ValidatingWebhooks => Some(false),
            _ => None,
        }
    }
}

const ADMISSION: &str = "admissionregistration.k8s.io";

/// The key a webhook configuration is kept under in [`ClusterState::webhooks`] (mutating and
/// validating ones may share a name).
fn webhook_key(mutating: bool, name: &str) -> String {
    format!("{}/{name}", if mutating { "mutating" } else { "validating" })
}

/// One kind's bookkeeping.
#[derive(Default)]
struct KindState {
    /// A (re)list in progress: the objects listed so far, swapped in when the list ends.
    shadow: std::sync::Mutex<Option<ClusterState>>,
    synced: AtomicBool,
    objects: AtomicUsize,
    /// Unix milliseconds of the last list or change.
    changed_ms: AtomicU64,
    failures: AtomicU64,
    /// Lists completed: the first, then one after each 410 Gone (or other reason to list again).
    lists: AtomicU64,
}

/// The cached cluster, shared by the watches (writers) and the requests (readers).
pub struct Cache {
    state: RwLock<ClusterState>,
    quantities: Quantities,
    kinds: [KindState; Kind::ALL.len()],
    started: Instant,
    /// Changes of the webhook configurations seen: a dry run's answer kept from before one is
    /// asked again.
    webhook_changes: AtomicU64,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

impl Default for Cache {
    fn default() -> Self {
        Cache {
            state: RwLock::new(ClusterState::default()),
            quantities: Quantities::default(),
            kinds: Default::default(),
            started: Instant::now(),
            webhook_changes: AtomicU64::new(0),
        }
    }
}

/// What `/status` and `/metrics` say of one kind.
pub struct KindReport {
    pub kind: Kind,
    pub synced: bool,
    pub objects: usize,
    /// Seconds since the last list or change (`None` before the first list).
    pub age_seconds: Option<f64>,
    pub failures: u64,
    pub lists: u64,
}

/// What the cache keeps of an object: what deciding reads, and nothing else. A quota loses its
/// typed copy (`raw`, which only a quota checked as a document needs) and, once synced, its
/// `spec.hard` (admission reads `status.hard`; only `describe`'s views and hints read the
/// spec); a namespace keeps its labels, which the namespaceSelectors of webhooks and admission
/// policies read (besides the guard's own label and DRA's admin-access); no other object
/// keeps annotations or labels other than those two. A quota's quantities are
/// shared: each (`0`, `8`, `16Gi`) is held once, as [`Quantities`] says.
pub fn keep(mut o: Object, shared: &Quantities) -> Object {
    use kubectl_quota_engine::object_validation::ADMIN_ACCESS_LABEL;
    if let kubectl_quota_engine::objects::Body::ResourceQuota(q) = &mut o.body {
        q.raw = None;
        if q.has_status {
            q.spec_hard = Default::default();
        }
        shared.share(&mut q.spec_hard);
        shared.share(&mut q.status_hard);
        shared.share(&mut q.status_used);
    }
    o.meta.annotations = Default::default();
    if !matches!(o.body, kubectl_quota_engine::objects::Body::Namespace { .. }) {
        o.meta.labels.retain(|k, _| k == LABEL || k == ADMIN_ACCESS_LABEL);
    }
    o
}

/// The quantities the cached quotas hold, one of each: a quota's is replaced by the one kept,
/// whose text its clones share, instead of each quota holding its own copy of `0` (a few
/// dozen bytes each, tens of thousands of times over). At most [`Quantities::MAX`] are kept:
/// past that a new one is left as it is, so values that keep changing (usage) cannot make it
/// grow without end.
#[derive(Default)]
pub struct Quantities(std::sync::Mutex<std::collections::HashMap<String, Vec<Quantity>>>);

impl Quantities {
    pub const MAX: usize = 10_000;

    fn share(&self, list: &mut ResourceList) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for q in list.values_mut() {
            let text = q.to_string();
            if let Some(same) = kept.get(&text).and_then(|v| v.iter().find(|k| k.is_identical(q))) {
                *q = same.clone();
            } else if kept.len() < Self::MAX {
                // Equal values spelled in another format (`1k`, `1e3`) are kept apart, a few
                // at most.
                let same_value = kept.entry(text).or_default();
                if same_value.len() < 4 {
                    same_value.push(q.clone());
                }
            }
        }
    }
}

impl Cache {
    /// What the cache keeps of an object (see [`keep`]).
    pub fn keep(&self, o: Object) -> Object {
        keep(o, &self.quantities)
    }

    fn slot(&self, k: Kind) -> &KindState {
        &self.kinds[k as usize]
    }

    /// Takes a kind as listed and empty without watching it (a kind the server does not serve).
    pub fn not_served(&self, k: Kind) {
        self.apply(k, Change::ListBegin);
        self.apply(k, Change::ListEnd);
    }

    /// Whether every kind has been listed once.
    pub fn ready(&self) -> bool {
        Kind::ALL.iter().all(|k| self.slot(*k).synced.load(Ordering::SeqCst))
    }

    /// Each kind's bookkeeping.
    pub fn report(&self) -> Vec<KindReport> {
        let now = now_ms();
        Kind::ALL
            .iter()
            .map(|k| {
                let s = self.slot(*k);
                let changed = s.changed_ms.load(Ordering::SeqCst);
                KindReport {
                    kind: *k,
                    synced: s.synced.load(Ordering::SeqCst),
                    objects: s.objects.load(Ordering::SeqCst),
                    age_seconds: (changed > 0).then(|| now.saturating_sub(changed) as f64 / 1000.0),
                    failures: s.failures.load(Ordering::SeqCst),
                    lists: s.lists.load(Ordering::SeqCst),
                }
            })
            .collect()
    }

    /// Seconds since the guard started.
    pub fn uptime_seconds(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Takes one change of a watch of kind `k`. A (re)list is built apart and swapped in whole
    /// when it ends: requests meanwhile see the kind as it was.
    pub fn apply(&self, k: Kind, change: Change) {
        let slot = self.slot(k);
        let shadow = || slot.shadow.lock().unwrap_or_else(|e| e.into_inner());
        match change {
            Change::Failed(e) => {
                slot.failures.fetch_add(1, Ordering::SeqCst);
                crate::error::print_err(&format!("guard: {}\n", crate::escape::escape(&e)));
                return;
            }
            Change::ListBegin => {
                *shadow() = Some(ClusterState::default());
                return;
            }
            Change::Listed(o) => {
                if let Some(s) = shadow().as_mut() {
                    s.add(o, "");
                }
                return;
            }
            Change::ListEnd => {
                let listed = shadow().take().unwrap_or_default();
                let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
                take_kind(&mut state, listed, k);
                slot.synced.store(true, Ordering::SeqCst);
                slot.lists.fetch_add(1, Ordering::SeqCst);
                slot.objects.store(count(&state, k), Ordering::SeqCst);
            }
            Change::Applied(o) => {
                let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
                state.add(o, "");
                slot.objects.store(count(&state, k), Ordering::SeqCst);
            }
            Change::Deleted(o) => {
                let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
                remove(&mut state, k, &o);
                slot.objects.store(count(&state, k), Ordering::SeqCst);
            }
        }
        slot.changed_ms.store(now_ms(), Ordering::SeqCst);
        if k.webhook_kind().is_some() {
            self.webhook_changes.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// How many changes of the webhook configurations (lists and events) were taken so far.
    pub fn webhook_changes(&self) -> u64 {
        self.webhook_changes.load(Ordering::SeqCst)
    }

    /// Whether an autoscaler of `kind` (`HorizontalPodAutoscaler`, `ScaledObject`,
    /// `VerticalPodAutoscaler`) named `name`
    /// is cached in `ns`.
    pub fn has_autoscaler(&self, ns: &str, kind: &str, name: &str) -> bool {
        let gr = match kind {
            "HorizontalPodAutoscaler" => HPAS,
            "ScaledObject" => SCALED_OBJECTS,
            "VerticalPodAutoscaler" => VPAS,
            _ => return false,
        };
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        state.existing.contains_key(&(ns.to_string(), gr.to_string(), name.to_string()))
    }

    /// Every cached autoscaler that acts on its own (not an HPA KEDA made for a ScaledObject),
    /// with its namespace: copies, taken at once.
    pub fn autoscalers(&self) -> Vec<(String, Object)> {
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        autoscalers(&state)
            .filter(|(_, o)| matches!(&o.body, kubectl_quota_engine::objects::Body::Autoscaler(a) if a.made_for.is_none()))
            .map(|(k, o)| (k.0.clone(), o.clone()))
            .collect()
    }

    /// What deciding a request in `ns` consults: the namespace's quotas and LimitRanges, the
    /// classes, and the namespace with its labels (when cached: a namespace created a moment
    /// ago may not be yet, and is then taken as unknown rather than missing).
    pub fn for_namespace(&self, ns: &str) -> (ClusterState, BTreeMap<String, String>) {
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        let labels = state.namespaces.as_ref().and_then(|n| n.get(ns)).cloned();
        let copy = ClusterState {
            quotas: state.quotas.get(ns).map(|q| [(ns.to_string(), q.clone())].into()).unwrap_or_default(),
            limit_ranges: state.limit_ranges.get(ns).map(|l| [(ns.to_string(), l.clone())].into()).unwrap_or_default(),
            priority_classes: state.priority_classes.clone(),
            storage_classes: state.storage_classes.clone(),
            runtime_classes: state.runtime_classes.clone(),
            device_classes: state.device_classes.clone(),
            namespaces: labels.clone().map(|l| [(ns.to_string(), l)].into()),
            existing: autoscaler_entries(&state, ns).map(|(k, o)| (k.clone(), o.clone())).collect(),
            terminating: state.terminating.get(ns).map(|n| [n.clone()].into()).unwrap_or_default(),
            service_accounts: state.service_accounts.get(ns).map(|s| [(ns.to_string(), s.clone())].into()).unwrap_or_default(),
            service_accounts_created: Default::default(),
            // Compiled once, shared by every request.
            policies: state.policies.clone(),
            webhooks: state.webhooks.clone(),
            kueue: state.kueue.clone(),
            ..ClusterState::default()
        };
        (copy, labels.unwrap_or_default())
    }
}

/// The group-resources autoscalers are kept under in the state's existing objects.
const HPAS: &str = autoscaler_types::HPA.group_resource;
const SCALED_OBJECTS: &str = autoscaler_types::SCALED_OBJECT.group_resource;
const VPAS: &str = autoscaler_types::VPA.group_resource;

/// The cached autoscalers (VerticalPodAutoscalers too) of namespace `ns`.
fn autoscaler_entries<'a>(s: &'a ClusterState, ns: &'a str) -> impl Iterator<Item = (&'a (String, String, String), &'a Object)> + 'a {
    [HPAS, SCALED_OBJECTS, VPAS]
        .into_iter()
        .flat_map(move |gr| s.existing.range((ns.to_string(), gr.to_string(), String::new())..).take_while(move |(k, _)| k.0 == ns && k.1 == gr))
}

/// Every cached autoscaler: (namespace, group-resource, name) and the object.
pub fn autoscalers(s: &ClusterState) -> impl Iterator<Item = (&(String, String, String), &Object)> {
    s.existing.iter().filter(|(k, _)| k.1 == HPAS || k.1 == SCALED_OBJECTS)
}

/// Replaces kind `k`'s objects in `s` with those `listed` holds, leaving the kind known.
fn take_kind(s: &mut ClusterState, listed: ClusterState, k: Kind) {
    match k {
        Kind::ResourceQuotas => {
            s.quotas = listed.quotas;
            // A namespace's quotas were pushed one at a time: no room kept for more.
            s.quotas.values_mut().for_each(Vec::shrink_to_fit);
        }
        Kind::LimitRanges => s.limit_ranges = listed.limit_ranges,
        Kind::PriorityClasses => s.priority_classes = Some(listed.priority_classes.unwrap_or_default()),
        Kind::StorageClasses => s.storage_classes = Some(listed.storage_classes.unwrap_or_default()),
        Kind::RuntimeClasses => s.runtime_classes = Some(listed.runtime_classes.unwrap_or_default()),
        Kind::DeviceClasses => s.device_classes = Some(listed.device_classes.unwrap_or_default()),
        Kind::Autoscalers | Kind::ScaledObjects | Kind::Vpas => {
            let gr = k.resource();
            s.existing.retain(|k, _| k.1 != gr);
            s.existing.extend(listed.existing.into_iter().filter(|(k, _)| k.1 == gr));
        }
        Kind::Namespaces => {
            s.namespaces = Some(listed.namespaces.unwrap_or_default());
            s.terminating = listed.terminating;
        }
        Kind::ServiceAccounts => s.service_accounts = listed.service_accounts,
        Kind::ValidatingPolicies | Kind::ValidatingPolicyBindings | Kind::MutatingPolicies | Kind::MutatingPolicyBindings => {
            let (mutating, bindings) = k.policy_kind().unwrap_or_default();
            let from = listed.policies.unwrap_or_default();
            std::sync::Arc::make_mut(s.policies.get_or_insert_with(Default::default)).replace_kind(mutating, bindings, &from);
        }
        Kind::MutatingWebhooks | Kind::ValidatingWebhooks => {
            let mutating = k.webhook_kind().unwrap_or_default();
            let listed = listed.webhooks.map(|w| (*w).clone()).unwrap_or_default();
            let kept = std::sync::Arc::make_mut(s.webhooks.get_or_insert_with(Default::default));
            kept.retain(|_, c| c.mutating != mutating);
            kept.extend(listed.into_iter().filter(|(_, c)| c.mutating == mutating));
        }
        Kind::ResourceFlavors | Kind::ClusterQueues | Kind::LocalQueues | Kind::Cohorts => {
            let from = listed.kueue.unwrap_or_default();
            std::sync::Arc::make_mut(s.kueue.get_or_insert_with(Default::default)).replace_kind(k.kueue_kind().unwrap_or_default(), &from);
        }
    }
}

fn remove(s: &mut ClusterState, k: Kind, o: &Object) {
    let name = o.meta.name.as_str();
    let ns = o.meta.namespace.as_deref().unwrap_or("");
    match k {
        Kind::ResourceQuotas => {
            if let Some(list) = s.quotas.get_mut(ns) {
                list.retain(|q: &NamedQuota| q.name != name);
                if list.is_empty() {
                    s.quotas.remove(ns);
                }
            }
        }
        Kind::LimitRanges => {
            if let Some(list) = s.limit_ranges.get_mut(ns) {
                list.retain(|l| l.0 != name);
                if list.is_empty() {
                    s.limit_ranges.remove(ns);
                }
            }
        }
        Kind::PriorityClasses => {
            s.priority_classes.as_mut().map(|m| m.remove(name));
        }
        Kind::StorageClasses => {
            if let Some(v) = s.storage_classes.as_mut() {
                v.retain(|c| c.name != name);
            }
        }
        Kind::RuntimeClasses => {
            s.runtime_classes.as_mut().map(|m| m.remove(name));
        }
        Kind::DeviceClasses => {
            if let Some(d) = s.device_classes.as_mut() {
                std::sync::Arc::make_mut(d).remove(name);
            }
        }
        Kind::Namespaces => {
            s.namespaces.as_mut().map(|m| m.remove(name));
            s.terminating.remove(name);
        }
        Kind::ServiceAccounts => {
            if let Some(set) = s.service_accounts.get_mut(ns) {
                set.remove(name);
                if set.is_empty() {
                    s.service_accounts.remove(ns);
                }
            }
        }
        Kind::Autoscalers | Kind::ScaledObjects | Kind::Vpas => {
            s.existing.remove(&(ns.to_string(), k.resource().to_string(), name.to_string()));
        }
        Kind::ValidatingPolicies | Kind::ValidatingPolicyBindings | Kind::MutatingPolicies | Kind::MutatingPolicyBindings => {
            let (mutating, bindings) = k.policy_kind().unwrap_or_default();
            if let Some(set) = s.policies.as_mut() {
                std::sync::Arc::make_mut(set).remove(mutating, bindings, name);
            }
        }
        Kind::MutatingWebhooks | Kind::ValidatingWebhooks => {
            if let Some(w) = s.webhooks.as_mut() {
                std::sync::Arc::make_mut(w).remove(&webhook_key(k.webhook_kind().unwrap_or_default(), name));
            }
        }
        Kind::ResourceFlavors | Kind::ClusterQueues | Kind::LocalQueues | Kind::Cohorts => {
            if let Some(q) = s.kueue.as_mut() {
                std::sync::Arc::make_mut(q).remove(k.kueue_kind().unwrap_or_default(), ns, name);
            }
        }
    }
}

fn count(s: &ClusterState, k: Kind) -> usize {
    match k {
        Kind::ResourceQuotas => s.quotas.values().map(Vec::len).sum(),
        Kind::LimitRanges => s.limit_ranges.values().map(Vec::len).sum(),
        Kind::PriorityClasses => s.priority_classes.as_ref().map_or(0, BTreeMap::len),
        Kind::StorageClasses => s.storage_classes.as_ref().map_or(0, Vec::len),
        Kind::RuntimeClasses => s.runtime_classes.as_ref().map_or(0, BTreeMap::len),
        Kind::DeviceClasses => s.device_classes.as_ref().map_or(0, |d| d.len()),
        Kind::Namespaces => s.namespaces.as_ref().map_or(0, BTreeMap::len),
        Kind::Autoscalers | Kind::ScaledObjects | Kind::Vpas => s.existing.keys().filter(|key| key.1 == k.resource()).count(),
        Kind::ServiceAccounts => s.service_accounts.values().map(BTreeSet::len).sum(),
        Kind::ValidatingPolicies | Kind::ValidatingPolicyBindings | Kind::MutatingPolicies | Kind::MutatingPolicyBindings => {
            let (mutating, bindings) = k.policy_kind().unwrap_or_default();
            s.policies.as_ref().map_or(0, |p| p.count(mutating, bindings))
        }
        Kind::MutatingWebhooks | Kind::ValidatingWebhooks => {
            let mutating = k.webhook_kind().unwrap_or_default();
            s.webhooks.as_ref().map_or(0, |w| w.values().filter(|c| c.mutating == mutating).count())
        }
        Kind::ResourceFlavors | Kind::ClusterQueues | Kind::LocalQueues | Kind::Cohorts => {
            s.kueue.as_ref().map_or(0, |q| q.count(k.kueue_kind().unwrap_or_default()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubectl_quota_engine::manifest;
    use kubectl_quota_engine::objects::decode;

    /// The guard caches exactly the kinds the table says it watches: a row marked watched
    /// that no cache slot keeps would never be read, and the other way round a slot would
    /// wait for a watch its ClusterRole does not allow.
    #[test]
    fn the_cache_keeps_every_kind_the_table_says_the_guard_watches() {
        let mut slots: Vec<&str> = Kind::ALL.iter().map(|k| k.resource()).collect();
        let mut watched: Vec<&str> = cluster_kinds::watched().map(|k| k.group_resource).collect();
        slots.sort_unstable();
        watched.sort_unstable();
        assert_eq!(slots, watched);
    }

    #[test]
    fn equal_quantities_are_kept_once_and_no_more_than_the_cap() {
        let shared = Quantities::default();
        let list = |v: &str| -> ResourceList { [("pods".to_string(), v.parse().unwrap())].into() };
        let (mut a, mut b) = (list("10"), list("10"));
        shared.share(&mut a);
        shared.share(&mut b);
        assert!(a["pods"].is_identical(&b["pods"]));
        assert_eq!(shared.0.lock().unwrap().len(), 1);
        for i in 0..Quantities::MAX + 50 {
            shared.share(&mut list(&i.to_string()));
        }
        assert_eq!(shared.0.lock().unwrap().len(), Quantities::MAX);
    }

    /// Objects as the watches hand them in (Kueue's kept whole).
    fn objs(text: &str) -> Vec<Object> {
        manifest::parse_str("t.yaml", text)
            .unwrap()
            .into_iter()
            .map(|d| {
                let mut o = decode(&d).unwrap();
                kubectl_quota_engine::objects::keep_source(&mut o, d.value, false);
                o
            })
            .collect()
    }

    fn list(c: &Cache, k: Kind, objs: Vec<Object>) {
        c.apply(k, Change::ListBegin);
        objs.into_iter().for_each(|o| c.apply(k, Change::Listed(o)));
        c.apply(k, Change::ListEnd);
    }

    const QUOTA: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: a}\nspec: {hard: {pods: '1'}}\n";
    const NS: &str = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: {team: x, kubectl-quota.io/guard: enforce}}\n";

    #[test]
    fn a_list_replaces_a_kind_and_changes_follow() {
        let c = Cache::default();
        assert!(!c.ready());
        list(&c, Kind::ResourceQuotas, objs(QUOTA));
        assert_eq!(c.for_namespace("a").0.quotas["a"].len(), 1);
        c.apply(Kind::ResourceQuotas, Change::Deleted(objs(QUOTA).remove(0)));
        assert!(c.for_namespace("a").0.quotas.is_empty());
        c.apply(Kind::ResourceQuotas, Change::Applied(objs(QUOTA).remove(0)));
        c.apply(Kind::ResourceQuotas, Change::ListBegin);
        assert_eq!(c.for_namespace("a").0.quotas["a"].len(), 1, "until a list ends, requests see the kind as it was");
        c.apply(Kind::ResourceQuotas, Change::ListEnd);
        assert!(c.for_namespace("a").0.quotas.is_empty(), "a list forgets what it does not hold");
        for k in Kind::ALL {
            if k != Kind::ResourceQuotas {
                c.not_served(k);
            }
        }
        assert!(c.ready());
    }

    #[test]
    fn policies_and_bindings_are_kept_apart_per_kind() {
        let c = Cache::default();
        let vap =
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec: {validations: [{expression: 'true'}]}\n";
        let binding = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: p}\nspec: {policyName: p, validationActions: [Deny]}\n";
        list(&c, Kind::ValidatingPolicies, objs(vap));
        list(&c, Kind::ValidatingPolicyBindings, objs(binding));
        let kept = |c: &Cache| c.for_namespace("a").0.policies.map(|p| (p.count(false, false), p.count(false, true)));
        assert_eq!(kept(&c), Some((1, 1)));
        // A list of the bindings leaves the policies as they are, and a deletion removes one.
        list(&c, Kind::ValidatingPolicyBindings, vec![]);
        assert_eq!(kept(&c), Some((1, 0)));
        c.apply(Kind::ValidatingPolicies, Change::Deleted(objs(vap).remove(0)));
        assert_eq!(kept(&c), Some((0, 0)));
    }

    #[test]
    fn a_request_sees_its_namespace_only() {
        let c = Cache::default();
        list(&c, Kind::Namespaces, objs(NS));
        list(&c, Kind::ResourceQuotas, objs(&QUOTA.replace("namespace: a", "namespace: b")));
        let (s, labels) = c.for_namespace("a");
        assert!(s.quotas.is_empty());
        assert_eq!(labels.get(LABEL).map(String::as_str), Some("enforce"));
        assert_eq!(labels.get("team").map(String::as_str), Some("x"), "the cache keeps what it is given");
        assert_eq!(keep(objs(NS).remove(0), &Quantities::default()).meta.labels.len(), 2, "a namespace's labels are read by namespaceSelectors");
        assert_eq!(keep(objs(QUOTA).remove(0), &Quantities::default()).meta.labels.len(), 0, "another object's are read by none");
        assert_eq!(s.namespaces.unwrap().len(), 1);
        assert!(c.for_namespace("new").0.namespaces.is_none(), "a namespace not cached yet is unknown, not missing");
    }

    /// A namespace `shop` labelled for a sidecar injector (100m a pod), its quota of 1 cpu,
    /// the guard's own registration and another validating webhook.
    const INJECTED: &str = "\
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {inject: 'yes'}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: shop}
spec: {hard: {requests.cpu: '1'}}
status: {hard: {requests.cpu: '1'}, used: {requests.cpu: '0'}}
";
    const INJECTOR: &str = "\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: injector}
webhooks: [{name: sidecar.kq.test, clientConfig: {url: 'https://127.0.0.1:1/inject'}, rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [pods]}], namespaceSelector: {matchLabels: {inject: 'yes'}}, sideEffects: None, admissionReviewVersions: [v1]}]
";
    const VALIDATING: &str = "\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: kubectl-quota-guard}
webhooks: [{name: guard.kubectl-quota.io, clientConfig: {url: 'https://127.0.0.1:2/validate'}, rules: [{operations: [CREATE, UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}], sideEffects: None, admissionReviewVersions: [v1]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: other-guard}
webhooks: [{name: guard.other.test, clientConfig: {url: 'https://127.0.0.1:3/validate'}, rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [pods]}], failurePolicy: Fail, sideEffects: None, admissionReviewVersions: [v1]}]
";

    fn deployment(replicas: u32) -> super::super::review::Request {
        let shop = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "shop", "namespace": "shop"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "shop"}},
                "template": {"metadata": {"labels": {"app": "shop"}}, "spec": {"containers": [{"name": "app", "image": "x", "resources": {"requests": {"cpu": "200m"}}}]}}}});
        let r = serde_json::json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"}, "operation": "CREATE", "namespace": "shop", "object": shop}});
        super::super::review::parse(serde_json::to_vec(&r).unwrap()).unwrap()
    }

    #[test]
    fn webhook_configurations_are_cached_per_kind_and_a_workloads_warning_names_the_ones_its_pods_meet() {
        use kubectl_quota_engine::check::CheckOptions;
        let c = Cache::default();
        let all = objs(INJECTED);
        // As the watches hand them in: through keep.
        list(&c, Kind::Namespaces, all.iter().filter(|o| o.type_info.kind == "Namespace").map(|o| c.keep(o.clone())).collect());
        list(&c, Kind::ResourceQuotas, all.into_iter().filter(|o| o.type_info.kind == "ResourceQuota").collect());
        list(&c, Kind::MutatingWebhooks, objs(INJECTOR));
        list(&c, Kind::ValidatingWebhooks, objs(VALIDATING));
        assert_eq!((count(&c.state.read().unwrap(), Kind::MutatingWebhooks), count(&c.state.read().unwrap(), Kind::ValidatingWebhooks)), (1, 2));
        let opts = CheckOptions { namespace: "shop".into(), ..CheckOptions::default() };
        let decide = |replicas| super::super::review::decide(deployment(replicas), c.for_namespace("shop").0, &opts, false).warnings;
        let mutating = "mutating webhook sidecar.kq.test (injector) sees its pods: what it changes (a sidecar's requests, say) is in no API, so this answer is for its pods as written and rests on it";
        // 4 pods of 200m fit as written, not with the sidecar: said, and on what it rests.
        assert_eq!(decide(4), ["the pods of deployment/shop fit quota as written", mutating]);
        // 6 do not fit even as written: the refusal, then every webhook the answer rests on;
        // another guard's registration is named, the guard's own never.
        let said = decide(6);
        assert!(said[0].starts_with("quota compute will refuse 1 of the 6 pods of deployment/shop"), "{said:?}");
        assert_eq!(said[1], mutating);
        assert!(said[2].starts_with("validating webhook guard.other.test (other-guard) sees its pods: it may refuse"), "{said:?}");
        assert_eq!(said.len(), 3, "{said:?}");
        // A list of the validating ones leaves the mutating one; a deletion removes it.
        list(&c, Kind::ValidatingWebhooks, vec![]);
        assert_eq!(decide(6).len(), 2);
        let before = c.webhook_changes();
        c.apply(Kind::MutatingWebhooks, Change::Deleted(objs(INJECTOR).remove(0)));
        assert!(c.webhook_changes() > before, "a change of a webhook configuration is counted");
        assert_eq!(decide(4), Vec::<String>::new(), "nothing said where every pod fits and no webhook sees them");
        assert_eq!(decide(6).len(), 1);
    }

    /// Kueue's flavors and queues as the watches hand them in: a Job in one of its queues is
    /// answered with what Kueue does (held, with its words), a list replaces a kind and a
    /// deletion forgets one object.
    #[test]
    fn kueues_queues_are_cached_and_a_job_kueue_holds_is_said() {
        use kubectl_quota_engine::check::CheckOptions;
        let c = Cache::default();
        let flavor = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}\n";
        let cq = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: batch}\nspec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [cpu], flavors: [{name: default, resources: [{name: cpu, nominalQuota: '10'}]}]}]}\nstatus: {flavorsReservation: [{name: default, resources: [{name: cpu, total: '9'}]}]}\n";
        let lq = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: team, namespace: ml}\nspec: {clusterQueue: batch}\n";
        list(&c, Kind::Namespaces, objs("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n").into_iter().map(|o| c.keep(o)).collect());
        list(&c, Kind::ResourceFlavors, objs(flavor).into_iter().map(|o| c.keep(o)).collect());
        list(&c, Kind::ClusterQueues, objs(cq).into_iter().map(|o| c.keep(o)).collect());
        list(&c, Kind::LocalQueues, objs(lq).into_iter().map(|o| c.keep(o)).collect());
        let counts = |c: &Cache| [Kind::ResourceFlavors, Kind::ClusterQueues, Kind::LocalQueues].map(|k| count(&c.state.read().unwrap(), k));
        assert_eq!(counts(&c), [1, 1, 1]);
        let job = serde_json::json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml", "labels": {"kueue.x-k8s.io/queue-name": "team"}},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x", "resources": {"requests": {"cpu": "2"}}}]}}}});
        let review = serde_json::json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "kind": {"group": "batch", "version": "v1", "kind": "Job"}, "operation": "CREATE", "namespace": "ml", "object": job}});
        let opts = CheckOptions { namespace: "ml".into(), ..CheckOptions::default() };
        let decide = |c: &Cache| {
            let req = super::super::review::parse(serde_json::to_vec(&review).unwrap()).unwrap();
            super::super::review::decide(req, c.for_namespace("ml").0, &opts, false).warnings
        };
        assert_eq!(
            decide(&c),
            ["Kueue will keep job/train suspended for now (LocalQueue team, ClusterQueue batch): couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed"]
        );
        // The LocalQueue deleted: inadmissible. The ClusterQueues listed again without it: gone.
        c.apply(Kind::LocalQueues, Change::Deleted(objs(lq).remove(0)));
        assert_eq!(decide(&c), ["Kueue cannot admit job/train (LocalQueue team): LocalQueue team doesn't exist; it stays suspended"]);
        list(&c, Kind::ClusterQueues, vec![]);
        assert_eq!(counts(&c), [1, 0, 0]);
    }
}
