//! `guard serve`: the webhook's HTTPS server. `POST /validate` answers AdmissionReviews from
//! the caches (no API call while a request waits); `/healthz`, `/readyz` (200 once every cached
//! kind has been listed), `/metrics` (Prometheus text) and `/status` (JSON, what `guard status`
//! reads) tell how it is doing.
//!
//! Every read is bounded: a connection's TLS handshake and request headers get 10 s, a body
//! [`MAX_REVIEW_BYTES`] and 10 s, and at most [`MAX_CONNECTIONS`] connections are served at
//! once (more wait in the kernel's queue). Whatever goes wrong, the answer comes quickly: the
//! API server calls with `failurePolicy: Ignore` and a short timeout, so an error or silence
//! never blocks admission.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use kubectl_quota_engine::check::CheckOptions;
use kubectl_quota_engine::version::{Rules, VersionReport};

use super::cache::Cache;
use super::metrics::Metrics;
use super::review::{self, Why, LABEL};
use super::tls::Reloading;

/// The largest AdmissionReview read: the API server takes objects of up to 3 MiB, and a
/// review of an update carries two of them.
pub const MAX_REVIEW_BYTES: usize = 8 << 20;
/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 1024;
/// The bound on a TLS handshake, on request headers, and on a request's body.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// What every request handler shares.
pub struct App {
    pub cache: Arc<Cache>,
    pub metrics: Metrics,
    pub rules: Rules,
    /// The server's version and where the rules come from, for `/status`.
    pub kubernetes: VersionReport,
    pub limited: Vec<kubectl_quota_engine::admission::LimitedResource>,
    /// Namespaces the guard never speaks about (kube-system, its own).
    pub excluded: Vec<String>,
}

/// Serves on `listen` until the process ends.
pub async fn serve(app: Arc<App>, listen: SocketAddr, tls: Arc<Reloading>) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    crate::error::print_err(&format!("guard: serving https://{}/validate\n", listener.local_addr().map_err(|e| e.to_string())?));
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else { return Ok(()) };
        let (tcp, _) = match listener.accept().await {
            Ok(c) => c,
            // Out of file descriptors, say: wait a moment rather than spin.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = tokio_rustls::TlsAcceptor::from(tls.current());
        let app = app.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let Ok(Ok(stream)) = tokio::time::timeout(READ_TIMEOUT, acceptor.accept(tcp)).await else { return };
            let service = hyper::service::service_fn(move |req| handle(app.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
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

async fn handle(app: Arc<App>, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_string();
    Ok(match (req.method(), path.as_str()) {
        (&Method::POST, "/validate") => validate(&app, req).await,
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

async fn validate(app: &App, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let arrived = Instant::now();
    let body = match tokio::time::timeout(READ_TIMEOUT, Limited::new(req.into_body(), MAX_REVIEW_BYTES).collect()).await {
        Ok(Ok(b)) => b.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            app.metrics.bad_request();
            return text(StatusCode::PAYLOAD_TOO_LARGE, format!("the AdmissionReview is larger than {MAX_REVIEW_BYTES} bytes"));
        }
        Ok(Err(e)) => {
            app.metrics.bad_request();
            return text(StatusCode::BAD_REQUEST, format!("cannot read the body: {e}"));
        }
        Err(_) => {
            app.metrics.bad_request();
            return text(StatusCode::REQUEST_TIMEOUT, format!("the body did not arrive within {} s", READ_TIMEOUT.as_secs()));
        }
    };
    let request = match review::parse(&body) {
        Ok(r) => r,
        Err(e) => {
            app.metrics.bad_request();
            return text(StatusCode::BAD_REQUEST, format!("bad AdmissionReview: {}", crate::escape::escape(&e)));
        }
    };
    drop(body);
    let uid = request.uid.clone();
    let answer = answer(app, request);
    app.metrics.answered(answer.why, answer.warnings.len(), arrived.elapsed());
    reply(StatusCode::OK, "application/json", review::response(&uid, &answer).to_string())
}

/// The answer to one request, from the caches.
fn answer(app: &App, request: review::Request) -> review::Answer {
    let skipped = review::Answer { allowed: true, warnings: vec![], message: None, why: Why::Skipped };
    if !review::concerns(&request) || app.excluded.contains(&request.namespace) {
        return skipped;
    }
    if !app.cache.ready() {
        app.metrics.not_ready();
        return skipped;
    }
    let (state, labels) = app.cache.for_namespace(&request.namespace);
    let enforce = match labels.get(LABEL).map(String::as_str) {
        Some("ignore") => return skipped,
        Some("enforce") => true,
        _ => false,
    };
    // A DaemonSet's pods are one per node, and the guard caches no nodes: its first pod is
    // checked, so a DaemonSet none of whose pods fit is still said.
    let nodes = (request.kind == "DaemonSet").then_some(1);
    let opts = CheckOptions { namespace: request.namespace.clone(), limited: app.limited.clone(), nodes, rules: app.rules, ..CheckOptions::default() };
    review::decide(request, state, &opts, enforce)
}
