//! PodSecurity, a validating plugin (the fourth in the server's order): a pod created in a
//! namespace whose `pod-security.kubernetes.io/enforce` level (or, without the label, the
//! server's default from its admission configuration) it breaks is refused (403, after
//! `is forbidden: `): `violates PodSecurity "restricted:latest": allowPrivilegeEscalation !=
//! false (container "app" must set securityContext.allowPrivilegeEscalation=false), ...`.
//!
//! What it replays, as the server's release runs it:
//! - the level and version from the namespace's labels, else the configuration's defaults
//!   (upstream's: `privileged:latest`); an unknown level label enforces `restricted`, an
//!   unknown version label `latest`; a version newer than the server's is evaluated as the
//!   server's ([`PodSecurityChecks::for_policy`]);
//! - every check of the baseline and restricted levels at that version, in the server's order
//!   (baseline's checks by name, then restricted's by name, restricted's replacing the
//!   baseline checks they override), each with the server's reason and detail;
//! - exemptions from the configuration: namespaces and runtime classes (usernames: see
//!   [`Config::exempt_usernames`]);
//! - updates: one that changes no container image, adds or removes no container and adds no
//!   ephemeral container is not evaluated.
//!
//! Workloads are not refused: for templates the plugin only warns, and their pods are refused
//! when the controller creates them (the chain replays that pod by pod).

use std::collections::{BTreeMap, BTreeSet};

use crate::objects::{Container, Pod};
use crate::validation::go_quote;
use crate::version::{KubeVersion, PodSecurityChecks, Rules};

mod checks;
use checks::{evaluate, View};

/// The namespace label naming the level enforced.
pub const ENFORCE_LABEL: &str = "pod-security.kubernetes.io/enforce";
/// The namespace label naming the policy version enforced.
pub const ENFORCE_VERSION_LABEL: &str = "pod-security.kubernetes.io/enforce-version";

/// The server's PodSecurityConfiguration: the defaults for namespaces without labels and the
/// exemptions. [`Config::default`] is upstream's: `privileged`, `latest`, nothing exempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub enforce: String,
    pub enforce_version: String,
    /// Requests by these users are not evaluated. Which user sends a request is not known to
    /// a check: every pod is judged as sent by someone not listed (a check says so when the
    /// list is not empty).
    pub exempt_usernames: Vec<String>,
    pub exempt_runtime_classes: Vec<String>,
    pub exempt_namespaces: Vec<String>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            enforce: "privileged".into(),
            enforce_version: "latest".into(),
            exempt_usernames: vec![],
            exempt_runtime_classes: vec![],
            exempt_namespaces: vec![],
        }
    }
}

/// A PodSecurity level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// The enforced policy: the level, the version (`None`: latest), as the server prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub level: Level,
    pub version: Option<KubeVersion>,
}

impl Policy {
    /// `restricted:latest`, `baseline:v1.30`.
    pub fn name(&self) -> String {
        match self.version {
            Some(v) => format!("{}:v{}.{}", self.level.name(), v.major, v.minor),
            None => format!("{}:latest", self.level.name()),
        }
    }
}

/// A level as the server reads it from a label: an unknown one is `restricted`.
fn level(s: &str) -> Level {
    match s {
        "privileged" => Level::Privileged,
        "baseline" => Level::Baseline,
        _ => Level::Restricted,
    }
}

/// A version as the server reads it from a label (`latest` or `v1.N`): anything else is
/// `latest` (`None`).
fn version(s: &str) -> Option<KubeVersion> {
    let n = s.strip_prefix("v1.")?;
    let ok = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0'));
    if !ok {
        return None;
    }
    n.parse().ok().map(|minor| KubeVersion::new(1, minor))
}

/// The enforced policy of a namespace with `labels`, under `config`'s defaults.
pub fn enforced(labels: &BTreeMap<String, String>, config: &Config) -> Policy {
    Policy {
        level: level(labels.get(ENFORCE_LABEL).unwrap_or(&config.enforce)),
        version: version(labels.get(ENFORCE_VERSION_LABEL).unwrap_or(&config.enforce_version)),
    }
}

/// What the plugin is told about one request.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub pod: &'a Pod,
    pub annotations: &'a BTreeMap<String, String>,
    /// The stored pod of an update.
    pub old: Option<&'a Pod>,
    pub namespace: &'a str,
    /// The namespace's labels (`None`: unknown, nothing refused).
    pub labels: Option<&'a BTreeMap<String, String>>,
}

/// The refusal of a pod create or update (the message after `is forbidden: `), or `None`.
/// `config` is the server's PodSecurityConfiguration (`None`: not given, upstream's defaults).
pub fn refusal(req: &Request, config: Option<&Config>, rules: &Rules) -> Option<String> {
    if !rules.pod_security_admission {
        return None;
    }
    let default = Config::default();
    let config = config.unwrap_or(&default);
    if config.exempt_namespaces.iter().any(|n| n == req.namespace) {
        return None;
    }
    let policy = enforced(req.labels?, config);
    if policy.level == Level::Privileged {
        return None;
    }
    if req.old.is_some_and(|old| !significant_update(old, req.pod)) {
        return None;
    }
    if req.pod.runtime_class_name.as_ref().is_some_and(|rc| config.exempt_runtime_classes.contains(rc)) {
        return None;
    }
    let checks = PodSecurityChecks::for_policy(policy.version, rules.version);
    let view = View::new(req.pod, req.annotations, rules);
    let failed = evaluate(&view, policy.level, &checks);
    if failed.is_empty() {
        return None;
    }
    let details: Vec<String> = failed.iter().map(|(reason, detail)| if detail.is_empty() { reason.clone() } else { format!("{reason} ({detail})") }).collect();
    Some(format!("violates PodSecurity {:?}: {}", policy.name(), details.join(", ")))
}

/// Whether `pod` breaks `level` at the server's latest policy version.
pub fn breaks(pod: &Pod, annotations: &BTreeMap<String, String>, level: Level, rules: &Rules) -> bool {
    let checks = PodSecurityChecks::for_policy(None, rules.version);
    !evaluate(&View::new(pod, annotations, rules), level, &checks).is_empty()
}

/// Whether an update is evaluated: a container added or removed, an image changed, an
/// ephemeral container added or its image changed.
fn significant_update(old: &Pod, new: &Pod) -> bool {
    let changed = |a: &[Container], b: &[Container]| a.len() != b.len() || a.iter().zip(b).any(|(x, y)| x.image != y.image);
    if changed(&old.containers, &new.containers) || changed(&old.init_containers, &new.init_containers) {
        return true;
    }
    let none = Vec::new();
    let old_eph = old.security.as_ref().map_or(&none, |s| &s.ephemeral);
    let new_eph = new.security.as_ref().map_or(&none, |s| &s.ephemeral);
    new_eph.iter().any(|(name, image, _)| old_eph.iter().find(|(n, _, _)| n == name).is_none_or(|(_, i, _)| i != image))
}
