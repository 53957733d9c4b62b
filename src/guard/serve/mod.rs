//! `guard serve`: the webhook's HTTPS server. `POST /validate` answers AdmissionReviews from
//! the caches (no API call while a request waits, but one GET of the workload an autoscaler
//! being created or changed targets); `/healthz`, `/readyz` (200 once every cached
//! kind has been listed), `/metrics` (Prometheus text) and `/status` (JSON, what `guard status`
//! reads) tell how it is doing.
//!
//! Every read is bounded: a connection's TLS handshake and request headers get 8 to 10 s
//! (spread, so that connections opened together, an attacker's, do not all end and come back
//! together), a body [`MAX_REVIEW_BYTES`] and 10 s, and at most [`MAX_CONNECTIONS`] connections
//! are served at once. When they are all taken, the connection that has been unproductive the longest is
//! closed at once for the new one: one still in its TLS handshake, still sending its request
//! head or body, or idle between requests, oldest first (since it was accepted or last
//! answered). Only a connection whose review is being decided or answered is kept; when every
//! one is, the new connection is closed (the API server calls with `failurePolicy: Ignore`).
//! The accept loop never waits: idle or slow connections, held open by a client or by an
//! attacker, never keep a review on another connection waiting (bench/guard-attack.sh).
//! A review of
//! [`LARGE_REVIEW_BYTES`] or more is decided on the blocking pool, at most [`LARGE_DECISIONS`]
//! at once, so that large objects never hold the threads the normal reviews are answered on;
//! the others wait unread, so that memory holds only the ones being decided.
//! Whatever goes wrong, the answer comes quickly: the API server calls with `failurePolicy:
//! Ignore` and a short timeout, so an error or silence never blocks admission.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use kubectl_quota_engine::check::CheckOptions;
use kubectl_quota_engine::version::{Rules, VersionReport};

use super::cache::Cache;
use super::metrics::Metrics;
use super::review::{self, Why, LABEL};
use super::tls::Reloading;

mod connections;
use connections::{exhausted, Open, Tracked};
#[cfg(test)]
use connections::{Admit, Conn};

/// The largest AdmissionReview read: the API server takes objects of up to 3 MiB, and a
/// review of an update carries two of them.
pub const MAX_REVIEW_BYTES: usize = 8 << 20;
/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 1024;
/// The bound on a TLS handshake, on request headers, and on a request's body.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How much earlier than [`READ_TIMEOUT`] a connection's handshake and headers may be cut,
/// spread over the connections (see [`deadline`]).
const SPREAD_MS: u64 = 2000;

/// The bound on the TLS handshake and on each request's headers of the connection numbered
/// `id`: between [`READ_TIMEOUT`] less [`SPREAD_MS`] and [`READ_TIMEOUT`], evenly spread over
/// consecutive connections. 1,000 slow connections opened at once would otherwise all be cut
/// at once and, opened again at once, make 1,000 TLS handshakes queue before a review's.
fn deadline(id: u64) -> Duration {
    READ_TIMEOUT - Duration::from_millis(id.wrapping_mul(7919) % SPREAD_MS)
}
/// A review body at least this large is decided off the request threads.
pub const LARGE_REVIEW_BYTES: usize = 256 << 10;
/// Large reviews decided at once; more wait for their turn, unread (normal ones never do). One:
/// the largest review the API server sends (an UPDATE of 3 MiB new, 1.5 MiB old) takes the
/// whole process from 28 MB to 40-90 MB as workloads are shaped, and to 165 MB when its 3 MiB
/// are 19,000 containers; the pod's limit is 256Mi, its CPU often one core
/// (bench/review-memory.sh).
pub const LARGE_DECISIONS: usize = 1;
/// A review body at least this large (and under [`LARGE_REVIEW_BYTES`]) takes one of the
/// [`MEDIUM_READS`] turns before it is read on. The API server's reviews of Pods and
/// workloads are a few KiB; without this, 1,024 connections each sending 255 KiB would hold
/// 255 MiB at once.
pub const MEDIUM_REVIEW_BYTES: usize = 64 << 10;
/// Medium reviews read and decided at once: with the connection cap, what review bodies can
/// hold together is bounded by 1,024 × 64 KiB + 32 × 256 KiB + one large review: 80 MiB
/// with the largest.
pub const MEDIUM_READS: usize = 32;

/// What every request handler shares.
pub struct App {
    pub cache: Arc<Cache>,
    pub metrics: Metrics,
    pub rules: Rules,
    /// The server's version and where the rules come from, for `/status`.
    pub kubernetes: VersionReport,
    pub limited: Vec<kubectl_quota_engine::admission::LimitedResource>,
    pub pod_security: Option<kubectl_quota_engine::admission::pod_security::Config>,
    /// Namespaces the guard never speaks about (kube-system, its own).
    pub excluded: Vec<String>,
    /// Turns of the large reviews ([`LARGE_DECISIONS`]).
    pub large: Arc<tokio::sync::Semaphore>,
    /// Turns of the medium ones ([`MEDIUM_READS`]).
    pub medium: Arc<tokio::sync::Semaphore>,
    /// Where an autoscaler's target is read (`None`: nowhere, its target is taken as unknown).
    pub targets: Option<crate::live::Conn>,
    /// Dry runs of the pods mutating webhooks see (`None`: not asked for; the webhooks are
    /// named).
    pub dry_runs: Option<super::dry_run::DryRuns>,
    /// How long a review may take from its arrival to its answer ([`DECIDE_WITHIN`] unless
    /// told): past it, it is answered allowed with [`review::late`]'s warning.
    pub decide_within: Duration,
}

/// The default of `--decision-timeout`: well within the 2 s `guard install` gives the webhook
/// (`timeoutSeconds`), so the API server always has the guard's answer, never a timeout.
pub const DECIDE_WITHIN: Duration = Duration::from_millis(1500);

/// How long the workload an autoscaler targets is waited for: well within the API server's
/// 2 s for the whole answer.
pub const TARGET_TIMEOUT: Duration = Duration::from_secs(1);

/// Serves on `listen` until the process ends.
pub async fn serve(app: Arc<App>, listen: SocketAddr, tls: Arc<Reloading>) -> Result<(), String> {
    raise_open_files_limit();
    let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    crate::error::print_err(&format!("guard: serving https://{}/validate\n", listener.local_addr().map_err(|e| e.to_string())?));
    serve_on(app, listener, tls, MAX_CONNECTIONS).await;
    Ok(())
}

/// Raises the soft limit on open files to the hard one, as Go programs do: a soft limit of
/// 1024 (systemd's, some runtimes') would make `accept` fail before [`MAX_CONNECTIONS`] are
/// open. Failing is harmless (the limit stays).
fn raise_open_files_limit() {
    #[cfg(unix)]
    // SAFETY: getrlimit and setrlimit read and write the `rlimit` passed, nothing else.
    unsafe {
        let mut l = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 && l.rlim_cur < l.rlim_max {
            l.rlim_cur = l.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &l);
        }
    }
}

/// Serves connections from `listener`, at most `cap` at once (see the module comment).
pub async fn serve_on(app: Arc<App>, listener: tokio::net::TcpListener, tls: Arc<Reloading>, cap: usize) {
    let open = Arc::new(std::sync::Mutex::new(Open::default()));
    loop {
        let tcp = match listener.accept().await {
            Ok((tcp, _)) => tcp,
            // Out of file descriptors, say: wait a moment rather than spin.
            Err(e) if exhausted(&e) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(_) => continue,
        };
        // Never waits: a slot is free, or made free, or the connection is closed.
        let Some(tracked) = Tracked::admit(&open, cap, &app) else { continue };
        let _ = tcp.set_nodelay(true);
        let acceptor = tokio_rustls::TlsAcceptor::from(tls.current());
        let app = app.clone();
        tokio::spawn(async move {
            let tracked = Arc::new(tracked);
            let close = tracked.close.clone();
            let deadline = deadline(tracked.id);
            let stream = tokio::select! {
                s = tokio::time::timeout(deadline, acceptor.accept(tcp)) => match s {
                    Ok(Ok(s)) => s,
                    _ => return,
                },
                _ = close.notified() => return,
            };
            let t = tracked.clone();
            let service = hyper::service::service_fn(move |req| {
                let (app, t) = (app.clone(), t.clone());
                async move {
                    let r = handle(app, req, &t).await;
                    t.set_busy(false);
                    r
                }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(deadline)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = close.notified() => {
                    // A review being decided is answered first; anything else (a request head
                    // or body on its way, or nothing) is dropped at once: a graceful shutdown
                    // would wait for a head to arrive, or for its 10 s.
                    if tracked.busy() {
                        conn.as_mut().graceful_shutdown();
                        let _ = conn.await;
                    }
                }
            }
        });
    }
}

fn reply(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_str(content_type).unwrap_or(http::HeaderValue::from_static("text/plain")));
    r
}

fn text(status: StatusCode, body: impl Into<String>) -> Response<Full<Bytes>> {
    reply(status, "text/plain; charset=utf-8", body.into() + "\n")
}

async fn handle(app: Arc<App>, req: Request<Incoming>, t: &Tracked) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_string();
    if req.method() != Method::POST {
        // Answered at once: nothing more to read.
        t.set_busy(true);
    }
    Ok(match (req.method(), path.as_str()) {
        (&Method::POST, "/validate") => validate(&app, req, || t.set_busy(true)).await,
        (&Method::GET, "/healthz") => text(StatusCode::OK, "ok"),
        (&Method::GET, "/readyz") => {
            if app.cache.ready() {
                text(StatusCode::OK, "ok")
            } else {
                let waiting: Vec<&str> = app.cache.report().iter().filter(|k| !k.synced).map(|k| k.kind.resource()).collect();
                text(StatusCode::SERVICE_UNAVAILABLE, format!("not ready: waiting for the first list of {}", waiting.join(", ")))
            }
        }
        (&Method::GET, "/metrics") => reply(StatusCode::OK, "text/plain; version=0.0.4; charset=utf-8", app.metrics.render(&app.cache)),
        (&Method::GET, "/status") => reply(StatusCode::OK, "application/json", status(&app).to_string()),
        (_, "/validate" | "/healthz" | "/readyz" | "/metrics" | "/status") => {
            app.metrics.bad_request();
            text(StatusCode::METHOD_NOT_ALLOWED, format!("{} is not allowed on {path}", req.method()))
        }
        _ => {
            app.metrics.bad_request();
            text(StatusCode::NOT_FOUND, format!("no such path: {}", crate::escape::escape(&path)))
        }
    })
}

/// What `/status` says: ready or not, the release whose rules answer, each cache.
pub fn status(app: &App) -> serde_json::Value {
    let caches: Vec<serde_json::Value> = app
        .cache
        .report()
        .iter()
        .map(|k| serde_json::json!({"resource": k.kind.resource(), "synced": k.synced, "objects": k.objects, "ageSeconds": k.age_seconds, "failures": k.failures, "lists": k.lists}))
        .collect();
    serde_json::json!({
        "ready": app.cache.ready(),
        "kubernetes": app.kubernetes,
        "uptimeSeconds": app.cache.uptime_seconds(),
        "requests": app.metrics.requests(),
        "caches": caches,
    })
}

/// Reads and answers one review; `read` is called once its body has been read whole, when it
/// becomes productive (its connection is no longer one to close for room).
async fn validate<B>(app: &Arc<App>, req: Request<B>, read: impl FnOnce()) -> Response<Full<Bytes>>
where
    B: hyper::body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let arrived = Instant::now();
    let (body, turn) = match tokio::time::timeout(READ_TIMEOUT, read_body(app, req)).await {
        Ok(Ok(b)) => {
            read();
            b
        }
        Ok(Err(Unread::TooLarge)) => {
            app.metrics.bad_request();
            return text(StatusCode::PAYLOAD_TOO_LARGE, format!("the AdmissionReview is larger than {MAX_REVIEW_BYTES} bytes"));
        }
        Ok(Err(Unread::Failed(e))) => {
            app.metrics.bad_request();
            return text(StatusCode::BAD_REQUEST, format!("cannot read the body: {e}"));
        }
        Err(_) => {
            app.metrics.bad_request();
            return text(StatusCode::REQUEST_TIMEOUT, format!("the body did not arrive within {} s", READ_TIMEOUT.as_secs()));
        }
    };
    if !matches!(turn, Turn::Large(_)) {
        return decide_body(app, body, arrived, turn).await;
    }
    // A large review is read and decided off the request threads, on a thread of its own at a
    // lower priority, in the turn it took to be read: the request threads stay free for the
    // normal ones.
    let app = app.clone();
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new().name("guard-large".into()).spawn(move || {
        yield_to_normal_reviews();
        let _ = tx.send(handle.block_on(decide_body(&app, body, arrived, turn)));
    });
    match spawned {
        Ok(_) => rx.await.unwrap_or_else(|_| text(StatusCode::INTERNAL_SERVER_ERROR, "the decision failed")),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("the decision failed: {e}")),
    }
}

/// Gives the calling thread (one of its own, deciding a large review) nice 10, about
/// a tenth of a normal thread's share of a busy CPU, for good (it cannot be raised back, so the
/// thread ends with its review):
/// on a guard given one CPU, the request threads answering normal reviews then run almost as
/// if no large one were being decided. Linux only (elsewhere the call would lower the whole
/// process); failing is harmless.
fn yield_to_normal_reviews() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread's own id, no memory passed.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        if libc::getpriority(libc::PRIO_PROCESS, tid) < 10 {
            libc::setpriority(libc::PRIO_PROCESS, tid, 10);
        }
    }
}

/// Why a review's body was not read.
enum Unread {
    TooLarge,
    Failed(String),
}

/// The turn a review's body took to be read, held until it is answered.
enum Turn {
    /// Under [`MEDIUM_REVIEW_BYTES`]: never waits.
    Normal,
    /// One of the [`MEDIUM_READS`].
    Medium(#[allow(dead_code)] tokio::sync::OwnedSemaphorePermit),
    /// One of the [`LARGE_DECISIONS`]: decided on a thread of its own.
    Large(#[allow(dead_code)] tokio::sync::OwnedSemaphorePermit),
}

impl Turn {
    /// The turn a body of `len` bytes needs: taken now when it needs a larger one than it holds
    /// (waiting with the body unread), the smaller one then given back.
    async fn grow(&mut self, app: &App, len: usize) -> Result<(), Unread> {
        let (wanted, sem) = if len >= LARGE_REVIEW_BYTES {
            (2, &app.large)
        } else if len >= MEDIUM_REVIEW_BYTES {
            (1, &app.medium)
        } else {
            return Ok(());
        };
        let held = match self {
            Turn::Normal => 0,
            Turn::Medium(_) => 1,
            Turn::Large(_) => 2,
        };
        if held >= wanted {
            return Ok(());
        }
        let permit = sem.clone().acquire_owned().await.map_err(|_| Unread::Failed("the guard is stopping".into()))?;
        *self = if wanted == 2 { Turn::Large(permit) } else { Turn::Medium(permit) };
        Ok(())
    }
}

/// Reads a review's body, at most [`MAX_REVIEW_BYTES`]. Once it is known to be medium or
/// large (its `Content-Length`, or what has arrived, reaches [`MEDIUM_REVIEW_BYTES`] or
/// [`LARGE_REVIEW_BYTES`]) it takes one of that size's turns before reading on, and returns
/// it: a body waiting for its turn stays in the client's socket, not in memory, so the peak
/// is that of [`MEDIUM_READS`] medium and [`LARGE_DECISIONS`] large reviews however many are
/// sent at once, and a normal review never waits. The body is copied once, into a buffer
/// sized from its `Content-Length` when it has one.
async fn read_body<B>(app: &App, req: Request<B>) -> Result<(Vec<u8>, Turn), Unread>
where
    B: hyper::body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let declared = req.headers().get(http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_REVIEW_BYTES as u64) {
        return Err(Unread::TooLarge);
    }
    let declared = declared.map_or(0, |n| n as usize);
    let mut turn = Turn::Normal;
    turn.grow(app, declared).await?;
    let mut buf = Vec::with_capacity(declared);
    let mut body = std::pin::pin!(req.into_body());
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Unread::Failed(e.into().to_string()))?;
        let Ok(data) = frame.into_data() else { continue };
        let n = bytes::Buf::remaining(&data);
        if buf.len() + n > MAX_REVIEW_BYTES {
            return Err(Unread::TooLarge);
        }
        turn.grow(app, buf.len() + n).await?;
        bytes::BufMut::put(&mut buf, data);
    }
    Ok((buf, turn))
}

/// Reads a review's body and answers it; `turn` is held until the decision ends (answered
/// late, it still holds the turn until its work is done: what decisions hold stays bounded).
async fn decide_body(app: &App, body: Vec<u8>, arrived: Instant, turn: Turn) -> Response<Full<Bytes>> {
    // The body is the request's from here: its objects are read from it when decided.
    let request = match review::parse(body) {
        Ok(r) => r,
        Err(e) => {
            app.metrics.bad_request();
            return text(StatusCode::BAD_REQUEST, format!("bad AdmissionReview: {}", crate::escape::escape(&e)));
        }
    };
    let (uid, namespace) = (request.uid.clone(), request.namespace.clone());
    let answer = answer(app, request, arrived, turn).await;
    app.metrics.answered(answer.why, answer.warnings.len(), arrived.elapsed());
    app.metrics.answered_in(&namespace, answer.why);
    reply(StatusCode::OK, "application/json", review::response(&uid, &answer).to_string())
}

/// The answer to one request, from the caches; an autoscaler's, with its target read from the
/// cluster (one GET, at most [`TARGET_TIMEOUT`]). Given by `app.decide_within` after `arrived`
/// whatever happens: a decision still running then is answered allowed, with a warning saying
/// so ([`Why::Late`]), and goes on holding `turn` until it ends.
async fn answer(app: &App, request: review::Request, arrived: Instant, turn: Turn) -> review::Answer {
    let skipped = review::Answer { allowed: true, warnings: vec![], message: None, why: Why::Skipped, ceiling: None };
    if !review::concerns(&request) || app.excluded.contains(&request.namespace) {
        return skipped;
    }
    if !app.cache.ready() {
        app.metrics.not_ready();
        return skipped;
    }
    let (mut state, labels) = app.cache.for_namespace(&request.namespace);
    let enforce = match labels.get(LABEL).map(String::as_str) {
        Some("ignore") => return skipped,
        Some("enforce") => true,
        _ => false,
    };
    if let Some(t) = review::scale_target(&request) {
        read_target(app, &request.namespace, &t, &mut state).await;
    }
    if let Some(d) = &app.dry_runs {
        dry_run(app, d, &request, &mut state).await;
    }
    // A DaemonSet's pods are one per node, and the guard caches no nodes: its first pod is
    // checked, so a DaemonSet none of whose pods fit is still said.
    let nodes = (request.kind == "DaemonSet").then_some(1);
    let ns = request.namespace.clone();
    let budget = app.decide_within.saturating_sub(arrived.elapsed());
    // The engine stops at its next step past the budget too, so that work answered late
    // gives back its turn soon.
    let opts = CheckOptions {
        namespace: ns.clone(),
        limited: app.limited.clone(),
        pod_security: app.pod_security.clone(),
        nodes,
        rules: app.rules,
        decide_within: Some(budget),
        ..CheckOptions::default()
    };
    let Some(answer) = decide_within(budget, turn, move || review::decide(request, state, &opts, enforce)).await else {
        crate::error::print_err(&format!(
            "guard: a review in namespace {} was not decided within {} ms: answered allowed\n",
            crate::escape::escape(&ns),
            app.decide_within.as_millis()
        ));
        return review::late(app.decide_within);
    };
    if let Some(c) = &answer.ceiling {
        app.metrics.ceiling(&ns, c);
    }
    answer
}

/// Runs `decide` off the request threads, holding `turn` until it ends: its answer if it comes
/// within `budget`, else `None` (the decision runs on, its result dropped; one that panics is
/// `None` too). A large review's decision runs on a thread of its own at a lower priority; the
/// others on the blocking pool.
async fn decide_within(budget: Duration, turn: Turn, decide: impl FnOnce() -> review::Answer + Send + 'static) -> Option<review::Answer> {
    let large = matches!(turn, Turn::Large(_));
    let (tx, rx) = tokio::sync::oneshot::channel();
    let work = move || {
        let _turn = turn;
        if large {
            yield_to_normal_reviews();
        }
        let _ = tx.send(decide());
    };
    if large {
        std::thread::Builder::new().name("guard-decide".into()).spawn(work).ok()?;
    } else {
        tokio::task::spawn_blocking(work);
    }
    // Err: not in time, or the decision panicked (its sender dropped).
    tokio::time::timeout(budget, rx).await.ok()?.ok()
}

/// Puts into `state` the API server's answer for the pod of the workload of `request`, where a
/// mutating webhook sees it: kept, or asked for in a dry run (within the deadline, counted).
async fn dry_run(app: &App, d: &super::dry_run::DryRuns, request: &review::Request, state: &mut kubectl_quota_engine::check::ClusterState) {
    use kubectl_quota_engine::check::dry_run::DryRun;
    let Some(ask) = review::dry_run_pod(request, state) else { return };
    let started = Instant::now();
    let (answer, outcome) = d.answer(app.cache.webhook_changes(), &ask.namespace, &ask.json).await;
    let sent = outcome != super::dry_run::Outcome::Cached;
    app.metrics.dry_run(outcome, sent.then(|| started.elapsed()));
    state.dry_runs = Arc::new([(ask.source, DryRun { answer, webhooks: ask.webhooks, stood_in: vec![] })].into());
}

/// Puts the workload `t` of namespace `ns` into `state`, read from the cluster (one GET, at
/// most [`TARGET_TIMEOUT`]); one that cannot be read is left out, and counted.
async fn read_target(app: &App, ns: &str, t: &kubectl_quota_engine::objects::ScaleTarget, state: &mut kubectl_quota_engine::check::ClusterState) {
    let (Some(conn), Some(key)) = (&app.targets, crate::live::scale_target_key(ns, t)) else { return };
    match tokio::time::timeout(TARGET_TIMEOUT, crate::live::scale_target(conn, ns, t)).await {
        Ok(Ok(Some(target))) => {
            state.existing.insert(key, app.cache.keep(target));
        }
        Ok(Ok(None)) => {}
        Ok(Err(e)) => {
            app.metrics.target_unread();
            crate::error::print_err(&format!("guard: {}\n", crate::escape::escape(&e)));
        }
        Err(_) => app.metrics.target_unread(),
    }
}

/// Every [`CEILINGS_EVERY`], how far quota lets each cached autoscaler scale, for the metrics:
/// its target read (one GET each, one at a time) and its pods replayed on its namespace's
/// cached quotas, as a review of it would be.
pub async fn refresh_ceilings(app: Arc<App>) {
    loop {
        tokio::time::sleep(CEILINGS_EVERY).await;
        if !app.cache.ready() {
            continue;
        }
        for (ns, obj) in app.cache.autoscalers() {
            let kubectl_quota_engine::objects::Body::Autoscaler(a) = &obj.body else { continue };
            let (mut state, _) = app.cache.for_namespace(&ns);
            if let Some(t) = &a.target {
                read_target(&app, &ns, t, &mut state).await;
            }
            let opts = CheckOptions { namespace: ns.clone(), limited: app.limited.clone(), rules: app.rules, ..CheckOptions::default() };
            let mut checker = kubectl_quota_engine::check::Checker::new(&mut state, &opts);
            checker.expect(std::slice::from_ref(&obj));
            if let Some(c) = checker.check_one(obj).autoscaling {
                app.metrics.ceiling(&ns, &c);
            }
        }
    }
}

/// How often every cached autoscaler's ceiling is worked out again.
pub const CEILINGS_EVERY: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the server closed `c` within `wait` (it sends nothing else).
    async fn closed(c: &tokio::net::TcpStream, wait: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        while tokio::time::timeout_at(deadline, c.readable()).await.is_ok() {
            match c.try_read(&mut [0u8; 1]) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                _ => return true,
            }
        }
        false
    }

    /// A guard whose caches never fill (every review is answered as skipped) and its TLS,
    /// with the CA that signed it.
    fn app() -> (Arc<App>, Arc<Reloading>, String) {
        let issued = super::super::tls::issue(&["127.0.0.1".into()]).unwrap();
        let dir = std::env::temp_dir().join(format!("kq-serve-{}-{}", std::process::id(), std::thread::current().name().unwrap_or("t").replace(':', "_")));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tls.crt"), &issued.cert).unwrap();
        std::fs::write(dir.join("tls.key"), &issued.key).unwrap();
        let tls = Reloading::new(&dir.join("tls.crt"), &dir.join("tls.key")).unwrap();
        let app = App {
            cache: Arc::new(Cache::default()),
            metrics: Default::default(),
            rules: Rules::current(),
            kubernetes: VersionReport::new(&Rules::current(), "default", None),
            limited: vec![],
            pod_security: None,
            excluded: vec![],
            large: Arc::new(tokio::sync::Semaphore::new(LARGE_DECISIONS)),
            medium: Arc::new(tokio::sync::Semaphore::new(MEDIUM_READS)),
            targets: None,
            dry_runs: None,
            decide_within: DECIDE_WITHIN,
        };
        (Arc::new(app), tls, issued.ca_cert)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_decision_past_the_deadline_is_answered_allowed_saying_so_and_keeps_its_turn() {
        let fits = || review::Answer { allowed: false, warnings: vec![], message: Some("no".into()), why: Why::Denied, ceiling: None };
        // In time: the decision's own answer.
        let a = decide_within(Duration::from_secs(5), Turn::Normal, fits).await;
        assert_eq!(a.map(|a| a.why), Some(Why::Denied));
        // Late, on either kind of thread: allowed at the deadline, the turn held until the work ends.
        let turns = Arc::new(tokio::sync::Semaphore::new(1));
        for large in [false, true] {
            let permit = turns.clone().acquire_owned().await.unwrap();
            let turn = if large { Turn::Large(permit) } else { Turn::Medium(permit) };
            let started = Instant::now();
            let slow = move || {
                std::thread::sleep(Duration::from_millis(600));
                fits()
            };
            let a = decide_within(Duration::from_millis(100), turn, slow).await;
            assert!(started.elapsed() < Duration::from_millis(500), "answered at the deadline, not when the work ended");
            assert!(a.is_none(), "late");
            assert_eq!(turns.available_permits(), 0, "the late decision still holds its turn");
            let again = tokio::time::timeout(Duration::from_secs(5), turns.clone().acquire_owned()).await.expect("given back once the work ends");
            drop(again);
        }
        // A decision that panics is answered as late, never left unanswered.
        let a = decide_within(Duration::from_secs(5), Turn::Normal, || -> review::Answer { panic!("boom") }).await;
        assert!(a.is_none(), "answered as late");
        // Late is allowed, and names the deadline as configured, not what was left of it.
        let a = review::late(Duration::from_millis(100));
        assert_eq!((a.allowed, a.why), (true, Why::Late));
        assert!(a.warnings[0].contains("could not decide within 100 ms"), "{:?}", a.warnings);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn when_every_slot_is_taken_the_longest_idle_connection_makes_room() {
        let (app, tls, ca) = app();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve_on(app, listener, tls, 3));
        // Three connections that say nothing, the first the oldest.
        let mut idle: Vec<tokio::net::TcpStream> = Vec::new();
        for _ in 0..3 {
            idle.push(tokio::net::TcpStream::connect(addr).await.unwrap());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // A new client is served (before its own 5 s deadline, which waiting for the idle ones'
        // 10 s timeout would pass).
        let got = crate::live::guard::via_url(&format!("https://{addr}/healthz"), ca.as_bytes()).await;
        assert_eq!(got.as_deref(), Ok("ok\n"));
        // The oldest was closed for it; the others are open still.
        assert!(closed(&idle[0], Duration::from_secs(5)).await, "the oldest idle connection is closed");
        for c in &idle[1..] {
            assert!(!closed(c, Duration::from_millis(200)).await, "a younger one is kept");
        }
    }

    /// A TLS connection to the guard at `addr` that trusts `ca`, its handshake done.
    async fn tls_connect(addr: SocketAddr, ca: &str) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
        use rustls_pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        for c in rustls_pki_types::CertificateDer::pem_slice_iter(ca.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let name = rustls_pki_types::ServerName::IpAddress(addr.ip().into());
        tokio_rustls::TlsConnector::from(Arc::new(config)).connect(name, tcp).await.unwrap()
    }

    async fn send(s: &mut tokio_rustls::client::TlsStream<tokio::net::TcpStream>, mut bytes: &[u8]) {
        use tokio::io::AsyncWrite;
        while !bytes.is_empty() {
            let n = std::future::poll_fn(|cx| std::pin::Pin::new(&mut *s).poll_write(cx, bytes)).await.unwrap();
            bytes = &bytes[n..];
        }
        std::future::poll_fn(|cx| std::pin::Pin::new(&mut *s).poll_flush(cx)).await.unwrap();
    }

    /// Whether the server closed the TLS connection `s` within `wait`.
    async fn tls_closed(s: &mut tokio_rustls::client::TlsStream<tokio::net::TcpStream>, wait: Duration) -> bool {
        use tokio::io::AsyncRead;
        let mut buf = [0u8; 256];
        let read = async {
            loop {
                let mut rb = tokio::io::ReadBuf::new(&mut buf);
                match std::future::poll_fn(|cx| std::pin::Pin::new(&mut *s).poll_read(cx, &mut rb)).await {
                    Ok(()) if rb.filled().is_empty() => return,
                    Ok(()) => continue,
                    Err(_) => return,
                }
            }
        };
        tokio::time::timeout(wait, read).await.is_ok()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn connections_sending_their_request_head_slowly_make_room_too_oldest_first() {
        let (app, tls, ca) = app();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve_on(app.clone(), listener, tls, 3));
        // Every slot taken by a connection whose request head has begun and never ends: not
        // idle to hyper, which a graceful shutdown would wait on for 10 s.
        let mut slow = Vec::new();
        for _ in 0..3 {
            let mut s = tls_connect(addr, &ca).await;
            send(&mut s, b"POST /validate HTTP/1.1\r\nHost: x\r\nX-Slow: ").await;
            slow.push(s);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let started = Instant::now();
        let got = crate::live::guard::via_url(&format!("https://{addr}/healthz"), ca.as_bytes()).await;
        assert_eq!(got.as_deref(), Ok("ok\n"));
        assert!(started.elapsed() < Duration::from_secs(2), "served at once: {:?}", started.elapsed());
        assert!(tls_closed(&mut slow[0], Duration::from_secs(2)).await, "the oldest slow connection is closed");
        for s in &mut slow[1..] {
            assert!(!tls_closed(s, Duration::from_millis(200)).await, "a younger one is kept");
        }
        let metrics = app.metrics.render(&app.cache);
        assert!(metrics.lines().any(|l| l == "kubectl_quota_guard_connections_reclaimed_total 1"), "{metrics}");
    }

    #[test]
    fn connections_opened_together_are_cut_at_times_spread_over_two_seconds() {
        let ms: std::collections::BTreeSet<u128> = (5000..7000).map(|id| deadline(id).as_millis()).collect();
        assert_eq!(ms.len(), 2000, "each of 2,000 consecutive connections a millisecond of its own");
        assert_eq!((ms.first(), ms.last()), (Some(&8001), Some(&10000)));
    }

    #[test]
    fn room_is_made_from_the_connection_unproductive_the_longest_and_never_from_a_decision() {
        let t0 = Instant::now();
        let at = |ms: u64| Some(t0 + Duration::from_millis(ms));
        let mut o = Open::default();
        let add = |o: &mut Open, id: u64, since: Option<Instant>| {
            o.conns.insert(id, Conn { since, closing: false, close: Arc::new(tokio::sync::Notify::new()) });
        };
        // Ids 0..4: idle since 30 ms, deciding, in its handshake since 10 ms, idle since 20 ms.
        for (id, since) in [(0, at(30)), (1, None), (2, at(10)), (3, at(20))] {
            add(&mut o, id, since);
        }
        assert_eq!(o.admit(5), Admit::Serve(None), "below the cap");
        // Each new connection (deciding at once, here) takes the place made for it.
        for (id, want) in (10..).zip([Some(2), Some(3), Some(0)]) {
            assert_eq!(o.admit(4), Admit::Serve(want), "the oldest first, each asked once");
            add(&mut o, id, None);
        }
        assert_eq!(o.admit(4), Admit::Refuse, "a connection whose review is being decided is kept");
        assert_eq!(o.closing, 3);
    }

    fn review(padding: usize) -> Request<Full<Bytes>> {
        let body = serde_json::json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"}, "operation": "CREATE", "namespace": "a",
                        "object": {"metadata": {"name": "w", "annotations": {"pad": "x".repeat(padding)}}, "spec": {}}}
        });
        Request::post("/validate").body(Full::new(Bytes::from(body.to_string()))).unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_large_body_waiting_for_its_turn_is_left_unread() {
        let (app, _, _) = app();
        let turns = app.large.acquire_many(LARGE_DECISIONS as u32).await.unwrap();
        let whole = http_body_util::BodyExt::collect(review(2 * LARGE_REVIEW_BYTES).into_body()).await.unwrap().to_bytes();
        // The body arrives in pieces through a channel that holds one: a reader that stops
        // reading stops the sender.
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(1);
        let frames = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (Ok::<_, Infallible>(hyper::body::Frame::data(b)), rx)) });
        let req = Request::post("/validate").body(http_body_util::StreamBody::new(frames)).unwrap();
        let large = tokio::spawn({
            let app = app.clone();
            async move { validate(&app, req, || {}).await }
        });
        let pieces: Vec<Bytes> = whole.chunks(LARGE_REVIEW_BYTES).map(Bytes::copy_from_slice).collect();
        assert!(pieces.len() >= 3);
        // The first piece makes it large: the reader takes it, then waits for a turn; the
        // channel takes one more, and no further piece is read.
        let mut sent = 0;
        for p in &pieces {
            if tokio::time::timeout(Duration::from_millis(300), tx.send(p.clone())).await.is_err() {
                break;
            }
            sent += 1;
        }
        assert_eq!(sent, 2, "the body is read no further than where it became large");
        drop(turns);
        for p in &pieces[sent..] {
            tokio::time::timeout(Duration::from_secs(5), tx.send(p.clone())).await.expect("read on once its turn comes").unwrap();
        }
        drop(tx);
        let large = tokio::time::timeout(Duration::from_secs(5), large).await.expect("decided").unwrap();
        assert_eq!(large.status(), StatusCode::OK);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_body_declared_over_the_cap_is_refused_unread() {
        let (app, _, _) = app();
        let req = Request::post("/validate").header("content-length", (MAX_REVIEW_BYTES + 1).to_string()).body(Full::new(Bytes::new())).unwrap();
        assert_eq!(validate(&app, req, || {}).await.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let req = Request::post("/validate").body(Full::new(Bytes::from(vec![b' '; MAX_REVIEW_BYTES + 1]))).unwrap();
        assert_eq!(validate(&app, req, || {}).await.status(), StatusCode::PAYLOAD_TOO_LARGE);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn medium_and_large_reviews_wait_for_their_turns_and_a_normal_one_never_does() {
        let (app, _, _) = app();
        // (what fills the review, its turns, how many, the other size's turns and how many)
        let table = [
            ("medium", MEDIUM_REVIEW_BYTES, &app.medium, MEDIUM_READS, &app.large, LARGE_DECISIONS),
            ("large", LARGE_REVIEW_BYTES, &app.large, LARGE_DECISIONS, &app.medium, MEDIUM_READS),
        ];
        for (what, padding, own, n, other, m) in table {
            // Every turn of its size taken.
            let turns = own.clone().acquire_many_owned(n as u32).await.unwrap();
            let waiting = tokio::spawn({
                let app = app.clone();
                async move { validate(&app, review(padding), || {}).await }
            });
            let normal = tokio::time::timeout(Duration::from_secs(5), validate(&app, review(10), || {})).await.expect("a normal review never waits");
            assert_eq!(normal.status(), StatusCode::OK);
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(!waiting.is_finished(), "the {what} review waits for a turn");
            drop(turns);
            let answered = tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("decided once its turn comes").unwrap();
            assert_eq!(answered.status(), StatusCode::OK, "{what}");
            assert_eq!(own.available_permits(), n, "the {what} review's turn given back once answered");
            assert_eq!(other.available_permits(), m, "a {what} review holds no other size's turn");
        }
    }

    /// A guard whose caches hold namespace `shop` (quota requests.cpu 1) and a sidecar
    /// injector for it, with dry runs on (none sent: the answers are put in by hand).
    fn injected_app() -> App {
        use super::super::cache::Kind;
        use crate::live::Change;
        let (app, _, _) = app();
        let mut app = Arc::into_inner(app).unwrap();
        app.dry_runs = Some(super::super::dry_run::DryRuns::new(None, Duration::from_millis(500)));
        let text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {inject: 'yes'}}\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: shop}\nspec: {hard: {requests.cpu: '1'}}\nstatus: {hard: {requests.cpu: '1'}, used: {requests.cpu: '0'}}\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: injector}\nwebhooks: [{name: sidecar.kq.test, clientConfig: {url: 'https://127.0.0.1:1/inject'}, rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [pods]}], namespaceSelector: {matchLabels: {inject: 'yes'}}, sideEffects: None, admissionReviewVersions: [v1]}]\n";
        let objs: Vec<_> =
            kubectl_quota_engine::manifest::parse_str("t.yaml", text).unwrap().iter().map(|d| kubectl_quota_engine::objects::decode(d).unwrap()).collect();
        for k in Kind::ALL {
            app.cache.apply(k, Change::ListBegin);
            for o in objs.iter().filter(|o| o.type_info.resource == k.resource().split('.').next().unwrap()) {
                app.cache.apply(k, Change::Listed(o.clone()));
            }
            app.cache.apply(k, Change::ListEnd);
        }
        assert!(app.cache.ready());
        app
    }

    fn review_of(kind: &str, object: serde_json::Value) -> review::Request {
        let group = if kind == "Pod" { "" } else { "apps" };
        let r = serde_json::json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "kind": {"group": group, "version": "v1", "kind": kind}, "operation": "CREATE", "namespace": "shop", "object": object, "dryRun": true}});
        review::parse(serde_json::to_vec(&r).unwrap()).unwrap()
    }

    fn shop() -> serde_json::Value {
        serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "shop", "namespace": "shop"},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "shop"}},
                "template": {"metadata": {"labels": {"app": "shop"}}, "spec": {"containers": [{"name": "app", "image": "x", "resources": {"requests": {"cpu": "200m"}}}]}}}})
    }

    #[tokio::test]
    async fn with_dry_runs_a_workloads_pods_are_answered_as_the_server_returned_them() {
        use kubectl_quota_engine::admission::ServerAnswer;
        let app = injected_app();
        let d = app.dry_runs.as_ref().unwrap();
        // The answer the server would give: the pod with its sidecar (100m more).
        let (state, _) = app.cache.for_namespace("shop");
        let ask = review::dry_run_pod(&review_of("Deployment", shop()), &state).expect("the injector sees the pods");
        assert_eq!(ask.webhooks, ["sidecar.kq.test (injector)"]);
        let served = "apiVersion: v1\nkind: Pod\nmetadata: {name: shop-abc, namespace: shop, labels: {app: shop}}\nspec:\n  containers:\n  - {name: app, image: x, resources: {requests: {cpu: 200m}}}\n  - {name: istio-proxy, image: x, resources: {requests: {cpu: 100m}}}\n";
        let pod = kubectl_quota_engine::objects::decode(&kubectl_quota_engine::manifest::parse_str("s", served).unwrap()[0]).unwrap();
        let kubectl_quota_engine::objects::Body::Pod(pod) = pod.body else { panic!("a pod") };
        d.keep(
            app.cache.webhook_changes(),
            &ask.namespace,
            &ask.json,
            &crate::live::Asked { answer: Ok(ServerAnswer::Admitted(Box::new(pod))), transient: false },
        );
        let a = answer(&app, review_of("Deployment", shop()), Instant::now(), Turn::Normal).await;
        assert_eq!(a.why, Why::Warned);
        assert!(
            a.warnings[0].starts_with("quota compute will refuse 1 of the 4 pods of deployment/shop: exceeded quota: compute, requested: requests.cpu=300m"),
            "{:?}",
            a.warnings
        );
        assert!(a.warnings[1].contains("are as the API server returned them from a dry run"), "{:?}", a.warnings);
        assert!(app.metrics.render(&app.cache).contains("kubectl_quota_guard_dry_runs_total{outcome=\"cached\"} 1"));
        // A change of any webhook configuration forgets the answer: none can be sent here,
        // so the pods are as written, and the webhook is named.
        app.cache.apply(super::super::cache::Kind::ValidatingWebhooks, crate::live::Change::ListBegin);
        app.cache.apply(super::super::cache::Kind::ValidatingWebhooks, crate::live::Change::ListEnd);
        let a = answer(&app, review_of("Deployment", shop()), Instant::now(), Turn::Normal).await;
        assert_eq!(a.warnings.len(), 2, "{:?}", a.warnings);
        assert_eq!(a.warnings[0], "the pods of deployment/shop fit quota as written");
        assert!(a.warnings[1].contains("is in no API, so this answer is for its pods as written and rests on it"), "{:?}", a.warnings);
        assert!(app.metrics.render(&app.cache).contains("kubectl_quota_guard_dry_runs_total{outcome=\"failed\"} 1"));
    }

    #[tokio::test]
    async fn a_dry_runs_own_pod_reaching_the_guard_is_skipped_and_asks_for_nothing() {
        let app = injected_app();
        let pod =
            serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "shop-"}, "spec": shop()["spec"]["template"]["spec"].clone()});
        let (state, _) = app.cache.for_namespace("shop");
        assert!(review::dry_run_pod(&review_of("Pod", pod.clone()), &state).is_none());
        let a = answer(&app, review_of("Pod", pod), Instant::now(), Turn::Normal).await;
        assert_eq!(a.why, Why::Skipped);
        let metrics = app.metrics.render(&app.cache);
        assert!(metrics.lines().filter(|l| l.starts_with("kubectl_quota_guard_dry_runs_total{")).all(|l| l.ends_with(" 0")), "{metrics}");
    }
}
