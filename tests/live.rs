//! Live tests against a real kube-apiserver (tests/cluster/lab.sh, started by tests/run-all.sh).
//! No mock anywhere: every request goes to the real API server.
//!
//! `KUBECTL_QUOTA_LAB` names the lab's state directory (its kubeconfig has the contexts `lab`,
//! `viewer` and `nobody`); `KUBECTL_QUOTA_LAB_LIMITED` a second instance running with the
//! corpus's ResourceQuota admission configuration. Without them the tests say so loudly and
//! skip, except under CI=true, where they fail.
//!
//! Why one file of this length: these cases share one lab and its namespaces; each
//! section below is one command against the real server.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::live::{client, drop_namespace, lab_with_limited, plugin, text, Lab};
use k8s_openapi::api::core::v1::{Namespace, ResourceQuota};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, PostParams};
use kube::Client;
use kubectl_quota_engine::quantity::Quantity;
use serde_json::Value;

fn docs(path: &Path) -> Vec<Value> {
    let t = std::fs::read_to_string(path).unwrap_or_default();
    kubectl_quota_engine::manifest::parse_str(&path.display().to_string(), &t).unwrap().into_iter().map(|d| d.value).collect()
}

async fn new_namespace(c: &Client, prefix: &str) -> String {
    let name = format!("{prefix}-{}", std::process::id() % 100000);
    let ns: Namespace = serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap();
    let api = Api::<Namespace>::all(c.clone());
    let _ = api.delete(&name, &DeleteParams::default()).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match api.create(&PostParams::default(), &ns).await {
            Ok(_) => break,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => panic!("cannot create namespace {name}: {e}"),
        }
    }
    // Pods are refused until the namespace's default service account is there (and, before
    // 1.24, has its token Secret).
    common::live::wait_default_service_account(c, &name).await;
    name
}

/// A fresh namespace holding one synced quota `q` with these hard limits.
async fn namespace_with_quota(lab: &Lab, prefix: &str, hard: &str) -> (Client, String) {
    let c = client(&lab.kubeconfig).await;
    let ns = new_namespace(&c, prefix).await;
    let out = plugin(&lab.kubeconfig, &["create", "q", "-n", &ns, &format!("--hard={hard}")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    wait_synced(&c, &ns).await.unwrap();
    (c, ns)
}

/// Writes a manifest to a temporary file named after the test.
fn manifest_file(tag: &str, yaml: &str) -> PathBuf {
    let f = std::env::temp_dir().join(format!("kq-{tag}-{}.yaml", std::process::id()));
    std::fs::write(&f, yaml).unwrap();
    f
}

/// Creates one object (any kind) in `ns`, optionally as a server dry run. Err carries the
/// server's message.
async fn create(c: &Client, ns: &str, v: &Value, dry_run: bool, cache: &mut BTreeMap<String, (ApiResource, bool)>) -> Result<(), String> {
    let av = v["apiVersion"].as_str().unwrap_or("v1").to_string();
    let kind = v["kind"].as_str().unwrap_or("").to_string();
    let key = format!("{av}/{kind}");
    if !cache.contains_key(&key) {
        let (g, ver) = av.rsplit_once('/').map(|(g, v)| (g.to_string(), v.to_string())).unwrap_or((String::new(), av.clone()));
        let (ar, caps) = kube::discovery::pinned_kind(c, &GroupVersionKind::gvk(&g, &ver, &kind)).await.map_err(|e| e.to_string())?;
        cache.insert(key.clone(), (ar, caps.scope == kube::discovery::Scope::Namespaced));
    }
    let (ar, namespaced) = cache[&key].clone();
    let api: Api<DynamicObject> = if namespaced { Api::namespaced_with(c.clone(), ns, &ar) } else { Api::all_with(c.clone(), &ar) };
    let obj: DynamicObject = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    api.create(&PostParams { dry_run, field_manager: None }, &obj).await.map(|_| ()).map_err(|e| match e {
        kube::Error::Api(s) => s.message.clone(),
        other => other.to_string(),
    })
}

/// Waits until every quota in `ns` has a status with usage for each hard key. (The quota
/// controller learns new resources, such as a fresh CRD's, at its periodic discovery: 30 s.)
async fn wait_synced(c: &Client, ns: &str) -> Result<(), String> {
    let api = Api::<ResourceQuota>::namespaced(c.clone(), ns);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let list = api.list(&Default::default()).await.map_err(|e| e.to_string())?;
        let synced = list.items.iter().all(|q| {
            let st = q.status.clone().unwrap_or_default();
            let hard = st.hard.unwrap_or_default();
            let used = st.used.unwrap_or_default();
            !hard.is_empty() && hard.keys().all(|k| used.contains_key(k))
        });
        if synced {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("quotas in {ns} never synced"));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Usage per quota, values normalised through the exact Quantity.
fn used_of(items: &[Value]) -> BTreeMap<String, BTreeMap<String, String>> {
    items
        .iter()
        .filter(|q| q["kind"] == "ResourceQuota")
        .map(|q| {
            let used = q["status"]["used"].as_object().cloned().unwrap_or_default();
            let norm = used
                .iter()
                .map(|(k, v)| (k.clone(), Quantity::parse(v.as_str().unwrap_or(&v.to_string())).map(|q| q.to_string()).unwrap_or_default()))
                .collect();
            (q["metadata"]["name"].as_str().unwrap_or("").to_string(), norm)
        })
        .collect()
}

/// Waits until the live quotas' usage equals the recorded state.yaml.
async fn wait_for_state(c: &Client, ns: &str, state: &Path, secs: u64) -> Result<(), String> {
    // parse_str already expands the recorded `kind: List` into its items.
    let want_items = docs(state);
    let want = used_of(&want_items);
    let api = Api::<ResourceQuota>::namespaced(c.clone(), ns);
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let list = api.list(&Default::default()).await.map_err(|e| e.to_string())?;
        let got_items: Vec<Value> = list
            .items
            .iter()
            .map(|q| {
                let mut v = serde_json::to_value(q).unwrap();
                v["kind"] = "ResourceQuota".into();
                v
            })
            .collect();
        let got = used_of(&got_items);
        if got == want {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("the quotas never reached the recorded state: want {want:?}, got {got:?}"));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn apply_cluster_scoped(c: &Client) {
    let mut cache = BTreeMap::new();
    for d in docs(&common::corpus().join("cluster-scoped.yaml")) {
        let _ = create(c, "", &d, false, &mut cache).await;
    }
}

/// The server's answer to a dry-run create: (allowed, message after `is forbidden: `).
async fn server_dry_run(c: &Client, ns: &str, doc: &Value) -> (bool, Option<String>) {
    let mut cache = BTreeMap::new();
    match create(c, ns, doc, true, &mut cache).await {
        Ok(()) => (true, None),
        Err(m) => (false, Some(m.split_once("is forbidden: ").map(|(_, r)| r.to_string()).unwrap_or(m))),
    }
}

/// How a live case matched.
#[derive(Default)]
struct Matched {
    /// A message matched only through the tool's `alternatives` (the server's quota order).
    via_alternative: bool,
    /// On a server newer than the recording: where the recording (1.20) and this server differ,
    /// checked to be the server's own answer (see `live_case`).
    per_version: Option<String>,
}

/// One corpus case, live: setup in a fresh namespace, live check, compare with expected.json,
/// then compare the check's first verdict with the server's own dry-run answer.
///
/// On the release the corpus was recorded on (1.20) the recording is the truth. On a newer
/// server, where the recording and the check disagree (or the setup no longer reaches the
/// recorded usage), the truth is the live server: the candidates are then created for real, in
/// order, in the namespace the check looked at, and the check must say what this server says.
/// A case passes that way only when the server itself departs from the 1.20 recording; the
/// difference is printed, never hidden.
async fn live_case(c: Client, kubeconfig: PathBuf, dir: PathBuf) -> Result<Matched, String> {
    let case = dir.file_name().unwrap().to_string_lossy().to_string();
    let ns = new_namespace(&c, &format!("kq{}", &case[..4])).await;
    let modern = common::live::lab_version().to_string() != common::RECORDED_VERSION;
    let result = async {
        let mut cache = BTreeMap::new();
        let mut per_version = Vec::new();
        let setup = docs(&dir.join("cluster.yaml"));
        let (quotas, rest): (Vec<Value>, Vec<Value>) = setup.into_iter().partition(|d| d["kind"] == "ResourceQuota");
        for q in &quotas {
            create(&c, &ns, q, false, &mut cache).await.map_err(|e| format!("setup quota: {e}"))?;
        }
        wait_synced(&c, &ns).await?;
        for d in &rest {
            // Some setup objects are refused on purpose (expected.json's setup_errors).
            let _ = create(&c, &ns, d, false, &mut cache).await;
        }
        let state = wait_for_state(&c, &ns, &dir.join("state.yaml"), if modern { 20 } else { 60 }).await;
        match state {
            Ok(()) => {}
            Err(e) if modern => {
                per_version.push(format!("setup: {e}"));
                wait_synced(&c, &ns).await?;
            }
            Err(e) => return Err(e),
        }
        let state_differs = !per_version.is_empty();
        let before = live_used(&c, &ns).await?;
        let mut args =
            vec!["check".to_string(), "-f".into(), dir.join("candidate.yaml").display().to_string(), "-n".into(), ns.clone(), "-o".into(), "json".into()];
        if dir.join("admission.yaml").exists() {
            args.extend(["--admission-config".to_string(), dir.join("admission.yaml").display().to_string()]);
        }
        let kc = kubeconfig.clone();
        let out = tokio::task::spawn_blocking(move || plugin(&kc, &args.iter().map(String::as_str).collect::<Vec<_>>())).await.unwrap();
        let code = out.status.code().unwrap_or(-1);
        if code == 2 || code < 0 {
            return Err(format!("check exit {code}: {}", text(&out.stderr)));
        }
        let got: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("bad JSON {e}"))?;
        // The check reads the release from the server's /version and answers with its rules
        // (the nearest the engine knows, for a server newer than its newest). On the release
        // the corpus was recorded on (1.20) messages then compare exactly; on a newer server
        // compare_report compares as the corpus README allows (must-specify by quota and
        // resource set: 1.24+ names the containers).
        let want = common::live::lab_version().nearest_supported().to_string();
        if got["kubernetes"]["version"] != want.as_str() || got["kubernetes"]["source"] != "server" {
            return Err(format!("check answered for {}, not the server's own {want}", got["kubernetes"]));
        }
        let recorded = if per_version.is_empty() { common::compare_report(&dir, code, &got) } else { Err("the setup differs".to_string()) };
        let via_alternative = match recorded {
            Ok(v) => v,
            Err(e) if modern => {
                per_version.push(format!("recorded 1.20 answer: {e}"));
                false
            }
            Err(e) => return Err(e),
        };
        // The check wrote nothing: the quotas are as recorded (or, where this server's setup
        // differs, as before the check) still, and the server's own dry-run answer for the
        // first document agrees with the check.
        if state_differs {
            if live_used(&c, &ns).await? != before {
                return Err("the quotas' usage changed during the check".into());
            }
        } else {
            wait_for_state(&c, &ns, &dir.join("state.yaml"), 60).await.map_err(|e| format!("after check: {e}"))?;
        }
        let candidates = docs(&dir.join("candidate.yaml"));
        let (allowed, message) = server_dry_run(&c, &ns, &candidates[0]).await;
        let doc = &got["documents"][0];
        if doc["allowed"] != allowed {
            return Err(format!("dry-run: the server says allowed={allowed} ({message:?}), check says {}", doc["allowed"]));
        }
        if let Some(m) = &message {
            match common::compare_message("dry-run message", Some(m), doc["message"].as_str(), &doc["refusal"]["alternatives"], true) {
                common::Compared::Differs(d) => return Err(d),
                common::Compared::Alternative | common::Compared::Same => {}
            }
        }
        if per_version.is_empty() {
            return Ok(Matched { via_alternative, per_version: None });
        }
        // A newer server and the 1.20 recording disagree: this server's own answers decide.
        let server = replay_for_real(&c, &ns, &candidates, &got).await;
        let mut problems = Vec::new();
        for (i, (d, (allowed, message))) in got["documents"].as_array().unwrap().iter().zip(&server.documents).enumerate() {
            if d["allowed"] != *allowed {
                problems.push(format!("document {}: the server says allowed={allowed} ({message:?}), check says {} ({})", i + 1, d["allowed"], d["message"]));
            } else if let Some(m) = message {
                if let common::Compared::Differs(x) =
                    common::compare_message(&format!("document {} message", i + 1), Some(m), d["message"].as_str(), &d["refusal"]["alternatives"], true)
                {
                    problems.push(x);
                }
            }
        }
        problems.extend(server.pods);
        if problems.is_empty() {
            Ok(Matched { via_alternative, per_version: Some(per_version.join("; ")) })
        } else {
            Err(format!("the live server and the check disagree:\n    {}\n    ({})", problems.join("\n    "), per_version.join("; ")))
        }
    }
    .await;
    drop_namespace(&c, &ns).await;
    result
}

/// Every quota's status.used in `ns`, values normalised.
async fn live_used(c: &Client, ns: &str) -> Result<BTreeMap<String, BTreeMap<String, String>>, String> {
    let list = Api::<ResourceQuota>::namespaced(c.clone(), ns).list(&Default::default()).await.map_err(|e| e.to_string())?;
    let items: Vec<Value> = list
        .items
        .iter()
        .map(|q| {
            let mut v = serde_json::to_value(q).unwrap();
            v["kind"] = "ResourceQuota".into();
            v
        })
        .collect();
    Ok(used_of(&items))
}

/// What the server answered when the candidates were created for real.
struct Replayed {
    /// Per document: (allowed, message after `is forbidden: `).
    documents: Vec<(bool, Option<String>)>,
    /// Where the controllers' pods of an admitted Deployment disagree with the check.
    pods: Vec<String>,
}

/// Creates the candidates for real, one by one in order, as the recording did; then, for each
/// admitted Deployment, waits until its pods settle and compares their number (and the first
/// FailedCreate refusal) with what the check predicted (`report`).
async fn replay_for_real(c: &Client, ns: &str, candidates: &[Value], report: &Value) -> Replayed {
    let mut cache = BTreeMap::new();
    let mut documents = Vec::new();
    for d in candidates {
        documents.push(match create(c, ns, d, false, &mut cache).await {
            Ok(()) => (true, None),
            Err(m) => (false, Some(m.split_once("is forbidden: ").map(|(_, r)| r.to_string()).unwrap_or(m))),
        });
    }
    let mut pods = Vec::new();
    for (i, (d, (allowed, _))) in candidates.iter().zip(&documents).enumerate() {
        let r = &report["documents"][i];
        if !allowed || d["kind"] != "Deployment" || r["replicasAdmitted"].is_null() {
            continue;
        }
        let want = r["replicasAdmitted"].as_i64().unwrap_or(-1);
        let name = d["metadata"]["name"].as_str().unwrap_or("").to_string();
        let deployments = Api::<k8s_openapi::api::apps::v1::Deployment>::namespaced(c.clone(), ns);
        // Read as JSON: which fields are optional differs between k8s-openapi's API versions.
        let replicas_of = |d: k8s_openapi::api::apps::v1::Deployment| serde_json::to_value(d).ok().and_then(|v| v["status"]["replicas"].as_i64());
        // The controllers stop creating once quota refuses; settled = the same count for 3 s.
        let deadline = Instant::now() + Duration::from_secs(60);
        let (mut last, mut since) = (-1, Instant::now());
        let count = loop {
            let n = deployments.get(&name).await.ok().and_then(replicas_of).unwrap_or(0);
            if n != last {
                (last, since) = (n, Instant::now());
            }
            if (n == want && since.elapsed() > Duration::from_secs(3)) || Instant::now() > deadline {
                break n;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        if count != want {
            pods.push(format!("document {} (Deployment {name}): the controllers created {count} pods, check says {want}", i + 1));
        }
        if let Some(predicted) = r["podMessage"].as_str() {
            let events = Api::<k8s_openapi::api::core::v1::Event>::namespaced(c.clone(), ns);
            let deadline = Instant::now() + Duration::from_secs(30);
            let seen = loop {
                let list = events.list(&Default::default()).await.map(|l| l.items).unwrap_or_default();
                let m = list
                    .iter()
                    .filter(|e| {
                        e.reason.as_deref() == Some("FailedCreate") && e.involved_object.name.as_deref().is_some_and(|n| n.starts_with(&format!("{name}-")))
                    })
                    .filter_map(|e| e.message.as_deref().and_then(|m| m.split_once("is forbidden: ")).map(|(_, r)| r.to_string()))
                    .next();
                if m.is_some() || Instant::now() > deadline {
                    break m;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            };
            match seen {
                Some(m) if common::same_message(&m, predicted, true) => {}
                Some(m) if r["podMessageAlternatives"].as_array().is_some_and(|a| a.iter().any(|x| x.as_str() == Some(m.as_str()))) => {}
                other => pods.push(format!("document {} (Deployment {name}): the ReplicaSet was refused {other:?}, check says {predicted:?}", i + 1)),
            }
        }
    }
    Replayed { documents, pods }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_recorded_case_matches_live() {
    let Some(lab) = lab_with_limited() else { return };
    let c = client(&lab.kubeconfig).await;
    apply_cluster_scoped(&c).await;
    let limited = match &lab.limited_kubeconfig {
        Some(k) => {
            let lc = client(k).await;
            apply_cluster_scoped(&lc).await;
            Some((lc, k.clone()))
        }
        None => None,
    };
    let sem = Arc::new(tokio::sync::Semaphore::new(4));
    let mut tasks = Vec::new();
    let mut skipped = Vec::new();
    // KQ_LIVE_CASES=1000,1057 runs only the cases whose names start with those prefixes.
    let only: Vec<String> = std::env::var("KQ_LIVE_CASES").map(|v| v.split(',').map(str::to_string).collect()).unwrap_or_default();
    for dir in common::cases() {
        let case = dir.file_name().unwrap().to_string_lossy().to_string();
        if !only.is_empty() && !only.iter().any(|p| case.starts_with(p.as_str())) {
            continue;
        }
        let (cl, kc) = if dir.join("admission.yaml").exists() {
            match &limited {
                Some((lc, k)) => (lc.clone(), k.clone()),
                None => {
                    skipped.push(dir.file_name().unwrap().to_string_lossy().to_string());
                    continue;
                }
            }
        } else {
            (c.clone(), lab.kubeconfig.clone())
        };
        let permit = sem.clone().acquire_owned().await.unwrap();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        tasks.push((
            name,
            tokio::spawn(async move {
                let r = live_case(cl, kc, dir).await;
                drop(permit);
                r
            }),
        ));
    }
    let total = tasks.len();
    let mut failures = Vec::new();
    let mut alternatives = Vec::new();
    let mut per_version = Vec::new();
    for (name, t) in tasks {
        match t.await.unwrap() {
            Ok(m) => {
                if m.via_alternative {
                    alternatives.push(name.clone());
                }
                if let Some(d) = m.per_version {
                    per_version.push(format!("{name}: {d}"));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    let version = common::live::lab_version();
    println!("live conformance on Kubernetes {version}: {} of {total} cases match", total - failures.len());
    if !per_version.is_empty() {
        // Not failures: the check said what this server says, and this server departs from
        // the 1.20 recording.
        println!("{} cases where Kubernetes {version} itself answers otherwise than the 1.20 recording:\n{}", per_version.len(), per_version.join("\n"));
    }
    if !alternatives.is_empty() {
        println!("matched through the server's undefined quota order: {}", alternatives.join(", "));
    }
    if !skipped.is_empty() {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "limited cases need KUBECTL_QUOTA_LAB_LIMITED under CI");
        eprintln!("*** SKIPPED (no admission-config cluster): {} ***", skipped.join(", "));
    }
    assert!(failures.is_empty(), "{} of {total} live cases differ:\n{}", failures.len(), failures.join("\n"));
}

#[tokio::test]
async fn create_with_every_scope_kind_then_describe_shows_it() {
    let Some(lab) = lab_with_limited() else { return };
    let c = client(&lab.kubeconfig).await;
    apply_cluster_scoped(&c).await;
    let ns = new_namespace(&c, "kq-create").await;
    let k = &lab.kubeconfig;
    let cases: Vec<(&str, Vec<&str>, &str)> = vec![
        ("plain", vec!["--hard=requests.cpu=2,limits.memory=4Gi,pods=10"], ""),
        ("term", vec!["--hard=pods=2", "--scopes=Terminating"], "Terminating"),
        ("nonterm", vec!["--hard=pods=2", "--scopes=NotTerminating"], "NotTerminating"),
        ("besteffort", vec!["--hard=pods=2", "--scopes=BestEffort"], "BestEffort"),
        ("notbesteffort", vec!["--hard=pods=2,requests.cpu=1", "--scopes=NotBestEffort"], "NotBestEffort"),
        ("critical", vec!["--hard=pods=2", "--priority-class=high,medium"], "PriorityClass In [high, medium]"),
        ("noclass", vec!["--hard=pods=2", "--scope-selector", "PriorityClass DoesNotExist"], "PriorityClass DoesNotExist"),
    ];
    for (name, flags, _) in &cases {
        let mut args = vec!["-n", &ns, "create", name];
        args.extend(flags.iter().copied());
        let out = plugin(k, &args);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), format!("resourcequota/{name} created\n"));
        // high and medium exist: nothing to warn about.
        assert_eq!(text(&out.stderr), "", "{name}");
    }
    // A class the cluster does not have: the server accepts the quota, which would track no
    // pod; the plugin warns, as it does for a server dry run.
    for dry in [&["--dry-run=server"][..], &[][..]] {
        let mut args = vec!["-n", &ns, "create", "typo", "--hard=pods=2", "--priority-class=high,hihg"];
        args.extend(dry);
        let out = plugin(k, &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr),
            "Warning: PriorityClass \"hihg\" does not exist: the quota tracks pods of that class, and none can be created until it exists\n"
        );
    }
    wait_synced(&c, &ns).await.unwrap();
    let out = plugin(k, &["describe", "-n", &ns, "-o", "json"]);
    let views: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (name, _, scope) in &cases {
        let v = views.as_array().unwrap().iter().find(|v| v["name"] == *name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(v["synced"], true, "{name}");
        if !scope.is_empty() {
            assert_eq!(v["scopes"][0], *scope, "{name}");
        }
    }
    let out = plugin(k, &["describe", "critical", "-n", &ns]);
    let t = text(&out.stdout);
    assert!(t.contains("Scopes:     PriorityClass In [high, medium]") && t.contains("pods      0     2     0%"), "{t}");
    // An existing quota: the server's AlreadyExists, exit 1.
    let out = plugin(k, &["create", "plain", "-n", &ns, "--hard=pods=1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("already exists"), "{}", text(&out.stderr));
    drop_namespace(&c, &ns).await;
}

#[tokio::test]
async fn invalid_input_is_refused_before_any_request() {
    let Some(_lab) = lab_with_limited() else { return };
    // A kubeconfig whose server does not exist: an error about the input proves nothing was sent.
    let dir = std::env::temp_dir().join(format!("kq-nowhere-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kc = dir.join("kubeconfig");
    std::fs::write(&kc, "apiVersion: v1\nkind: Config\nclusters: [{name: n, cluster: {server: 'https://127.0.0.1:9'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: n, user: u, namespace: x}}]\ncurrent-context: c\n").unwrap();
    // The server's validation, replayed: refused as kubectl prints the server's refusal
    // (exit 1); flags and files that cannot be read: exit 2.
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["create", "q", "--hard=storage=1Gi"], 1, "error: failed to create quota: ResourceQuota \"q\" is invalid: spec.hard[storage]: Invalid value: \"storage\": must be a standard resource for quota"),
        (vec!["create", "Bad_Name", "--hard=pods=1"], 1, "metadata.name: Invalid value: \"Bad_Name\""),
        (vec!["create", "q", "--hard=pods=1", "--scopes=BestEffort,NotBestEffort"], 1, "spec.scopes: Invalid value: [\"BestEffort\",\"NotBestEffort\"]: conflicting scopes"),
        (vec!["create", "q", "--hard=cpu=1", "--scopes=BestEffort"], 1, "unsupported scope applied to resource"),
        (vec!["create", "q", "--hard=pods=1", "--scope-selector", "PriorityClass In"], 1, "must be at least one value"),
        (vec!["create", "q", "--hard=pods=1.5"], 1, "must be an integer"),
        (vec!["create", "q", "--hard=pods"], 2, "Invalid argument syntax pods, expected <resource>=<value>"),
        (vec!["check", "-f", "/no/such/file.yaml"], 2, "/no/such/file.yaml: cannot read"),
    ];
    for (args, code, want) in cases {
        let out = plugin(&kc, &args);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("127.0.0.1:9"), "{args:?} contacted the server: {err}");
    }
    // A valid quota does try to reach the server.
    let out = plugin(&kc, &["create", "q", "--hard=pods=1"]);
    assert_ne!(out.status.code(), Some(0));
    std::fs::remove_dir_all(&dir).ok();
}

/// `create` refuses an invalid quota before sending it, in the words of the server's release:
/// what kubectl itself prints when that server refuses the same quota (1.20: Go's
/// `[]core.ResourceQuotaScope{"BestEffort"}` and its `resource.Quantity{...}` struct; 1.34 on:
/// JSON).
#[tokio::test]
async fn a_refused_create_reads_as_the_servers_own_refusal() {
    let Some(lab) = lab_with_limited() else { return };
    let c = client(&lab.kubeconfig).await;
    let ns = new_namespace(&c, "kq-words").await;
    let k = &lab.kubeconfig;
    let cases: [&[&str]; 3] = [&["--hard=cpu=1,services=2", "--scopes=BestEffort"], &["--hard=pods=500m"], &["--hard=count/jobs.batch=0.5"]];
    for flags in cases {
        let kubectl = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(k)
            .args(["create", "quota", "bad", "-n", &ns])
            .args(flags)
            .output()
            .expect("kubectl runs");
        let ours = plugin(k, &[&["create", "bad", "-n", &ns][..], flags].concat());
        assert_eq!(kubectl.status.code(), Some(1), "{flags:?}: kubectl: {}", text(&kubectl.stderr));
        assert_eq!(ours.status.code(), Some(1), "{flags:?}");
        assert_eq!(text(&ours.stderr), text(&kubectl.stderr), "{flags:?}");
    }
    drop_namespace(&c, &ns).await;
}

#[tokio::test]
async fn dry_runs_persist_nothing() {
    let Some(lab) = lab_with_limited() else { return };
    let c = client(&lab.kubeconfig).await;
    let ns = new_namespace(&c, "kq-dry").await;
    let k = &lab.kubeconfig;
    let out = plugin(k, &["create", "q", "-n", &ns, "--hard=pods=3", "--dry-run=server"]);
    assert_eq!(text(&out.stdout), "resourcequota/q created (server dry run)\n", "{}", text(&out.stderr));
    let out = plugin(k, &["create", "q", "--hard=pods=3", "--dry-run=client", "-o", "yaml"]);
    let y = text(&out.stdout);
    assert!(y.contains("kind: ResourceQuota") && y.contains("pods: '3'") || y.contains("pods: \"3\""), "{y}");
    assert!(!y.contains("namespace:"), "client dry-run names no namespace unless given: {y}");
    let out = plugin(k, &["describe", "-n", &ns]);
    assert_eq!(text(&out.stdout), format!("No resource quota in namespace {ns}.\n"));
    drop_namespace(&c, &ns).await;
}

#[tokio::test]
async fn read_only_user_describes_and_checks_but_cannot_create() {
    let Some(lab) = lab_with_limited() else { return };
    let (c, ns) = namespace_with_quota(&lab, "kq-viewer", "pods=1").await;
    let k = &lab.kubeconfig;
    let out = plugin(k, &["--context", "viewer", "describe", "-n", &ns]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Name:       q"));
    let pods = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: x}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: [{name: c, image: x}]}\n";
    let f = manifest_file("viewer", pods);
    let out = plugin(k, &["--context", "viewer", "check", "-n", &ns, "-f", f.to_str().unwrap(), "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["documents"][1]["message"], "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1");
    // The view role cannot list PriorityClasses, but these pods name none and no quota
    // selects pods by class: the answer needs none, and says nothing of them.
    assert!(!v["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("priorityclasses")), "{}", v["notes"]);
    assert!(!text(&out.stderr).contains("incomplete"), "{}", text(&out.stderr));
    let out = plugin(k, &["--context", "viewer", "create", "x", "-n", &ns, "--hard=pods=1"]);
    assert_eq!(out.status.code(), Some(1));
    // The refusal exactly as `kubectl create quota` prints it: its words, then the server's.
    assert!(
        text(&out.stderr).starts_with("error: failed to create quota: resourcequotas is forbidden: User \"viewer\" cannot create resource \"resourcequotas\""),
        "{}",
        text(&out.stderr)
    );
    let out = plugin(k, &["--context", "nobody", "check", "-n", &ns, "-f", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot list resourcequotas in namespace"), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(": Error from server (Forbidden): resourcequotas is forbidden: User \"nobody\""), "{}", text(&out.stderr));
    std::fs::remove_file(&f).ok();
    drop_namespace(&c, &ns).await;
}

#[tokio::test]
async fn describe_and_check_write_nothing() {
    let Some(lab) = lab_with_limited() else { return };
    let (c, ns) = namespace_with_quota(&lab, "kq-nowrite", "pods=5,requests.cpu=1,count/configmaps=3").await;
    let k = &lab.kubeconfig;
    let snapshot = || async {
        let qs = Api::<ResourceQuota>::namespaced(c.clone(), &ns).list(&Default::default()).await.unwrap();
        let cms = Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(c.clone(), &ns).list(&Default::default()).await.unwrap();
        let pods = Api::<k8s_openapi::api::core::v1::Pod>::namespaced(c.clone(), &ns).list(&Default::default()).await.unwrap();
        let mut s: Vec<String> = qs.items.iter().map(|o| format!("q/{:?}/{:?}", o.metadata.name, o.metadata.resource_version)).collect();
        s.extend(cms.items.iter().map(|o| format!("cm/{:?}/{:?}", o.metadata.name, o.metadata.resource_version)));
        s.extend(pods.items.iter().map(|o| format!("pod/{:?}/{:?}", o.metadata.name, o.metadata.resource_version)));
        s
    };
    let before = snapshot().await;
    let f = manifest_file("nowrite", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]}\n");
    for _ in 0..3 {
        assert_eq!(plugin(k, &["check", "-n", &ns, "-f", f.to_str().unwrap()]).status.code(), Some(0));
        assert_eq!(plugin(k, &["describe", "-n", &ns]).status.code(), Some(0));
        assert_eq!(plugin(k, &["describe", "-A", "-o", "yaml"]).status.code(), Some(0));
    }
    assert_eq!(before, snapshot().await, "describe or check changed the cluster");
    std::fs::remove_file(&f).ok();
    drop_namespace(&c, &ns).await;
}

#[tokio::test]
async fn an_existing_object_is_checked_as_an_update() {
    let Some(lab) = lab_with_limited() else { return };
    let (c, ns) = namespace_with_quota(&lab, "kq-update", "services=1,services.nodeports=0").await;
    let k = &lab.kubeconfig;
    let svc = |t: &str| format!("apiVersion: v1\nkind: Service\nmetadata: {{name: web}}\nspec: {{type: {t}, ports: [{{port: 80}}]}}\n");
    let mut cache = BTreeMap::new();
    create(&c, &ns, &docs_from(&svc("ClusterIP")), false, &mut cache).await.unwrap();
    wait_synced(&c, &ns).await.unwrap();
    // Unchanged: an update charges nothing, although services=1 is used up.
    let f = manifest_file("update", &svc("ClusterIP"));
    let out = plugin(k, &["check", "-n", &ns, "-f", f.to_str().unwrap(), "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // Becoming a NodePort charges one node port, which the quota forbids.
    std::fs::write(&f, svc("NodePort")).unwrap();
    let out = plugin(k, &["check", "-n", &ns, "-f", f.to_str().unwrap(), "-o", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["documents"][0]["message"], "exceeded quota: q, requested: services.nodeports=1, used: services.nodeports=0, limited: services.nodeports=0");
    std::fs::remove_file(&f).ok();
    drop_namespace(&c, &ns).await;
}

fn docs_from(yaml: &str) -> Value {
    kubectl_quota_engine::manifest::parse_str("inline", yaml).unwrap().remove(0).value
}

#[tokio::test]
async fn describe_pages_through_long_lists() {
    let Some(lab) = lab_with_limited() else { return };
    let c = client(&lab.kubeconfig).await;
    let ns = new_namespace(&c, "kq-pages").await;
    let k = &lab.kubeconfig;
    for i in 0..7 {
        assert_eq!(plugin(k, &["create", &format!("q{i}"), "-n", &ns, "--hard=pods=1"]).status.code(), Some(0));
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-quota"))
        .args(["--kubeconfig", k.to_str().unwrap(), "describe", "-n", &ns, "-o", "json"])
        .env("KUBECTL_QUOTA_PAGE_SIZE", "3")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v.as_array().unwrap().iter().map(|q| q["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["q0", "q1", "q2", "q3", "q4", "q5", "q6"]);
    drop_namespace(&c, &ns).await;
}

#[tokio::test]
async fn custom_resources_are_counted_through_discovery() {
    let Some(lab) = lab_with_limited() else { return };
    let c = client(&lab.kubeconfig).await;
    let crd = docs_from(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gadgeteria.example.com}\nspec:\n  group: example.com\n  names: {kind: Gadget, plural: gadgeteria, singular: gadget}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n",
    );
    let mut cache = BTreeMap::new();
    let _ = create(&c, "", &crd, false, &mut cache).await;
    let ns = new_namespace(&c, "kq-crd").await;
    let k = &lab.kubeconfig;
    // The plural is not the one a guess from the kind gives (gadgets): discovery must say.
    let out = plugin(k, &["create", "q", "-n", &ns, "--hard=count/gadgeteria.example.com=0"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The quota controller sets status.hard at once, but computes usage of a brand-new
    // resource only after its periodic discovery: the server then says "status unknown",
    // later "exceeded". Either way the check must say what the server says, naming the
    // discovered plural.
    let quotas = Api::<ResourceQuota>::namespaced(c.clone(), &ns);
    let deadline = Instant::now() + Duration::from_secs(60);
    while quotas.get("q").await.ok().and_then(|q| q.status).and_then(|s| s.hard).is_none() {
        assert!(Instant::now() < deadline, "status.hard never set");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let yaml = "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n";
    let f = manifest_file("crd", yaml);
    let mut last = String::new();
    let mut agreed = false;
    for _ in 0..20 {
        let out = plugin(k, &["check", "-n", &ns, "-f", f.to_str().unwrap(), "-o", "json"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let (allowed, server) = server_dry_run(&c, &ns, &docs_from(yaml)).await;
        let ours = v["documents"][0]["message"].as_str().map(str::to_string);
        last = format!("check {ours:?}, server allowed={allowed} {server:?}");
        if !allowed && ours == server && ours.as_deref().is_some_and(|m| m.contains("count/gadgeteria.example.com")) {
            agreed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(agreed, "{last}");
    // Offline, the plural is guessed, and the output says so.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-quota"))
        .args(["check", "-f", f.to_str().unwrap(), "--state", "/dev/null", "-o", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["documents"][0]["notes"][0].as_str().unwrap().contains("count/gadgets.example.com"), "{v}");
    std::fs::remove_file(&f).ok();
    drop_namespace(&c, &ns).await;
}

#[tokio::test]
async fn connection_flags_work_like_kubectl() {
    let Some(lab) = lab_with_limited() else { return };
    let (c, ns) = namespace_with_quota(&lab, "kq-conn", "pods=1").await;
    let k = &lab.kubeconfig;
    // --as: the admin impersonating the read-only user is refused a create.
    let out = plugin(k, &["--as", "viewer", "create", "x", "-n", &ns, "--hard=pods=1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("User \"viewer\" cannot create"), "{}", text(&out.stderr));
    // KUBECONFIG with several files, merged: clusters and users in one, contexts in another.
    let kc: Value = serde_saphyr::from_str(&std::fs::read_to_string(k).unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("kq-kubeconfigs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = serde_json::json!({"apiVersion": "v1", "kind": "Config", "clusters": kc["clusters"], "users": kc["users"]});
    let b = serde_json::json!({"apiVersion": "v1", "kind": "Config", "contexts": kc["contexts"], "current-context": "lab"});
    std::fs::write(dir.join("a.yaml"), serde_saphyr::to_string(&a).unwrap()).unwrap();
    std::fs::write(dir.join("b.yaml"), serde_saphyr::to_string(&b).unwrap()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-quota"))
        .args(["describe", "-n", &ns, "-o", "json"])
        .env("KUBECONFIG", format!("{}:{}", dir.join("a.yaml").display(), dir.join("b.yaml").display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["name"], "q");
    // --context picks another context of the same files; --request-timeout is accepted.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-quota"))
        .args(["--context", "viewer", "--request-timeout", "20s", "describe", "-n", &ns, "-o", "json"])
        .env("KUBECONFIG", format!("{}:{}", dir.join("a.yaml").display(), dir.join("b.yaml").display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&dir).ok();
    drop_namespace(&c, &ns).await;
}

#[tokio::test]
async fn a_request_above_a_defaulted_limit_is_invalid_as_the_server_says() {
    let Some(lab) = lab_with_limited() else { return };
    let c = client(&lab.kubeconfig).await;
    let ns = new_namespace(&c, "kq-invalid").await;
    let mut cache = BTreeMap::new();
    let lr = docs_from("apiVersion: v1\nkind: LimitRange\nmetadata: {name: l}\nspec: {limits: [{type: Container, default: {cpu: 500m}}]}\n");
    create(&c, &ns, &lr, false, &mut cache).await.unwrap();
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: '2'}}}]}\n";
    let f = manifest_file("invalid", yaml);
    let out = plugin(&lab.kubeconfig, &["check", "-n", &ns, "-f", f.to_str().unwrap(), "-o", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let server = create(&c, &ns, &docs_from(yaml), true, &mut cache).await.unwrap_err();
    assert_eq!(v["documents"][0]["allowed"], false);
    assert_eq!(v["documents"][0]["message"].as_str(), Some(server.as_str()));
    std::fs::remove_file(&f).ok();
    drop_namespace(&c, &ns).await;
}
