//! The autoscalers' models: who sets a workload's replica count (an HPA, a KEDA ScaledObject)
//! and a VerticalPodAutoscaler's recommendation and policy.

use super::Workload;
use crate::resources::ResourceList;

/// Who sets a workload's replica count instead of its `spec.replicas`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum AutoscalerKind {
    /// `autoscaling/*` HorizontalPodAutoscaler, run by kube-controller-manager.
    HorizontalPodAutoscaler,
    /// `keda.sh/v1alpha1` ScaledObject: KEDA's operator makes an HPA (`keda-hpa-NAME`) for it
    /// and scales between zero and one itself.
    ScaledObject,
    /// `keda.sh/v1alpha1` ScaledJob: KEDA creates Jobs from its template, at most
    /// `maxReplicaCount` at once.
    ScaledJob,
}

impl AutoscalerKind {
    /// How the answers name it: `HPA web`, `ScaledObject web`.
    pub fn short(self) -> &'static str {
        match self {
            AutoscalerKind::HorizontalPodAutoscaler => "HPA",
            AutoscalerKind::ScaledObject => "ScaledObject",
            AutoscalerKind::ScaledJob => "ScaledJob",
        }
    }
}

/// The workload an autoscaler scales (`scaleTargetRef`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaleTarget {
    /// As written; empty when left out (KEDA defaults it to `apps/v1`).
    pub api_version: String,
    pub kind: String,
    pub name: String,
}

/// What the engine reads of an autoscaler: its target, its bounds (defaults applied) and the
/// count it wants now.
#[derive(Debug, Clone, PartialEq)]
pub struct Autoscaler {
    pub kind: AutoscalerKind,
    /// `None` for a ScaledJob, which scales its own Job template.
    pub target: Option<ScaleTarget>,
    /// `minReplicas` (HPA, default 1) or `minReplicaCount` (KEDA, default 0).
    pub min: i32,
    /// `maxReplicas` (HPA, required) or `maxReplicaCount` (KEDA, default 100).
    pub max: i32,
    /// KEDA's `idleReplicaCount`: the count while no trigger is active.
    pub idle: Option<i32>,
    /// `status.desiredReplicas`: the count the autoscaler last asked for.
    pub desired: Option<i32>,
    /// An HPA KEDA made for a ScaledObject (owned by it): the ScaledObject's name. Never
    /// counted beside its ScaledObject.
    pub made_for: Option<String>,
    /// A ScaledJob's Job template, as a Job workload (its pods per Job).
    pub job: Option<Box<Workload>>,
}

/// `spec.updatePolicy.updateMode` of a VerticalPodAutoscaler (`Recreate` when left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum VpaMode {
    /// Changes no pod: its admission webhook leaves even new pods alone.
    Off,
    /// New pods get the target; running pods keep what they have.
    Initial,
    /// New pods get the target; running pods far from it are evicted and come back with it.
    Recreate,
    /// Deprecated alias of `Recreate`.
    Auto,
    /// Running pods are resized in place where the node allows, else evicted.
    InPlaceOrRecreate,
}

impl VpaMode {
    /// The mode as `spec.updatePolicy.updateMode` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            VpaMode::Off => "Off",
            VpaMode::Initial => "Initial",
            VpaMode::Recreate => "Recreate",
            VpaMode::Auto => "Auto",
            VpaMode::InPlaceOrRecreate => "InPlaceOrRecreate",
        }
    }

    /// Running pods are brought to the target (evicted and recreated, or resized).
    pub fn changes_running_pods(self) -> bool {
        matches!(self, VpaMode::Recreate | VpaMode::Auto | VpaMode::InPlaceOrRecreate)
    }
}

/// One `spec.resourcePolicy.containerPolicies` entry: `container` is a container's name or
/// `*` (every container no entry names).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VpaContainerPolicy {
    pub container: String,
    pub min_allowed: ResourceList,
    pub max_allowed: ResourceList,
    /// `controlledValues: RequestsOnly`: limits are left as they are (the default,
    /// `RequestsAndLimits`, scales them with the requests).
    pub requests_only: bool,
}

/// What the engine reads of a VerticalPodAutoscaler (`autoscaling.k8s.io/v1`).
#[derive(Debug, Clone, PartialEq)]
pub struct Vpa {
    /// `spec.targetRef`.
    pub target: Option<ScaleTarget>,
    /// `spec.updatePolicy.updateMode`, `None` when written as a mode this tool does not know.
    pub mode: Option<VpaMode>,
    /// The mode as written when it is not one this tool knows.
    pub mode_written: String,
    pub policies: Vec<VpaContainerPolicy>,
    /// `status.recommendation.containerRecommendations`: (container, target); `None` when the
    /// recommender has written none yet.
    pub recommendation: Option<Vec<(String, ResourceList)>>,
}
