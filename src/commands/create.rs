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
use kubectl_quota_engine::defaulting;
use kubectl_quota_engine::quantity::Quantity;
use kubectl_quota_engine::resource_names::QuotaScope;
use kubectl_quota_engine::resources::ResourceList;
use kubectl_quota_engine::validation;
use kubectl_quota_engine::version::Rules;

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
    // As kubectl: an empty flag is no hard limits; otherwise every comma separates a
    // statement, so `pods=1,` has an empty one and is refused.
    if s.is_empty() {
        return Ok(out);
    }
    for part in s.split(',') {
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

/// How `--scope-selector` is written, for its errors.
const SCOPE_SELECTOR_FORM: &str =
    "expected 'SCOPE OPERATOR [VALUE,...]', e.g. 'PriorityClass In high,medium' or, as `describe` prints it, 'PriorityClass In [high, medium]'";

/// Parses one `--scope-selector` expression: `PriorityClass In high,medium`,
/// `PriorityClass Exists`, `NotBestEffort Exists`. The values may also be written as
/// `describe` prints them, `[high, medium]`, and a scope that takes only `Exists` may stand
/// alone (`describe` prints `NotBestEffort Exists` as `NotBestEffort`), so every line
/// `describe` prints under Scopes reads back as the same expression.
pub fn parse_scope_selector(s: &str) -> Result<ScopedResourceSelectorRequirement, String> {
    let bad = |why: &str| format!("--scope-selector {s:?}: {why}");
    let (scope, rest) = first_word(s);
    let (op, values) = first_word(rest);
    let requirement = |op: &str, values: Vec<String>| ScopedResourceSelectorRequirement {
        scope_name: scope.into(),
        operator: op.into(),
        values: (!values.is_empty()).then_some(values),
    };
    if scope.is_empty() {
        return Err(bad(SCOPE_SELECTOR_FORM));
    }
    if op.is_empty() {
        return match QuotaScope::parse(scope) {
            Some(q) if q.requires_exists_operator() => Ok(requirement("Exists", vec![])),
            _ => Err(bad(SCOPE_SELECTOR_FORM)),
        };
    }
    let values = parse_values(values).map_err(|e| bad(&e))?;
    Ok(requirement(op, values))
}

/// The first whitespace-separated word of `s` and what follows it.
fn first_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// A list of values: `a,b`, or in brackets as `describe` prints it, `[a,b]` or `[a, b]`.
/// Empty items are dropped. Brackets that do not enclose the whole list are refused (a value
/// never holds one: stored, `[high]` would be a class no pod has), and so is white space
/// inside a value.
fn parse_values(s: &str) -> Result<Vec<String>, String> {
    let t = s.trim();
    let inner = match (t.starts_with('['), t.ends_with(']')) {
        (true, true) => &t[1..t.len() - 1],
        (false, false) => t,
        _ => return Err(format!("unbalanced brackets in {t:?}: write the values as a,b or [a, b]")),
    };
    if inner.contains(['[', ']']) {
        return Err(format!("a value cannot contain a bracket ({t:?}): write the values as a,b or [a, b]"));
    }
    let values: Vec<String> = inner.split(',').map(str::trim).filter(|v| !v.is_empty()).map(str::to_string).collect();
    if let Some(v) = values.iter().find(|v| v.contains(char::is_whitespace)) {
        return Err(format!("{v:?} is not one value: separate values with commas"));
    }
    Ok(values)
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
        let mut values = Vec::new();
        for p in &flags.priority_classes {
            values.extend(parse_values(p).map_err(|e| format!("--priority-class {p:?}: {e}"))?);
        }
        exprs.push(ScopedResourceSelectorRequirement { scope_name: "PriorityClass".into(), operator: "In".into(), values: Some(values) });
    }
    Ok(ResourceQuota {
        metadata: ObjectMeta { name: Some(name.to_string()), namespace: namespace.map(str::to_string), ..ObjectMeta::default() },
        spec: Some(ResourceQuotaSpec { hard, scopes, scope_selector: (!exprs.is_empty()).then_some(ScopeSelector { match_expressions: Some(exprs) }) }),
        status: None,
    })
}

/// The warnings the API server of `rules`' release returns on creating `q` (1.35+: a request
/// above its limit, `Warning: ResourceQuota requests.cpu (4) should be less than limits.cpu
/// (2)`), by the engine's rule, which `check` uses too.
pub fn warnings(q: &ResourceQuota, rules: &Rules) -> Vec<String> {
    if !rules.quota_request_limit_warning {
        return Vec::new();
    }
    let hard = q.spec.as_ref().and_then(|s| s.hard.as_ref());
    let list: ResourceList = hard.into_iter().flatten().filter_map(|(k, v)| Quantity::parse(&v.0).ok().map(|q| (k.clone(), q))).collect();
    defaulting::quota_request_limit_warnings(&list)
}

/// The classes a `PriorityClass In` expression of `q` names that the cluster does not have
/// (nothing when the classes cannot be listed). The server accepts such a quota: a typo in
/// `--priority-class` makes a quota that tracks no pod, which nothing else would say.
async fn missing_priority_classes(conn: &live::Conn, q: &ResourceQuota) -> Vec<String> {
    let named: Vec<&String> = q
        .spec
        .iter()
        .flat_map(|s| s.scope_selector.iter())
        .flat_map(|s| s.match_expressions.iter().flatten())
        .filter(|e| e.scope_name == "PriorityClass" && e.operator == "In")
        .flat_map(|e| e.values.iter().flatten())
        .collect();
    if named.is_empty() {
        return Vec::new();
    }
    let Some(existing) = live::priority_class_names(conn).await else { return Vec::new() };
    let mut missing: Vec<String> = named.into_iter().filter(|n| !existing.contains(n)).cloned().collect();
    missing.dedup();
    missing
}

/// How `rules`' release words a refused quota.
pub fn wording(rules: &Rules) -> validation::ValueStyle {
    kubectl_quota_engine::object_validation::value_style(rules)
}

/// The rules of the server's release, when its version can be read within 5 seconds.
async fn server_rules(g: &GlobalFlags) -> Option<Rules> {
    let conn = live::connect(&g.kube, g.namespace.as_deref()).await.ok()?;
    let version = tokio::time::timeout(std::time::Duration::from_secs(5), live::server_version(&conn)).await.ok()?.ok()?;
    Some(Rules::for_version(version.1))
}

/// A refusal as `kubectl create quota` prints one (`error: failed to create quota: <the
/// server's message>`, exit status 1).
fn refused(message: String) -> Fatal {
    Fatal::server(format!("failed to create quota: {message}"))
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
    // Refused before the quota is sent (as kubectl prints the server's refusal, with its exit
    // status). The verdict is every release's; the words are the release's: a client dry run
    // words it as the newest, otherwise the server's version is read (a GET, within 5 s) so
    // that a 1.20 server's refusal reads as 1.20 prints it.
    if !validation::validate_resource_quota(&quota, wording(&Rules::current())).is_empty() {
        let rules = match args.dry_run {
            DryRun::Client => Rules::current(),
            _ => server_rules(g).await.unwrap_or_else(Rules::current),
        };
        let errors = validation::validate_resource_quota(&quota, wording(&rules));
        return Err(refused(validation::status_message(&args.name, &errors)));
    }
    // The server's warnings come with its answer; a client dry run has none to ask, so it
    // says what the current release would warn.
    let (created, suffix, rules) = match args.dry_run {
        DryRun::Client => (quota, " (dry run)", Rules::current()),
        mode => {
            let conn = live::connect(&g.kube, g.namespace.as_deref()).await?;
            let rules = live::server_version(&conn).await.map(|(_, v)| Rules::for_version(v)).unwrap_or_else(|_| Rules::current());
            quota.metadata.namespace = Some(conn.namespace.clone());
            let server_dry = mode == DryRun::Server;
            let created = live::create_quota(&conn, &conn.namespace, &quota, server_dry)
                .await
                // As kubectl words both: `failed to create quota: ResourceQuota "q" is
                // invalid: ...`, `failed to create quota: Post "https://...": ...`.
                .map_err(|(e, unreachable)| if unreachable { Fatal(format!("failed to create quota: {e}"), 2) } else { refused(e) })?;
            for class in missing_priority_classes(&conn, &created).await {
                crate::error::print_err(&format!(
                    "Warning: PriorityClass {:?} does not exist: the quota tracks pods of that class, and none can be created until it exists\n",
                    crate::escape::escape(&class)
                ));
            }
            (created, if server_dry { " (server dry run)" } else { "" }, rules)
        }
    };
    for w in warnings(&created, &rules) {
        crate::error::print_err(&format!("{}\n", crate::escape::escape(&w)));
    }
    let name = crate::escape::escape(&args.name);
    let text = match args.output {
        Some(CreateOutput::Yaml) => crate::render::yaml::to_string(&created).map_err(Fatal::input)?,
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
    use kubectl_quota_engine::version::KubeVersion;

    #[test]
    fn hard_flag_syntax_errors_use_kubectl_wording() {
        let cases = [
            ("pods", "Invalid argument syntax pods, expected <resource>=<value>"),
            ("pods=1=2", "Invalid argument syntax pods=1=2, expected <resource>=<value>"),
            ("cpu=1K", "--hard cpu: unable to parse quantity's suffix"),
            // Every comma separates a statement: a trailing or doubled one leaves an empty one.
            ("pods=1,", "Invalid argument syntax , expected <resource>=<value>"),
            ("pods=1,,cpu=1", "Invalid argument syntax , expected <resource>=<value>"),
            (",pods=1", "Invalid argument syntax , expected <resource>=<value>"),
        ];
        for (flag, want) in cases {
            assert_eq!(parse_hard(flag).unwrap_err(), want);
        }
        assert_eq!(parse_hard("pods=10,requests.cpu=500m").unwrap().len(), 2);
        assert!(parse_hard("").unwrap().is_empty());
    }

    /// `(scope, operator, values)` of a parsed expression, for comparing.
    fn parts(r: &ScopedResourceSelectorRequirement) -> (String, String, Option<Vec<String>>) {
        (r.scope_name.clone(), r.operator.clone(), r.values.clone())
    }

    fn want(scope: &str, op: &str, values: &[&str]) -> (String, String, Option<Vec<String>>) {
        (scope.into(), op.into(), (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()))
    }

    #[test]
    fn scope_selector_values_are_read_bare_or_in_brackets() {
        let cases = [
            ("PriorityClass In high,medium", want("PriorityClass", "In", &["high", "medium"])),
            ("PriorityClass In high", want("PriorityClass", "In", &["high"])),
            // As `describe` prints them.
            ("PriorityClass In [high]", want("PriorityClass", "In", &["high"])),
            ("PriorityClass In [high, medium]", want("PriorityClass", "In", &["high", "medium"])),
            ("PriorityClass NotIn [high,medium]", want("PriorityClass", "NotIn", &["high", "medium"])),
            ("PriorityClass In  [ high ,  medium ] ", want("PriorityClass", "In", &["high", "medium"])),
            ("PriorityClass In high, medium", want("PriorityClass", "In", &["high", "medium"])),
            ("PriorityClass In a,,b,", want("PriorityClass", "In", &["a", "b"])),
            ("PriorityClass Exists", want("PriorityClass", "Exists", &[])),
            ("PriorityClass In []", want("PriorityClass", "In", &[])),
            ("  NotBestEffort   Exists ", want("NotBestEffort", "Exists", &[])),
            // A scope that takes only Exists, alone, as `describe` prints it.
            ("NotBestEffort", want("NotBestEffort", "Exists", &[])),
            ("CrossNamespacePodAffinity", want("CrossNamespacePodAffinity", "Exists", &[])),
        ];
        for (s, expected) in cases {
            let r = parse_scope_selector(s).unwrap_or_else(|e| panic!("{s:?}: {e}"));
            assert_eq!(parts(&r), expected, "{s:?}");
        }
    }

    #[test]
    fn scope_selector_brackets_that_do_not_enclose_the_list_are_refused() {
        let cases = [
            ("PriorityClass In [high", "unbalanced brackets in \"[high\""),
            ("PriorityClass In high]", "unbalanced brackets in \"high]\""),
            ("PriorityClass In [high, medium", "unbalanced brackets"),
            ("PriorityClass In [", "unbalanced brackets"),
            ("PriorityClass In [[high]]", "a value cannot contain a bracket"),
            ("PriorityClass In [high],[low]", "a value cannot contain a bracket"),
            ("PriorityClass In hi[gh", "a value cannot contain a bracket"),
            ("PriorityClass In [hi]gh]", "a value cannot contain a bracket"),
            ("PriorityClass In high medium", "\"high medium\" is not one value: separate values with commas"),
            ("PriorityClass In [high medium]", "is not one value"),
            ("PriorityClass", "expected 'SCOPE OPERATOR [VALUE,...]'"),
            ("", "expected 'SCOPE OPERATOR [VALUE,...]'"),
            ("Bogus", "expected 'SCOPE OPERATOR [VALUE,...]'"),
        ];
        for (s, message) in cases {
            let e = parse_scope_selector(s).expect_err(s);
            assert!(e.starts_with(&format!("--scope-selector {s:?}: ")), "{s:?}: {e}");
            assert!(e.contains(message), "{s:?}: {e}");
        }
    }

    #[test]
    fn priority_class_values_are_read_bare_or_in_brackets() {
        /// The flags given, and the values stored or the error's start.
        type Case<'a> = (&'a [&'a str], Result<Vec<&'a str>, &'a str>);
        let cases: [Case; 5] = [
            (&["high,medium"], Ok(vec!["high", "medium"])),
            (&["[high, medium]"], Ok(vec!["high", "medium"])),
            (&["high", "[low]"], Ok(vec!["high", "low"])),
            (&["[high"], Err("--priority-class \"[high\": unbalanced brackets")),
            (&["[a]b]"], Err("--priority-class \"[a]b]\": a value cannot contain a bracket")),
        ];
        for (flags, expected) in cases {
            let f = QuotaFlags { hard: Some("pods=1".into()), priority_classes: flags.iter().map(|s| s.to_string()).collect(), ..QuotaFlags::default() };
            match (build_quota("q", None, &f), expected) {
                (Ok(q), Ok(values)) => {
                    let e = &q.spec.unwrap().scope_selector.unwrap().match_expressions.unwrap()[0];
                    assert_eq!(parts(e), want("PriorityClass", "In", &values), "{flags:?}");
                }
                (Err(e), Err(message)) => assert!(e.starts_with(message), "{flags:?}: {e}"),
                (got, _) => panic!("{flags:?}: {got:?}"),
            }
        }
    }

    /// Every expression `describe` prints under Scopes, given back to `--scope-selector`,
    /// makes a quota that `describe` prints the same way.
    #[test]
    fn what_describe_prints_reads_back_as_the_same_selector() {
        let printed = [
            "PriorityClass In [high]",
            "PriorityClass In [high, medium]",
            "PriorityClass NotIn [batch]",
            "PriorityClass Exists",
            "PriorityClass DoesNotExist",
            "VolumeAttributesClass In [gold, silver]",
            "NotBestEffort",
            "Terminating",
            "CrossNamespacePodAffinity",
        ];
        for line in printed {
            let hard = if line.starts_with("VolumeAttributesClass") { "persistentvolumeclaims=1" } else { "pods=1" };
            let f = QuotaFlags { hard: Some(hard.into()), scope_selectors: vec![line.into()], ..QuotaFlags::default() };
            let q = build_quota("q", Some("ns"), &f).unwrap();
            let errors = validation::validate_resource_quota(&q, validation::ValueStyle::Json);
            assert!(errors.is_empty(), "{line}: {errors:?}");
            let r = &q.spec.unwrap().scope_selector.unwrap().match_expressions.unwrap()[0];
            let engine = kubectl_quota_engine::objects::ScopeRequirement {
                scope_name: r.scope_name.clone(),
                operator: r.operator.clone(),
                values: r.values.clone().unwrap_or_default(),
            };
            assert_eq!(kubectl_quota_engine::admission::scopes::describe(&engine), line);
        }
    }

    #[test]
    fn empty_scope_items_are_refused() {
        let flags = QuotaFlags { scopes: Some("BestEffort,".into()), ..QuotaFlags::default() };
        assert_eq!(build_quota("q", None, &flags).unwrap_err(), "invalid resource quota scope \"\"");
    }

    #[test]
    fn request_above_limit_warns_from_1_35_by_the_engines_rule() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "1.37",
                "requests.cpu=4,limits.cpu=2,memory=1Gi,limits.memory=2Gi",
                &["Warning: ResourceQuota requests.cpu (4) should be less than limits.cpu (2)"],
            ),
            ("1.35", "requests.cpu=4,limits.cpu=2", &["Warning: ResourceQuota requests.cpu (4) should be less than limits.cpu (2)"]),
            ("1.34", "requests.cpu=4,limits.cpu=2", &[]),
            ("1.20", "requests.cpu=4,limits.cpu=2", &[]),
            // Every resource with a limit, not a fixed few; the bare name too.
            (
                "1.37",
                "requests.hugepages-2Mi=4Mi,limits.hugepages-2Mi=2Mi",
                &["Warning: ResourceQuota requests.hugepages-2Mi (4Mi) should be less than limits.hugepages-2Mi (2Mi)"],
            ),
            (
                "1.37",
                "requests.example.com/gpu=2,limits.example.com/gpu=1",
                &["Warning: ResourceQuota requests.example.com/gpu (2) should be less than limits.example.com/gpu (1)"],
            ),
            ("1.37", "cpu=4,limits.cpu=2", &["Warning: ResourceQuota cpu (4) should be less than limits.cpu (2)"]),
            ("1.37", "requests.cpu=2,limits.cpu=2", &[]),
        ];
        for (version, hard, want) in cases {
            let flags = QuotaFlags { hard: Some(hard.to_string()), ..QuotaFlags::default() };
            let q = build_quota("q", None, &flags).unwrap();
            let rules = Rules::for_version(KubeVersion::parse(version).unwrap());
            assert_eq!(warnings(&q, &rules), want.to_vec(), "{version} {hard}");
        }
    }
}
