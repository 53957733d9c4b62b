//! Live tests of the pods a mutating webhook returns, on a real kube-apiserver
//! (tests/cluster/lab.sh): a sidecar injector (tests/common/injector.rs, HTTPS on loopback)
//! that the API server really calls adds a container with its own requests to every pod of a
//! labelled namespace; a live `check` asks the server for the pod (a dry run) and charges the
//! replicas as the server returned it, which the ReplicaSet controller then confirms.
//!
//! Each test registers its own MutatingWebhookConfiguration (failurePolicy Fail, sideEffects
//! None), selecting only namespaces that carry a label named after it, and deletes it at the
//! end, also when an assertion fails half-way.
//!
//! `KUBECTL_QUOTA_LAB` names the lab's state directory. Without it the tests say so loudly and
//! skip, except under CI=true, where they fail.

mod common;

use std::time::{Duration, Instant};

use common::injector::{Injector, DENIAL};
use common::live::{apply, client, drop_namespace, lab, new_namespace, plugin, text};
use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
use k8s_openapi::api::core::v1::{Event, Namespace, ResourceQuota};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::Client;
use serde_json::{json, Value};

/// Deletes what a test made cluster-wide (and its namespaces), also when an assertion fails.
struct Cleanup {
    c: Client,
    webhook: String,
    namespaces: Vec<String>,
    rbac: Option<String>,
    /// PriorityClasses a test's input created.
    classes: Vec<String>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let (c, name, namespaces, rbac, classes) = (self.c.clone(), self.webhook.clone(), self.namespaces.clone(), self.rbac.clone(), self.classes.clone());
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async move {
                let dp = DeleteParams::default();
                let _ = Api::<MutatingWebhookConfiguration>::all(c.clone()).delete(&name, &dp).await;
                if let Some(r) = rbac {
                    let _ = Api::<ClusterRoleBinding>::all(c.clone()).delete(&r, &dp).await;
                    let _ = Api::<ClusterRole>::all(c.clone()).delete(&r, &dp).await;
                }
                for ns in namespaces {
                    drop_namespace(&c, &ns).await;
                }
                for class in classes {
                    let _ = Api::<k8s_openapi::api::scheduling::v1::PriorityClass>::all(c.clone()).delete(&class, &dp).await;
                }
            })
        });
    }
}

/// The injector registered for namespaces labelled `<its configuration's name>: "yes"`.
async fn register(c: &Client, injector: &Injector, tag: &str) -> Cleanup {
    let name = format!("kq-test-dry-run-{tag}-{}", std::process::id() % 100000);
    let hook: MutatingWebhookConfiguration = serde_json::from_value(injector.configuration(&name, "None")).unwrap();
    Api::<MutatingWebhookConfiguration>::all(c.clone()).create(&PostParams::default(), &hook).await.unwrap();
    Cleanup { c: c.clone(), webhook: name, namespaces: vec![], rbac: None, classes: vec![] }
}

/// A new namespace labelled for the injector, with quota `compute` (hard `requests.cpu`),
/// synced.
async fn injected_namespace(c: &Client, cleanup: &mut Cleanup, prefix: &str, cpu: &str) -> String {
    let ns = new_namespace(c, prefix).await;
    cleanup.namespaces.push(ns.clone());
    let label = json!({"metadata": {"labels": {cleanup.webhook.clone(): "yes"}}});
    Api::<Namespace>::all(c.clone()).patch(&ns, &PatchParams::default(), &Patch::Merge(&label)).await.unwrap();
    let quota: ResourceQuota = serde_json::from_value(json!({"metadata": {"name": "compute"}, "spec": {"hard": {"requests.cpu": cpu}}})).unwrap();
    let quotas = Api::<ResourceQuota>::namespaced(c.clone(), &ns);
    quotas.create(&PostParams::default(), &quota).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while serde_json::to_value(quotas.get("compute").await.unwrap()).unwrap()["status"]["hard"].is_null() {
        assert!(Instant::now() < deadline, "quota {ns}/compute never synced");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    ns
}

/// A manifest file holding `yaml`, removed when dropped.
struct Manifest(std::path::PathBuf);

impl Manifest {
    fn new(name: &str, yaml: &str) -> Manifest {
        let p = std::env::temp_dir().join(format!("kq-dry-run-{name}-{}.yaml", std::process::id()));
        std::fs::write(&p, yaml).unwrap();
        Manifest(p)
    }
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Manifest {
    fn drop(&mut self) {
        std::fs::remove_file(&self.0).ok();
    }
}

fn shop(labels: &str) -> String {
    format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: shop}}\nspec:\n  replicas: 4\n  selector: {{matchLabels: {{app: shop}}}}\n  template:\n    metadata: {{labels: {{app: shop{labels}}}}}\n    spec: {{containers: [{{name: app, image: x, resources: {{requests: {{cpu: 200m}}}}}}]}}\n")
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)))
}

/// The first FailedCreate message of `shop`'s ReplicaSet (what follows `is forbidden: `).
async fn failed_create(c: &Client, ns: &str) -> Option<String> {
    let events = Api::<Event>::namespaced(c.clone(), ns);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let list = events.list(&Default::default()).await.map(|l| l.items).unwrap_or_default();
        let m = list
            .iter()
            .filter(|e| e.reason.as_deref() == Some("FailedCreate") && e.involved_object.name.as_deref().is_some_and(|n| n.starts_with("shop-")))
            .filter_map(|e| e.message.as_deref().and_then(|m| m.split_once("is forbidden: ")).map(|(_, r)| r.to_string()))
            .next();
        if m.is_some() || Instant::now() > deadline {
            return m;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Waits up to 120 s for the pods of `ns` to be as `enough` wants (`Err`: what there is), or
/// fails naming `wanted`, what there is and the namespace's events.
async fn pods_made(c: &Client, ns: &str, wanted: &str, enough: impl Fn(&[k8s_openapi::api::core::v1::Pod]) -> Result<(), String>) {
    let pods_api = Api::<k8s_openapi::api::core::v1::Pod>::namespaced(c.clone(), ns);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let pods = pods_api.list(&Default::default()).await.unwrap().items;
        let Err(have) = enough(&pods) else { return };
        if Instant::now() > deadline {
            let events: Vec<String> =
                Api::<Event>::namespaced(c.clone(), ns).list(&Default::default()).await.unwrap().items.iter().filter_map(|e| e.message.clone()).collect();
            panic!("the controllers made {have}, not {wanted}\nevents: {events:#?}");
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The trial of issue 47: `shop`'s 4 pods at 200m each fit requests.cpu=1 as written, but the
/// injector adds 100m to each: the server admits 3, and the 4th is refused with
/// `requested: requests.cpu=300m`. The check says so, live, naming the webhook; then the
/// Deployment is applied for real and its ReplicaSet is refused in the same words.
#[tokio::test(flavor = "multi_thread")]
async fn check_charges_the_pods_as_the_sidecar_injector_returns_them_and_the_replicaset_agrees() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let injector = Injector::start();
    let mut cleanup = register(&c, &injector, "trial").await;
    let ns = injected_namespace(&c, &mut cleanup, "kq-dry-run", "1").await;
    let manifest = Manifest::new(&ns, &shop(""));

    let out = plugin(&kubeconfig, &["check", "-n", &ns, "-f", manifest.path(), "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let v = json_of(&out);
    let doc = &v["documents"][0];
    assert_eq!((doc["replicas"].as_i64(), doc["replicasAdmitted"].as_i64()), (Some(4), Some(3)), "{doc:#}");
    let predicted = doc["podMessage"].as_str().unwrap().to_string();
    assert_eq!(predicted, "exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=900m, limited: requests.cpu=1", "{doc:#}");
    assert_eq!(doc["webhooks"][0]["webhook"], "sidecar-injector.kq.test", "{doc:#}");
    assert_eq!(doc["webhooks"][0]["dryRun"], true, "{doc:#}");
    let mutations = doc["pods"]["mutations"].as_array().unwrap();
    assert!(
        mutations
            .iter()
            .any(|m| m.as_str().is_some_and(|m| m.contains("dry run") && m.contains("sidecar-injector.kq.test") && m.contains("container istio-proxy"))),
        "{doc:#}"
    );
    // One dry run for the 4 replicas (the injector also answers the controller's creates later).
    let asked = injector.reviews.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(asked, 1, "{asked} reviews for one distinct pod");

    let out = plugin(&kubeconfig, &["check", "-n", &ns, "-f", manifest.path()]);
    let report = text(&out.stdout);
    assert!(report.contains("quota refuses 1 of its 4 pods (3 fit)") && report.contains("requested: requests.cpu=300m"), "{report}");
    assert!(report.contains("as the API server returned them from a dry run") && report.contains("sidecar-injector.kq.test"), "{report}");

    // plan sizes the quota for the pods as the server returns them: 4 × 300m.
    let out = plugin(&kubeconfig, &["plan", "-n", &ns, "-f", manifest.path()]);
    let planned = text(&out.stdout);
    assert!(planned.contains("1200m") && planned.contains("sized as the API server returned them from a dry run"), "{planned}\n{}", text(&out.stderr));

    // The real thing: the controller's 4th pod is refused in the words check quoted.
    let deployment: k8s_openapi::api::apps::v1::Deployment = serde_yaml_like(&shop(""));
    Api::<k8s_openapi::api::apps::v1::Deployment>::namespaced(c.clone(), &ns).create(&PostParams::default(), &deployment).await.unwrap();
    let seen = failed_create(&c, &ns).await;
    assert_eq!(seen.as_deref(), Some(predicted.as_str()), "the ReplicaSet's FailedCreate");
    // why replays the next pod as the server returns it: the missing pod's 300m.
    let out = plugin(&kubeconfig, &["why", "deployment/shop", "-n", &ns, "-o", "json"]);
    let why = json_of(&out);
    assert_eq!(why["replay"]["message"].as_str(), Some(predicted.as_str()), "{why:#}");
    // Its smallest fix is the server's pod's: 300m on 900m needs 200m more, not 100m.
    let why = text(&plugin(&kubeconfig, &["why", "deployment/shop", "-n", &ns]).stdout);
    assert!(why.contains("raise quota compute's requests.cpu by 200m (to 1200m)"), "{why}");
    drop(cleanup);
}

/// A Deployment from the manifest's YAML (the plugin's own reader, then JSON).
fn serde_yaml_like<T: serde::de::DeserializeOwned>(yaml: &str) -> T {
    let doc = kubectl_quota_engine::manifest::parse_str("m.yaml", yaml).unwrap().remove(0);
    serde_json::from_value(doc.value).unwrap()
}

/// The server's refusal of the dry run is the answer, in its words: quota refusing the pod
/// alone (300m with the sidecar against 250m: every replica refused, though 200m as written
/// fits), and the webhook refusing a pod (its message's control character escaped).
#[tokio::test(flavor = "multi_thread")]
async fn a_pod_the_server_refuses_at_dry_run_is_refused_in_the_servers_words() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let injector = Injector::start();
    let mut cleanup = register(&c, &injector, "refused").await;
    let ns = injected_namespace(&c, &mut cleanup, "kq-dry-run-refused", "250m").await;

    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: single}\nspec: {containers: [{name: app, image: x, resources: {requests: {cpu: 200m}}}]}\n";
    let manifest = Manifest::new(&format!("{ns}-pod"), pod);
    let out = plugin(&kubeconfig, &["check", "-n", &ns, "-f", manifest.path(), "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let doc = &json_of(&out)["documents"][0];
    assert_eq!(doc["allowed"], false, "{doc:#}");
    assert_eq!(doc["message"], "exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=0, limited: requests.cpu=250m", "{doc:#}");
    assert_eq!(doc["webhooks"][0]["dryRun"], true, "{doc:#}");

    let manifest = Manifest::new(&format!("{ns}-shop"), &shop(""));
    let doc = &json_of(&plugin(&kubeconfig, &["check", "-n", &ns, "-f", manifest.path(), "-o", "json"]))["documents"][0];
    assert_eq!((doc["replicas"].as_i64(), doc["replicasAdmitted"].as_i64()), (Some(4), Some(0)), "{doc:#}");
    assert_eq!(doc["podMessage"], "exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=0, limited: requests.cpu=250m", "{doc:#}");

    // The webhook refuses a pod labelled kq-deny: the server's words, escaped in the text.
    let manifest = Manifest::new(&format!("{ns}-deny"), &shop(", kq-deny: 'yes'"));
    let out = plugin(&kubeconfig, &["check", "-n", &ns, "-f", manifest.path(), "-o", "json"]);
    let doc = &json_of(&out)["documents"][0];
    assert_eq!(doc["replicasAdmitted"].as_i64(), Some(0), "{doc:#}");
    let m = doc["podMessage"].as_str().unwrap();
    assert!(m.contains("admission webhook \"sidecar-injector.kq.test\" denied the request") && m.contains(DENIAL), "{doc:#}");
    let out = plugin(&kubeconfig, &["check", "-n", &ns, "-f", manifest.path()]);
    let report = text(&out.stdout);
    assert!(report.contains("the API server refuses 4 of its 4 pods") && report.contains("sidecars refused for this pod\\u0007"), "{report}");
    assert!(!report.contains('\u{7}'), "{report}");
    drop(cleanup);
}

/// A user who may read what a check reads (and the webhook configurations) but not create
/// pods: the dry run is forbidden, the pods are taken as written (4 of 4 fit, as before) and a
/// note says why.
#[tokio::test(flavor = "multi_thread")]
async fn a_user_who_may_not_create_pods_gets_the_pods_as_written_with_a_note() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let injector = Injector::start();
    let mut cleanup = register(&c, &injector, "viewer").await;
    let ns = injected_namespace(&c, &mut cleanup, "kq-dry-run-viewer", "1").await;
    let user = format!("kq-dry-run-viewer-{}", std::process::id());
    let role: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": cleanup.webhook},
        "rules": [
            {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"], "verbs": ["get", "list"]},
            {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list"]},
        ],
    }))
    .unwrap();
    Api::<ClusterRole>::all(c.clone()).create(&PostParams::default(), &role).await.unwrap();
    let subject = json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]);
    let crb: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": cleanup.webhook}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cleanup.webhook}, "subjects": subject,
    }))
    .unwrap();
    Api::<ClusterRoleBinding>::all(c.clone()).create(&PostParams::default(), &crb).await.unwrap();
    cleanup.rbac = Some(cleanup.webhook.clone());
    let rb: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "view"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}, "subjects": subject,
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(c.clone(), &ns).create(&PostParams::default(), &rb).await.unwrap();

    let manifest = Manifest::new(&ns, &shop(""));
    let run = || plugin(&kubeconfig, &["--as", &user, "check", "-n", &ns, "-f", manifest.path(), "-o", "json"]);
    // The bindings take effect within moments.
    let deadline = Instant::now() + Duration::from_secs(30);
    let out = loop {
        let out = run();
        let v: Option<Value> = serde_json::from_slice(&out.stdout).ok();
        if v.as_ref().is_some_and(|v| v["documents"][0]["webhooks"].is_array()) || Instant::now() > deadline {
            break out;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let doc = &json_of(&out)["documents"][0];
    assert_eq!((doc["replicas"].as_i64(), doc["replicasAdmitted"].as_i64()), (Some(4), Some(4)), "{doc:#}");
    assert!(doc["webhooks"][0]["dryRun"].is_null(), "{doc:#}");
    let notes: Vec<&str> = doc["notes"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(notes.iter().any(|n| n.contains("may not create pods") && n.contains("RBAC") && n.contains("cannot create resource")), "{notes:#?}");
    assert!(notes.iter().any(|n| n.contains("sidecar-injector.kq.test") && n.contains("rests on it")), "{notes:#?}");
    drop(cleanup);
}

/// A webhook whose sideEffects are `Unknown` (only a v1beta1 configuration can say so, and
/// v1beta1 is served until 1.21): the server refuses to dry-run through it, so the pods are
/// taken as written (4 of 4 fit) and a note says why in the server's words.
#[tokio::test(flavor = "multi_thread")]
async fn a_webhook_that_does_not_support_dry_run_leaves_the_pods_as_written_with_a_note() {
    let Some(kubeconfig) = lab() else { return };
    if common::live::lab_version() >= kubectl_quota_engine::version::KubeVersion::new(1, 22) {
        eprintln!("skipped: only admissionregistration.k8s.io/v1beta1 (served until 1.21) lets a webhook's sideEffects be Unknown");
        return;
    }
    let c = client(&kubeconfig).await;
    let injector = Injector::start();
    let name = format!("kq-test-dry-run-unknown-{}", std::process::id() % 100000);
    let mut cleanup = Cleanup { c: c.clone(), webhook: name.clone(), namespaces: vec![], rbac: None, classes: vec![] };
    let ar = kube::api::ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1beta1".into(),
        api_version: "admissionregistration.k8s.io/v1beta1".into(),
        kind: "MutatingWebhookConfiguration".into(),
        plural: "mutatingwebhookconfigurations".into(),
    };
    let mut hook = injector.configuration(&name, "Unknown");
    hook["apiVersion"] = "admissionregistration.k8s.io/v1beta1".into();
    hook["kind"] = "MutatingWebhookConfiguration".into();
    let hook: kube::api::DynamicObject = serde_json::from_value(hook).unwrap();
    Api::<kube::api::DynamicObject>::all_with(c.clone(), &ar).create(&PostParams::default(), &hook).await.unwrap();
    let ns = injected_namespace(&c, &mut cleanup, "kq-dry-run-unknown", "1").await;
    let manifest = Manifest::new(&ns, &shop(""));
    let out = plugin(&kubeconfig, &["check", "-n", &ns, "-f", manifest.path(), "-o", "json"]);
    let doc = &json_of(&out)["documents"][0];
    assert_eq!((doc["replicas"].as_i64(), doc["replicasAdmitted"].as_i64()), (Some(4), Some(4)), "{doc:#}");
    assert!(doc["webhooks"][0]["dryRun"].is_null(), "{doc:#}");
    let notes: Vec<&str> = doc["notes"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(notes.iter().any(|n| n.contains("sideEffects") && n.contains("does not support dry run")), "{notes:#?}");
    assert_eq!(injector.reviews.load(std::sync::atomic::Ordering::SeqCst), 0, "the server calls no webhook it cannot dry-run");
    drop(cleanup);
}

/// A chart as `helm template` prints it (issue 61): its own ServiceAccount, ConfigMap, Secret
/// and Service, a LimitRange and a PriorityClass, then a Deployment and a StatefulSet (with a
/// volumeClaimTemplate) whose pods name that ServiceAccount and class, the StatefulSet's
/// containers without requests (the LimitRange gives them).
fn chart(class: &str) -> String {
    format!(
        "\
apiVersion: v1
kind: ServiceAccount
metadata: {{name: gitea}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: gitea-config}}
data: {{app.ini: 'RUN_MODE = prod'}}
---
apiVersion: v1
kind: Secret
metadata: {{name: gitea-admin}}
stringData: {{password: changeme}}
---
apiVersion: v1
kind: Service
metadata: {{name: gitea}}
spec: {{selector: {{app: gitea}}, ports: [{{port: 3000}}]}}
---
apiVersion: v1
kind: LimitRange
metadata: {{name: defaults}}
spec: {{limits: [{{type: Container, defaultRequest: {{cpu: 100m}}}}]}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: {class}}}
value: 1000
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: gitea}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: gitea}}}}
  template:
    metadata: {{labels: {{app: gitea}}}}
    spec:
      serviceAccountName: gitea
      priorityClassName: {class}
      containers: [{{name: app, image: x, resources: {{requests: {{cpu: 200m}}}}}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: gitea-db}}
spec:
  replicas: 2
  serviceName: gitea-db
  podManagementPolicy: Parallel
  selector: {{matchLabels: {{app: gitea-db}}}}
  template:
    metadata: {{labels: {{app: gitea-db}}}}
    spec:
      serviceAccountName: gitea
      containers: [{{name: db, image: x}}]
  volumeClaimTemplates:
  - metadata: {{name: data}}
    spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}
"
    )
}

/// Issue 61: in a mesh namespace, a chart's pods name the ServiceAccount and PriorityClass the
/// chart itself creates first. A dry run of them is refused by the server, which holds neither
/// yet; check asks again without them, charges the pods as the injector returns them (the
/// sidecar's 100m, the LimitRange's default for the database), and its verdict is what the
/// controllers then do when the documents are created in order: every pod.
#[tokio::test(flavor = "multi_thread")]
async fn a_charts_pods_naming_what_the_chart_creates_first_are_answered_as_the_controllers_create_them() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let injector = Injector::start();
    let mut cleanup = register(&c, &injector, "chart").await;
    // 3 × (200m + 100m) + 2 × (100m + 100m) = 1300m of 1500m.
    let ns = injected_namespace(&c, &mut cleanup, "kq-dry-run-chart", "1500m").await;
    let class = format!("kq-chart-{}", std::process::id() % 100000);
    cleanup.classes.push(class.clone());
    let yaml = chart(&class);
    let manifest = Manifest::new(&format!("{ns}-chart"), &yaml);

    let out = plugin(&kubeconfig, &["check", "-n", &ns, "-f", manifest.path(), "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let v = json_of(&out);
    let docs = v["documents"].as_array().unwrap();
    for (doc, replicas, left_out) in [
        (&docs[6], 3, format!("ServiceAccount \"gitea\" and PriorityClass \"{class}\"")),
        (&docs[7], 2, "LimitRange \"defaults\" (the defaults it gives were sent in the pod) and ServiceAccount \"gitea\"".into()),
    ] {
        assert_eq!((doc["replicas"].as_i64(), doc["replicasAdmitted"].as_i64()), (Some(replicas), Some(replicas)), "{doc:#}");
        assert_eq!(doc["webhooks"][0]["dryRun"], true, "{doc:#}");
        let said = |what: &str| doc["notes"].as_array().unwrap().iter().any(|n| n.as_str().is_some_and(|n| n.contains(what)));
        assert!(said(&format!("the dry run was made without {left_out}, which this input creates before them")), "{doc:#}");
        let mutations = doc["pods"]["mutations"].as_array().unwrap();
        assert!(mutations.iter().any(|m| m.as_str().is_some_and(|m| m.contains("container istio-proxy"))), "{doc:#}");
    }

    // The real thing: created in order, the controllers make every pod (sidecar included),
    // 1300m of requests in all. (The pods are counted, not the quota's usage: a 1.20 server
    // answering a create "could not be completed at this time" has charged the quota for a pod
    // it did not store, until the quota controller's next full resync.)
    apply(&c, &ns, &yaml).await.unwrap();
    let millis = |q: &str| q.strip_suffix('m').map_or_else(|| q.parse::<u64>().unwrap() * 1000, |m| m.parse().unwrap());
    pods_made(&c, &ns, "5 pods, each with the sidecar, of 1300m", |pods| {
        let cpu: u64 = pods
            .iter()
            .flat_map(|p| p.spec.iter().flat_map(|s| s.containers.iter()))
            .filter_map(|c| c.resources.as_ref()?.requests.as_ref()?.get("cpu").map(|q| millis(&q.0)))
            .sum();
        let sidecars = pods.iter().filter(|p| p.spec.iter().any(|s| s.containers.iter().any(|c| c.name == "istio-proxy"))).count();
        ((pods.len(), sidecars, cpu) == (5, 5, 1300)).then_some(()).ok_or_else(|| format!("{} pods ({sidecars} with the sidecar, {cpu}m)", pods.len()))
    })
    .await;
    drop(cleanup);
}

/// Issue 61: a policy whose binding reads a ConfigMap the chart itself creates first. The
/// server, holding none yet, refuses a dry run of the pods ("no params found"); that is no
/// answer (the input's ConfigMap decides, as the server will read it once created): check takes
/// the pods as written, judges them by the policy with the input's params, and says so. Created
/// in order, the controllers make every pod, as check said.
#[tokio::test(flavor = "multi_thread")]
async fn a_policys_params_the_chart_creates_first_decide_not_the_servers_dry_run() {
    let Some(kubeconfig) = lab() else { return };
    let version = common::live::lab_version();
    if version.minor < 30 {
        eprintln!("live_dry_run: ValidatingAdmissionPolicy v1 is served from 1.30; the lab runs {}.{}: skipped", version.major, version.minor);
        return;
    }
    use k8s_openapi::api::admissionregistration::v1::{ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding};
    let c = client(&kubeconfig).await;
    let injector = Injector::start();
    let mut cleanup = register(&c, &injector, "params").await;
    let ns = injected_namespace(&c, &mut cleanup, "kq-dry-run-params", "2").await;
    let name = format!("kq-params-{ns}");
    let _unregister = common::live::Unregister::default().and::<ValidatingAdmissionPolicyBinding>(&c, &name).and::<ValidatingAdmissionPolicy>(&c, &name);
    let vap: ValidatingAdmissionPolicy = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]},
            "validations": [{"expression": "size(object.spec.containers) <= int(params.data.maxContainers)", "message": "too many containers"}],
        },
    }))
    .unwrap();
    Api::<ValidatingAdmissionPolicy>::all(c.clone()).create(&PostParams::default(), &vap).await.unwrap();
    let binding: ValidatingAdmissionPolicyBinding = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"},
            "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}},
        },
    }))
    .unwrap();
    Api::<ValidatingAdmissionPolicyBinding>::all(c.clone()).create(&PostParams::default(), &binding).await.unwrap();
    // The server loads policies through informers: wait until a pod meets this one.
    let probe: k8s_openapi::api::core::v1::Pod =
        serde_json::from_value(json!({"metadata": {"name": "probe"}, "spec": {"containers": [{"name": "app", "image": "x"}]}})).unwrap();
    let pods_api = Api::<k8s_openapi::api::core::v1::Pod>::namespaced(c.clone(), &ns);
    common::live::eventually("the policy in force", 30, || async {
        match pods_api.create(&PostParams { dry_run: true, ..Default::default() }, &probe).await {
            Err(kube::Error::Api(s)) if s.message.contains("no params found") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;

    let yaml = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: limits}}\ndata: {{maxContainers: '2'}}\n---\n{}",
        shop("").replace("replicas: 4", "replicas: 2")
    );
    let manifest = Manifest::new(&format!("{ns}-params"), &yaml);
    let out = plugin(&kubeconfig, &["check", "-n", &ns, "-f", manifest.path(), "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let v = json_of(&out);
    let doc = &v["documents"][1];
    assert_eq!((doc["replicas"].as_i64(), doc["replicasAdmitted"].as_i64()), (Some(2), Some(2)), "{doc:#}");
    let said = |what: &str| doc["notes"].as_array().unwrap().iter().any(|n| n.as_str().is_some_and(|n| n.contains(what)));
    assert!(said("whose params this input creates or changes (ConfigMap \"limits\")"), "{doc:#}");
    assert!(said("no params found"), "{doc:#}");

    // The real thing: created in order, the policy reads the chart's ConfigMap and the
    // controllers make both pods, the sidecar making two containers of the two allowed.
    apply(&c, &ns, &yaml).await.unwrap();
    pods_made(&c, &ns, "2 pods", |pods| (pods.len() == 2).then_some(()).ok_or_else(|| format!("{} pods", pods.len()))).await;
    drop(cleanup);
}
