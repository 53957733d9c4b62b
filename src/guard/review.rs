//! One AdmissionReview (admission.k8s.io/v1) in, its answer out: the workload decoded as any
//! manifest is, checked by the engine against the cached state of its namespace, and the
//! verdict worded as warnings that fit the API server's limits. No I/O: the caches are handed
//! in as a [`ClusterState`] of the request's namespace.
//!
//! The API server's limits on warnings (k8s.io/apiserver, `endpoints/filters/warning.go`, from
//! 1.21): each response carries at most 4096 characters (runes) of warning text; past that,
//! every warning is cut to 256 characters. Warnings with control characters are dropped
//! (`net.NewWarningHeader` refuses them). 1.20 cuts nothing, but sends everything in one
//! header. So each warning here is at most [`MAX_WARNING_CHARS`], control characters made
//! visible, and all of them together at most [`MAX_TOTAL_CHARS`].

use kubectl_quota_engine::check::{CheckOptions, Checker, ClusterState};
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects;
use kubectl_quota_engine::report::warnings;
use serde_json::{json, Value};

/// The longest warning sent, in characters: the API server cuts longer ones to this length
/// once the response's warnings pass [`MAX_TOTAL_CHARS`], so none is ever cut by it.
pub const MAX_WARNING_CHARS: usize = 256;
/// All of a response's warnings together, in characters: the API server's own bound.
pub const MAX_TOTAL_CHARS: usize = 4096;

/// The namespace label that opts a namespace in to refusals (`enforce`), or out of the guard
/// (`ignore`, also read on objects).
pub const LABEL: &str = "kubectl-quota.io/guard";

/// The kinds whose pods controllers create later: (group, kind).
pub const WORKLOADS: [(&str, &str); 7] = [
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("", "ReplicationController"),
];

/// Whether (group, kind) is an autoscaler whose target's pods the guard speaks about (one the
/// guard reads from the cluster): its target is read when it is created or changed.
fn is_autoscaler(kind: (&str, &str)) -> bool {
    objects::autoscaler_type(kind.0, kind.1).is_some_and(|t| t.read)
}

/// The request fields the guard reads.
pub struct Request {
    pub uid: String,
    pub group: String,
    pub kind: String,
    pub operation: String,
    pub namespace: String,
    pub object: Option<Value>,
    pub old_object: Option<Value>,
}

/// What the guard answers, and why (for the metrics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub allowed: bool,
    pub warnings: Vec<String>,
    /// The refusal's message when not allowed.
    pub message: Option<String>,
    pub why: Why,
    /// How far quota lets the autoscaler of the request (or the workload's) scale, for the
    /// metrics.
    pub ceiling: Option<kubectl_quota_engine::autoscaling::Ceiling>,
}

/// Why the answer is what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Not a workload, or not a request the guard speaks about (an object a controller owns,
    /// an update that leaves the pods as they are, an excluded namespace or object).
    Skipped,
    /// Checked: every pod fits (or the object itself is refused: the server says so).
    Fits,
    /// Checked: warned.
    Warned,
    /// Checked: refused (the namespace opted in, and no pod can be created).
    Denied,
    /// The object could not be decoded as the engine reads manifests: allowed, unsaid.
    Undecodable,
}

impl Why {
    pub fn label(self) -> &'static str {
        match self {
            Why::Skipped => "skipped",
            Why::Fits => "fits",
            Why::Warned => "warned",
            Why::Denied => "denied",
            Why::Undecodable => "undecodable",
        }
    }
}

/// The review as read: only the fields the guard reads are kept (serde skips the others,
/// `userInfo`, `options`, the dry-run flag, without building them), and of the objects
/// everything but what deciding never reads ([`Kept`]).
#[derive(serde::Deserialize)]
struct Envelope {
    #[serde(rename = "apiVersion", default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    request: Option<RawRequest>,
}

#[derive(serde::Deserialize)]
struct RawRequest {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    kind: Gvk,
    #[serde(default)]
    operation: String,
    #[serde(default)]
    namespace: String,
    object: Option<Kept>,
    #[serde(rename = "oldObject")]
    old_object: Option<Kept>,
}

#[derive(serde::Deserialize, Default)]
struct Gvk {
    #[serde(default)]
    group: String,
    #[serde(default)]
    kind: String,
}

/// An object without what deciding never reads and a review can carry in bulk: its
/// `metadata.managedFields` and its `kubectl.kubernetes.io/last-applied-configuration`
/// annotation (a copy of the whole manifest), skipped as they are read, never built.
struct Kept(Value);

impl<'de> serde::Deserialize<'de> for Kept {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Kept, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, Visitor};
        /// `skip(key)`: a key whose value is skipped; `inner(key)`: one read by `next`.
        struct Pruning {
            skip: fn(&str) -> bool,
            inner: Option<(&'static str, fn() -> Pruning)>,
        }
        impl<'de> serde::de::DeserializeSeed<'de> for Pruning {
            type Value = Value;
            fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
                d.deserialize_any(self)
            }
        }
        impl<'de> Visitor<'de> for Pruning {
            type Value = Value;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
                let mut out = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if (self.skip)(&key) {
                        map.next_value::<IgnoredAny>()?;
                    } else if let Some((_, next)) = self.inner.filter(|(k, _)| *k == key) {
                        out.insert(key, map.next_value_seed(next())?);
                    } else {
                        out.insert(key, map.next_value::<Value>()?);
                    }
                }
                Ok(Value::Object(out))
            }
            // Anything else is read as it is (an object that is not a map is not decoded).
            fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
                Ok(Value::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
                Ok(Value::from(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
                Ok(Value::from(v))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
                Ok(Value::from(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Value, E> {
                Ok(Value::from(v))
            }
            fn visit_unit<E>(self) -> Result<Value, E> {
                Ok(Value::Null)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element::<Value>()? {
                    out.push(v);
                }
                Ok(Value::Array(out))
            }
        }
        fn annotations() -> Pruning {
            Pruning { skip: |k| k == "kubectl.kubernetes.io/last-applied-configuration", inner: None }
        }
        fn metadata() -> Pruning {
            Pruning { skip: |k| k == "managedFields", inner: Some(("annotations", annotations)) }
        }
        let top = Pruning { skip: |_| false, inner: Some(("metadata", metadata)) };
        serde::de::DeserializeSeed::deserialize(top, d).map(Kept)
    }
}

/// Reads an AdmissionReview: `Err` says what is wrong with it, for a 400.
pub fn parse(body: &[u8]) -> Result<Request, String> {
    let v: Envelope = serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    if (v.api_version.as_str(), v.kind.as_str()) != ("admission.k8s.io/v1", "AdmissionReview") {
        return Err(format!("want an admission.k8s.io/v1 AdmissionReview, got apiVersion {:?} kind {:?}", v.api_version, v.kind));
    }
    let Some(req) = v.request else {
        return Err("the AdmissionReview has no request".into());
    };
    if req.uid.is_empty() {
        return Err("the AdmissionReview's request has no uid".into());
    }
    let object = req.object.map(|k| k.0).filter(Value::is_object);
    let old_object = req.old_object.map(|k| k.0).filter(Value::is_object);
    Ok(Request { uid: req.uid, group: req.kind.group, kind: req.kind.kind, operation: req.operation, namespace: req.namespace, object, old_object })
}

/// The AdmissionReview answering `uid`.
pub fn response(uid: &str, a: &Answer) -> Value {
    let mut r = json!({ "uid": uid, "allowed": a.allowed });
    if !a.warnings.is_empty() {
        r["warnings"] = json!(a.warnings);
    }
    if let Some(m) = &a.message {
        r["status"] = json!({ "code": 403, "reason": "Forbidden", "message": m });
    }
    json!({ "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": r })
}

/// Whether the guard speaks about this request at all, before anything is decoded: a workload
/// kind or an autoscaler, created or updated, not owned by a controller (the controller's
/// creator was answered: the HPA KEDA makes for a ScaledObject, say), not labelled to opt out,
/// and on update with a changed spec (metadata and status changes do not change the pods).
pub fn concerns(req: &Request) -> bool {
    let kind = (req.group.as_str(), req.kind.as_str());
    if !(WORKLOADS.contains(&kind) || is_autoscaler(kind)) || !matches!(req.operation.as_str(), "CREATE" | "UPDATE") {
        return false;
    }
    let Some(obj) = &req.object else { return false };
    let meta = obj.get("metadata");
    let owned = meta
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .is_some_and(|refs| refs.iter().any(|r| r.get("controller").and_then(Value::as_bool) == Some(true)));
    let opted_out = meta.and_then(|m| m.get("labels")).and_then(|l| l.get(LABEL)).and_then(Value::as_str) == Some("ignore");
    if owned || opted_out {
        return false;
    }
    match (&req.operation[..], &req.old_object) {
        ("UPDATE", Some(old)) => old.get("spec") != obj.get("spec"),
        _ => true,
    }
}

/// The workload an autoscaler of the request names (`spec.scaleTargetRef`; a VPA's
/// `spec.targetRef`), which the guard
/// reads from the cluster to answer for its pods; `None` for any other request.
pub fn scale_target(req: &Request) -> Option<objects::ScaleTarget> {
    if !is_autoscaler((req.group.as_str(), req.kind.as_str())) {
        return None;
    }
    let field = if req.kind == "VerticalPodAutoscaler" { "targetRef" } else { "scaleTargetRef" };
    let t = req.object.as_ref()?.get("spec")?.get(field)?;
    let field = |f: &str| t.get(f).and_then(Value::as_str).unwrap_or_default().to_string();
    let target = objects::ScaleTarget { api_version: field("apiVersion"), kind: field("kind"), name: field("name") };
    (!target.kind.is_empty() && !target.name.is_empty()).then_some(target)
}

/// Decides a request the guard [`concerns`] itself with: `state` holds the namespace's quotas,
/// LimitRanges and classes (and the namespace with its labels, when known); `enforce` is
/// whether the namespace opted in to refusals.
pub fn decide(req: Request, mut state: ClusterState, opts: &CheckOptions, enforce: bool) -> Answer {
    let origin = || Origin::new(format!("{} {}/{}", req.operation.to_lowercase(), req.kind, req.namespace), 1);
    // A workload's template keeps its spec as sent: the admission policies read it.
    let decode = |v: Value| {
        let doc = Document { origin: origin(), value: v };
        objects::decode(&doc).map(|mut o| {
            objects::keep_source(&mut o, doc.value, true);
            o
        })
    };
    let Some(Ok(obj)) = req.object.map(decode) else {
        return Answer { allowed: true, warnings: vec![], message: None, why: Why::Undecodable, ceiling: None };
    };
    if let Some(Ok(mut old)) = req.old_object.map(decode) {
        old.meta.namespace = Some(req.namespace.clone());
        old.meta.resource_version.get_or_insert_with(|| "1".into());
        state.existing.insert((req.namespace.clone(), old.type_info.group_resource(), old.meta.name.clone()), old);
    }
    // A pod reaches the webhook past the server's own admission policies (they run before the
    // validating webhooks): what it is sent is what they left. A workload's pods still meet them.
    if let objects::Body::Pod(_) = &obj.body {
        state.policies = None;
    }
    // A pod reaches the webhook past the server's own ServiceAccount plugin: its ServiceAccount
    // exists, whatever the cache has seen yet.
    if let objects::Body::Pod(p) = &obj.body {
        let name = if p.service_account_name.is_empty() { "default" } else { p.service_account_name.as_str() };
        state.service_accounts.entry(req.namespace.clone()).or_default().insert(name.to_string());
    }
    let mut checker = Checker::new(&mut state, opts);
    if let objects::Body::Autoscaler(_) | objects::Body::VerticalAutoscaler(_) = &obj.body {
        // The autoscaler as sent, not the cached one it replaces, decides its target's count.
        checker.expect(std::slice::from_ref(&obj));
    }
    let report = checker.check_one(obj);
    let said = fit(warnings::for_document(&report));
    let ceiling = report.autoscaling.clone();
    if said.is_empty() {
        return Answer { allowed: true, warnings: said, message: None, why: Why::Fits, ceiling };
    }
    if enforce && warnings::no_pod_created(&report) {
        // The refusal says the first sentence; the others stay warnings.
        let mut rest = said.into_iter();
        let message = format!("kubectl-quota guard: {}", rest.next().unwrap_or_default());
        return Answer { allowed: false, warnings: rest.collect(), message: Some(message), why: Why::Denied, ceiling };
    }
    Answer { allowed: true, warnings: said, message: None, why: Why::Warned, ceiling }
}

/// Warnings as the API server will show them whole: control characters made visible, each cut
/// to [`MAX_WARNING_CHARS`] (ending in `...`), and no more than [`MAX_TOTAL_CHARS`] in all.
pub fn fit(warnings: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut total = 0;
    for w in warnings {
        let w = crate::escape::escape(&w).into_owned();
        let n = w.chars().count();
        let w = if n > MAX_WARNING_CHARS { w.chars().take(MAX_WARNING_CHARS - 3).collect::<String>() + "..." } else { w };
        let n = w.chars().count();
        if total + n > MAX_TOTAL_CHARS {
            break;
        }
        total += n;
        out.push(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(request: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})).unwrap()
    }

    #[test]
    fn bad_reviews_are_named() {
        let cases: [(&[u8], &str); 4] = [
            (b"{", "the body is not JSON"),
            (br#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}"#, "want an admission.k8s.io/v1 AdmissionReview"),
            (br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#, "has no request"),
            (br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}"#, "has no uid"),
        ];
        for (body, want) in cases {
            let e = parse(body).err().unwrap();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn what_deciding_never_reads_is_not_kept() {
        let object = json!({"metadata": {"name": "web", "managedFields": [{"manager": "kubectl"}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...}", "team": "a"}, "labels": {"app": "web"}},
            "spec": {"replicas": 2, "template": {"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "kept here"}}}}});
        let r = parse(&review(json!({"uid": "u", "kind": {"group": "apps", "kind": "Deployment"}, "operation": "UPDATE", "namespace": "a",
            "userInfo": {"username": "me", "groups": ["x"]}, "object": object, "oldObject": object})))
        .unwrap();
        let want = json!({"metadata": {"name": "web", "annotations": {"team": "a"}, "labels": {"app": "web"}},
            "spec": {"replicas": 2, "template": {"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "kept here"}}}}});
        assert_eq!(r.object.as_ref(), Some(&want));
        assert_eq!(r.old_object.as_ref(), Some(&want));
        assert_eq!((r.uid.as_str(), r.group.as_str(), r.kind.as_str(), r.operation.as_str(), r.namespace.as_str()), ("u", "apps", "Deployment", "UPDATE", "a"));
        // An object that is not a map is no object.
        assert!(parse(&review(json!({"uid": "u", "object": [1, "two"]}))).unwrap().object.is_none());
    }

    #[test]
    fn only_created_or_changed_unowned_workloads_concern_the_guard() {
        let deploy = json!({"metadata": {"name": "web"}, "spec": {"replicas": 2}});
        let base =
            json!({"uid": "u", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"}, "operation": "CREATE", "namespace": "a", "object": deploy});
        let with = |f: &dyn Fn(&mut Value)| {
            let mut r = base.clone();
            f(&mut r);
            concerns(&parse(&review(r)).unwrap())
        };
        assert!(with(&|_| {}));
        assert!(!with(&|r| r["kind"] = json!({"group": "", "version": "v1", "kind": "ConfigMap"})));
        assert!(!with(&|r| r["operation"] = json!("DELETE")));
        assert!(!with(&|r| r["object"]["metadata"]["ownerReferences"] = json!([{"controller": true, "kind": "Deployment", "name": "x"}])));
        assert!(!with(&|r| r["object"]["metadata"]["labels"] = json!({LABEL: "ignore"})));
        assert!(!with(&|r| {
            r["operation"] = json!("UPDATE");
            r["oldObject"] = r["object"].clone();
        }));
        assert!(with(&|r| {
            r["operation"] = json!("UPDATE");
            r["oldObject"] = json!({"metadata": {"name": "web"}, "spec": {"replicas": 1}});
        }));
    }

    /// The namespace shop of examples/autoscaling: quota compute (requests.cpu 4, limits.cpu 8,
    /// pods 10) and Deployment web running 5 pods of 500m/1 cpu.
    fn shop() -> ClusterState {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/autoscaling/state.yaml")).unwrap();
        let objs: Vec<_> = kubectl_quota_engine::manifest::parse_str("state.yaml", &text).unwrap().iter().map(|d| objects::decode(d).unwrap()).collect();
        ClusterState::from_objects(objs, "shop")
    }

    fn hpa_review(operation: &str, min: i64, old_min: Option<i64>) -> Request {
        let hpa = |min: i64| {
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": min, "maxReplicas": 20}})
        };
        let mut r = json!({"uid": "u", "kind": {"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"}, "operation": operation,
            "namespace": "shop", "object": hpa(min)});
        if let Some(old) = old_min {
            r["oldObject"] = hpa(old);
        }
        parse(&review(r)).unwrap()
    }

    #[test]
    fn an_autoscaler_is_answered_for_the_pods_of_the_workload_it_targets() {
        let opts = CheckOptions { namespace: "shop".into(), ..CheckOptions::default() };
        let refused = "quota compute will refuse 4 of the 12 pods of deployment/web: exceeded quota: compute, requested: limits.cpu=1,requests.cpu=500m, used: limits.cpu=8,requests.cpu=4, limited: limits.cpu=8,requests.cpu=4";
        let min12 = "HPA web scales deployment/web from 12 to 20 pods; quota compute lets 8 run (limits.cpu, requests.cpu): even its minimum of 12 is refused";
        let min3 = "HPA web scales deployment/web from 3 to 20 pods; quota compute lets 8 run (limits.cpu, requests.cpu): scale-ups past 8 will be refused";
        // (request, the target known, warnings)
        let cases: Vec<(Request, bool, Vec<&str>)> = vec![
            // Created with a minimum above what fits: the pods refused, and the ceiling.
            (hpa_review("CREATE", 12, None), true, vec![refused, min12]),
            // A minimum that fits: the ceiling alone.
            (hpa_review("CREATE", 3, None), true, vec![min3]),
            // Changed from 3 to 12: the new minimum decides, not the old one.
            (hpa_review("UPDATE", 12, Some(3)), true, vec![refused, min12]),
            // Changed from 12 to 3: the old minimum is gone.
            (hpa_review("UPDATE", 3, Some(12)), true, vec![min3]),
            // A target that could not be read: nothing is said.
            (hpa_review("CREATE", 12, None), false, vec![]),
        ];
        for (i, (req, known, want)) in cases.into_iter().enumerate() {
            assert!(concerns(&req), "case {i}");
            assert_eq!(scale_target(&req).map(|t| t.name), Some("web".to_string()), "case {i}");
            let mut state = shop();
            if !known {
                state.existing.clear();
            }
            let a = decide(req, state, &opts, false);
            assert_eq!(a.warnings, want, "case {i}");
        }
        // A change of the autoscaler's status or metadata only is not spoken about.
        let mut same = hpa_review("UPDATE", 12, Some(12));
        assert!(!concerns(&same));
        same.object.as_mut().unwrap()["metadata"]["ownerReferences"] = json!([{"controller": true, "kind": "ScaledObject", "name": "web"}]);
        same.operation = "CREATE".into();
        assert!(!concerns(&same), "the HPA KEDA makes for a ScaledObject is the ScaledObject's");
    }

    #[test]
    fn a_vpa_is_answered_for_the_running_pods_of_its_target() {
        let opts = CheckOptions { namespace: "shop".into(), ..CheckOptions::default() };
        let vpa = json!({"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
            "status": {"recommendation": {"containerRecommendations": [{"containerName": "app", "target": {"cpu": "1200m"}}]}}});
        let req = parse(&review(json!({"uid": "u", "kind": {"group": "autoscaling.k8s.io", "version": "v1", "kind": "VerticalPodAutoscaler"},
            "operation": "CREATE", "namespace": "shop", "object": vpa})))
        .unwrap();
        assert!(concerns(&req));
        assert_eq!(scale_target(&req).map(|t| t.name), Some("web".to_string()));
        let a = decide(req, shop(), &opts, false);
        assert_eq!(
            a.warnings,
            vec!["quota compute lets 3 of 5 pods of deployment/web be recreated at VPA web's target (limits.cpu=2400m, requests.cpu=1200m each): the other 2 stay evicted"]
        );
    }

    #[test]
    fn warnings_fit_the_servers_limits() {
        let long = "x".repeat(1000);
        let fitted = fit(vec![long.clone(); 40]);
        assert!(fitted.iter().all(|w| w.chars().count() <= MAX_WARNING_CHARS && w.ends_with("...")));
        assert!(fitted.iter().map(|w| w.chars().count()).sum::<usize>() <= MAX_TOTAL_CHARS);
        assert_eq!(fitted.len(), MAX_TOTAL_CHARS / MAX_WARNING_CHARS);
        let controls = fit(vec!["a\u{1b}[31mb\nc".into()]);
        assert!(!controls[0].chars().any(char::is_control), "{controls:?}");
        // The line and paragraph separators are line breaks to many readers: escaped too.
        assert_eq!(fit(vec!["a\u{2028}b\u{2029}c".into()]), ["a\\u2028b\\u2029c"]);
    }

    #[test]
    fn the_answer_is_an_admission_review() {
        let a = Answer { allowed: false, warnings: vec!["w".into()], message: Some("m".into()), why: Why::Denied, ceiling: None };
        let r = response("u1", &a);
        assert_eq!(r["response"]["uid"], "u1");
        assert_eq!(r["response"]["allowed"], false);
        assert_eq!(r["response"]["warnings"], json!(["w"]));
        assert_eq!(r["response"]["status"]["code"], 403);
        let ok = response("u2", &Answer { allowed: true, warnings: vec![], message: None, why: Why::Fits, ceiling: None });
        assert!(ok["response"].get("warnings").is_none() && ok["response"].get("status").is_none());
    }
}

#[cfg(test)]
mod policy_tests {
    use super::*;
    use serde_json::json;

    /// A namespace with quota compute (requests.cpu 1) and a MutatingAdmissionPolicy that adds a
    /// sidecar of 100m to every pod.
    fn injected() -> ClusterState {
        let text = "\
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: shop}
spec: {hard: {requests.cpu: '1'}}
status: {hard: {requests.cpu: '1'}, used: {requests.cpu: '0'}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: sidecar}
spec:
  reinvocationPolicy: Never
  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
  mutations:
  - patchType: JSONPatch
    jsonPatch: {expression: \"[JSONPatch{op: 'add', path: '/spec/containers/-', value: Object.spec.containers{name: 'proxy', image: 'p', resources: Object.spec.containers.resources{requests: {'cpu': '100m'}}}}]\"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: sidecar}
spec: {policyName: sidecar}
";
        let objs: Vec<_> = kubectl_quota_engine::manifest::parse_str("state.yaml", text).unwrap().iter().map(|d| objects::decode(d).unwrap()).collect();
        ClusterState::from_objects(objs, "shop")
    }

    fn request(object: Value) -> Request {
        let kind = object["kind"].as_str().unwrap().to_string();
        let group = if kind == "Pod" { "" } else { "apps" };
        let r = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "kind": {"group": group, "version": "v1", "kind": kind}, "operation": "CREATE", "namespace": "shop", "object": object}});
        parse(&serde_json::to_vec(&r).unwrap()).unwrap()
    }

    #[test]
    fn a_workloads_pods_meet_the_policies_and_a_pod_is_taken_as_they_left_it() {
        let opts = CheckOptions { namespace: "shop".into(), ..CheckOptions::default() };
        let container = json!([{"name": "app", "image": "x", "resources": {"requests": {"cpu": "200m"}}}]);
        let shop = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "shop", "namespace": "shop"},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "shop"}},
                "template": {"metadata": {"labels": {"app": "shop"}}, "spec": {"containers": container}}}});
        let a = decide(request(shop), injected(), &opts, false);
        assert!(a.warnings.iter().any(|w| w.contains("1 of the 4 pods") && w.contains("requested: requests.cpu=300m")), "{:?}", a.warnings);
        // The server ran the policies before calling the guard: the pod it sends has its
        // sidecar already, and is not given another.
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"}, "spec": {"containers": container}});
        let a = decide(request(pod), injected(), &opts, false);
        assert!(a.warnings.iter().all(|w| !w.contains("300m")), "{:?}", a.warnings);
    }
}
