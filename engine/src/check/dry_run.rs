//! The pods a live check asks the API server for: where a mutating webhook (a sidecar
//! injector) sees a document's pods, what it adds is in no API, but the server answers a
//! create sent with `?dryRun=All` with the pod as its whole chain (webhooks included) returns
//! it, storing nothing. This room says which pods to ask for ([`dry_runs_needed`]), builds the
//! Pod to send from a document ([`pod_to_send`]), and reads the server's refusals
//! ([`answer_of_refusal`]); the plugin sends them and hands the answers back in
//! [`ClusterState::dry_runs`], which the chain's MutatingAdmissionWebhook step consults.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::webhooks::seen_by;
use super::ClusterState;
use crate::admission::policy::PolicySet;
use crate::admission::{Decision, QuotaReport, QuotaVerdict, Refusal, RefusalReason, ResourceRow, ServerAnswer, Stage, StandIn};
use crate::manifest::Origin;
use crate::objects::{Body, Object};
use crate::quantity::Quantity;

/// Which document a pod comes from: (file, document, item), as its [`Origin`] says. The pods
/// a workload's controller makes from its template carry the workload's.
pub type PodSource = (String, usize, Option<usize>);

/// The [`PodSource`] of an origin.
pub fn source_of(o: &Origin) -> PodSource {
    (o.file.clone(), o.document, o.item)
}

/// The server's answer for one document's pods, and the mutating webhooks that see them.
#[derive(Debug, Clone, PartialEq)]
pub struct DryRun {
    /// The answer, or why there is none (in words: the server does not run the webhook in a
    /// dry run, the user may not create pods, ...): the pods are then taken as written.
    pub answer: Result<ServerAnswer, String>,
    /// The webhooks (`name (configuration)`).
    pub webhooks: Vec<String>,
    /// What the pod was sent without: the input creates it first, the server had none yet.
    pub stood_in: Vec<StandIn>,
}

/// A pod to ask the server for: the document it comes from, where it is created, and the
/// mutating webhooks that see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DryRunAsk {
    pub source: PodSource,
    pub namespace: String,
    pub webhooks: Vec<String>,
}

/// The documents whose pods a mutating webhook sees (other than the ones not named: the VPA's,
/// replayed, and this tool's guard), as the state has the webhooks and namespaces: a new Pod,
/// or a workload's template. None where no webhook sees them (nothing is asked). A Pod that
/// exists already (an update) and a namespace known not to exist yet (the server would answer
/// 404) are not asked.
pub fn dry_runs_needed(state: &ClusterState, objs: &[Object], default_namespace: &str) -> Vec<DryRunAsk> {
    if state.webhooks.is_none() {
        return vec![];
    }
    let mut out = Vec::new();
    for o in objs {
        let sees = match &o.body {
            Body::Pod(_) => "the object",
            Body::Workload(_) => "its pods",
            _ => continue,
        };
        let ns = o.meta.namespace.clone().unwrap_or_else(|| default_namespace.to_string());
        if state.namespaces.as_ref().is_some_and(|n| !n.contains_key(&ns)) {
            continue;
        }
        if sees == "the object" && state.existing.contains_key(&(ns.clone(), o.type_info.group_resource(), o.meta.name.clone())) {
            continue;
        }
        let webhooks: Vec<String> = seen_by(state, o, &ns, "CREATE")
            .into_iter()
            .filter(|w| w.mutating && w.sees == sees)
            .map(|w| format!("{} ({})", w.webhook, w.configuration))
            .collect();
        if !webhooks.is_empty() {
            out.push(DryRunAsk { source: source_of(&o.origin), namespace: ns, webhooks });
        }
    }
    out
}

/// The Pod a document leads to, as JSON to send to the server: a Pod as written, or a
/// workload's template as the Pod its controller sends (the template's labels and
/// annotations, a generated name after the workload's). `None` for other kinds. The
/// namespace is left to the request's path.
pub fn pod_to_send(doc: &Value, obj: &Object) -> Option<Value> {
    match &obj.body {
        Body::Pod(_) => {
            let mut pod = doc.clone();
            let o = pod.as_object_mut()?;
            o.remove("status");
            if let Some(Value::Object(meta)) = o.get_mut("metadata") {
                for k in ["namespace", "resourceVersion", "uid", "creationTimestamp", "managedFields", "selfLink", "generation"] {
                    meta.remove(k);
                }
            }
            Some(pod)
        }
        Body::Workload(w) => {
            let template = w.template_path.split('.').try_fold(doc, |v, k| v.get(k))?;
            let mut meta = Map::new();
            meta.insert("generateName".into(), Value::String(format!("{}-", obj.meta.name)));
            for k in ["labels", "annotations"] {
                if let Some(v) = template.pointer(&format!("/metadata/{k}")) {
                    meta.insert(k.into(), v.clone());
                }
            }
            let mut pod = Map::new();
            pod.insert("apiVersion".into(), Value::String("v1".into()));
            pod.insert("kind".into(), Value::String("Pod".into()));
            pod.insert("metadata".into(), Value::Object(meta));
            pod.insert("spec".into(), template.get("spec").cloned().unwrap_or_else(|| Value::Object(Map::new())));
            Some(Value::Object(pod))
        }
        _ => None,
    }
}

/// Whether `o` goes to namespace `ns` (its own, or the default one).
fn in_namespace(o: &Object, ns: &str, default_namespace: &str) -> bool {
    o.meta.namespace.as_deref().unwrap_or(default_namespace) == ns
}

/// Whether the input (`objs`) holds a `kind` named `name`, in namespace `ns` for a namespaced
/// kind (`None`: a cluster-scoped one).
fn input_has(objs: &[Object], kind: &str, name: &str, ns: Option<&str>, default_namespace: &str) -> bool {
    objs.iter().any(|o| o.type_info.kind == kind && o.meta.name == name && ns.is_none_or(|ns| in_namespace(o, ns, default_namespace)))
}

/// `answer` unless the input itself decides what refused it: the server judged the pod by
/// what it stores, where the input's own objects decide (the engine's chain takes them, in
/// input order). Such a refusal is no answer: the pods are then taken as written, and the note
/// says why. The input decides a refusal by a quota it creates or changes in `ns`, and one by
/// an admission policy whose policy or binding it creates or changes, or whose params (as the
/// server's binding names them, in `policies`) it creates or changes: a ConfigMap a binding's
/// `paramRef` names, refused as missing ("no params found") or judged as it was.
pub fn unless_the_input_decides(
    answer: Result<ServerAnswer, String>,
    ns: &str,
    objs: &[Object],
    policies: Option<&PolicySet>,
    default_namespace: &str,
) -> Result<ServerAnswer, String> {
    let Ok(ServerAnswer::Refused(d)) = &answer else { return answer };
    let Some(r) = d.refusal.as_ref() else { return answer };
    let taken = |by: String, changes: String| {
        Err(format!("the API server's {by}, {changes}, refused a dry run of them ({}), so its pods are taken as written", r.message))
    };
    if r.by == Stage::ResourceQuota {
        let quota = r.quota.as_deref().unwrap_or_default();
        if input_has(objs, "ResourceQuota", quota, Some(ns), default_namespace) {
            return taken(format!("quota {quota}"), "which this input changes".into());
        }
        return answer;
    }
    let Some((mutating, policy, binding)) = policy_of_refusal(&r.message) else { return answer };
    let (kind, by) = if mutating { ("MutatingAdmissionPolicy", "policy") } else { ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicy") };
    let by = format!("{by} '{policy}' with binding '{binding}'");
    if input_has(objs, kind, policy, None, default_namespace) || input_has(objs, &format!("{kind}Binding"), binding, None, default_namespace) {
        return taken(by, "which this input changes".into());
    }
    let Some(((api_version, param_kind), param_ref)) = policies.and_then(|p| p.params_read_by(mutating, binding)) else { return answer };
    let ti = crate::objects::type_info(api_version, param_kind);
    let param_ns = param_ref.namespace_for(ti.namespaced, ns);
    let read = objs.iter().find(|o| {
        o.type_info.group == ti.group
            && o.type_info.kind == *param_kind
            && (param_ref.name.is_empty() || o.meta.name == param_ref.name)
            && param_ns.is_none_or(|n| in_namespace(o, n, default_namespace))
    });
    match read {
        Some(o) => taken(by, format!("whose params this input creates or changes ({param_kind} {:?})", o.meta.name)),
        None => answer,
    }
}

/// The admission policy a refusal's message names: (mutating, policy, binding), from
/// `ValidatingAdmissionPolicy 'P' with binding 'B' denied request: ...` (a mutating policy's
/// reads `policy 'P' ...`).
fn policy_of_refusal(message: &str) -> Option<(bool, &str, &str)> {
    let (mutating, rest) = match message.strip_prefix("ValidatingAdmissionPolicy '") {
        Some(rest) => (false, rest),
        None => (true, message.strip_prefix("policy '")?),
    };
    let (policy, rest) = rest.split_once("' with binding '")?;
    let (binding, _) = rest.split_once("' denied request")?;
    Some((mutating, policy, binding))
}

/// What of the input a dry run's refusal (`message`) says the server lacks, when the input
/// creates it (`objs`, in namespace `ns` for a ServiceAccount): the pod is to be asked again
/// without it. `None` when the refusal is for anything else, or names what the input does
/// not create (the server's words are then the answer).
pub fn refused_for_input(message: &str, ns: &str, objs: &[Object], default_namespace: &str) -> Option<StandIn> {
    let named = |after: &str, before: &str| -> Option<String> {
        let (_, rest) = message.split_once(after)?;
        let (name, _) = rest.split_once(before)?;
        Some(name.to_string())
    };
    let creates = |kind: &str, name: &str, namespaced: bool| input_has(objs, kind, name, namespaced.then_some(ns), default_namespace);
    // ServiceAccount: `error looking up service account NS/NAME: serviceaccount "NAME" not found`.
    if let Some(name) = named("serviceaccount \"", "\" not found").filter(|n| creates("ServiceAccount", n, true)) {
        return Some(StandIn::ServiceAccount(name));
    }
    // Priority: `no PriorityClass with name NAME was found`.
    if let Some(name) = named("no PriorityClass with name ", " was found").filter(|n| creates("PriorityClass", n, false)) {
        return Some(StandIn::PriorityClass(name));
    }
    // RuntimeClass: `pod rejected: RuntimeClass "NAME" not found`.
    if let Some(name) = named("RuntimeClass \"", "\" not found").filter(|n| creates("RuntimeClass", n, false)) {
        return Some(StandIn::RuntimeClass(name));
    }
    None
}

/// The pod to send to namespace `ns` with the defaults the input's LimitRanges there give
/// (`objs`, the input): the server holds none of them yet, and would neither give them before
/// its webhooks nor let its quota take a container without the request they give. Each
/// container and init container gets the defaults it lacks, a first LimitRange's (in name
/// order) staying, as LimitRanger gives them. Also what was done, for the report.
pub fn with_input_defaults(pod: &Value, ns: &str, objs: &[Object], default_namespace: &str) -> (Value, Vec<StandIn>) {
    let mut ranges: Vec<(&str, &[crate::objects::LimitRangeItem])> = objs
        .iter()
        .filter(|o| in_namespace(o, ns, default_namespace))
        .filter_map(|o| match &o.body {
            Body::LimitRange(items) => Some((o.meta.name.as_str(), items.as_slice())),
            _ => None,
        })
        .collect();
    ranges.sort_by_key(|(name, _)| *name);
    let mut pod = pod.clone();
    let mut gave = Vec::new();
    for (name, items) in ranges {
        let mut given = false;
        for list in ["containers", "initContainers"] {
            let Some(containers) = pod.pointer_mut(&format!("/spec/{list}")).and_then(Value::as_array_mut) else { continue };
            for c in containers.iter_mut().filter_map(Value::as_object_mut) {
                let resources = c.entry("resources").or_insert_with(|| Value::Object(Map::new()));
                let Some(resources) = resources.as_object_mut() else { continue };
                for item in items.iter().filter(|i| i.type_ == "Container") {
                    for (field, defaults) in [("limits", &item.default), ("requests", &item.default_request)] {
                        if defaults.is_empty() {
                            continue;
                        }
                        let Some(have) = resources.entry(field).or_insert_with(|| Value::Object(Map::new())).as_object_mut() else { continue };
                        for (k, v) in defaults.iter() {
                            if !have.contains_key(k.as_str()) {
                                have.insert(k.to_string(), Value::String(v.to_string()));
                                given = true;
                            }
                        }
                    }
                }
            }
        }
        if given {
            gave.push(StandIn::LimitRange(name.to_string()));
        }
    }
    (pod, gave)
}

/// The pod to send again without what `s` names (the server then takes its default: the
/// namespace's `default` ServiceAccount, the global default PriorityClass or none, no
/// RuntimeClass), as JSON.
pub fn pod_without(pod: &Value, s: &StandIn) -> Value {
    let mut pod = pod.clone();
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        let fields: &[&str] = match s {
            StandIn::ServiceAccount(_) => &["serviceAccountName", "serviceAccount"],
            StandIn::PriorityClass(_) => &["priorityClassName", "priority", "preemptionPolicy"],
            StandIn::RuntimeClass(_) => &["runtimeClassName", "overhead"],
            StandIn::LimitRange(_) => &[],
        };
        fields.iter().for_each(|f| _ = spec.remove(*f));
    }
    pod
}

/// `runs` where quota's refusals are no answer (why in words): a check against quotas opened
/// wide (`plan`) needs the pod, which a refusal does not show.
pub fn quota_refusals_unanswered(runs: &Arc<BTreeMap<PodSource, DryRun>>) -> Arc<BTreeMap<PodSource, DryRun>> {
    let by_quota = |d: &DryRun| matches!(&d.answer, Ok(ServerAnswer::Refused(r)) if r.refuser() == Some(Stage::ResourceQuota));
    if !runs.values().any(by_quota) {
        return Arc::clone(runs);
    }
    let mut out = (**runs).clone();
    for d in out.values_mut().filter(|d| by_quota(d)) {
        if let Ok(ServerAnswer::Refused(r)) = &d.answer {
            let message = r.refusal.as_ref().map(|r| r.message.as_str()).unwrap_or_default();
            d.answer = Err(format!("the API server's quota refused a dry run of them ({message}), so its pods are taken as written"));
        }
    }
    Arc::new(out)
}

/// The server's refusal of a dry run (`code`, the Status's message): the answer it is, or why
/// there is no answer. Quota refusing the pod alone, a webhook's or a policy's refusal, a
/// webhook that could not be called under failurePolicy Fail, an invalid pod: the server's
/// words are the answer. A webhook that does not support dry run (sideEffects Unknown or Some),
/// a user who may not create pods (RBAC), a namespace not found or a server error: no answer.
pub fn answer_of_refusal(code: u16, message: &str) -> Result<ServerAnswer, String> {
    let said = |why: &str| Err(format!("{why}, so its pods are taken as written: {message}"));
    if message.contains("does not support dry run") {
        return said("the API server cannot run a dry run through a webhook that sees them (its sideEffects are not None or NoneOnDryRun)");
    }
    if code == 403 && message.contains("cannot create resource") {
        return said("the user may not create pods, which a dry run needs (RBAC)");
    }
    let webhook_failed = message.contains("failed calling webhook");
    if code == 404 || (code >= 500 && !webhook_failed) || !matches!(code, 400..=599) {
        return said("the API server did not answer a dry run of them");
    }
    // A 403 reads `pods "name" is forbidden: <message>` (and so does a policy's denial of
    // another reason, a 422 most often); the report keeps what follows.
    let wrapped = message.split_once(" is forbidden: ").filter(|_| code == 403 || message.contains(" is forbidden: ValidatingAdmissionPolicy '"));
    let forbidden = wrapped.is_some();
    let text = wrapped.map_or(message, |(_, m)| m);
    let (by, reason, quota) = if let Some(rest) = text.strip_prefix("exceeded quota: ") {
        (Stage::ResourceQuota, RefusalReason::ExceededQuota, rest.split(',').next().map(str::to_string))
    } else if text.starts_with("ValidatingAdmissionPolicy '") {
        (Stage::ValidatingAdmissionPolicy, if code == 422 { RefusalReason::Invalid } else { RefusalReason::Admission }, None)
    } else if text.contains("violates PodSecurity") {
        (Stage::PodSecurity, RefusalReason::Admission, None)
    } else if code == 422 {
        (Stage::Registry, RefusalReason::Invalid, None)
    } else {
        (Stage::MutatingAdmissionWebhook, RefusalReason::Admission, None)
    };
    let rows = quota_rows(text);
    let resources = rows.iter().map(|r| r.resource.to_string()).collect();
    let message = if reason == RefusalReason::Invalid && !forbidden { message.to_string() } else { text.to_string() };
    let quotas = match &quota {
        Some(name) if !rows.is_empty() => vec![QuotaReport {
            name: name.clone(),
            applies: true,
            unrelated: false,
            verdict: QuotaVerdict::Exceeded,
            why: "applies: the API server's dry run of the pod says so".into(),
            scopes: vec![],
            resources: rows.clone(),
            missing: Default::default(),
        }],
        _ => vec![],
    };
    let usage = rows.iter().map(|r| (r.resource.to_string(), r.requested.clone())).collect();
    let status_reason = match code {
        401 => "Unauthorized",
        403 => "Forbidden",
        413 => "RequestEntityTooLarge",
        422 => "Invalid",
        500.. => "InternalError",
        _ => "BadRequest",
    };
    let refusal =
        Refusal { by, reason, quota, resources, message, forbidden, alternatives: vec![], code: Some(code), status_reason: Some(status_reason.into()) };
    Ok(ServerAnswer::Refused(Box::new(Decision { allowed: false, refusal: Some(refusal), usage, quotas, skipped: None })))
}

/// The rows of quota's refusal as its message gives them (`requested: a=1,b=2, used: a=0,b=1,
/// limited: a=1,b=2`): requested, used and hard per resource, the ones past hard exceeded.
fn quota_rows(text: &str) -> Vec<ResourceRow> {
    let list = |key: &str| -> BTreeMap<String, Quantity> {
        let Some((_, rest)) = text.split_once(key) else { return BTreeMap::new() };
        let rest = rest.split(", ").next().unwrap_or_default();
        rest.split(',').filter_map(|kv| kv.split_once('=')).filter_map(|(k, v)| Some((k.trim().to_string(), Quantity::parse(v.trim()).ok()?))).collect()
    };
    let (requested, used, hard) = (list("requested: "), list("used: "), list("limited: "));
    requested
        .into_iter()
        .filter_map(|(k, req)| {
            let (u, h) = (used.get(&k).cloned().unwrap_or_default(), hard.get(&k)?.clone());
            let after = u.add(&req);
            Some(ResourceRow { resource: k.into(), exceeded: after > h, requested: req, used: Some(u), hard: h, after })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse_str;
    use crate::objects::decode;

    fn objects(file: &str, text: &str) -> Vec<Object> {
        parse_str(file, text).unwrap().iter().map(|d| decode(d).unwrap()).collect()
    }

    fn one(yaml: &str) -> (Value, Object) {
        let d = parse_str("t.yaml", yaml).unwrap().remove(0);
        let o = decode(&d).unwrap();
        (d.value, o)
    }

    #[test]
    fn a_workloads_template_is_sent_as_the_pod_its_controller_creates() {
        let (v, o) = one("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly, namespace: x}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        metadata: {labels: {app: nightly}}\n        spec: {restartPolicy: Never, containers: [{name: c, image: x}]}\n");
        let pod = pod_to_send(&v, &o).unwrap();
        assert_eq!(
            pod,
            serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "nightly-", "labels": {"app": "nightly"}}, "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}})
        );
        let (v, o) = one("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: x, resourceVersion: '5'}\nspec: {containers: [{name: c, image: x}]}\nstatus: {phase: Running}\n");
        assert_eq!(
            pod_to_send(&v, &o).unwrap(),
            serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
        );
        let (v, o) = one("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
        assert_eq!(pod_to_send(&v, &o), None);
    }

    #[test]
    fn the_servers_refusals_are_answers_or_say_why_there_is_none() {
        let quota = r#"pods "shop-x" is forbidden: exceeded quota: compute, requested: limits.cpu=2100m,requests.cpu=300m, used: requests.cpu=0, limited: requests.cpu=100m"#;
        let Ok(ServerAnswer::Refused(d)) = answer_of_refusal(403, quota) else { panic!("an answer") };
        let r = d.refusal.as_ref().unwrap();
        assert_eq!((r.by, r.reason, r.quota.as_deref()), (Stage::ResourceQuota, RefusalReason::ExceededQuota, Some("compute")));
        assert_eq!(r.resources, ["requests.cpu"]);
        let row = &d.quotas[0].resources[0];
        assert_eq!((row.requested.to_string(), row.after.to_string(), row.hard.to_string(), row.exceeded), ("300m".into(), "300m".into(), "100m".into(), true));
        assert!(r.message.starts_with("exceeded quota: compute, requested: "), "{}", r.message);
        let hook = r#"admission webhook "deny.kq.test" denied the request: no"#;
        let Ok(ServerAnswer::Refused(d)) = answer_of_refusal(400, hook) else { panic!("an answer") };
        let r = d.refusal.as_ref().unwrap();
        assert_eq!((r.by, r.message.as_str(), r.forbidden), (Stage::MutatingAdmissionWebhook, hook, false));
        assert!(d.quotas.is_empty());
        for (code, m, why) in [
            (400, "admission webhook \"a\" does not support dry run", "sideEffects"),
            (403, "pods is forbidden: User \"u\" cannot create resource \"pods\" in API group \"\" in the namespace \"n\"", "RBAC"),
            (404, "namespaces \"n\" not found", "did not answer"),
            (503, "the server is currently unable to handle the request", "did not answer"),
        ] {
            let e = answer_of_refusal(code, m).unwrap_err();
            assert!(e.contains(why) && e.ends_with(m), "{e}");
        }
        assert!(answer_of_refusal(500, "Internal error occurred: failed calling webhook \"a\": connection refused").is_ok());
    }

    /// The trial of issue 47: a sidecar injector adds 100m to each pod of `shop`; the server
    /// admits 3 of its 4 pods under requests.cpu=1.
    #[test]
    fn the_pods_are_charged_as_the_server_returned_them() {
        let state_text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns, labels: {inject: 'yes'}}\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: ns}\nspec: {hard: {requests.cpu: '1'}}\nstatus: {hard: {requests.cpu: '1'}, used: {requests.cpu: '0'}}\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: injector}\nwebhooks: [{name: sidecar.kq.test, clientConfig: {url: 'https://127.0.0.1:1/inject'}, rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [pods]}], namespaceSelector: {matchLabels: {inject: 'yes'}}, sideEffects: None, admissionReviewVersions: [v1]}]\n";
        let mut state = ClusterState::from_objects(objects("state.yaml", state_text), "ns");
        let shop = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: shop}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: shop}}\n  template:\n    metadata: {labels: {app: shop}}\n    spec: {containers: [{name: app, image: x, resources: {requests: {cpu: 200m}}}]}\n";
        let input = objects("shop.yaml", shop);
        let asks = dry_runs_needed(&state, &input, "ns");
        assert_eq!(asks, [DryRunAsk { source: ("shop.yaml".into(), 1, None), namespace: "ns".into(), webhooks: vec!["sidecar.kq.test (injector)".into()] }]);
        let served = "apiVersion: v1\nkind: Pod\nmetadata: {name: shop-abc, namespace: ns, labels: {app: shop}}\nspec:\n  containers:\n  - {name: app, image: x, resources: {requests: {cpu: 200m}}}\n  - {name: istio-proxy, image: x, resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: '2', memory: 1Gi}}}\nstatus: {phase: Pending, qosClass: Burstable}\n";
        let Body::Pod(pod) = objects("server", served).remove(0).body else { panic!("a pod") };
        let answer = Ok(ServerAnswer::Admitted(Box::new(pod)));
        state.dry_runs = std::sync::Arc::new([(asks[0].source.clone(), DryRun { answer, webhooks: asks[0].webhooks.clone(), stood_in: vec![] })].into());
        let opts = crate::check::CheckOptions { namespace: "ns".into(), ..Default::default() };
        let report = crate::check::check(&mut state, input, &opts);
        let d = &report.documents[0];
        assert_eq!((d.replicas, d.replicas_admitted), (Some(4), Some(3)), "{d:#?}");
        assert_eq!(d.pod_message.as_deref(), Some("exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=900m, limited: requests.cpu=1"));
        let pods = d.pods.as_ref().unwrap();
        assert!(
            pods.mutations.iter().any(|m| m.contains("dry run") && m.contains("sidecar.kq.test (injector)") && m.contains("container istio-proxy")),
            "{pods:#?}"
        );
        assert!(d.webhooks[0].dry_run, "{d:#?}");
        assert!(d.notes.iter().any(|n| n.contains("its pods are as the API server returned them from a dry run")), "{:#?}", d.notes);
    }

    /// The server refuses a pod for what the input creates before it (a chart's own
    /// ServiceAccount, PriorityClass, RuntimeClass): that is asked again without it. A
    /// refusal naming what the input does not create, or anything else, is the answer.
    #[test]
    fn a_refusal_for_what_the_input_creates_first_is_asked_again_without_it() {
        let input = objects("chart.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: gitea}\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: gold}\nvalue: 10\n---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: kata\n");
        let sa = StandIn::ServiceAccount("gitea".into());
        let cases: Vec<(&str, &str, Option<StandIn>)> = vec![
            ("error looking up service account mesh/gitea: serviceaccount \"gitea\" not found", "mesh", Some(sa.clone())),
            // Another namespace's ServiceAccount of that name is not the input's.
            ("error looking up service account other/gitea: serviceaccount \"gitea\" not found", "other", None),
            ("error looking up service account mesh/redis: serviceaccount \"redis\" not found", "mesh", None),
            ("no PriorityClass with name gold was found", "mesh", Some(StandIn::PriorityClass("gold".into()))),
            ("no PriorityClass with name silver was found", "mesh", None),
            ("pod rejected: RuntimeClass \"kata\" not found", "mesh", Some(StandIn::RuntimeClass("kata".into()))),
            ("exceeded quota: compute, requested: requests.cpu=1, used: requests.cpu=0, limited: requests.cpu=500m", "mesh", None),
            ("admission webhook \"deny.kq.test\" denied the request: serviceaccount \"gitea\" is not allowed", "mesh", None),
        ];
        for (message, ns, want) in cases {
            assert_eq!(refused_for_input(message, ns, &input, "mesh"), want, "{message}");
        }
        let pod = serde_json::json!({"kind": "Pod", "spec": {"serviceAccountName": "gitea", "serviceAccount": "gitea", "priorityClassName": "gold", "containers": []}});
        assert_eq!(pod_without(&pod, &sa), serde_json::json!({"kind": "Pod", "spec": {"priorityClassName": "gold", "containers": []}}));
        let pod = pod_without(&pod_without(&pod, &sa), &StandIn::PriorityClass("gold".into()));
        assert_eq!(pod, serde_json::json!({"kind": "Pod", "spec": {"containers": []}}));
    }

    /// The pod the server returned for a dry run sent without the input's ServiceAccount keeps
    /// the ServiceAccount it names (the ServiceAccount plugin then finds it, created by the
    /// input before; the namespace has no `default` to fall back on here) and gets the
    /// defaults of the input's LimitRange; the report says how the dry run was made.
    #[test]
    fn a_pod_asked_without_its_serviceaccount_keeps_its_own() {
        let state_text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns, labels: {inject: 'yes'}}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: builder, namespace: ns}\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: ns}\nspec: {hard: {requests.cpu: 350m}}\nstatus: {hard: {requests.cpu: 350m}, used: {requests.cpu: '0'}}\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: injector}\nwebhooks: [{name: sidecar.kq.test, clientConfig: {url: 'https://127.0.0.1:1/inject'}, rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [pods]}], namespaceSelector: {matchLabels: {inject: 'yes'}}, sideEffects: None, admissionReviewVersions: [v1]}]\n";
        let mut state = ClusterState::from_objects(objects("state.yaml", state_text), "ns");
        let chart = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: gitea}\n---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: defaults}\nspec: {limits: [{type: Container, defaultRequest: {cpu: 100m}}]}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: gitea}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: gitea}}\n  template:\n    metadata: {labels: {app: gitea}}\n    spec: {serviceAccountName: gitea, containers: [{name: app, image: x}]}\n";
        let input = objects("chart.yaml", chart);
        let served = "apiVersion: v1\nkind: Pod\nmetadata: {name: gitea-abc, namespace: ns, labels: {app: gitea}}\nspec:\n  serviceAccountName: default\n  containers:\n  - {name: app, image: x}\n  - {name: istio-proxy, image: x, resources: {requests: {cpu: 100m}}}\n";
        let Body::Pod(pod) = objects("server", served).remove(0).body else { panic!("a pod") };
        let run = DryRun {
            answer: Ok(ServerAnswer::Admitted(Box::new(pod))),
            webhooks: vec!["sidecar.kq.test (injector)".into()],
            stood_in: vec![StandIn::ServiceAccount("gitea".into())],
        };
        state.dry_runs = std::sync::Arc::new([(("chart.yaml".to_string(), 3, None), run)].into());
        let opts = crate::check::CheckOptions { namespace: "ns".into(), ..Default::default() };
        let report = crate::check::check(&mut state, input, &opts);
        // Each pod: the app's 100m from the input's LimitRange (the server's pod lacks it; the
        // built-in plugins run again after a webhook's change, as the server's chain does) and
        // the sidecar's 100m: one of the two fits 350m.
        let d = &report.documents[2];
        assert_eq!((d.replicas, d.replicas_admitted), (Some(2), Some(1)), "{d:#?}");
        let pods = d.pods.as_ref().unwrap();
        assert!(pods.mutations.iter().any(|m| m.contains("container istio-proxy")), "{pods:#?}");
        assert!(d.notes.iter().any(|n| n.contains("made without ServiceAccount \"gitea\", which this input creates before them")), "{:#?}", d.notes);
    }

    /// The input's LimitRanges of the pod's namespace give their defaults in the pod sent (a
    /// first LimitRange's staying); another namespace's do not, nor what a container has.
    #[test]
    fn a_pod_is_sent_with_the_defaults_of_the_inputs_limitranges() {
        let input = objects("chart.yaml", "apiVersion: v1\nkind: LimitRange\nmetadata: {name: b}\nspec: {limits: [{type: Container, defaultRequest: {cpu: 300m}}]}\n---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: a}\nspec: {limits: [{type: Container, default: {memory: 1Gi}, defaultRequest: {cpu: 100m, memory: 256Mi}}]}\n---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: c, namespace: other}\nspec: {limits: [{type: Container, defaultRequest: {ephemeral-storage: 1Gi}}]}\n");
        let pod = serde_json::json!({"spec": {"containers": [{"name": "db"}, {"name": "app", "resources": {"requests": {"cpu": "2"}}}], "initContainers": [{"name": "init"}]}});
        let (sent, gave) = with_input_defaults(&pod, "mesh", &input, "mesh");
        assert_eq!(gave, [StandIn::LimitRange("a".into())]);
        let defaulted = serde_json::json!({"limits": {"memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "256Mi"}});
        assert_eq!(sent["spec"]["containers"][0]["resources"], defaulted);
        assert_eq!(sent["spec"]["initContainers"][0]["resources"], defaulted);
        assert_eq!(sent["spec"]["containers"][1]["resources"], serde_json::json!({"limits": {"memory": "1Gi"}, "requests": {"cpu": "2", "memory": "256Mi"}}));
        let (sent, gave) = with_input_defaults(&pod, "elsewhere", &input, "mesh");
        assert_eq!((sent, gave), (pod, vec![]));
    }

    /// A dry run refused by a quota the input itself changes is no answer (the input's quota
    /// decides); by another quota, or for anything else, it is.
    #[test]
    fn a_refusal_by_a_quota_the_input_changes_is_no_answer() {
        let input = objects("chart.yaml", "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute}\nspec: {hard: {requests.cpu: '8'}}\n");
        let refused = |message: &str| answer_of_refusal(403, &format!("pods \"x\" is forbidden: {message}"));
        let by_compute = "exceeded quota: compute, requested: requests.cpu=1, used: requests.cpu=2, limited: requests.cpu=2";
        let e = unless_the_input_decides(refused(by_compute), "mesh", &input, None, "mesh").unwrap_err();
        assert!(e.starts_with("the API server's quota compute, which this input changes, refused a dry run") && e.contains(by_compute), "{e}");
        let by_other = "exceeded quota: other, requested: requests.cpu=1, used: requests.cpu=2, limited: requests.cpu=2";
        assert!(unless_the_input_decides(refused(by_other), "mesh", &input, None, "mesh").is_ok());
        assert!(unless_the_input_decides(refused(by_compute), "elsewhere", &input, None, "mesh").is_ok());
        let by_hook = refused("admission webhook \"deny.kq.test\" denied the request: no");
        assert!(unless_the_input_decides(by_hook, "mesh", &input, None, "mesh").is_ok());
    }

    /// A dry run refused by an admission policy is no answer where the input creates or
    /// changes the policy, its binding, or the params the server's binding reads (a ConfigMap
    /// its paramRef names, missing on the server or as it was): the input's decide, in input
    /// order. A refusal by a policy whose params the input leaves alone is the answer.
    #[test]
    fn a_refusal_by_a_policy_whose_params_the_input_changes_is_no_answer() {
        let state_text = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: max-replicas}\nspec:\n  paramKind: {apiVersion: v1, kind: ConfigMap}\n  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}\n  validations: [{expression: 'false'}]\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: max-replicas-binding}\nspec: {policyName: max-replicas, validationActions: [Deny], paramRef: {name: limits, parameterNotFoundAction: Deny}}\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: plain}\nspec:\n  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}\n  validations: [{expression: 'false'}]\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: plain-binding}\nspec: {policyName: plain, validationActions: [Deny]}\n";
        let state = ClusterState::from_objects(objects("state.yaml", state_text), "mesh");
        let policies = state.policies.as_deref();
        let not_found = "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction";
        let plain = "ValidatingAdmissionPolicy 'plain' with binding 'plain-binding' denied request: failed expression: false";
        let refused = |message: &str| answer_of_refusal(403, &format!("pods \"x\" is forbidden: {message}"));
        let input = |text: &str| objects("chart.yaml", text);
        let limits = input("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits}\ndata: {max: '3'}\n");
        let other_name = input("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n");
        let other_ns = input("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits, namespace: elsewhere}\n");
        let binding = input("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: plain-binding}\nspec: {policyName: plain, validationActions: [Warn]}\n");
        let cases: Vec<(&str, &str, &[Object], Option<&str>)> = vec![
            (not_found, "the input creates the params the binding names", &limits, Some("whose params this input creates or changes (ConfigMap \"limits\")")),
            (not_found, "another ConfigMap", &other_name, None),
            (not_found, "the params' name in another namespace", &other_ns, None),
            (plain, "a policy without params", &limits, None),
            (plain, "the input changes its binding", &binding, Some("which this input changes")),
        ];
        for (message, what, objs, want) in cases {
            let got = unless_the_input_decides(refused(message), "mesh", objs, policies, "mesh");
            match want {
                Some(w) => {
                    let e = got.unwrap_err();
                    assert!(e.contains(w) && e.contains(message) && e.ends_with("so its pods are taken as written"), "{what}: {e}");
                }
                None => assert!(matches!(got, Ok(ServerAnswer::Refused(_))), "{what}: {got:?}"),
            }
        }
        // A mutating policy's refusal names it without its kind.
        assert_eq!(policy_of_refusal("policy 'p' with binding 'b' denied request: x"), Some((true, "p", "b")));
        assert_eq!(policy_of_refusal(plain), Some((false, "plain", "plain-binding")));
        assert_eq!(policy_of_refusal("admission webhook \"a\" denied the request"), None);
    }
}
