//! Discovery: the server's version and which APIs it serves.

use super::errors::{within, RequestError};
use super::Conn;

use kubectl_quota_engine::version::KubeVersion;

/// `GET /version`: the server's gitVersion and its release.
pub async fn server_version(conn: &Conn) -> Result<(String, KubeVersion), String> {
    let info = within(conn.timeout, conn.client.apiserver_version()).await.map_err(|e| super::errors::transport_message(&conn.server, &e))?;
    let v = KubeVersion::parse(&format!("{}.{}", info.major, info.minor)).or_else(|_| KubeVersion::parse(&info.git_version))?;
    Ok((info.git_version, v))
}

/// Whether the server serves `plural` in `api_version` (`resource.k8s.io/v1`), from
/// discovery, which every authenticated user may read; `None` when discovery did not answer.
pub(super) async fn serves(conn: &Conn, api_version: &str, plural: &str) -> Option<bool> {
    match within(conn.timeout, conn.client.list_api_group_resources(api_version)).await {
        Ok(list) => Some(list.resources.iter().any(|r| r.name == plural)),
        Err(e) if discovery_has_no(&e) => Some(false),
        Err(_) => None,
    }
}

/// Whether discovery answered that a kind is not served (an unknown group, version or kind),
/// as opposed to not answering at all.
pub(super) fn discovery_has_no(e: &RequestError) -> bool {
    match e {
        RequestError::Kube(kube::Error::Discovery(_)) => true,
        RequestError::Kube(kube::Error::Api(s)) => s.code == 404,
        _ => false,
    }
}

/// Whether discovery answers that no version in `versions` of `group` serves `plural` (`false`
/// when discovery does not answer).
pub(super) async fn served_nowhere(conn: &Conn, group: &str, versions: &[&str], plural: &str) -> bool {
    for version in versions {
        let api_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
        if serves(conn, &api_version, plural).await != Some(false) {
            return false;
        }
    }
    true
}
