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

use crate::cel::{self, Activation, Evaluation, Mode, Program};
use crate::objects::policies::{Binding, MatchResources, Mutation, Policy};

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
}

impl std::fmt::Debug for CompiledPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.policy.fmt(f)
    }
}

impl CompiledPolicy {
    pub fn new(policy: Policy) -> CompiledPolicy {
        let mode = if policy.mutating { Mode::Mutating } else { Mode::Validating };
        let c = |e: &str| cel::compile(e, Mode::Validating).map_err(|err| compile_error(e, &err));
        CompiledPolicy {
            conditions: policy.match_conditions.iter().map(|n| (n.name.clone(), c(&n.expression))).collect(),
            variables: policy.variables.iter().map(|n| (n.name.clone(), c(&n.expression))).collect(),
            validations: policy
                .validations
                .iter()
                .map(|v| (c(&v.expression), (!v.message_expression.is_empty()).then(|| c(&v.message_expression))))
                .collect(),
            mutations: policy
                .mutations
                .iter()
                .map(|m| match m {
                    Mutation::ApplyConfiguration(e) => (true, cel::compile(e, mode_of(&mode)).map_err(|err| compile_error(e, &err))),
                    Mutation::JsonPatch(e) => (false, cel::compile(e, mode_of(&mode)).map_err(|err| compile_error(e, &err))),
                })
                .collect(),
            policy,
        }
    }
}

fn mode_of(m: &Mode) -> Mode {
    match m {
        Mode::Mutating => Mode::Mutating,
        Mode::Validating => Mode::Validating,
    }
}

fn compile_error(expression: &str, err: &str) -> String {
    format!("compilation failed for expression {expression:?}: {err}")
}

/// The policies and bindings of a cluster, validating and mutating, by name.
#[derive(Debug, Default)]
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

    /// Every policy and binding of `other` (compiled policies shared, not compiled again).
    pub fn extend_from(&mut self, other: &PolicySet) {
        self.policies.extend(other.policies.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.bindings.extend(other.bindings.iter().map(|(k, v)| (k.clone(), v.clone())));
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
    /// Refused: the status reason (`Invalid`, `Forbidden`, ...) and the server's message.
    Denied { reason: String, message: String },
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

/// Whether the binding applies its policy to the request: the policy's constraints, the
/// binding's own match resources, and the policy's match conditions.
fn applies(p: &CompiledPolicy, b: &Binding, r: &Request, eval: &Evaluation, names: (&str, &str)) -> Result<bool, Stop> {
    let unknown = || Stop::Unreplayable(format!("{} {:?}: its namespaceSelector needs the namespace's labels, which were not read", kind_name(p), names.0));
    if !selects(&p.policy.match_constraints, r, true).ok_or_else(unknown)? {
        return Ok(false);
    }
    if let Some(m) = &b.match_resources {
        if !selects(m, r, false).ok_or_else(unknown)? {
            return Ok(false);
        }
    }
    for (name, c) in &p.conditions {
        match c.as_ref().map_err(Clone::clone).and_then(|prog| eval.eval(prog)) {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => return Ok(false),
            Ok(other) => return failed(p, names, &format!("matchCondition {name:?} gave {other}, not a bool")).map(|_| false),
            Err(e) => return failed(p, names, &format!("matchCondition {name:?}: {e}")).map(|_| false),
        }
    }
    Ok(true)
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
fn failed(p: &CompiledPolicy, (policy, binding): (&str, &str), err: &str) -> Result<(), Stop> {
    if p.policy.failure_policy == "Ignore" {
        return Ok(());
    }
    let message = if p.policy.mutating {
        format!("policy '{policy}' with binding '{binding}' denied request: {err}")
    } else {
        format!("ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {err}")
    };
    Err(Stop::Denied { reason: "Invalid".into(), message })
}

/// The evaluation context of one binding: the request, params (none), and the policy's
/// variables in order.
fn evaluation<'a>(p: &CompiledPolicy, object: &'a Value, request: &'a Value, ns: Option<&'a Value>, old: Option<&'a Value>) -> Evaluation<'a> {
    let mut eval = Evaluation::new(Activation { object: Some(object), old_object: old, request: Some(request), params: None, namespace_object: ns });
    for (name, c) in &p.variables {
        if let Ok(prog) = c {
            eval.bind(name, prog);
        }
    }
    eval
}

/// The policy takes params this tool does not read: the answer rests on it.
fn needs_params(p: &CompiledPolicy, names: (&str, &str)) -> Option<Stop> {
    p.policy.param_kind.as_ref().map(|(v, k)| {
        Stop::Unreplayable(format!("{} {:?} (binding {:?}) reads its params ({k} {v}), which are not replayed", kind_name(p), names.0, names.1))
    })
}

/// The ValidatingAdmissionPolicies' verdict on `object`: `Ok` with the warnings of the
/// bindings that only warn, or the first denial.
pub fn validate(set: &PolicySet, object: &Value, r: &Request) -> Result<Vec<String>, Stop> {
    let request = r.as_cel();
    let ns = r.namespace_object();
    let mut warnings = Vec::new();
    for (pname, p, bname, b) in set.bound(false) {
        let names = (pname, bname);
        let eval = evaluation(p, object, &request, ns.as_ref(), r.old_object);
        if !applies(p, b, r, &eval, names)? {
            continue;
        }
        if let Some(stop) = needs_params(p, names) {
            return Err(stop);
        }
        for ((c, message_expr), v) in p.validations.iter().zip(&p.policy.validations) {
            let outcome = match c.as_ref().map_err(Clone::clone).and_then(|prog| eval.eval(prog)) {
                Ok(Value::Bool(true)) => continue,
                Ok(Value::Bool(false)) => {
                    let text = message_expr
                        .as_ref()
                        .and_then(|m| m.as_ref().ok())
                        .and_then(|m| eval.eval(m).ok())
                        .and_then(|m| m.as_str().map(str::to_string))
                        .filter(|m| !m.trim().is_empty() && !m.contains('\n'))
                        .map(|m| m.chars().take(5 * 1024).collect())
                        .or_else(|| (!v.message.is_empty()).then(|| v.message.clone()))
                        .unwrap_or_else(|| format!("failed expression: {}", v.expression.trim()));
                    (text, if v.reason.is_empty() { "Invalid".to_string() } else { v.reason.clone() })
                }
                Ok(other) => (format!("expression '{}' resulted in error: {other} is not a bool", v.expression), String::new()),
                Err(e) => (format!("expression '{}' resulted in error: {e}", v.expression), String::new()),
            };
            let (text, reason) = outcome;
            if reason.is_empty() {
                // An evaluation error: the failure policy decides.
                failed(p, names, &text)?;
                continue;
            }
            for action in &b.validation_actions {
                match action.as_str() {
                    "Deny" => {
                        return Err(Stop::Denied { reason, message: format!("ValidatingAdmissionPolicy '{pname}' with binding '{bname}' denied request: {text}") })
                    }
                    "Warn" => warnings.push(format!("Validation failed for ValidatingAdmissionPolicy '{pname}' with binding '{bname}': {text}")),
                    _ => {}
                }
            }
        }
    }
    Ok(warnings)
}

/// Runs the MutatingAdmissionPolicies on `object` (in place). `reinvoked`: the chain's second
/// run, where only the policies with `reinvocationPolicy: IfNeeded` are called. Returns the
/// sentences saying which policies changed the object.
pub fn mutate(set: &PolicySet, object: &mut Value, r: &Request, reinvoked: bool) -> Result<Vec<String>, Stop> {
    let request = r.as_cel();
    let ns = r.namespace_object();
    let mut notes = Vec::new();
    for (pname, p, bname, b) in set.bound(true) {
        if reinvoked && p.policy.reinvocation_policy != "IfNeeded" {
            continue;
        }
        let names = (pname, bname);
        let snapshot = object.clone();
        let eval = evaluation(p, &snapshot, &request, ns.as_ref(), r.old_object);
        if !applies(p, b, r, &eval, names)? {
            continue;
        }
        if let Some(stop) = needs_params(p, names) {
            return Err(stop);
        }
        let before = object.clone();
        for (apply, c) in &p.mutations {
            // Each mutation sees the object as the ones before it left it.
            let current = object.clone();
            let eval = evaluation(p, &current, &request, ns.as_ref(), r.old_object);
            let result = c.as_ref().map_err(Clone::clone).and_then(|prog| eval.eval(prog));
            let changed = result.and_then(|v| {
                if *apply {
                    merge::apply(object, &v);
                    Ok(())
                } else {
                    merge::json_patch(object, &v)
                }
            });
            if let Err(e) = changed {
                failed(p, names, &e)?;
            }
        }
        if *object != before {
            notes.push(format!("MutatingAdmissionPolicy {pname:?} (binding {bname:?}) changed the object"));
        }
    }
    Ok(notes)
}
