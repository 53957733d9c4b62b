//! Why a request failed, worded as kubectl words it: the server, then the cause; a Status
//! as `Error from server (Reason): message`.

use std::time::Duration;

/// A request (or a paginated series) within `--request-timeout` as a whole.
pub(super) async fn within<T>(timeout: Option<Duration>, fut: impl std::future::Future<Output = Result<T, kube::Error>>) -> Result<T, RequestError> {
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

pub(super) fn read_error(server: &str, what: String, e: RequestError) -> ReadError {
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
pub(super) fn transport_message(server: &str, e: &RequestError) -> String {
    match e {
        RequestError::Timeout(d) => format!("{server}: no complete answer within --request-timeout ({}s)", d.as_secs_f64()),
        RequestError::Kube(kube::Error::Api(s)) => s.message.clone(),
        RequestError::Kube(e) => format!("{server}: {}", chain(e)),
    }
}
