//! What `guard install`, `guard uninstall` and `guard status` ask of the cluster: objects
//! applied server-side (field manager `kubectl-quota`), deleted, read; and the guard itself
//! reached, through the API server's service proxy or at its URL with the webhook's CA.

use super::errors::{status_message, transport_message, within, RequestError};
use super::Conn;
use std::time::Duration;

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams};

/// One object the guard's installation names.
#[derive(Debug, Clone)]
pub struct Target {
    pub api_version: String,
    pub kind: String,
    pub plural: String,
    pub namespace: Option<String>,
    pub name: String,
}

impl Target {
    fn api(&self, conn: &Conn) -> Api<DynamicObject> {
        let (group, version) = self.api_version.rsplit_once('/').unwrap_or(("", &self.api_version));
        let ar = ApiResource {
            group: group.into(),
            version: version.into(),
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        };
        match &self.namespace {
            Some(ns) => Api::namespaced_with(conn.client.clone(), ns, &ar),
            None => Api::all_with(conn.client.clone(), &ar),
        }
    }

    /// `kind.group/name`, as kubectl names what it applied.
    pub fn shown(&self) -> String {
        let group = self.api_version.rsplit_once('/').map(|(g, _)| format!(".{g}")).unwrap_or_default();
        format!("{}{group}/{}", self.kind.to_lowercase(), self.name)
    }
}

fn worded(conn: &Conn, e: RequestError) -> String {
    match e {
        RequestError::Kube(kube::Error::Api(s)) => status_message(&s),
        other => transport_message(&conn.server, &other),
    }
}

/// Applies `body` server-side, taking the fields over from any other manager.
pub async fn apply(conn: &Conn, t: &Target, body: &serde_json::Value) -> Result<(), String> {
    let pp = PatchParams::apply("kubectl-quota").force();
    within(conn.timeout, t.api(conn).patch(&t.name, &pp, &Patch::Apply(body))).await.map(|_| ()).map_err(|e| worded(conn, e))
}

/// Deletes the object: `Ok(false)` when it was not there.
pub async fn delete(conn: &Conn, t: &Target) -> Result<bool, String> {
    match within(conn.timeout, t.api(conn).delete(&t.name, &DeleteParams::background())).await {
        Ok(_) => Ok(true),
        Err(RequestError::Kube(kube::Error::Api(s))) if s.code == 404 => Ok(false),
        Err(e) => Err(worded(conn, e)),
    }
}

/// The object as the server has it (`None`: not there).
pub async fn get(conn: &Conn, t: &Target) -> Result<Option<serde_json::Value>, String> {
    match within(conn.timeout, t.api(conn).get_opt(&t.name)).await {
        Ok(Some(o)) => serde_json::to_value(o).map(Some).map_err(|e| e.to_string()),
        Ok(None) => Ok(None),
        Err(e) => Err(worded(conn, e)),
    }
}

/// The largest answer read from the guard itself.
const MAX_GUARD_ANSWER: usize = 1 << 20;
/// How long the guard has to answer `guard status`.
const GUARD_TIMEOUT: Duration = Duration::from_secs(5);

/// `GET path` of a Service's HTTPS port, through the API server's proxy.
pub async fn via_service(conn: &Conn, namespace: &str, service: &str, port: i32, path: &str) -> Result<String, String> {
    let uri = format!("/api/v1/namespaces/{namespace}/services/https:{service}:{port}/proxy{path}");
    let request = http::Request::get(uri).body(Vec::new()).map_err(|e| e.to_string())?;
    match tokio::time::timeout(GUARD_TIMEOUT, conn.client.request_text(request)).await {
        Ok(Ok(text)) if text.len() <= MAX_GUARD_ANSWER => Ok(text),
        Ok(Ok(_)) => Err(format!("the answer is larger than {MAX_GUARD_ANSWER} bytes")),
        Ok(Err(e)) => Err(worded(conn, RequestError::Kube(e))),
        Err(_) => Err(format!("no answer within {} s", GUARD_TIMEOUT.as_secs())),
    }
}

/// `GET url` over HTTPS, trusting only `ca_pem` (the webhook's caBundle), as the API server
/// calls the guard.
pub async fn via_url(url: &str, ca_pem: &[u8]) -> Result<String, String> {
    use http_body_util::{BodyExt, Empty, Limited};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    use rustls_pki_types::pem::PemObject;

    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pki_types::CertificateDer::pem_slice_iter(ca_pem) {
        roots.add(cert.map_err(|e| format!("the CA bundle is not PEM: {e}"))?).map_err(|e| format!("the CA bundle: {e}"))?;
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls).https_only().enable_http1().build();
    let client: Client<_, Empty<bytes::Bytes>> = Client::builder(TokioExecutor::new()).build(connector);
    let uri: http::Uri = url.parse().map_err(|e| format!("{url}: not a URL: {e}"))?;
    let read = async {
        let response = client.get(uri).await.map_err(|e| format!("{url}: {}", crate::error::cause_chain(&e, |m| m)))?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_GUARD_ANSWER).collect().await.map_err(|e| format!("{url}: {e}"))?.to_bytes();
        let text = String::from_utf8_lossy(&body).into_owned();
        if status.is_success() {
            Ok(text)
        } else {
            Err(format!("{url}: HTTP {status}: {}", text.trim()))
        }
    };
    tokio::time::timeout(GUARD_TIMEOUT, read).await.unwrap_or_else(|_| Err(format!("{url}: no answer within {} s", GUARD_TIMEOUT.as_secs())))
}

/// Whether the server serves `plural` in `api_version`, from discovery (`None`: it did not say).
pub async fn serves(conn: &Conn, api_version: &str, plural: &str) -> Option<bool> {
    super::discovery::serves(conn, api_version, plural).await
}
