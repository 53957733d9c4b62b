//! The kinds of cluster data a check consults, one row each: where the API serves the kind,
//! how a live check reads it and what its absence leaves undecided, whether `snapshot` saves
//! it, whether the guard watches it, and so the rights each needs. The live reads, the
//! snapshot, the guard's watches and its ClusterRole, and the rights page all read these rows;
//! a new kind is a row here, its decoder (`objects/decode`) and its use.
//!
//! ```
//! use kubectl_quota_engine::check::cluster_kinds::{row, Guard};
//! let quotas = row("", "ResourceQuota").unwrap();
//! assert_eq!(quotas.group_resource, "resourcequotas");
//! assert_eq!(quotas.guard, Guard::Watch);
//! ```

use super::state::Lacking;
use crate::objects::autoscaler_types::{AutoscalerType, HPA, SCALED_OBJECT, VPA};
use crate::version::KubeVersion;

/// Which clusters serve a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// Every release this tool knows (1.20 on).
    Always,
    /// From this release: an older server serves none, and has none.
    Since(KubeVersion),
    /// Where this add-on is installed (KEDA, the VPA).
    AddOn(&'static str),
}

/// How a live `check` reads a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// Not read by `check`.
    No,
    /// One LIST per namespace of the documents.
    PerNamespace,
    /// One LIST of the whole cluster.
    Cluster,
    /// Read for the documents that need it, as said (GETs, or LISTs of some namespaces).
    AsNeeded(&'static str),
}

/// What a read that fails leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// Nothing can be decided.
    Fatal,
    /// The answers that depend on it are incomplete, and say this: what is not done.
    Gap(&'static str),
    /// Left out without a word: the answers are those of a cluster without them.
    Unsaid,
}

/// Whether `snapshot` saves a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saved {
    No,
    /// Saved; a user who may not list it (cluster-scoped kinds) is told so, and the snapshot
    /// records it as not read.
    Yes,
    /// Saved where it can be: any refusal is a note, and recorded as not read.
    IfAllowed,
}

/// What the guard does with a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    No,
    /// Listed and watched into its cache (RBAC `get`, `list`, `watch`).
    Watch,
    /// Read by name when a review needs it (RBAC `get`): an autoscaler's target.
    Get,
}

impl Guard {
    /// The RBAC verbs the guard's ClusterRole grants on the kind.
    pub fn verbs(self) -> &'static [&'static str] {
        match self {
            Guard::No => &[],
            Guard::Watch => &["get", "list", "watch"],
            Guard::Get => &["get"],
        }
    }
}

/// One kind of cluster data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterKind {
    pub group: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    /// `plural.group` (the plural alone in the core group), as quota, state files and rights
    /// name it.
    pub group_resource: &'static str,
    pub namespaced: bool,
    /// The versions it is read at, preferred first: the first a server serves is read.
    pub versions: &'static [&'static str],
    pub served: Served,
    /// The kind the check's state lacks when it cannot be read (see [`Lacking`]).
    pub lacking: Option<Lacking>,
    pub read: Read,
    pub unread: Unread,
    pub saved: Saved,
    pub guard: Guard,
}

impl ClusterKind {
    /// `group/version` of the version read first.
    pub fn api_version(&self) -> String {
        match self.group {
            "" => self.versions[0].to_string(),
            g => format!("{g}/{}", self.versions[0]),
        }
    }

    /// Whether release `v` may serve it (an add-on's kind: any release may).
    pub fn served_at(&self, v: KubeVersion) -> bool {
        match self.served {
            Served::Since(first) => v >= first,
            Served::Always | Served::AddOn(_) => true,
        }
    }

    /// The kind in the plural, in words (`PriorityClasses`).
    pub fn kinds(&self) -> String {
        match self.kind.ends_with('s') {
            true => format!("{}es", self.kind),
            false => format!("{}s", self.kind),
        }
    }

    /// `plural.group` as a snapshot records a kind it could not read (`core` for the core
    /// group: `serviceaccounts.core`).
    pub fn recorded_as(&self) -> String {
        format!("{}.{}", self.plural, self.group_name())
    }

    /// One of the two kinds of admission webhook configuration, known together or not at all.
    pub fn is_webhook_configuration(&self) -> bool {
        self.group == ADMISSION && self.kind.ends_with("WebhookConfiguration")
    }

    /// The group as RBAC and messages name it (`core` for the empty one).
    pub fn group_name(&self) -> &'static str {
        match self.group {
            "" => "core",
            g => g,
        }
    }
}

/// A row of a kind no add-on or release limits, read by the guard and the snapshot alike.
const fn row_of(group: &'static str, kind: &'static str, plural: &'static str, group_resource: &'static str, namespaced: bool) -> ClusterKind {
    ClusterKind {
        group,
        kind,
        plural,
        group_resource,
        namespaced,
        versions: &["v1"],
        served: Served::Always,
        lacking: None,
        read: Read::No,
        unread: Unread::Unsaid,
        saved: Saved::No,
        guard: Guard::No,
    }
}

/// The row of an autoscaler kind read from clusters (its own table says the rest).
const fn autoscaler(t: &'static AutoscalerType, versions: &'static [&'static str], lacking: Option<Lacking>) -> ClusterKind {
    ClusterKind {
        versions,
        served: match t.add_on {
            Some(a) => Served::AddOn(a),
            None => Served::Always,
        },
        lacking,
        read: Read::PerNamespace,
        unread: Unread::Gap(t.unread),
        saved: Saved::Yes,
        guard: Guard::Watch,
        ..row_of(t.group, t.kind, t.plural, t.group_resource, true)
    }
}

/// Namespaces: whether the one a document goes to exists (and its labels).
pub const NAMESPACE: ClusterKind = ClusterKind {
    read: Read::AsNeeded("a GET of each namespace the documents go to"),
    unread: Unread::Gap("whether a namespace exists, and its admin-access label, are not checked"),
    guard: Guard::Watch,
    ..row_of("", "Namespace", "namespaces", "namespaces", false)
};

const DRA_VERSIONS: &[&str] = &["v1", "v1beta2", "v1beta1"];
const ADMISSION: &str = "admissionregistration.k8s.io";

/// Every kind of cluster data, in the order the reads are made and `snapshot` prints them:
/// what admission consults, the namespace's workloads, pods and claims, then who sets the
/// replicas and the requests they run with.
pub const CLUSTER_KINDS: &[ClusterKind] = &[
    ClusterKind {
        read: Read::PerNamespace,
        unread: Unread::Fatal,
        saved: Saved::Yes,
        guard: Guard::Watch,
        ..row_of("", "ResourceQuota", "resourcequotas", "resourcequotas", true)
    },
    ClusterKind {
        read: Read::PerNamespace,
        unread: Unread::Gap("LimitRange defaults are not applied"),
        saved: Saved::Yes,
        guard: Guard::Watch,
        ..row_of("", "LimitRange", "limitranges", "limitranges", true)
    },
    NAMESPACE,
    // Names only: a pod naming one that does not exist is refused (the ServiceAccount plugin).
    ClusterKind {
        lacking: Some(Lacking::ServiceAccounts),
        read: Read::AsNeeded("a LIST per namespace where a document makes pods"),
        unread: Unread::Gap("a pod naming a ServiceAccount that does not exist is not refused"),
        saved: Saved::IfAllowed,
        guard: Guard::Watch,
        ..row_of("", "ServiceAccount", "serviceaccounts", "serviceaccounts", true)
    },
    ClusterKind {
        lacking: Some(Lacking::PriorityClasses),
        read: Read::Cluster,
        unread: Unread::Gap("the global default PriorityClass is not given to pods that name no class (so priority-class scopes see them classless), and unknown class names are not refused"),
        saved: Saved::Yes,
        guard: Guard::Watch,
        ..row_of("scheduling.k8s.io", "PriorityClass", "priorityclasses", "priorityclasses.scheduling.k8s.io", false)
    },
    ClusterKind {
        lacking: Some(Lacking::StorageClasses),
        read: Read::Cluster,
        unread: Unread::Gap("the default StorageClass is not given to claims without a class"),
        saved: Saved::Yes,
        guard: Guard::Watch,
        ..row_of("storage.k8s.io", "StorageClass", "storageclasses", "storageclasses.storage.k8s.io", false)
    },
    // node.k8s.io/v1 from 1.20: a server that does not serve it has none.
    ClusterKind {
        versions: &["v1", "v1beta1"],
        served: Served::Since(KubeVersion::new(1, 20)),
        lacking: Some(Lacking::RuntimeClasses),
        read: Read::Cluster,
        unread: Unread::Gap("RuntimeClass overhead is not added to pods"),
        saved: Saved::IfAllowed,
        guard: Guard::Watch,
        ..row_of("node.k8s.io", "RuntimeClass", "runtimeclasses", "runtimeclasses.node.k8s.io", false)
    },
    // DRA (resource.k8s.io/v1 from 1.34).
    ClusterKind {
        versions: DRA_VERSIONS,
        served: Served::Since(KubeVersion::new(1, 34)),
        lacking: Some(Lacking::DeviceClasses),
        read: Read::Cluster,
        unread: Unread::Gap("DRA extended resource names are not resolved"),
        saved: Saved::IfAllowed,
        guard: Guard::Watch,
        ..row_of("resource.k8s.io", "DeviceClass", "deviceclasses", "deviceclasses.resource.k8s.io", false)
    },
    // Which admission webhooks the pods meet (what they change is in no API). The two kinds
    // are read together or not at all.
    ClusterKind {
        read: Read::Cluster,
        saved: Saved::Yes,
        guard: Guard::Watch,
        ..row_of(ADMISSION, "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", "mutatingwebhookconfigurations.admissionregistration.k8s.io", false)
    },
    ClusterKind {
        read: Read::Cluster,
        saved: Saved::Yes,
        guard: Guard::Watch,
        ..row_of(
            ADMISSION,
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            "validatingwebhookconfigurations.admissionregistration.k8s.io",
            false,
        )
    },
    // The admission policies replayed before quota, and their bindings (v1: validating from
    // 1.30, mutating from 1.36).
    ClusterKind {
        served: Served::Since(KubeVersion::new(1, 30)),
        read: Read::Cluster,
        saved: Saved::IfAllowed,
        guard: Guard::Watch,
        ..row_of(ADMISSION, "ValidatingAdmissionPolicy", "validatingadmissionpolicies", "validatingadmissionpolicies.admissionregistration.k8s.io", false)
    },
    ClusterKind {
        served: Served::Since(KubeVersion::new(1, 30)),
        read: Read::Cluster,
        saved: Saved::IfAllowed,
        guard: Guard::Watch,
        ..row_of(
            ADMISSION,
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
            "validatingadmissionpolicybindings.admissionregistration.k8s.io",
            false,
        )
    },
    ClusterKind {
        served: Served::Since(KubeVersion::new(1, 36)),
        read: Read::Cluster,
        saved: Saved::IfAllowed,
        guard: Guard::Watch,
        ..row_of(ADMISSION, "MutatingAdmissionPolicy", "mutatingadmissionpolicies", "mutatingadmissionpolicies.admissionregistration.k8s.io", false)
    },
    ClusterKind {
        served: Served::Since(KubeVersion::new(1, 36)),
        read: Read::Cluster,
        saved: Saved::IfAllowed,
        guard: Guard::Watch,
        ..row_of(
            ADMISSION,
            "MutatingAdmissionPolicyBinding",
            "mutatingadmissionpolicybindings",
            "mutatingadmissionpolicybindings.admissionregistration.k8s.io",
            false,
        )
    },
    // The templates pods' claims are made from.
    ClusterKind {
        versions: DRA_VERSIONS,
        served: Served::Since(KubeVersion::new(1, 34)),
        lacking: Some(Lacking::ResourceClaimTemplates),
        read: Read::PerNamespace,
        unread: Unread::Gap("claims that pods create from templates are not checked"),
        saved: Saved::IfAllowed,
        ..row_of("resource.k8s.io", "ResourceClaimTemplate", "resourceclaimtemplates", "resourceclaimtemplates.resource.k8s.io", true)
    },
    // The claims that exist: applying one again is an update.
    ClusterKind {
        versions: DRA_VERSIONS,
        served: Served::Since(KubeVersion::new(1, 34)),
        read: Read::AsNeeded(EXISTING),
        unread: Unread::Gap("whether the claim exists is not known"),
        saved: Saved::IfAllowed,
        ..row_of("resource.k8s.io", "ResourceClaim", "resourceclaims", "resourceclaims.resource.k8s.io", true)
    },
    // The namespace's workloads, their pods and claims: what exists (an update, not a create;
    // an autoscaler's target; a rollout under way).
    workload("apps", "Deployment", "deployments", "deployments.apps", Guard::Get),
    workload("apps", "ReplicaSet", "replicasets", "replicasets.apps", Guard::Get),
    workload("apps", "StatefulSet", "statefulsets", "statefulsets.apps", Guard::Get),
    workload("apps", "DaemonSet", "daemonsets", "daemonsets.apps", Guard::Get),
    workload("batch", "Job", "jobs", "jobs.batch", Guard::No),
    ClusterKind { versions: &["v1", "v1beta1"], ..workload("batch", "CronJob", "cronjobs", "cronjobs.batch", Guard::No) },
    workload("", "ReplicationController", "replicationcontrollers", "replicationcontrollers", Guard::Get),
    workload("", "Pod", "pods", "pods", Guard::No),
    workload("", "PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaims", Guard::No),
    // Who sets the replicas and the requests the workloads run with (a ScaledJob scales only
    // Jobs of its own, and is not read).
    autoscaler(&HPA, &["v1"], None),
    autoscaler(&SCALED_OBJECT, &["v1alpha1"], None),
    autoscaler(&VPA, &["v1"], Some(Lacking::VerticalPodAutoscalers)),
    // Kueue's flavors and queues, where Kueue is installed: what its ClusterQueues admit.
    kueue("ResourceFlavor", "resourceflavors", "resourceflavors.kueue.x-k8s.io", false),
    kueue("ClusterQueue", "clusterqueues", "clusterqueues.kueue.x-k8s.io", false),
    kueue("LocalQueue", "localqueues", "localqueues.kueue.x-k8s.io", true),
    kueue("Cohort", "cohorts", "cohorts.kueue.x-k8s.io", false),
];

/// A kind of Kueue's (v1beta2, the version Kueue stores, from v0.15), read where Kueue is
/// installed: the cluster's flavors, ClusterQueues and Cohorts, the namespaces' LocalQueues; the guard
/// watches them, to say at apply time what Kueue does with a Job.
const fn kueue(kind: &'static str, plural: &'static str, group_resource: &'static str, namespaced: bool) -> ClusterKind {
    ClusterKind {
        versions: &["v1beta2"],
        served: Served::AddOn("Kueue"),
        read: if namespaced { Read::PerNamespace } else { Read::Cluster },
        // Said per Job in one of Kueue's queues (its ClusterQueue's answer is not replayed),
        // not for every check: Kueue is then taken as not read at all.
        unread: Unread::Unsaid,
        saved: Saved::IfAllowed,
        guard: Guard::Watch,
        ..row_of(crate::kueue::GROUP, kind, plural, group_resource, namespaced)
    }
}

/// How the objects documents name are read: whether each exists.
pub const EXISTING: &str = "a GET of each object a document names, and of the workloads autoscalers target";

/// A kind of object documents may name that exists in the namespace: read by GET for the
/// documents that name it (a create or an update), saved by `snapshot`.
const fn workload(group: &'static str, kind: &'static str, plural: &'static str, group_resource: &'static str, guard: Guard) -> ClusterKind {
    ClusterKind {
        read: Read::AsNeeded(EXISTING),
        unread: Unread::Gap("whether it exists (a create or an update) is not known"),
        saved: Saved::Yes,
        guard,
        ..row_of(group, kind, plural, group_resource, true)
    }
}

/// The row of (group, kind).
pub fn row(group: &str, kind: &str) -> Option<&'static ClusterKind> {
    CLUSTER_KINDS.iter().find(|k| k.group == group && k.kind == kind)
}

/// The rows a live check LISTs before deciding (per namespace or cluster-wide).
pub fn listed() -> impl Iterator<Item = &'static ClusterKind> {
    CLUSTER_KINDS.iter().filter(|k| matches!(k.read, Read::PerNamespace | Read::Cluster))
}

/// The rows the guard watches.
pub fn watched() -> impl Iterator<Item = &'static ClusterKind> {
    CLUSTER_KINDS.iter().filter(|k| k.guard == Guard::Watch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_agrees_with_itself_and_the_kind_table() {
        for k in CLUSTER_KINDS {
            let expected = if k.group.is_empty() { k.plural.to_string() } else { format!("{}.{}", k.plural, k.group) };
            assert_eq!(k.group_resource, expected, "{}", k.kind);
            let info = crate::objects::type_info(&k.api_version(), k.kind);
            assert!(!info.guessed, "{} is not in the kind table", k.kind);
            assert_eq!((info.resource.as_str(), info.namespaced), (k.plural, k.namespaced), "{}", k.kind);
            assert!(!k.versions.is_empty(), "{}", k.kind);
        }
    }

    #[test]
    fn each_kind_the_state_can_lack_is_one_row() {
        for l in Lacking::ALL {
            let rows: Vec<_> = CLUSTER_KINDS.iter().filter(|k| k.lacking == Some(l)).collect();
            assert_eq!(rows.len(), 1, "{l:?}");
            assert!(matches!(rows[0].unread, Unread::Gap(_)), "{l:?}: a kind the state lacks is said to be lacking");
        }
    }

    #[test]
    fn every_autoscaler_kind_read_from_clusters_is_a_row() {
        for t in crate::objects::read_autoscaler_types() {
            let k = row(t.group, t.kind).unwrap_or_else(|| panic!("{}", t.kind));
            assert_eq!((k.plural, k.versions[0], k.guard), (t.plural, t.version, Guard::Watch));
        }
    }

    #[test]
    fn a_row_read_as_needed_or_watched_is_one_the_plugin_reads() {
        for k in CLUSTER_KINDS {
            assert!(k.read != Read::No || k.guard != Guard::No || k.saved != Saved::No, "{}: a row nothing reads", k.kind);
        }
    }
}
