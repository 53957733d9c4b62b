//! Kinds the API server serves: their group, resource (plural) and scope, and a guess for
//! kinds it does not know.

use super::*;

/// Kueue's API group: its objects are read whole ([`keep_source`]).
pub const KUEUE_GROUP: &str = "kueue.x-k8s.io";

/// Known kinds: (group, kind) -> (resource, namespaced).
const KINDS: &[(&str, &str, &str, bool)] = &[
    ("", "Pod", "pods", true),
    ("", "Service", "services", true),
    ("", "PersistentVolumeClaim", "persistentvolumeclaims", true),
    ("", "ResourceQuota", "resourcequotas", true),
    ("", "LimitRange", "limitranges", true),
    ("", "ConfigMap", "configmaps", true),
    ("", "Secret", "secrets", true),
    ("", "ReplicationController", "replicationcontrollers", true),
    ("", "ServiceAccount", "serviceaccounts", true),
    ("", "Endpoints", "endpoints", true),
    ("", "Event", "events", true),
    ("", "PodTemplate", "podtemplates", true),
    ("", "Binding", "bindings", true),
    ("", "Namespace", "namespaces", false),
    ("", "Node", "nodes", false),
    ("", "PersistentVolume", "persistentvolumes", false),
    ("", "ComponentStatus", "componentstatuses", false),
    ("apps", "Deployment", "deployments", true),
    ("apps", "ReplicaSet", "replicasets", true),
    ("apps", "StatefulSet", "statefulsets", true),
    ("apps", "DaemonSet", "daemonsets", true),
    ("apps", "ControllerRevision", "controllerrevisions", true),
    ("batch", "Job", "jobs", true),
    ("batch", "CronJob", "cronjobs", true),
    ("autoscaling", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true),
    ("keda.sh", "ScaledObject", "scaledobjects", true),
    (KUEUE_GROUP, "ResourceFlavor", "resourceflavors", false),
    (KUEUE_GROUP, "ClusterQueue", "clusterqueues", false),
    (KUEUE_GROUP, "LocalQueue", "localqueues", true),
    (KUEUE_GROUP, "Cohort", "cohorts", false),
    (KUEUE_GROUP, "Workload", "workloads", true),
    ("keda.sh", "ScaledJob", "scaledjobs", true),
    ("autoscaling.k8s.io", "VerticalPodAutoscaler", "verticalpodautoscalers", true),
    ("policy", "PodDisruptionBudget", "poddisruptionbudgets", true),
    ("networking.k8s.io", "Ingress", "ingresses", true),
    ("networking.k8s.io", "NetworkPolicy", "networkpolicies", true),
    ("networking.k8s.io", "IngressClass", "ingressclasses", false),
    ("rbac.authorization.k8s.io", "Role", "roles", true),
    ("rbac.authorization.k8s.io", "RoleBinding", "rolebindings", true),
    ("rbac.authorization.k8s.io", "ClusterRole", "clusterroles", false),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding", "clusterrolebindings", false),
    ("scheduling.k8s.io", "PriorityClass", "priorityclasses", false),
    ("storage.k8s.io", "StorageClass", "storageclasses", false),
    ("storage.k8s.io", "VolumeAttributesClass", "volumeattributesclasses", false),
    ("storage.k8s.io", "CSIDriver", "csidrivers", false),
    ("storage.k8s.io", "CSINode", "csinodes", false),
    ("storage.k8s.io", "VolumeAttachment", "volumeattachments", false),
    ("node.k8s.io", "RuntimeClass", "runtimeclasses", false),
    ("apiextensions.k8s.io", "CustomResourceDefinition", "customresourcedefinitions", false),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", false),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", false),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", false),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", false),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy", "mutatingadmissionpolicies", false),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings", false),
    ("coordination.k8s.io", "Lease", "leases", true),
    ("discovery.k8s.io", "EndpointSlice", "endpointslices", true),
    ("events.k8s.io", "Event", "events", true),
    ("resource.k8s.io", "ResourceClaim", "resourceclaims", true),
    ("resource.k8s.io", "ResourceClaimTemplate", "resourceclaimtemplates", true),
    ("resource.k8s.io", "DeviceClass", "deviceclasses", false),
    ("resource.k8s.io", "ResourceSlice", "resourceslices", false),
    // Older group versions: the request's group is what quota counts (`count/deployments.extensions`).
    ("extensions", "Deployment", "deployments", true),
    ("extensions", "DaemonSet", "daemonsets", true),
    ("extensions", "ReplicaSet", "replicasets", true),
    ("extensions", "Ingress", "ingresses", true),
    ("extensions", "NetworkPolicy", "networkpolicies", true),
    ("extensions", "PodSecurityPolicy", "podsecuritypolicies", false),
    ("policy", "PodSecurityPolicy", "podsecuritypolicies", false),
];

/// The plural the API server would most likely use for an unknown kind (lower case, English
/// plural rules as in kubectl's RESTMapper guess).
pub fn guess_plural(kind: &str) -> String {
    let k = kind.to_lowercase();
    if k.ends_with('s') || k.ends_with('x') || k.ends_with("ch") || k.ends_with("sh") || k.ends_with('z') {
        format!("{k}es")
    } else if k.ends_with('y') && !k.ends_with("ay") && !k.ends_with("ey") && !k.ends_with("oy") && !k.ends_with("uy") {
        format!("{}ies", &k[..k.len() - 1])
    } else {
        format!("{k}s")
    }
}

/// The resource (plural) a kind is served as, whatever its group (`Endpoints` is `endpoints`):
/// a known kind's, else the guess.
pub fn plural_of_kind(kind: &str) -> String {
    KINDS.iter().find(|(_, k, _, _)| *k == kind).map(|(_, _, r, _)| r.to_string()).unwrap_or_else(|| guess_plural(kind))
}

/// Resolves apiVersion + kind to a [`TypeInfo`], guessing for unknown kinds.
pub fn type_info(api_version: &str, kind: &str) -> TypeInfo {
    let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("").to_string();
    let known = KINDS.iter().find(|(g, k, _, _)| *g == group && *k == kind);
    match known {
        Some((_, _, resource, namespaced)) => TypeInfo {
            api_version: api_version.into(),
            kind: kind.into(),
            group,
            resource: resource.to_string(),
            namespaced: *namespaced,
            guessed: false,
            unserved: false,
        },
        None => TypeInfo {
            api_version: api_version.into(),
            kind: kind.into(),
            group,
            resource: guess_plural(kind),
            namespaced: true,
            guessed: true,
            unserved: false,
        },
    }
}
