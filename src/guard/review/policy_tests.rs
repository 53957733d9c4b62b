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
    parse(serde_json::to_vec(&r).unwrap()).unwrap()
}

#[test]
fn where_a_policy_is_bound_it_reads_the_whole_pod() {
    let text = "\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-debug}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
  validations:
  - expression: \"object.spec.containers.all(c, !has(c.env) || c.env.all(e, e.name != 'DEBUG'))\"
    message: no DEBUG
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-debug}
spec: {policyName: no-debug, validationActions: [Deny]}
";
    let objs: Vec<_> = kubectl_quota_engine::manifest::parse_str("state.yaml", text).unwrap().iter().map(|d| objects::decode(d).unwrap()).collect();
    let opts = CheckOptions { namespace: "shop".into(), ..CheckOptions::default() };
    let deployment = |env: &str| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "shop", "namespace": "shop"},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "shop"}},
                    "template": {"metadata": {"labels": {"app": "shop"}}, "spec": {"containers": [{"name": "app", "image": "x", "env": [{"name": env, "value": "1"}]}]}}}})
    };
    let a = decide(request(deployment("DEBUG")), ClusterState::from_objects(objs.clone(), "shop"), &opts, false);
    assert!(a.warnings.iter().any(|w| w.contains("no DEBUG")), "{:?}", a.warnings);
    let a = decide(request(deployment("OTHER")), ClusterState::from_objects(objs.clone(), "shop"), &opts, false);
    assert!(a.warnings.iter().all(|w| !w.contains("no DEBUG")), "{:?}", a.warnings);
    // Over the bound the policies are not replayed, and the answer says so: its pods are
    // decided by quota alone, in a time and memory linear in the object.
    let mut large = deployment("DEBUG");
    let containers: Vec<Value> = (0..POLICY_REPLAY_MAX_BYTES / 20).map(|i| json!({"name": format!("c{i}"), "image": "x"})).collect();
    large["spec"]["template"]["spec"]["containers"] = Value::Array(containers);
    let a = decide(request(large), ClusterState::from_objects(objs, "shop"), &opts, false);
    assert!(a.warnings.iter().all(|w| !w.contains("no DEBUG")), "{:?}", a.warnings);
    assert!(a.warnings.iter().any(|w| w.contains("admission policies were not replayed on this Deployment")), "{:?}", a.warnings);
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
