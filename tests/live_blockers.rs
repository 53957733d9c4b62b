//! Live tests of `why` and `blocked` on workloads the server blocks for reasons other than
//! quota, on a real kube-apiserver and its controllers (tests/cluster/lab.sh): a LimitRange
//! maximum on containers, a LimitRange maximum on a StatefulSet's claims, PodSecurity (1.23+),
//! and a ValidatingAdmissionPolicy (1.30+). The real controllers try, the server refuses, and their
//! FailedCreate events say so; `why` must name the same refuser as the events, replay the same
//! message now, and give the fix; `blocked` must list all four with who blocks them.
//!
//! The policy's binding selects only this test's namespace (a label no other test has); it is
//! deleted at the end, also when an assertion fails.
//!
//! `KUBECTL_QUOTA_LAB` names the lab's state directory. Without it the tests say so loudly and
//! skip, except under CI=true, where they fail.

mod common;

use common::live::{apply, client, drop_namespace, eventually, lab, lab_version, new_namespace, newest_failed_create, plugin, text, Unregister};
use k8s_openapi::api::admissionregistration::v1::{ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{json, Value};

fn json(out: &std::process::Output, what: &str) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: {e}: {}\n{}", text(&out.stdout), text(&out.stderr)))
}

/// The message after `is forbidden: ` (the part that does not name the object).
fn said(m: &str) -> &str {
    m.split_once(" is forbidden: ").map_or(m, |(_, r)| r)
}

const WORKLOADS: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: big}
spec:
  replicas: 2
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec: {containers: [{name: app, image: x, resources: {limits: {cpu: '2'}}}, {name: side, image: x, resources: {limits: {cpu: 500m}}}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: pg}
spec:
  replicas: 2
  serviceName: pg
  selector: {matchLabels: {app: pg}}
  template:
    metadata: {labels: {app: pg}}
    spec: {containers: [{name: pg, image: x}]}
  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 8Gi}}}}]
";

/// Refused by PodSecurity (1.23+): the namespace enforces baseline.
const HOST: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: host}
spec:
  replicas: 1
  selector: {matchLabels: {app: host}}
  template:
    metadata: {labels: {app: host}}
    spec: {hostNetwork: true, containers: [{name: app, image: x}]}
";

const TAGGED: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: tagged}
spec:
  replicas: 1
  selector: {matchLabels: {app: tagged}}
  template:
    metadata: {labels: {app: tagged, kq-deny: 'yes'}}
    spec: {containers: [{name: app, image: x}]}
";

#[tokio::test(flavor = "multi_thread")]
async fn why_and_blocked_name_every_blocker_as_the_controllers_events_do() {
    let Some(kubeconfig) = lab() else { return };
    let (policies, pod_security) = (lab_version().minor >= 30, lab_version().minor >= 23);
    let c = client(&kubeconfig).await;
    let ns = new_namespace(&c, "kq-blockers").await;
    let labels = json!({"metadata": {"labels": {"kq-blockers-test": ns, "pod-security.kubernetes.io/enforce": "baseline"}}});
    Api::<Namespace>::all(c.clone()).patch(&ns, &PatchParams::default(), &Patch::Merge(&labels)).await.unwrap();
    let ranges = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: bounds}\nspec: {limits: [{type: Container, default: {cpu: 500m}, max: {cpu: '1'}}, {type: PersistentVolumeClaim, max: {storage: 5Gi}}]}\n";
    apply(&c, &ns, ranges).await.unwrap();
    let policy_name = format!("kq-deny-{ns}");
    let _unregister = Unregister::default().and::<ValidatingAdmissionPolicyBinding>(&c, &policy_name).and::<ValidatingAdmissionPolicy>(&c, &policy_name);
    let mut expected = vec![("big", "deployment/big", "LimitRange"), ("pg", "statefulset/pg", "LimitRange")];
    if pod_security {
        expected.push(("host", "deployment/host", "PodSecurity"));
    }
    if policies {
        let vap: ValidatingAdmissionPolicy = serde_json::from_value(json!({
            "metadata": {"name": policy_name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]},
                "validations": [{"expression": "!has(object.metadata.labels) || !('kq-deny' in object.metadata.labels)", "message": "pods may not carry the label kq-deny"}],
            },
        }))
        .unwrap();
        let binding: ValidatingAdmissionPolicyBinding = serde_json::from_value(json!({
            "metadata": {"name": policy_name},
            "spec": {"policyName": policy_name, "validationActions": ["Deny"], "matchResources": {"namespaceSelector": {"matchLabels": {"kq-blockers-test": ns}}}},
        }))
        .unwrap();
        Api::<ValidatingAdmissionPolicy>::all(c.clone()).create(&Default::default(), &vap).await.unwrap();
        Api::<ValidatingAdmissionPolicyBinding>::all(c.clone()).create(&Default::default(), &binding).await.unwrap();
        // The policy takes effect once the server's informer has it: a dry-run pod says when.
        let probe = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe", "labels": {"kq-deny": "yes"}}, "spec": {"containers": [{"name": "app", "image": "x"}]}});
        let pods = Api::<k8s_openapi::api::core::v1::Pod>::namespaced(c.clone(), &ns);
        let pp = kube::api::PostParams { dry_run: true, ..Default::default() };
        let probe: k8s_openapi::api::core::v1::Pod = serde_json::from_value(probe).unwrap();
        eventually("the policy denies", 30, || async { pods.create(&pp, &probe).await.err().map(|_| ()).ok_or_else(|| "admitted".to_string()) }).await;
        expected.push(("tagged", "deployment/tagged", "policy"));
    }
    apply(&c, &ns, WORKLOADS).await.unwrap();
    if pod_security {
        apply(&c, &ns, HOST).await.unwrap();
    }
    if policies {
        apply(&c, &ns, TAGGED).await.unwrap();
    }
    for (object, workload, blocker) in &expected {
        // The controllers' own word first: the event.
        let event = eventually(&format!("a FailedCreate event about {object}"), 60, || async {
            newest_failed_create(&c, &ns, |n| n.starts_with(object)).await.ok_or_else(|| "no event yet".to_string())
        })
        .await;
        let why = json(&plugin(&kubeconfig, &["why", workload, "-n", &ns, "-o", "json"]), "why");
        assert_eq!(why["verdict"], "blockedOther", "{workload}: {why:#}");
        assert_eq!(why["blocker"], *blocker, "{workload}: {why:#}");
        // The replay now says what the event said (the object named apart).
        let replayed = why["replayMessage"].as_str().unwrap_or_default();
        if *blocker == "policy" || *blocker == "PodSecurity" || *blocker == "LimitRange" {
            assert_eq!(said(replayed), said(&event), "{workload}: the replay and the event differ\n{why:#}");
        }
        let changes: Vec<&str> = why["changes"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        let want = match *object {
            "big" => "lower limits.cpu to 1 or less in container app, or raise LimitRange bounds's max cpu per Container to 2",
            "pg" => "lower requests.storage to 5Gi or less in the claim, or raise LimitRange bounds's max storage per PersistentVolumeClaim to 8Gi",
            "host" => "PodSecurity baseline:latest forbids host namespaces: hostNetwork=true",
            _ => "meet policy",
        };
        assert!(changes.iter().any(|c| c.starts_with(want)), "{workload}: {want:?} not in {changes:?}");
        let text_out = text(&plugin(&kubeconfig, &["why", workload, "-n", &ns]).stdout);
        assert!(text_out.lines().next().unwrap_or_default().contains("(not by quota)"), "{workload}: {text_out}");
    }
    let blocked = json(&plugin(&kubeconfig, &["blocked", "-n", &ns, "-o", "json"]), "blocked");
    let mut listed: Vec<(String, String)> = blocked["blocked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["workload"].as_str().unwrap_or_default().to_string(), b["blocker"].as_str().unwrap_or_default().to_string()))
        .collect();
    listed.sort();
    let mut want: Vec<(String, String)> = expected.iter().map(|(_, w, b)| (w.to_string(), b.to_string())).collect();
    want.sort();
    assert_eq!(listed, want, "{blocked:#}");
    drop_namespace(&c, &ns).await;
}
