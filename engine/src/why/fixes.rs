//! Who refused an object, and the smallest change that lets it in, read from the server's own
//! words: a FailedCreate event, a ReplicaFailure condition, or the replay's message (they are
//! the same text). Quota's fixes are worked out from the quota's numbers
//! ([`super::raise_change`]); this module answers the other refusals a controller meets:
//! LimitRange bounds on containers, pods and claims, PodSecurity, admission policies and
//! webhooks, a missing ServiceAccount.
//!
//! Each fix is one short line, most direct first; the last names the other side (the
//! LimitRange, the namespace's level) where changing that is the alternative.
//!
//! ```
//! use kubectl_quota_engine::why::fixes::{blocker_of, fixes, Blocker};
//!
//! let m = "pods \"web-1\" is forbidden: maximum cpu usage per Container is 1, but limit is 2";
//! assert_eq!(blocker_of(m), Blocker::LimitRange);
//! assert_eq!(fixes(m, None, &[]), vec!["lower limits.cpu to 1 or less in each container, or raise the LimitRange's max cpu per Container to 2"]);
//! ```

use std::cmp::Ordering;

use serde::Serialize;

use crate::objects::{Container, LimitRangeItem, Pod};
use crate::quantity::Quantity;

/// Who refused, as the message says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Blocker {
    #[serde(rename = "quota")]
    Quota,
    LimitRange,
    PodSecurity,
    /// A ValidatingAdmissionPolicy (or a MutatingAdmissionPolicy that failed).
    #[serde(rename = "policy")]
    Policy,
    /// An admission webhook.
    #[serde(rename = "webhook")]
    Webhook,
    ServiceAccount,
    /// Anything else the server said (validation, a missing class, ...).
    #[serde(rename = "other")]
    Other,
    /// Kueue keeps the Job suspended: its ClusterQueue has no room for it (no pod was
    /// refused; none was created).
    Kueue,
}

impl Blocker {
    /// How a sentence names it: `blocked by a LimitRange`.
    pub fn phrase(self) -> &'static str {
        match self {
            Blocker::Quota => "quota",
            Blocker::LimitRange => "a LimitRange",
            Blocker::PodSecurity => "PodSecurity",
            Blocker::Policy => "an admission policy",
            Blocker::Webhook => "an admission webhook",
            Blocker::ServiceAccount => "a missing ServiceAccount",
            Blocker::Other => "the API server",
            Blocker::Kueue => "Kueue",
        }
    }

    /// The name a table's column gives it.
    pub fn name(self) -> &'static str {
        match self {
            Blocker::Quota => "quota",
            Blocker::LimitRange => "LimitRange",
            Blocker::PodSecurity => "PodSecurity",
            Blocker::Policy => "policy",
            Blocker::Webhook => "webhook",
            Blocker::ServiceAccount => "ServiceAccount",
            Blocker::Other => "other",
            Blocker::Kueue => "Kueue",
        }
    }
}

/// Who refused, from the server's message.
pub fn blocker_of(message: &str) -> Blocker {
    if super::is_quota_message(message) {
        Blocker::Quota
    } else if message.contains(" usage per ") || message.contains(" max limit to request ratio per ") {
        Blocker::LimitRange
    } else if message.contains("violates PodSecurity ") {
        Blocker::PodSecurity
    } else if message.contains("AdmissionPolicy '") && (message.contains("' denied request: ") || message.contains("' with binding '")) {
        Blocker::Policy
    } else if message.contains("admission webhook \"") {
        Blocker::Webhook
    } else if message.contains("error looking up service account ") {
        Blocker::ServiceAccount
    } else {
        Blocker::Other
    }
}

/// The fixes for a refusal that is not quota's (none for quota's, nor for words this does not
/// know). `pod` is the pod as the server judged it (LimitRange defaults applied), when known:
/// the fixes then name its containers; `limit_ranges` the namespace's, in name order, to name
/// the one that refuses.
pub fn fixes(message: &str, pod: Option<&Pod>, limit_ranges: &[(&str, &[LimitRangeItem])]) -> Vec<String> {
    let said = message.split_once(" is forbidden: ").map_or(message, |(_, m)| m);
    match blocker_of(message) {
        Blocker::LimitRange => limit_range_violations(said).iter().map(|v| v.fix(pod, limit_ranges)).collect(),
        Blocker::PodSecurity => pod_security_fixes(said),
        Blocker::Policy => policy_fix(said).into_iter().collect(),
        Blocker::Webhook => webhook_fix(said).into_iter().collect(),
        Blocker::ServiceAccount => service_account_fix(said).into_iter().collect(),
        Blocker::Quota | Blocker::Other | Blocker::Kueue => vec![],
    }
}

/// One bound a LimitRange says was broken.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Violation {
    bound: Bound,
    resource: String,
    /// `Container`, `Pod`, `PersistentVolumeClaim`.
    per: String,
    enforced: String,
    /// `request` or `limit`, and its value; `None`: it was not specified.
    found: Option<(String, Option<String>)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Min,
    Max,
    Ratio,
}

/// The violations of a LimitRanger message: one, or several as `[a, b]`.
fn limit_range_violations(said: &str) -> Vec<Violation> {
    let inner = said.strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or(said);
    // Each violation may hold `, but`: the pieces after a split are glued back.
    let mut parts: Vec<String> = Vec::new();
    for piece in inner.split(", ") {
        match parts.last_mut() {
            Some(last) if piece.starts_with("but ") => {
                last.push_str(", ");
                last.push_str(piece);
            }
            _ => parts.push(piece.to_string()),
        }
    }
    parts.iter().filter_map(|p| violation(p)).collect()
}

fn violation(p: &str) -> Option<Violation> {
    let (head, tail) = p.split_once(", but ").or_else(|| p.split_once(".  ")).unwrap_or((p, ""));
    let (bound, resource, rest) = if let Some(r) = head.strip_prefix("minimum ") {
        let (res, rest) = r.split_once(" usage per ")?;
        (Bound::Min, res, rest)
    } else if let Some(r) = head.strip_prefix("maximum ") {
        let (res, rest) = r.split_once(" usage per ")?;
        (Bound::Max, res, rest)
    } else {
        let (res, rest) = head.split_once(" max limit to request ratio per ")?;
        (Bound::Ratio, res, rest)
    };
    let (per, enforced) = rest.split_once(" is ")?;
    let found = if let Some(v) = tail.strip_prefix("request is ") {
        Some(("request".to_string(), Some(v.to_string())))
    } else if let Some(v) = tail.strip_prefix("limit is ") {
        Some(("limit".to_string(), Some(v.to_string())))
    } else if tail.starts_with("No request") || tail.starts_with("no request") {
        Some(("request".to_string(), None))
    } else if tail.starts_with("No limit") || tail.starts_with("no limit") {
        Some(("limit".to_string(), None))
    } else {
        // `provided ratio is 4.000000`
        None
    };
    Some(Violation { bound, resource: resource.to_string(), per: per.to_string(), enforced: enforced.to_string(), found })
}

impl Violation {
    /// The LimitRange that holds this bound, first in name order.
    fn range<'a>(&self, limit_ranges: &[(&'a str, &[LimitRangeItem])]) -> Option<&'a str> {
        let enforced = Quantity::parse(&self.enforced).ok();
        limit_ranges.iter().find_map(|(name, items)| {
            items
                .iter()
                .any(|i| {
                    let map = match self.bound {
                        Bound::Min => &i.min,
                        Bound::Max => &i.max,
                        Bound::Ratio => &i.max_limit_request_ratio,
                    };
                    i.type_ == self.per && map.get(&self.resource).is_some_and(|v| enforced.as_ref().is_none_or(|e| v == e))
                })
                .then_some(*name)
        })
    }

    /// The containers of `pod` that break this bound (a `Container` bound only).
    fn containers(&self, pod: &Pod) -> Vec<String> {
        let Ok(enforced) = Quantity::parse(&self.enforced) else { return vec![] };
        let res = self.resource.as_str();
        let breaks = |c: &Container| match (self.bound, self.found.as_ref().map(|(side, v)| (side.as_str(), v.is_some()))) {
            (Bound::Max, Some(("limit", false))) => !c.limits.contains_key(res),
            (Bound::Max, Some(("limit", true))) => c.limits.get(res).is_some_and(|v| v.cmp(&enforced) == Ordering::Greater),
            (Bound::Max, _) => c.requests.get(res).is_some_and(|v| v.cmp(&enforced) == Ordering::Greater),
            (Bound::Min, Some(("request", false))) => !c.requests.contains_key(res),
            (Bound::Min, Some(("limit", _))) => c.limits.get(res).is_some_and(|v| v.cmp(&enforced) == Ordering::Less),
            (Bound::Min, _) => c.requests.get(res).is_some_and(|v| v.cmp(&enforced) == Ordering::Less),
            (Bound::Ratio, _) => match (c.requests.get(res), c.limits.get(res)) {
                (Some(r), Some(l)) => r.is_zero() || l.cmp_product(r, &enforced) == Ordering::Greater,
                _ => true,
            },
        };
        pod.containers.iter().chain(pod.init_containers.iter()).filter(|c| breaks(c)).map(|c| c.name.clone()).collect()
    }

    fn fix(&self, pod: Option<&Pod>, limit_ranges: &[(&str, &[LimitRangeItem])]) -> String {
        let (res, e) = (&self.resource, &self.enforced);
        let range = self.range(limit_ranges).map_or_else(|| "the LimitRange's".to_string(), |n| format!("LimitRange {n}'s"));
        let what = match self.per.as_str() {
            "Container" => match pod.map(|p| self.containers(p)).filter(|c| !c.is_empty()) {
                Some(names) => format!("in container{} {}", if names.len() == 1 { "" } else { "s" }, names.join(", ")),
                None => "in each container".to_string(),
            },
            "Pod" => "in the pod (its containers added up)".to_string(),
            _ => "in the claim".to_string(),
        };
        let side = |s: &str| if self.per == "PersistentVolumeClaim" { format!("requests.{res}") } else { format!("{s}s.{res}") };
        match (self.bound, &self.found) {
            (Bound::Max, Some((s, Some(v)))) => format!("lower {} to {e} or less {what}, or raise {range} max {res} per {} to {v}", side(s), self.per),
            (Bound::Max, Some((s, None))) => format!("set {} (at most {e}) {what}, or give {range} Container items a default {res}", side(s)),
            (Bound::Min, Some((s, Some(v)))) => format!("raise {} to {e} or more {what}, or lower {range} min {res} per {} to {v}", side(s), self.per),
            (Bound::Min, Some((s, None))) => format!("set {} (at least {e}) {what}, or give {range} Container items a defaultRequest {res}", side(s)),
            (Bound::Ratio, _) => format!(
                "keep limits.{res} within {e} times requests.{res} {what} (lower the limit or raise the request), or raise {range} maxLimitRequestRatio {res}"
            ),
            (_, None) => format!("meet {range} {res} bound per {}", self.per),
        }
    }
}

/// `a, b (c, d), e` split at the commas outside parentheses.
fn top_level(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    let bytes = s.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b',' if depth == 0 && bytes.get(i + 1) == Some(&b' ') => {
                out.push(&s[start..i]);
                start = i + 2;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// PodSecurity: one line per check the pod fails (`restricted:latest: containers "app" must
/// set securityContext.allowPrivilegeEscalation=false`), then the namespace's side.
fn pod_security_fixes(said: &str) -> Vec<String> {
    let Some(rest) = said.split_once("violates PodSecurity ").map(|x| x.1) else { return vec![] };
    let Some((level, checks)) = rest.split_once(": ") else { return vec![] };
    let level = level.trim_matches('"');
    let mut out: Vec<String> = top_level(checks)
        .into_iter()
        .map(|c| match c.split_once(" (") {
            Some((reason, detail)) => {
                let detail = detail.strip_suffix(')').unwrap_or(detail);
                if detail.contains(" must ") {
                    format!("PodSecurity {level}: {detail}")
                } else {
                    format!("PodSecurity {level} forbids {reason}: {detail}")
                }
            }
            None => format!("PodSecurity {level} forbids {c}"),
        })
        .collect();
    let enforced = level.split(':').next().unwrap_or(level);
    out.push(format!("or lower the namespace's pod-security.kubernetes.io/enforce level (it is {enforced})"));
    out
}

/// A policy's denial: what it asks, in its own message.
fn policy_fix(said: &str) -> Option<String> {
    let (head, message) = said.split_once(" denied request: ")?;
    let policy = head.split('\'').nth(1)?;
    Some(format!("meet policy {policy}: {message}"))
}

/// A webhook's denial: what it asks, in its own message.
fn webhook_fix(said: &str) -> Option<String> {
    let rest = said.split_once("admission webhook \"")?.1;
    let (hook, message) = rest.split_once('"')?;
    let message = message.split_once("denied the request: ").map_or("", |x| x.1);
    Some(if message.is_empty() { format!("meet webhook {hook}'s rules") } else { format!("meet webhook {hook}: {message}") })
}

/// `error looking up service account NS/NAME: ...`: create it, or name another.
fn service_account_fix(said: &str) -> Option<String> {
    let rest = said.split_once("error looking up service account ")?.1;
    let (who, _) = rest.split_once(':')?;
    let (ns, name) = who.split_once('/')?;
    Some(format!("create ServiceAccount {name} in namespace {ns}, or set serviceAccountName to one that exists"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    fn container(name: &str, requests: &[(&str, &str)], limits: &[(&str, &str)]) -> Container {
        Container {
            name: name.into(),
            requests: requests.iter().map(|(k, v)| (k.to_string(), q(v))).collect(),
            limits: limits.iter().map(|(k, v)| (k.to_string(), q(v))).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn who_refused_is_read_from_the_servers_words() {
        for (message, want) in [
            ("pods \"a\" is forbidden: exceeded quota: compute, requested: requests.cpu=1, used: requests.cpu=1, limited: requests.cpu=1", Blocker::Quota),
            ("pods \"a\" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 2Gi", Blocker::LimitRange),
            ("persistentvolumeclaims \"data-db-0\" is forbidden: maximum storage usage per PersistentVolumeClaim is 5Gi, but request is 8Gi", Blocker::LimitRange),
            ("pods \"a\" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000", Blocker::LimitRange),
            ("pods \"a\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"app\" must not set securityContext.privileged=true)", Blocker::PodSecurity),
            ("pods \"a\" is forbidden: ValidatingAdmissionPolicy 'limits' with binding 'limits' denied request: set limits", Blocker::Policy),
            ("admission webhook \"deny.example.com\" denied the request: no", Blocker::Webhook),
            ("pods \"a\" is forbidden: error looking up service account ns/app: serviceaccount \"app\" not found", Blocker::ServiceAccount),
            ("Pod \"a\" is invalid: spec.containers[0].image: Required value", Blocker::Other),
        ] {
            assert_eq!(blocker_of(message), want, "{message}");
        }
    }

    #[test]
    fn limit_range_fixes_name_the_containers_the_range_and_the_bound() {
        let pod = Pod {
            containers: vec![container("app", &[("cpu", "1")], &[("cpu", "2")]), container("side", &[("cpu", "100m")], &[("cpu", "500m")])].into(),
            ..Default::default()
        };
        let item = LimitRangeItem {
            type_: "Container".into(),
            max: [("cpu".to_string(), q("1"))].into(),
            min: [("memory".to_string(), q("64Mi"))].into(),
            max_limit_request_ratio: [("cpu".to_string(), q("3"))].into(),
            ..Default::default()
        };
        let claims = LimitRangeItem { type_: "PersistentVolumeClaim".into(), max: [("storage".to_string(), q("5Gi"))].into(), ..Default::default() };
        let ranges: &[(&str, &[LimitRangeItem])] = &[("bounds", std::slice::from_ref(&item)), ("disks", std::slice::from_ref(&claims))];
        let cases = [
            ("pods \"a\" is forbidden: maximum cpu usage per Container is 1, but limit is 2", vec!["lower limits.cpu to 1 or less in container app, or raise LimitRange bounds's max cpu per Container to 2"]),
            (
                "pods \"a\" is forbidden: [minimum memory usage per Container is 64Mi.  No request is specified, cpu max limit to request ratio per Container is 3, but provided ratio is 5.000000]",
                vec![
                    "set requests.memory (at least 64Mi) in containers app, side, or give LimitRange bounds's Container items a defaultRequest memory",
                    "keep limits.cpu within 3 times requests.cpu in container side (lower the limit or raise the request), or raise LimitRange bounds's maxLimitRequestRatio cpu",
                ],
            ),
            (
                "persistentvolumeclaims \"data-db-0\" is forbidden: maximum storage usage per PersistentVolumeClaim is 5Gi, but request is 8Gi",
                vec!["lower requests.storage to 5Gi or less in the claim, or raise LimitRange disks's max storage per PersistentVolumeClaim to 8Gi"],
            ),
            ("pods \"a\" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 2Gi", vec!["lower limits.memory to 1Gi or less in the pod (its containers added up), or raise the LimitRange's max memory per Pod to 2Gi"]),
        ];
        for (message, want) in cases {
            assert_eq!(fixes(message, Some(&pod), ranges), want, "{message}");
        }
    }

    #[test]
    fn pod_security_policy_webhook_and_service_account_fixes_are_their_own_words() {
        let cases = [
            (
                "pods \"a\" is forbidden: violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"app\" must set securityContext.allowPrivilegeEscalation=false), host namespaces (hostNetwork=true), hostPath volumes (volumes \"a\", \"b\")",
                vec![
                    "PodSecurity restricted:latest: container \"app\" must set securityContext.allowPrivilegeEscalation=false",
                    "PodSecurity restricted:latest forbids host namespaces: hostNetwork=true",
                    "PodSecurity restricted:latest forbids hostPath volumes: volumes \"a\", \"b\"",
                    "or lower the namespace's pod-security.kubernetes.io/enforce level (it is restricted)",
                ],
            ),
            ("pods \"a\" is forbidden: ValidatingAdmissionPolicy 'limits' with binding 'team' denied request: every container must set limits", vec!["meet policy limits: every container must set limits"]),
            ("admission webhook \"deny.example.com\" denied the request: no latest tags", vec!["meet webhook deny.example.com: no latest tags"]),
            (
                "pods \"a\" is forbidden: error looking up service account ns/app: serviceaccount \"app\" not found",
                vec!["create ServiceAccount app in namespace ns, or set serviceAccountName to one that exists"],
            ),
            ("exceeded quota: compute, requested: requests.cpu=1, used: requests.cpu=1, limited: requests.cpu=1", vec![]),
            ("something else entirely", vec![]),
        ];
        for (message, want) in cases {
            assert_eq!(fixes(message, None, &[]), want, "{message}");
        }
    }
}
