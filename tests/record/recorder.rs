//! The recorder of tests/recorded/: replays case folders (tests/conformance/README.md's layout)
//! on a real kube-apiserver and writes down what the server itself answered. Run it through
//! tests/record/record.sh, which starts the servers; by hand:
//!
//! ```text
//! cargo run --example record -- --kubeconfig LAB/kubeconfig [--limited-kubeconfig LAB2/kubeconfig]
//!     --admission FILE --cluster-scoped tests/conformance/cluster-scoped.yaml --out DIR CASE_DIR...
//! ```
//!
//! Per case, in a fresh namespace (labelled as the case's optional `namespace.yaml` says; its
//! service account and root CA ConfigMap made by the controllers before anything else):
//! the case's own cluster-scoped objects (`cluster-scoped.yaml`, e.g. DeviceClasses) are created
//! first and deleted at the end; then `cluster.yaml`: ResourceQuotas (waiting until each has
//! `status.hard` and usage for every hard key), LimitRanges, then the rest in order (refusals go
//! to `setup_errors`, in kubectl's words; a claim naming its volume is waited for until bound).
//! Once the quotas' usage has settled, `state.yaml` is
//! taken from the server: the Namespace (when the case has a `namespace.yaml`), quotas,
//! LimitRanges, ResourceClaimTemplates, and every object a
//! candidate names that already exists (an update), trimmed of server-set metadata, the
//! namespace reading `NAMESPACE`. Then every document of `candidate.yaml` is applied for real,
//! one by one: created, or, when an object of that kind and name exists, updated (a Pod whose
//! container resources change through `pods/resize` where the server serves it). Admitted
//! Deployments are followed until their controllers settle (`pods_created`, `pod_message` from
//! the ReplicaSet's first `FailedCreate` event); pods naming ResourceClaimTemplates until their
//! claims are made or refused (`pods_pending`, `claim_message`).
//!
//! Admission policies (ValidatingAdmissionPolicy, MutatingAdmissionPolicy and their bindings in
//! a case's `cluster-scoped.yaml`): the API server learns of them through informers and
//! compiles them anew a moment later (0.3 to 1.1 s on the lab), so right after a create a
//! request may not meet them yet. No fixed sleep is safe on a loaded machine, and a candidate's
//! own answer cannot tell "not yet" from "not affected". So, once the case's policies and
//! bindings exist, the recorder makes its own probe policies bound to the case's namespace
//! alone (a ValidatingAdmissionPolicy refusing a ConfigMap named `kq-rec-probe`, and when the
//! case has MutatingAdmissionPolicies a MutatingAdmissionPolicy annotating one named
//! `kq-rec-probe-m`), and dry-runs those ConfigMaps until the probes answer. Each kind comes
//! through one watch, in the order the objects were made, so a policy set that holds the
//! probes holds the case's policies and bindings made before them. (The probes touch nothing
//! else; they are deleted with the case's own objects.) The namespace and the probes exist
//! before `cluster.yaml` is made, so its objects meet the policies too; objects that the
//! policies take as parameters (`paramKind`) and the setup made go into `state.yaml`. Every
//! candidate is sent by hand, not through kube's typed calls, to read the answer's `Warning:`
//! headers: `warnings` in expected.json when there were any (a policy bound with
//! `validationActions: [Warn]`).
//!
//! Outputs are deterministic where the server is: no names the server made up, keys sorted,
//! no timestamps (except in the set's `metadata.json`).
//!
//! Why one file of this length: the recorder is a standalone program (an example
//! target) that replays a case folder step by step; its steps read best in one place.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use k8s_openapi::api::core::v1::{Event, Namespace, Pod, ResourceQuota, ServiceAccount};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use serde::Serialize;
use serde_json::{json, Map, Value};

/// One candidate's outcome, in the corpus's expected.json field order.
#[derive(Serialize, Clone, Debug)]
struct Outcome {
    kind: String,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    operation: Option<String>,
    allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    /// The admission warnings the server sent with its answer (`Warning:` headers, e.g. a
    /// ValidatingAdmissionPolicy bound with `validationActions: [Warn]`); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    warnings: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pods_created: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pods_wanted: Option<i64>,
    /// Present (maybe null) for every admitted Deployment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pod_message: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pods_pending: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    claim_message: Option<Value>,
}

#[derive(Serialize)]
struct Expected {
    results: Vec<Outcome>,
    setup_errors: Vec<String>,
}

struct Server {
    client: Client,
    minor: u32,
    has_resize: bool,
    kinds: tokio::sync::Mutex<BTreeMap<String, (ApiResource, bool)>>,
}

struct Args {
    kubeconfig: PathBuf,
    limited: Option<PathBuf>,
    admission: Option<PathBuf>,
    cluster_scoped: PathBuf,
    out: PathBuf,
    jobs: usize,
    cases: Vec<PathBuf>,
}

fn args() -> Result<Args> {
    let mut a =
        Args { kubeconfig: PathBuf::new(), limited: None, admission: None, cluster_scoped: PathBuf::new(), out: PathBuf::new(), jobs: 4, cases: vec![] };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        let mut val = || it.next().ok_or_else(|| anyhow!("{x} needs a value"));
        match x.as_str() {
            "--kubeconfig" => a.kubeconfig = val()?.into(),
            "--limited-kubeconfig" => a.limited = Some(val()?.into()),
            "--admission" => a.admission = Some(val()?.into()),
            "--cluster-scoped" => a.cluster_scoped = val()?.into(),
            "--out" => a.out = val()?.into(),
            "--jobs" => a.jobs = val()?.parse()?,
            _ if x.starts_with("--") => bail!("unknown flag {x}"),
            _ => a.cases.push(x.into()),
        }
    }
    if a.kubeconfig.as_os_str().is_empty() || a.out.as_os_str().is_empty() || a.cluster_scoped.as_os_str().is_empty() {
        bail!("usage: record --kubeconfig K [--limited-kubeconfig K2 --admission FILE] --cluster-scoped FILE --out DIR CASE...");
    }
    Ok(a)
}

async fn client(kubeconfig: &Path) -> Result<Client> {
    let kc = Kubeconfig::read_from(kubeconfig)?;
    let mut config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await?;
    config.read_timeout = Some(Duration::from_secs(60));
    Ok(Client::try_from(config)?)
}

async fn server(kubeconfig: &Path) -> Result<(Server, k8s_openapi::apimachinery::pkg::version::Info)> {
    let client = client(kubeconfig).await?;
    let info = client.apiserver_version().await.context("GET /version")?;
    let minor: u32 = info.minor.trim_end_matches('+').parse().context("server minor version")?;
    let core = client.list_core_api_resources("v1").await?;
    let has_resize = core.resources.iter().any(|r| r.name == "pods/resize");
    Ok((Server { client, minor, has_resize, kinds: Default::default() }, info))
}

fn docs(path: &Path) -> Result<Vec<Value>> {
    if !path.exists() {
        return Ok(vec![]);
    }
    let t = std::fs::read_to_string(path)?;
    Ok(kubectl_quota_engine::manifest::parse_str(&path.display().to_string(), &t).map_err(|e| anyhow!("{e:?}"))?.into_iter().map(|d| d.value).collect())
}

impl Server {
    /// The API for a document's kind, in `ns` when the kind is namespaced.
    async fn api(&self, v: &Value, ns: &str) -> Result<Api<DynamicObject>> {
        let av = v["apiVersion"].as_str().unwrap_or("v1").to_string();
        let kind = v["kind"].as_str().unwrap_or("").to_string();
        let key = format!("{av}/{kind}");
        let mut kinds = self.kinds.lock().await;
        if !kinds.contains_key(&key) {
            let (g, ver) = av.rsplit_once('/').map(|(g, v)| (g.to_string(), v.to_string())).unwrap_or((String::new(), av.clone()));
            let (ar, caps) = kube::discovery::pinned_kind(&self.client, &GroupVersionKind::gvk(&g, &ver, &kind))
                .await
                // kubectl's words for a kind the server does not serve.
                .map_err(|_| anyhow!("no matches for kind {kind:?} in version {av:?}"))?;
            kinds.insert(key.clone(), (ar, caps.scope == kube::discovery::Scope::Namespaced));
        }
        let (ar, namespaced) = kinds[&key].clone();
        Ok(if namespaced { Api::namespaced_with(self.client.clone(), ns, &ar) } else { Api::all_with(self.client.clone(), &ar) })
    }

    async fn create(&self, ns: &str, v: &Value) -> std::result::Result<Value, ApiError> {
        self.write(ns, v, Write::Create, false).await.0
    }

    /// A create, update or resize of `v`, sent by hand so that the answer's `Warning:` headers
    /// can be read (kube's typed calls drop them): (the object or the refusal, the warnings).
    async fn write(&self, ns: &str, v: &Value, how: Write, dry_run: bool) -> (std::result::Result<Value, ApiError>, Vec<String>) {
        let api = match self.api(v, ns).await {
            Ok(a) => a,
            Err(e) => return (Err(ApiError { reason: "NotFound".into(), message: e.to_string() }), vec![]),
        };
        let req = kube::core::Request::new(api.resource_url());
        let pp = PostParams { dry_run, ..Default::default() };
        let name = v["metadata"]["name"].as_str().unwrap_or("");
        let body = serde_json::to_vec(v).unwrap();
        let req = match how {
            Write::Create => req.create(&pp, body),
            Write::Update => req.replace(name, &pp, body),
            Write::Resize => req.replace_subresource("resize", name, &pp, body),
        };
        let req = match req {
            Ok(r) => r,
            Err(e) => return (Err(ApiError { reason: "BadRequest".into(), message: e.to_string() }), vec![]),
        };
        let res = match self.client.send(req.map(kube::client::Body::from)).await {
            Ok(r) => r,
            Err(e) => return (Err(ApiError::from(e)), vec![]),
        };
        let warnings: Vec<String> = res.headers().get_all("warning").iter().filter_map(|h| h.to_str().ok()).map(warning_text).collect();
        let status = res.status();
        let text = match res.into_body().collect_bytes().await {
            Ok(b) => String::from_utf8_lossy(&b).to_string(),
            Err(e) => return (Err(ApiError::from(e)), warnings),
        };
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let answer = if status.is_success() {
            Ok(body)
        } else {
            Err(ApiError {
                reason: body["reason"].as_str().map(str::to_string).unwrap_or_else(|| status.to_string()),
                message: body["message"].as_str().map(str::to_string).unwrap_or(text),
            })
        };
        (answer, warnings)
    }

    async fn get(&self, ns: &str, v: &Value) -> Result<Option<Value>> {
        let Some(name) = v["metadata"]["name"].as_str() else { return Ok(None) };
        let api = self.api(v, ns).await?;
        Ok(api.get_opt(name).await?.map(|o| serde_json::to_value(o).unwrap()))
    }
}

#[derive(Clone, Copy)]
enum Write {
    Create,
    Update,
    Resize,
}

/// A `Warning` header's text, as kubectl prints it after `Warning: `: the header is
/// `299 - "text"` (RFC 7234), the text quoted with backslash escapes.
fn warning_text(h: &str) -> String {
    let Some((_, rest)) = h.split_once('"') else { return h.to_string() };
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '"' => break,
            c => out.push(c),
        }
    }
    out
}

/// A refusal: the Status reason and message.
#[derive(Debug)]
struct ApiError {
    reason: String,
    message: String,
}

impl From<kube::Error> for ApiError {
    fn from(e: kube::Error) -> Self {
        match e {
            kube::Error::Api(s) => ApiError { reason: s.reason.clone(), message: s.message.clone() },
            other => ApiError { reason: "ClientError".into(), message: other.to_string() },
        }
    }
}

/// The corpus's message: the text after `is forbidden: `, or the whole error.
fn message_of(m: &str, ns: &str) -> String {
    let m = m.split_once("is forbidden: ").map(|(_, r)| r).unwrap_or(m);
    m.replace(ns, "NAMESPACE")
}

/// Objects sorted by key, recursively: stable output whatever the map type's order.
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&m[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// An object as the server returned it, trimmed as the corpus trims: no server-set metadata,
/// the namespace reading NAMESPACE.
fn trimmed(v: &Value, kind: &str, api_version: &str) -> Value {
    let mut v = v.clone();
    v["kind"] = kind.into();
    v["apiVersion"] = api_version.into();
    if let Some(m) = v["metadata"].as_object_mut() {
        for k in ["uid", "resourceVersion", "creationTimestamp", "managedFields", "selfLink", "generation"] {
            m.remove(k);
        }
        if m.contains_key("namespace") {
            m.insert("namespace".into(), "NAMESPACE".into());
        }
        if let Some(Value::Object(a)) = m.get_mut("annotations") {
            a.remove("kubectl.kubernetes.io/last-applied-configuration");
            if a.is_empty() {
                m.remove("annotations");
            }
        }
    }
    sorted(&v)
}

/// `candidate` laid over `live`: maps merged key by key, lists of named maps (containers,
/// ports) merged by name, other lists replaced.
fn overlay(live: &Value, candidate: &Value) -> Value {
    match (live, candidate) {
        (Value::Object(l), Value::Object(c)) => {
            let mut out = l.clone();
            for (k, cv) in c {
                let merged = match l.get(k) {
                    Some(lv) => overlay(lv, cv),
                    None => cv.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(l), Value::Array(c)) if !c.is_empty() && c.iter().all(|x| x["name"].is_string()) => Value::Array(
            c.iter()
                .map(|cv| match l.iter().find(|lv| lv["name"] == cv["name"]) {
                    Some(lv) => overlay(lv, cv),
                    None => cv.clone(),
                })
                .collect(),
        ),
        (_, c) => c.clone(),
    }
}

/// Per container (regular and init), its resources: what a resize changes.
fn container_resources(pod: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for list in ["initContainers", "containers"] {
        for c in pod["spec"][list].as_array().into_iter().flatten() {
            out.push((c["name"].as_str().unwrap_or("").to_string(), c["resources"].clone()));
        }
    }
    out.push(("(pod)".into(), pod["spec"]["resources"].clone()));
    out
}

fn ns_name(case: &str) -> String {
    let mut n = format!("r{}-{}", std::process::id() % 10000, case.to_lowercase());
    n.retain(|c| c.is_ascii_alphanumeric() || c == '-');
    n.truncate(63);
    n.trim_end_matches('-').to_string()
}

async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

async fn new_namespace(s: &Server, name: &str, template: Option<&Value>) -> Result<()> {
    let api = Api::<Namespace>::all(s.client.clone());
    let mut ns = json!({"metadata": {"name": name}});
    if let Some(t) = template {
        if let Some(l) = t["metadata"].get("labels") {
            ns["metadata"]["labels"] = l.clone();
        }
    }
    let ns: Namespace = serde_json::from_value(ns)?;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        match api.create(&PostParams::default(), &ns).await {
            Ok(_) => break,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                let _ = api.delete(name, &DeleteParams::default()).await;
                sleep_ms(500).await;
            }
            Err(e) => bail!("cannot create namespace {name}: {e}"),
        }
    }
    // ServiceAccount admission refuses pods until `default` exists (and, before 1.24, until the
    // token controller has given it a token secret).
    let sas = Api::<ServiceAccount>::namespaced(s.client.clone(), name);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(sa)) = sas.get_opt("default").await {
            if s.minor >= 24 || sa.secrets.is_some_and(|x| !x.is_empty()) {
                break;
            }
        }
        if Instant::now() > deadline {
            bail!("namespace {name}: service account default never ready");
        }
        sleep_ms(100).await;
    }
    // The root CA publisher's ConfigMap counts toward count/configmaps: wait for it, so that
    // whether it is charged does not depend on who comes first.
    let cms = Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(s.client.clone(), name);
    let deadline = Instant::now() + Duration::from_secs(30);
    while cms.get_opt("kube-root-ca.crt").await?.is_none() {
        if Instant::now() > deadline {
            eprintln!("namespace {name}: no kube-root-ca.crt ConfigMap after 30 s; going on without");
            break;
        }
        sleep_ms(100).await;
    }
    Ok(())
}

/// Quotas with status.hard for each spec key and usage for each hard key.
async fn wait_quotas(s: &Server, ns: &str) -> Result<()> {
    let api = Api::<ResourceQuota>::namespaced(s.client.clone(), ns);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let list = api.list(&ListParams::default()).await?;
        let synced = list.items.iter().all(|q| {
            let spec = q.spec.clone().unwrap_or_default().hard.unwrap_or_default();
            let st = q.status.clone().unwrap_or_default();
            let hard = st.hard.unwrap_or_default();
            let used = st.used.unwrap_or_default();
            spec.keys().all(|k| hard.contains_key(k)) && hard.keys().all(|k| used.contains_key(k))
        });
        if synced {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("quotas in {ns} never synced");
        }
        sleep_ms(200).await;
    }
}

/// Waits until the quotas' status, the pods and the claims in `ns` stay the same for 3 s.
async fn settle(s: &Server, ns: &str) -> Result<()> {
    let quotas = Api::<ResourceQuota>::namespaced(s.client.clone(), ns);
    let pods = Api::<Pod>::namespaced(s.client.clone(), ns);
    let claims = if s.minor >= 34 { s.api(&json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim"}), ns).await.ok() } else { None };
    let mut last = String::new();
    let mut since = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        wait_quotas(s, ns).await?;
        let q = quotas.list(&ListParams::default()).await?;
        let mut fp: Vec<String> = q.items.iter().map(|q| format!("{:?}", q.status)).collect();
        fp.push(format!("pods={}", pods.list(&ListParams::default()).await?.items.len()));
        if let Some(c) = &claims {
            fp.push(format!("claims={}", c.list(&ListParams::default()).await?.items.len()));
        }
        let fp = fp.join("|");
        if fp != last {
            last = fp;
            since = Instant::now();
        } else if since.elapsed() >= Duration::from_secs(3) {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{ns} never settled");
        }
        sleep_ms(250).await;
    }
}

fn owned_by(v: &Value, uid: &str) -> bool {
    v["metadata"]["ownerReferences"].as_array().into_iter().flatten().any(|o| o["uid"] == uid)
}

/// Warning events of `kind` objects named in `names` whose reason is in `reasons` (or any when
/// empty), oldest first.
async fn events(s: &Server, ns: &str, kind: &str, names: &BTreeSet<String>, reasons: &[&str]) -> Result<Vec<String>> {
    let api = Api::<Event>::namespaced(s.client.clone(), ns);
    let mut evs: Vec<Event> = api
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|e| e.involved_object.kind.as_deref() == Some(kind))
        .filter(|e| e.involved_object.name.as_ref().is_some_and(|n| names.contains(n)))
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .filter(|e| reasons.is_empty() || e.reason.as_deref().is_some_and(|r| reasons.contains(&r)))
        .collect();
    let when = |e: &Event| {
        e.first_timestamp
            .as_ref()
            .map(|t| t.0.to_string())
            .or_else(|| e.event_time.as_ref().map(|t| t.0.to_string()))
            .or_else(|| e.metadata.creation_timestamp.as_ref().map(|t| t.0.to_string()))
            .unwrap_or_default()
    };
    evs.sort_by_key(|e| (when(e), e.metadata.name.clone()));
    Ok(evs.into_iter().filter_map(|e| e.message).collect())
}

/// How many template claims a pod names.
fn template_claims(pod_spec: &Value) -> usize {
    pod_spec["resourceClaims"].as_array().into_iter().flatten().filter(|c| c["resourceClaimTemplateName"].is_string()).count()
}

/// (pods whose template claims are not all made, the first refusal) once stable.
async fn follow_claims(s: &Server, ns: &str, pods: &[Value]) -> Result<(i64, Option<String>)> {
    let claims_api = s.api(&json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim"}), ns).await?;
    let names: BTreeSet<String> = pods.iter().filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string)).collect();
    let mut last = (-1i64, false);
    let mut since = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let claims: Vec<Value> = claims_api.list(&ListParams::default()).await?.items.into_iter().map(|c| serde_json::to_value(c).unwrap()).collect();
        let pending = pods
            .iter()
            .filter(|p| {
                let uid = p["metadata"]["uid"].as_str().unwrap_or("");
                claims.iter().filter(|c| owned_by(c, uid)).count() < template_claims(&p["spec"])
            })
            .count() as i64;
        let refused = events(s, ns, "Pod", &names, &[]).await?;
        let refusal = refused.iter().find(|m| m.contains("is forbidden: ")).cloned();
        let now = (pending, refusal.is_some());
        if now != last {
            last = now;
            since = Instant::now();
        } else if (pending == 0 || refusal.is_some()) && since.elapsed() >= Duration::from_secs(3) {
            return Ok((pending, refusal.map(|m| message_of(&m, ns))));
        }
        if Instant::now() > deadline {
            return Ok((pending, refusal.map(|m| message_of(&m, ns))));
        }
        sleep_ms(250).await;
    }
}

/// Follows an admitted Deployment until its controllers settle: (pods created, first
/// FailedCreate refusal, pods pending on claims, first claim refusal).
async fn follow_deployment(s: &Server, ns: &str, d: &Value) -> Result<(i64, Option<String>, Option<(i64, Option<String>)>)> {
    let wanted = d["spec"]["replicas"].as_i64().unwrap_or(1);
    let uid = d["metadata"]["uid"].as_str().unwrap_or("").to_string();
    let rs_api = s.api(&json!({"apiVersion": "apps/v1", "kind": "ReplicaSet"}), ns).await?;
    let pods_api = Api::<Pod>::namespaced(s.client.clone(), ns);
    let mut last = -1i64;
    let mut since = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let rss: Vec<Value> =
            rs_api.list(&ListParams::default()).await?.items.into_iter().map(|o| serde_json::to_value(o).unwrap()).filter(|r| owned_by(r, &uid)).collect();
        let rs_uids: Vec<String> = rss.iter().filter_map(|r| r["metadata"]["uid"].as_str().map(str::to_string)).collect();
        let rs_names: BTreeSet<String> = rss.iter().filter_map(|r| r["metadata"]["name"].as_str().map(str::to_string)).collect();
        let pods: Vec<Value> = pods_api
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .map(|o| serde_json::to_value(o).unwrap())
            .filter(|p| rs_uids.iter().any(|u| owned_by(p, u)))
            .collect();
        let n = pods.len() as i64;
        let failed = events(s, ns, "ReplicaSet", &rs_names, &["FailedCreate"]).await?;
        let done = !rss.is_empty() && (n >= wanted || !failed.is_empty());
        if n != last {
            last = n;
            since = Instant::now();
        } else if (done && since.elapsed() >= Duration::from_secs(3)) || Instant::now() > deadline {
            let msg = failed.first().map(|m| message_of(m, ns));
            let claims = if template_claims(&d["spec"]["template"]["spec"]) > 0 { Some(follow_claims(s, ns, &pods).await?) } else { None };
            return Ok((n, msg, claims));
        }
        sleep_ms(250).await;
    }
}

/// The recorder's own probe policies for a case whose `cluster-scoped.yaml` holds admission
/// policies (see the header): a ValidatingAdmissionPolicy denying a ConfigMap named
/// `kq-rec-probe`, a MutatingAdmissionPolicy annotating one named `kq-rec-probe-m`, each bound
/// to the case's namespace alone, made after the case's own policies and bindings.
fn probe_policies(own: &[Value], ns: &str) -> Vec<Value> {
    let has = |kinds: &[&str]| own.iter().any(|d| d["apiVersion"] == "admissionregistration.k8s.io/v1" && kinds.contains(&d["kind"].as_str().unwrap_or("")));
    let name = format!("kq-rec-probe-{ns}");
    let rules = json!({"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]});
    let here = json!({"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}});
    let mut out = Vec::new();
    if has(&["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]) {
        out.push(json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
            "spec": {"failurePolicy": "Fail", "matchConstraints": rules,
                "validations": [{"expression": "object.metadata.name != 'kq-rec-probe'", "message": "probe in force"}]}}));
        out.push(json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
            "spec": {"policyName": name, "validationActions": ["Deny"], "matchResources": here}}));
    }
    if has(&["MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"]) {
        out.push(json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy", "metadata": {"name": name},
            "spec": {"failurePolicy": "Fail", "matchConstraints": rules, "reinvocationPolicy": "Never",
                "matchConditions": [{"name": "probe", "expression": "object.metadata.name == 'kq-rec-probe-m'"}],
                "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration":
                    {"expression": "Object{metadata: Object.metadata{annotations: {'kq-rec-probe': 'in-force'}}}"}}]}}));
        out.push(json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding", "metadata": {"name": name},
            "spec": {"policyName": name, "matchResources": here}}));
    }
    out
}

/// Waits until the probes made by `probe_policies` are in force in `ns`: a dry-run create of
/// ConfigMap `kq-rec-probe` refused by the probe, of `kq-rec-probe-m` answered annotated.
async fn wait_probes(s: &Server, ns: &str, probes: &[Value]) -> Result<()> {
    let t0 = Instant::now();
    let deadline = t0 + Duration::from_secs(60);
    for p in probes.iter().filter(|p| p["kind"].as_str().is_some_and(|k| !k.ends_with("Binding"))) {
        let validating = p["kind"] == "ValidatingAdmissionPolicy";
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": if validating { "kq-rec-probe" } else { "kq-rec-probe-m" }, "namespace": ns}});
        loop {
            let (answer, _) = s.write(ns, &cm, Write::Create, true).await;
            let in_force = match &answer {
                Err(e) => validating && e.message.contains(p["metadata"]["name"].as_str().unwrap_or("?")),
                Ok(o) => !validating && o["metadata"]["annotations"]["kq-rec-probe"] == "in-force",
            };
            if in_force {
                break;
            }
            if Instant::now() > deadline {
                bail!("{ns}: the admission policies never came in force (probe {} answered {answer:?})", p["kind"]);
            }
            sleep_ms(100).await;
        }
    }
    eprintln!("{ns}: admission policies in force after {:.1?}", t0.elapsed());
    Ok(())
}

struct CaseOut {
    expected: Expected,
    state: Value,
}

async fn record_case(s: &Server, dir: &Path) -> Result<CaseOut> {
    let case = dir.file_name().unwrap().to_string_lossy().to_string();
    let ns = ns_name(&case);
    let ns_doc = docs(&dir.join("namespace.yaml"))?.into_iter().next();
    // The case's own cluster-scoped objects, made fresh.
    let own = docs(&dir.join("cluster-scoped.yaml"))?;
    for d in &own {
        if let Ok(api) = s.api(d, "").await {
            if let Some(n) = d["metadata"]["name"].as_str() {
                let _ = api.delete(n, &DeleteParams::default()).await;
                let deadline = Instant::now() + Duration::from_secs(30);
                while api.get_opt(n).await?.is_some() && Instant::now() < deadline {
                    sleep_ms(200).await;
                }
            }
        }
        s.create("", d).await.map_err(|e| anyhow!("{case}: cluster-scoped {}: {}", d["metadata"]["name"], e.message))?;
    }
    new_namespace(s, &ns, ns_doc.as_ref()).await?;
    // Admission policies: in force before anything is made in the namespace (see the header).
    let probes = probe_policies(&own, &ns);
    for p in &probes {
        s.create("", p).await.map_err(|e| anyhow!("{case}: probe {}: {}", p["kind"], e.message))?;
    }
    let result = match wait_probes(s, &ns, &probes).await {
        Ok(()) => record_in(s, dir, &ns, ns_doc.is_some(), &own).await,
        Err(e) => Err(e),
    };
    let _ = Api::<Namespace>::all(s.client.clone()).delete(&ns, &DeleteParams::default()).await;
    if !own.is_empty() {
        // Claims hold no finalizers here (no allocation): the classes can go at once.
        for d in own.iter().chain(&probes) {
            if let (Ok(api), Some(n)) = (s.api(d, "").await, d["metadata"]["name"].as_str()) {
                let _ = api.delete(n, &DeleteParams::default()).await;
            }
        }
    }
    result.with_context(|| case.clone())
}

async fn record_in(s: &Server, dir: &Path, ns: &str, with_namespace: bool, own: &[Value]) -> Result<CaseOut> {
    let setup = docs(&dir.join("cluster.yaml"))?;
    let candidates = docs(&dir.join("candidate.yaml"))?;
    let mut setup_errors = Vec::new();
    let kubectl_error = |e: &ApiError| format!("Error from server ({}): error when creating \"STDIN\": {}", e.reason, e.message.replace(ns, "NAMESPACE"));
    for phase in ["ResourceQuota", "LimitRange", ""] {
        for d in &setup {
            let kind = d["kind"].as_str().unwrap_or("");
            let this = match phase {
                "" => kind != "ResourceQuota" && kind != "LimitRange",
                p => kind == p,
            };
            if !this {
                continue;
            }
            if let Err(e) = s.create(ns, d).await {
                setup_errors.push(kubectl_error(&e));
            }
        }
        if phase == "ResourceQuota" {
            wait_quotas(s, ns).await?;
        }
    }
    settle(s, ns).await?;
    // Claims the setup binds to a volume of its own (`spec.volumeName`): the persistent volume
    // controller binds them; only a bound claim may grow (PersistentVolumeClaimResize).
    for d in setup.iter().filter(|d| d["kind"] == "PersistentVolumeClaim" && d["spec"]["volumeName"].is_string()) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while s.get(ns, d).await?.is_none_or(|c| c["status"]["phase"] != "Bound") {
            if Instant::now() > deadline {
                bail!("claim {} never bound to volume {}", d["metadata"]["name"], d["spec"]["volumeName"]);
            }
            sleep_ms(200).await;
        }
    }
    // Deployments in the setup: their pods (and claims) must be there before the snapshot.
    for d in setup.iter().filter(|d| d["kind"] == "Deployment") {
        if let Some(live) = s.get(ns, d).await? {
            follow_deployment(s, ns, &live).await?;
        }
    }
    settle(s, ns).await?;

    // The snapshot the offline check starts from: when the case sets up its namespace
    // (namespace.yaml), the Namespace itself first, named NAMESPACE.
    let mut items = Vec::new();
    if with_namespace {
        let live = serde_json::to_value(Api::<Namespace>::all(s.client.clone()).get(ns).await?)?;
        let mut v = trimmed(&live, "Namespace", "v1");
        v["metadata"]["name"] = "NAMESPACE".into();
        if let Some(l) = v["metadata"]["labels"].as_object_mut() {
            for val in l.values_mut() {
                if val == ns {
                    *val = "NAMESPACE".into();
                }
            }
        }
        items.push(v);
    }
    for (av, kind) in [("v1", "ResourceQuota"), ("v1", "LimitRange")] {
        let api = s.api(&json!({"apiVersion": av, "kind": kind}), ns).await?;
        for o in api.list(&ListParams::default()).await?.items {
            items.push(trimmed(&serde_json::to_value(o)?, kind, av));
        }
    }
    if s.minor >= 34 {
        let api = s.api(&json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate"}), ns).await?;
        for o in api.list(&ListParams::default()).await?.items {
            items.push(trimmed(&serde_json::to_value(o)?, "ResourceClaimTemplate", "resource.k8s.io/v1"));
        }
    }
    // The objects the case's policies take as parameters (`paramKind`) that the setup made.
    let param_kinds: Vec<&Value> = own.iter().filter_map(|d| d["spec"].get("paramKind")).collect();
    for d in &setup {
        if param_kinds.iter().any(|k| k["apiVersion"] == d["apiVersion"] && k["kind"] == d["kind"]) {
            if let Some(live) = s.get(ns, d).await? {
                items.push(trimmed(&live, d["kind"].as_str().unwrap_or(""), d["apiVersion"].as_str().unwrap_or("v1")));
            }
        }
    }
    let mut named = BTreeSet::new();
    for c in &candidates {
        let key = format!("{}/{}/{}", c["apiVersion"], c["kind"], c["metadata"]["name"]);
        if !named.insert(key) {
            continue;
        }
        // A kind the server does not serve is the candidate's answer, not the snapshot's.
        if let Ok(Some(live)) = s.get(ns, c).await {
            items.push(trimmed(&live, c["kind"].as_str().unwrap_or(""), c["apiVersion"].as_str().unwrap_or("v1")));
        }
    }
    let state = json!({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}});

    let mut results = Vec::new();
    for c in &candidates {
        let kind = c["kind"].as_str().unwrap_or("").to_string();
        let name = c["metadata"]["name"].as_str().unwrap_or("").to_string();
        let mut out = Outcome {
            kind: kind.clone(),
            name: name.clone(),
            operation: None,
            allowed: false,
            message: None,
            warnings: None,
            pods_created: None,
            pods_wanted: None,
            pod_message: None,
            pods_pending: None,
            claim_message: None,
        };
        let (answer, warnings) = match s.get(ns, c).await {
            Ok(Some(live)) => {
                let mut new = overlay(&live, c);
                new["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"].clone();
                let resize = kind == "Pod" && container_resources(&live) != container_resources(&new);
                let how = if resize && s.has_resize { Write::Resize } else { Write::Update };
                out.operation = Some(if resize && s.has_resize { "resize" } else { "update" }.into());
                s.write(ns, &new, how, false).await
            }
            Ok(None) => s.write(ns, c, Write::Create, false).await,
            Err(e) => (Err(ApiError { reason: "NotFound".into(), message: e.to_string() }), vec![]),
        };
        if !warnings.is_empty() {
            out.warnings = Some(warnings.iter().map(|w| w.replace(ns, "NAMESPACE")).collect());
        }
        match answer {
            Ok(created) => {
                out.allowed = true;
                if kind == "Deployment" && out.operation.is_none() {
                    let (n, msg, claims) = follow_deployment(s, ns, &created).await?;
                    out.pods_created = Some(n);
                    out.pods_wanted = Some(c["spec"]["replicas"].as_i64().unwrap_or(1));
                    out.pod_message = Some(msg.map(Value::from).unwrap_or(Value::Null));
                    if let Some((pending, m)) = claims {
                        out.pods_pending = Some(pending);
                        out.claim_message = Some(m.map(Value::from).unwrap_or(Value::Null));
                    }
                } else if kind == "Pod" && out.operation.is_none() && template_claims(&c["spec"]) > 0 {
                    let (pending, m) = follow_claims(s, ns, &[created]).await?;
                    out.pods_pending = Some(pending);
                    out.claim_message = Some(m.map(Value::from).unwrap_or(Value::Null));
                }
            }
            Err(e) => out.message = Some(message_of(&e.message, ns)),
        }
        results.push(out);
    }
    Ok(CaseOut { expected: Expected { results, setup_errors }, state })
}

fn pretty(v: &impl Serialize) -> String {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    v.serialize(&mut ser).unwrap();
    String::from_utf8(buf).unwrap()
}

fn min_version(dir: &Path) -> Option<u32> {
    let t = std::fs::read_to_string(dir.join("min-version")).ok()?;
    t.trim().trim_start_matches('v').split('.').nth(1)?.parse().ok()
}

async fn apply_all(s: &Server, path: &Path) -> Result<()> {
    for d in docs(path)? {
        match s.create("", &d).await {
            Ok(_) => {}
            Err(e) if e.reason == "AlreadyExists" => {}
            Err(e) => bail!("{}: {}", path.display(), e.message),
        }
    }
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() -> Result<()> {
    let a = args()?;
    let t0 = Instant::now();
    let (main_server, info) = server(&a.kubeconfig).await?;
    let main_server = Arc::new(main_server);
    apply_all(&main_server, &a.cluster_scoped).await?;
    let limited = match &a.limited {
        Some(k) => {
            let (l, linfo) = server(k).await?;
            if linfo.git_version != info.git_version {
                bail!("the limited server runs {}, the main one {}", linfo.git_version, info.git_version);
            }
            apply_all(&l, &a.cluster_scoped).await?;
            Some(Arc::new(l))
        }
        None => None,
    };
    let admission = a.admission.as_ref().map(std::fs::read_to_string).transpose()?;
    std::fs::create_dir_all(&a.out)?;
    let sem = Arc::new(tokio::sync::Semaphore::new(a.jobs));
    let mut tasks = Vec::new();
    let mut skipped = Vec::new();
    for dir in &a.cases {
        let case = dir.file_name().unwrap().to_string_lossy().to_string();
        if min_version(dir).is_some_and(|m| m > main_server.minor) {
            skipped.push(format!("{case} (needs 1.{})", min_version(dir).unwrap()));
            continue;
        }
        let server = if dir.join("admission.yaml").exists() {
            let want = std::fs::read_to_string(dir.join("admission.yaml"))?;
            match (&limited, &admission) {
                (Some(l), Some(adm)) if *adm == want => l.clone(),
                _ => {
                    skipped.push(format!("{case} (no server with its admission.yaml)"));
                    continue;
                }
            }
        } else {
            main_server.clone()
        };
        let permit = sem.clone().acquire_owned().await?;
        let dir = dir.clone();
        tasks.push((
            case,
            dir.clone(),
            tokio::spawn(async move {
                let r = record_case(&server, &dir).await;
                drop(permit);
                r
            }),
        ));
    }
    let mut failures = Vec::new();
    let mut recorded = Vec::new();
    for (case, dir, t) in tasks {
        match t.await? {
            Ok(out) => {
                let dest = a.out.join(&case);
                let _ = std::fs::remove_dir_all(&dest);
                std::fs::create_dir_all(&dest)?;
                for f in ["cluster.yaml", "candidate.yaml", "admission.yaml", "cluster-scoped.yaml", "namespace.yaml", "min-version"] {
                    if dir.join(f).exists() {
                        std::fs::copy(dir.join(f), dest.join(f))?;
                    }
                }
                std::fs::write(dest.join("expected.json"), pretty(&out.expected))?;
                std::fs::write(dest.join("state.yaml"), serde_saphyr::to_string(&sorted(&out.state))?)?;
                eprintln!("recorded {case}");
                recorded.push(case);
            }
            Err(e) => {
                eprintln!("FAILED {case}: {e:#}");
                failures.push(format!("{case}: {e:#}"));
            }
        }
    }
    std::fs::copy(&a.cluster_scoped, a.out.join("cluster-scoped.yaml"))?;
    if let Some(adm) = &a.admission {
        std::fs::copy(adm, a.out.join("admission.yaml"))?;
    }
    std::fs::write(a.out.join("VERSION"), format!("{}\n", info.git_version))?;
    let meta = json!({
        "gitVersion": info.git_version,
        "major": info.major,
        "minor": info.minor,
        "goVersion": info.go_version,
        "platform": info.platform,
        "recordedAt": chrono_now(),
        "seconds": t0.elapsed().as_secs(),
        "cases": recorded.len(),
        "skipped": skipped,
        "failed": failures,
    });
    std::fs::write(a.out.join("metadata.json"), pretty(&meta) + "\n")?;
    eprintln!("{}: {} cases recorded, {} skipped, {} failed in {:.0?}", info.git_version, recorded.len(), skipped.len(), failures.len(), t0.elapsed());
    if !failures.is_empty() {
        bail!("{} cases failed:\n{}", failures.len(), failures.join("\n"));
    }
    Ok(())
}

/// UTC now as RFC 3339, without a date crate.
fn chrono_now() -> String {
    let out = std::process::Command::new("date").args(["-u", "+%Y-%m-%dT%H:%M:%SZ"]).output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default()
}
