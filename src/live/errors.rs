//! Why a request failed, worded as kubectl words it: the server, then the cause; a Status
//! as `Error from server (Reason): message`.

use std::time::Duration;

use super::Bound;

/// A request as a whole (connecting, the answer and its entire body) within its [`Bound`]:
/// `--request-timeout`, or else what is left of the command's deadline.
pub(super) async fn within<T>(bound: Bound, fut: impl std::future::Future<Output = Result<T, kube::Error>>) -> Result<T, RequestError> {
    match bound {
        Bound::PerRequest(d) => match tokio::time::timeout(d, fut).await {
            Ok(r) => r.map_err(RequestError::Kube),
            Err(_) => Err(RequestError::Timeout(d)),
        },
        Bound::Deadline { at, total } => match tokio::time::timeout_at(at.into(), fut).await {
            Ok(r) => r.map_err(RequestError::Kube),
            Err(_) => Err(RequestError::Deadline(total)),
        },
        Bound::None => fut.await.map_err(RequestError::Kube),
    }
}

/// Why a request failed: the server's answer, a transport failure, `--request-timeout`, or
/// the command's deadline (no `--request-timeout` given).
pub enum RequestError {
    Kube(kube::Error),
    Timeout(Duration),
    Deadline(Duration),
}

/// An error's message with its causes, as Go prints wrapped errors (`a: b: c`).
/// kube's and hyper's wrappers (`ServiceError: client error (Connect)`) are dropped for
/// kubectl's shorter `connect: ...`.
fn chain(e: &dyn std::error::Error) -> String {
    crate::error::cause_chain(e, |m| m.trim_start_matches("ServiceError: ").replace("client error (Connect)", "connect").replace("HyperError: ", ""))
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
        write!(f, "cannot {}: {}", self.what, self.message)
    }
}

impl ReadError {
    /// Whether the answer says the API is not there (404, "could not find the requested
    /// resource"), as a cluster without an optional API answers.
    pub fn says_not_served(&self) -> bool {
        let m = &self.message;
        m.contains("could not find the requested resource") || m.contains("404") || m.contains("not found")
    }

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

/// What an error answer says, never nothing, worded as kubectl prints it: a readable Status as
/// `Error from server (Reason): message` (see [`kubectl_line`]); a body that is a Status the
/// client could not read, read leniently the same way; any other body quoted (its start); none,
/// the HTTP status.
pub(super) fn status_message(s: &kube::core::Status) -> String {
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
            _ => kubectl_line(s),
        };
    }
    let body = s.message.trim();
    if let Ok(v) = serde_json::from_str::<kube::core::Status>(body) {
        if !v.message.trim().is_empty() {
            return kubectl_line(&v);
        }
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        let field = |k: &str| v.get(k).and_then(serde_json::Value::as_str).map(str::trim).filter(|m| !m.is_empty());
        if let Some(m) = field("message") {
            return match field("reason") {
                Some(r) => format!("Error from server ({r}): {m}"),
                None => format!("Error from server: {m}"),
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

/// What Go's client says of an error answer (`StatusError.Error()`): the Status's message as
/// the server wrote it, which kubectl prints after its own words (`error: failed to create
/// quota: <message>`). An answer without one is worded as [`status_message`] words it.
pub(super) fn error_text(s: &kube::core::Status) -> String {
    let m = s.message.trim();
    if m.is_empty() || s.reason == "Failed to parse error data" {
        status_message(s)
    } else {
        m.to_string()
    }
}

/// A Status with a message, as kubectl prints it:
/// - `Invalid` with details: `The Kind "name" is invalid: field: message`, one cause per
///   line after `* ` when there are several;
/// - `Unauthorized`: `You must be logged in to the server (message)`;
/// - any other reason: `Error from server (Reason): message`; none: `Error from server: message`.
pub(super) fn kubectl_line(s: &kube::core::Status) -> String {
    let message = s.message.trim();
    match s.reason.as_str() {
        "Invalid" if s.details.as_ref().is_some_and(|d| !d.causes.is_empty()) => {
            let d = s.details.as_ref().expect("checked above");
            let head =
                if d.kind.is_empty() && d.name.is_empty() { "The request is invalid".to_string() } else { format!("The {} {:?} is invalid", d.kind, d.name) };
            let causes: Vec<String> =
                d.causes.iter().map(|c| if c.field.is_empty() { c.message.clone() } else { format!("{}: {}", c.field, c.message) }).collect();
            match causes.as_slice() {
                [one] => format!("{head}: {one}"),
                many => format!("{head}: \n* {}", many.join("\n* ")),
            }
        }
        "Unauthorized" => format!("You must be logged in to the server ({message})"),
        "" => format!("Error from server: {message}"),
        reason => format!("Error from server ({reason}): {message}"),
    }
}

/// kubectl's manner: the server, then the cause (`Get "https://10.0.0.1:6443": dial tcp ...:
/// connect: connection refused`).
pub(super) fn transport_message(server: &str, e: &RequestError) -> String {
    match e {
        RequestError::Timeout(d) => format!("{server}: no complete answer within --request-timeout ({}s)", d.as_secs_f64()),
        RequestError::Deadline(d) => format!(
            "{server}: no complete answer within {}, the time a command's requests may take together without --request-timeout (set --request-timeout to bound each request instead; 0 waits for ever)",
            super::connect::go_duration(*d)
        ),
        RequestError::Kube(kube::Error::Api(s)) => s.message.clone(),
        RequestError::Kube(e) => match crate::error::tls_failure(e, crate::error::TlsPeer::ApiServer) {
            Some(tls) => format!("{server}: {tls}"),
            None => format!("{server}: {}", chain(e)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, reason: &str, message: &str, details: Option<serde_json::Value>) -> kube::core::Status {
        let mut v = serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason, "message": message});
        if let Some(d) = details {
            v["details"] = d;
        }
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn server_answers_are_worded_as_kubectl_prints_them() {
        let invalid_one = serde_json::json!({"name": "q", "kind": "ResourceQuota", "causes": [{"reason": "FieldValueInvalid", "message": "Invalid value: \"x\": must be a standard resource for quota", "field": "spec.hard[x]"}]});
        let invalid_two = serde_json::json!({"name": "q", "kind": "ResourceQuota", "causes": [
            {"reason": "FieldValueInvalid", "message": "Invalid value: \"x\": a", "field": "spec.hard[x]"},
            {"reason": "FieldValueInvalid", "message": "Invalid value: \"y\": b", "field": "spec.hard[y]"}]});
        let cases = [
            (
                status(403, "Forbidden", "resourcequotas is forbidden: User \"v\" cannot list resource \"resourcequotas\"", None),
                "Error from server (Forbidden): resourcequotas is forbidden: User \"v\" cannot list resource \"resourcequotas\"",
            ),
            (status(404, "NotFound", "resourcequotas \"q\" not found", None), "Error from server (NotFound): resourcequotas \"q\" not found"),
            (
                status(500, "InternalError", "Internal error occurred: etcdserver: request timed out", None),
                "Error from server (InternalError): Internal error occurred: etcdserver: request timed out",
            ),
            (
                status(409, "AlreadyExists", "resourcequotas \"q\" already exists", None),
                "Error from server (AlreadyExists): resourcequotas \"q\" already exists",
            ),
            (
                status(422, "Invalid", "ResourceQuota \"q\" is invalid: ...", Some(invalid_one)),
                "The ResourceQuota \"q\" is invalid: spec.hard[x]: Invalid value: \"x\": must be a standard resource for quota",
            ),
            (
                status(422, "Invalid", "ResourceQuota \"q\" is invalid: ...", Some(invalid_two)),
                "The ResourceQuota \"q\" is invalid: \n* spec.hard[x]: Invalid value: \"x\": a\n* spec.hard[y]: Invalid value: \"y\": b",
            ),
            (status(401, "Unauthorized", "Unauthorized", None), "You must be logged in to the server (Unauthorized)"),
            (status(500, "", "boom", None), "Error from server: boom"),
            (status(503, "", "", None), "the server answered HTTP 503 Service Unavailable with no message"),
            (status(429, "TooManyRequests", "", None), "the server answered HTTP 429 Too Many Requests (TooManyRequests) with no message"),
        ];
        for (s, want) in cases {
            assert_eq!(status_message(&s), want, "{s:?}");
        }
    }

    #[test]
    fn a_status_the_client_could_not_read_is_read_leniently() {
        let unread = |body: &str| status(500, "Failed to parse error data", body, None);
        let cases = [
            (r#"{"kind":"Status","reason":"InternalError","message":"boom","code":"500"}"#, "Error from server (InternalError): boom"),
            (r#"{"message":"boom"}"#, "Error from server: boom"),
            ("<html>bad gateway</html>", "the server answered HTTP 500 Internal Server Error with a body that is not a Status: <html>bad gateway</html>"),
            ("", "the server answered HTTP 500 Internal Server Error with an empty body"),
        ];
        for (body, want) in cases {
            assert_eq!(status_message(&unread(body)), want, "{body}");
        }
    }
}
