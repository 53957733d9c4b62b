//! Quota scopes: does a quota's scope or scope-selector expression select an object, and why.
//!
//! Every answer carries a sentence naming the field that decided it, e.g.
//! `PriorityClass In [high] matched priorityClassName=high`.
//!
//! ```
//! use kubectl_quota_engine::objects::{Pod, ScopeRequirement};
//! use kubectl_quota_engine::admission::scopes::match_pod;
//!
//! let pod = Pod { priority_class_name: "high".into(), ..Pod::default() };
//! let req = ScopeRequirement { scope_name: "PriorityClass".into(), operator: "In".into(), values: vec!["high".into()] };
//! let m = match_pod(&req, &pod).unwrap();
//! assert!(m.matched);
//! assert_eq!(m.reason, "PriorityClass In [high] matched priorityClassName=high");
//! ```

use std::borrow::Cow;
use std::cell::OnceCell;

use super::usage::Evaluator;
use crate::objects::{Body, Object, Pod, Pvc, ResourceQuota, ScopeRequirement};
use crate::quantity::Quantity;
use crate::resource_names::QuotaScope;

/// A pod's quality-of-service class, as Kubernetes computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum QosClass {
    BestEffort,
    Burstable,
    Guaranteed,
}

impl QosClass {
    pub fn as_str(self) -> &'static str {
        match self {
            QosClass::BestEffort => "BestEffort",
            QosClass::Burstable => "Burstable",
            QosClass::Guaranteed => "Guaranteed",
        }
    }
}

/// `GetPodQOS`: the recorded `status.qosClass` if any, else computed from cpu and memory
/// requests and limits of all containers (init and sidecars included), or from pod-level
/// resources when those are set.
pub fn pod_qos(pod: &Pod) -> QosClass {
    match pod.status_qos_class.as_deref() {
        Some("BestEffort") => return QosClass::BestEffort,
        Some("Burstable") => return QosClass::Burstable,
        Some("Guaranteed") => return QosClass::Guaranteed,
        _ => {}
    }
    let supported = |k: &str| k == "cpu" || k == "memory";
    let pod_level = [&pod.pod_requests, &pod.pod_limits].iter().any(|l| l.keys().any(|k| supported(k)));
    let sets: Vec<(&crate::resources::ResourceList, &crate::resources::ResourceList)> = if pod_level {
        vec![(&pod.pod_requests, &pod.pod_limits)]
    } else {
        pod.containers.iter().chain(pod.init_containers.iter()).map(|c| (&c.requests, &c.limits)).collect()
    };
    let mut requests = crate::resources::ResourceList::new();
    let mut limits = crate::resources::ResourceList::new();
    let mut guaranteed = true;
    for (req, lim) in sets {
        for (k, q) in req.iter().filter(|(k, q)| supported(k) && q.sign() > 0) {
            let sum = requests.get(k).map(|s: &Quantity| s.add(q)).unwrap_or_else(|| q.clone());
            requests.insert(k.clone(), sum);
        }
        let mut found = 0;
        for (k, q) in lim.iter().filter(|(k, q)| supported(k) && q.sign() > 0) {
            found += 1;
            let sum = limits.get(k).map(|s: &Quantity| s.add(q)).unwrap_or_else(|| q.clone());
            limits.insert(k.clone(), sum);
        }
        if found < 2 {
            guaranteed = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return QosClass::BestEffort;
    }
    if guaranteed && requests.iter().all(|(k, r)| limits.get(k).is_some_and(|l| l == r)) && requests.len() == limits.len() {
        return QosClass::Guaranteed;
    }
    QosClass::Burstable
}

/// The outcome of one selector expression against one object.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopeOutcome {
    /// The expression in words (`PriorityClass In [high]`, `NotBestEffort`).
    pub selector: Cow<'static, str>,
    pub matched: bool,
    /// Why, naming the field that decided (`matched priorityClassName=high`).
    pub reason: String,
}

/// A selector expression in words: a plain scope prints as its name (shared, not copied).
pub fn describe(req: &ScopeRequirement) -> Cow<'static, str> {
    let plain = QuotaScope::parse(&req.scope_name).filter(|s| s.requires_exists_operator());
    match plain {
        Some(scope) if req.operator == "Exists" && req.values.is_empty() => Cow::Borrowed(scope.as_str()),
        _ => {
            // `<scope> <operator>`, then ` [a, b]` when there are values: pieces, not formatting.
            let values = req.values.iter().map(|v| v.len() + 2).sum::<usize>();
            let mut out = String::with_capacity(req.scope_name.len() + req.operator.len() + values + 3);
            out.push_str(&req.scope_name);
            out.push(' ');
            out.push_str(&req.operator);
            if !req.values.is_empty() {
                out.push_str(" [");
                for (i, v) in req.values.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(v);
                }
                out.push(']');
            }
            Cow::Owned(out)
        }
    }
}

/// Go's `%v` of a `[]ScopedResourceSelectorRequirement`, as in
/// `insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]`.
pub fn go_format(reqs: &[ScopeRequirement]) -> String {
    let parts: Vec<String> = reqs.iter().map(|r| format!("{{{} {} [{}]}}", r.scope_name, r.operator, r.values.join(" "))).collect();
    format!("[{}]", parts.join(" "))
}

/// An outcome whose reason is the expression, the verdict and `why` (its pieces, in order),
/// written straight into the one string.
fn outcome(req: &ScopeRequirement, matched: bool, why: &[&str]) -> ScopeOutcome {
    let verb = if matched { "matched" } else { "excluded" };
    let selector = describe(req);
    let mut reason = String::with_capacity(selector.len() + verb.len() + 2 + why.iter().map(|w| w.len()).sum::<usize>());
    for piece in [&*selector, " ", verb, " "].iter().chain(why) {
        reason.push_str(piece);
    }
    ScopeOutcome { selector, matched, reason }
}

/// A label value as the label selector parser requires (63 characters, alphanumeric ends).
fn valid_label_value(v: &str) -> bool {
    // Byte by byte: any byte of a non-ASCII character fails, as the character would.
    let b = v.as_bytes();
    b.len() <= 63
        && (b.is_empty()
            || (b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()))
}

/// The error for a selector the server cannot turn into a label selector.
fn selector_error(scope_name: &str, operator: &str, values: &[String], why: String) -> String {
    let req = ScopeRequirement { scope_name: scope_name.into(), operator: operator.into(), values: values.to_vec() };
    format!("error on matching scope {}: failed to parse and convert selector: {why}", go_format(std::slice::from_ref(&req)))
}

/// Label-selector semantics on the single key of a class-name scope: `name` empty means the
/// label is absent. Errors carry the server's texts.
fn class_name_selects(scope_name: &str, operator: &str, values: &[String], name: &str) -> Result<bool, String> {
    if let Some(bad) = values.iter().find(|v| !valid_label_value(v)) {
        let why = format!(
            "values[0][{scope_name}]: Invalid value: {bad:?}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'"
        );
        return Err(selector_error(scope_name, operator, values, why));
    }
    Ok(match operator {
        "Exists" => !name.is_empty(),
        "DoesNotExist" => name.is_empty(),
        "In" => !name.is_empty() && values.iter().any(|v| v == name),
        "NotIn" => name.is_empty() || !values.iter().any(|v| v == name),
        other => return Err(selector_error(scope_name, operator, values, format!("{other:?} is not a valid pod selector operator"))),
    })
}

fn match_class_name(req: &ScopeRequirement, field: &str, name: &str) -> Result<ScopeOutcome, String> {
    let matched = class_name_selects(&req.scope_name, &req.operator, &req.values, name)?;
    Ok(if name.is_empty() { outcome(req, matched, &[field, " is empty"]) } else { outcome(req, matched, &[field, "=", name]) })
}

/// `podMatchesScopeFunc`: whether the selector selects the pod. `qos` holds the pod's QoS
/// class once worked out, for the next selector. PriorityClass, the scope of most selectors,
/// is tested first.
fn pod_selects(scope_name: &str, operator: &str, values: &[String], pod: &Pod, qos: &OnceCell<QosClass>) -> Result<bool, String> {
    Ok(match scope_name {
        "PriorityClass" => class_name_selects(scope_name, operator, values, &pod.priority_class_name)?,
        "Terminating" => pod.active_deadline_seconds.is_some_and(|s| s >= 0),
        "NotTerminating" => pod.active_deadline_seconds.is_none_or(|s| s < 0),
        "BestEffort" => *qos.get_or_init(|| pod_qos(pod)) == QosClass::BestEffort,
        "NotBestEffort" => *qos.get_or_init(|| pod_qos(pod)) != QosClass::BestEffort,
        "CrossNamespacePodAffinity" => pod.cross_namespace_affinity,
        _ => false,
    })
}

/// [`pod_selects`], and why.
pub fn match_pod(req: &ScopeRequirement, pod: &Pod) -> Result<ScopeOutcome, String> {
    match_pod_with(req, pod, &OnceCell::new())
}

/// [`match_pod`], with the pod's QoS class kept in `qos` once worked out.
fn match_pod_with(req: &ScopeRequirement, pod: &Pod, qos: &OnceCell<QosClass>) -> Result<ScopeOutcome, String> {
    if req.scope_name == "PriorityClass" {
        return match_class_name(req, "priorityClassName", &pod.priority_class_name);
    }
    let matched = pod_selects(&req.scope_name, &req.operator, &req.values, pod, qos)?;
    Ok(match req.scope_name.as_str() {
        "Terminating" | "NotTerminating" => match pod.active_deadline_seconds {
            Some(s) => outcome(req, matched, &["spec.activeDeadlineSeconds=", itoa::Buffer::new().format(s)]),
            None => outcome(req, matched, &["spec.activeDeadlineSeconds is not set"]),
        },
        "BestEffort" | "NotBestEffort" => outcome(req, matched, &["pod QoS class is ", qos.get_or_init(|| pod_qos(pod)).as_str()]),
        "CrossNamespacePodAffinity" if pod.cross_namespace_affinity => outcome(req, matched, &["a pod (anti-)affinity term names other namespaces"]),
        "CrossNamespacePodAffinity" => outcome(req, matched, &["no pod (anti-)affinity term names other namespaces"]),
        other => outcome(req, matched, &[&format!("{other:?}"), " is not a scope pods can match"]),
    })
}

/// The class names a claim may be matched by (spec, status, pending modification).
fn pvc_class_names(pvc: &Pvc) -> impl Iterator<Item = &String> {
    [&pvc.volume_attributes_class_name, &pvc.current_volume_attributes_class_name, &pvc.target_volume_attributes_class_name].into_iter().flatten()
}

/// PVC scopes: only VolumeAttributesClass; a claim may reference several class names and
/// matches when any of them satisfies the expression.
fn pvc_selects(scope_name: &str, operator: &str, values: &[String], pvc: &Pvc) -> Result<bool, String> {
    if scope_name != "VolumeAttributesClass" {
        return Ok(false);
    }
    if operator == "Exists" || pvc_class_names(pvc).next().is_none() {
        return class_name_selects(scope_name, operator, values, pvc_class_names(pvc).next().map(String::as_str).unwrap_or(""));
    }
    for n in pvc_class_names(pvc) {
        if class_name_selects(scope_name, operator, values, n)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// [`pvc_selects`], and why (naming the class name that decided).
pub fn match_pvc(req: &ScopeRequirement, pvc: &Pvc) -> Result<ScopeOutcome, String> {
    if req.scope_name != "VolumeAttributesClass" {
        return Ok(outcome(req, false, &["(persistentvolumeclaims are tracked only by VolumeAttributesClass scopes)"]));
    }
    let field = "volumeAttributesClassName";
    if req.operator == "Exists" || pvc_class_names(pvc).next().is_none() {
        return match_class_name(req, field, pvc_class_names(pvc).next().map(String::as_str).unwrap_or(""));
    }
    let mut last = None;
    for n in pvc_class_names(pvc) {
        let o = match_class_name(req, field, n)?;
        if o.matched {
            return Ok(o);
        }
        last = Some(o);
    }
    Ok(last.expect("at least one name"))
}

/// For objects whose evaluator supports no scopes (services, counted objects).
pub fn match_unscoped(req: &ScopeRequirement, resource: &str) -> ScopeOutcome {
    outcome(req, false, &["(", resource, " are never tracked by scoped quotas)"])
}

/// Matches every selector against an object as its evaluator sees it (all must match for the
/// quota to apply): pods and claims by their fields, anything else matches no scope.
/// Errors carry the server's text.
pub fn match_all(ev: &Evaluator, obj: &Object, selectors: &[ScopeRequirement]) -> Result<Vec<ScopeOutcome>, String> {
    Selecting::new(ev, obj).explain(selectors)
}

/// One object, tested against the scopes of many quotas, with the pod's QoS class worked out
/// once: [`Selecting::quota`] answers whether every scope and selector expression of a quota
/// selects it (no explanation, no copied selectors); [`Selecting::explain`] gives each
/// expression's outcome with its reason.
pub struct Selecting<'a> {
    ev: &'a Evaluator,
    obj: &'a Object,
    qos: OnceCell<QosClass>,
}

impl<'a> Selecting<'a> {
    pub fn new(ev: &'a Evaluator, obj: &'a Object) -> Self {
        Selecting { ev, obj, qos: OnceCell::new() }
    }

    /// [`match_all`] for this object: every expression with its reason.
    pub fn explain(&self, selectors: &[ScopeRequirement]) -> Result<Vec<ScopeOutcome>, String> {
        selectors
            .iter()
            .map(|s| match (&self.obj.body, self.ev) {
                (Body::Pod(p), Evaluator::Pod(_)) => match_pod_with(s, p, &self.qos),
                (Body::PersistentVolumeClaim(p), Evaluator::PersistentVolumeClaim) => match_pvc(s, p),
                _ => Ok(match_unscoped(s, &self.obj.type_info.group_resource())),
            })
            .collect()
    }

    fn one(&self, name: &str, op: &str, values: &[String]) -> Result<bool, String> {
        match (&self.obj.body, self.ev) {
            (Body::Pod(p), Evaluator::Pod(_)) => pod_selects(name, op, values, p, &self.qos),
            (Body::PersistentVolumeClaim(p), Evaluator::PersistentVolumeClaim) => pvc_selects(name, op, values, p),
            _ => Ok(false),
        }
    }

    /// Like [`match_all`], an expression the server cannot evaluate is an error even when an
    /// earlier one already excludes the object.
    pub fn quota(&self, quota: &ResourceQuota) -> Result<bool, String> {
        let mut all = true;
        for scope in &quota.scopes {
            all &= self.one(scope, "Exists", &[])?;
        }
        for req in quota.scope_selector.iter().flatten() {
            all &= self.one(&req.scope_name, &req.operator, &req.values)?;
        }
        Ok(all)
    }
}

/// Whether a scoped quota can charge `name`: scopes only ever match pods, and claims through
/// the VolumeAttributesClass scope.
/// `(VolumeAttributesClass scopes, all scopes)` of a quota: plain scopes and selector
/// expressions, counted without copying them.
fn scope_counts(q: &ResourceQuota) -> (usize, usize) {
    let names = q.scopes.iter().map(String::as_str).chain(q.scope_selector.iter().flatten().map(|r| r.scope_name.as_str()));
    names.fold((0, 0), |(vac, all), n| (vac + usize::from(n == "VolumeAttributesClass"), all + 1))
}

fn scoped_quota_can_charge(name: &str, (vac, all): (usize, usize)) -> bool {
    if vac == all {
        Evaluator::PersistentVolumeClaim.tracks(name)
    } else {
        vac == 0 && Evaluator::POD.tracks(name)
    }
}

/// Resources a scoped quota lists but can never charge (none when it has no scope).
pub fn never_charged(q: &ResourceQuota) -> Vec<String> {
    let counts = scope_counts(q);
    if counts.1 == 0 {
        return vec![];
    }
    q.spec_hard.keys().filter(|k| !scoped_quota_can_charge(k, counts)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::Container;
    use crate::resources::ResourceList;

    fn rl(pairs: &[(&str, &str)]) -> ResourceList {
        pairs.iter().map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap())).collect()
    }

    fn pod(containers: Vec<(ResourceList, ResourceList)>) -> Pod {
        Pod {
            containers: containers
                .into_iter()
                .enumerate()
                .map(|(i, (requests, limits))| Container { name: format!("c{i}"), requests, limits, ..Container::default() })
                .collect::<Vec<_>>()
                .into(),
            ..Pod::default()
        }
    }

    fn req(scope: &str, op: &str, values: &[&str]) -> ScopeRequirement {
        ScopeRequirement { scope_name: scope.into(), operator: op.into(), values: values.iter().map(|s| s.to_string()).collect() }
    }

    #[test]
    fn qos_class_follows_cpu_and_memory_only() {
        let cases = [
            (pod(vec![(rl(&[]), rl(&[]))]), QosClass::BestEffort),
            (pod(vec![(rl(&[("nvidia.com/gpu", "1"), ("ephemeral-storage", "1Gi")]), rl(&[]))]), QosClass::BestEffort),
            (pod(vec![(rl(&[("cpu", "0")]), rl(&[]))]), QosClass::BestEffort),
            (pod(vec![(rl(&[("cpu", "100m")]), rl(&[]))]), QosClass::Burstable),
            (pod(vec![(rl(&[("cpu", "1"), ("memory", "1Gi")]), rl(&[("cpu", "1"), ("memory", "1Gi")]))]), QosClass::Guaranteed),
            (pod(vec![(rl(&[("cpu", "1000m"), ("memory", "1024Mi")]), rl(&[("cpu", "1"), ("memory", "1Gi")]))]), QosClass::Guaranteed),
            (pod(vec![(rl(&[("cpu", "1")]), rl(&[("cpu", "1")]))]), QosClass::Burstable),
            (pod(vec![(rl(&[("cpu", "1"), ("memory", "1Gi")]), rl(&[("cpu", "1"), ("memory", "1Gi")])), (rl(&[]), rl(&[]))]), QosClass::Burstable),
        ];
        for (i, (p, want)) in cases.iter().enumerate() {
            assert_eq!(pod_qos(p), *want, "case {i}");
        }
    }

    #[test]
    fn qos_uses_pod_level_resources_when_set() {
        let mut p = pod(vec![(rl(&[]), rl(&[]))]);
        p.pod_requests = rl(&[("cpu", "1"), ("memory", "1Gi")]);
        p.pod_limits = rl(&[("cpu", "1"), ("memory", "1Gi")]);
        assert_eq!(pod_qos(&p), QosClass::Guaranteed);
    }

    #[test]
    fn priority_class_selector_uses_label_semantics() {
        let with = |name: &str| Pod { priority_class_name: name.into(), ..Pod::default() };
        let cases = [
            (req("PriorityClass", "In", &["high"]), "high", true),
            (req("PriorityClass", "In", &["high"]), "low", false),
            (req("PriorityClass", "In", &["high"]), "", false),
            (req("PriorityClass", "NotIn", &["high"]), "low", true),
            (req("PriorityClass", "NotIn", &["high"]), "high", false),
            (req("PriorityClass", "NotIn", &["high"]), "", true),
            (req("PriorityClass", "Exists", &[]), "low", true),
            (req("PriorityClass", "Exists", &[]), "", false),
            (req("PriorityClass", "DoesNotExist", &[]), "", true),
            (req("PriorityClass", "DoesNotExist", &[]), "low", false),
        ];
        for (r, name, want) in cases {
            assert_eq!(match_pod(&r, &with(name)).unwrap().matched, want, "{r:?} on {name:?}");
        }
        assert!(match_pod(&req("PriorityClass", "Gt", &["1"]), &with("x")).is_err());
    }

    #[test]
    fn terminating_scopes_follow_active_deadline() {
        let p = |d: Option<i64>| Pod { active_deadline_seconds: d, ..Pod::default() };
        assert!(match_pod(&req("Terminating", "Exists", &[]), &p(Some(30))).unwrap().matched);
        assert!(!match_pod(&req("Terminating", "Exists", &[]), &p(None)).unwrap().matched);
        assert!(match_pod(&req("NotTerminating", "Exists", &[]), &p(None)).unwrap().matched);
        assert_eq!(match_pod(&req("Terminating", "Exists", &[]), &p(Some(30))).unwrap().reason, "Terminating matched spec.activeDeadlineSeconds=30");
    }

    #[test]
    fn cross_namespace_affinity_scope() {
        let p = Pod { cross_namespace_affinity: true, ..Pod::default() };
        assert!(match_pod(&req("CrossNamespacePodAffinity", "Exists", &[]), &p).unwrap().matched);
        assert!(!match_pod(&req("CrossNamespacePodAffinity", "Exists", &[]), &Pod::default()).unwrap().matched);
    }

    #[test]
    fn volume_attributes_class_matches_any_referenced_name() {
        let pvc = Pvc { volume_attributes_class_name: Some("gold".into()), current_volume_attributes_class_name: Some("silver".into()), ..Pvc::default() };
        assert!(match_pvc(&req("VolumeAttributesClass", "NotIn", &["gold"]), &pvc).unwrap().matched);
        assert!(match_pvc(&req("VolumeAttributesClass", "In", &["gold"]), &pvc).unwrap().matched);
        assert!(!match_pvc(&req("VolumeAttributesClass", "In", &["bronze"]), &pvc).unwrap().matched);
        assert!(match_pvc(&req("VolumeAttributesClass", "DoesNotExist", &[]), &Pvc::default()).unwrap().matched);
        assert!(!match_pvc(&req("PriorityClass", "Exists", &[]), &pvc).unwrap().matched);
    }

    #[test]
    fn go_format_matches_server_messages() {
        let r = vec![req("PriorityClass", "In", &["system-node-critical", "system-cluster-critical"]), req("PriorityClass", "Exists", &[])];
        assert_eq!(go_format(&r), "[{PriorityClass In [system-node-critical system-cluster-critical]} {PriorityClass Exists []}]");
    }
}
