//! Live tests of the workflows beyond one manifest (`snapshot`, `plan`, `why`, rollouts)
//! against a real kube-apiserver and kube-controller-manager (tests/cluster/lab.sh). No mock:
//! the pods, events and quota usage come from the real controllers.
//!
//! `KUBECTL_QUOTA_LAB` names the lab's state directory. Without it the tests say so loudly and
//! skip, except under CI=true, where they fail. Each test works in its own namespace.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use common::live::{apply, client, drop_namespace, eventually, lab, new_namespace, plugin, text};
use common::temp_file;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ResourceQuota;
use kube::api::{Api, DeleteParams, DynamicObject, GroupVersionKind};
use kube::Client;
use serde_json::Value;

/// Which list of a quota's status [`wait_quota`] reads.
#[derive(Clone, Copy)]
enum QuotaStatus {
    Used,
    Hard,
}

/// Waits (up to 90 s) until quota `name` in `ns` has `want` for `resource` in its status's
/// `list`; fails with the last value seen otherwise.
async fn wait_quota(c: &Client, ns: &str, name: &str, list: QuotaStatus, resource: &str, want: &str) {
    let api = Api::<ResourceQuota>::namespaced(c.clone(), ns);
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let status = api.get_opt(name).await.unwrap().and_then(|q| q.status);
        let values = match list {
            QuotaStatus::Used => status.and_then(|s| s.used),
            QuotaStatus::Hard => status.and_then(|s| s.hard),
        };
        let last = values.and_then(|v| v.get(resource).map(|q| q.0.clone()));
        if last.as_deref() == Some(want) {
            return;
        }
        match list {
            QuotaStatus::Used => assert!(Instant::now() < deadline, "quota {ns}/{name} never reached {resource}={want} (last {last:?})"),
            QuotaStatus::Hard => assert!(Instant::now() < deadline, "quota {ns}/{name} status.hard never became {resource}={want} (last {last:?})"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until quota `name` in `ns` reports `used[resource] == want` (the quota controller's
/// count of what the real controllers created).
async fn wait_used(c: &Client, ns: &str, name: &str, resource: &str, want: &str) {
    wait_quota(c, ns, name, QuotaStatus::Used, resource, want).await;
}

/// Waits until quota `name`'s status.hard[resource] is `want` (the controller synced a change).
async fn wait_hard(c: &Client, ns: &str, name: &str, resource: &str, want: &str) {
    wait_quota(c, ns, name, QuotaStatus::Hard, resource, want).await;
}

/// Waits until the deployment controller has written its last status for `name`: the
/// generation observed and `replicas` pods (every replica when `None`) created from the
/// current template. (Its pods never become ready on the lab, which has no nodes, so nothing
/// changes after that until the progress deadline, minutes later.)
async fn wait_deployment_settled(c: &Client, ns: &str, name: &str, replicas: Option<i32>) {
    let api = Api::<Deployment>::namespaced(c.clone(), ns);
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        // Read as JSON: which fields are optional differs between k8s-openapi's API versions.
        let d = serde_json::to_value(api.get(name).await.unwrap()).unwrap();
        let wanted = replicas.map(i64::from).or_else(|| d["spec"]["replicas"].as_i64()).unwrap_or(1);
        let status = &d["status"];
        if status["observedGeneration"] == d["metadata"]["generation"]
            && status["replicas"].as_i64() == Some(wanted)
            && status["updatedReplicas"].as_i64() == Some(wanted)
        {
            return;
        }
        assert!(Instant::now() < deadline, "deployment {ns}/{name} never settled (last status {status:?})");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The parts of check's JSON report that decide: per document the verdict, the messages, the
/// replicas and the usage.
fn verdicts(json: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}): {json}"));
    v["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            serde_json::json!({
                "kind": d["kind"], "name": d["name"], "allowed": d["allowed"], "message": d["message"],
                "replicas": d["replicas"], "replicasAdmitted": d["replicasAdmitted"], "podMessage": d["podMessage"],
                "usage": d["usage"], "quotas": d["quotas"], "mutations": d["mutations"],
            })
        })
        .collect()
}

const SNAPSHOT_STATE: &str = "\
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute}
spec: {hard: {requests.cpu: '1', pods: '6'}}
---
apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec: {limits: [{type: Container, defaultRequest: {cpu: 100m, memory: 64Mi}}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: 200m}}}]}
";

/// The release checked against the namespace: the existing Deployment scaled from 2 to 4 (an
/// update: only 2 more pods), a new pod that takes the LimitRange's default, and a second
/// Deployment of which only one pod fits.
const SNAPSHOT_RELEASE: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: 200m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: batch}
spec: {containers: [{name: app, image: busybox}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m}}}]}
";

/// The JSON report a command printed, or a failure naming `what` (unless empty), why it is not
/// JSON and what the command said on standard error.
fn report(out: &Output, what: &str) -> Value {
    serde_json::from_str(&text(&out.stdout)).unwrap_or_else(|e| match what {
        "" => panic!("{e}: {}", text(&out.stderr)),
        _ => panic!("{what}: {e}: {}", text(&out.stderr)),
    })
}

/// `why deployment/web -n NS -o json`: its exit status and its report.
fn why_web(kc: &Path, ns: &str) -> (Option<i32>, Value) {
    let out = plugin(kc, &["why", "deployment/web", "-n", ns, "-o", "json"]);
    (out.status.code(), report(&out, "why"))
}

/// `why deployment/web` every half second until `done` holds of its report, for up to a
/// minute: its exit status and that report. Fails with `never` and the last report otherwise.
async fn why_web_until(kc: &Path, ns: &str, never: &str, done: impl Fn(&Value) -> bool) -> (Option<i32>, Value) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (code, v) = why_web(kc, ns);
        if done(&v) {
            return (code, v);
        }
        assert!(Instant::now() < deadline, "{never}: {v}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `check -f FILE -n NS -o json` with `extra` flags: its exit status and its first document's
/// report (`what` names the run when the output is not JSON).
fn check_first(kc: &Path, file: &Path, ns: &str, extra: &[&str], what: &str) -> (Option<i32>, Value) {
    let out = plugin(kc, &[&["check", "-f", file.to_str().unwrap(), "-n", ns, "-o", "json"][..], extra].concat());
    (out.status.code(), report(&out, what)["documents"][0].clone())
}

/// `blocked -n NS -o json` with `extra` flags: its exit status and its report.
fn blocked(kc: &Path, ns: &str, extra: &[&str], what: &str) -> (Option<i32>, Value) {
    let out = plugin(kc, &[&["blocked", "-n", ns, "-o", "json"][..], extra].concat());
    (out.status.code(), report(&out, what))
}

/// `snapshot -n NS`, which must succeed, written to a file named after the test: the state
/// the offline twin of a live check reads.
fn snapshot_file(kc: &Path, ns: &str, tag: &str) -> PathBuf {
    let snapshot = plugin(kc, &["snapshot", "-n", ns]);
    assert_eq!(snapshot.status.code(), Some(0), "{}", text(&snapshot.stderr));
    temp_file(tag, &text(&snapshot.stdout))
}

/// How a command is run after a snapshot, each named for the messages: against the cluster,
/// and offline from the snapshot in `state` (its extra flags).
fn live_and_snapshot(state: &Path) -> [(&'static str, Vec<&str>); 2] {
    [("live", vec![]), ("snapshot", vec!["--state", state.to_str().unwrap()])]
}

/// The Deployments of `ns`, read and patched as JSON.
fn deployments(c: &Client, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(c.clone(), ns, &kube::api::ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("apps", "v1", "Deployment"), "deployments"))
}

/// Gives Deployment `web` the pod template of the Deployment in `yaml` (named `file` in
/// messages), by a merge patch of its `spec.template`: a rollout, for the real controllers.
async fn set_web_template(deployments: &Api<DynamicObject>, file: &str, yaml: &str) {
    let new = kubectl_quota_engine::manifest::parse_str(file, yaml).unwrap().remove(0).value;
    let patch = serde_json::json!({"spec": {"template": new["spec"]["template"]}});
    deployments.patch("web", &kube::api::PatchParams::default(), &kube::api::Patch::Merge(&patch)).await.unwrap();
}

/// A DeviceClass `name` for the devices of `driver`.
fn device_class(name: &str, driver: &str) -> String {
    format!(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {{name: {name}}}\nspec: {{selectors: [{{cel: {{expression: \"device.driver == '{driver}'\"}}}}]}}\n"
    )
}

/// Deletes DeviceClass `name` (cluster-scoped: a test removes its own); an error (already
/// gone) is no matter.
async fn delete_device_class(c: &Client, name: &str) {
    let classes: Api<DynamicObject> = Api::all_with(
        c.clone(),
        &kube::api::ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("resource.k8s.io", "v1", "DeviceClass"), "deviceclasses"),
    );
    let _ = classes.delete(name, &DeleteParams::default()).await;
}

/// The message of the first event in `ns` with `reason` (the controllers' own words), waited
/// for up to a minute.
async fn event_message(c: &Client, ns: &str, reason: &str) -> String {
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(c.clone(), ns);
    eventually(&format!("a {reason} event in {ns}"), 60, || async {
        let list = events.list(&Default::default()).await.map_err(|e| e.to_string())?;
        list.items.into_iter().find(|e| e.reason.as_deref() == Some(reason)).map(|e| e.message.unwrap_or_default()).ok_or_else(|| "none yet".to_string())
    })
    .await
}

#[tokio::test]
async fn offline_check_on_a_snapshot_agrees_with_the_live_check() {
    let Some(kc) = lab() else { return };
    let c = client(&kc).await;
    let ns = new_namespace(&c, "kq-snapshot").await;
    apply(&c, &ns, SNAPSHOT_STATE).await.unwrap();
    wait_used(&c, &ns, "compute", "pods", "2").await;
    wait_used(&c, &ns, "compute", "requests.cpu", "400m").await;
    // Two snapshots must agree only once nothing changes the namespace any more.
    wait_deployment_settled(&c, &ns, "web", None).await;

    let out = plugin(&kc, &["snapshot", "-n", &ns]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let snapshot = text(&out.stdout);
    // The snapshot is a List in a stable order: reading it twice gives the same items. Other
    // tests of this target create cluster-scoped objects of kinds a snapshot reads (a
    // DeviceClass named kq-...) while this one runs: those may come and go between the reads.
    let again = plugin(&kc, &["snapshot", "-n", &ns]);
    let stable = |s: &str| -> Vec<Value> {
        let list: Value = serde_saphyr::from_str(s).unwrap_or_else(|e| panic!("the snapshot is not YAML ({e}):\n{s}"));
        let others = |i: &Value| i["metadata"]["namespace"].is_null() && i["metadata"]["name"].as_str().is_some_and(|n| n.starts_with("kq-"));
        list["items"].as_array().cloned().unwrap_or_default().into_iter().filter(|i| !others(i)).collect()
    };
    assert_eq!(stable(&text(&again.stdout)), stable(&snapshot), "two snapshots of an unchanged namespace differ");
    for needle in ["kind: List", "kind: ResourceQuota", "kind: LimitRange", "kind: PriorityClass", "kind: Deployment", "kind: ReplicaSet", "kind: Pod"] {
        assert!(snapshot.contains(needle), "{needle} missing from the snapshot:\n{snapshot}");
    }
    assert!(!snapshot.contains("managedFields") && !snapshot.contains("resourceVersion"), "server-set metadata kept:\n{snapshot}");
    let state = temp_file("snapshot-state", &snapshot);
    let release = temp_file("snapshot-release", SNAPSHOT_RELEASE);

    let live = plugin(&kc, &["check", "-f", release.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let offline = plugin(&kc, &["check", "-f", release.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    assert_eq!(live.status.code(), offline.status.code(), "live:\n{}\noffline:\n{}", text(&live.stdout), text(&offline.stdout));
    let (l, o) = (verdicts(&text(&live.stdout)), verdicts(&text(&offline.stdout)));
    assert_eq!(
        l,
        o,
        "live and offline checks disagree:\nlive {}\noffline {}",
        serde_json::to_string_pretty(&l).unwrap(),
        serde_json::to_string_pretty(&o).unwrap()
    );
    // What they agree on: web scales to 4 (an update, so only 2 new pods are charged: 800m),
    // the pod takes the LimitRange's 100m, api gets 1 of its 2 pods before pods=6 is reached.
    let docs = &l;
    assert_eq!(
        (docs[0]["replicasAdmitted"].as_i64(), docs[1]["allowed"].as_bool(), docs[2]["replicasAdmitted"].as_i64()),
        (Some(4), Some(true), Some(1)),
        "{docs:?}"
    );
    let _ = std::fs::remove_file(state);
    let _ = std::fs::remove_file(release);
    drop_namespace(&c, &ns).await;
}

const PLAN_STATE: &str = "\
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute}
spec: {hard: {requests.cpu: '1', pods: '3'}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: storage}
spec: {hard: {requests.storage: 5Gi, persistentvolumeclaims: '10'}}
";

/// The release: 4 web pods of 300m, a StatefulSet of 2 with a 2Gi claim each and 100m pods.
const PLAN_RELEASE: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: 300m}}}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  # No scheduler in the lab: pods stay Pending, so OrderedReady would stop at db-0.
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres, resources: {requests: {cpu: 100m}}}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 3Gi}}}
";

#[tokio::test]
async fn the_planned_quota_admits_the_release_on_the_real_cluster() {
    let Some(kc) = lab() else { return };
    let c = client(&kc).await;
    let ns = new_namespace(&c, "kq-plan").await;
    apply(&c, &ns, PLAN_STATE).await.unwrap();
    wait_used(&c, &ns, "compute", "pods", "0").await;
    wait_used(&c, &ns, "storage", "persistentvolumeclaims", "0").await;
    let release = temp_file("plan-release", PLAN_RELEASE);

    // The plan: compute needs 1400m and 6 pods, storage 6Gi.
    let out = plugin(&kc, &["plan", "-f", release.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let plan: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let needed = |quota: &str, r: &str| {
        plan["quotas"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["name"] == quota)
            .and_then(|q| q["resources"].as_array().unwrap().iter().find(|x| x["resource"] == r).map(|x| x["needed"].as_str().unwrap().to_string()))
    };
    assert_eq!(needed("compute", "requests.cpu").as_deref(), Some("1400m"), "{plan}");
    assert_eq!(needed("compute", "pods").as_deref(), Some("6"), "{plan}");
    assert_eq!(needed("storage", "requests.storage").as_deref(), Some("6Gi"), "{plan}");

    // Raise the quotas to the planned manifests, for real.
    let out = plugin(&kc, &["plan", "-f", release.to_str().unwrap(), "-n", &ns, "-o", "yaml"]);
    let api = Api::<ResourceQuota>::namespaced(c.clone(), &ns);
    for doc in kubectl_quota_engine::manifest::parse_str("plan.yaml", &text(&out.stdout)).unwrap() {
        let name = doc.value["metadata"]["name"].as_str().unwrap().to_string();
        let patch = serde_json::json!({"spec": {"hard": doc.value["spec"]["hard"]}});
        api.patch(&name, &kube::api::PatchParams::default(), &kube::api::Patch::Merge(&patch)).await.unwrap();
    }
    wait_hard(&c, &ns, "compute", "requests.cpu", "1400m").await;
    wait_hard(&c, &ns, "storage", "requests.storage", "6Gi").await;
    // Now the plan says everything fits...
    let out = plugin(&kc, &["plan", "-f", release.to_str().unwrap(), "-n", &ns]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // ...and the real controllers create every pod and claim.
    apply(&c, &ns, PLAN_RELEASE).await.unwrap();
    wait_used(&c, &ns, "compute", "pods", "6").await;
    wait_used(&c, &ns, "compute", "requests.cpu", "1400m").await;
    wait_used(&c, &ns, "storage", "requests.storage", "6Gi").await;
    let _ = std::fs::remove_file(release);
    drop_namespace(&c, &ns).await;
}

const WHY_DEPLOYMENT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: 300m}}}]}
";

#[tokio::test]
async fn why_names_the_quota_that_keeps_a_real_deployment_short() {
    let Some(kc) = lab() else { return };
    let c = client(&kc).await;
    let ns = new_namespace(&c, "kq-why").await;
    apply(&c, &ns, "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute}\nspec: {hard: {requests.cpu: '1', pods: '10'}}\n").await.unwrap();
    wait_used(&c, &ns, "compute", "pods", "0").await;
    apply(&c, &ns, WHY_DEPLOYMENT).await.unwrap();
    wait_used(&c, &ns, "compute", "requests.cpu", "900m").await;
    // `why` counts current pods from the Deployment's status, which the deployment controller
    // writes after the ReplicaSet's: wait for it to report the three pods quota admitted.
    wait_deployment_settled(&c, &ns, "web", Some(3)).await;
    // Wait for the real ReplicaSet controller's FailedCreate event.
    let (code, report) = why_web_until(&kc, &ns, "no FailedCreate event seen", |v| v["serverMessage"].is_string()).await;
    assert_eq!(code, Some(1));
    assert_eq!(report["verdict"], "blockedByQuota", "{report}");
    assert_eq!(report["quota"], "compute", "{report}");
    assert_eq!((report["wanted"].as_i64(), report["current"].as_i64(), report["waiting"].as_i64()), (Some(5), Some(3), Some(2)), "{report}");
    let server = report["serverMessage"].as_str().unwrap();
    assert!(server.contains("exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=900m, limited: requests.cpu=1"), "{server}");
    // The replay gives the server's own words.
    let replay = report["replayMessage"].as_str().unwrap();
    assert!(
        replay.ends_with("is forbidden: exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=900m, limited: requests.cpu=1"),
        "{replay}"
    );
    let changes: Vec<&str> = report["changes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert!(
        changes[0].starts_with("raise quota compute's requests.cpu by 200m (to 1200m)") && changes[0].contains("by 500m (to 1500m) for all 2 waiting"),
        "{changes:?}"
    );
    // As kubectl takes it too (KIND NAME), and as YAML: the same report.
    let out = plugin(&kc, &["why", "deployment", "web", "-n", &ns, "-o", "yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let yaml: Value = serde_saphyr::from_str(&text(&out.stdout)).unwrap();
    // (The controller retries meanwhile: the event's generated pod name may move on.)
    assert_eq!((&yaml["verdict"], &yaml["quota"]), (&report["verdict"], &report["quota"]));
    assert!(yaml["serverMessage"].as_str().is_some_and(|m| m.contains("exceeded quota: compute, requested: requests.cpu=300m")), "{yaml:#}");
    // A workload that does not exist: kubectl's words, and describe's exit status for a
    // quota that does not exist.
    let out = plugin(&kc, &["why", "deployment", "nope", "-n", &ns]);
    assert_eq!((out.status.code(), text(&out.stderr)), (Some(2), "Error from server (NotFound): deployments.apps \"nope\" not found\n".to_string()));
    let out = plugin(&kc, &["describe", "nope", "-n", &ns]);
    assert_eq!((out.status.code(), text(&out.stderr)), (Some(2), "Error from server (NotFound): resourcequotas \"nope\" not found\n".to_string()));

    // Raise the quota by what `why` said, for real: the controller creates the two pods.
    let api = Api::<ResourceQuota>::namespaced(c.clone(), &ns);
    let patch = serde_json::json!({"spec": {"hard": {"requests.cpu": "1500m"}}});
    api.patch("compute", &kube::api::PatchParams::default(), &kube::api::Patch::Merge(&patch)).await.unwrap();
    wait_used(&c, &ns, "compute", "pods", "5").await;
    // Once the Deployment's status catches up, nothing is missing.
    let (code, _) = why_web_until(&kc, &ns, "still blocked after raising the quota", |v| v["verdict"] == "notBlocked").await;
    assert_eq!(code, Some(0));
    drop_namespace(&c, &ns).await;
}

const ROLLOUT_V1: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 5
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: 'web:1', resources: {requests: {cpu: 700m}}}]}
";

#[tokio::test]
async fn a_real_rollout_stalls_where_check_predicted() {
    let Some(kc) = lab() else { return };
    let c = client(&kc).await;
    let ns = new_namespace(&c, "kq-rollout").await;
    apply(&c, &ns, "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute}\nspec: {hard: {requests.cpu: '4', pods: '20'}}\n").await.unwrap();
    wait_used(&c, &ns, "compute", "pods", "0").await;
    apply(&c, &ns, ROLLOUT_V1).await.unwrap();
    wait_used(&c, &ns, "compute", "requests.cpu", "3500m").await;
    // check reads the pods that exist from the Deployment's status, which the controller may
    // write after the quota has counted them (seen on 1.37).
    wait_deployment_settled(&c, &ns, "web", Some(5)).await;

    // The release: web:2 with 800m. check predicts the surge pod is refused at once.
    let v2 = ROLLOUT_V1.replace("web:1", "web:2").replace("cpu: 700m", "cpu: 800m");
    let release = temp_file("rollout-v2", &v2);
    let (code, doc) = check_first(&kc, &release, &ns, &[], "");
    let notes: Vec<&str> = doc["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    let predicted = "the rollout stalls with 0 of 5 new pods (5 old left): quota compute refuses a surge pod: requests.cpu 800m + used 3500m > hard 4";
    assert!(notes.contains(&predicted), "{notes:#?}");
    let unblock =
        "to unblock it: set maxSurge to 0 and maxUnavailable to 1 (old pods then go before new ones come), or add 700m more requests.cpu in quota compute";
    assert!(notes.contains(&unblock), "{notes:#?}");
    // A stall is a refusal: exit 1, and the rollout in structured form, from the 5 pods that exist.
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!((doc["outcome"].as_str(), doc["replicasExisting"].as_i64()), (Some("rolloutStalls"), Some(5)), "{doc:#}");
    let stall = &doc["rollout"]["stall"];
    assert_eq!(
        (stall["quota"].as_str(), stall["resource"].as_str(), stall["newPods"].as_i64(), stall["oldPods"].as_i64()),
        (Some("compute"), Some("requests.cpu"), Some(0), Some(5)),
        "{doc:#}"
    );
    // The offline twin from a snapshot says the same; plan, live and offline, sizes the quota
    // for the rollout's peak (1 old and 5 new pods: 700m + 5 x 800m = 4700m, 700m more).
    let state = snapshot_file(&kc, &ns, "rollout-state");
    for (how, extra) in live_and_snapshot(&state) {
        let (code, d) = check_first(&kc, &release, &ns, &extra, how);
        assert_eq!((code, d["outcome"].as_str()), (Some(1), Some("rolloutStalls")), "{how}: {d:#}");
        assert_eq!(d["rollout"]["stall"], doc["rollout"]["stall"], "{how}");
        let out = plugin(&kc, &[vec!["plan", "-f", release.to_str().unwrap(), "-n", &ns, "-o", "json"], extra].concat());
        let plan = report(&out, &format!("{how}: plan"));
        assert_eq!(out.status.code(), Some(1), "{how}: plan: {plan:#}");
        let row = plan["quotas"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|q| q["resources"].as_array().unwrap().iter())
            .find(|r| r["resource"] == "requests.cpu")
            .cloned();
        let row = row.unwrap_or_else(|| panic!("{how}: plan has no requests.cpu row: {plan:#}"));
        assert_eq!((row["needed"].as_str(), row["missing"].as_str()), (Some("4700m"), Some("700m")), "{how}: {plan:#}");
    }
    let _ = std::fs::remove_file(state);

    // The rollout, for real: the Deployment controller scales a new ReplicaSet to 1 (the
    // surge), the ReplicaSet controller's pod is refused by quota, and with maxUnavailable 0
    // no old pod may go. (The lab has no kubelet, so pods never become ready: a stall that
    // waits on readiness cannot be told apart; this one is quota's alone.)
    let api = deployments(&c, &ns);
    set_web_template(&api, "v2", &v2).await;
    let (_, why) =
        why_web_until(&kc, &ns, "the real rollout never hit the quota", |v| v["serverMessage"].as_str().is_some_and(|m| m.contains("exceeded quota"))).await;
    let server = why["serverMessage"].as_str().unwrap();
    assert!(server.contains("exceeded quota: compute, requested: requests.cpu=800m, used: requests.cpu=3500m, limited: requests.cpu=4"), "{server}");
    // `why` sees the rollout's missing pod although all 5 (old) pods exist.
    assert_eq!((why["verdict"].as_str(), why["waiting"].as_i64()), (Some("blockedByQuota"), Some(1)), "{why}");
    // Where it stalls: 5 old pods, no new one, as predicted.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rs: Api<DynamicObject> =
        Api::namespaced_with(c.clone(), &ns, &kube::api::ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("apps", "v1", "ReplicaSet"), "replicasets"));
    let mut by_image: Vec<(String, i64)> = rs
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|r| {
            let image = r.data["spec"]["template"]["spec"]["containers"][0]["image"].as_str().unwrap_or("").to_string();
            (image, r.data["status"]["replicas"].as_i64().unwrap_or(0))
        })
        .collect();
    by_image.sort();
    assert_eq!(by_image, vec![("web:1".to_string(), 5), ("web:2".to_string(), 0)], "old and new pods after the stall");
    wait_used(&c, &ns, "compute", "pods", "5").await;

    // Checking the applied, stuck release again says it is stuck (a CI retry must not turn
    // green), and checking v1 says the controller takes its ReplicaSet back: live and from a
    // snapshot of the stuck cluster.
    let v1 = temp_file("rollout-v1", ROLLOUT_V1);
    let state = snapshot_file(&kc, &ns, "rollout-stuck-state");
    for (how, extra) in live_and_snapshot(&state) {
        let check = |file: &Path| check_first(&kc, file, &ns, &extra, how);
        let (code, d) = check(&release);
        assert_eq!((code, d["outcome"].as_str()), (Some(1), Some("rolloutStalls")), "{how}: the stuck release: {d:#}");
        assert_eq!((d["rollout"]["stall"]["newPods"].as_i64(), d["rollout"]["stall"]["oldPods"].as_i64()), (Some(0), Some(5)), "{how}: {d:#}");
        let (code, d) = check(&v1);
        assert_eq!((code, d["outcome"].as_str()), (Some(0), Some("admitted")), "{how}: the rollback: {d:#}");
        assert!(d["notes"].to_string().contains("scales it back up (5 of its pods exist)"), "{how}: {d:#}");
    }
    // The rollback, for real: the controller scales web:2 down to nothing and keeps web:1's
    // five pods; no ReplicaSet is created.
    set_web_template(&api, "v1", ROLLOUT_V1).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let d = api.get("web").await.unwrap();
        let (generation, observed) = (d.metadata.generation, d.data["status"]["observedGeneration"].as_i64());
        if observed == generation && d.data["status"]["updatedReplicas"].as_i64() == Some(5) {
            break;
        }
        assert!(Instant::now() < deadline, "the rollback never settled: {}", d.data["status"]);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(rs.list(&Default::default()).await.unwrap().items.len(), 2, "no new ReplicaSet for the rollback");
    wait_used(&c, &ns, "compute", "pods", "5").await;
    let _ = std::fs::remove_file(state);
    let _ = std::fs::remove_file(v1);
    let _ = std::fs::remove_file(release);
    drop_namespace(&c, &ns).await;
}

/// A rollout whose new ReplicaSet quota refuses (`count/replicasets.apps`): the controller
/// never starts it. check says so before the apply and after it, live and from a snapshot;
/// why and blocked name the quota.
#[tokio::test]
async fn a_rollout_whose_new_replicaset_is_refused_never_starts() {
    let Some(kc) = lab() else { return };
    let c = client(&kc).await;
    let ns = new_namespace(&c, "kq-rsquota").await;
    apply(&c, &ns, "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: objs}\nspec: {hard: {count/replicasets.apps: '1', pods: '20'}}\n").await.unwrap();
    wait_used(&c, &ns, "objs", "pods", "0").await;
    let v1 = ROLLOUT_V1.replace("replicas: 5", "replicas: 2");
    apply(&c, &ns, &v1).await.unwrap();
    wait_used(&c, &ns, "objs", "pods", "2").await;
    wait_deployment_settled(&c, &ns, "web", Some(2)).await;
    let v2 = v1.replace("web:1", "web:2");
    let release = temp_file("rsquota-v2", &v2);
    let check = |extra: &[&str]| check_first(&kc, &release, &ns, extra, "");
    let want_message = "exceeded quota: objs, requested: count/replicasets.apps=1, used: count/replicasets.apps=1, limited: count/replicasets.apps=1";
    let (code, d) = check(&[]);
    assert_eq!((code, d["outcome"].as_str(), d["rollout"]["stall"]["quota"].as_str()), (Some(1), Some("rolloutStalls"), Some("objs")), "before: {d:#}");
    assert!(d["rollout"]["stall"]["message"].as_str().unwrap_or_default().contains(want_message), "before: {d:#}");

    set_web_template(&deployments(&c, &ns), "v2", &v2).await;
    // The controller's own words: a ReplicaSetCreateError event on the Deployment.
    let server = event_message(&c, &ns, "ReplicaSetCreateError").await;
    assert!(server.starts_with("Failed to create new replica set") && server.contains(want_message), "{server}");

    let state = snapshot_file(&kc, &ns, "rsquota-state");
    for (how, extra) in live_and_snapshot(&state) {
        let (code, d) = check(&extra);
        assert_eq!(
            (code, d["outcome"].as_str(), d["rollout"]["stall"]["quota"].as_str()),
            (Some(1), Some("rolloutStalls"), Some("objs")),
            "{how}: after: {d:#}"
        );
        if how == "live" {
            // (why reads the cluster only.)
            let (code, w) = why_web(&kc, &ns);
            assert_eq!(
                (code, w["verdict"].as_str(), w["quota"].as_str(), w["waiting"].as_i64()),
                (Some(1), Some("blockedByQuota"), Some("objs"), Some(2)),
                "why: {w:#}"
            );
            // The only old ReplicaSet is the live one: nothing to delete, and a lower
            // revisionHistoryLimit would free nothing. Only raising the quota is offered.
            let changes: Vec<&str> = w["changes"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
            assert_eq!(changes, ["raise quota objs's count/replicasets.apps by 1 (to 2) to admit the next ReplicaSet"], "why: {w:#}");
        }
        let (code, b) = blocked(&kc, &ns, &extra, &format!("{how}: blocked"));
        assert_eq!(code, Some(1), "{how}: blocked: {b:#}");
        assert_eq!((b["blocked"][0]["workload"].as_str(), b["blocked"][0]["quota"].as_str()), (Some("deployment/web"), Some("objs")), "{how}: {b:#}");
        assert_eq!(b["blocked"][0]["fix"], "raise quota objs's count/replicasets.apps by 1 (to 2) to admit the next ReplicaSet", "{how}: {b:#}");
    }
    let _ = std::fs::remove_file(state);
    let _ = std::fs::remove_file(release);
    drop_namespace(&c, &ns).await;
}

/// An OrderedReady StatefulSet whose first pod is not Ready (the lab has no kubelet): the
/// controller never attempts the second pod, so nothing was refused. why says it waits (exit
/// 0) though quota would refuse the pod once attempted; blocked agrees, live and offline.
#[tokio::test]
async fn an_ordered_statefulset_waiting_for_ready_is_not_blocked() {
    let Some(kc) = lab() else { return };
    let c = client(&kc).await;
    let ns = new_namespace(&c, "kq-ordered").await;
    apply(&c, &ns, "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: pods}\nspec: {hard: {pods: '1'}}\n").await.unwrap();
    wait_used(&c, &ns, "pods", "pods", "0").await;
    apply(
        &c,
        &ns,
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  replicas: 2\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {automountServiceAccountToken: false, containers: [{name: db, image: 'db:1'}]}\n",
    )
    .await
    .unwrap();
    wait_used(&c, &ns, "pods", "pods", "1").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let why = loop {
        let out = plugin(&kc, &["why", "statefulset", "db", "-n", &ns, "-o", "json"]);
        let v = report(&out, "");
        if v["current"].as_i64() == Some(1) || Instant::now() > deadline {
            break (out.status.code(), v);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let (code, w) = why;
    assert_eq!((code, w["verdict"].as_str(), w["waiting"].as_i64()), (Some(0), Some("waitingForReady"), Some(1)), "{w:#}");
    assert!(w["notes"].to_string().contains("would be refused now"), "{w:#}");
    // The controller never tried: no FailedCreate event.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(c.clone(), &ns);
    let failed: Vec<_> = events.list(&Default::default()).await.unwrap().items.into_iter().filter(|e| e.reason.as_deref() == Some("FailedCreate")).collect();
    assert!(failed.is_empty(), "{failed:?}");
    let state = snapshot_file(&kc, &ns, "ordered-state");
    for (how, extra) in live_and_snapshot(&state) {
        let (code, b) = blocked(&kc, &ns, &extra, how);
        assert_eq!((code, b["blocked"].as_array().map(Vec::len)), (Some(0), Some(0)), "{how}: {b:#}");
    }
    let _ = std::fs::remove_file(state);
    drop_namespace(&c, &ns).await;
}

/// Pods whose ResourceClaims quota refuses stay Pending (FailedResourceClaimCreation on the
/// pod): before the apply check predicts it; after it, re-checking the applied Deployment says
/// so too (it used to say 'its pods exist', exit 0), live and from a snapshot. DRA's
/// resource.k8s.io/v1 is served from 1.34.
#[tokio::test]
async fn pods_left_pending_by_refused_claims_are_reported_after_the_apply_too() {
    let Some(kc) = lab() else { return };
    if common::live::lab_version() < kubectl_quota_engine::version::KubeVersion::parse("1.34").unwrap() {
        return;
    }
    let c = client(&kc).await;
    let ns = new_namespace(&c, "kq-claims").await;
    let class = format!("{ns}-gpu");
    apply(&c, "", &device_class(&class, "gpu.example.com")).await.unwrap();
    apply(
        &c,
        &ns,
        &format!(
            "apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: q}}\nspec: {{hard: {{{class}.deviceclass.resource.k8s.io/devices: '1', pods: '10'}}}}\n"
        ),
    )
    .await
    .unwrap();
    wait_used(&c, &ns, "q", "pods", "0").await;
    apply(&c, &ns, &format!("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {{name: gpu}}\nspec: {{spec: {{devices: {{requests: [{{name: gpu, exactly: {{deviceClassName: {class}}}}}]}}}}}}\n")).await.unwrap();
    let web = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      automountServiceAccountToken: false\n      containers: [{name: c, image: 'web:1', resources: {claims: [{name: gpu}]}}]\n      resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]\n";
    let file = temp_file("claims-web", web);
    let check = |extra: &[&str]| check_first(&kc, &file, &ns, extra, "");
    let (code, d) = check(&[]);
    assert_eq!((code, d["outcome"].as_str(), d["podsPending"].as_i64()), (Some(1), Some("podsPending"), Some(1)), "before: {d:#}");
    apply(&c, &ns, web).await.unwrap();
    // The controllers: two pods, one claim created, the other refused (an event on the pod).
    let refused = event_message(&c, &ns, "FailedResourceClaimCreation").await;
    assert!(refused.contains("exceeded quota: q"), "{refused}");
    wait_deployment_settled(&c, &ns, "web", Some(2)).await;
    let state = snapshot_file(&kc, &ns, "claims-state");
    for (how, extra) in live_and_snapshot(&state) {
        let (code, d) = check(&extra);
        assert_eq!((code, d["outcome"].as_str(), d["podsPending"].as_i64()), (Some(1), Some("podsPending"), Some(1)), "{how}: after: {d:#}");
        assert!(d["notes"].to_string().contains("1 of its pods exist but are Pending"), "{how}: {d:#}");
        let (code, b) = blocked(&kc, &ns, &extra, &format!("{how}: blocked"));
        assert_eq!(code, Some(1), "{how}: blocked: {b:#}");
        assert_eq!(
            (b["blocked"][0]["workload"].as_str(), b["blocked"][0]["quota"].as_str(), b["blocked"][0]["waiting"].as_i64()),
            (Some("deployment/web"), Some("q"), Some(1)),
            "{how}: {b:#}"
        );
    }
    // why reads the cluster only.
    let (code, w) = why_web(&kc, &ns);
    assert_eq!((code, w["verdict"].as_str(), w["quota"].as_str(), w["waiting"].as_i64()), (Some(1), Some("blockedByQuota"), Some("q"), Some(1)), "why: {w:#}");

    // A ResourceClaim applied again unchanged: the server says `configured` (the stored claim
    // has allocationMode and count defaulted); check too, live and from a snapshot.
    let solo_class = format!("{ns}-fpga");
    apply(&c, "", &device_class(&solo_class, "fpga.example.com")).await.unwrap();
    let solo = format!("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: solo}}\nspec: {{devices: {{requests: [{{name: fpga, exactly: {{deviceClassName: {solo_class}}}}}]}}}}\n");
    apply(&c, &ns, &solo).await.unwrap();
    let solo_file = temp_file("claims-solo", &solo);
    let again = std::process::Command::new("kubectl")
        .args(["--kubeconfig", kc.to_str().unwrap(), "apply", "--dry-run=server", "-n", &ns, "-f", solo_file.to_str().unwrap()])
        .env_remove("KUBECONFIG")
        .output();
    if let Ok(out) = again {
        assert!(out.status.success(), "the server refused the unchanged claim: {}", text(&out.stderr));
    }
    let snapshot = plugin(&kc, &["snapshot", "-n", &ns]);
    let solo_state = temp_file("claims-solo-state", &text(&snapshot.stdout));
    for (how, extra) in live_and_snapshot(&solo_state) {
        let (code, d) = check_first(&kc, &solo_file, &ns, &extra, how);
        assert_eq!((code, d["allowed"].as_bool()), (Some(0), Some(true)), "{how}: the unchanged claim: {d:#}");
        assert!(d["notes"].to_string().contains("this is an update"), "{how}: {d:#}");
    }
    let _ = std::fs::remove_file(solo_state);
    let _ = std::fs::remove_file(solo_file);
    delete_device_class(&c, &solo_class).await;
    let _ = std::fs::remove_file(state);
    let _ = std::fs::remove_file(file);
    drop_namespace(&c, &ns).await;
    delete_device_class(&c, &class).await;
}
