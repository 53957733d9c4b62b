//! CEL for Kubernetes admission policies: the expressions of a ValidatingAdmissionPolicy
//! (`validations`, `messageExpression`, `matchConditions`, `auditAnnotations`, `variables`) and
//! of a MutatingAdmissionPolicy (ApplyConfiguration and JSONPatch mutations), compiled once and
//! evaluated over JSON documents.
//!
//! # What it provides
//!
//! * [`compile`] parses an expression for a [`Mode`]; [`Evaluation`] binds an admission
//!   request's [`Activation`] (`object`, `oldObject`, `request`, `params`, `namespaceObject`)
//!   and the policy's `variables` in order, and evaluates expressions to JSON.
//! * JSON in: objects are maps with string keys, arrays lists, integers `int` (`uint`, then
//!   `double`, beyond the `int` range), other numbers `double`.
//! * JSON out: booleans, numbers (ints, uints and doubles as JSON numbers), strings, bytes as
//!   base64, lists, maps (non-string keys printed), `null`, optionals (none as `null`), a
//!   quantity as its canonical string, `Object{...}` and `Object.spec...{...}` struct literals
//!   as JSON objects of the fields set, `JSONPatch{...}` as `{"op", "path", "value", "from"}`
//!   with the fields given.
//! * The CEL standard library as cel-rust implements it: macros (`has`, `all`, `exists`,
//!   `exists_one`, `map` with or without a filter, `filter`), `size`, `in`, string
//!   `startsWith`/`endsWith`/`contains`/`matches`, conversions, cross-type numeric comparison,
//!   optionals (`?.`, `[?k]`, `optional.of`, `optional.none`, `hasValue`, `value`, `orValue`).
//! * cel-go's strings extension as cel-rust has it: `charAt`, `indexOf`, `lastIndexOf`,
//!   `lowerAscii`, `upperAscii`, `replace`, `split`, `substring`, `trim`, `join`, `reverse`,
//!   `format`, `strings.quote`; and its lists extension: `slice`, `flatten`, `distinct`,
//!   `reverse`, `sort`, `sortBy`, `lists.range`.
//! * Kubernetes' libraries: quantity (exact, on [`crate::quantity::Quantity`]: see
//!   `quantity.rs`), lists (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), regex
//!   (`find`, `findAll`), sets (`sets.contains`, `sets.equivalent`, `sets.intersects`), ip and
//!   cidr (`net.rs`), urls (`url.rs`), semver (`semver.rs`) and format (`format.rs`). The environment is the newest
//!   release's: it is not narrowed to the libraries of an older server.
//!
//! # What is missing
//!
//! * No type checking: expressions are checked when evaluated, not when compiled, so an unknown
//!   function or field is an evaluation error (the API server rejects the policy at creation).
//!   No cost estimate or runtime cost budget either: an expression's work is bounded only by
//!   the limits below, not by the server's cost units.
//! * Kubernetes libraries not provided: `authorizer` (quantity has no `mul` or `div` upstream
//!   either, up to 1.37); cel-go's `math` extension and timestamps/durations (the interpreter is
//!   built without its chrono feature).
//! * cel-go's two-variable comprehensions (`l.all(i, v, p)`, `exists`, `existsOne`,
//!   `transformList`, `transformMap`, `transformMapEntry`, in the server's CEL from 1.32):
//!   cel-rust 0.15 parses them as plain calls (it expands only the one-variable macros), and its
//!   interpreter binds one variable per comprehension. [`Program::two_variable_comprehension`]
//!   names them so that a caller does not take the failing call for the server's answer.
//! * A variable is evaluated when bound ([`Evaluation::bind`]), not lazily; its error is
//!   reported by the expressions that read it, as the server does, and nowhere else.
//!
//! # Hostile input
//!
//! Policies come from a cluster. Nothing here panics or overflows its stack on an expression
//! or a document:
//!
//! * sources longer than [`MAX_SOURCE_LEN`] and expressions nested deeper than [`MAX_DEPTH`]
//!   are refused at compile time, and so are the expression nodes cel-rust would panic on
//!   (unspecified nodes, a struct field in a map literal, a map entry in a struct literal);
//! * cel-rust's parser and interpreter recurse once per level of nesting (a debug build uses
//!   about 100 KiB of stack per bracket when parsing, 35 KiB per level when evaluating), and a
//!   stack overflow aborts the process rather than panicking: [`compile`] parses on a thread of
//!   its own with a large stack (only the pages used are committed), and an expression nesting
//!   deeper than a few dozen levels is evaluated on one too; shallower ones run on the
//!   caller's thread;
//! * compiling and evaluating run under [`std::panic::catch_unwind`]: a panic left in the
//!   interpreter becomes an `Err("internal error of the CEL interpreter ...")`;
//! * documents nested deeper than 256 levels, and results of more than 16 Mi JSON nodes and
//!   string bytes, are errors.
//!
//! There is no bound on the work or memory of an evaluation itself (no cost budget): a short
//! expression can build a large intermediate value (`lists.range(10000).map(...)` nested).

/// Implements `Val` for a library's opaque value (an IP, a quantity, a URL, ...): its CEL
/// type, equality as `|a, b| ...` says, cloned whole.
macro_rules! opaque_val {
    ($ty:ident, $cel:expr, |$a:ident, $b:ident| $eq:expr) => {
        impl cel::common::value::Val for $ty {
            fn get_type(&self) -> &cel::common::types::Type {
                &$cel
            }
            fn cel_type() -> &'static cel::common::types::Type {
                &$cel
            }
            fn equals(&self, other: &dyn cel::common::value::Val) -> bool {
                let $a = self;
                other.downcast_ref::<$ty>().is_some_and(|$b| $eq)
            }
            fn clone_as_boxed<'v>(&self) -> Box<dyn cel::common::value::Val + 'v> {
                Box::new(self.clone())
            }
            fn as_any(&self) -> Option<&dyn std::any::Any> {
                Some(self)
            }
        }
        impl cel::common::value::StaticVal for $ty {}
    };
}
use opaque_val;

/// What a library function returns.
type CelResult<'b, 'v> = Result<CowVal<'b, 'v>, ExecutionError>;

/// A library function's error, in its own words.
fn error(function: &str, message: impl ToString) -> ExecutionError {
    ExecutionError::function_error(function, message)
}

mod convert;
mod format;
mod library;
mod net;
mod quantity;
mod semver;
#[cfg(test)]
mod tests;
mod url;

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, LazyLock, OnceLock};

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use cel::common::types::{CelOptional, CelString, CelStruct, Type};
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::{Context, Env, ExecutionError, StructType, Value};
use serde_json::Value as Json;

/// Longer sources are refused (the API server's own bound is of the same order).
pub const MAX_SOURCE_LEN: usize = 100 * 1024;

/// Expressions nested deeper than this (counting every operator, call, selection and literal
/// level) are refused: evaluation recurses once per level.
pub const MAX_DEPTH: usize = 100;

/// Expressions nesting at most this deep are evaluated on the caller's thread (whose stack may
/// be as small as 2 MiB); deeper ones on a thread of their own.
const INLINE_DEPTH: usize = 24;

/// The stack of the thread that evaluates deeply nested expressions.
const EVAL_STACK: usize = 256 << 20;

/// Which policy an expression belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A ValidatingAdmissionPolicy (or a MutatingAdmissionPolicy's conditions and variables):
    /// no struct literals.
    Validating,
    /// A MutatingAdmissionPolicy's mutation: `Object{...}`, `Object.<field>...{...}` and
    /// `JSONPatch{op:, path:, value:, from:}` literals are allowed.
    Mutating,
}

/// A compiled expression: `Send + Sync`, and cheap to clone and share.
#[derive(Clone)]
pub struct Program {
    inner: Arc<Compiled>,
}

struct Compiled {
    program: cel::Program,
    env: Arc<Env>,
    /// The `variables.<name>` the expression reads, in the order first written.
    variables: Vec<String>,
    /// How deeply the expression nests (evaluation recurses once per level).
    depth: usize,
    /// The function of a two-variable comprehension the expression uses, if any.
    two_variable: Option<String>,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program").field("expression", self.inner.program.expression()).finish()
    }
}

/// Runs `f`, turning a panic into an error.
fn guard<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(panic) => {
            let detail = panic.downcast_ref::<&str>().map(|s| (*s).to_owned()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_default();
            Err(format!("internal error of the CEL interpreter while {what}: {detail}"))
        }
    }
}

/// The functions whose errors are upstream's words, reported as upstream reports them: the
/// message alone, without cel-rust's "Error executing function" before it.
const UPSTREAM_WORDED: &[&str] = &["quantity", "asInteger", "min", "max", "ip", "ip.isCanonical", "cidr", "containsIP", "containsCIDR", "url", "semver"];

/// Go's `%q` of a string, as upstream's library errors quote their input: double-quoted, with
/// Go's escapes for quotes, backslashes and control characters.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() && (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if c.is_control() => out.push_str(&format!("\\U{:08x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The standard library, cel-go's strings and lists extensions as cel-rust has them, and
/// Kubernetes' libraries.
fn base_env() -> Result<Env, String> {
    let mut env = Env::stdlib();
    let declared = |r: Result<(), cel::DeclarationError>| r.map_err(|e| format!("declaring the CEL library: {e}"));
    declared(env.add_extension(cel::extensions::strings))?;
    declared(env.add_extension(cel::extensions::lists))?;
    declared(env.add_extension(quantity::library))?;
    declared(env.add_extension(library::library))?;
    declared(env.add_extension(net::library))?;
    declared(env.add_extension(url::library))?;
    declared(env.add_extension(semver::library))?;
    declared(env.add_extension(format::library))?;
    Ok(env)
}

static BASE_ENV: LazyLock<Result<Arc<Env>, String>> = LazyLock::new(|| base_env().map(Arc::new));

/// What compiling learns from the parsed expression.
#[derive(Default)]
struct Scan {
    structs: BTreeSet<String>,
    variables: Vec<String>,
    /// The deepest level of nesting.
    depth: usize,
    /// The first two-variable comprehension met, by its function's name.
    two_variable: Option<String>,
}

/// cel-go's two-variable comprehensions (`l.all(i, v, p)`, `m.transformMap(k, v, e)`, ...):
/// cel-rust expands only the one-variable macros, so these stay calls, and the interpreter
/// cannot bind two variables. A call with a target and as many arguments as the form takes.
fn is_two_variable_comprehension(function: &str, args: usize) -> bool {
    match function {
        "all" | "exists" | "existsOne" | "exists_one" => args == 3,
        "transformList" | "transformMap" | "transformMapEntry" => args == 3 || args == 4,
        _ => false,
    }
}

/// Walks the expression without recursion: records struct literals and `variables.<name>`,
/// and refuses what the interpreter cannot evaluate safely.
fn scan(root: &IdedExpr) -> Result<Scan, String> {
    let mut out = Scan::default();
    let mut stack: Vec<(&IdedExpr, usize)> = vec![(root, 1)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return Err(format!("the expression is nested more than {MAX_DEPTH} levels deep"));
        }
        out.depth = out.depth.max(depth);
        let d = depth + 1;
        match &node.expr {
            Expr::Unspecified => return Err("the expression has an empty part".into()),
            Expr::Ident(_) | Expr::Literal(_) => {}
            Expr::Call(call) => {
                if call.target.is_some() && out.two_variable.is_none() && is_two_variable_comprehension(&call.func_name, call.args.len()) {
                    out.two_variable = Some(call.func_name.clone());
                }
                stack.extend(call.target.as_deref().map(|t| (t, d)));
                stack.extend(call.args.iter().map(|a| (a, d)));
            }
            Expr::Comprehension(c) => {
                for e in [&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result] {
                    stack.push((e, d));
                }
            }
            Expr::List(list) => stack.extend(list.elements.iter().map(|e| (e, d))),
            Expr::Map(map) => {
                for entry in &map.entries {
                    match &entry.expr {
                        EntryExpr::MapEntry(e) => {
                            stack.push((&e.key, d));
                            stack.push((&e.value, d));
                        }
                        EntryExpr::StructField(f) => return Err(format!("a struct field `{}` in a map literal", f.field)),
                    }
                }
            }
            Expr::Select(select) => {
                if matches!(&select.operand.expr, Expr::Ident(name) if name == "variables") && !out.variables.contains(&select.field) {
                    out.variables.push(select.field.clone());
                }
                stack.push((&select.operand, d));
            }
            Expr::Struct(s) => {
                out.structs.insert(s.type_name.clone());
                for entry in &s.entries {
                    match &entry.expr {
                        EntryExpr::StructField(f) => stack.push((&f.value, d)),
                        EntryExpr::MapEntry(_) => return Err(format!("a map entry in the struct literal {}", s.type_name)),
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The struct types of a mutating policy: `Object`, `Object.<field>...` (any path: fields are
/// not checked against a schema) and `JSONPatch`. A literal makes a struct of the fields it
/// sets; an optional field (`?f: v`) holding no value is left unset.
struct PolicyStruct {
    ty: Type,
    json_patch: bool,
}

impl StructType for PolicyStruct {
    fn get_type(&self) -> &Type {
        &self.ty
    }

    fn new_value<'b, 'v>(&self, fields: BTreeMap<String, CowVal<'b, 'v>>) -> Result<Box<dyn Val + 'v>, ExecutionError> {
        let name = self.ty.name();
        let mut out = CelStruct::new(name.to_owned());
        for (field, value) in fields {
            let value = match value.downcast_ref::<CelOptional>() {
                Some(optional) => match optional.option() {
                    None => continue,
                    Some(inner) => CowVal::Owned(inner.clone_as_boxed()),
                },
                None => value,
            };
            if self.json_patch {
                match field.as_str() {
                    "op" | "path" | "from" if value.downcast_ref::<CelString>().is_none() => {
                        return Err(ExecutionError::function_error("JSONPatch", format!("field {field} must be a string, not a {}", value.get_type().name())));
                    }
                    "op" | "path" | "from" | "value" => {}
                    _ => return Err(ExecutionError::function_error("JSONPatch", format!("no such field {field}: JSONPatch has op, path, value and from"))),
                }
            }
            out.add_field_value(field, value);
        }
        Ok(Box::new(out))
    }
}

/// Compiles `source` for `mode`. Errors are in words: a parse error with its position, a
/// struct literal where none is allowed, an expression beyond the limits.
pub fn compile(source: &str, mode: Mode) -> Result<Program, String> {
    if source.len() > MAX_SOURCE_LEN {
        return Err(format!("the expression is {} bytes long, more than the {MAX_SOURCE_LEN} allowed", source.len()));
    }
    let source = source.to_owned();
    // The parser recurses deeply for each level of nesting (about 100 KiB of stack per bracket
    // in a debug build): it runs on a thread of its own with a stack no expression within the
    // length limit can exhaust. Only the pages used are committed.
    let compiler =
        std::thread::Builder::new().name("cel-compile".into()).stack_size(COMPILE_STACK).spawn(move || guard("compiling", || compile_unguarded(&source, mode)));
    match compiler.map(std::thread::JoinHandle::join) {
        Ok(Ok(result)) => result,
        Ok(Err(_)) => Err("internal error of the CEL interpreter while compiling".into()),
        Err(e) => Err(format!("cannot start compiling: {e}")),
    }
}

/// The stack of the thread that parses (see [`compile`]).
const COMPILE_STACK: usize = 512 << 20;

/// Parse errors in words: where and what, for the first few, without cel-rust's copy of the
/// source line (an expression may be one very long line).
fn parse_errors(e: &cel::ParseErrors) -> String {
    const SHOWN: usize = 3;
    let mut out: Vec<String> = e
        .errors
        .iter()
        .take(SHOWN)
        .map(|err| {
            let msg = if err.msg.contains("Recursion limit") { "the expression is nested too deeply".to_owned() } else { err.msg.chars().take(200).collect() };
            format!("line {}, column {}: {msg}", err.pos.0, err.pos.1)
        })
        .collect();
    if e.errors.len() > SHOWN {
        out.push(format!("and {} more errors", e.errors.len() - SHOWN));
    }
    if out.is_empty() {
        out.push("the expression does not parse".into());
    }
    format!("syntax error: {}", out.join("; "))
}

fn compile_unguarded(source: &str, mode: Mode) -> Result<Program, String> {
    let base = BASE_ENV.as_ref().map_err(Clone::clone)?;
    let program = base.compile(source).map_err(|e| parse_errors(&e))?;
    let scan = scan(program.expression())?;
    let env = if scan.structs.is_empty() {
        Arc::clone(base)
    } else {
        let mut env = base_env()?;
        for name in &scan.structs {
            let json_patch = name == "JSONPatch";
            let allowed = mode == Mode::Mutating && (json_patch || name == "Object" || name.starts_with("Object."));
            if !allowed {
                return Err(match mode {
                    Mode::Validating => format!("struct literals ({name}{{...}}) are only allowed in a mutating policy's mutations"),
                    Mode::Mutating => format!("unknown type {name}: the struct literals are Object{{...}}, Object.<field>...{{...}} and JSONPatch{{...}}"),
                });
            }
            let ty = Type::new_struct(name.clone());
            env.add_type(PolicyStruct { ty, json_patch }).map_err(|e| format!("the type {name}: {e}"))?;
        }
        Arc::new(env)
    };
    Ok(Program { inner: Arc::new(Compiled { program, env, variables: scan.variables, depth: scan.depth, two_variable: scan.two_variable }) })
}

impl Program {
    /// The function of a two-variable comprehension (`all(i, v, ...)`, `transformList`, ...) the
    /// expression uses: those are not evaluated here (the call fails), so the caller should not
    /// take the expression's answer as the server's.
    pub fn two_variable_comprehension(&self) -> Option<&str> {
        self.inner.two_variable.as_deref()
    }
}

/// The documents an admission request gives a policy's expressions; `None` is `null`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Activation<'a> {
    /// `object`: the object admitted (null for a DELETE).
    pub object: Option<&'a Json>,
    /// `oldObject`: the object before (null for a CREATE).
    pub old_object: Option<&'a Json>,
    /// `request`: the admission request's attributes (kind, resource, namespace, operation,
    /// userInfo, dryRun, ...).
    pub request: Option<&'a Json>,
    /// `params`: the binding's parameter object.
    pub params: Option<&'a Json>,
    /// `namespaceObject`: the namespace of a namespaced object.
    pub namespace_object: Option<&'a Json>,
}

const ROOTS: [&str; 5] = ["object", "oldObject", "request", "params", "namespaceObject"];

/// A converted document or a bound variable: its value, or why it has none.
type Bound = Result<Box<dyn Val>, String>;

/// The values expressions read: the activation's documents, converted when first read, and the
/// variables bound so far.
struct Roots<'a> {
    documents: [Option<&'a Json>; 5],
    converted: [OnceLock<Bound>; 5],
    /// The conversions other evaluations of the same request share: a document that is the
    /// very one shared (the same borrow) is read from there.
    shared: Option<&'a Conversions<'a>>,
    /// In the order bound; a later binding of a name hides an earlier one.
    variables: Vec<(String, Bound)>,
}

/// A document the request has none of (`oldObject` of a CREATE, `params` where a policy has
/// none, `namespaceObject` in match conditions): null, as cel-go holds it, whose fields are
/// missing keys (`no such key: f`, `has()` false, `?f` none) rather than a type error.
#[derive(Debug)]
struct Absent;

static NULL: cel::common::types::CelNull = cel::common::types::CelNull;

impl Val for Absent {
    fn get_type(&self) -> &Type {
        NULL.get_type()
    }

    fn cel_type() -> &'static Type {
        <cel::common::types::CelNull as Val>::cel_type()
    }

    fn equals(&self, other: &dyn Val) -> bool {
        NULL.equals(other)
    }

    fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn cel::common::traits::Indexer + 'v)>
    where
        Self: 'v,
    {
        Some(self)
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v>
    where
        Self: 'v,
    {
        Box::new(Absent)
    }

    /// Taken for a null wherever a value is asked whether it is one (`null == oldObject`).
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(&NULL)
    }
}

impl cel::common::traits::Indexer for Absent {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        let key = idx.downcast_ref::<CelString>().map_or_else(|| format!("{idx:?}"), |s| s.inner().to_string());
        Err(ExecutionError::NoSuchKey(Arc::new(key)))
    }

    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(CowVal::into_owned)
    }
}

/// One document converted (`None`: absent, null).
fn convert_root(i: usize, document: Option<&Json>) -> Bound {
    match document {
        None => Ok(Box::new(Absent)),
        Some(json) => convert::json_to_val(json).map_err(|e| format!("{}: {e}", ROOTS[i])),
    }
}

/// The documents of one request converted to CEL values when first read, for every
/// evaluation made with them ([`Evaluation::sharing`]): the bindings of a request's policies
/// read one object, converted once (a 3 MiB object is some 50 MB of values and a second of
/// work).
pub struct Conversions<'a> {
    documents: [Option<&'a Json>; 5],
    converted: [OnceLock<Bound>; 5],
}

impl<'a> Conversions<'a> {
    pub fn new(a: Activation<'a>) -> Self {
        Conversions { documents: [a.object, a.old_object, a.request, a.params, a.namespace_object], converted: Default::default() }
    }
}

impl Roots<'_> {
    fn root(&self, i: usize) -> &Bound {
        let doc = self.documents[i];
        // The same borrow of the same document: what the shared conversion holds is its value.
        let same = |d: Option<&Json>| match (d, doc) {
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            _ => false,
        };
        match self.shared.filter(|s| same(s.documents[i])) {
            Some(s) => s.converted[i].get_or_init(|| convert_root(i, doc)),
            None => self.converted[i].get_or_init(|| convert_root(i, doc)),
        }
    }

    fn variable(&self, name: &str) -> Option<&Bound> {
        self.variables.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

impl VariableResolver for Roots<'_> {
    fn resolve<'b>(&'b self, name: &str) -> Option<CowVal<'b, 'b>> {
        let value = match ROOTS.iter().position(|r| *r == name) {
            Some(i) => self.root(i),
            None => self.variable(name.strip_prefix("variables.")?)?,
        };
        value.as_ref().ok().map(|v| CowVal::Borrowed(v.as_ref()))
    }
}

/// An activation plus the policy's `variables`, bound in order, against which expressions are
/// evaluated.
pub struct Evaluation<'a> {
    roots: Roots<'a>,
}

impl<'a> Evaluation<'a> {
    pub fn new(a: Activation<'a>) -> Self {
        Evaluation {
            roots: Roots {
                documents: [a.object, a.old_object, a.request, a.params, a.namespace_object],
                converted: Default::default(),
                shared: None,
                variables: Vec::new(),
            },
        }
    }

    /// An evaluation of `a` that reads the documents `shared` holds (the same borrows) from
    /// there, converted once for all the evaluations that share them.
    pub fn sharing(a: Activation<'a>, shared: &'a Conversions<'a>) -> Self {
        let mut e = Evaluation::new(a);
        e.roots.shared = Some(shared);
        e
    }

    /// Adds `variables.<name>`, visible to the variables bound later and to expressions.
    ///
    /// The variable is evaluated now. An error in it is not reported here: an expression that
    /// reads the variable fails with it (`variables.<name>: ...`), and one that does not is
    /// unaffected.
    pub fn bind(&mut self, name: &str, p: &Program) {
        let value = self.on_stack(p, || self.run(p, convert::to_static));
        self.roots.variables.push((name.to_owned(), value));
    }

    /// Evaluates `p`, its result as JSON (see the module documentation); errors in words.
    pub fn eval(&self, p: &Program) -> Result<Json, String> {
        self.on_stack(p, || self.run(p, convert::val_to_json))
    }

    /// Runs `f` under the panic guard: on this thread when `p` nests little, else on a thread
    /// of its own with a stack deep enough for any expression [`compile`] accepts (a debug
    /// build uses some 35 KiB of stack per level).
    fn on_stack<T: Send>(&self, p: &Program, f: impl FnOnce() -> Result<T, String> + Send) -> Result<T, String> {
        if p.inner.depth <= INLINE_DEPTH {
            return guard("evaluating", f);
        }
        std::thread::scope(|scope| {
            let evaluator = std::thread::Builder::new().name("cel-eval".into()).stack_size(EVAL_STACK).spawn_scoped(scope, || guard("evaluating", f));
            match evaluator.map(std::thread::ScopedJoinHandle::join) {
                Ok(Ok(result)) => result,
                Ok(Err(_)) => Err("internal error of the CEL interpreter while evaluating".into()),
                Err(e) => Err(format!("cannot start evaluating: {e}")),
            }
        })
    }

    fn run<T>(&self, p: &Program, then: impl FnOnce(&dyn Val) -> Result<T, String>) -> Result<T, String> {
        let mut context = Context::with_env(Arc::clone(&p.inner.env));
        context.set_variable_resolver(&self.roots);
        match Value::resolve_val(p.inner.program.expression(), &context) {
            Ok(value) => then(value.as_ref()),
            Err(e) => Err(self.explain(p, e)),
        }
    }

    /// An evaluation error in words, naming the variable or document it comes from, if any.
    fn explain(&self, p: &Program, e: ExecutionError) -> String {
        for name in &p.inner.variables {
            if let Some(Err(why)) = self.roots.variable(name) {
                return format!("variables.{name}: {why}");
            }
        }
        if let ExecutionError::UndeclaredReference(ident) = &e {
            if ident.as_str() == "variables" {
                if let Some(name) = p.inner.variables.iter().find(|n| self.roots.variable(n).is_none()) {
                    return format!("no such variable: variables.{name}");
                }
            }
            if let Some(i) = ROOTS.iter().position(|r| *r == ident.as_str()) {
                if let Err(why) = self.roots.root(i) {
                    return why.clone();
                }
            }
        }
        match &e {
            // Kubernetes' libraries fail with their own words alone, which the server quotes.
            ExecutionError::FunctionError { function, message } if UPSTREAM_WORDED.contains(&function.as_str()) => message.clone(),
            // cel-go's words, which the server quotes in a refusal.
            ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
            ExecutionError::UndeclaredReference(r) => format!("undeclared reference to '{r}'"),
            ExecutionError::DivisionByZero(_) => "division by zero".into(),
            ExecutionError::RemainderByZero(_) => "modulus by zero".into(),
            _ => e.to_string(),
        }
    }
}
