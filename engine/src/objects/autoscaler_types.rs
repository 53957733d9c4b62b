//! The autoscaler kinds, one row each: everything that reads autoscalers (decoding, the
//! cluster views, the live reads, snapshots, the guard's caches, webhook rules and rights)
//! takes their group, versions and plural from here. A new autoscaler kind is a row here plus
//! its replay in `check/autoscalers.rs`.

use super::AutoscalerKind;

/// What an autoscaler kind sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sets {
    /// Its target's replica count (HPA, ScaledObject).
    Replicas(AutoscalerKind),
    /// Jobs made from its own template (ScaledJob).
    Jobs(AutoscalerKind),
    /// The requests and limits its target's pods are created with (VerticalPodAutoscaler).
    Requests,
}

/// One autoscaler kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoscalerType {
    pub group: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    /// `plural.group`, as state keys and rights name it.
    pub group_resource: &'static str,
    /// The version read (lists, watches, snapshots).
    pub version: &'static str,
    /// Every version the API serves it at (the guard's webhook rule matches them all).
    pub served_versions: &'static [&'static str],
    /// The add-on that serves it (KEDA, the VPA); `None`: every cluster does. An add-on's kind
    /// is read only where the cluster serves it.
    pub add_on: Option<&'static str>,
    pub sets: Sets,
    /// Read from the cluster (live checks, snapshots, the guard's caches): a ScaledJob scales
    /// only Jobs of its own, so only an applied one is answered.
    pub read: bool,
    /// What is not known when it cannot be read.
    pub unread: &'static str,
}

impl AutoscalerType {
    /// `group/version` as the reads send it.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }
}

/// HorizontalPodAutoscaler, run by kube-controller-manager.
pub const HPA: AutoscalerType = AutoscalerType {
    group: "autoscaling",
    kind: "HorizontalPodAutoscaler",
    plural: "horizontalpodautoscalers",
    group_resource: "horizontalpodautoscalers.autoscaling",
    version: "v1",
    served_versions: &["v1", "v2", "v2beta2"],
    add_on: None,
    sets: Sets::Replicas(AutoscalerKind::HorizontalPodAutoscaler),
    read: true,
    unread: "the replicas an autoscaler sets are not known, and the manifests' are used",
};

/// KEDA's ScaledObject: KEDA makes an HPA for it.
pub const SCALED_OBJECT: AutoscalerType = AutoscalerType {
    group: "keda.sh",
    kind: "ScaledObject",
    plural: "scaledobjects",
    group_resource: "scaledobjects.keda.sh",
    version: "v1alpha1",
    served_versions: &["v1alpha1"],
    add_on: Some("KEDA"),
    sets: Sets::Replicas(AutoscalerKind::ScaledObject),
    read: true,
    unread: "the replicas an autoscaler sets are not known, and the manifests' are used",
};

/// KEDA's ScaledJob: Jobs from its own template.
pub const SCALED_JOB: AutoscalerType = AutoscalerType {
    group: "keda.sh",
    kind: "ScaledJob",
    plural: "scaledjobs",
    group_resource: "scaledjobs.keda.sh",
    version: "v1alpha1",
    served_versions: &["v1alpha1"],
    add_on: Some("KEDA"),
    sets: Sets::Jobs(AutoscalerKind::ScaledJob),
    read: false,
    unread: "the Jobs a ScaledJob runs are not known",
};

/// The VerticalPodAutoscaler: its admission webhook writes its target into new pods.
pub const VPA: AutoscalerType = AutoscalerType {
    group: "autoscaling.k8s.io",
    kind: "VerticalPodAutoscaler",
    plural: "verticalpodautoscalers",
    group_resource: "verticalpodautoscalers.autoscaling.k8s.io",
    version: "v1",
    served_versions: &["v1"],
    add_on: Some("the VPA"),
    sets: Sets::Requests,
    read: true,
    unread: "the requests a VerticalPodAutoscaler writes into pods are not known, and the templates' are used",
};

/// Every autoscaler kind.
pub const AUTOSCALER_TYPES: [AutoscalerType; 4] = [HPA, SCALED_OBJECT, SCALED_JOB, VPA];

/// The row of (group, kind), when it is an autoscaler.
pub fn autoscaler_type(group: &str, kind: &str) -> Option<&'static AutoscalerType> {
    AUTOSCALER_TYPES.iter().find(|t| t.group == group && t.kind == kind)
}

/// The rows read from the cluster.
pub fn read_autoscaler_types() -> impl Iterator<Item = &'static AutoscalerType> {
    AUTOSCALER_TYPES.iter().filter(|t| t.read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_agrees_with_itself_and_the_kind_table() {
        for t in &AUTOSCALER_TYPES {
            assert_eq!(t.group_resource, format!("{}.{}", t.plural, t.group), "{}", t.kind);
            assert!(t.served_versions.contains(&t.version), "{}", t.kind);
            let info = super::super::type_info(&t.api_version(), t.kind);
            assert_eq!(info.group_resource(), t.group_resource, "{}", t.kind);
            assert!(info.namespaced, "{}", t.kind);
        }
    }
}
