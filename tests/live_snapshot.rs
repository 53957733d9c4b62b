//! Live tests of `snapshot` against the real kube-apiserver of tests/cluster/lab.sh: what the
//! `view` ClusterRole can snapshot, and that offline checks on a snapshot answer with the
//! rules of the server it was taken from, as the live check on that server does.
//!
//! `KUBECTL_QUOTA_LAB` names the lab's state directory (its kubeconfig has the contexts `lab`,
//! admin; `viewer`, ClusterRole view; `nobody`, no rights). Without it the tests say so loudly
//! and skip, except under CI=true, where they fail. Each test works in its own namespace.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::live::{client, drop_namespace, lab, lab_version, plugin, text};
use common::temp_file;
use k8s_openapi::api::core::v1::{Pod, ResourceQuota};
use kube::api::{Api, DeleteParams, PostParams};
use kube::Client;
use kubectl_quota_engine::version::Rules;
use serde_json::Value;

/// A fresh namespace with one quota, synced by the quota controller.
async fn namespace_with_quota(c: &Client, prefix: &str, hard: Value) -> String {
    let name = common::live::new_namespace(c, prefix).await;
    let q: ResourceQuota = serde_json::from_value(serde_json::json!({"metadata": {"name": "compute"}, "spec": {"hard": hard}})).unwrap();
    let quotas = Api::<ResourceQuota>::namespaced(c.clone(), &name);
    quotas.create(&PostParams::default(), &q).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let synced = quotas.get("compute").await.ok().and_then(|q| q.status).and_then(|s| s.used).is_some();
        if synced {
            return name;
        }
        assert!(Instant::now() < deadline, "quota {name}/compute never synced");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The server URL of the kubeconfig's first cluster.
fn server_of(kubeconfig: &Path) -> String {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
    kc.clusters[0].cluster.as_ref().unwrap().server.clone().unwrap()
}

/// The snapshot List's own annotations.
fn annotations(snapshot: &str) -> serde_json::Map<String, Value> {
    let v: Value = serde_saphyr::from_str(snapshot).unwrap();
    v["metadata"]["annotations"].as_object().cloned().unwrap_or_default()
}

/// Per document, what decides: verdict, message, replicas.
fn verdicts(report: &Value) -> Vec<Value> {
    report["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| serde_json::json!({"kind": d["kind"], "name": d["name"], "allowed": d["allowed"], "message": d["message"], "replicasAdmitted": d["replicasAdmitted"], "usage": d["usage"]}))
        .collect()
}

fn report(out: &std::process::Output) -> Value {
    serde_json::from_str(&text(&out.stdout)).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", text(&out.stdout), text(&out.stderr)))
}

#[tokio::test]
async fn the_view_cluster_role_can_take_a_snapshot_and_it_records_what_it_could_not_read() {
    let Some(kc) = lab() else { return };
    let c = client(&kc).await;
    let ns = namespace_with_quota(&c, "kq-snapview", serde_json::json!({"pods": "4"})).await;
    let info = c.apiserver_version().await.unwrap();

    let out = plugin(&kc, &["--context", "viewer", "snapshot", "-n", &ns]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // `view` cannot list PriorityClasses: skipped, said, recorded.
    assert!(stderr.contains("note: cannot list priorityclasses: Error from server (Forbidden): "), "{stderr}");
    assert!(stderr.contains("; none saved, and the snapshot records that they are missing"), "{stderr}");
    let a = annotations(&stdout);
    assert_eq!(a.get("kubectl-quota/server-version").and_then(Value::as_str), Some(info.git_version.as_str()), "{a:?}");
    let not_read: Vec<&str> = a.get("kubectl-quota/not-read").and_then(Value::as_str).unwrap_or("").split(',').collect();
    assert!(not_read.contains(&"priorityclasses.scheduling.k8s.io"), "{not_read:?}");
    assert!(stdout.contains("kind: ResourceQuota") && !stdout.contains("kind: PriorityClass"), "{stdout}");
    // DeviceClasses: `view` may not list them either, but a release without DRA (1.20) serves
    // none, and discovery says so: nothing is missing, nothing recorded.
    let dra = Rules::for_version(lab_version()).dra;
    assert_eq!(not_read.contains(&"deviceclasses.resource.k8s.io"), dra, "{not_read:?}");
    if !dra {
        assert!(stderr.contains("note: this cluster does not serve deviceclasses (resource.k8s.io): none saved"), "{stderr}");
    }

    // Offline, the check answers as the viewer's live check does. A pod naming no class, where
    // no quota selects pods by class, needs no PriorityClass: a complete answer, exit 0.
    let state = temp_file("viewer-state", &stdout);
    let pod = temp_file("viewer-pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: app, image: busybox}]}\n");
    let out = plugin(&kc, &["check", "-f", pod.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let live = plugin(&kc, &["--context", "viewer", "check", "-f", pod.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(live.status.code(), out.status.code(), "live as viewer:\n{}", text(&live.stderr));
    assert_eq!(verdicts(&report(&live)), verdicts(&report(&out)));
    for (how, o) in [("offline", &out), ("live", &live)] {
        assert!(!text(&o.stderr).contains("incomplete"), "{how}: {}", text(&o.stderr));
    }
    // A pod naming a PriorityClass does: without them it cannot be decided (exit 3), live and
    // offline alike, and the warning says what could not be read.
    let classed = temp_file(
        "viewer-classed",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priorityClassName: kq-no-such-class, containers: [{name: app, image: busybox}]}\n",
    );
    let out = plugin(&kc, &["check", "-f", classed.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let live = plugin(&kc, &["--context", "viewer", "check", "-f", classed.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    for (how, o) in [("offline", &out), ("live", &live)] {
        let r = report(o);
        let d = &r["documents"][0];
        assert_eq!(
            (o.status.code(), d["outcome"].as_str(), d["undecided"][0]["lacking"].as_str()),
            (Some(3), Some("undecided"), Some("priorityClasses")),
            "{how}: {r:#}"
        );
        assert!(
            text(&o.stderr).contains("warning: the answer is incomplete: ") && text(&o.stderr).to_lowercase().contains("priorityclasses"),
            "{how}: {}",
            text(&o.stderr)
        );
    }
    let notes = report(&out)["notes"].to_string();
    assert!(notes.contains(&format!("PriorityClasses could not be read when the snapshot {} was taken", state.display())), "{notes}");
    // Live as viewer, on a release without DRA: no gap about DRA's kinds.
    if !dra {
        assert!(!text(&live.stderr).contains("resource.k8s.io"), "{}", text(&live.stderr));
    }
    // What the server does with it: refused for the missing class.
    let p: Pod =
        serde_json::from_value(kubectl_quota_engine::manifest::parse_str("p.yaml", &std::fs::read_to_string(&classed).unwrap()).unwrap()[0].value.clone())
            .unwrap();
    let server = match Api::<Pod>::namespaced(c.clone(), &ns).create(&PostParams { dry_run: true, ..Default::default() }, &p).await {
        Err(kube::Error::Api(s)) => s.message,
        other => panic!("the server admitted a pod naming a missing PriorityClass: {other:?}"),
    };
    assert!(server.ends_with("no PriorityClass with name kq-no-such-class was found"), "{server}");
    // A state of quotas alone (`kubectl get quota -o yaml`, a form README shows): it says
    // nothing of PriorityClasses, so the answer cannot be decided (3), not a quota refusal.
    let quotas = Api::<ResourceQuota>::namespaced(c.clone(), &ns).list(&Default::default()).await.unwrap();
    let items: Vec<serde_json::Value> = quotas
        .items
        .iter()
        .map(|q| {
            let mut v = serde_json::to_value(q).unwrap();
            v["apiVersion"] = "v1".into();
            v["kind"] = "ResourceQuota".into();
            v
        })
        .collect();
    let quota_only = temp_file("quota-only", &serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string());
    let o = plugin(&kc, &["check", "-f", classed.to_str().unwrap(), "--state", quota_only.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let r = report(&o);
    assert_eq!(
        (o.status.code(), r["documents"][0]["outcome"].as_str(), r["documents"][0]["undecided"][0]["lacking"].as_str()),
        (Some(3), Some("undecided"), Some("priorityClasses")),
        "quota-only state: {r:#}"
    );
    let _ = std::fs::remove_file(quota_only);

    // The admin's snapshot has them, and records nothing missing.
    let out = plugin(&kc, &["snapshot", "-n", &ns]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("kind: PriorityClass"));
    assert!(!annotations(&text(&out.stdout)).contains_key("kubectl-quota/not-read"), "{}", text(&out.stdout));
    // With them, live and offline say what the server said.
    let admin_state = temp_file("admin-state", &text(&out.stdout));
    for (how, o) in [
        ("offline", plugin(&kc, &["check", "-f", classed.to_str().unwrap(), "--state", admin_state.to_str().unwrap(), "-n", &ns, "-o", "json"])),
        ("live", plugin(&kc, &["check", "-f", classed.to_str().unwrap(), "-n", &ns, "-o", "json"])),
    ] {
        let r = report(&o);
        assert_eq!((o.status.code(), r["documents"][0]["serverError"].as_str()), (Some(1), Some(server.as_str())), "{how} as admin: {r:#}");
    }
    let _ = std::fs::remove_file(admin_state);
    let _ = std::fs::remove_file(&classed);

    // Without `list` on the namespace's own kinds nothing can be saved: an error naming the
    // server and the cause.
    let out = plugin(&kc, &["--context", "nobody", "snapshot", "-n", &ns]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!(" on {}: Error from server (Forbidden): ", server_of(&kc))), "{err}");
    assert!(err.contains("is forbidden: User \"nobody\" cannot list resource"), "{err}");
    assert!(text(&out.stdout).is_empty());

    // kubectl takes the List, annotations and all.
    match std::process::Command::new("kubectl").arg("--kubeconfig").arg(&kc).args(["get", "-f", state.to_str().unwrap(), "-o", "name"]).output() {
        Ok(k) => {
            assert!(k.status.success(), "kubectl get -f on the snapshot: {}", text(&k.stderr));
            // The namespace itself (name and labels) comes first, then its quota, then its
            // ServiceAccounts (names only: a pod naming one that does not exist is refused).
            assert_eq!(text(&k.stdout).trim(), format!("namespace/{ns}\nresourcequota/compute\nserviceaccount/default"), "{}", text(&k.stderr));
        }
        Err(e) => eprintln!("note: kubectl not runnable ({e}): the snapshot was not given to kubectl"),
    }
    let _ = std::fs::remove_file(state);
    let _ = std::fs::remove_file(pod);
    drop_namespace(&c, &ns).await;
}

const CRONJOB_V1: &str = "\
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: '0 3 * * *'
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: job, image: busybox, resources: {requests: {cpu: 100m}}}]
";

const CRONJOB_V1BETA1: &str = "\
apiVersion: batch/v1beta1
kind: CronJob
metadata: {name: weekly}
spec:
  schedule: '0 3 * * 0'
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: job, image: busybox, resources: {requests: {cpu: 100m}}}]
";

#[tokio::test]
async fn an_offline_check_on_a_snapshot_answers_as_the_live_check_on_its_server() {
    let Some(kc) = lab() else { return };
    let c = client(&kc).await;
    let ns = namespace_with_quota(&c, "kq-snapver", serde_json::json!({"pods": "4", "requests.cpu": "1"})).await;
    let info = c.apiserver_version().await.unwrap();
    let minor: u32 = info.minor.trim_end_matches('+').parse().unwrap();

    let out = plugin(&kc, &["snapshot", "-n", &ns]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let state = temp_file("version-state", &text(&out.stdout));
    let release = temp_file("version-release", &format!("{CRONJOB_V1}---\n{CRONJOB_V1BETA1}"));

    let live = plugin(&kc, &["check", "-f", release.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let offline = plugin(&kc, &["check", "-f", release.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let (l, o) = (report(&live), report(&offline));
    assert_eq!(live.status.code(), offline.status.code(), "live:\n{l:#}\noffline:\n{o:#}");
    assert_eq!(verdicts(&l), verdicts(&o), "live and offline checks disagree:\nlive {l:#}\noffline {o:#}");
    assert_eq!(l["kubernetes"]["version"], o["kubernetes"]["version"]);
    assert_eq!((l["kubernetes"]["source"].as_str(), o["kubernetes"]["source"].as_str()), (Some("server"), Some("snapshot")));
    assert_eq!(o["kubernetes"]["serverVersion"].as_str(), Some(info.git_version.as_str()));
    let cronjob = &verdicts(&o)[0];
    if minor < 21 {
        // batch/v1 CronJob is served from 1.21: the lab's 1.20 refuses it, as kubectl would.
        assert_eq!(live.status.code(), Some(1));
        assert_eq!(cronjob["allowed"], false, "{cronjob}");
        assert_eq!(cronjob["message"], "no matches for kind \"CronJob\" in version \"batch/v1\"", "{cronjob}");
    } else {
        assert_eq!(cronjob["allowed"], true, "{cronjob}");
    }
    // Before this snapshot recorded its version, the offline check answered with the newest
    // rules, which admit it: that is what --kubernetes-version with the newest still gives.
    let newest_release = kubectl_quota_engine::version::NEWEST.to_string();
    let newest = plugin(
        &kc,
        &["check", "-f", release.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", &ns, "-o", "json", "--kubernetes-version", &newest_release],
    );
    let n = report(&newest);
    assert_eq!((n["kubernetes"]["source"].as_str(), verdicts(&n)[0]["allowed"].as_bool()), (Some("flag"), Some(true)), "{n:#}");

    // plan on the snapshot answers with the same release's rules as plan on the cluster.
    let live_plan = plugin(&kc, &["plan", "-f", release.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    let offline_plan = plugin(&kc, &["plan", "-f", release.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", &ns, "-o", "json"]);
    assert_eq!(live_plan.status.code(), offline_plan.status.code(), "live:\n{}\noffline:\n{}", text(&live_plan.stdout), text(&offline_plan.stdout));
    let (lp, op): (Value, Value) = (serde_json::from_str(&text(&live_plan.stdout)).unwrap(), serde_json::from_str(&text(&offline_plan.stdout)).unwrap());
    assert_eq!(lp["quotas"], op["quotas"], "live plan {lp:#}\noffline plan {op:#}");

    let _ = std::fs::remove_file(state);
    let _ = std::fs::remove_file(release);
    drop_namespace(&c, &ns).await;
}

/// The ClusterRole the docs give for a complete answer, read from docs/rights.md (which README
/// links to): its YAML block.
fn readme_classes_role() -> Vec<Value> {
    let doc = std::fs::read_to_string(common::root().join("docs/rights.md")).unwrap();
    let section = doc.as_str();
    let block = section.split("```yaml\n").nth(1).and_then(|b| b.split("```").next()).expect("the section has a YAML block");
    kubectl_quota_engine::manifest::parse_str("docs/rights.md", block).unwrap().into_iter().map(|d| d.value).collect()
}

#[tokio::test]
async fn view_and_the_readme_classes_role_give_complete_answers() {
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleBinding};
    let Some(kc) = lab() else { return };
    let c = client(&kc).await;
    let ns = namespace_with_quota(&c, "kq-rights", serde_json::json!({"pods": "4"})).await;
    let user = format!("kq-ci-{}", std::process::id());
    // `view` in the namespace, and README's ClusterRole bound to the same user (names made
    // unique to this run).
    let view: RoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "ci-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(c.clone(), &ns).create(&PostParams::default(), &view).await.unwrap();
    let docs = readme_classes_role();
    assert_eq!(docs.len(), 2, "{docs:?}");
    let mut role: ClusterRole = serde_json::from_value(docs[0].clone()).unwrap();
    let mut binding: ClusterRoleBinding = serde_json::from_value(docs[1].clone()).unwrap();
    role.metadata.name = Some(user.clone());
    binding.metadata.name = Some(user.clone());
    binding.role_ref.name = user.clone();
    binding.subjects = Some(vec![serde_json::from_value(serde_json::json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user})).unwrap()]);
    Api::<ClusterRole>::all(c.clone()).create(&PostParams::default(), &role).await.unwrap();
    Api::<ClusterRoleBinding>::all(c.clone()).create(&PostParams::default(), &binding).await.unwrap();

    // Its snapshot misses nothing, and a pod naming a missing class is refused as the server
    // refuses it, live and offline.
    let out = plugin(&kc, &["--as", &user, "snapshot", "-n", &ns]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!annotations(&text(&out.stdout)).contains_key("kubectl-quota/not-read"), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let state = temp_file("rights-state", &text(&out.stdout));
    let classed = temp_file(
        "rights-classed",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priorityClassName: kq-no-such-class, containers: [{name: app, image: busybox}]}\n",
    );
    for (how, o) in [
        ("offline", plugin(&kc, &["check", "-f", classed.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", &ns, "-o", "json"])),
        ("live", plugin(&kc, &["--as", &user, "check", "-f", classed.to_str().unwrap(), "-n", &ns, "-o", "json"])),
    ] {
        let r = report(&o);
        assert_eq!(o.status.code(), Some(1), "{how}: {r:#}\n{}", text(&o.stderr));
        assert_eq!(r["documents"][0]["message"].as_str(), Some("no PriorityClass with name kq-no-such-class was found"), "{how}: {r:#}");
        assert!(!text(&o.stderr).contains("incomplete"), "{how}: {}", text(&o.stderr));
    }
    let _ = Api::<ClusterRoleBinding>::all(c.clone()).delete(&user, &DeleteParams::default()).await;
    let _ = Api::<ClusterRole>::all(c.clone()).delete(&user, &DeleteParams::default()).await;
    let _ = std::fs::remove_file(state);
    let _ = std::fs::remove_file(classed);
    drop_namespace(&c, &ns).await;
}
