//! MutatingAdmissionPolicy and ValidatingAdmissionPolicy, replayed from their objects: which
//! requests a policy's bindings select (match constraints, the binding's match resources,
//! match conditions), what its CEL expressions say of the object, and the server's words for
//! the outcome.
//!
//! Each policy's expressions are compiled once, when it is added to a [`PolicySet`], and
//! evaluated per request against the object as JSON. What cannot be replayed (params this tool
//! was not given, an expression it cannot compile or evaluate where the policy's
//! `failurePolicy` is `Fail`) leaves the answer resting on that policy, said by name
//! ([`Stop::Unreplayable`]); a guess is never made.
//!
//! Order: bindings in name order within policies in name order (the server takes them from an
//! informer's cache, in no order a user can rely on; only several denials at once can tell).

pub mod merge;
pub mod object;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::cel::{self, Activation, Conversions, Evaluation, Mode, Program};
use crate::objects::policies::{Binding, MatchResources, Mutation, ParamRef, Policy};

/// An expression compiled, or why it could not be.
type Compiled = Result<Program, String>;

/// A policy with its expressions compiled.
pub struct CompiledPolicy {
    pub policy: Policy,
    conditions: Vec<(String, Compiled)>,
    variables: Vec<(String, Compiled)>,
    /// Per validation: its expression and its messageExpression.
    validations: Vec<(Compiled, Option<Compiled>)>,
    /// Per mutation: apply configuration (true) or JSON patch, and its expression.
    mutations: Vec<(bool, Compiled)>,
    /// What of Kubernetes' CEL an expression uses that is not replayed here (`authorizer`, a
    /// two-variable comprehension): the policy's answer is then not this tool's to give.
    unsupported: Option<String>,
    /// Its expressions read `oldObject`: on an update whose stored object was not read whole,
    /// its answer is not this tool's to give.
    reads_old: bool,
}

impl std::fmt::Debug for CompiledPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.policy.fmt(f)
    }
}

impl CompiledPolicy {
    pub fn new(policy: Policy) -> CompiledPolicy {
        let compile = |e: &str, mode: Mode| cel::compile(e, mode).map_err(|err| format!("compilation failed for expression {e:?}: {err}"));
        let c = |e: &str| compile(e, Mode::Validating);
        let mut compiled = CompiledPolicy {
            conditions: policy.match_conditions.iter().map(|n| (n.name.clone(), c(&n.expression))).collect(),
            variables: policy.variables.iter().map(|n| (n.name.clone(), c(&n.expression))).collect(),
            validations: policy.validations.iter().map(|v| (c(&v.expression), (!v.message_expression.is_empty()).then(|| c(&v.message_expression)))).collect(),
            mutations: policy
                .mutations
                .iter()
                .map(|m| match m {
                    Mutation::ApplyConfiguration(e) => (true, compile(e, Mode::Mutating)),
                    Mutation::JsonPatch(e) => (false, compile(e, Mode::Mutating)),
                })
                .collect(),
            unsupported: None,
            reads_old: names_word(&policy, "oldObject"),
            policy,
        };
        compiled.unsupported = unsupported_in(&compiled.policy).or_else(|| compiled.two_variable_comprehension());
        compiled
    }

    /// A two-variable comprehension one of the compiled expressions uses, in words.
    fn two_variable_comprehension(&self) -> Option<String> {
        let programs = self.conditions.iter().chain(&self.variables).map(|(_, c)| c);
        let programs = programs.chain(self.validations.iter().flat_map(|(v, m)| std::iter::once(v).chain(m)));
        let programs = programs.chain(self.mutations.iter().map(|(_, c)| c));
        let function = programs.filter_map(|c| c.as_ref().ok()).find_map(|p| p.two_variable_comprehension().map(str::to_owned))?;
        Some(format!("its expressions use `{function}` with two variables (a two-variable comprehension), which is not replayed"))
    }
}

/// The parts of Kubernetes' CEL environment this tool does not evaluate, as an expression names
/// them: the authorizer.
const UNSUPPORTED: &[(&str, &str)] = &[("authorizer", "the authorizer: who sends the request is not known")];

/// Whether one of the policy's expressions names `word` (standing alone, not inside a longer
/// identifier).
fn names_word(policy: &Policy, word: &str) -> bool {
    let mut sources: Vec<&str> = Vec::new();
    sources.extend(policy.match_conditions.iter().chain(&policy.variables).map(|n| n.expression.as_str()));
    sources.extend(policy.validations.iter().flat_map(|v| [v.expression.as_str(), v.message_expression.as_str()]));
    sources.extend(policy.mutations.iter().map(|m| match m {
        Mutation::ApplyConfiguration(e) | Mutation::JsonPatch(e) => e.as_str(),
    }));
    sources.iter().any(|src| {
        src.match_indices(word).any(|(i, _)| {
            let before = src[..i].chars().next_back();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.' && !word.ends_with('.'))
        })
    })
}

/// The first part of [`UNSUPPORTED`] one of the policy's expressions names, in words.
fn unsupported_in(policy: &Policy) -> Option<String> {
    UNSUPPORTED
        .iter()
        .find(|(word, _)| names_word(policy, word))
        .map(|(word, what)| format!("its expressions use `{}` ({what}), which is not replayed", word.trim_end_matches(['(', '.'])))
}

/// The policies and bindings of a cluster, validating and mutating, by name.
#[derive(Debug, Default, Clone)]
pub struct PolicySet {
    policies: BTreeMap<(bool, String), Arc<CompiledPolicy>>,
    bindings: BTreeMap<(bool, String), Binding>,
}

impl PolicySet {
    pub fn add_policy(&mut self, name: String, policy: Policy) {
        let key = (policy.mutating, name);
        self.policies.insert(key, Arc::new(CompiledPolicy::new(policy)));
    }

    pub fn add_binding(&mut self, name: String, binding: Binding) {
        self.bindings.insert((binding.mutating, name), binding);
    }

    /// Replaces the policies (`bindings` false) or the bindings of one kind (`mutating`) with
    /// `other`'s: a cache's list of that kind, swapped in whole.
    pub fn replace_kind(&mut self, mutating: bool, bindings: bool, other: &PolicySet) {
        if bindings {
            self.bindings.retain(|(m, _), _| *m != mutating);
            self.bindings.extend(other.bindings.iter().filter(|((m, _), _)| *m == mutating).map(|(k, v)| (k.clone(), v.clone())));
        } else {
            self.policies.retain(|(m, _), _| *m != mutating);
            self.policies.extend(other.policies.iter().filter(|((m, _), _)| *m == mutating).map(|(k, v)| (k.clone(), v.clone())));
        }
    }

    /// Removes the policy (`bindings` false) or binding of one kind named `name`.
    pub fn remove(&mut self, mutating: bool, bindings: bool, name: &str) {
        let key = (mutating, name.to_string());
        if bindings {
            self.bindings.remove(&key);
        } else {
            self.policies.remove(&key);
        }
    }

    /// How many policies (`bindings` false) or bindings of one kind there are.
    pub fn count(&self, mutating: bool, bindings: bool) -> usize {
        if bindings {
            self.bindings.keys().filter(|(m, _)| *m == mutating).count()
        } else {
            self.policies.keys().filter(|(m, _)| *m == mutating).count()
        }
    }

    /// The params a binding of one kind (`mutating`) reads: its policy's params kind
    /// (apiVersion, kind) and the binding's reference. `None` where the binding, its policy
    /// or either half is unknown, or the policy takes no params.
    pub fn params_read_by(&self, mutating: bool, binding: &str) -> Option<(&(String, String), &ParamRef)> {
        let b = self.bindings.get(&(mutating, binding.to_string()))?;
        let p = self.policies.get(&(mutating, b.policy_name.clone()))?;
        Some((p.policy.param_kind.as_ref()?, b.param_ref.as_ref()?))
    }

    /// Whether some binding of a policy of this kind exists (with neither, nothing to do).
    pub fn any(&self, mutating: bool) -> bool {
        self.bindings.keys().any(|(m, _)| *m == mutating) && self.policies.keys().any(|(m, _)| *m == mutating)
    }

    /// Every (policy name, policy, binding name, binding) of one kind, policies in name order.
    fn bound(&self, mutating: bool) -> impl Iterator<Item = (&str, &CompiledPolicy, &str, &Binding)> {
        self.policies.iter().filter(move |((m, _), _)| *m == mutating).flat_map(move |((_, pname), p)| {
            self.bindings
                .iter()
                .filter(move |((m, _), b)| *m == mutating && b.policy_name == *pname)
                .map(move |((_, bname), b)| (pname.as_str(), p.as_ref(), bname.as_str(), b))
        })
    }
}

/// A request as the policies see it.
pub struct Request<'a> {
    /// `CREATE` or `UPDATE`.
    pub operation: &'a str,
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub resource: &'a str,
    pub namespaced: bool,
    pub namespace: &'a str,
    pub name: &'a str,
    /// The object's labels (for objectSelector).
    pub labels: &'a BTreeMap<String, String>,
    /// The namespace's labels; `None`: not known.
    pub namespace_labels: Option<&'a BTreeMap<String, String>>,
    /// The object before the request (an update).
    pub old_object: Option<&'a Value>,
    /// An update whose stored object was not read whole: `oldObject` is not known.
    pub old_unread: bool,
    /// The objects params are read from; `None`: not read.
    pub params: Option<&'a Params>,
}

impl Request<'_> {
    /// `request` as CEL sees it.
    fn as_cel(&self) -> Value {
        json!({
            "kind": {"group": self.group, "version": self.version, "kind": self.kind},
            "resource": {"group": self.group, "version": self.version, "resource": self.resource},
            "requestKind": {"group": self.group, "version": self.version, "kind": self.kind},
            "requestResource": {"group": self.group, "version": self.version, "resource": self.resource},
            "name": self.name,
            "namespace": self.namespace,
            "operation": self.operation,
            "userInfo": {"username": "kubectl-quota"},
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": if self.operation == "CREATE" { "CreateOptions" } else { "UpdateOptions" }},
        })
    }

    fn namespace_object(&self) -> Option<Value> {
        let labels = self.namespace_labels?;
        Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace, "labels": labels}}))
    }
}

/// Why the policies stop a request, or could not be replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Refused: the status reason (`Invalid`, `Forbidden`, ...) and the server's message;
    /// `others`: the messages of the other policies that deny the same request, any of which
    /// the server may return instead (see [`validate`]).
    Denied { reason: String, message: String, others: Vec<String> },
    /// The answer rests on a policy this tool cannot replay: the sentence says which and why.
    Unreplayable(String),
}

/// Whether `m` selects the request; `None`: it depends on what is not known (the namespace's
/// labels).
fn selects(m: &MatchResources, r: &Request, constraints: bool) -> Option<bool> {
    let exact = m.match_policy == "Exact";
    let covered = |rules: &[crate::objects::policies::NamedRule]| {
        rules.iter().any(|n| {
            n.rule.covers(r.operation, r.group, r.version, r.resource, r.namespaced, exact)
                && (n.resource_names.is_empty() || n.resource_names.iter().any(|x| x == r.name))
        })
    };
    // A binding's match resources without rules do not narrow the policy's.
    let in_rules = if m.resource_rules.is_empty() { !constraints } else { covered(&m.resource_rules) };
    if !in_rules || covered(&m.exclude_resource_rules) {
        return Some(false);
    }
    if let Some(sel) = &m.object_selector {
        if !sel.matches(r.labels) {
            return Some(false);
        }
    }
    match (&m.namespace_selector, r.namespaced) {
        (Some(sel), true) if !(sel.match_labels.is_empty() && sel.match_expressions.is_empty()) => r.namespace_labels.map(|l| sel.matches(l)),
        _ => Some(true),
    }
}

/// Whether the binding selects the request: the policy's constraints and the binding's own
/// match resources.
fn selected(p: &CompiledPolicy, b: &Binding, r: &Request, names: (&str, &str)) -> Result<bool, Stop> {
    let unknown = || Stop::Unreplayable(format!("{} {:?}: its namespaceSelector needs the namespace's labels, which were not read", kind_name(p), names.0));
    if !selects(&p.policy.match_constraints, r, true).ok_or_else(unknown)? {
        return Ok(false);
    }
    match &b.match_resources {
        Some(m) => selects(m, r, false).ok_or_else(unknown),
        None => Ok(true),
    }
}

/// Whether the policy's match conditions hold, as the server's matcher decides: every condition
/// is evaluated without the namespace (the server's matcher passes none: `namespaceObject` is
/// null there, in the policy's variables too, while validations and mutations see it), and
/// one that is false means no match whatever the others gave; otherwise any
/// error (all of them, aggregated as Go aggregates errors: one alone, several as `[a, b]`) is
/// the failure policy's to judge, which the caller does.
fn conditions_hold(p: &CompiledPolicy, eval: &Evaluation) -> Result<bool, String> {
    let mut errors = Vec::new();
    for ((_, c), condition) in p.conditions.iter().zip(&p.policy.match_conditions) {
        match c.as_ref().map_err(Clone::clone).and_then(|prog| eval.eval(prog)) {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => return Ok(false),
            Ok(other) => errors.push(format!("expression '{}' resulted in error: {other} is not a bool", condition.expression)),
            Err(e) => errors.push(format!("expression '{}' resulted in error: {e}", condition.expression)),
        }
    }
    // An aggregate says each message once.
    let mut seen = std::collections::BTreeSet::new();
    errors.retain(|e| seen.insert(e.clone()));
    match errors.len() {
        0 => Ok(true),
        1 => Err(errors.remove(0)),
        _ => Err(format!("[{}]", errors.join(", "))),
    }
}

/// The objects a policy's params kind is stored as, by (group, kind, namespace, name); the
/// namespace is empty for a cluster-scoped kind.
pub type Params = BTreeMap<(String, String, String, String), Arc<Value>>;

/// The params a binding gives its policy: `[None]` for a policy without params, each param
/// found otherwise; an empty list skips the binding (`parameterNotFoundAction: Allow`).
fn params_of<'p>(p: &CompiledPolicy, b: &Binding, r: &Request<'p>, names: (&str, &str)) -> Result<Vec<Option<&'p Value>>, Stop> {
    let Some((api_version, kind)) = &p.policy.param_kind else { return Ok(vec![None]) };
    let unreplayable =
        |why: &str| Stop::Unreplayable(format!("{} {:?} (binding {:?}) reads its params ({kind} {api_version}): {why}", kind_name(p), names.0, names.1));
    let Some(pr) = &b.param_ref else { return Err(unreplayable("the binding names none")) };
    let ti = crate::objects::type_info(api_version, kind);
    let ns = pr.namespace_for(ti.namespaced, r.namespace).unwrap_or_default();
    let of_kind: Vec<(&str, &'p Value)> = r
        .params
        .into_iter()
        .flatten()
        .filter(|((g, k, n, _), _)| *g == ti.group && k == kind && n == ns)
        .map(|((_, _, _, name), v)| (name.as_str(), v.as_ref()))
        .collect();
    if of_kind.is_empty() {
        // None of the kind is known there: not read, rather than known to be missing.
        return Err(unreplayable(&format!("none of them was read{}", if ns.is_empty() { String::new() } else { format!(" in namespace {ns:?}") })));
    }
    let found: Vec<Option<&Value>> = match &pr.selector {
        _ if !pr.name.is_empty() => of_kind.iter().filter(|(n, _)| *n == pr.name).map(|(_, v)| Some(*v)).collect(),
        Some(sel) => of_kind
            .iter()
            .filter(|(_, v)| {
                let labels: BTreeMap<String, String> = serde_json::from_value(v.pointer("/metadata/labels").cloned().unwrap_or_default()).unwrap_or_default();
                sel.matches(&labels)
            })
            .map(|(_, v)| Some(*v))
            .collect(),
        None => vec![],
    };
    // Missing params are a configuration error of the binding: `failurePolicy: Ignore` skips it.
    if found.is_empty() && pr.parameter_not_found_action != "Allow" && p.policy.failure_policy != "Ignore" {
        let err = "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction";
        return Err(Stop::Denied { reason: "Forbidden".into(), message: denied(p, names, err), others: vec![] });
    }
    Ok(found)
}

/// A binding's refusal in the server's words: a ValidatingAdmissionPolicy's names its kind, a
/// MutatingAdmissionPolicy's does not.
fn denied(p: &CompiledPolicy, (policy, binding): (&str, &str), err: &str) -> String {
    let kind = if p.policy.mutating { "policy" } else { "ValidatingAdmissionPolicy" };
    format!("{kind} '{policy}' with binding '{binding}' denied request: {err}")
}

fn kind_name(p: &CompiledPolicy) -> &'static str {
    if p.policy.mutating {
        "MutatingAdmissionPolicy"
    } else {
        "ValidatingAdmissionPolicy"
    }
}

/// An evaluation error under the policy's failurePolicy: `Ignore` goes on (`Ok`), `Fail`
/// refuses in the server's words.
fn failed(p: &CompiledPolicy, names: (&str, &str), err: &str) -> Result<(), Stop> {
    if p.policy.failure_policy == "Ignore" {
        return Ok(());
    }
    Err(Stop::Denied { reason: "Invalid".into(), message: denied(p, names, err), others: vec![] })
}

/// Why a policy that reads `oldObject` is not replayed on an update whose stored object was
/// not read whole.
const OLD_UNREAD: &str = "its expressions read `oldObject`, and the object this updates was not read whole (only what quota reads of it)";

/// A binding whose policy names what is not replayed here ([`CompiledPolicy::unsupported`]).
fn unsupported_stop(p: &CompiledPolicy, (policy, binding): (&str, &str), why: &str) -> Stop {
    Stop::Unreplayable(format!("{} {policy:?} (binding {binding:?}): {why}", kind_name(p)))
}

/// The evaluation context of one binding and param: the request, the param, and the policy's
/// variables in order; the documents `shared` holds read from there.
fn evaluation<'a>(
    p: &CompiledPolicy,
    shared: Option<&'a Conversions<'a>>,
    object: &'a Value,
    request: &'a Value,
    ns: Option<&'a Value>,
    old: Option<&'a Value>,
    params: Option<&'a Value>,
) -> Evaluation<'a> {
    let a = Activation { object: Some(object), old_object: old, request: Some(request), params, namespace_object: ns };
    let mut eval = match shared {
        Some(shared) => Evaluation::sharing(a, shared),
        None => Evaluation::new(a),
    };
    for (name, c) in &p.variables {
        if let Ok(prog) = c {
            eval.bind(name, prog);
        }
    }
    eval
}

/// The ValidatingAdmissionPolicies' verdict on `object`: the warnings of the bindings that
/// warn, and the first denial. Every policy is evaluated, as the server does, so the warnings
/// of those after a denial are said with it, and so are the other denials: the server returns
/// one of them, the first of its list, which it builds from a Go map of the policies (a
/// random order, new per request while the policies stay unchanged: k8s.io/apiserver's
/// policy source and its validating dispatcher). The first here is the first in name order;
/// the others are in its `others`.
pub fn validate(set: &PolicySet, object: &Value, r: &Request) -> (Vec<String>, Option<Stop>) {
    let request = r.as_cel();
    let ns = r.namespace_object();
    // Every binding reads the same object, request, old object and namespace: converted once.
    let shared =
        Conversions::new(Activation { object: Some(object), old_object: r.old_object, request: Some(&request), params: None, namespace_object: ns.as_ref() });
    let mut warnings = Vec::new();
    let mut first: Option<Stop> = None;
    // The first denial; a policy that cannot be replayed is said only where nothing refuses.
    let keep = |outcome: Result<(), Stop>, first: &mut Option<Stop>| match (outcome, first.as_mut()) {
        (Err(stop @ Stop::Denied { .. }), None | Some(Stop::Unreplayable(_))) => *first = Some(stop),
        (Err(Stop::Denied { message, .. }), Some(Stop::Denied { message: m, others, .. })) if message != *m && !others.contains(&message) => {
            others.push(message)
        }
        (Err(stop), None) => *first = Some(stop),
        _ => {}
    };
    for (pname, p, bname, b) in set.bound(false) {
        let names = (pname, bname);
        let params = match selected(p, b, r, names) {
            Ok(true) => match &p.unsupported {
                Some(why) => Err(unsupported_stop(p, names, why)),
                None if p.reads_old && r.old_unread => Err(unsupported_stop(p, names, OLD_UNREAD)),
                None => params_of(p, b, r, names),
            },
            Ok(false) => continue,
            Err(stop) => Err(stop),
        };
        let params = match params {
            Ok(params) => params,
            Err(stop) => {
                keep(Err(stop), &mut first);
                continue;
            }
        };
        for param in params {
            let eval = evaluation(p, Some(&shared), object, &request, ns.as_ref(), r.old_object, param);
            let outcome = match conditions_hold(p, &evaluation(p, Some(&shared), object, &request, None, r.old_object, param)) {
                Ok(true) => validate_one(p, b, &eval, names, &mut warnings),
                Ok(false) => Ok(()),
                // Under `failurePolicy: Fail` the error is a failed validation of its own.
                Err(e) if p.policy.failure_policy != "Ignore" => act(p, b, names, e, "Invalid".into(), &mut warnings),
                Err(_) => Ok(()),
            };
            keep(outcome, &mut first);
        }
    }
    // The server says each warning once.
    let mut seen = std::collections::BTreeSet::new();
    warnings.retain(|w| seen.insert(w.clone()));
    (warnings, first)
}

/// One binding's validations with one param: the first Deny refuses, Warn warns.
fn validate_one(p: &CompiledPolicy, b: &Binding, eval: &Evaluation, names: (&str, &str), warnings: &mut Vec<String>) -> Result<(), Stop> {
    for ((c, message_expr), v) in p.validations.iter().zip(&p.policy.validations) {
        let (text, reason) = match c.as_ref().map_err(Clone::clone).and_then(|prog| eval.eval(prog)) {
            Ok(Value::Bool(true)) => continue,
            Ok(Value::Bool(false)) => {
                // The messageExpression's string, trimmed, unless empty, multi-line or longer
                // than the server keeps; then the message, trimmed; then the expression.
                let text = message_expr
                    .as_ref()
                    .and_then(|m| m.as_ref().ok())
                    .and_then(|m| eval.eval(m).ok())
                    .and_then(|m| m.as_str().map(|m| m.trim().to_string()))
                    .filter(|m| !m.is_empty() && !m.contains('\n') && m.len() <= MAX_MESSAGE_BYTES)
                    .or_else(|| (!v.message.trim().is_empty()).then(|| v.message.trim().to_string()))
                    .unwrap_or_else(|| format!("failed expression: {}", v.expression.trim()));
                (text, if v.reason.is_empty() { "Invalid".to_string() } else { v.reason.clone() })
            }
            // An evaluation error: under `failurePolicy: Fail` a failed validation like any
            // other (the binding's actions decide what it does), under `Ignore` nothing.
            _ if p.policy.failure_policy == "Ignore" => continue,
            Ok(other) => (format!("expression '{}' resulted in error: {other} is not a bool", v.expression), "Invalid".to_string()),
            Err(e) => (format!("expression '{}' resulted in error: {e}", v.expression), "Invalid".to_string()),
        };
        act(p, b, names, text, reason, warnings)?;
    }
    Ok(())
}

/// The longest messageExpression result the server uses (`MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// A failed validation as the binding's validationActions take it: Deny refuses, Warn warns,
/// Audit records nothing this tool reports.
fn act(p: &CompiledPolicy, b: &Binding, names: (&str, &str), text: String, reason: String, warnings: &mut Vec<String>) -> Result<(), Stop> {
    for action in &b.validation_actions {
        match action.as_str() {
            "Deny" => return Err(Stop::Denied { reason, message: denied(p, names, &text), others: vec![] }),
            "Warn" => warnings.push(format!("Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {text}", names.0, names.1)),
            _ => {}
        }
    }
    Ok(())
}

/// Runs the MutatingAdmissionPolicies on `object` (in place). `reinvoked`: the chain's second
/// run, where only the policies with `reinvocationPolicy: IfNeeded` are called (the match
/// conditions of the others are still evaluated, and their errors count). `redefault`
/// is what the server does after each mutation: the object converted and defaulted again (a
/// limit a mutation set copied into a missing request before the next mutation).
///
/// Returns the policies that changed the object, each as `MutatingAdmissionPolicy "name"
/// (binding "b")`, and those skipped because they cannot be replayed (each a
/// [`Stop::Unreplayable`]: the answer rests on them).
pub fn mutate(
    set: &PolicySet,
    object: &mut Value,
    r: &Request,
    reinvoked: bool,
    redefault: &dyn Fn(&mut Value) -> Result<(), String>,
) -> Result<(Vec<String>, Vec<Stop>), Stop> {
    let request = r.as_cel();
    let ns = r.namespace_object();
    let mut notes = Vec::new();
    let mut unreplayed = Vec::new();
    for (pname, p, bname, b) in set.bound(true) {
        // The second run calls only these again, but first evaluates every matching policy's
        // match conditions, as the first did: an error there fails the request then too.
        let called = !reinvoked || p.policy.reinvocation_policy == "IfNeeded";
        let names = (pname, bname);
        if !selected(p, b, r, names)? {
            continue;
        }
        if let Some(why) = &p.unsupported {
            if called {
                unreplayed.push(unsupported_stop(p, names, why));
            }
            continue;
        }
        let before = object.clone();
        for param in params_of(p, b, r, names)? {
            match conditions_hold(p, &evaluation(p, None, object, &request, None, r.old_object, param)) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    failed(p, names, &e)?;
                    continue;
                }
            }
            if !called {
                continue;
            }
            mutate_one(p, object, (&request, ns.as_ref(), r.old_object, param), names, redefault)?;
        }
        if *object != before {
            notes.push(format!("MutatingAdmissionPolicy {pname:?} (binding {bname:?})"));
        }
    }
    Ok((notes, unreplayed))
}

/// The variables of an evaluation besides the object: request, namespaceObject, oldObject and
/// the param.
type Context<'a> = (&'a Value, Option<&'a Value>, Option<&'a Value>, Option<&'a Value>);

/// One binding's mutations with one param, in order.
fn mutate_one(
    p: &CompiledPolicy,
    object: &mut Value,
    (request, ns, old, param): Context,
    names: (&str, &str),
    redefault: &dyn Fn(&mut Value) -> Result<(), String>,
) -> Result<(), Stop> {
    for (apply, c) in &p.mutations {
        // Each mutation sees the object as the ones before it left it.
        let current = object.clone();
        let eval = evaluation(p, None, &current, request, ns, old, param);
        let result = c.as_ref().map_err(Clone::clone).and_then(|prog| eval.eval(prog));
        let changed = result.and_then(|v| if *apply { merge::apply(object, &v) } else { merge::json_patch(object, &v) }).and_then(|()| {
            if *object != current {
                redefault(object)
            } else {
                Ok(())
            }
        });
        if let Err(e) = changed {
            failed(p, names, &e)?;
        }
    }
    Ok(())
}
