//! What ResourceQuota admission answers: the decision, the refusal with the server's message,
//! and the explanation of every quota (its verdict, why, and a row per resource).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::scopes::ScopeOutcome;
use crate::admission::stage::Stage;
use crate::objects::Object;
use crate::quantity::Quantity;
use crate::resources::ResourceList;

/// Why an object is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RefusalReason {
    ExceededQuota,
    MustSpecify,
    StatusUnknown,
    NegativeUsage,
    InsufficientQuotaToConsume,
    InsufficientQuotaToMatchScopes,
    ScopeError,
    /// Another admission plugin before quota (Priority, RuntimeClass).
    Admission,
    /// Field validation (an invalid ResourceQuota, for instance).
    Invalid,
    /// The release does not serve the object's API version: kubectl finds no resource for it.
    NotServed,
    /// The object's namespace does not exist (the server's 404 `namespaces "x" not found`).
    NamespaceNotFound,
    /// kubectl refuses before sending: the object names another namespace than `-n`.
    NamespaceMismatch,
    /// The object is larger than the server reads (413 `Request entity too large`).
    TooLarge,
}

impl RefusalReason {
    /// Who gives a refusal of this reason, where only one can (`Admission` is any plugin's:
    /// the plugin says).
    fn stage(self) -> Stage {
        match self {
            RefusalReason::NotServed | RefusalReason::NamespaceMismatch => Stage::Kubectl,
            RefusalReason::Invalid | RefusalReason::TooLarge => Stage::Registry,
            RefusalReason::NamespaceNotFound => Stage::NamespaceLifecycle,
            _ => Stage::ResourceQuota,
        }
    }
}

/// A refusal: the server's message (what follows `is forbidden: `) and what caused it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Refusal {
    /// Who refused (not in the report's JSON, whose shape predates it: the message says).
    #[serde(skip)]
    pub by: Stage,
    pub reason: RefusalReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<String>,
    /// The resource names the refusal is about.
    pub resources: Vec<String>,
    pub message: String,
    /// True when the server wraps it as `<resource> "<name>" is forbidden: <message>` (403);
    /// false for plain errors (the limited-scopes refusal is a 500 with the bare message).
    pub forbidden: bool,
    /// Other messages the server could return instead: it checks quotas in its cache's order,
    /// which is not defined, and reports the first quota that refuses (and the same of several
    /// ValidatingAdmissionPolicies that deny).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
    /// The HTTP status code of the server's answer (403, 422, ...); `None` where kubectl
    /// refuses before sending anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    /// The reason of the server's Status (`Forbidden`, `Invalid`, ...), as `code`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
}

/// The HTTP code the API server gives a Status reason (k8s.io/apimachinery's, as the admission
/// policy plugins map a policy's `reason`: one they do not name is a 422).
pub fn status_code(reason: &str) -> u16 {
    match reason {
        "Unauthorized" => 401,
        "Forbidden" => 403,
        "NotFound" => 404,
        "RequestEntityTooLarge" => 413,
        "InternalError" => 500,
        _ => 422,
    }
}

impl Refusal {
    /// The Status reason the server answers a refusal of `reason` with; `None`: kubectl's own.
    fn status_reason_of(reason: RefusalReason, forbidden: bool) -> Option<&'static str> {
        Some(match reason {
            RefusalReason::NotServed | RefusalReason::NamespaceMismatch => return None,
            RefusalReason::NamespaceNotFound => "NotFound",
            RefusalReason::TooLarge => "RequestEntityTooLarge",
            RefusalReason::Invalid => "Invalid",
            _ if forbidden => "Forbidden",
            _ => "InternalError",
        })
    }

    /// Sets the Status reason (and its code) the server answers with.
    pub fn set_status(&mut self, status_reason: &str) {
        self.code = Some(status_code(status_reason));
        self.status_reason = Some(status_reason.to_string());
    }

    /// The whole error text the server returns for this object.
    pub fn server_error(&self, obj: &Object) -> String {
        match self.reason {
            RefusalReason::NotServed => format!(
                "resource mapping not found for name: {:?} namespace: {:?} from {:?}: {}",
                obj.meta.name,
                obj.meta.namespace.as_deref().unwrap_or(""),
                obj.origin.file,
                self.message
            ),
            _ if self.forbidden => format!("{} {:?} is forbidden: {}", obj.type_info.group_resource(), obj.meta.name, self.message),
            _ => self.message.clone(),
        }
    }
}

/// How one quota judged the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum QuotaVerdict {
    /// The quota has no status yet: the quota controller has not synced it.
    NotEnforced,
    /// A scope or selector excludes the object, or the quota limits nothing it consumes.
    NotApplicable,
    Fits,
    Exceeded,
    MustSpecify,
    StatusUnknown,
}

/// Per resource of an applying quota.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRow {
    /// The resource name (standard names shared, not copied: see [`interned`]).
    pub resource: Cow<'static, str>,
    pub requested: Quantity,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used: Option<Quantity>,
    pub hard: Quantity,
    pub after: Quantity,
    pub exceeded: bool,
}

/// The explanation for one quota.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaReport {
    pub name: String,
    pub applies: bool,
    /// The quota limits nothing this kind of object consumes.
    pub unrelated: bool,
    pub verdict: QuotaVerdict,
    /// One sentence: why it applies or not.
    pub why: String,
    pub scopes: Vec<ScopeOutcome>,
    pub resources: Vec<ResourceRow>,
    /// For `mustSpecify`: resource -> containers lacking it.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub missing: BTreeMap<String, Vec<String>>,
}

impl QuotaReport {
    /// A quota that does not apply (yet): no reason, scopes, rows or missing resources.
    pub(super) fn blank(name: &str) -> Self {
        QuotaReport {
            name: name.to_string(),
            applies: false,
            unrelated: false,
            verdict: QuotaVerdict::NotApplicable,
            why: String::new(),
            scopes: vec![],
            resources: vec![],
            missing: BTreeMap::new(),
        }
    }
}

/// Must-specify findings as a report lists them: resource -> containers.
pub(super) fn listed(missing: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, Vec<String>> {
    missing.iter().map(|(k, v)| (k.clone(), v.iter().cloned().collect())).collect()
}

/// The outcome of admitting one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Refusal>,
    /// What the object consumes (zeros dropped).
    pub usage: ResourceList,
    pub quotas: Vec<QuotaReport>,
    /// Set when quota admission does not look at this object at all, with the reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl Decision {
    pub(crate) fn allow(usage: ResourceList, quotas: Vec<QuotaReport>) -> Decision {
        Decision { allowed: true, refusal: None, usage, quotas, skipped: None }
    }

    /// A refusal before quota admission runs, by the one who gives refusals of `reason`
    /// (kubectl, the registry, NamespaceLifecycle's 404).
    pub fn refused(reason: RefusalReason, message: String) -> Decision {
        Decision::refused_by(reason.stage(), reason, message)
    }

    /// A refusal by `by`, before quota admission runs.
    pub fn refused_by(by: Stage, reason: RefusalReason, message: String) -> Decision {
        let mut r = refusal(reason, None, vec![], message);
        r.by = by;
        // Whatever their reason: the validating policy plugin wraps each denial as the
        // object's `is forbidden: ` error, the mutating one returns its errors bare.
        match by {
            Stage::ValidatingAdmissionPolicy => r.forbidden = true,
            Stage::MutatingAdmissionPolicy => r.forbidden = false,
            _ => {}
        }
        Decision { allowed: false, refusal: Some(r), usage: ResourceList::new(), quotas: vec![], skipped: None }
    }

    /// Who refused, when the request was refused.
    pub fn refuser(&self) -> Option<Stage> {
        self.refusal.as_ref().map(|r| r.by)
    }
}

pub(super) fn refusal(reason: RefusalReason, quota: Option<&str>, resources: Vec<String>, message: String) -> Refusal {
    // Validation errors are 422s, and these two plain errors 500s; everything else is a 403.
    let forbidden = !matches!(
        reason,
        RefusalReason::InsufficientQuotaToMatchScopes
            | RefusalReason::ScopeError
            | RefusalReason::Invalid
            | RefusalReason::NotServed
            | RefusalReason::NamespaceNotFound
            | RefusalReason::NamespaceMismatch
            | RefusalReason::TooLarge
    );
    let status = Refusal::status_reason_of(reason, forbidden);
    Refusal {
        by: reason.stage(),
        reason,
        quota: quota.map(str::to_string),
        resources,
        message,
        forbidden,
        alternatives: vec![],
        code: status.map(status_code),
        status_reason: status.map(str::to_string),
    }
}

/// The first refusal in quota order, with the others as alternatives.
pub(super) fn first_of(mut refusals: Vec<Refusal>) -> Option<Refusal> {
    if refusals.is_empty() {
        return None;
    }
    let mut first = refusals.remove(0);
    first.alternatives = refusals.into_iter().map(|r| r.message).collect();
    Some(first)
}
