//! Kubernetes' CEL format library (`k8s.io/apiserver/pkg/cel/library/format.go`, in the server's
//! environment from 1.31): `format.dns1123Label()` and the other named formats,
//! `format.named(name)` (an optional format: none for an unknown name), and
//! `f.validate(s)`, an optional list of the errors (none when `s` is valid).
//!
//! The formats and their checks, with upstream's error words:
//!
//! * `dns1123Label`, `dns1123Subdomain`, `dns1035Label` and their `...Prefix` forms (a
//!   `generateName`: a trailing `-` is allowed, as apimachinery's `maskTrailingDash` allows it),
//!   `qualifiedName`, `labelValue`: apimachinery's validation;
//! * `uri`: Go's `url.ParseRequestURI` (the url library's parse);
//! * `uuid`, `byte` (standard base64), `date` (`YYYY-MM-DD`, a real day) and `datetime`:
//!   kube-openapi's strfmt checks, quirks included (`datetime` looks only at what follows the
//!   first `t`, case-insensitively, up to the next one).

use std::sync::LazyLock;

use super::CelResult;
use cel::common::types::{CelList, CelOptional, CelString, Kind, Type, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

/// The CEL type, named as upstream names it.
pub(super) static FORMAT_TYPE: Type = Type::simple_type(Kind::Opaque, "kubernetes.NamedFormat");

/// A format's check: the errors of a string, none when it is valid.
type Check = fn(&str) -> Vec<String>;

/// The named formats: the name `format.<name>()` and `format.named(name)` use, and the check.
const FORMATS: &[(&str, Check)] = &[
    ("dns1123Label", dns1123_label_errors),
    ("dns1123Subdomain", |s| dns1123_subdomain_errors(s, CHARACTERS)),
    ("dns1035Label", dns1035_label_errors),
    ("qualifiedName", qualified_name_errors),
    ("dns1123LabelPrefix", |s| dns1123_label_errors(&mask_trailing_dash(s))),
    ("dns1123SubdomainPrefix", |s| dns1123_subdomain_errors(&mask_trailing_dash(s), CHARACTERS)),
    ("dns1035LabelPrefix", |s| dns1035_label_errors(&mask_trailing_dash(s))),
    ("labelValue", label_value_errors),
    ("uri", uri_errors),
    ("uuid", |s| unless(UUID.is_match(s), "does not match the UUID format")),
    ("byte", |s| unless(BASE64.is_match(s), "invalid base64")),
    ("date", |s| unless(is_date(s), "invalid date")),
    ("datetime", |s| unless(is_date_time(s), "invalid datetime")),
];

// apimachinery's name checks as 1.37 words them. The DNS names of `api/validation` count
// characters; `validate/content`, which label keys and values moved to, counts bytes.
const CHARACTERS: &str = "characters";
const BYTES: &str = "bytes";
const DNS1123_LABEL: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const LABEL_KEY: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_MESSAGE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

fn too_long(max: usize, unit: &str) -> String {
    format!("must be no more than {max} {unit}")
}

/// apimachinery's `RegexError`.
fn regex_error(message: &str, regex: &str, examples: &[&str]) -> String {
    let examples: String = examples.iter().map(|e| format!("'{e}', ")).collect::<Vec<_>>().join(" or ");
    format!("{message} (e.g. {examples}regex used for validation is '{regex}')")
}

/// Every byte as `inner` allows, and the first and last as `first` and `last` do.
fn shaped(s: &str, first: fn(u8) -> bool, inner: fn(u8) -> bool, last: fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    matches!((b.first(), b.last()), (Some(&f), Some(&l)) if first(f) && last(l) && b.iter().all(|&c| inner(c)))
}

fn lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn is_dns1123_label(s: &str) -> bool {
    shaped(s, lower_alnum, |c| lower_alnum(c) || c == b'-', lower_alnum)
}

fn is_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(is_dns1123_label)
}

fn is_label_key(s: &str) -> bool {
    shaped(s, |c| c.is_ascii_alphanumeric(), |c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'), |c| c.is_ascii_alphanumeric())
}

fn dns1123_label_errors(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push(too_long(63, CHARACTERS));
    }
    if !is_dns1123_label(s) {
        errors.push(if is_dns1123_subdomain(s) {
            "must not contain dots".to_owned()
        } else {
            let message =
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
            regex_error(message, DNS1123_LABEL, &["my-name", "123-abc"])
        });
    }
    errors
}

fn dns1123_subdomain_errors(s: &str, unit: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 253 {
        errors.push(too_long(253, unit));
    }
    if !is_dns1123_subdomain(s) {
        let message = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
        errors.push(regex_error(message, &format!("{DNS1123_LABEL}(\\.{DNS1123_LABEL})*"), &["example.com"]));
    }
    errors
}

fn dns1035_label_errors(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push(too_long(63, CHARACTERS));
    }
    if !shaped(s, |c| c.is_ascii_lowercase(), |c| lower_alnum(c) || c == b'-', lower_alnum) {
        let message = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
        errors.push(regex_error(message, DNS1035_LABEL, &["my-name", "abc-123"]));
    }
    errors
}

/// `IsQualifiedName` (a label key): `[prefix/]name`.
fn qualified_name_errors(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                errors.extend(dns1123_subdomain_errors(prefix, BYTES).into_iter().map(|e| format!("prefix part {e}")));
            }
            name
        }
        _ => {
            let shape = regex_error(LABEL_KEY_MESSAGE, LABEL_KEY, &["MyName", "my.name", "123-abc"]);
            return vec![format!("a valid label key {shape} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errors.push(format!("name part {}", too_long(63, BYTES)));
    }
    if !is_label_key(name) {
        errors.push(format!("name part {}", regex_error(LABEL_KEY_MESSAGE, LABEL_KEY, &["MyName", "my.name", "123-abc"])));
    }
    errors
}

fn label_value_errors(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push(too_long(63, BYTES));
    }
    if !s.is_empty() && !is_label_key(s) {
        let message = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
        errors.push(regex_error(message, &format!("({LABEL_KEY})?"), &["MyValue", "my_value", "12345"]));
    }
    errors
}

/// apimachinery's `maskTrailingDash`, for a `generateName`: a name of two bytes or more ending
/// in `-` has its last two bytes replaced by `a` (so `a-` and `ab-` pass, `-` alone does not).
fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(head) if name.len() > 1 => {
            let cut = head.len() - 1;
            let head = if head.is_char_boundary(cut) { &head[..cut] } else { head };
            format!("{head}a")
        }
        _ => name.to_owned(),
    }
}

fn unless(ok: bool, error: &str) -> Vec<String> {
    if ok {
        Vec::new()
    } else {
        vec![error.to_owned()]
    }
}

fn uri_errors(s: &str) -> Vec<String> {
    super::url::Url::request_uri_error(s).into_iter().collect()
}

fn pattern(re: &str) -> regex::Regex {
    regex::Regex::new(re).unwrap_or_else(|e| unreachable!("a fixed pattern: {e}"))
}

static UUID: LazyLock<regex::Regex> = LazyLock::new(|| pattern("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"));
static BASE64: LazyLock<regex::Regex> = LazyLock::new(|| pattern(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"));
static TIME: LazyLock<regex::Regex> = LazyLock::new(|| pattern(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"));

/// Go's `time.Parse("2006-01-02", s)` succeeds: four-digit year, two-digit month and day, a day
/// the month has.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || ![0, 1, 2, 3, 5, 6, 8, 9].iter().all(|&i| b[i].is_ascii_digit()) {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(0);
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// kube-openapi's `IsDateTime`.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    TIME.captures(parts[1]).is_some_and(|m| {
        let field = |i: usize| m.get(i).map_or("", |g| g.as_str());
        field(1) <= "23" && field(2) <= "59" && field(3) <= "59"
    })
}

/// A named format as a CEL value; two are `==` when they have the same name.
#[derive(Debug, Clone)]
pub(super) struct FormatVal(usize);

super::opaque_val!(FormatVal, FORMAT_TYPE, |a, b| a.0 == b.0);

fn validate<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let error = |m: &str| ExecutionError::function_error("validate", m);
    let f = args.first().and_then(|a| a.downcast_ref::<FormatVal>()).ok_or_else(|| error("expected a format"))?;
    let s = args.get(1).and_then(|a| a.downcast_ref::<CelString>()).map(|s| s.inner()).ok_or_else(|| error("expected a string"))?;
    let errors = (FORMATS[f.0].1)(s);
    if errors.is_empty() {
        return Ok(CowVal::owned(CelOptional::none()));
    }
    let list: Vec<Box<dyn Val + 'v>> = errors.into_iter().map(|e| Box::new(CelString::from(e)) as Box<dyn Val + 'v>).collect();
    Ok(CowVal::owned(CelOptional::of(Box::new(CelList::from(list)))))
}

fn named<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    let name = args
        .first()
        .and_then(|a| a.downcast_ref::<CelString>())
        .map(|s| s.inner())
        .ok_or_else(|| ExecutionError::function_error("format.named", "expected a string"))?;
    Ok(CowVal::owned(match FORMATS.iter().position(|(n, _)| *n == name) {
        Some(i) => CelOptional::of(Box::new(FormatVal(i))),
        None => CelOptional::none(),
    }))
}

/// `format.<name>()` for the format at `I` in [`FORMATS`].
fn constant<'b, 'v, const I: usize>(_: Vec<CowVal<'b, 'v>>) -> CelResult<'b, 'v> {
    Ok(CowVal::owned(FormatVal(I)))
}

/// Registers the library on `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(FORMAT_TYPE.to_owned())?;
    env.add_member_overload("validate", "format-validate", FORMAT_TYPE.to_owned(), vec![STRING_TYPE], validate)?;
    env.add_overload("format.named", "format-named", vec![STRING_TYPE], named)?;
    let constants: [cel::common::functions::Function; 13] = [
        constant::<0>,
        constant::<1>,
        constant::<2>,
        constant::<3>,
        constant::<4>,
        constant::<5>,
        constant::<6>,
        constant::<7>,
        constant::<8>,
        constant::<9>,
        constant::<10>,
        constant::<11>,
        constant::<12>,
    ];
    for ((name, _), f) in FORMATS.iter().zip(constants) {
        let qualified = format!("format.{name}");
        env.add_overload(&qualified, &qualified, vec![], f)?;
    }
    Ok(())
}
