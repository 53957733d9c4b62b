//! The README's CI recipe on a real cluster (tests/cluster/lab.sh): the scheduled job saves a
//! snapshot through the GitHub Action, the pull request's job checks against it through the
//! same Action, and a live check through the Action agrees with it, annotation for annotation.
//!
//! `KUBECTL_QUOTA_LAB` names the lab's state directory. Without it the test says so loudly
//! and skips, except under CI=true, where it fails.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::ci::run_action;
use common::live::{client, eventually, lab, new_namespace, plugin, text};
use k8s_openapi::api::core::v1::{Namespace, ResourceQuota};
use kube::api::{Api, DeleteParams};

/// The pull request: a Deployment of 4 where the quota leaves room for 3 pods, and a Pod
/// asking for more CPU than the quota has.
const APP: &str = "# the team's release\napiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      automountServiceAccountToken: false
      containers: [{name: app, image: web:1, resources: {requests: {cpu: 100m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: batch}
spec:
  automountServiceAccountToken: false
  containers: [{name: app, image: batch:1, resources: {requests: {cpu: '2'}}}]
";

fn annotations(out: &std::process::Output) -> Vec<String> {
    text(&out.stdout).lines().filter(|l| l.starts_with("::error")).map(str::to_string).collect()
}

/// A namespace with a quota `compute` (pods=3, requests.cpu=1) the controller has filled in
/// (the snapshot must carry its usage), and a scratch repository holding `app` as
/// deploy/app.yaml, with the PATH the Action's steps find the plugin on.
struct Recipe {
    ns: String,
    dir: std::path::PathBuf,
    repo: std::path::PathBuf,
    path: String,
}

async fn recipe(c: &kube::Client, kubeconfig: &Path, prefix: &str, app: &str) -> Recipe {
    let ns = new_namespace(c, prefix).await;
    let created = plugin(kubeconfig, &["create", "compute", "--hard=pods=3,requests.cpu=1", "-n", &ns]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    let deadline = Instant::now() + Duration::from_secs(60);
    while Api::<ResourceQuota>::namespaced(c.clone(), &ns).get("compute").await.unwrap().status.and_then(|s| s.used).is_none() {
        assert!(Instant::now() < deadline, "the quota controller never filled in the usage");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let dir = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("deploy")).unwrap();
    std::fs::write(repo.join("deploy/app.yaml"), app).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_kubectl-quota")).parent().unwrap().display().to_string();
    Recipe { ns, dir, repo, path: format!("{bin_dir}:/usr/local/bin:/usr/bin:/bin") }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readme_recipe_snapshots_then_checks_pull_requests_against_it() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let Recipe { ns, dir, repo, path } = recipe(&c, &kubeconfig, "kq-ci", APP).await;
    let kc = kubeconfig.display().to_string();

    // The scheduled job: a snapshot of the namespace, with the cluster's credentials.
    let run = run_action(&dir, &[("snapshot", ".quota/state.yaml"), ("namespace", &ns), ("kubeconfig", &kc)], &path, &repo);
    let step = run.steps.last().unwrap();
    assert!(step.status.success(), "{}{}", text(&step.stdout), text(&step.stderr));
    let state = std::fs::read_to_string(repo.join(".quota/state.yaml")).unwrap();
    assert!(state.contains("kind: ResourceQuota") && state.contains("name: compute"), "{state}");
    assert!(run.summary.contains("objects saved to .quota/state.yaml"), "{}", run.summary);

    // The pull request's job: no credentials, the snapshot only.
    let offline = run_action(&dir, &[("files", "deploy/"), ("state", ".quota/state.yaml"), ("namespace", &ns), ("junit-file", "quota.xml")], &path, &repo);
    let step = offline.steps.last().unwrap();
    assert_eq!(step.status.code(), Some(1), "{}{}", text(&step.stdout), text(&step.stderr));
    assert_eq!(offline.output, "exit-code=1\n");
    let from_snapshot = annotations(step);
    assert_eq!(from_snapshot.len(), 2, "{}", text(&step.stdout));
    assert!(
        from_snapshot[0].starts_with("::error file=deploy/app.yaml,line=2,title=quota check%3A pods of deployment/web would be refused::"),
        "{from_snapshot:?}"
    );
    assert!(from_snapshot[1].starts_with("::error file=deploy/app.yaml,line=14,title=quota check%3A pod/batch would be refused::"), "{from_snapshot:?}");
    let junit = std::fs::read_to_string(repo.join("quota.xml")).unwrap();
    assert!(junit.contains("tests=\"3\" failures=\"2\""), "{junit}");

    // The same check live, through the same Action: the same annotations.
    let live = run_action(&dir, &[("files", "deploy/"), ("namespace", &ns), ("kubeconfig", &kc)], &path, &repo);
    let step = live.steps.last().unwrap();
    assert_eq!(step.status.code(), Some(1), "{}{}", text(&step.stdout), text(&step.stderr));
    assert_eq!(annotations(step), from_snapshot);

    let _ = std::fs::remove_dir_all(&dir);
    let _ = Api::<Namespace>::all(c.clone()).delete(&ns, &DeleteParams::default()).await;
}

/// A release that fits: the pull request's Deployment alone, 2 pods under a quota of 3.
fn fits() -> String {
    APP.split("---\n").next().unwrap().replace("replicas: 4", "replicas: 2")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readme_recipe_with_a_view_kubeconfig_is_clean_where_everything_fits() {
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::api::PostParams;
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let Recipe { ns, dir, repo, path } = recipe(&c, &kubeconfig, "kq-ci-view", &fits()).await;
    // The recipe's kubeconfig: the `view` ClusterRole only (the lab's `viewer` user).
    let view = dir.join("kubeconfig-view");
    let kc = std::fs::read_to_string(&kubeconfig).unwrap().replace("current-context: lab", "current-context: viewer");
    std::fs::write(&view, kc).unwrap();
    let view = view.display().to_string();

    // The scheduled job's snapshot, then the pull request's check against it, and the live
    // check with the same kubeconfig: all clean, exit 0.
    let run = run_action(&dir, &[("snapshot", ".quota/state.yaml"), ("namespace", &ns), ("kubeconfig", &view)], &path, &repo);
    let step = run.steps.last().unwrap();
    assert!(step.status.success(), "{}{}", text(&step.stdout), text(&step.stderr));
    let offline = run_action(&dir, &[("files", "deploy/"), ("state", ".quota/state.yaml"), ("namespace", &ns)], &path, &repo);
    let live = run_action(&dir, &[("files", "deploy/"), ("namespace", &ns), ("kubeconfig", &view)], &path, &repo);
    for (how, run) in [("offline", &offline), ("live", &live)] {
        let step = run.steps.last().unwrap();
        assert_eq!(step.status.code(), Some(0), "{how}: {}{}", text(&step.stdout), text(&step.stderr));
        assert_eq!(run.output, "exit-code=0\n", "{how}");
        assert!(!text(&step.stderr).contains("incomplete"), "{how}: {}", text(&step.stderr));
    }

    // What the real controllers do with it: both pods are created.
    let d: Deployment = serde_json::from_value(kubectl_quota_engine::manifest::parse_str("app.yaml", &fits()).unwrap()[0].value.clone()).unwrap();
    let deployments = Api::<Deployment>::namespaced(c.clone(), &ns);
    deployments.create(&PostParams::default(), &d).await.unwrap();
    eventually("both pods created", 60, || async {
        let status = deployments.get("web").await.map_err(|e| e.to_string())?.status;
        status.as_ref().and_then(|s| s.replicas).filter(|r| *r == 2).ok_or(format!("{status:?}"))
    })
    .await;
    let _ = std::fs::remove_dir_all(&dir);
    let _ = Api::<Namespace>::all(c.clone()).delete(&ns, &DeleteParams::default()).await;
}
