//! Shared by the live suites: finding the test cluster, a client for it, running the plugin.

use std::path::{Path, PathBuf};
use std::process::Output;

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, ResourceQuota, ServiceAccount};
use kube::api::{Api, DeleteParams, DynamicObject, GroupVersionKind, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use kubectl_quota_engine::version::KubeVersion;

/// The test cluster's state directory (`KUBECTL_QUOTA_LAB`). Without one the live tests skip
/// loudly, except under CI, where they fail.
pub fn lab_dir() -> Option<PathBuf> {
    match std::env::var("KUBECTL_QUOTA_LAB") {
        Ok(dir) => Some(PathBuf::from(dir)),
        Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("live tests need the lab cluster under CI: run them through tests/run-all.sh")
        }
        Err(_) => {
            eprintln!("\n*** SKIPPED: live tests need a real cluster; run tests/run-all.sh (as root on Debian) to build and start one ***\n");
            None
        }
    }
}

/// The lab's kubeconfig (in [`lab_dir`]), or `None` without a lab (the test then skips).
pub fn lab() -> Option<PathBuf> {
    lab_dir().map(|d| d.join("kubeconfig"))
}

/// The lab's kubeconfig, and the second instance's (`KUBECTL_QUOTA_LAB_LIMITED`, running with
/// the corpus's ResourceQuota admission configuration) when there is one.
pub struct Lab {
    pub kubeconfig: PathBuf,
    pub limited_kubeconfig: Option<PathBuf>,
}

/// [`lab`] with the limited instance beside it, or `None` without a lab (the test then skips).
pub fn lab_with_limited() -> Option<Lab> {
    lab().map(|kubeconfig| Lab { kubeconfig, limited_kubeconfig: std::env::var("KUBECTL_QUOTA_LAB_LIMITED").ok().map(|d| Path::new(&d).join("kubeconfig")) })
}

/// The Kubernetes release the lab runs: `KUBECTL_QUOTA_LAB_VERSION` (tests/run-all.sh sets it),
/// else the `version` file tests/cluster/lab.sh writes in the lab's directory, else 1.20 (labs
/// from before there was a choice).
pub fn lab_version() -> KubeVersion {
    let from_env = std::env::var("KUBECTL_QUOTA_LAB_VERSION").ok();
    let from_file = || std::env::var("KUBECTL_QUOTA_LAB").ok().and_then(|d| std::fs::read_to_string(Path::new(&d).join("version")).ok());
    let v = from_env.or_else(from_file).unwrap_or_else(|| "1.20".to_string());
    KubeVersion::parse(&v).unwrap_or_else(|e| panic!("KUBECTL_QUOTA_LAB_VERSION: {e}"))
}

/// Per-version fact: until 1.23 the token controller gives every service account a token
/// Secret (listed in its `secrets`), and ServiceAccount admission refuses pods ("No API token
/// found for service account") until it has one. 1.24+ creates no such Secret: pods get a
/// projected token, and the service account alone is enough.
pub fn makes_token_secrets() -> bool {
    lab_version() < KubeVersion::new(1, 24)
}

/// Waits (up to 60 s) until the namespace's `default` service account can admit pods: it
/// exists, and on releases that make token Secrets it has one.
pub async fn wait_default_service_account(c: &Client, ns: &str) {
    let sas = Api::<ServiceAccount>::namespaced(c.clone(), ns);
    let need_token = makes_token_secrets();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok(Some(sa)) = sas.get_opt("default").await {
            if !need_token || sa.secrets.is_some_and(|s| !s.is_empty()) {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub async fn client(kubeconfig: &Path) -> Client {
    let kc = Kubeconfig::read_from(kubeconfig).unwrap();
    let config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await.unwrap();
    Client::try_from(config).unwrap()
}

/// Runs the plugin binary against a kubeconfig.
pub fn plugin(kubeconfig: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-quota"))
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .output()
        .unwrap()
}

/// Runs the plugin binary against a kubeconfig, with `input` on its standard input.
pub fn plugin_stdin(kubeconfig: &Path, args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-quota"))
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// A fresh namespace named after the prefix and this process, whose default service account
/// can admit pods (see [`wait_default_service_account`]). Creating is retried for a minute
/// (the namespace controller may still be removing one of the same name).
pub async fn new_namespace(c: &Client, prefix: &str) -> String {
    let name = format!("{prefix}-{}", std::process::id() % 100000);
    let ns: Namespace = serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap();
    let api = Api::<Namespace>::all(c.clone());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match api.create(&PostParams::default(), &ns).await {
            Ok(_) => break,
            Err(_) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(500)).await,
            Err(e) => panic!("cannot create namespace {name}: {e}"),
        }
    }
    wait_default_service_account(c, &name).await;
    name
}

/// Deletes a test's namespace, and what is in it; an error (already gone) is no matter.
pub async fn drop_namespace(c: &Client, name: &str) {
    let _ = Api::<Namespace>::all(c.clone()).delete(name, &DeleteParams::default()).await;
}

/// Polls `probe` every 200 ms until it gives a value, for at most `seconds`; panics naming
/// `what` (and the last thing `probe` said) when it never does.
pub async fn eventually<T, F, Fut>(what: &str, seconds: u64, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        match probe().await {
            Ok(v) => return v,
            Err(last) if Instant::now() > deadline => panic!("{what}: never happened within {seconds} s; last seen: {last}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// [`eventually`] for a probe with nothing to say on the way: polls `f` every 200 ms until it
/// gives `Some`, for at most `secs` seconds.
pub async fn until<T, F, Fut>(secs: u64, what: &str, f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    until_else(secs, what, f, String::new).await
}

/// [`until`], the failure also saying what `say` tells then (a server's metrics and log).
pub async fn until_else<T, F, Fut>(secs: u64, what: &str, mut f: F, say: impl FnOnce() -> String) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        if Instant::now() >= deadline {
            panic!("waited {secs} s for {what}\n{}", say());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// kubectl's `Warning: ...` lines.
pub fn warnings(out: &Output) -> Vec<String> {
    text(&out.stderr).lines().filter_map(|l| l.strip_prefix("Warning: ")).map(str::to_string).collect()
}

/// A loopback port free now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Whether kubectl is installed, for a test that applies files as a user would (`why`): under
/// CI=true it must be; elsewhere its absence skips the test, loudly.
pub fn kubectl_here(why: &str) -> bool {
    if std::process::Command::new("kubectl").arg("version").arg("--client").output().is_ok() {
        return true;
    }
    assert!(std::env::var("CI").as_deref() != Ok("true"), "kubectl is needed to {why}");
    eprintln!("*** SKIPPED: kubectl is not installed ***");
    false
}

/// A lab guard's certificates (`guard certs` for 127.0.0.1), in a fresh directory named
/// after `tag` and this process.
pub fn guard_certs(kubeconfig: &Path, tag: &str) -> PathBuf {
    let certs = std::env::temp_dir().join(format!("kq-{tag}-{}", std::process::id()));
    let made = plugin(kubeconfig, &["guard", "certs", "--host", "127.0.0.1", "--dir", certs.to_str().unwrap()]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    certs
}

/// `kubectl apply -f -` with the lab's kubeconfig, `manifest` on its standard input (through a
/// file: the deadline helper owns the pipes) and `extra` flags, within 60 s.
pub fn kubectl_apply(kubeconfig: &Path, manifest: &str, extra: &[&str]) -> Output {
    let f = std::env::temp_dir().join(format!("kq-apply-{}-{}", std::process::id(), manifest.len()));
    std::fs::write(&f, manifest).unwrap();
    let mut cmd = std::process::Command::new("kubectl");
    cmd.arg("--kubeconfig").arg(kubeconfig).args(["apply", "-f", "-"]).args(extra).env_remove("KUBECONFIG");
    cmd.stdin(std::process::Stdio::from(std::fs::File::open(&f).unwrap()));
    let out = super::deadline::output_within(cmd, Duration::from_secs(60));
    let _ = std::fs::remove_file(f);
    out
}

/// `guard serve` on a free loopback port, with the certificates in `dir` (from
/// [`guard_certs`]) and `extra` flags, registered with the lab's API server (`guard install
/// --url`); stopped and unregistered when dropped, whatever happens.
pub struct LocalGuard {
    child: Option<std::process::Child>,
    kubeconfig: PathBuf,
    /// `https://127.0.0.1:PORT`.
    pub base: String,
}

impl LocalGuard {
    /// Starts and registers it; its standard error goes to `dir/guard-<log>.log`.
    pub fn start(kubeconfig: &Path, dir: &Path, log: &str, extra: &[&str]) -> LocalGuard {
        let listen = format!("127.0.0.1:{}", free_port());
        let log = std::fs::File::create(dir.join(format!("guard-{log}.log"))).unwrap();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-quota"))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["guard", "serve", "--listen", &listen])
            .arg("--tls-cert-file")
            .arg(dir.join("tls.crt"))
            .arg("--tls-private-key-file")
            .arg(dir.join("tls.key"))
            .args(extra)
            .env_remove("KUBECONFIG")
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let guard = LocalGuard { child: Some(child), kubeconfig: kubeconfig.to_path_buf(), base: format!("https://{listen}") };
        let url = format!("{}/validate", guard.base);
        let installed = plugin(kubeconfig, &["guard", "install", "--url", &url, "--ca-file", dir.join("ca.crt").to_str().unwrap()]);
        assert!(installed.status.success(), "install: {}", text(&installed.stderr));
        guard
    }

    /// Stops the process (still registered until dropped).
    pub fn stop(&mut self) {
        if let Some(mut g) = self.child.take() {
            let _ = g.kill();
            let _ = g.wait();
        }
    }
}

impl Drop for LocalGuard {
    fn drop(&mut self) {
        self.stop();
        let _ = plugin(&self.kubeconfig, &["guard", "uninstall"]);
    }
}

/// Creates every object of a YAML text in `ns`. Err carries the server's message.
pub async fn apply(c: &Client, ns: &str, yaml: &str) -> Result<(), String> {
    for doc in kubectl_quota_engine::manifest::parse_str("t.yaml", yaml).unwrap() {
        // What follows a quota waits for the quota controller's first sync: pods admitted
        // before it are counted only if its informer already saw them, else not until the
        // next full resync (5 minutes), which the tests would wait for (seen on 1.20).
        let quota = (doc.value["kind"] == "ResourceQuota").then(|| doc.value["metadata"]["name"].as_str().unwrap_or_default().to_string());
        let v = doc.value;
        let av = v["apiVersion"].as_str().unwrap().to_string();
        let kind = v["kind"].as_str().unwrap().to_string();
        let (g, ver) = av.rsplit_once('/').map(|(g, v)| (g.to_string(), v.to_string())).unwrap_or((String::new(), av.clone()));
        let (ar, caps) = kube::discovery::pinned_kind(c, &GroupVersionKind::gvk(&g, &ver, &kind)).await.map_err(|e| e.to_string())?;
        let api: Api<DynamicObject> =
            if caps.scope == kube::discovery::Scope::Cluster { Api::all_with(c.clone(), &ar) } else { Api::namespaced_with(c.clone(), ns, &ar) };
        let obj: DynamicObject = serde_json::from_value(v).map_err(|e| e.to_string())?;
        api.create(&PostParams::default(), &obj).await.map_err(|e| match e {
            kube::Error::Api(s) => s.message.clone(),
            other => other.to_string(),
        })?;
        if let Some(name) = quota {
            let quotas = Api::<ResourceQuota>::namespaced(c.clone(), ns);
            let deadline = Instant::now() + Duration::from_secs(60);
            while quotas.get(&name).await.map_err(|e| e.to_string())?.status.and_then(|s| s.used).is_none() {
                assert!(Instant::now() < deadline, "quota {ns}/{name} never synced");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    Ok(())
}

type Deletion = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Deletes cluster-scoped objects (webhook configurations, policies and their bindings) when
/// dropped, in the order they were named: also when an assertion fails half-way.
#[derive(Default)]
pub struct Unregister(Vec<Deletion>);

impl Unregister {
    /// The object of kind `K` named `name`, deleted in its turn.
    pub fn and<K>(mut self, c: &Client, name: &str) -> Self
    where
        K: kube::Resource<Scope = k8s_openapi::ClusterResourceScope> + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
        K::DynamicType: Default,
    {
        let (c, name) = (c.clone(), name.to_string());
        self.0.push(Box::pin(async move {
            let _ = Api::<K>::all(c).delete(&name, &DeleteParams::default()).await;
        }));
        self
    }

    /// A cluster-scoped object of a kind without a Rust type (a custom resource's), deleted
    /// in its turn.
    pub fn and_dynamic(mut self, c: &Client, ar: &kube::api::ApiResource, name: &str) -> Self {
        let (api, name) = (Api::<DynamicObject>::all_with(c.clone(), ar), name.to_string());
        self.0.push(Box::pin(async move {
            let _ = api.delete(&name, &DeleteParams::default()).await;
        }));
        self
    }
}

impl Drop for Unregister {
    fn drop(&mut self) {
        let all = std::mem::take(&mut self.0);
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async move {
                for d in all {
                    d.await;
                }
            })
        });
    }
}

/// The newest FailedCreate message a controller wrote in `ns` about an object whose name
/// `about` accepts, if any.
pub async fn newest_failed_create(c: &Client, ns: &str, about: impl Fn(&str) -> bool) -> Option<String> {
    let events = Api::<k8s_openapi::api::core::v1::Event>::namespaced(c.clone(), ns).list(&kube::api::ListParams::default()).await.ok()?;
    events
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("FailedCreate") && e.involved_object.name.as_deref().is_some_and(&about))
        .max_by_key(|e| e.last_timestamp.clone().map(|t| t.0))
        .and_then(|e| e.message)
}
