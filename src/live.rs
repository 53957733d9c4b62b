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
use kube::Resource;
use kube::{Client, Config};
use kubectl_quota_engine::check::ClusterState;
use kubectl_quota_engine::manifest::{Document, Origin};
use kubectl_quota_engine::objects::{self, Object};
use kubectl_quota_engine::version::KubeVersion;
use serde::de::DeserializeOwned;

/// A connection and the namespace commands default to.
#[derive(Clone)]
pub struct Conn {
    pub client: Client,
    pub namespace: String,
    /// The server's URL, named in connection errors.
    pub server: String,
    /// `--request-timeout`: a bound on each request as a whole (connect, headers and the
    /// entire body), not on each read.
    pub timeout: Option<Duration>,
}

/// The longest `--request-timeout` accepted: a year. Anything longer is surely a typo, and
/// would overflow the clock arithmetic underneath.
const MAX_REQUEST_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// kubectl's `--request-timeout`: `0` (none), a bare number of seconds, or a number with
/// `ms`, `s`, `m` or `h`.
pub fn parse_duration(s: &str) -> Result<Option<Duration>, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let shown = crate::render::escape::escape(s);
    let too_large = || format!("invalid --request-timeout {shown:?}: longer than the maximum of 8760h");
    let n: u64 = match n.parse() {
        Ok(n) => n,
        Err(_) if !n.is_empty() => return Err(too_large()),
        Err(_) => return Err(format!("invalid --request-timeout {shown:?}: use e.g. 30s, 1m or 0")),
    };
    let secs = |mul: u64| n.checked_mul(mul).map(Duration::from_secs);
    let d = match unit {
        "" | "s" => secs(1),
        "ms" => Some(Duration::from_millis(n)),
        "m" => secs(60),
        "h" => secs(3600),
        _ => return Err(format!("invalid --request-timeout {shown:?}: use e.g. 30s, 1m or 0")),
    };
    match d {
        Some(d) if d <= MAX_REQUEST_TIMEOUT => Ok((!d.is_zero()).then_some(d)),
        _ => Err(too_large()),
    }
}

/// Connects as kubectl would: `--kubeconfig`, else `$KUBECONFIG` (several files merged), else
/// `~/.kube/config`, else the in-cluster service account; then `--context`, `--cluster`,
/// `--user`, `--as`, `--as-group`, `--request-timeout`.
pub async fn connect(k: &KubeFlags, namespace: Option<&str>) -> Result<Conn, String> {
    let options = KubeConfigOptions { context: k.context.clone(), cluster: k.cluster.clone(), user: k.user.clone() };
    let timeout = match &k.request_timeout {
        Some(t) => parse_duration(t)?,
        None => None,
    };
    let mut config = match &k.kubeconfig {
        Some(path) => {
            let kc = read_kubeconfig(std::path::Path::new(path))?;
            Config::from_custom_kubeconfig(kc, &options).await.map_err(|e| format!("{path}: {e}"))?
        }
        None => match kubeconfig_from_env()? {
            Some(kc) => Config::from_custom_kubeconfig(kc, &options).await.map_err(|e| format!("kubeconfig: {e}"))?,
            None => Config::incluster().map_err(|_| "no kubeconfig found and not running in a cluster: pass --kubeconfig or set KUBECONFIG".to_string())?,
        },
    };
    if let Some(u) = &k.as_user {
        config.auth_info.impersonate = Some(u.clone());
    }
    if !k.as_group.is_empty() {
        config.auth_info.impersonate_groups = Some(k.as_group.clone());
    }
    if let Some(d) = timeout {
        config.connect_timeout = Some(d);
        config.read_timeout = Some(d);
        config.write_timeout = Some(d);
    }
    let namespace = namespace.map(str::to_string).unwrap_or_else(|| config.default_namespace.clone());
    let server = config.cluster_url.to_string().trim_end_matches('/').to_string();
    // A server asking to be asked again (429, 503, 504) is, a bounded number of times: the
    // client's own default honours any Retry-After and waits up to 1000 s between 15 tries,
    // so a server answering 429 for ever held the command for ever.
    config.default_retry = false;
    let retry = tower::retry::RetryLayer::new(retry_policy());
    // Every response body is read through a cap, so a server streaming without end fails
    // with an error instead of filling memory.
    let limit = tower::util::MapResponseLayer::new(capped_body);
    let builder = kube::client::ClientBuilder::try_from(config).map_err(|e| format!("cannot build a client: {e}"))?;
    // Repeating needs a service it can clone: a buffer in front of the client's own stack.
    let client = builder.with_layer(&tower::buffer::BufferLayer::new(256)).with_layer(&retry).with_layer(&limit).build();
    Ok(Conn { client, namespace, server, timeout })
}

/// Tries after the first of a request the server asks to repeat (429, 503, 504), as many
/// as kubectl's client makes.
const RETRIES: u32 = 10;

/// How a request the server asks to repeat is repeated: [`RETRIES`] times, 20 ms after the
/// first answer, then twice as long each time up to 200 ms: about 1.5 s in all, whatever
/// Retry-After says. Then the server's last answer is the error.
fn retry_policy() -> kube::client::retry::RetryPolicy {
    kube::client::retry::RetryPolicy::new(Duration::from_millis(20), Duration::from_millis(200), RETRIES, false).expect("valid backoff")
}

/// A response whose body stops with an error past the input cap, counted over every body
/// being read at once (see [`Budgeted`]).
fn capped_body<B>(r: http::Response<B>) -> http::Response<Budgeted<B>> {
    let cap = usize::try_from(crate::input::max_input_bytes()).unwrap_or(usize::MAX);
    r.map(|inner| Budgeted { inner, taken: 0, cap })
}

/// Bytes of the response bodies being read right now, process-wide: each [`Budgeted`] body adds
/// what arrives and gives it back when it is dropped.
static IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A response body read against the input cap shared by every body read at once: a server
/// streaming without end into the several LISTs a check makes at once stops at the cap in
/// all (a small multiple of it in memory), not at the cap each.
pub struct Budgeted<B> {
    inner: B,
    taken: usize,
    cap: usize,
}

/// The error of a body past the cap (worded as the client's own limit says it).
#[derive(Debug)]
struct LengthLimitExceeded;

impl std::fmt::Display for LengthLimitExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("length limit exceeded")
    }
}

impl std::error::Error for LengthLimitExceeded {}

impl<B> http_body::Body for Budgeted<B>
where
    B: http_body::Body + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = B::Data;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        use bytes::Buf;
        use std::sync::atomic::Ordering;
        use std::task::Poll;
        let this = &mut *self;
        match std::pin::Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let n = frame.data_ref().map_or(0, Buf::remaining);
                this.taken += n;
                if IN_FLIGHT.fetch_add(n, Ordering::SeqCst) + n > this.cap {
                    return Poll::Ready(Some(Err(Box::new(LengthLimitExceeded))));
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl<B> Drop for Budgeted<B> {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(self.taken, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A kubeconfig file read through the input cap, its token files read through it too (a
/// `tokenFile: /dev/zero` ends with an error instead of filling memory).
fn read_kubeconfig(path: &std::path::Path) -> Result<Kubeconfig, String> {
    let shown = path.display().to_string();
    crate::input::read_file(path).map_err(|e| format!("{shown}: {e}"))?;
    let mut kc = Kubeconfig::read_from(path).map_err(|e| format!("{shown}: {e}"))?;
    for named in kc.auth_infos.iter_mut() {
        let Some(auth) = named.auth_info.as_mut() else { continue };
        if auth.token.is_some() {
            continue;
        }
        if let Some(file) = auth.token_file.clone() {
            match crate::input::read_file(std::path::Path::new(&file)) {
                Ok(token) => {
                    auth.token = Some(token.trim().to_string().into());
                    auth.token_file = None;
                }
                Err(e) if e.contains("larger than") => return Err(format!("{shown}: user {:?}: tokenFile {file}: {e}", named.name)),
                Err(_) => {}
            }
        }
    }
    Ok(kc)
}

/// `$KUBECONFIG` as kubectl reads it: the listed files merged, the first to set a value
/// winning; files that do not exist are skipped (kubectl ignores them too). Without the
/// variable, `~/.kube/config` when it exists.
fn kubeconfig_from_env() -> Result<Option<Kubeconfig>, String> {
    let paths: Vec<std::path::PathBuf> = match std::env::var_os("KUBECONFIG") {
        Some(v) => std::env::split_paths(&v).filter(|p| !p.as_os_str().is_empty()).collect(),
        None => vec![],
    };
    let paths = if paths.is_empty() {
        match std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".kube").join("config")) {
            Some(p) => vec![p],
            None => vec![],
        }
    } else {
        paths
    };
    let mut merged: Option<Kubeconfig> = None;
    for p in paths.iter().filter(|p| p.exists()) {
        let kc = read_kubeconfig(p)?;
        merged = Some(match merged {
            Some(m) => m.merge(kc).map_err(|e| format!("{}: {e}", p.display()))?,
            None => kc,
        });
    }
    Ok(merged)
}

/// The kubeconfig kubectl would use: `--kubeconfig`, else `$KUBECONFIG` / `~/.kube/config`
/// (read as in [`connect`]: capped, missing list entries skipped). `None` when there is none.
pub fn load_kubeconfig(path: Option<&str>) -> Result<Option<Kubeconfig>, String> {
    match path {
        Some(p) => read_kubeconfig(std::path::Path::new(p)).map(Some),
        None => kubeconfig_from_env(),
    }
}

/// A request (or a paginated series) within `--request-timeout` as a whole.
async fn within<T>(timeout: Option<Duration>, fut: impl std::future::Future<Output = Result<T, kube::Error>>) -> Result<T, RequestError> {
    match timeout {
        Some(d) => match tokio::time::timeout(d, fut).await {
            Ok(r) => r.map_err(RequestError::Kube),
            Err(_) => Err(RequestError::Timeout(d)),
        },
        None => fut.await.map_err(RequestError::Kube),
    }
}

/// Why a request failed: the server's answer, a transport failure, or the deadline.
pub enum RequestError {
    Kube(kube::Error),
    Timeout(Duration),
}

/// An error's message with its causes, as Go prints wrapped errors (`a: b: c`).
/// kube's and hyper's wrappers (`ServiceError: client error (Connect)`) are dropped for
/// kubectl's shorter `connect: ...`.
fn chain(e: &dyn std::error::Error) -> String {
    let tidy = |m: String| m.trim_start_matches("ServiceError: ").replace("client error (Connect)", "connect").replace("HyperError: ", "");
    let mut out = tidy(e.to_string());
    let mut cur = e.source();
    while let Some(s) = cur {
        let m = tidy(s.to_string());
        if !out.contains(&m) {
            out.push_str(": ");
            out.push_str(&m);
        }
        cur = s.source();
    }
    out
}

/// A read that failed, with what it was for.
#[derive(Debug)]
pub struct ReadError {
    pub what: String,
    pub forbidden: bool,
    /// The server never answered (connection refused, TLS, timeout, a list that never ends):
    /// exit status 2.
    pub unreachable: bool,
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

impl ReadError {
    /// The error naming the server it came from: an API error does not by itself (a transport
    /// error's message already does).
    pub fn on(mut self, server: &str) -> ReadError {
        if !self.unreachable {
            self.what = format!("{} on {server}", self.what);
        }
        self
    }
}

fn read_error(server: &str, what: String, e: RequestError) -> ReadError {
    match e {
        RequestError::Kube(kube::Error::Api(s)) => ReadError { what, forbidden: s.code == 403, unreachable: false, message: status_message(&s) },
        other => ReadError { what, forbidden: false, unreachable: true, message: transport_message(server, &other) },
    }
}

/// What an error answer says, never nothing: a Status's message (with its reason, as kubectl
/// prints it, when that is not already in the message); a body that is a Status the client
/// could not read, read leniently; any other body quoted (its start); none, the HTTP status.
fn status_message(s: &kube::core::Status) -> String {
    // The HTTP status, when the answer says it (a Status without `code` does not).
    let http = || match http::StatusCode::from_u16(s.code) {
        _ if s.code == 0 => "an error".to_string(),
        Ok(c) => format!("HTTP {c}"),
        Err(_) => format!("HTTP {}", s.code),
    };
    // The client's stand-in for a body that is not a Status it could read.
    const UNREAD: &str = "Failed to parse error data";
    if s.reason != UNREAD {
        return match (s.message.trim(), s.reason.as_str()) {
            ("", "") => format!("the server answered {} with no message", http()),
            ("", reason) => format!("the server answered {} ({reason}) with no message", http()),
            (m, _) => m.to_string(),
        };
    }
    let body = s.message.trim();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        let field = |k: &str| v.get(k).and_then(serde_json::Value::as_str).map(str::trim).filter(|m| !m.is_empty());
        if let Some(m) = field("message") {
            return match field("reason") {
                Some(r) => format!("Error from server ({r}): {m}"),
                None => m.to_string(),
            };
        }
    }
    match body {
        "" => format!("the server answered {} with an empty body", http()),
        b => {
            let line: String = b.split_whitespace().collect::<Vec<_>>().join(" ");
            let cut: String = line.chars().take(200).collect();
            let more = if cut.len() < line.len() { " ..." } else { "" };
            format!("the server answered {} with a body that is not a Status: {cut}{more}", http())
        }
    }
}

/// kubectl's manner: the server, then the cause (`Get "https://10.0.0.1:6443": dial tcp ...:
/// connect: connection refused`).
fn transport_message(server: &str, e: &RequestError) -> String {
    match e {
        RequestError::Timeout(d) => format!("{server}: no complete answer within --request-timeout ({}s)", d.as_secs_f64()),
        RequestError::Kube(kube::Error::Api(s)) => s.message.clone(),
        RequestError::Kube(e) => format!("{server}: {}", chain(e)),
    }
}

/// Objects per LIST page: 500, or `KUBECTL_QUOTA_PAGE_SIZE` (tests use a small page to
/// exercise continue tokens).
fn page_size() -> u32 {
    std::env::var("KUBECTL_QUOTA_PAGE_SIZE").ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(500)
}

/// Pages of one LIST beyond which it is taken never to end: 10 million objects at the
/// default 500 a page, far beyond any cluster.
const MAX_PAGES: usize = 20_000;
/// Pages in a row with no item that still ask for more, beyond which a LIST is taken never
/// to end.
const MAX_EMPTY_PAGES: usize = 64;

/// Guards one paginated LIST against a server (or proxy) that would never end it: a continue
/// token it gave before, pages in a row with nothing in them, or more pages than any real list
/// has. `--request-timeout` bounds each page; this bounds them all.
#[derive(Default)]
struct Pages {
    /// Hashes of the tokens given so far (a token can be large; its hash is 8 bytes).
    tokens: std::collections::HashSet<u64>,
    pages: usize,
    empty: usize,
}

impl Pages {
    /// Takes the continue token a page gave: `Err` says why the list would never end.
    fn token(&mut self, server: &str, token: &str) -> Result<(), String> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        token.hash(&mut h);
        self.pages += 1;
        if !self.tokens.insert(h.finish()) {
            return Err(format!("{server} gave page {} the continue token of an earlier page: the list would never end", self.pages));
        }
        if self.pages >= MAX_PAGES {
            return Err(format!("{server} still had more after {MAX_PAGES} pages: the list is taken never to end"));
        }
        Ok(())
    }

    /// Takes the number of items of a page that asks for more.
    fn items(&mut self, server: &str, n: usize) -> Result<(), String> {
        self.empty = if n == 0 { self.empty + 1 } else { 0 };
        if self.empty > MAX_EMPTY_PAGES {
            return Err(format!("{server} gave {} pages in a row with no item, each asking for more: the list would never end", self.empty));
        }
        Ok(())
    }
}

/// Lists every object, a page at a time.
pub async fn list_all<K>(api: Api<K>, what: String, server: String, timeout: Option<Duration>) -> Result<Vec<K>, ReadError>
where
    K: Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut lp = ListParams::default().limit(page_size());
    let mut out = Vec::new();
    let mut pages = Pages::default();
    let endless = |message: String| ReadError { what: what.clone(), forbidden: false, unreachable: true, message };
    loop {
        let page = within(timeout, api.list(&lp)).await.map_err(|e| read_error(&server, what.clone(), e))?;
        let n = page.items.len();
        out.extend(page.items);
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => {
                pages.token(&server, &c).and_then(|()| pages.items(&server, n)).map_err(endless)?;
                lp = lp.continue_token(&c);
            }
            _ => break,
        }
    }
    Ok(out)
}

/// One LIST page as read by [`list_objects`]: the items as JSON without
/// `metadata.managedFields` (server bookkeeping nothing here reads, often most of an item's
/// bytes), and the continue token.
struct SlimPage {
    items: Vec<serde_json::Map<String, serde_json::Value>>,
    next: Option<String>,
}

impl<'de> serde::Deserialize<'de> for SlimPage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
        use serde_json::{Map, Value};
        use std::fmt;

        /// An object (a map) in which the key `skip` is dropped unread; under the key
        /// `nested`, the same with `nested_skip`.
        struct Slim {
            skip: Option<&'static str>,
            nested: Option<(&'static str, &'static str)>,
        }
        impl<'de> DeserializeSeed<'de> for Slim {
            type Value = Map<String, Value>;
            fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_map(self)
            }
        }
        impl<'de> Visitor<'de> for Slim {
            type Value = Map<String, Value>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out = Map::new();
                while let Some(k) = m.next_key::<String>()? {
                    if self.skip == Some(k.as_str()) {
                        m.next_value::<IgnoredAny>()?;
                    } else if let Some((_, skip)) = self.nested.filter(|(key, _)| *key == k) {
                        out.insert(k, Value::Object(m.next_value_seed(Slim { skip: Some(skip), nested: None })?));
                    } else {
                        out.insert(k, m.next_value()?);
                    }
                }
                Ok(out)
            }
        }
        struct Items;
        impl<'de> DeserializeSeed<'de> for Items {
            type Value = Vec<Map<String, Value>>;
            fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_seq(self)
            }
        }
        impl<'de> Visitor<'de> for Items {
            type Value = Vec<Map<String, Value>>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of objects")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Vec::new())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(s.size_hint().unwrap_or(0));
                while let Some(item) = s.next_element_seed(Slim { skip: None, nested: Some(("metadata", "managedFields")) })? {
                    out.push(item);
                }
                Ok(out)
            }
        }
        #[derive(serde::Deserialize, Default)]
        struct ListMeta {
            #[serde(rename = "continue")]
            next: Option<String>,
        }
        struct PageVisitor;
        impl<'de> Visitor<'de> for PageVisitor {
            type Value = SlimPage;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<SlimPage, A::Error> {
                let mut page = SlimPage { items: Vec::new(), next: None };
                while let Some(k) = m.next_key::<String>()? {
                    match k.as_str() {
                        "items" => page.items = m.next_value_seed(Items)?,
                        "metadata" => page.next = m.next_value::<Option<ListMeta>>()?.unwrap_or_default().next,
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(page)
            }
        }
        d.deserialize_map(PageVisitor)
    }
}

/// Lists every object of `K` (in `namespace`, or all), a page at a time, straight into library
/// objects through the file decoder (see [`for_each_object`]).
pub async fn list_objects<K>(conn: &Conn, namespace: Option<&str>, what: String) -> Result<Vec<Object>, ReadError>
where
    K: kube::Resource<DynamicType = ()>,
{
    let mut out = Vec::new();
    for_each_object::<K>(conn, namespace, what, |o| out.push(o)).await?;
    Ok(out)
}

/// Hands every object of `K` (in `namespace`, or all) to `each`, decoded by the file decoder.
/// Each page is read as plain JSON without managedFields and decoded before the next is
/// requested, so neither the API types nor the whole list is ever held. Objects are numbered
/// in list order, as documents of the source `cluster`; items that do not decode are skipped.
pub async fn for_each_object<K>(conn: &Conn, namespace: Option<&str>, what: String, mut each: impl FnMut(Object)) -> Result<(), ReadError>
where
    K: kube::Resource<DynamicType = ()>,
{
    let (api_version, kind) = (K::api_version(&()), K::kind(&()));
    let mut n = 0;
    list_pages(conn, K::url_path(&(), namespace), what, |mut item| {
        n += 1;
        item.insert("apiVersion".into(), api_version.as_ref().into());
        item.insert("kind".into(), kind.as_ref().into());
        let doc = Document { origin: Origin::new("cluster", n), value: serde_json::Value::Object(item) };
        if let Ok(o) = objects::decode(&doc) {
            each(o);
        }
    })
    .await
}

/// The paginated LIST of `url_path`, each item handed to `each` (as [`SlimPage`] reads it),
/// in list order; `--request-timeout` bounds each page. The next page is asked for as soon as
/// its continue token has arrived (it precedes the items), so the server prepares it while
/// this one is parsed (on a blocking thread) and handed out: at most two pages are held.
async fn list_pages(conn: &Conn, url_path: String, what: String, mut each: impl FnMut(serde_json::Map<String, serde_json::Value>)) -> Result<(), ReadError> {
    let request = kube::core::Request::new(url_path);
    let fetch = |token: Option<&str>| {
        let mut lp = ListParams::default().limit(page_size());
        if let Some(c) = token {
            lp = lp.continue_token(c);
        }
        let req = request.list(&lp);
        let (client, timeout) = (conn.client.clone(), conn.timeout);
        tokio::spawn(async move {
            let req = req.map_err(|e| RequestError::Kube(kube::Error::BuildRequest(e)))?;
            within(timeout, client.request_text(req)).await
        })
    };
    let failed = |e: String| ReadError { what: what.clone(), forbidden: false, unreachable: false, message: e };
    let endless = |message: String| ReadError { what: what.clone(), forbidden: false, unreachable: true, message };
    let mut pages = Pages::default();
    let mut next = Some(fetch(None));
    while let Some(task) = next.take() {
        let text = task.await.map_err(|e| failed(e.to_string()))?.map_err(|e| read_error(&conn.server, what.clone(), e))?;
        let early = continue_token(&text);
        if let Some(c) = &early {
            pages.token(&conn.server, c).map_err(endless)?;
            next = Some(fetch(Some(c)));
        }
        let page = tokio::task::spawn_blocking(move || serde_json::from_str::<SlimPage>(&text))
            .await
            .map_err(|e| failed(e.to_string()))?
            .map_err(|e| read_error(&conn.server, what.clone(), RequestError::Kube(kube::Error::SerdeError(e))))?;
        if early.is_none() {
            if let Some(c) = page.next.as_deref().filter(|c| !c.is_empty()) {
                pages.token(&conn.server, c).map_err(endless)?;
                next = Some(fetch(Some(c)));
            }
        }
        if next.is_some() {
            pages.items(&conn.server, page.items.len()).map_err(endless)?;
        }
        page.items.into_iter().for_each(&mut each);
    }
    Ok(())
}

/// The continue token of a LIST page from its text, when the list's metadata precedes its
/// items (as the API server writes it); `None` otherwise, or when there is none.
fn continue_token(text: &str) -> Option<String> {
    let head = &text[..text.find("\"items\":")?];
    let start = head.find("\"continue\":\"")? + "\"continue\":\"".len();
    let token = &head[start..start + head[start..].find('"')?];
    (!token.is_empty() && !token.contains('\\')).then(|| token.to_string())
}

/// Lists the quotas of `namespace` (or every namespace), paginated.
pub async fn quotas(conn: &Conn, namespace: Option<&str>) -> Result<Vec<Object>, ReadError> {
    let mut out = Vec::new();
    for_each_quota(conn, namespace, |o| out.push(o)).await?;
    Ok(out)
}

/// Hands each quota of `namespace` (or every namespace) to `each` as its page arrives.
pub async fn for_each_quota(conn: &Conn, namespace: Option<&str>, each: impl FnMut(Object)) -> Result<(), ReadError> {
    let what = match namespace {
        Some(ns) => format!("list resourcequotas in namespace {ns:?}"),
        None => "list resourcequotas in all namespaces".to_string(),
    };
    for_each_object::<ResourceQuota>(conn, namespace, what, each).await
}

/// What a live check reads: quotas and LimitRanges of each namespace, PriorityClasses,
/// StorageClasses and RuntimeClasses, all at once. A forbidden quota list is fatal; the
/// others degrade to notes saying what the check could not emulate.
pub async fn cluster_state(conn: &Conn, namespaces: &BTreeSet<String>) -> Result<(ClusterState, Vec<String>), ReadError> {
    // Every LIST at once; each decodes its pages straight into library objects.
    fn spawn_list<K: kube::Resource<DynamicType = ()>>(conn: &Conn, ns: Option<&str>, what: String) -> tokio::task::JoinHandle<Result<Vec<Object>, ReadError>> {
        let (conn, ns) = (conn.clone(), ns.map(str::to_string));
        tokio::spawn(async move { list_objects::<K>(&conn, ns.as_deref(), what).await })
    }
    let mut quota_tasks = Vec::new();
    let mut lr_tasks = Vec::new();
    for ns in namespaces {
        quota_tasks.push(spawn_list::<ResourceQuota>(conn, Some(ns), format!("list resourcequotas in namespace {ns:?}")));
        lr_tasks.push(spawn_list::<LimitRange>(conn, Some(ns), format!("list limitranges in namespace {ns:?}")));
    }
    let pcs = spawn_list::<PriorityClass>(conn, None, "list priorityclasses".into());
    let scs = spawn_list::<StorageClass>(conn, None, "list storageclasses".into());
    let rcs = spawn_list::<RuntimeClass>(conn, None, "list runtimeclasses".into());
    // DRA (resource.k8s.io/v1, 1.34+): DeviceClasses, and the claim templates pods name.
    let dcs = spawn_list::<DeviceClass>(conn, None, "list deviceclasses.resource.k8s.io".into());
    let mut tmpl_tasks = Vec::new();
    for ns in namespaces {
        tmpl_tasks.push(spawn_list::<ResourceClaimTemplate>(conn, Some(ns), format!("list resourceclaimtemplates.resource.k8s.io in namespace {ns:?}")));
    }

    fn joined<T>(r: Result<Result<Vec<T>, ReadError>, tokio::task::JoinError>) -> Result<Vec<T>, ReadError> {
        r.unwrap_or_else(|e| Err(ReadError { what: "read".into(), forbidden: false, unreachable: false, message: e.to_string() }))
    }
    let mut state = ClusterState::default();
    let mut notes = Vec::new();
    for t in quota_tasks {
        for o in joined(t.await)? {
            state.add(o, &conn.namespace);
        }
    }
    for t in lr_tasks {
        match joined(t.await) {
            Ok(items) => items.into_iter().for_each(|o| state.add(o, &conn.namespace)),
            Err(e) => notes.push(format!("{e}; LimitRange defaults are not applied")),
        }
    }
    match joined(pcs.await) {
        Ok(items) => {
            state.priority_classes = Some(BTreeMap::new());
            items.into_iter().for_each(|o| state.add(o, &conn.namespace));
        }
        Err(e) => notes.push(format!("{e}; the global default PriorityClass and unknown class names are not checked")),
    }
    match joined(scs.await) {
        Ok(items) => {
            state.storage_classes = Some(Vec::new());
            items.into_iter().for_each(|o| state.add(o, &conn.namespace));
        }
        Err(e) => notes.push(format!("{e}; the default StorageClass is not applied to claims without a class")),
    }
    match joined(rcs.await) {
        Ok(items) => {
            state.runtime_classes = Some(BTreeMap::new());
            items.into_iter().for_each(|o| state.add(o, &conn.namespace));
        }
        Err(e) if e.message.contains("could not find the requested resource") || e.message.contains("404") => {}
        Err(e) => notes.push(format!("{e}; RuntimeClass overhead is not added to pods")),
    }
    let not_served = |e: &ReadError| e.message.contains("could not find the requested resource") || e.message.contains("404");
    // The authorizer answers before the API is looked up: a user who may not list DRA's kinds
    // gets 403 even from a release that serves none (1.20). Discovery, open to every user,
    // tells; asked once, only then.
    let mut dra_served: Option<bool> = None;
    let mut missed = async |e: &ReadError| {
        if !e.forbidden {
            return !not_served(e);
        }
        if dra_served.is_none() {
            dra_served = serves(conn, "resource.k8s.io/v1", "deviceclasses").await;
        }
        dra_served != Some(false)
    };
    match joined(dcs.await) {
        Ok(items) => {
            state.device_classes = Some(Default::default());
            items.into_iter().for_each(|o| state.add(o, &conn.namespace));
        }
        Err(e) => {
            if missed(&e).await {
                notes.push(format!("{e}; DRA extended resource names are not resolved"));
            }
        }
    }
    for t in tmpl_tasks {
        match joined(t.await) {
            Ok(items) => items.into_iter().for_each(|o| state.add(o, &conn.namespace)),
            Err(e) => {
                if missed(&e).await {
                    notes.push(format!("{e}; claims that pods create from templates are not checked"));
                }
            }
        }
    }
    Ok((state, notes))
}

/// GETs that `check` keeps in flight at once to tell creates from updates.
const GETS_IN_FLIGHT: usize = 32;

/// Resolves each document's kind through discovery (fixing guessed plurals and scope) and
/// loads the objects that already exist, so that creating them again is checked as an update.
///
/// Returns what it found worth saying (kinds the cluster does not serve), and what it could
/// not read (the answer is incomplete without it).
pub async fn resolve_and_existing(conn: &Conn, objs: &mut [Object], state: &mut ClusterState) -> (Vec<String>, Vec<String>) {
    let mut notes = Vec::new();
    let mut unread = Vec::new();
    let mut resolved: BTreeMap<(String, String), Option<ApiResource>> = BTreeMap::new();
    // Kinds discovery could not be asked about (forbidden, unreachable): not taken as unserved.
    let mut resolved_unknown: BTreeSet<(String, String)> = BTreeSet::new();
    let mut gets = Vec::new();
    for (i, obj) in objs.iter_mut().enumerate() {
        let key = (obj.type_info.api_version.clone(), obj.type_info.kind.clone());
        if !resolved.contains_key(&key) {
            let (group, version) = match key.0.rsplit_once('/') {
                Some((g, v)) => (g.to_string(), v.to_string()),
                None => (String::new(), key.0.clone()),
            };
            let gvk = GroupVersionKind::gvk(&group, &version, &key.1);
            let found = match within(conn.timeout, kube::discovery::pinned_kind(&conn.client, &gvk)).await {
                Ok((ar, caps)) => {
                    obj.type_info.namespaced = caps.scope == kube::discovery::Scope::Namespaced;
                    Some(ar)
                }
                Err(e) if discovery_has_no(&e) => {
                    notes.push(format!(
                        "{}/{} is not served by this cluster ({}): the API server would refuse it",
                        key.0,
                        key.1,
                        transport_message(&conn.server, &e)
                    ));
                    None
                }
                Err(e) => {
                    unread.push(format!(
                        "cannot tell whether this cluster serves {}/{} ({}): checked with the tool's own resource name",
                        key.0,
                        key.1,
                        transport_message(&conn.server, &e)
                    ));
                    resolved.insert(key.clone(), None);
                    resolved_unknown.insert(key.clone());
                    continue;
                }
            };
            resolved.insert(key.clone(), found);
        }
        let ar = match resolved.get(&key) {
            Some(Some(ar)) => ar,
            // Discovery answered that the kind is not there: kubectl would send nothing.
            Some(None) if !resolved_unknown.contains(&key) => {
                obj.type_info.unserved = true;
                continue;
            }
            _ => continue,
        };
        if obj.type_info.guessed {
            obj.type_info.guessed = false;
        }
        obj.type_info.resource = ar.plural.clone();
        if !obj.type_info.namespaced || obj.meta.generate_name.is_some() {
            continue;
        }
        let ns = obj.meta.namespace.clone().unwrap_or_else(|| conn.namespace.clone());
        gets.push((i, ns, ar.clone(), obj.meta.name.clone()));
    }
    // One concurrent round (a bounded number in flight), handled in document order: a GET per
    // object, or one LIST of the namespace's objects of a kind when more than LIST_FROM
    // documents name it (1,000 pods are one request, not 1,000).
    // (namespace, apiVersion, plural) -> the kind, and (document index, name) of each object.
    type Groups = BTreeMap<(String, String, String), (ApiResource, Vec<(usize, String)>)>;
    let mut groups: Groups = BTreeMap::new();
    for (i, ns, ar, name) in gets {
        groups.entry((ns, ar.api_version.clone(), ar.plural.clone())).or_insert_with(|| (ar, Vec::new())).1.push((i, name));
    }
    type Got = (usize, String, Result<Option<serde_json::Value>, String>);
    let mut found: Vec<Got> = Vec::new();
    let mut running: tokio::task::JoinSet<Vec<Got>> = tokio::task::JoinSet::new();
    for ((ns, _, _), (ar, docs)) in groups {
        if docs.len() > LIST_FROM {
            let conn = conn.clone();
            running.spawn(async move { existing_by_list(&conn, &ns, &ar, docs).await });
            continue;
        }
        for (i, name) in docs {
            if running.len() >= GETS_IN_FLIGHT {
                found.extend(running.join_next().await.and_then(Result::ok).into_iter().flatten());
            }
            let (conn, ns, ar) = (conn.clone(), ns.clone(), ar.clone());
            running.spawn(async move {
                let got = existing_by_get(&conn, &ns, &ar, &name).await;
                vec![(i, ns, got)]
            });
        }
    }
    while let Some(r) = running.join_next().await {
        found.extend(r.into_iter().flatten());
    }
    found.sort_by_key(|(i, _, _)| *i);
    for (i, ns, got) in found {
        let obj = &objs[i];
        match got {
            Ok(Some(value)) => {
                let doc = Document { origin: Origin::new("cluster", 1), value };
                if let Ok(mut o) = objects::decode(&doc) {
                    o.type_info = obj.type_info.clone();
                    o.meta.namespace = Some(ns.clone());
                    state.existing.insert((ns.clone(), obj.type_info.group_resource(), obj.meta.name.clone()), o);
                }
            }
            Ok(None) => {}
            Err(e) => unread.push(format!("cannot read {} {:?} to tell a create from an update: {e}", obj.type_info.group_resource(), obj.meta.name)),
        }
    }
    (notes, unread)
}

/// What a live `check` or `plan` reads before deciding: the state of the documents'
/// namespaces, which of them exist, and the documents' kinds and existing objects.
pub struct LiveState {
    pub state: ClusterState,
    /// Worth saying, and complete: kinds the cluster does not serve.
    pub notes: Vec<String>,
    /// What could not be read: the answer is incomplete without it.
    pub incomplete: Vec<String>,
}

/// Reads what deciding `objs` live needs (see [`LiveState`]); `Err` when the quotas cannot be
/// read, without which nothing can be decided.
pub async fn live_state(conn: &Conn, objs: &mut [Object]) -> Result<LiveState, ReadError> {
    let namespaces: BTreeSet<String> = objs.iter().map(|o| o.meta.namespace.clone().unwrap_or_else(|| conn.namespace.clone())).collect();
    let (mut state, mut incomplete) = cluster_state(conn, &namespaces).await?;
    match namespaces_existing(conn, &namespaces).await {
        Ok(existing) => state.namespaces = Some(existing),
        Err(e) => incomplete.push(format!("{e}; whether the namespace exists is not checked")),
    }
    let (notes, unread) = resolve_and_existing(conn, objs, &mut state).await;
    incomplete.extend(unread);
    Ok(LiveState { state, notes, incomplete })
}

/// Whether the server serves `plural` in `api_version` (`resource.k8s.io/v1`), from
/// discovery, which every authenticated user may read; `None` when discovery did not answer.
async fn serves(conn: &Conn, api_version: &str, plural: &str) -> Option<bool> {
    match within(conn.timeout, conn.client.list_api_group_resources(api_version)).await {
        Ok(list) => Some(list.resources.iter().any(|r| r.name == plural)),
        Err(e) if discovery_has_no(&e) => Some(false),
        Err(_) => None,
    }
}

/// Whether discovery answers that no version `snapshot` reads of `k` is served.
async fn served_nowhere(conn: &Conn, k: &SnapshotKind) -> bool {
    for version in k.versions {
        let api_version = if k.group.is_empty() { version.to_string() } else { format!("{}/{version}", k.group) };
        if serves(conn, &api_version, k.plural).await != Some(false) {
            return false;
        }
    }
    true
}

/// Whether discovery answered that a kind is not served (an unknown group, version or kind),
/// as opposed to not answering at all.
fn discovery_has_no(e: &RequestError) -> bool {
    match e {
        RequestError::Kube(kube::Error::Discovery(_)) => true,
        RequestError::Kube(kube::Error::Api(s)) => s.code == 404,
        _ => false,
    }
}

/// Which of `names` exist as namespaces, with their labels: `Err` (why) when that cannot be
/// read (no `get` on namespaces), in which case the check does not decide it.
pub async fn namespaces_existing(conn: &Conn, names: &BTreeSet<String>) -> Result<BTreeMap<String, BTreeMap<String, String>>, String> {
    let api = Api::<k8s_openapi::api::core::v1::Namespace>::all(conn.client.clone());
    let mut out = BTreeMap::new();
    for name in names {
        match within(conn.timeout, api.get_opt(name)).await {
            Ok(Some(n)) => {
                out.insert(name.clone(), n.metadata.labels.unwrap_or_default());
            }
            Ok(None) => {}
            Err(e) => return Err(format!("cannot read namespace {name:?} ({})", transport_message(&conn.server, &e))),
        }
    }
    Ok(out)
}

/// Documents of one namespace and kind above which `resolve_and_existing` LISTs the kind
/// instead of GETting each object.
const LIST_FROM: usize = 16;

/// The object `name` as the server has it (`None`: it does not exist), as JSON with its
/// apiVersion and kind; `Err`: why it could not be read.
async fn existing_by_get(conn: &Conn, ns: &str, ar: &ApiResource, name: &str) -> Result<Option<serde_json::Value>, String> {
    let api: Api<DynamicObject> = Api::namespaced_with(conn.client.clone(), ns, ar);
    match within(conn.timeout, api.get_opt(name)).await {
        Ok(Some(o)) => Ok(serde_json::to_value(&o).ok()),
        Ok(None) => Ok(None),
        Err(e) => Err(transport_message(&conn.server, &e)),
    }
}

/// [`existing_by_get`] for many objects of one kind in one namespace, from one paginated
/// LIST (items without managedFields). When the LIST fails (a user who may GET but not LIST),
/// the objects are read one by one.
async fn existing_by_list(
    conn: &Conn,
    ns: &str,
    ar: &ApiResource,
    docs: Vec<(usize, String)>,
) -> Vec<(usize, String, Result<Option<serde_json::Value>, String>)> {
    let mut wanted: BTreeMap<&str, Option<serde_json::Value>> = docs.iter().map(|(_, name)| (name.as_str(), None)).collect();
    let what = format!("list {} in namespace {ns:?}", ar.plural);
    let listed = list_pages(conn, DynamicObject::url_path(ar, Some(ns)), what, |mut item| {
        let Some(slot) = item.get("metadata").and_then(|m| m.get("name")).and_then(serde_json::Value::as_str).and_then(|n| wanted.get_mut(n)) else {
            return;
        };
        item.insert("apiVersion".into(), ar.api_version.as_str().into());
        item.insert("kind".into(), ar.kind.as_str().into());
        *slot = Some(serde_json::Value::Object(item));
    })
    .await;
    if listed.is_err() {
        let mut out = Vec::with_capacity(docs.len());
        for (i, name) in docs {
            let got = existing_by_get(conn, ns, ar, &name).await;
            out.push((i, ns.to_string(), got));
        }
        return out;
    }
    // (A name twice in the documents gets the same object twice, as two GETs would.)
    docs.iter().map(|(i, name)| (*i, ns.to_string(), Ok(wanted.get(name.as_str()).cloned().flatten()))).collect()
}

/// A kind `snapshot` saves: where it is served and whether it lives in a namespace.
struct SnapshotKind {
    group: &'static str,
    versions: &'static [&'static str],
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    /// Optional API: not served by every cluster (a note, not an error, when absent).
    optional: bool,
}

/// What `snapshot` saves, in the order it prints them: what admission consults, then the
/// namespace's workloads and their pods and claims.
const SNAPSHOT_KINDS: &[SnapshotKind] = &[
    SnapshotKind { group: "", versions: &["v1"], kind: "ResourceQuota", plural: "resourcequotas", namespaced: true, optional: false },
    SnapshotKind { group: "", versions: &["v1"], kind: "LimitRange", plural: "limitranges", namespaced: true, optional: false },
    SnapshotKind { group: "scheduling.k8s.io", versions: &["v1"], kind: "PriorityClass", plural: "priorityclasses", namespaced: false, optional: false },
    SnapshotKind { group: "storage.k8s.io", versions: &["v1"], kind: "StorageClass", plural: "storageclasses", namespaced: false, optional: false },
    SnapshotKind { group: "node.k8s.io", versions: &["v1", "v1beta1"], kind: "RuntimeClass", plural: "runtimeclasses", namespaced: false, optional: true },
    SnapshotKind {
        group: "resource.k8s.io",
        versions: &["v1", "v1beta2", "v1beta1"],
        kind: "DeviceClass",
        plural: "deviceclasses",
        namespaced: false,
        optional: true,
    },
    // The templates pods' claims are made from (DRA, like DeviceClasses).
    SnapshotKind {
        group: "resource.k8s.io",
        versions: &["v1", "v1beta2", "v1beta1"],
        kind: "ResourceClaimTemplate",
        plural: "resourceclaimtemplates",
        namespaced: true,
        optional: true,
    },
    SnapshotKind { group: "apps", versions: &["v1"], kind: "Deployment", plural: "deployments", namespaced: true, optional: false },
    SnapshotKind { group: "apps", versions: &["v1"], kind: "ReplicaSet", plural: "replicasets", namespaced: true, optional: false },
    SnapshotKind { group: "apps", versions: &["v1"], kind: "StatefulSet", plural: "statefulsets", namespaced: true, optional: false },
    SnapshotKind { group: "apps", versions: &["v1"], kind: "DaemonSet", plural: "daemonsets", namespaced: true, optional: false },
    SnapshotKind { group: "batch", versions: &["v1"], kind: "Job", plural: "jobs", namespaced: true, optional: false },
    SnapshotKind { group: "batch", versions: &["v1", "v1beta1"], kind: "CronJob", plural: "cronjobs", namespaced: true, optional: false },
    SnapshotKind { group: "", versions: &["v1"], kind: "ReplicationController", plural: "replicationcontrollers", namespaced: true, optional: false },
    SnapshotKind { group: "", versions: &["v1"], kind: "Pod", plural: "pods", namespaced: true, optional: false },
    SnapshotKind { group: "", versions: &["v1"], kind: "PersistentVolumeClaim", plural: "persistentvolumeclaims", namespaced: true, optional: false },
];

/// Server-set metadata that says nothing to admission and changes on every read. A
/// StorageClass keeps its creationTimestamp: with several default classes the newest wins.
fn trim_metadata(kind: &str, value: &mut serde_json::Value) {
    let Some(meta) = value.get_mut("metadata").and_then(serde_json::Value::as_object_mut) else { return };
    for field in ["managedFields", "uid", "resourceVersion", "generation", "selfLink"] {
        meta.remove(field);
    }
    if kind != "StorageClass" {
        meta.remove("creationTimestamp");
    }
    if let Some(a) = meta.get_mut("annotations").and_then(serde_json::Value::as_object_mut) {
        a.remove("kubectl.kubernetes.io/last-applied-configuration");
        if a.is_empty() {
            meta.remove("annotations");
        }
    }
    if let Some(refs) = meta.get_mut("ownerReferences").and_then(serde_json::Value::as_array_mut) {
        refs.iter_mut().filter_map(serde_json::Value::as_object_mut).for_each(|r| {
            r.remove("uid");
        });
    }
}

fn is_not_served(e: &ReadError) -> bool {
    e.message.contains("could not find the requested resource") || e.message.contains("404") || e.message.contains("not found")
}

/// Which namespaces `snapshot` reads: one, or all.
#[derive(Clone, Copy)]
pub enum Scope<'a> {
    Namespace(&'a str),
    All,
}

/// What `snapshot` read: the objects, notes for standard error, the server's version, and the
/// cluster-scoped kinds it was not allowed to list.
pub struct Snapshot {
    /// API objects (apiVersion and kind set, server-set metadata trimmed; fields in name
    /// order, so apiVersion, kind, metadata, spec, status), sorted by kind order, namespace,
    /// name.
    pub items: Vec<serde_json::Value>,
    pub notes: Vec<String>,
    /// The server's gitVersion (`v1.20.2`), when `/version` answered.
    pub server_version: Option<String>,
    /// Cluster-scoped kinds and optional APIs the user may not list, as `plural.group`
    /// (`priorityclasses.scheduling.k8s.io`): none of them is saved.
    pub not_read: Vec<String>,
    /// The one namespace a snapshot of a namespace covers (`None`: every namespace): which
    /// namespaces exist is known for it alone.
    pub namespace: Option<String>,
}

/// Everything offline `check`, `plan` and `describe` consult, and the server's version.
/// Optional APIs the server does not serve are skipped with a note, and so are cluster-scoped
/// kinds and optional APIs the user may not list (the `view` ClusterRole cannot list
/// PriorityClasses, for one), which are also recorded; any other failed read is an error,
/// naming the server.
pub async fn snapshot(conn: &Conn, scope: Scope<'_>) -> Result<Snapshot, ReadError> {
    let version = {
        let conn = conn.clone();
        tokio::spawn(async move { server_version(&conn).await })
    };
    let mut tasks = Vec::new();
    for k in SNAPSHOT_KINDS {
        let client = conn.client.clone();
        let (server, timeout) = (conn.server.clone(), conn.timeout);
        let ns = match scope {
            Scope::Namespace(ns) => Some(ns.to_string()),
            Scope::All => None,
        };
        tasks.push(tokio::spawn(async move {
            let mut last = None;
            for version in k.versions {
                let gvk = GroupVersionKind::gvk(k.group, version, k.kind);
                let ar = ApiResource::from_gvk_with_plural(&gvk, k.plural);
                let (api, what) = match (&ns, k.namespaced) {
                    (Some(ns), true) => (Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar), format!("list {} in namespace {ns:?}", k.plural)),
                    _ => (Api::<DynamicObject>::all_with(client.clone(), &ar), format!("list {}", k.plural)),
                };
                match list_all(api, what, server.clone(), timeout).await {
                    Ok(items) => return Ok((ar.api_version.clone(), items)),
                    Err(e) if !e.forbidden && is_not_served(&e) => last = Some(e),
                    Err(e) => return Err(e),
                }
            }
            Err(last.expect("every kind has a version"))
        }));
    }
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut not_read = Vec::new();
    for (k, t) in SNAPSHOT_KINDS.iter().zip(tasks) {
        let r = t.await.unwrap_or_else(|e| Err(ReadError { what: "read".into(), forbidden: false, unreachable: false, message: e.to_string() }));
        let group = if k.group.is_empty() { "core" } else { k.group };
        // The authorizer answers before the API is looked up: an optional API may be
        // forbidden on a cluster that does not even serve it. Discovery tells.
        let unserved = match &r {
            Err(e) if k.optional && e.forbidden => served_nowhere(conn, k).await,
            Err(e) => k.optional && is_not_served(e),
            Ok(_) => false,
        };
        if unserved {
            notes.push(format!("this cluster does not serve {} ({group}): none saved", k.plural));
            continue;
        }
        let (api_version, items) = match r {
            Ok(x) => x,
            Err(e) if e.forbidden && (!k.namespaced || k.optional) => {
                notes.push(format!("{e}; none saved, and the snapshot records that they are missing"));
                not_read.push(format!("{}.{group}", k.plural));
                continue;
            }
            Err(e) => return Err(e.on(&conn.server)),
        };
        let mut values: Vec<serde_json::Value> = items
            .into_iter()
            .filter_map(|item| {
                let mut v = serde_json::to_value(&item).ok()?;
                let o = v.as_object_mut()?;
                o.insert("apiVersion".into(), api_version.clone().into());
                o.insert("kind".into(), k.kind.into());
                trim_metadata(k.kind, &mut v);
                Some(v)
            })
            .collect();
        let key = |v: &serde_json::Value| {
            let m = &v["metadata"];
            (m["namespace"].as_str().unwrap_or("").to_string(), m["name"].as_str().unwrap_or("").to_string())
        };
        values.sort_by_key(key);
        out.extend(values);
    }
    // Which namespaces exist, first in the List: a check of an object in another is refused
    // offline as the server refuses it.
    match snapshot_namespaces(conn, &scope).await {
        Ok(namespaces) => {
            if let (Scope::Namespace(ns), true) = (&scope, namespaces.is_empty()) {
                notes.push(format!("namespace {ns:?} does not exist: offline checks of the snapshot refuse objects in it, as the server does"));
            }
            out.splice(0..0, namespaces);
        }
        Err(e) if e.forbidden => {
            notes.push(format!("{e}; the snapshot records that it does not know which namespaces exist"));
            not_read.push("namespaces.core".into());
        }
        Err(e) => return Err(e.on(&conn.server)),
    }
    let server_version = match version.await.map_err(|e| e.to_string()).and_then(|r| r) {
        Ok((raw, _)) => Some(raw),
        Err(e) => {
            notes.push(format!(
                "the server's version could not be read ({e}): the snapshot records none, so offline checks on it answer with the rules of {} unless given --kubernetes-version",
                kubectl_quota_engine::version::NEWEST
            ));
            None
        }
    };
    let namespace = match scope {
        Scope::Namespace(ns) => Some(ns.to_string()),
        Scope::All => None,
    };
    Ok(Snapshot { items: out, notes, server_version, not_read, namespace })
}

/// The namespaces a snapshot covers that exist (the one it was taken of, or all of them), as
/// Namespace objects with their name and labels only: what an offline check consults
/// (whether a namespace exists; its admin-access label). Nothing else of theirs is kept, so
/// two snapshots of an unchanged namespace are the same file.
async fn snapshot_namespaces(conn: &Conn, scope: &Scope<'_>) -> Result<Vec<serde_json::Value>, ReadError> {
    let api = Api::<k8s_openapi::api::core::v1::Namespace>::all(conn.client.clone());
    let found = match scope {
        Scope::Namespace(ns) => {
            let what = format!("get namespace {ns:?}");
            within(conn.timeout, api.get_opt(ns)).await.map_err(|e| read_error(&conn.server, what, e))?.into_iter().collect()
        }
        Scope::All => list_all(api, "list namespaces".into(), conn.server.clone(), conn.timeout).await?,
    };
    let mut out: Vec<serde_json::Value> = found
        .into_iter()
        .filter_map(|n| {
            let name = n.metadata.name?;
            let mut meta = serde_json::json!({ "name": name });
            if let Some(labels) = n.metadata.labels.filter(|l| !l.is_empty()) {
                meta["labels"] = serde_json::json!(labels);
            }
            Some(serde_json::json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": meta }))
        })
        .collect();
    out.sort_by(|a, b| a["metadata"]["name"].as_str().cmp(&b["metadata"]["name"].as_str()));
    Ok(out)
}

/// A workload as `why` reads it: the object, what it owns (ReplicaSets of a Deployment, Jobs
/// of a CronJob), and the events of all of them.
pub struct WorkloadRead {
    pub object: serde_json::Value,
    pub children: Vec<serde_json::Value>,
    pub events: Vec<kubectl_quota_engine::why::Event>,
}

/// Reads a workload by kind (as kubectl spells it: `deployment`, `deploy`, `sts`, ...) and
/// name, what it owns and their events. `Ok(None)` when the kind is not a workload.
pub async fn workload(conn: &Conn, namespace: &str, kind: &str, name: &str) -> Result<Option<WorkloadRead>, ReadError> {
    let (group, version, kind, plural, child) = match kind.to_lowercase().as_str() {
        "deployment" | "deployments" | "deploy" | "deployment.apps" => {
            ("apps", "v1", "Deployment", "deployments", Some(("apps", "v1", "ReplicaSet", "replicasets")))
        }
        "replicaset" | "replicasets" | "rs" | "replicaset.apps" => ("apps", "v1", "ReplicaSet", "replicasets", None),
        "statefulset" | "statefulsets" | "sts" | "statefulset.apps" => ("apps", "v1", "StatefulSet", "statefulsets", None),
        "daemonset" | "daemonsets" | "ds" | "daemonset.apps" => ("apps", "v1", "DaemonSet", "daemonsets", None),
        "job" | "jobs" | "job.batch" => ("batch", "v1", "Job", "jobs", None),
        "cronjob" | "cronjobs" | "cj" | "cronjob.batch" => ("batch", "v1beta1", "CronJob", "cronjobs", Some(("batch", "v1", "Job", "jobs"))),
        "replicationcontroller" | "replicationcontrollers" | "rc" => ("", "v1", "ReplicationController", "replicationcontrollers", None),
        _ => return Ok(None),
    };
    let c = &conn.client;
    let get = |g: &str, v: &str, k: &str, p: &str| {
        let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(g, v, k), p);
        (Api::<DynamicObject>::namespaced_with(c.clone(), namespace, &ar), ar.api_version)
    };
    // CronJob is batch/v1 from Kubernetes 1.21, batch/v1beta1 before.
    let mut versions = vec![version];
    if kind == "CronJob" {
        versions.insert(0, "v1");
    }
    let mut found = None;
    for v in versions {
        let (api, av) = get(group, v, kind, plural);
        match api.get_opt(name).await {
            Ok(Some(o)) => {
                found = Some((o, av));
                break;
            }
            Ok(None) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(read_error(&conn.server, format!("get {plural} {name:?} in namespace {namespace:?}"), RequestError::Kube(e))),
        }
    }
    let Some((obj, av)) = found else {
        return Err(ReadError {
            what: format!("get {plural} {name:?} in namespace {namespace:?}"),
            forbidden: false,
            unreachable: false,
            message: "not found".into(),
        });
    };
    let with_type = |o: &DynamicObject, av: &str, k: &str| {
        let mut v = serde_json::to_value(o).unwrap_or_default();
        if let Some(m) = v.as_object_mut() {
            m.insert("apiVersion".into(), av.into());
            m.insert("kind".into(), k.into());
        }
        v
    };
    let object = with_type(&obj, &av, kind);
    let mut children = Vec::new();
    if let Some((g, v, k, p)) = child {
        let (api, cav) = get(g, v, k, p);
        let items = list_all(api, format!("list {p} in namespace {namespace:?}"), conn.server.clone(), conn.timeout).await?;
        for o in items {
            let owned = o.metadata.owner_references.iter().flatten().any(|r| r.kind == kind && r.name == name);
            if owned {
                children.push(with_type(&o, &cav, k));
            }
        }
    }
    let events_api = Api::<k8s_openapi::api::core::v1::Event>::namespaced(c.clone(), namespace);
    let mut events = Vec::new();
    let mut involved: Vec<String> = vec![name.to_string()];
    involved.extend(children.iter().filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string)));
    for who in involved {
        let lp = ListParams::default().fields(&format!("involvedObject.name={who}"));
        let list =
            events_api.list(&lp).await.map_err(|e| read_error(&conn.server, format!("list events in namespace {namespace:?}"), RequestError::Kube(e)))?;
        for e in list.items {
            let last = e.last_timestamp.as_ref().map(|t| t.0.to_string()).or_else(|| e.event_time.as_ref().map(|t| t.0.to_string())).unwrap_or_default();
            events.push(kubectl_quota_engine::why::Event {
                object: format!("{}/{}", e.involved_object.kind.clone().unwrap_or_default().to_lowercase(), who),
                reason: e.reason.unwrap_or_default(),
                message: e.message.unwrap_or_default(),
                count: e.count.unwrap_or(1),
                last_seen: last,
            });
        }
    }
    Ok(Some(WorkloadRead { object, children, events }))
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
    list_all(api, "list namespaces".into(), conn.server.clone(), conn.timeout)
        .await
        .map(|v| v.into_iter().filter_map(|n| n.metadata.name).collect())
        .unwrap_or_default()
}

/// Creates a quota (or submits it with dryRun=All).
/// Errors: `(message, unreachable)`; an unreachable server is exit status 2, a refusal 1.
pub async fn create_quota(conn: &Conn, namespace: &str, quota: &ResourceQuota, dry_run: bool) -> Result<ResourceQuota, (String, bool)> {
    let api = Api::<ResourceQuota>::namespaced(conn.client.clone(), namespace);
    let pp = PostParams { dry_run, field_manager: Some("kubectl-quota".into()) };
    within(conn.timeout, api.create(&pp, quota)).await.map_err(|e| match e {
        RequestError::Kube(kube::Error::Api(s)) => (s.message.clone(), false),
        other => (transport_message(&conn.server, &other), true),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_continue_token_is_read_before_its_items() {
        let cases = [
            (
                r#"{"kind":"ResourceQuotaList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"eyJ2IjoibWV0YSJ9","remainingItemCount":3},"items":[]}"#,
                Some("eyJ2IjoibWV0YSJ9"),
            ),
            (r#"{"kind":"ResourceQuotaList","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"continue"}}]}"#, None),
            (r#"{"items":[{"metadata":{"continue":"x"}}],"metadata":{"continue":"y"}}"#, None),
            (r#"{"metadata":{"continue":""},"items":[]}"#, None),
            (r#"{"metadata":{"continue":"a\"b"},"items":[]}"#, None),
            ("not json", None),
        ];
        for (text, want) in cases {
            assert_eq!(continue_token(text).as_deref(), want, "{text}");
        }
    }

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
        assert!(parse_duration("18446744073709551615h").unwrap_err().contains("maximum"));
        assert!(parse_duration("99999999999999999999999").unwrap_err().contains("maximum"));
        assert!(parse_duration("8761h").is_err());
        assert_eq!(parse_duration("8760h").unwrap(), Some(Duration::from_secs(8760 * 3600)));
        assert!(parse_duration("5d").is_err());
    }

    #[test]
    fn snapshot_trims_server_set_metadata_but_keeps_what_admission_reads() {
        let meta = serde_json::json!({
            "name": "x", "namespace": "ns", "uid": "u", "resourceVersion": "7", "generation": 2, "creationTimestamp": "2026-01-01T00:00:00Z",
            "managedFields": [{}], "labels": {"app": "x"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "storageclass.kubernetes.io/is-default-class": "true"},
            "ownerReferences": [{"kind": "ReplicaSet", "name": "x-1", "uid": "u2"}]
        });
        let cases = [
            (
                "Pod",
                serde_json::json!({"name": "x", "namespace": "ns", "labels": {"app": "x"}, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}, "ownerReferences": [{"kind": "ReplicaSet", "name": "x-1"}]}),
            ),
            // The newest default StorageClass wins: its creationTimestamp stays.
            (
                "StorageClass",
                serde_json::json!({"name": "x", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"app": "x"}, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}, "ownerReferences": [{"kind": "ReplicaSet", "name": "x-1"}]}),
            ),
        ];
        for (kind, want) in cases {
            let mut v = serde_json::json!({"metadata": meta.clone()});
            trim_metadata(kind, &mut v);
            assert_eq!(v["metadata"], want, "{kind}");
        }
    }
}
