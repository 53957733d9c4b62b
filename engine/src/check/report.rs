//! What a check hands out: options in, one report per document, the run's summary.

use serde::Serialize;

use std::collections::BTreeSet;

use super::state::Lacking;
use crate::admission::{Decision, Detail, LimitedResource, QuotaReport, Refusal, Stage};
use crate::manifest::Origin;
use crate::objects::Object;
use crate::resources::ResourceList;
use crate::version::{Rules, VersionReport};

/// Options of a check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The namespace of documents that name none.
    pub namespace: String,
    /// `limitedResources` from the API server's admission configuration.
    pub limited: Vec<LimitedResource>,
    /// The PodSecurityConfiguration from the API server's admission configuration (`None`:
    /// not given; upstream's defaults are assumed: `privileged` where no label says).
    pub pod_security: Option<crate::admission::pod_security::Config>,
    /// Schedulable nodes, for DaemonSets (`None`: unknown).
    pub nodes: Option<u32>,
    /// The rules of the Kubernetes release answered for (default: the newest).
    pub rules: Rules,
    /// How much each report explains (default: everything).
    pub detail: Detail,
    /// `-n` was given: an object naming another namespace is refused, as kubectl refuses it.
    pub enforce_namespace: bool,
    /// Decide a document whose answer needs what the state lacks as if what it lacks changed
    /// nothing, instead of leaving it undecided (`plan` sizes quotas for every document).
    pub assume_lacking: bool,
    /// Whether the API server runs with `--allow-privileged=true`, which no API shows.
    /// `None`: not said; privileged containers are allowed (as most distributions run the
    /// server) and a document with one says its answer rests on that.
    pub allow_privileged: Option<bool>,
    /// How long one document may take to decide (`None`: as long as it takes). Past it, what
    /// is left of the document is undecided and says so; the next document is checked (see
    /// the `budget` module).
    pub decide_within: Option<std::time::Duration>,
}

/// The explanation of a workload's pods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodsReport {
    /// The name of the pod the explanation is about (the first refused one, else the last one
    /// admitted).
    pub pod: String,
    pub allowed: bool,
    pub usage: ResourceList,
    pub mutations: Vec<String>,
    pub quotas: Vec<QuotaReport>,
}

/// The result for one document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentReport {
    pub kind: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub source: Origin,
    /// Whether the API server admits the object itself (a Deployment can be admitted while
    /// quota refuses its pods: see `outcome`).
    pub allowed: bool,
    /// What happens to the document as a whole, object and pods.
    pub outcome: Outcome,
    /// The server's refusal text (after `is forbidden: ` for a 403).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The whole error the server would return.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Refusal>,
    /// Pods the workload's controller wants now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Pods that exist, or would be created under quota: `replicasExisting` plus the new
    /// pods that fit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas_admitted: Option<i32>,
    /// For a workload that exists already: its pods that exist now (its status). Only the
    /// pods above them are created, and charged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas_existing: Option<i32>,
    /// A changed pod template's rollout under quota; a stall is a refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout: Option<crate::rollout::RolloutReport>,
    /// The first refusal the controller would meet creating pods (or their claims).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_message: Option<String>,
    /// Who gives that refusal (not in the JSON, whose shape predates it: the message says).
    #[serde(skip)]
    pub pod_refuser: Option<Stage>,
    /// How far quota lets the workload's autoscaler scale it (an autoscaled workload, or an
    /// autoscaler whose target exists already).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<crate::autoscaling::Ceiling>,
    /// How many of the workload's running pods quota lets come back at its
    /// VerticalPodAutoscaler's target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vpa: Option<crate::autoscaling::VpaCeiling>,
    /// Pods created whose ResourceClaims quota refuses: they stay Pending.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pods_pending: Option<i32>,
    /// Other refusals the pods could meet instead (the server's quota order is not defined).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pod_message_alternatives: Vec<String>,
    /// What the API server changes before quota sees the object.
    pub mutations: Vec<String>,
    /// The warnings the server sends back with its answer (a ValidatingAdmissionPolicy's
    /// `Warn`), as kubectl prints them after `Warning: `.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub usage: ResourceList,
    pub quotas: Vec<QuotaReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pods: Option<PodsReport>,
    /// For a Job in one of Kueue's queues: whether its ClusterQueue reserves quota now (the
    /// pods above are what comes once it does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kueue: Option<crate::kueue::KueueReport>,
    pub notes: Vec<String>,
    /// The admission webhooks the object and its pods meet (their sentences are in `notes`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub webhooks: Vec<super::webhooks::WebhookSeen>,
    /// What the answer needs that the state lacks: the document cannot be decided (the rest
    /// of the report is what the state tells, as if what it lacks changed nothing).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undecided: Vec<Undecided>,
    /// What the user could do about the verdict (filled by [`crate::report::explain`]).
    pub hints: Vec<String>,
}

/// Why a document cannot be decided: a kind the state lacks, and why this document needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Undecided {
    /// The kind the state lacks; `None` when what is missing is a count only the user can
    /// give (a DaemonSet's nodes: `--nodes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lacking: Option<Lacking>,
    pub why: String,
    /// Left undecided because the document's time ran out (`decide_within`), not for want
    /// of anything.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub late: bool,
}

/// What happens to a document as a whole: the object, the pods its controllers create, and
/// its rollout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// The object is admitted, and so is every pod its controllers create.
    Admitted,
    /// The object itself is refused.
    Refused,
    /// The object is admitted, but quota refuses some of the pods its controllers create.
    PodsRefused,
    /// The pods are created, but quota refuses their ResourceClaims: they stay Pending.
    PodsPending,
    /// The object is admitted, but the rollout of its changed template stalls under quota.
    RolloutStalls,
    /// The answer depends on what the state lacks (see `undecided`).
    Undecided,
}

impl DocumentReport {
    /// The refusal the pods meet, as the first one they meet: its message and who gives it.
    pub(super) fn pods_refused(&mut self, r: Refusal) {
        self.pod_refuser = Some(r.by);
        self.pod_message = Some(r.message);
    }

    /// Who refuses: the document itself, else its pods.
    pub fn refuser(&self) -> Option<Stage> {
        self.refusal.as_ref().map(|r| r.by).or(self.pod_refuser)
    }

    /// The report of a document as the admission chain (or what stopped it before) decided
    /// it, `ns` being where it was sent; what its controllers create is filled in later.
    pub(super) fn decided(obj: &Object, ns: &str, decision: Decision, mutations: Vec<String>, notes: Vec<String>) -> DocumentReport {
        let (warnings, mutations): (Vec<String>, Vec<String>) = mutations.into_iter().partition(|m| m.starts_with(crate::admission::WARNING));
        let warnings = warnings.into_iter().map(|w| w[crate::admission::WARNING.len()..].to_string()).collect();
        DocumentReport {
            kind: obj.type_info.kind.clone(),
            name: obj.meta.name.clone(),
            namespace: obj.type_info.namespaced.then(|| ns.to_string()),
            source: obj.origin.clone(),
            allowed: decision.allowed,
            message: decision.refusal.as_ref().map(|r| r.message.clone()),
            server_error: decision.refusal.as_ref().map(|r| r.server_error(obj)),
            refusal: decision.refusal,
            outcome: Outcome::Admitted,
            replicas: None,
            replicas_admitted: None,
            replicas_existing: None,
            rollout: None,
            autoscaling: None,
            vpa: None,
            pod_message: None,
            pod_refuser: None,
            pods_pending: None,
            pod_message_alternatives: vec![],
            mutations,
            warnings,
            usage: decision.usage,
            quotas: decision.quotas,
            pods: None,
            kueue: None,
            notes,
            webhooks: vec![],
            undecided: vec![],
            hints: vec![],
        }
    }

    /// Whether everything this document asks for would be created.
    pub fn fully_admitted(&self) -> bool {
        self.outcome() == Outcome::Admitted
    }

    /// The outcome, from the verdicts the report holds.
    pub fn outcome(&self) -> Outcome {
        if self.undecided.is_empty() {
            self.told_outcome()
        } else {
            Outcome::Undecided
        }
    }

    /// The outcome as far as the state tells: for an undecided document, as if what the
    /// state lacks changed nothing.
    pub fn told_outcome(&self) -> Outcome {
        if !self.allowed {
            Outcome::Refused
        } else if self.replicas_admitted.zip(self.replicas).is_some_and(|(a, w)| a < w) {
            Outcome::PodsRefused
        } else if self.pods_pending.unwrap_or(0) > 0 {
            Outcome::PodsPending
        } else if self.rollout.as_ref().is_some_and(|r| r.stalls()) {
            Outcome::RolloutStalls
        } else {
            Outcome::Admitted
        }
    }
}

/// The result of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The Kubernetes release whose rules were applied.
    pub kubernetes: VersionReport,
    pub documents: Vec<DocumentReport>,
    pub notes: Vec<String>,
}

impl Report {
    /// Exit status: 0 when everything fits, 1 when anything would be refused.
    pub fn exit_code(&self) -> i32 {
        if self.documents.iter().all(DocumentReport::fully_admitted) {
            0
        } else {
            1
        }
    }
}

/// What is left of a check once every document has been handed out: the counts behind the
/// exit status and the notes about the run as a whole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Documents checked.
    pub documents: usize,
    /// Documents not fully admitted (refused, or short of replicas).
    pub refused: usize,
    /// Documents that cannot be decided, and what they needed that the state lacks.
    pub undecided: usize,
    pub lacking: BTreeSet<Lacking>,
    /// Documents whose autoscaler quota stops below its maximum (their minimum fits), or some
    /// of whose pods cannot come back at their VerticalPodAutoscaler's target.
    pub capped: usize,
    pub notes: Vec<String>,
}

impl Summary {
    /// Exit status: 0 when everything fits, 1 when anything would be refused (an undecided
    /// document makes the answer incomplete: the caller says so, see [`Summary::undecided`]).
    pub fn exit_code(&self) -> i32 {
        if self.refused == 0 {
            0
        } else {
            1
        }
    }
}
