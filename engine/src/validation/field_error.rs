//! [`FieldError`], apimachinery's `field.Error`, and the whole refusal as the server and
//! kubectl print it.

use std::collections::HashSet;
use std::fmt;

use super::go_format::go_quote;

/// What kind of problem a [`FieldError`] is (`field.ErrorType`), plus decode failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldErrorKind {
    /// `Invalid value` (HTTP 422).
    Invalid,
    /// `Required value` (HTTP 422).
    Required,
    /// `Forbidden` (HTTP 422).
    Forbidden,
    /// `Too long` (HTTP 422).
    TooLong,
    /// `Duplicate value` (HTTP 422): a name a list holds twice.
    Duplicate,
    /// `Unsupported value` (HTTP 422): the value, then `supported values: ` and the list (the
    /// error's detail).
    NotSupported,
    /// The value is not a quantity: the server would refuse the request body while decoding
    /// it (HTTP 400), before any validation. Callers should treat it as a usage error.
    Unparseable,
}

impl FieldErrorKind {
    /// The server's words for the kind, as printed after the field path.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldErrorKind::Invalid | FieldErrorKind::Unparseable => "Invalid value",
            FieldErrorKind::Required => "Required value",
            FieldErrorKind::Forbidden => "Forbidden",
            FieldErrorKind::TooLong => "Too long",
            FieldErrorKind::NotSupported => "Unsupported value",
            FieldErrorKind::Duplicate => "Duplicate value",
        }
    }
}

impl fmt::Display for FieldErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One validation problem, like apimachinery's `field.Error`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldError {
    /// The field path, e.g. `spec.hard[requests.cpu]`, `spec.scopeSelector.matchExpressions.operator`.
    pub field: String,
    /// The kind of problem.
    pub kind: FieldErrorKind,
    /// The offending value, already rendered the way the server prints it after
    /// `Invalid value: ` (a Go-quoted string such as `"foo"`, or a Go literal such as
    /// `[]core.ResourceQuotaScope{"BestEffort"}`). Empty for `Required` / `TooLong`,
    /// which print no value.
    pub bad_value: String,
    /// The server's reason, e.g. `must be a standard resource for quota`.
    pub detail: String,
}

impl FieldError {
    /// An `Invalid value` error.
    pub fn invalid(field: impl Into<String>, bad_value: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError { field: field.into(), kind: FieldErrorKind::Invalid, bad_value: bad_value.into(), detail: detail.into() }
    }

    /// An `Unsupported value` error: `supported` are the values allowed, each Go-quoted.
    pub fn not_supported(field: impl Into<String>, bad_value: &str, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|v| go_quote(v)).collect();
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::NotSupported,
            bad_value: go_quote(bad_value),
            detail: format!("supported values: {}", list.join(", ")),
        }
    }

    /// A `Duplicate value` error: `value` is Go-quoted.
    pub fn duplicate(field: impl Into<String>, value: &str) -> Self {
        FieldError { field: field.into(), kind: FieldErrorKind::Duplicate, bad_value: go_quote(value), detail: String::new() }
    }

    /// A `Forbidden` error.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError { field: field.into(), kind: FieldErrorKind::Forbidden, bad_value: String::new(), detail: detail.into() }
    }

    /// A `Required value` error.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError { field: field.into(), kind: FieldErrorKind::Required, bad_value: String::new(), detail: detail.into() }
    }

    /// True for a value that could not even be decoded (see [`FieldErrorKind::Unparseable`]).
    pub fn is_decode_error(&self) -> bool {
        self.kind == FieldErrorKind::Unparseable
    }

    /// The part after the field path: `Invalid value: "foo": must be ...` (`ErrorBody`).
    pub fn body(&self) -> String {
        let mut s = self.kind.as_str().to_string();
        match self.kind {
            FieldErrorKind::Invalid | FieldErrorKind::Unparseable | FieldErrorKind::NotSupported | FieldErrorKind::Duplicate => {
                s.push_str(": ");
                s.push_str(&self.bad_value);
            }
            FieldErrorKind::Required | FieldErrorKind::Forbidden | FieldErrorKind::TooLong => {}
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// True when any error is a decode error ([`FieldErrorKind::Unparseable`]).
pub fn has_decode_errors(errors: &[FieldError]) -> bool {
    errors.iter().any(FieldError::is_decode_error)
}

/// The whole refusal as kubectl shows it for `kubectl create` of a ResourceQuota named
/// `name` (use `metadata.generateName` when the name is empty):
///
/// - validation errors: `The ResourceQuota "q" is invalid: <error>` for one error, and
///   `The ResourceQuota "q" is invalid: ` followed by one `\n* <error>` line per error for
///   several (identical messages are listed once, as the server and kubectl do);
/// - if any error is a decode error, the server never validates: the message is the
///   decode failure, `ResourceQuota in version "v1" cannot be handled as a ResourceQuota:
///   <reason>` (the first such error's reason).
///
/// Returns an empty string when `errors` is empty.
pub fn render_server_message(name: &str, errors: &[FieldError]) -> String {
    match status_message(name, errors) {
        m if m.starts_with("ResourceQuota \"") => {
            let errors = dedup(errors.to_vec());
            let head = format!("The ResourceQuota {} is invalid: ", go_quote(name));
            match errors.as_slice() {
                [one] => format!("{head}{one}"),
                many => many.iter().fold(head, |s, e| format!("{s}\n* {e}")),
            }
        }
        other => other,
    }
}

/// The message of the server's 422 for a ResourceQuota, as its Status carries it and as Go
/// prints the error (`ResourceQuota "q" is invalid: spec.scopes: ...`; several causes in
/// brackets, comma-separated); a decode error as the server words it. Empty for no errors.
pub fn status_message(name: &str, errors: &[FieldError]) -> String {
    if let Some(decode) = errors.iter().find(|e| e.is_decode_error()) {
        return format!("ResourceQuota in version \"v1\" cannot be handled as a ResourceQuota: {}", decode.detail);
    }
    let errors = dedup(errors.to_vec());
    match errors.len() {
        0 => String::new(),
        1 => format!("ResourceQuota {} is invalid: {}", go_quote(name), errors[0]),
        _ => format!("ResourceQuota {} is invalid: [{}]", go_quote(name), errors.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")),
    }
}

/// Removes repeated messages, keeping the first (`ErrorList.ToAggregate`).
pub(super) fn dedup(errors: Vec<FieldError>) -> Vec<FieldError> {
    let mut seen = HashSet::new();
    errors.into_iter().filter(|e| seen.insert(e.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::reasons;

    #[test]
    fn server_message_forms() {
        let one = FieldError::invalid("spec.hard[foo]", "\"foo\"", reasons::NOT_QUOTA_RESOURCE);
        let two = FieldError::required("spec.scopeSelector.matchExpressions.values", reasons::VALUES_REQUIRED);
        assert_eq!(render_server_message("q", &[]), "");
        assert_eq!(
            render_server_message("q", std::slice::from_ref(&one)),
            "The ResourceQuota \"q\" is invalid: spec.hard[foo]: Invalid value: \"foo\": must be a standard resource for quota"
        );
        assert_eq!(
            render_server_message("q", &[one.clone(), two.clone(), one.clone()]),
            "The ResourceQuota \"q\" is invalid: \n* spec.hard[foo]: Invalid value: \"foo\": must be a standard resource for quota\n* spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
        );
    }
}
