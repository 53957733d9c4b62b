//! Who answers a request on its way into the cluster, in the order the API server asks them:
//! kubectl before sending it, the registry, then the admission plugins in kube-apiserver's
//! plugin order (its `AllOrderedPlugins`), ResourceQuota last. [`super::CHAIN`] holds the
//! plugins replayed in this same order (a test keeps the two together).

use serde::Serialize;

/// Who answers a request on its way into the cluster: kubectl before sending it, the
/// registry (reading the body, validating the object), or one plugin of the admission chain.
/// Rendering names the one that refused by this value, never by the message's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Stage {
    Kubectl,
    /// Reading the body (its size), and the object's validation between the chain's halves.
    Registry,
    NamespaceLifecycle,
    LimitRanger,
    ServiceAccount,
    PodSecurity,
    Priority,
    DefaultStorageClass,
    PersistentVolumeClaimResize,
    RuntimeClass,
    MutatingAdmissionPolicy,
    MutatingAdmissionWebhook,
    ValidatingAdmissionPolicy,
    ResourceQuota,
}

impl Stage {
    /// How a report names this stage when it, not quota, refuses a workload's pods; `None`
    /// where the refusal's own message says who.
    pub fn pod_refuser(self) -> Option<&'static str> {
        match self {
            Stage::PodSecurity => Some("PodSecurity"),
            Stage::ValidatingAdmissionPolicy => Some("a ValidatingAdmissionPolicy"),
            Stage::MutatingAdmissionPolicy => Some("a MutatingAdmissionPolicy"),
            _ => None,
        }
    }
}
