//! `-f URL`: manifests read over http(s) as kubectl reads them, bounded like every read
//! (size, time, redirects), errors naming the URL.

use super::*;

/// Whether `-f` names a URL (kubectl reads http and https ones).
pub fn is_url(p: &str) -> bool {
    p.starts_with("http://") || p.starts_with("https://")
}

/// How long a URL may take, from connecting to its last byte: 30 s, or
/// `KUBECTL_QUOTA_URL_TIMEOUT` seconds.
fn url_timeout() -> std::time::Duration {
    let secs = std::env::var("KUBECTL_QUOTA_URL_TIMEOUT").ok().and_then(|v| v.trim().parse::<u64>().ok()).filter(|n| *n > 0).unwrap_or(30);
    std::time::Duration::from_secs(secs)
}

/// Redirects followed before giving up (Go's HTTP client, which kubectl uses, stops at 10).
const MAX_REDIRECTS: usize = 10;

/// The text at a URL, as kubectl reads `-f URL`: a GET following redirects, a success status
/// required, the body capped as every other read ([`max_input_bytes`]) and the whole exchange
/// bounded in time ([`url_timeout`]). Errors say what went wrong; the caller names the URL.
///
/// The request runs on a thread of its own with its own runtime: the caller may already be
/// inside the program's (single-threaded) runtime, which cannot be blocked on again.
pub fn read_url(url: &str) -> Result<String, String> {
    let timeout = url_timeout();
    let bytes = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| format!("cannot start: {e}"))?;
                runtime.block_on(async {
                    match tokio::time::timeout(timeout, fetch(url)).await {
                        Ok(r) => r,
                        Err(_) => Err(format!("no complete answer within {} s (set KUBECTL_QUOTA_URL_TIMEOUT to wait longer)", timeout.as_secs())),
                    }
                })
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })?;
    decode_text(bytes).map_err(|e| format!("cannot read: {e}"))
}

/// The proxy `uri` goes through, as kubectl (Go's `http.ProxyFromEnvironment`) chooses it:
/// `HTTPS_PROXY` for https URLs, `HTTP_PROXY` for http ones (either spelling case), none for a
/// host `NO_PROXY` names, and never for localhost or a loopback address. `ALL_PROXY`, which
/// curl reads, kubectl does not.
fn proxy_for(uri: &http::Uri) -> Option<hyper_util::client::proxy::matcher::Intercept> {
    let host = uri.host()?.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()) {
        return None;
    }
    let var = |upper: &str| std::env::var(upper).or_else(|_| std::env::var(upper.to_lowercase())).unwrap_or_default();
    let matcher = hyper_util::client::proxy::matcher::Matcher::builder().http(var("HTTP_PROXY")).https(var("HTTPS_PROXY")).no(var("NO_PROXY")).build();
    matcher.intercept(uri)
}

/// One GET of `uri`, straight or through its proxy ([`proxy_for`]): an http URL is asked of
/// the proxy in absolute form, an https one through a CONNECT tunnel.
async fn send(uri: &http::Uri) -> Result<http::Response<hyper::body::Incoming>, String> {
    use http_body_util::Empty;
    use hyper_util::client::legacy::connect::HttpConnector;
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::{TokioExecutor, TokioIo};

    type Body = Empty<bytes::Bytes>;
    let cause = |e: &dyn std::error::Error| format!("cannot read: {}", crate::error::cause_chain(e, |m| m));
    let proxy = proxy_for(uri);
    let mut request = http::Request::get(uri)
        .header(http::header::USER_AGENT, concat!("kubectl-quota/", env!("CARGO_PKG_VERSION")))
        .body(Body::new())
        .map_err(|e| format!("not a URL: {e}"))?;
    let https = || {
        hyper_rustls::HttpsConnectorBuilder::new()
            .with_native_roots()
            .map_err(|e| format!("no TLS root certificates to verify the server with: {e}"))
            .map(|b| b.https_or_http().enable_http1())
    };
    match (uri.scheme_str(), proxy) {
        (Some("https"), None) => {
            let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build(https()?.build());
            client.request(request).await.map_err(|e| cause(&e))
        }
        (Some("https"), Some(p)) => {
            let mut tunnel = hyper_util::client::legacy::connect::proxy::Tunnel::new(p.uri().clone(), HttpConnector::new());
            if let Some(auth) = p.basic_auth() {
                tunnel = tunnel.with_auth(auth.clone());
            }
            let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build(https()?.wrap_connector(tunnel));
            client.request(request).await.map_err(|e| format!("{} (through proxy {})", cause(&e), p.uri()))
        }
        (Some("http"), None) => {
            let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
            client.request(request).await.map_err(|e| cause(&e))
        }
        (Some("http"), Some(p)) => {
            let through = |e: &dyn std::error::Error| format!("{} (through proxy {})", cause(e), p.uri());
            let authority = p.uri().authority().ok_or_else(|| format!("the proxy {} names no host", p.uri()))?;
            let port = authority.port_u16().unwrap_or(80);
            let stream = tokio::net::TcpStream::connect((authority.host(), port)).await.map_err(|e| through(&e))?;
            let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| through(&e))?;
            tokio::spawn(connection);
            // The whole URL as the request target: the proxy fetches it.
            if let Some(host) = uri.authority() {
                request.headers_mut().insert(http::header::HOST, http::HeaderValue::from_str(host.as_str()).map_err(|e| format!("not a URL: {e}"))?);
            }
            if let Some(auth) = p.basic_auth() {
                request.headers_mut().insert(http::header::PROXY_AUTHORIZATION, auth.clone());
            }
            sender.send_request(request).await.map_err(|e| through(&e))
        }
        _ => Err(format!("{uri}: only http and https URLs are read")),
    }
}

/// The GET itself (see [`read_url`]).
async fn fetch(url: &str) -> Result<Vec<u8>, String> {
    use http_body_util::BodyExt;

    let mut uri: http::Uri = url.parse().map_err(|e| format!("not a URL: {e}"))?;
    for _ in 0..=MAX_REDIRECTS {
        let response = send(&uri).await?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| format!("the server answered {status} without a Location"))?;
            uri = redirect_target(&uri, location).ok_or_else(|| format!("the server answered {status} with an unusable Location {location:?}"))?;
            continue;
        }
        if !status.is_success() {
            return Err(format!("the server answered {status}"));
        }
        let cap = max_input_bytes();
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| format!("cannot read: {}", crate::error::cause_chain(&e, |m| m)))?;
            if let Ok(data) = frame.into_data() {
                if (bytes.len() + data.len()) as u64 > cap {
                    return Err(format!("larger than {cap} bytes (set KUBECTL_QUOTA_MAX_INPUT_BYTES to allow more)"));
                }
                bytes.extend_from_slice(&data);
            }
        }
        return Ok(bytes);
    }
    Err(format!("more than {MAX_REDIRECTS} redirects"))
}

/// Where a redirect's `Location` points, resolved against the URL that answered with it.
fn redirect_target(from: &http::Uri, location: &str) -> Option<http::Uri> {
    if is_url(location) {
        return location.parse().ok();
    }
    let (scheme, authority) = (from.scheme_str()?, from.authority()?);
    let path = if location.starts_with('/') {
        location.to_string()
    } else {
        let base = from.path();
        format!("{}{location}", &base[..base.rfind('/').map_or(0, |i| i + 1)])
    };
    format!("{scheme}://{authority}{path}").parse().ok()
}
