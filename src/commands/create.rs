//! `kubectl quota create`: flags -> a ResourceQuota -> validated with the API server's rules
//! -> sent (or printed, for `--dry-run=client`). The only command that writes to the cluster.
//!
//! ```
//! use kubectl_quota::commands::create::{build_quota, QuotaFlags};
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

use clap::{Args, ValueEnum};
use kubectl_quota_engine::quantity::Quantity;
use kubectl_quota_engine::validation;

use crate::error::Fatal;
use crate::global::GlobalFlags;
use crate::live;

pub const CREATE_HELP: &str = "\
Examples:
  # A compute quota for the current namespace
  kubectl quota create compute --hard=requests.cpu=4,requests.memory=8Gi,limits.cpu=8,limits.memory=16Gi,pods=20

  # Only pods with the high or medium PriorityClass (a scope selector kubectl create cannot express)
  kubectl quota create critical --hard=pods=10,requests.cpu=4 --priority-class=high,medium

  # Any selector expression, and plain scopes
  kubectl quota create long-running --hard=pods=50 --scopes=NotTerminating --scope-selector 'PriorityClass NotIn batch'

  # Print the object without contacting the cluster
  kubectl quota create q --hard=pods=3 --dry-run=client -o yaml

The quota is validated with the API server's rules before anything is sent.";
/// `--dry-run` values, as kubectl has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DryRun {
    None,
    Client,
    Server,
}

/// Output formats of `create`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CreateOutput {
    Yaml,
    Json,
    Name,
}

/// `kubectl quota create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The quota's name.
    pub name: String,
    /// A comma-delimited set of resource=quantity pairs that define a hard limit.
    #[arg(long, value_name = "RESOURCE=QUANTITY,...")]
    pub hard: Option<String>,
    /// A comma-delimited set of quota scopes that must all match each object tracked by the quota.
    #[arg(long, value_name = "SCOPE,...")]
    pub scopes: Option<String>,
    /// Track only pods with one of these PriorityClasses (a `PriorityClass In` scope selector).
    #[arg(long = "priority-class", value_name = "NAME,...")]
    pub priority_class: Vec<String>,
    /// A scope selector expression: 'SCOPE OPERATOR [VALUE,...]' (repeatable), e.g.
    /// 'PriorityClass In high,medium', 'PriorityClass DoesNotExist'.
    #[arg(long = "scope-selector", value_name = "EXPRESSION")]
    pub scope_selector: Vec<String>,
    /// Must be "none", "server", or "client". client: print the object, send nothing;
    /// server: submit with dryRun=All, persist nothing.
    #[arg(long = "dry-run", value_enum, default_value = "none", num_args = 0..=1, default_missing_value = "client")]
    pub dry_run: DryRun,
    /// Output format (default: `resourcequota/NAME created`).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<CreateOutput>,
}

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
        // kubectl parses with resource.ParseQuantity, which does not trim: `cpu=1 ` is refused.
        if kv[1].trim() != kv[1] {
            return Err(format!("--hard {}: {:?}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'", kv[0], kv[1]));
        }
        let q = Quantity::parse(kv[1]).map_err(|e| format!("--hard {}: {e}", kv[0]))?;
        // kubectl sends, and the server stores, the canonical form (`1024Mi` -> `1Gi`,
        // `10.0` -> `10`, digits past nano rounded up), so that is what -o yaml shows.
        out.insert(kv[0].to_string(), K8sQuantity(q.to_canonical()));
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
/// rules are applied separately ([`validation::validate_resource_quota`]).
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

/// Runs `create`: validates before anything is sent; `--dry-run=client` sends nothing.
pub async fn run(g: &GlobalFlags, args: &CreateArgs) -> Result<i32, Fatal> {
    let flags = QuotaFlags {
        hard: args.hard.clone(),
        scopes: args.scopes.clone(),
        priority_classes: args.priority_class.clone(),
        scope_selectors: args.scope_selector.clone(),
    };
    // Client dry-run names no namespace unless one was given, as kubectl does.
    let mut quota = build_quota(&args.name, g.namespace.as_deref(), &flags).map_err(Fatal::input)?;
    let errors = validation::validate_resource_quota(&quota);
    if !errors.is_empty() {
        return Err(Fatal::input(validation::render_server_message(&args.name, &errors)));
    }
    for w in warnings(&quota) {
        crate::error::print_err(&format!("Warning: {}\n", crate::render::escape::escape(&w)));
    }
    let (created, suffix) = match args.dry_run {
        DryRun::Client => (quota, " (dry run)"),
        mode => {
            let conn = live::connect(&g.kube, g.namespace.as_deref()).await.map_err(Fatal::input)?;
            quota.metadata.namespace = Some(conn.namespace.clone());
            let server_dry = mode == DryRun::Server;
            let created = live::create_quota(&conn, &conn.namespace, &quota, server_dry)
                .await
                .map_err(|(e, unreachable)| Fatal(format!("failed to create quota: {e}"), if unreachable { 2 } else { 1 }))?;
            (created, if server_dry { " (server dry run)" } else { "" })
        }
    };
    let name = crate::render::escape::escape(&args.name);
    let text = match args.output {
        Some(CreateOutput::Yaml) => serde_yaml::to_string(&created).map_err(|e| Fatal::input(e.to_string()))?,
        Some(CreateOutput::Json) => format!("{}\n", serde_json::to_string_pretty(&created).map_err(|e| Fatal::input(e.to_string()))?),
        Some(CreateOutput::Name) => format!("resourcequota/{name}\n"),
        None => format!("resourcequota/{name} created{suffix}\n"),
    };
    crate::error::print_out(&text)?;
    Ok(0)
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
