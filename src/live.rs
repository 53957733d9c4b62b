//! The live API: connection like kubectl, reads (paginated, concurrent) and the one write
//! (`create`). Everything it reads is turned into the library's objects through the same
//! decoder as files, so offline and live checks share every rule.
//!
//! `check` and `describe` only ever issue GET/LIST requests.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::global::KubeFlags;
use k8s_openapi::api::core::v1::{LimitRange, ResourceQuota};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaimTemplate};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use kubectl_quota_engine::check::ClusterState;
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::{self, Object};
use kubectl_quota_engine::version::KubeVersion;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// A connection and the namespace commands default to.
pub struct Conn {
    pub client: Client,
    pub namespace: String,
}

/// kubectl's `--request-timeout`: `0` (none), a bare number of seconds, or a number with
/// `ms`, `s`, `m` or `h`.
pub fn parse_duration(s: &str) -> Result<Option<Duration>, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().map_err(|_| format!("invalid --request-timeout {s:?}: use e.g. 30s, 1m or 0"))?;
    let d = match unit {
        "" | "s" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        "m" => Duration::from_secs(n * 60),
        "h" => Duration::from_secs(n * 3600),
        _ => return Err(format!("invalid --request-timeout {s:?}: use e.g. 30s, 1m or 0")),
    };
    Ok((!d.is_zero()).then_some(d))
}

/// Connects as kubectl would: `--kubeconfig`, else `$KUBECONFIG` (several files merged), else
/// `~/.kube/config`, else the in-cluster service account; then `--context`, `--cluster`,
/// `--user`, `--as`, `--as-group`, `--request-timeout`.
pub async fn connect(k: &KubeFlags, namespace: Option<&str>) -> Result<Conn, String> {
    let options = KubeConfigOptions { context: k.context.clone(), cluster: k.cluster.clone(), user: k.user.clone() };
    let mut config = match &k.kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path).map_err(|e| format!("{path}: {e}"))?;
            Config::from_custom_kubeconfig(kc, &options).await.map_err(|e| format!("{path}: {e}"))?
        }
        None => match Kubeconfig::read() {
            Ok(kc) => Config::from_custom_kubeconfig(kc, &options).await.map_err(|e| format!("kubeconfig: {e}"))?,
            Err(e) => {
                Config::incluster().map_err(|_| format!("no kubeconfig found ({e}) and not running in a cluster: pass --kubeconfig or set KUBECONFIG"))?
            }
        },
    };
    if let Some(u) = &k.as_user {
        config.auth_info.impersonate = Some(u.clone());
    }
    if !k.as_group.is_empty() {
        config.auth_info.impersonate_groups = Some(k.as_group.clone());
    }
    if let Some(t) = &k.request_timeout {
        if let Some(d) = parse_duration(t)? {
            config.connect_timeout = Some(d);
            config.read_timeout = Some(d);
            config.write_timeout = Some(d);
        }
    }
    let namespace = namespace.map(str::to_string).unwrap_or_else(|| config.default_namespace.clone());
    let client = Client::try_from(config).map_err(|e| format!("cannot build a client: {e}"))?;
    Ok(Conn { client, namespace })
}

/// A read that failed, with what it was for.
#[derive(Debug)]
pub struct ReadError {
    pub what: String,
    pub forbidden: bool,
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.forbidden {
            write!(f, "cannot {} (RBAC): {}", self.what, self.message)
        } else {
            write!(f, "cannot {}: {}", self.what, self.message)
        }
    }
}

fn read_error(what: String, e: kube::Error) -> ReadError {
    match e {
        kube::Error::Api(s) => ReadError { what, forbidden: s.code == 403, message: s.message.clone() },
        other => ReadError { what, forbidden: false, message: other.to_string() },
    }
}

/// Objects per LIST page: 500, or `KUBECTL_QUOTA_PAGE_SIZE` (tests use a small page to
/// exercise continue tokens).
fn page_size() -> u32 {
    std::env::var("KUBECTL_QUOTA_PAGE_SIZE").ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(500)
}

/// Lists every object, a page at a time.
pub async fn list_all<K>(api: Api<K>, what: String) -> Result<Vec<K>, ReadError>
where
    K: Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut lp = ListParams::default().limit(page_size());
    let mut out = Vec::new();
    loop {
        let page = api.list(&lp).await.map_err(|e| read_error(what.clone(), e))?;
        out.extend(page.items);
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => lp = lp.continue_token(&c),
            _ => break,
        }
    }
    Ok(out)
}

/// Turns API objects into library objects through the file decoder.
fn to_objects<K: Serialize>(items: &[K], source: &str) -> Vec<Object> {
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let value = serde_json::to_value(item).ok()?;
            let doc = Document { origin: Origin { file: source.into(), document: i + 1, item: None }, value };
            objects::decode(&doc).ok()
        })
        .collect()
}

/// Lists the quotas of `namespace` (or every namespace), paginated.
pub async fn quotas(conn: &Conn, namespace: Option<&str>) -> Result<Vec<Object>, ReadError> {
    let (api, what) = match namespace {
        Some(ns) => (Api::<ResourceQuota>::namespaced(conn.client.clone(), ns), format!("list resourcequotas in namespace {ns:?}")),
        None => (Api::<ResourceQuota>::all(conn.client.clone()), "list resourcequotas in all namespaces".to_string()),
    };
    let items = list_all(api, what).await?;
    Ok(to_objects(&items, "cluster"))
}

/// What a live check reads: quotas and LimitRanges of each namespace, PriorityClasses,
/// StorageClasses and RuntimeClasses, all at once. A forbidden quota list is fatal; the
/// others degrade to notes saying what the check could not emulate.
pub async fn cluster_state(conn: &Conn, namespaces: &BTreeSet<String>) -> Result<(ClusterState, Vec<String>), ReadError> {
    let c = &conn.client;
    let mut quota_tasks = Vec::new();
    let mut lr_tasks = Vec::new();
    for ns in namespaces {
        let what = format!("list resourcequotas in namespace {ns:?}");
        quota_tasks.push(tokio::spawn(list_all(Api::<ResourceQuota>::namespaced(c.clone(), ns), what)));
        let what = format!("list limitranges in namespace {ns:?}");
        lr_tasks.push(tokio::spawn(list_all(Api::<LimitRange>::namespaced(c.clone(), ns), what)));
    }
    let pcs = tokio::spawn(list_all(Api::<PriorityClass>::all(c.clone()), "list priorityclasses".into()));
    let scs = tokio::spawn(list_all(Api::<StorageClass>::all(c.clone()), "list storageclasses".into()));
    let rcs = tokio::spawn(list_all(Api::<RuntimeClass>::all(c.clone()), "list runtimeclasses".into()));
    // DRA (resource.k8s.io/v1, 1.34+): DeviceClasses, and the claim templates pods name.
    let dcs = tokio::spawn(list_all(Api::<DeviceClass>::all(c.clone()), "list deviceclasses.resource.k8s.io".into()));
    let mut tmpl_tasks = Vec::new();
    for ns in namespaces {
        let what = format!("list resourceclaimtemplates.resource.k8s.io in namespace {ns:?}");
        tmpl_tasks.push(tokio::spawn(list_all(Api::<ResourceClaimTemplate>::namespaced(c.clone(), ns), what)));
    }

    fn joined<T>(r: Result<Result<Vec<T>, ReadError>, tokio::task::JoinError>) -> Result<Vec<T>, ReadError> {
        r.unwrap_or_else(|e| Err(ReadError { what: "read".into(), forbidden: false, message: e.to_string() }))
    }
    let mut state = ClusterState::default();
    let mut notes = Vec::new();
    for t in quota_tasks {
        for o in to_objects(&joined(t.await)?, "cluster") {
            state.add(o, &conn.namespace);
        }
    }
    for t in lr_tasks {
        match joined(t.await) {
            Ok(items) => to_objects(&items, "cluster").into_iter().for_each(|o| state.add(o, &conn.namespace)),
            Err(e) => notes.push(format!("{e}; LimitRange defaults are not applied")),
        }
    }
    match joined(pcs.await) {
        Ok(items) => {
            state.priority_classes = Some(BTreeMap::new());
            to_objects(&items, "cluster").into_iter().for_each(|o| state.add(o, &conn.namespace));
        }
        Err(e) => notes.push(format!("{e}; the global default PriorityClass and unknown class names are not checked")),
    }
    match joined(scs.await) {
        Ok(items) => {
            state.storage_classes = Some(Vec::new());
            to_objects(&items, "cluster").into_iter().for_each(|o| state.add(o, &conn.namespace));
        }
        Err(e) => notes.push(format!("{e}; the default StorageClass is not applied to claims without a class")),
    }
    match joined(rcs.await) {
        Ok(items) => {
            state.runtime_classes = Some(BTreeMap::new());
            to_objects(&items, "cluster").into_iter().for_each(|o| state.add(o, &conn.namespace));
        }
        Err(e) if e.message.contains("could not find the requested resource") || e.message.contains("404") => {}
        Err(e) => notes.push(format!("{e}; RuntimeClass overhead is not added to pods")),
    }
    let not_served = |e: &ReadError| e.message.contains("could not find the requested resource") || e.message.contains("404");
    match joined(dcs.await) {
        Ok(items) => {
            state.device_classes = Some(BTreeMap::new());
            to_objects(&items, "cluster").into_iter().for_each(|o| state.add(o, &conn.namespace));
        }
        Err(e) if not_served(&e) => {}
        Err(e) => notes.push(format!("{e}; DRA extended resource names are not resolved")),
    }
    for t in tmpl_tasks {
        match joined(t.await) {
            Ok(items) => to_objects(&items, "cluster").into_iter().for_each(|o| state.add(o, &conn.namespace)),
            Err(e) if not_served(&e) => {}
            Err(e) => notes.push(format!("{e}; claims that pods create from templates are not checked")),
        }
    }
    Ok((state, notes))
}

/// Resolves each document's kind through discovery (fixing guessed plurals and scope) and
/// loads the objects that already exist, so that creating them again is checked as an update.
pub async fn resolve_and_existing(conn: &Conn, objs: &mut [Object], state: &mut ClusterState) -> Vec<String> {
    let mut notes = Vec::new();
    let mut resolved: BTreeMap<(String, String), Option<ApiResource>> = BTreeMap::new();
    for obj in objs.iter_mut() {
        let key = (obj.type_info.api_version.clone(), obj.type_info.kind.clone());
        if !resolved.contains_key(&key) {
            let (group, version) = match key.0.rsplit_once('/') {
                Some((g, v)) => (g.to_string(), v.to_string()),
                None => (String::new(), key.0.clone()),
            };
            let gvk = GroupVersionKind::gvk(&group, &version, &key.1);
            let found = match kube::discovery::pinned_kind(&conn.client, &gvk).await {
                Ok((ar, caps)) => {
                    obj.type_info.namespaced = caps.scope == kube::discovery::Scope::Namespaced;
                    Some(ar)
                }
                Err(e) => {
                    notes.push(format!("{}/{} is not served by this cluster ({e}): the API server would refuse it", key.0, key.1));
                    None
                }
            };
            resolved.insert(key.clone(), found);
        }
        let Some(Some(ar)) = resolved.get(&key) else { continue };
        if obj.type_info.guessed {
            obj.type_info.guessed = false;
        }
        obj.type_info.resource = ar.plural.clone();
        if !obj.type_info.namespaced || obj.meta.generate_name.is_some() {
            continue;
        }
        let ns = obj.meta.namespace.clone().unwrap_or_else(|| conn.namespace.clone());
        let api: Api<DynamicObject> = Api::namespaced_with(conn.client.clone(), &ns, ar);
        match api.get_opt(&obj.meta.name).await {
            Ok(Some(existing)) => {
                let Ok(value) = serde_json::to_value(&existing) else { continue };
                let doc = Document { origin: Origin { file: "cluster".into(), document: 1, item: None }, value };
                if let Ok(mut o) = objects::decode(&doc) {
                    o.type_info = obj.type_info.clone();
                    o.meta.namespace = Some(ns.clone());
                    state.existing.insert((ns.clone(), obj.type_info.group_resource(), obj.meta.name.clone()), o);
                }
            }
            Ok(None) => {}
            Err(e) => notes.push(format!("cannot read {} {:?} to tell a create from an update: {e}", obj.type_info.group_resource(), obj.meta.name)),
        }
    }
    notes
}

/// `GET /version`: the server's gitVersion and its release.
pub async fn server_version(conn: &Conn) -> Result<(String, KubeVersion), String> {
    let info = conn.client.apiserver_version().await.map_err(|e| e.to_string())?;
    let v = KubeVersion::parse(&format!("{}.{}", info.major, info.minor)).or_else(|_| KubeVersion::parse(&info.git_version))?;
    Ok((info.git_version, v))
}

/// Namespace names (for completion); empty when they cannot be listed.
pub async fn namespace_names(conn: &Conn) -> Vec<String> {
    let api = Api::<k8s_openapi::api::core::v1::Namespace>::all(conn.client.clone());
    list_all(api, "list namespaces".into()).await.map(|v| v.into_iter().filter_map(|n| n.metadata.name).collect()).unwrap_or_default()
}

/// Creates a quota (or submits it with dryRun=All).
pub async fn create_quota(conn: &Conn, namespace: &str, quota: &ResourceQuota, dry_run: bool) -> Result<ResourceQuota, String> {
    let api = Api::<ResourceQuota>::namespaced(conn.client.clone(), namespace);
    let pp = PostParams { dry_run, field_manager: Some("kubectl-quota".into()) };
    api.create(&pp, quota).await.map_err(|e| match e {
        kube::Error::Api(s) => s.message.clone(),
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_timeout_accepts_kubectl_forms() {
        let cases = [
            ("0", Ok(None)),
            ("30", Ok(Some(30_000))),
            ("30s", Ok(Some(30_000))),
            ("500ms", Ok(Some(500))),
            ("2m", Ok(Some(120_000))),
            ("1h", Ok(Some(3_600_000))),
        ];
        for (s, want) in cases {
            let got: Result<Option<u128>, String> = parse_duration(s).map(|d| d.map(|d| d.as_millis()));
            assert_eq!(got, want, "{s}");
        }
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5d").is_err());
    }
}
