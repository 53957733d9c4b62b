//! Live tests of the admission policies replayed before quota, on a real kube-apiserver
//! (tests/cluster/lab.sh): a ValidatingAdmissionPolicy (1.30+) and a MutatingAdmissionPolicy
//! (1.36+) are read from the cluster, and `check` says what the server then says when the same
//! pod is created for real: the policy's refusal in its words, or quota's answer for the pod
//! the policy changed.
//!
//! Every binding selects only this test's namespace (a label no other test has), so no other
//! test meets these policies; they are deleted at the end, also when an assertion fails.
//!
//! `KUBECTL_QUOTA_LAB` names the lab's state directory. Without it the tests say so loudly and
//! skip, except under CI=true, where they fail.

mod common;

use common::live::{client, drop_namespace, eventually, lab, lab_version, new_namespace, plugin, text, wait_default_service_account, Unregister};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use k8s_openapi::api::core::v1::{Namespace, Pod, ResourceQuota};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{json, Value};

fn pod(name: &str, resources: Value) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "x", "resources": resources}]},
    }))
    .unwrap()
}

/// What the server answers a create of `p` (nothing is stored: a dry run, which runs the whole
/// chain and quota): `None` when admitted, else its message.
async fn server_says(c: &kube::Client, ns: &str, p: &Pod) -> Option<String> {
    let pp = PostParams { dry_run: true, ..PostParams::default() };
    match Api::<Pod>::namespaced(c.clone(), ns).create(&pp, p).await {
        Ok(_) => None,
        Err(kube::Error::Api(s)) => Some(s.message),
        Err(e) => panic!("create: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn check_says_what_the_policies_and_then_quota_say() {
    let Some(kubeconfig) = lab() else { return };
    let version = lab_version();
    if version.minor < 30 {
        eprintln!("live_policies: ValidatingAdmissionPolicy v1 is served from 1.30; the lab runs {}.{}: skipped", version.major, version.minor);
        return;
    }
    let mutating = version.minor >= 36;
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "kq-policies").await;
    wait_default_service_account(&c, &ns).await;
    let label = json!({"metadata": {"labels": {"kq-policy-test": ns}}});
    Api::<Namespace>::all(c.clone()).patch(&ns, &PatchParams::default(), &Patch::Merge(&label)).await.unwrap();
    let quota: ResourceQuota = serde_json::from_value(json!({
        "metadata": {"name": "compute"},
        "spec": {"hard": {"requests.cpu": "1", "limits.cpu": "2"}},
    }))
    .unwrap();
    Api::<ResourceQuota>::namespaced(c.clone(), &ns).create(&PostParams::default(), &quota).await.unwrap();

    let name = format!("kq-test-{ns}");
    let mut _unregister = Unregister::default().and::<ValidatingAdmissionPolicyBinding>(&c, &name).and::<ValidatingAdmissionPolicy>(&c, &name);
    if mutating {
        _unregister = _unregister.and::<MutatingAdmissionPolicyBinding>(&c, &name).and::<MutatingAdmissionPolicy>(&c, &name);
    }
    let selects = json!({"namespaceSelector": {"matchLabels": {"kq-policy-test": ns}}});
    let rules = json!({"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]});
    let vap: ValidatingAdmissionPolicy = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": rules,
            "validations": [{
                "expression": "object.spec.containers.all(c, has(c.resources.limits) && 'memory' in c.resources.limits)",
                "messageExpression": "'every container needs a memory limit; ' + object.spec.containers.filter(c, !has(c.resources.limits) || !('memory' in c.resources.limits)).map(c, c.name).join(', ') + ' has none'",
            }],
        },
    }))
    .unwrap();
    Api::<ValidatingAdmissionPolicy>::all(c.clone()).create(&PostParams::default(), &vap).await.unwrap();
    let binding: ValidatingAdmissionPolicyBinding = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"], "matchResources": selects},
    }))
    .unwrap();
    Api::<ValidatingAdmissionPolicyBinding>::all(c.clone()).create(&PostParams::default(), &binding).await.unwrap();
    if mutating {
        let map: MutatingAdmissionPolicy = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "matchConstraints": rules,
                "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                    "Object{spec: Object.spec{containers: object.spec.containers.filter(c, !has(c.resources.requests) || !('cpu' in c.resources.requests)).map(c, Object.spec.containers{name: c.name, resources: Object.spec.containers.resources{requests: {'cpu': '400m'}}})}}"}}],
            },
        }))
        .unwrap();
        Api::<MutatingAdmissionPolicy>::all(c.clone()).create(&PostParams::default(), &map).await.unwrap();
        let binding: MutatingAdmissionPolicyBinding =
            serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"policyName": name, "matchResources": selects}})).unwrap();
        Api::<MutatingAdmissionPolicyBinding>::all(c.clone()).create(&PostParams::default(), &binding).await.unwrap();
    }

    // The pods: no memory limit (the validating policy refuses it); a memory limit and no
    // cpu at all (the mutating policy gives a request, so quota asks for the limit); both.
    let cases = [
        ("no-memory-limit", json!({"requests": {"cpu": "100m"}, "limits": {"cpu": "100m"}})),
        ("no-cpu", json!({"limits": {"memory": "64Mi"}})),
        ("fits", json!({"requests": {"cpu": "100m"}, "limits": {"cpu": "100m", "memory": "64Mi"}})),
    ];
    // The server loads policies through informers: wait until the first pod meets them.
    let first = pod(cases[0].0, cases[0].1.clone());
    eventually("the validating policy in force", 30, || async {
        match server_says(&c, &ns, &first).await {
            Some(m) if m.contains("ValidatingAdmissionPolicy") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    if mutating {
        let second = pod(cases[1].0, cases[1].1.clone());
        eventually("the mutating policy in force", 30, || async {
            match server_says(&c, &ns, &second).await {
                Some(m) if !m.contains("requests.cpu") => Ok(()),
                other => Err(format!("{other:?}")),
            }
        })
        .await;
    }
    for (pod_name, resources) in cases {
        let manifest = std::env::temp_dir().join(format!("kq-policies-{ns}-{pod_name}.yaml"));
        std::fs::write(&manifest, serde_json::to_string(&pod(pod_name, resources.clone())).unwrap()).unwrap();
        let out = plugin(&kubeconfig, &["check", "-n", &ns, "-f", manifest.to_str().unwrap(), "-o", "json"]);
        std::fs::remove_file(&manifest).ok();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
        let doc = &v["documents"][0];
        let said = server_says(&c, &ns, &pod(pod_name, resources)).await;
        assert_eq!(doc["serverError"].as_str().map(str::to_string), said, "{pod_name}: {doc:#}");
        assert_eq!(out.status.code(), Some(if said.is_some() { 1 } else { 0 }), "{pod_name}: {}", text(&out.stderr));
    }
    drop_namespace(&c, &ns).await;
}

/// Creates one object given as JSON in `ns`: `None` when the server admits it, else its
/// status code and message.
async fn create_says(c: &kube::Client, ns: &str, v: &Value) -> Option<(u16, String)> {
    use kube::api::{DynamicObject, GroupVersionKind};
    let av = v["apiVersion"].as_str().unwrap();
    let (g, ver) = av.rsplit_once('/').unwrap_or(("", av));
    let (ar, _) = kube::discovery::pinned_kind(c, &GroupVersionKind::gvk(g, ver, v["kind"].as_str().unwrap())).await.unwrap();
    let obj: DynamicObject = serde_json::from_value(v.clone()).unwrap();
    match Api::<DynamicObject>::namespaced_with(c.clone(), ns, &ar).create(&PostParams::default(), &obj).await {
        Ok(_) => None,
        Err(kube::Error::Api(s)) => Some((s.code, s.message)),
        Err(e) => panic!("create {}: {e}", v["metadata"]["name"]),
    }
}

/// A chart's objects, as charts ship them, in a namespace whose policies judge workloads and
/// Services (the vap-library's shape: every container of pods and of every pod controller sets
/// cpu and memory limits, no reason given; no LoadBalancer Service, reason Forbidden): `check`
/// says of each object what the server then says when it is created for real, code included.
#[tokio::test(flavor = "multi_thread")]
async fn check_says_what_the_policies_say_of_a_charts_objects() {
    let Some(kubeconfig) = lab() else { return };
    let version = lab_version();
    if version.minor < 30 {
        eprintln!("live_policies: ValidatingAdmissionPolicy v1 is served from 1.30; the lab runs {}.{}: skipped", version.major, version.minor);
        return;
    }
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "kq-chart-policies").await;
    wait_default_service_account(&c, &ns).await;
    let label = json!({"metadata": {"labels": {"kq-policy-test": ns}}});
    Api::<Namespace>::all(c.clone()).patch(&ns, &PatchParams::default(), &Patch::Merge(&label)).await.unwrap();
    let name = format!("kq-chart-{ns}");
    let _unregister = Unregister::default().and::<ValidatingAdmissionPolicyBinding>(&c, &name).and::<ValidatingAdmissionPolicy>(&c, &name);
    let spec = "object.kind == 'Pod' ? object.spec : object.kind == 'CronJob' ? object.spec.jobTemplate.spec.template.spec : object.spec.template.spec";
    let rule =
        |group: &str, resources: &[&str]| json!({"apiGroups": [group], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": resources});
    let vap: ValidatingAdmissionPolicy = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [
                rule("", &["pods", "services"]),
                rule("apps", &["deployments", "statefulsets", "daemonsets", "replicasets"]),
                rule("batch", &["jobs", "cronjobs"]),
            ]},
            "variables": [{"name": "spec", "expression": spec}],
            "validations": [
                {"expression": "object.kind == 'Service' || variables.spec.containers.all(c, has(c.resources.limits) && 'cpu' in c.resources.limits && 'memory' in c.resources.limits)",
                 "messageExpression": "'every container of ' + object.kind + ' ' + object.metadata.name + ' must set cpu and memory limits'"},
                {"expression": "object.kind != 'Service' || object.spec.type != 'LoadBalancer'", "message": "no LoadBalancer Services here", "reason": "Forbidden"},
            ],
        },
    }))
    .unwrap();
    Api::<ValidatingAdmissionPolicy>::all(c.clone()).create(&PostParams::default(), &vap).await.unwrap();
    let binding: ValidatingAdmissionPolicyBinding = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"], "matchResources": {"namespaceSelector": {"matchLabels": {"kq-policy-test": ns}}}},
    }))
    .unwrap();
    Api::<ValidatingAdmissionPolicyBinding>::all(c.clone()).create(&PostParams::default(), &binding).await.unwrap();
    common::live::apply(&c, &ns, "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute}\nspec: {hard: {requests.cpu: '1', limits.cpu: '2', requests.memory: 2Gi, limits.memory: 2Gi, services: '3'}}\n").await.unwrap();
    // The server loads policies through informers: wait until a pod meets them.
    eventually("the policy in force", 30, || async {
        match server_says(&c, &ns, &pod("probe", json!({}))).await {
            Some(m) if m.contains("ValidatingAdmissionPolicy") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;

    let container = |limits: bool| {
        let mut c = json!({"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}});
        if limits {
            c["resources"]["limits"] = json!({"cpu": "200m", "memory": "128Mi"});
        }
        c
    };
    let template =
        |app: &str, limits: bool| json!({"metadata": {"labels": {"app": app}}, "spec": {"serviceAccountName": "chart", "containers": [container(limits)]}});
    let chart = vec![
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "chart"}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "chart-config"}, "data": {"a": "b"}}),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "chart"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "chart-public"}, "spec": {"type": "LoadBalancer", "selector": {"app": "web"}, "ports": [{"port": 443}]}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template("web", true)}}),
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
               "spec": {"serviceName": "db", "replicas": 1, "selector": {"matchLabels": {"app": "db"}}, "template": template("db", false),
                        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}),
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
               "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template("agent", false)}}),
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
               "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [container(true)]}}}}}}),
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate"},
               "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container(false)]}}}}),
    ];
    let text_of: Vec<String> = chart.iter().map(|v| serde_json::to_string(v).unwrap()).collect();
    let manifest = common::temp_file(&format!("chart-{ns}"), &text_of.join("\n---\n"));
    let out = plugin(&kubeconfig, &["check", "-n", &ns, "-f", manifest.to_str().unwrap(), "-o", "json"]);
    std::fs::remove_file(&manifest).ok();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    let docs = v["documents"].as_array().unwrap();
    assert_eq!(docs.len(), chart.len(), "{}", text(&out.stderr));
    let mut refused = Vec::new();
    for (object, doc) in chart.iter().zip(docs) {
        let what = format!("{} {}", object["kind"], object["metadata"]["name"]);
        let said = create_says(&c, &ns, object).await;
        let got = doc["serverError"].as_str().map(|m| (doc["refusal"]["code"].as_u64().unwrap_or_default() as u16, m.to_string()));
        assert_eq!(got, said, "{what}: {doc:#}");
        if let Some((code, _)) = said {
            refused.push(format!("{what} {code}"));
        }
    }
    // What the server refused: the LoadBalancer (403, its reason) and the workloads without
    // limits (422, no reason given); the rest was created.
    assert_eq!(refused, [r#""Service" "chart-public" 403"#, r#""StatefulSet" "db" 422"#, r#""DaemonSet" "agent" 422"#, r#""Job" "migrate" 422"#]);
    drop_namespace(&c, &ns).await;
}
