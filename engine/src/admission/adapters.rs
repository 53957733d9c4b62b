//! Each plugin adapted to the chain's one shape, [`Plugin`]: which requests it handles and
//! its two halves, in the words of its own file (a leaf that knows nothing of the chain).

use super::*;

/// NamespaceLifecycle: a namespace that does not exist (404), or one being terminated (a
/// create).
pub(super) struct NamespaceLifecycle;
impl Plugin for NamespaceLifecycle {
    fn stage(&self) -> Stage {
        Stage::NamespaceLifecycle
    }
    fn handles(&self, obj: &Object, _: &Attributes) -> bool {
        obj.type_info.namespaced
    }
    fn mutate(&self, _: &mut Object, a: &Attributes) -> Result<Vec<String>, Denial> {
        if let Some(message) = namespace_lifecycle::refusal(a.ns, a.cluster.namespaces) {
            return Err(Denial::new(RefusalReason::NamespaceNotFound, message));
        }
        match namespace_lifecycle::terminating_refusal(a.ns, a.cluster.terminating).filter(|_| a.creating()) {
            Some(message) => Err(message.into()),
            None => Ok(vec![]),
        }
    }
}

/// LimitRanger: a new pod's defaults; a pod's (created or resized) and a claim's bounds.
pub(super) struct LimitRanger;
impl Plugin for LimitRanger {
    fn stage(&self) -> Stage {
        Stage::LimitRanger
    }
    fn handles(&self, obj: &Object, _: &Attributes) -> bool {
        matches!(obj.body, Body::Pod(_) | Body::PersistentVolumeClaim(_))
    }
    fn mutate(&self, obj: &mut Object, a: &Attributes) -> Result<Vec<String>, Denial> {
        let resized = a.resizing(obj);
        match &mut obj.body {
            // A resize goes through LimitRanger's mutating half too: what the resized pod
            // leaves out gets the LimitRanges' defaults, as on create.
            Body::Pod(p) if resized || a.creating() => Ok(limit_ranger::apply_limit_ranges(p, &a.limit_ranges())),
            _ => Ok(vec![]),
        }
    }
    fn validate(&self, obj: &Object, a: &Attributes) -> Result<(), Denial> {
        let ranges = a.limit_ranges();
        match (&obj.body, a.old.map(|o| &o.body)) {
            (Body::Pod(p), None) => limit_ranger::validate_pod(p, &ranges, a.opts.rules)?,
            (Body::Pod(p), Some(Body::Pod(prev))) => limit_ranger::validate_pod_update(prev, p, &ranges, a.opts.rules)?,
            (Body::PersistentVolumeClaim(c), prev) => {
                let prev = match prev {
                    Some(Body::PersistentVolumeClaim(p)) => Some(p),
                    _ => None,
                };
                limit_ranger::validate_pvc(c, prev, &ranges, a.opts.rules)?
            }
            _ => {}
        }
        Ok(())
    }
}

/// ServiceAccount: a new pod's `default`, and a ServiceAccount that does not exist.
pub(super) struct ServiceAccount;
impl Plugin for ServiceAccount {
    fn stage(&self) -> Stage {
        Stage::ServiceAccount
    }
    fn handles(&self, obj: &Object, a: &Attributes) -> bool {
        a.creating() && matches!(obj.body, Body::Pod(_))
    }
    fn mutate(&self, obj: &mut Object, a: &Attributes) -> Result<Vec<String>, Denial> {
        if let Body::Pod(p) = &mut obj.body {
            service_account::admit_pod(p, &obj.meta.annotations, a.ns, a.cluster.service_accounts)?;
        }
        Ok(vec![])
    }
}

/// PodSecurity: the namespace's enforced level.
pub(super) struct PodSecurity;
impl Plugin for PodSecurity {
    fn stage(&self) -> Stage {
        Stage::PodSecurity
    }
    fn handles(&self, obj: &Object, _: &Attributes) -> bool {
        matches!(obj.body, Body::Pod(_))
    }
    fn validate(&self, obj: &Object, a: &Attributes) -> Result<(), Denial> {
        let Some(p) = pod_of(obj) else { return Ok(()) };
        let old = a.old.and_then(pod_of);
        let req =
            pod_security::Request { pod: p, annotations: &obj.meta.annotations, old, namespace: a.ns, labels: a.cluster.namespaces.and_then(|n| n.get(a.ns)) };
        match pod_security::refusal(&req, a.opts.pod_security, a.opts.rules) {
            Some(message) => Err(message.into()),
            None => Ok(()),
        }
    }
}

/// Priority: a new pod's class, and the global default.
pub(super) struct Priority;
impl Plugin for Priority {
    fn stage(&self) -> Stage {
        Stage::Priority
    }
    fn handles(&self, obj: &Object, a: &Attributes) -> bool {
        a.creating() && matches!(obj.body, Body::Pod(_))
    }
    fn mutate(&self, obj: &mut Object, a: &Attributes) -> Result<Vec<String>, Denial> {
        match &mut obj.body {
            Body::Pod(p) => Ok(priority::apply_priority(p, a.cluster.priority_classes)?),
            _ => Ok(vec![]),
        }
    }
}

/// DefaultStorageClass: a new claim's class.
pub(super) struct DefaultStorageClass;
impl Plugin for DefaultStorageClass {
    fn stage(&self) -> Stage {
        Stage::DefaultStorageClass
    }
    fn handles(&self, obj: &Object, a: &Attributes) -> bool {
        a.creating() && matches!(obj.body, Body::PersistentVolumeClaim(_))
    }
    fn mutate(&self, obj: &mut Object, a: &Attributes) -> Result<Vec<String>, Denial> {
        match &mut obj.body {
            Body::PersistentVolumeClaim(p) => Ok(default_storage_class::apply_default_storage_class(p, &obj.meta.annotations, a.cluster.storage_classes)),
            _ => Ok(vec![]),
        }
    }
}

/// PersistentVolumeClaimResize: a claim that grows.
pub(super) struct PersistentVolumeClaimResize;
impl Plugin for PersistentVolumeClaimResize {
    fn stage(&self) -> Stage {
        Stage::PersistentVolumeClaimResize
    }
    fn handles(&self, _: &Object, a: &Attributes) -> bool {
        !a.creating()
    }
    fn validate(&self, obj: &Object, a: &Attributes) -> Result<(), Denial> {
        match a.old.and_then(|prev| pvc_resize::resize_refusal(prev, obj, a.cluster.storage_classes)) {
            Some(message) => Err(message.into()),
            None => Ok(()),
        }
    }
}

/// RuntimeClass: a new pod's overhead.
pub(super) struct RuntimeClass;
impl Plugin for RuntimeClass {
    fn stage(&self) -> Stage {
        Stage::RuntimeClass
    }
    fn handles(&self, obj: &Object, a: &Attributes) -> bool {
        a.creating() && matches!(obj.body, Body::Pod(_))
    }
    fn mutate(&self, obj: &mut Object, a: &Attributes) -> Result<Vec<String>, Denial> {
        match &mut obj.body {
            Body::Pod(p) => Ok(runtime_class::set_overhead(p, a.cluster.runtime_classes, a.opts.rules.runtime_class_empty_name_ignored)?),
            _ => Ok(vec![]),
        }
    }
    fn validate(&self, obj: &Object, a: &Attributes) -> Result<(), Denial> {
        match pod_of(obj) {
            Some(p) => Ok(runtime_class::validate_overhead(p, a.cluster.runtime_classes, a.opts.rules.runtime_class_empty_name_ignored)?),
            None => Ok(()),
        }
    }
}

/// MutatingAdmissionWebhook: the pod the API server returned from a dry run, where a live
/// check asked it (the webhooks' changes are the server's), then the VerticalPodAutoscaler's
/// webhook, writing its target into a new pod of the workload it targets (other webhooks are
/// not replayed).
pub(super) struct MutatingAdmissionWebhook;
impl Plugin for MutatingAdmissionWebhook {
    fn stage(&self) -> Stage {
        Stage::MutatingAdmissionWebhook
    }
    fn handles(&self, obj: &Object, a: &Attributes) -> bool {
        a.creating() && (a.cluster.vpa.is_some() || a.cluster.server.is_some()) && matches!(obj.body, Body::Pod(_))
    }
    fn external(&self) -> bool {
        true
    }
    fn mutate(&self, obj: &mut Object, a: &Attributes) -> Result<Vec<String>, Denial> {
        let Body::Pod(p) = &mut obj.body else { return Ok(vec![]) };
        let mut notes = Vec::new();
        // The reinvocation sees the server's pod already: it is not taken again.
        match a.cluster.server.filter(|_| !a.reinvoked) {
            Some((ServerAnswer::Refused(d), _, _)) => {
                let (reason, message) = d.refusal.as_ref().map(|r| (r.reason, r.message.clone())).unwrap_or((RefusalReason::Admission, String::new()));
                return Err(Denial { reason, message, decision: Some(d.clone()), notes: vec![] });
            }
            Some((ServerAnswer::Admitted(server), webhooks, stood_in)) => {
                notes.push(server_pod_note(p, server, webhooks));
                let mine = std::mem::replace(p, (**server).clone());
                stood_in.iter().for_each(|s| s.restore(p, &mine));
            }
            None => {}
        }
        if let Some((name, vpa)) = a.cluster.vpa {
            notes.extend(vpa_webhook::write_pod(p, name, vpa, &a.limit_ranges()));
        }
        Ok(notes)
    }
}

/// The request as the policies see it; `old`: the stored object an update replaces, as the
/// policies see it ([`old_json`]).
fn policy_request<'a>(obj: &'a Object, a: &'a Attributes, old: Option<&'a serde_json::Value>) -> policy::Request<'a> {
    let ti = &obj.type_info;
    policy::Request {
        operation: if a.creating() { "CREATE" } else { "UPDATE" },
        group: &ti.group,
        version: ti.api_version.rsplit('/').next().unwrap_or_default(),
        kind: &ti.kind,
        resource: &ti.resource,
        namespaced: ti.namespaced,
        namespace: a.ns,
        name: if obj.meta.generate_name.is_some() { "" } else { &obj.meta.name },
        labels: &obj.meta.labels,
        namespace_labels: a.cluster.namespaces.and_then(|n| n.get(a.ns)),
        old_object: old,
        old_unread: a.old.is_some() && old.is_none(),
        params: a.cluster.params,
    }
}

/// The stored object an update replaces, as the policies see it (`oldObject`), where it was
/// kept.
fn old_json(a: &Attributes) -> Option<serde_json::Value> {
    a.old.and_then(|o| policy::object::as_json(o, a.ns))
}

/// A policy's stop as the chain has it: a refusal by `by` (its Status reason and code as the
/// policy gave them, the other policies' denials as alternatives), or (not replayable) a note
/// that the answer rests on the policy.
fn policy_stop(stop: policy::Stop, by: Stage) -> Result<Vec<String>, Denial> {
    match stop {
        policy::Stop::Denied { reason, message, others } => {
            let cause = if reason == "Invalid" { RefusalReason::Invalid } else { RefusalReason::Admission };
            let mut decision = Decision::refused_by(by, cause, message.clone());
            if let Some(r) = decision.refusal.as_mut() {
                r.set_status(&reason);
                r.alternatives = others;
            }
            Err(Denial { reason: cause, message, decision: Some(Box::new(decision)), notes: vec![] })
        }
        policy::Stop::Unreplayable(why) => Ok(vec![format!("not replayed: {why}; this answer rests on it")]),
    }
}

/// MutatingAdmissionPolicy: the policies' ApplyConfigurations and JSON patches, then the
/// object decoded and defaulted again as the server does after each policy.
pub(super) struct MutatingAdmissionPolicy;
impl Plugin for MutatingAdmissionPolicy {
    fn stage(&self) -> Stage {
        Stage::MutatingAdmissionPolicy
    }
    fn handles(&self, obj: &Object, a: &Attributes) -> bool {
        a.creating() && a.opts.rules.mutating_admission_policy && policy::object::kept(obj) && a.cluster.policies.is_some_and(|p| p.any(true))
    }
    fn external(&self) -> bool {
        true
    }
    fn reinvoke_if_needed(&self) -> bool {
        // Each policy says for itself: `policy::mutate` calls only the IfNeeded ones again.
        true
    }
    fn mutate(&self, obj: &mut Object, a: &Attributes) -> Result<Vec<String>, Denial> {
        let (Some(set), Some(mut json)) = (a.cluster.policies, policy::object::as_json(obj, a.ns)) else { return Ok(vec![]) };
        let before = json.clone();
        // After each mutation the server converts and defaults the object again.
        let redefault = |v: &mut serde_json::Value| -> Result<(), String> {
            let mut scratch = obj.clone();
            policy::object::set_from_json(&mut scratch, v.clone())?;
            crate::defaulting::as_decoded(&mut scratch, a.opts.rules);
            if let Some(j) = policy::object::as_json(&scratch, a.ns) {
                *v = j;
            }
            Ok(())
        };
        let (changed_by, unreplayed) = match policy::mutate(set, &mut json, &policy_request(obj, a, None), a.reinvoked, &redefault) {
            Ok(n) => n,
            Err(stop) => return policy_stop(stop, Stage::MutatingAdmissionPolicy),
        };
        // Each skipped policy in the words of any other that cannot be replayed.
        let mut notes: Vec<String> = Vec::new();
        for stop in unreplayed {
            notes.extend(policy_stop(stop, Stage::MutatingAdmissionPolicy)?);
        }
        if json == before {
            return Ok(notes);
        }
        let was = match &obj.body {
            Body::Pod(p) => Some(p.clone()),
            Body::Workload(w) => Some(w.template.clone()),
            _ => None,
        };
        policy::object::set_from_json(obj, json).map_err(|e| Denial::new(RefusalReason::Invalid, e))?;
        crate::defaulting::as_decoded(obj, a.opts.rules);
        let change = match (&was, &obj.body) {
            (Some(was), Body::Pod(now)) => policy::object::pod_change(was, now),
            (Some(was), Body::Workload(now)) => {
                let change = policy::object::pod_change(was, &now.template);
                if change.is_empty() {
                    change
                } else {
                    format!("the pod template's {change}")
                }
            }
            _ => String::new(),
        };
        let what = if matches!(obj.body, Body::Pod(_)) { "the pod".to_string() } else { format!("the {}", obj.type_info.kind) };
        let change = if change.is_empty() { format!("changed {what} (nothing quota reads)") } else { change };
        notes.insert(0, format!("{}: {change}", changed_by.join(", ")));
        Ok(notes)
    }
}

/// ValidatingAdmissionPolicy: the policies' validations, Deny refusing, Warn warning.
pub(super) struct ValidatingAdmissionPolicy;
impl Plugin for ValidatingAdmissionPolicy {
    fn stage(&self) -> Stage {
        Stage::ValidatingAdmissionPolicy
    }
    fn handles(&self, obj: &Object, a: &Attributes) -> bool {
        a.opts.rules.validating_admission_policy && policy::object::kept(obj) && a.cluster.policies.is_some_and(|p| p.any(false))
    }
    fn validate_saying(&self, obj: &Object, a: &Attributes) -> Result<Vec<String>, Denial> {
        let (Some(set), Some(json)) = (a.cluster.policies, policy::object::as_json(obj, a.ns)) else { return Ok(vec![]) };
        let old = old_json(a);
        let (warnings, stop) = policy::validate(set, &json, &policy_request(obj, a, old.as_ref()));
        let said: Vec<String> = warnings.into_iter().map(|w| format!("{WARNING}{w}")).collect();
        match stop.map(|s| policy_stop(s, Stage::ValidatingAdmissionPolicy)) {
            None => Ok(said),
            Some(Ok(notes)) => Ok(said.into_iter().chain(notes).collect()),
            // The warnings come back with the refusal.
            Some(Err(d)) => Err(Denial { notes: said, ..d }),
        }
    }
}

/// What a report says of a pod taken from the server's dry run: the webhooks, and the
/// containers they added.
fn server_pod_note(before: &crate::objects::Pod, server: &crate::objects::Pod, webhooks: &[String]) -> String {
    let added = |was: &[crate::objects::Container], now: &[crate::objects::Container], what: &str| {
        now.iter().filter(|c| !was.iter().any(|w| w.name == c.name)).map(|c| format!("{what} {}", c.name)).collect::<Vec<_>>()
    };
    let mut changes = added(&before.containers, &server.containers, "container");
    changes.extend(added(&before.init_containers, &server.init_containers, "init container"));
    let changed = if changes.is_empty() { String::new() } else { format!(": they add {}", changes.join(", ")) };
    format!(
        "the pod is as the API server returned it from a dry run (dryRun=All), after the mutating webhook{} {}{changed}",
        if webhooks.len() == 1 { "" } else { "s" },
        webhooks.join(", ")
    )
}

/// ResourceQuota: the last word, every quota's verdict on the object (`check_request`).
pub(super) struct ResourceQuota;
impl Plugin for ResourceQuota {
    fn stage(&self) -> Stage {
        Stage::ResourceQuota
    }
    fn handles(&self, _: &Object, _: &Attributes) -> bool {
        true
    }
    fn decide(&self, obj: &Object, a: &Attributes, quotas: &mut [NamedQuota]) -> Option<Decision> {
        let request = Request { classes: a.cluster.device_classes, detail: a.opts.detail, resize: false };
        Some(check_request_detailed(quotas, obj, a.old, a.opts.limited, a.opts.rules, &request))
    }
}
