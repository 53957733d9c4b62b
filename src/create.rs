//! `create`: builds a ResourceQuota from kubectl-style flags and validates it with the API
//! server's rules before anything is sent.
//!
//! ```
//! use kubectl_quota::create::{build_quota, QuotaFlags};
//!
//! let flags = QuotaFlags {
//!     hard: Some("pods=10,requests.cpu=4".into()),
//!     priority_classes: vec!["high".into(), "medium".into()],
//!     ..QuotaFlags::default()
//! };
//! let q = build_quota("critical", Some("team-a"), &flags).unwrap();
//! let sel = q.spec.unwrap().scope_selector.unwrap().match_expressions.unwrap();
//! assert_eq!((sel[0].scope_name.as_str(), sel[0].operator.as_str()), ("PriorityClass", "In"));
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ResourceQuota, ResourceQuotaSpec, ScopeSelector, ScopedResourceSelectorRequirement};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::quantity::Quantity;

/// The flags that shape the quota.
#[derive(Debug, Clone, Default)]
pub struct QuotaFlags {
    /// `--hard=k=v,k=v`
    pub hard: Option<String>,
    /// `--scopes=A,B`
    pub scopes: Option<String>,
    /// `--priority-class=a,b`: shorthand for `--scope-selector 'PriorityClass In a,b'`.
    pub priority_classes: Vec<String>,
    /// `--scope-selector 'SCOPE OPERATOR [v1,v2]'`, repeatable.
    pub scope_selectors: Vec<String>,
}

/// Parses `--hard` as kubectl does: `k=v` pairs separated by commas, values as quantities.
pub fn parse_hard(s: &str) -> Result<BTreeMap<String, K8sQuantity>, String> {
    let mut out = BTreeMap::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let kv: Vec<&str> = part.split('=').collect();
        if kv.len() != 2 {
            return Err(format!("Invalid argument syntax {part}, expected <resource>=<value>"));
        }
        let q = Quantity::parse(kv[1]).map_err(|e| format!("--hard {}: {e}", kv[0]))?;
        // Kept as written (the server canonicalizes when it stores).
        let _ = q;
        out.insert(kv[0].to_string(), K8sQuantity(kv[1].to_string()));
    }
    Ok(out)
}

/// Parses one `--scope-selector` expression: `PriorityClass In high,medium`,
/// `PriorityClass Exists`, `NotBestEffort Exists`.
pub fn parse_scope_selector(s: &str) -> Result<ScopedResourceSelectorRequirement, String> {
    let words: Vec<&str> = s.split_whitespace().collect();
    let (scope, op, values) = match words.as_slice() {
        [scope, op] => (*scope, *op, vec![]),
        [scope, op, values] => (*scope, *op, values.split(',').filter(|v| !v.is_empty()).map(str::to_string).collect()),
        _ => return Err(format!("--scope-selector {s:?}: expected 'SCOPE OPERATOR [VALUE,...]', e.g. 'PriorityClass In high,medium'")),
    };
    Ok(ScopedResourceSelectorRequirement { scope_name: scope.into(), operator: op.into(), values: (!values.is_empty()).then_some(values) })
}

/// Builds the quota object from flags. Errors are flag-syntax errors; the server's validation
/// rules are applied separately ([`crate::validation::validate_resource_quota`]).
pub fn build_quota(name: &str, namespace: Option<&str>, flags: &QuotaFlags) -> Result<ResourceQuota, String> {
    let hard = flags.hard.as_deref().map(parse_hard).transpose()?;
    let scopes = match flags.scopes.as_deref() {
        Some(s) => {
            let list: Vec<String> = s.split(',').map(str::to_string).collect();
            if list.iter().any(|x| x.is_empty()) {
                return Err("invalid resource quota scope \"\"".into());
            }
            Some(list)
        }
        None => None,
    };
    let mut exprs: Vec<ScopedResourceSelectorRequirement> = flags.scope_selectors.iter().map(|s| parse_scope_selector(s)).collect::<Result<_, _>>()?;
    if !flags.priority_classes.is_empty() {
        let values: Vec<String> = flags.priority_classes.iter().flat_map(|p| p.split(',')).filter(|v| !v.is_empty()).map(str::to_string).collect();
        exprs.push(ScopedResourceSelectorRequirement { scope_name: "PriorityClass".into(), operator: "In".into(), values: Some(values) });
    }
    Ok(ResourceQuota {
        metadata: ObjectMeta { name: Some(name.to_string()), namespace: namespace.map(str::to_string), ..ObjectMeta::default() },
        spec: Some(ResourceQuotaSpec { hard, scopes, scope_selector: (!exprs.is_empty()).then_some(ScopeSelector { match_expressions: Some(exprs) }) }),
        status: None,
    })
}

/// Warnings newer servers return on create: a request above its limit
/// (`ResourceQuota requests.cpu (4) should be less than limits.cpu (2)`).
pub fn warnings(q: &ResourceQuota) -> Vec<String> {
    let hard = q.spec.as_ref().and_then(|s| s.hard.clone()).unwrap_or_default();
    let get = |k: &str| hard.get(k).and_then(|v| Quantity::parse(&v.0).ok());
    let mut out = Vec::new();
    for base in ["cpu", "memory", "storage", "ephemeral-storage"] {
        let limit_key = format!("limits.{base}");
        let Some(limit) = get(&limit_key) else { continue };
        for req_key in [format!("requests.{base}"), base.to_string()] {
            if let Some(req) = get(&req_key) {
                if req > limit {
                    out.push(format!("ResourceQuota {req_key} ({req}) should be less than {limit_key} ({limit})"));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_flag_syntax_errors_use_kubectl_wording() {
        let cases = [
            ("pods", "Invalid argument syntax pods, expected <resource>=<value>"),
            ("pods=1=2", "Invalid argument syntax pods=1=2, expected <resource>=<value>"),
            ("cpu=1K", "--hard cpu: unable to parse quantity's suffix"),
        ];
        for (flag, want) in cases {
            assert_eq!(parse_hard(flag).unwrap_err(), want);
        }
        assert_eq!(parse_hard("pods=10,requests.cpu=500m").unwrap().len(), 2);
    }

    #[test]
    fn scope_selector_expressions() {
        let cases = [
            ("PriorityClass In high,medium", ("PriorityClass", "In", Some(vec!["high", "medium"]))),
            ("PriorityClass Exists", ("PriorityClass", "Exists", None)),
            ("  NotBestEffort   Exists ", ("NotBestEffort", "Exists", None)),
        ];
        for (s, (scope, op, values)) in cases {
            let r = parse_scope_selector(s).unwrap();
            assert_eq!((r.scope_name.as_str(), r.operator.as_str()), (scope, op));
            assert_eq!(r.values, values.map(|v| v.into_iter().map(String::from).collect::<Vec<_>>()));
        }
        assert!(parse_scope_selector("PriorityClass").is_err());
    }

    #[test]
    fn empty_scope_items_are_refused() {
        let flags = QuotaFlags { scopes: Some("BestEffort,".into()), ..QuotaFlags::default() };
        assert_eq!(build_quota("q", None, &flags).unwrap_err(), "invalid resource quota scope \"\"");
    }

    #[test]
    fn request_above_limit_warns() {
        let flags = QuotaFlags { hard: Some("requests.cpu=4,limits.cpu=2,memory=1Gi,limits.memory=2Gi".into()), ..QuotaFlags::default() };
        let q = build_quota("q", None, &flags).unwrap();
        assert_eq!(warnings(&q), vec!["ResourceQuota requests.cpu (4) should be less than limits.cpu (2)"]);
    }
}
