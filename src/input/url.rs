//! `-f URL`: manifests read over http(s) as kubectl reads them, bounded like every read
//! (size, time, redirects), errors naming the URL.

use super::*;

/// Whether `-f` names a URL (kubectl reads http and https ones).
pub fn is_url(p: &str) -> bool {
    p.starts_with("http://") || p.starts_with("https://")
}

/// How long a URL may take, from connecting to its last byte: 30 s, or
/// `KUBECTL_QUOTA_URL_TIMEOUT` seconds.
pub(super) fn url_timeout() -> std::time::Duration {
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
    let cause = |e: &(dyn std::error::Error + 'static)| match crate::error::tls_failure(e, crate::error::TlsPeer::Url) {
        Some(tls) => format!("cannot read: {tls}"),
        None => format!("cannot read: {}", crate::error::cause_chain(e, |m| m)),
    };
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
            let through = |e: &(dyn std::error::Error + 'static)| format!("{} (through proxy {})", cause(e), p.uri());
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
            let location = response.headers().get(http::header::LOCATION).ok_or_else(|| format!("the server answered {status} without a Location"))?;
            uri = redirect_target(&uri, location.as_bytes())
                .map_err(|e| format!("the server answered {status} with a Location {}: {e}", shown(location.as_bytes())))?;
            continue;
        }
        if !status.is_success() {
            return Err(format!("the server answered {status}"));
        }
        let encoding = response.headers().get(http::header::CONTENT_ENCODING).map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_ascii_lowercase());
        let cap = max_input_bytes();
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| format!("cannot read: {}", crate::error::cause_chain(&e, |m| m)))?;
            if let Ok(data) = frame.into_data() {
                if (bytes.len() + data.len()) as u64 > cap {
                    return Err(too_large(cap));
                }
                bytes.extend_from_slice(&data);
            }
        }
        return match encoding.as_deref() {
            None | Some("" | "identity") => Ok(bytes),
            Some("gzip" | "x-gzip") => gunzip(&bytes, cap),
            Some(other) => Err(format!("the server sent the body in the {other:?} encoding (Content-Encoding), which is not read: only gzip is")),
        };
    }
    Err(format!("more than {MAX_REDIRECTS} redirects"))
}

fn too_large(cap: u64) -> String {
    format!("larger than {cap} bytes (set KUBECTL_QUOTA_MAX_INPUT_BYTES to allow more)")
}

/// A gzip body (`Content-Encoding: gzip`, sent whether asked for or not) decoded, the decoded
/// text under the same cap as any other read.
fn gunzip(bytes: &[u8], cap: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .take(cap + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("cannot read the gzip body (Content-Encoding: gzip): {e}"))?;
    if out.len() as u64 > cap {
        return Err(format!("{} once decoded from gzip", too_large(cap)));
    }
    Ok(out)
}

/// A Location as it may be shown: its bytes as text, control characters made visible.
fn shown(location: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(location))
}

/// Where a redirect's `Location` points, resolved against the URL that answered with it as
/// Go's client (which kubectl uses) resolves it (RFC 3986): an absolute URL, a network-path
/// reference (`//host:port/path`), an absolute or relative path, or a query alone; dot
/// segments removed; bytes outside ASCII (UTF-8 in a path) percent-encoded. Only http and
/// https are followed: any other scheme (`file:`) is refused, as Go refuses it.
fn redirect_target(from: &http::Uri, location: &[u8]) -> Result<http::Uri, String> {
    let mut text = String::with_capacity(location.len());
    for &b in location {
        match b {
            b if b < 0x20 || b == 0x7f => return Err("invalid control character in URL".into()),
            b' ' | 0x80.. => text.push_str(&format!("%{b:02X}")),
            b => text.push(b as char),
        }
    }
    // The fragment is never sent.
    let reference = text.split('#').next().unwrap_or_default();
    let scheme_len = reference.find(':').filter(|&i| {
        let s = &reference[..i];
        s.starts_with(|c: char| c.is_ascii_alphabetic()) && s.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    let scheme = from.scheme_str().unwrap_or("http");
    let authority = from.authority().map(|a| a.as_str()).unwrap_or_default();
    let target = if let Some(i) = scheme_len {
        let scheme = reference[..i].to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(format!("unsupported protocol scheme {scheme:?} (only http and https URLs are read)"));
        }
        format!("{scheme}{}", &reference[i..])
    } else if reference.starts_with("//") {
        format!("{scheme}:{reference}")
    } else {
        let (path, query) = match reference.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (reference, None),
        };
        let base_path = if from.path().is_empty() { "/" } else { from.path() };
        let merged = if path.starts_with('/') {
            path.to_string()
        } else if path.is_empty() {
            base_path.to_string()
        } else {
            format!("{}{path}", &base_path[..base_path.rfind('/').map_or(0, |i| i + 1)])
        };
        let query = match query {
            Some(q) => Some(q),
            None if path.is_empty() => from.query(),
            None => None,
        };
        let query = query.map(|q| format!("?{q}")).unwrap_or_default();
        format!("{scheme}://{authority}{}{query}", without_dot_segments(&merged))
    };
    target.parse().map_err(|e| format!("not a URL: {e}"))
}

/// A path with its `.` and `..` segments removed (RFC 3986, 5.2.4).
fn without_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *seg {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let joined = out.join("/");
    if joined.starts_with('/') {
        joined
    } else {
        format!("/{joined}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_resolve_as_gos_client_resolves_them() {
        let from: http::Uri = "http://a.example:8080/dir/sub/file.yaml?x=1".parse().unwrap();
        let cases: [(&[u8], Result<&str, &str>); 14] = [
            (b"https://b.example/app.yaml", Ok("https://b.example/app.yaml")),
            (b"HTTP://b.example/app.yaml", Ok("http://b.example/app.yaml")),
            (b"//b.example:9090/app.yaml", Ok("http://b.example:9090/app.yaml")),
            (b"/app.yaml", Ok("http://a.example:8080/app.yaml")),
            (b"other.yaml", Ok("http://a.example:8080/dir/sub/other.yaml")),
            (b"../up.yaml?y=2", Ok("http://a.example:8080/dir/up.yaml?y=2")),
            (b"./../../../top.yaml", Ok("http://a.example:8080/top.yaml")),
            (b"?y=2", Ok("http://a.example:8080/dir/sub/file.yaml?y=2")),
            (b"new.yaml#part", Ok("http://a.example:8080/dir/sub/new.yaml")),
            ("/caf\u{e9}/\u{6587}.yaml".as_bytes(), Ok("http://a.example:8080/caf%C3%A9/%E6%96%87.yaml")),
            (b"/a b.yaml", Ok("http://a.example:8080/a%20b.yaml")),
            (b"file:///etc/passwd", Err("unsupported protocol scheme \"file\" (only http and https URLs are read)")),
            (b"ftp://b.example/x", Err("unsupported protocol scheme \"ftp\" (only http and https URLs are read)")),
            (b"/x\ny", Err("invalid control character in URL")),
        ];
        for (location, want) in cases {
            let got = redirect_target(&from, location).map(|u| u.to_string());
            assert_eq!(got.as_deref().map_err(String::as_str), want, "{}", String::from_utf8_lossy(location));
        }
    }

    #[test]
    fn gzip_bodies_are_decoded_under_the_cap() {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&b"a".repeat(1000)).unwrap();
        let gz = enc.finish().unwrap();
        assert_eq!(gunzip(&gz, 1000).unwrap().len(), 1000);
        assert!(gunzip(&gz, 999).unwrap_err().contains("larger than 999 bytes"));
        assert!(gunzip(b"not gzip", 1000).unwrap_err().starts_with("cannot read the gzip body"));
    }
}
