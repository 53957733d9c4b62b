//! The API server's admission configuration (`--admission-control-config-file`): ResourceQuota's
//! `limitedResources`, which makes some resources or scopes consumable only where a quota
//! covers them, and PodSecurity's defaults and exemptions ([`parse_pod_security`]).
//!
//! Accepted shapes: an `AdmissionConfiguration` (`apiserver.config.k8s.io/v1`, or the older
//! `apiserver.k8s.io/v1alpha1`) whose `ResourceQuota` plugin entry embeds the configuration,
//! or the configuration itself: `ResourceQuotaConfiguration` (`apiserver.config.k8s.io/v1`)
//! or `Configuration` (`resourcequota.admission.k8s.io/v1beta1` / `v1alpha1`).
//!
//! ```
//! use kubectl_quota_engine::admission_config::parse;
//!
//! let text = r#"
//! apiVersion: apiserver.config.k8s.io/v1
//! kind: AdmissionConfiguration
//! plugins:
//! - name: ResourceQuota
//!   configuration:
//!     apiVersion: apiserver.config.k8s.io/v1
//!     kind: ResourceQuotaConfiguration
//!     limitedResources:
//!     - resource: pods
//!       matchScopes: [{scopeName: PriorityClass, operator: In, values: [cluster-services]}]
//! "#;
//! let limited = parse("admission.yaml", text).unwrap();
//! assert_eq!(limited[0].resource, "pods");
//! assert_eq!(limited[0].match_scopes[0].values, vec!["cluster-services"]);
//! ```

use serde::Deserialize;
use serde_json::Value;

use crate::admission::pod_security;
use crate::admission::LimitedResource;
use crate::manifest::{parse_str, InputError};
use crate::objects::ScopeRequirement;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Config {
    #[allow(dead_code)]
    api_version: Option<String>,
    #[allow(dead_code)]
    kind: Option<String>,
    #[serde(default)]
    limited_resources: Vec<Limited>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Limited {
    #[serde(default)]
    api_group: String,
    resource: String,
    #[serde(default)]
    match_contains: Vec<String>,
    #[serde(default)]
    match_scopes: Vec<Scope>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Scope {
    scope_name: String,
    operator: String,
    #[serde(default)]
    values: Vec<String>,
}

fn config(file: &str, doc: usize, v: &Value, path_prefix: &str) -> Result<Vec<LimitedResource>, InputError> {
    let origin = crate::manifest::Origin::new(file, doc);
    let c: Config = serde_path_to_error::deserialize(v.clone()).map_err(|e| {
        let p = e.path().to_string();
        InputError::at(&origin, Some(format!("{path_prefix}{}", if p == "." { String::new() } else { p })), e.into_inner().to_string())
    })?;
    Ok(c.limited_resources
        .into_iter()
        .map(|l| LimitedResource {
            api_group: l.api_group,
            resource: l.resource,
            match_contains: l.match_contains,
            match_scopes: l.match_scopes.into_iter().map(|s| ScopeRequirement { scope_name: s.scope_name, operator: s.operator, values: s.values }).collect(),
        })
        .collect())
}

/// Reads the limited resources from an admission configuration file's text. A plugin entry
/// that points at another file (`path:`) is refused; see [`parse_with`].
pub fn parse(file: &str, text: &str) -> Result<Vec<LimitedResource>, InputError> {
    parse_with(file, text, &|path| Err(format!("cannot read {path}: files are read by the caller")))
}

/// Like [`parse`], with `read` giving the text of a file a plugin entry points at (`path:`);
/// its error is reported at that entry.
pub fn parse_with(file: &str, text: &str, read: &dyn Fn(&str) -> Result<String, String>) -> Result<Vec<LimitedResource>, InputError> {
    let mut out = Vec::new();
    for doc in parse_str(file, text)? {
        let v = &doc.value;
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        match kind {
            "AdmissionConfiguration" => {
                let plugins = v.get("plugins").and_then(Value::as_array).cloned().unwrap_or_default();
                for (i, p) in plugins.iter().enumerate() {
                    if p.get("name").and_then(Value::as_str) != Some("ResourceQuota") {
                        continue;
                    }
                    if let Some(c) = p.get("configuration") {
                        out.extend(config(file, doc.origin.document, c, &format!("plugins[{i}].configuration."))?);
                    } else if let Some(path) = p.get("path").and_then(Value::as_str) {
                        let text = read(path).map_err(|e| InputError::at(&doc.origin, Some(format!("plugins[{i}].path")), e))?;
                        out.extend(parse_with(path, &text, read)?);
                    }
                }
            }
            "ResourceQuotaConfiguration" | "Configuration" => out.extend(config(file, doc.origin.document, v, "")?),
            "PodSecurityConfiguration" => {}
            other => {
                return Err(InputError::at(
                    &doc.origin,
                    Some("kind".into()),
                    format!("expected AdmissionConfiguration, ResourceQuotaConfiguration, Configuration or PodSecurityConfiguration, got {other:?}"),
                ))
            }
        }
    }
    Ok(out)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PodSecurityFile {
    #[serde(rename = "apiVersion")]
    #[allow(dead_code)]
    api_version: Option<String>,
    #[allow(dead_code)]
    kind: Option<String>,
    #[serde(default)]
    defaults: PodSecurityDefaults,
    #[serde(default)]
    exemptions: PodSecurityExemptions,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PodSecurityDefaults {
    enforce: Option<String>,
    #[serde(rename = "enforce-version")]
    enforce_version: Option<String>,
    #[allow(dead_code)]
    audit: Option<String>,
    #[serde(rename = "audit-version")]
    #[allow(dead_code)]
    audit_version: Option<String>,
    #[allow(dead_code)]
    warn: Option<String>,
    #[serde(rename = "warn-version")]
    #[allow(dead_code)]
    warn_version: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PodSecurityExemptions {
    #[serde(default)]
    usernames: Vec<String>,
    #[serde(default)]
    namespaces: Vec<String>,
    #[serde(default)]
    runtime_classes: Vec<String>,
}

/// The API versions of PodSecurityConfiguration the server reads.
const POD_SECURITY_VERSIONS: &[&str] =
    &["pod-security.admission.config.k8s.io/v1", "pod-security.admission.config.k8s.io/v1beta1", "pod-security.admission.config.k8s.io/v1alpha1"];

fn pod_security_config(origin: &crate::manifest::Origin, v: &Value, prefix: &str) -> Result<pod_security::Config, InputError> {
    let at = |p: &str| Some(format!("{prefix}{p}"));
    let version = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if !POD_SECURITY_VERSIONS.contains(&version) {
        return Err(InputError::at(origin, at("apiVersion"), format!("expected one of {}, got {version:?}", POD_SECURITY_VERSIONS.join(", "))));
    }
    let c: PodSecurityFile = serde_path_to_error::deserialize(v.clone()).map_err(|e| {
        let p = e.path().to_string();
        InputError::at(origin, at(if p == "." { "" } else { &p }), e.into_inner().to_string())
    })?;
    let mut out = pod_security::Config::default();
    if let Some(level) = c.defaults.enforce {
        if !matches!(level.as_str(), "privileged" | "baseline" | "restricted") {
            return Err(InputError::at(origin, at("defaults.enforce"), format!("{level:?}: must be one of privileged, baseline, restricted")));
        }
        out.enforce = level;
    }
    if let Some(version) = c.defaults.enforce_version {
        let ok = version == "latest" || version.strip_prefix("v1.").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !ok {
            return Err(InputError::at(origin, at("defaults.enforce-version"), format!("{version:?}: must be \"latest\" or \"v1.x\"")));
        }
        out.enforce_version = version;
    }
    out.exempt_usernames = c.exemptions.usernames;
    out.exempt_namespaces = c.exemptions.namespaces;
    out.exempt_runtime_classes = c.exemptions.runtime_classes;
    Ok(out)
}

/// Reads the PodSecurity plugin's configuration (defaults and exemptions) from an admission
/// configuration file's text: the `PodSecurity` entry of an `AdmissionConfiguration`, or a
/// `PodSecurityConfiguration` (v1, v1beta1, v1alpha1) on its own. `None`: the file
/// configures no PodSecurity (the server then runs upstream's defaults).
pub fn parse_pod_security(file: &str, text: &str) -> Result<Option<pod_security::Config>, InputError> {
    parse_pod_security_with(file, text, &|path| Err(format!("cannot read {path}: files are read by the caller")))
}

/// Like [`parse_pod_security`], with `read` giving the text of a file a plugin entry points at.
pub fn parse_pod_security_with(file: &str, text: &str, read: &dyn Fn(&str) -> Result<String, String>) -> Result<Option<pod_security::Config>, InputError> {
    let mut out = None;
    for doc in parse_str(file, text)? {
        let v = &doc.value;
        match v.get("kind").and_then(Value::as_str).unwrap_or("") {
            "AdmissionConfiguration" => {
                let plugins = v.get("plugins").and_then(Value::as_array).cloned().unwrap_or_default();
                for (i, p) in plugins.iter().enumerate() {
                    if p.get("name").and_then(Value::as_str) != Some("PodSecurity") {
                        continue;
                    }
                    if let Some(c) = p.get("configuration") {
                        out = Some(pod_security_config(&doc.origin, c, &format!("plugins[{i}].configuration."))?);
                    } else if let Some(path) = p.get("path").and_then(Value::as_str) {
                        let text = read(path).map_err(|e| InputError::at(&doc.origin, Some(format!("plugins[{i}].path")), e))?;
                        out = parse_pod_security_with(path, &text, read)?.or(out);
                    }
                }
            }
            "PodSecurityConfiguration" => out = Some(pod_security_config(&doc.origin, v, "")?),
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_configuration_kind_is_accepted() {
        let text = "apiVersion: resourcequota.admission.k8s.io/v1beta1\nkind: Configuration\nlimitedResources:\n- resource: persistentvolumeclaims\n  matchContains: [.storageclass.storage.k8s.io/requests.storage]\n";
        let l = parse("c.yaml", text).unwrap();
        assert_eq!(l[0].match_contains, vec![".storageclass.storage.k8s.io/requests.storage"]);
    }

    #[test]
    fn unknown_fields_are_errors_with_their_path() {
        let text = "apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\nlimitedResources:\n- resource: pods\n  matchScope: []\n";
        let err = parse("c.yaml", text).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("limitedResources[0].matchScope"));
        assert!(err.message.contains("matchScope"), "{err}");
    }
}
