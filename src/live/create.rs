//! The one write: `create`.

use super::errors::{error_text, transport_message, within, RequestError};
use super::Conn;

use k8s_openapi::api::core::v1::ResourceQuota;
use kube::api::{Api, PostParams};

/// Creates a quota (or submits it with dryRun=All).
/// Errors: `(message, unreachable)`, the message as Go's client says it (kubectl prints it
/// after `failed to create quota: `); an unreachable server is exit status 2, a refusal 1.
pub async fn create_quota(conn: &Conn, namespace: &str, quota: &ResourceQuota, dry_run: bool) -> Result<ResourceQuota, (String, bool)> {
    let api = Api::<ResourceQuota>::namespaced(conn.client.clone(), namespace);
    let pp = PostParams { dry_run, field_manager: Some("kubectl-quota".into()) };
    within(conn.timeout, api.create(&pp, quota)).await.map_err(|e| match e {
        RequestError::Kube(kube::Error::Api(s)) => (error_text(&s), false),
        other => (transport_message(&conn.server, &other), true),
    })
}
