//! ResourceQuota validation against what a real kube-apiserver answered.
//!
//! Every folder in `tests/conformance-validation/` holds a `quota.yaml` and the server's
//! verdict in `expected.json` (see the README there; the answers come from v1.20.2 via
//! `kubectl create --dry-run=server`). For each case we decode the manifest into
//! k8s-openapi's `ResourceQuota`, run `validate_resource_quota`, and check:
//!
//! 1. `valid` agrees (no errors <=> accepted);
//! 2. for a refusal, the SET of (field path, reason) pairs parsed from the server's message
//!    equals ours: each of the server's pairs is among ours and each of ours is among the
//!    server's. Our reason may append advice after the server's reason (we compare with
//!    `starts_with`), but the field path and the server's reason must be there;
//! 3. each of our error lines equals the server's line exactly (field, kind, rendered bad
//!    value, reason), worded as 1.20 words them: refused values as Go's `%#v` (a `must be an
//!    integer` quantity as the `resource.Quantity{...}` struct, its cached string `s`
//!    included), and the exists-only operator rule as `must be 'Exist' only operator when
//!    scope is any of ... and ResourceQuotaScopeNotBestEffort`;
//! 4. our whole rendered message (`render_server_message`) has the server's form (one error
//!    inline, or one `\n* ` line per error, duplicates removed) and the same lines; line order
//!    is not compared (the server walks `spec.hard` in Go map order, though the corpus
//!    happens to be sorted like ours).
//!
//! No difference is tolerated. (Cases using the CrossNamespacePodAffinity or
//! VolumeAttributesClass scopes, which v1.20 refuses, are not in the corpus.)
//!
//! A manifest that cannot be decoded into k8s-openapi types is reported as DECODE ERROR and
//! fails the test. Every failing case prints one summary line, then details.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::ResourceQuota;
use kubectl_quota_engine::validation::{render_server_message, validate_resource_quota, FieldError, ValueStyle};

#[derive(serde::Deserialize)]
struct Expected {
    valid: bool,
    message: String,
}

/// One error line of the server's message, split into its parts.
#[derive(Debug, Clone)]
struct ServerError {
    line: String,
    field: String,
    /// The rendered bad value (`Invalid value: <value>: ...`), if the line has one.
    value: Option<String>,
    reason: String,
}

fn cases_dir() -> PathBuf {
    common::root().join("tests").join("conformance-validation")
}

/// Splits `The ResourceQuota "q" is invalid: <one>` / `... is invalid: \n* <a>\n* <b>`.
fn split_message(message: &str) -> Result<Vec<String>, String> {
    let marker = " is invalid: ";
    let at = message.find(marker).ok_or_else(|| format!("no {marker:?} in message"))?;
    let rest = &message[at + marker.len()..];
    if let Some(list) = rest.strip_prefix("\n* ") {
        Ok(list.split("\n* ").map(|l| l.trim_end_matches('\n').to_string()).collect())
    } else {
        Ok(vec![rest.trim_end_matches('\n').to_string()])
    }
}

/// Length of a Go-rendered value at the start of `s` (a `%q` string, or a `%#v` literal
/// such as `[]string{"a"}`, `core.ScopeSelector{...}`, `[]core.ResourceQuotaScope(nil)`):
/// it ends at the first `": "` outside quotes and brackets.
fn go_value_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0i32;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => depth -= 1,
            b':' if depth == 0 && b.get(i + 1) == Some(&b' ') => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

fn parse_server_error(line: &str) -> Result<ServerError, String> {
    let (field, body) = line.split_once(": ").ok_or_else(|| format!("no field in {line:?}"))?;
    let (value, reason) = if let Some(after) = body.strip_prefix("Invalid value: ") {
        let n = go_value_len(after).ok_or_else(|| format!("cannot split value/reason in {line:?}"))?;
        (Some(after[..n].to_string()), after[n + 2..].to_string())
    } else if let Some(after) = body.strip_prefix("Required value") {
        (None, after.strip_prefix(": ").unwrap_or(after).to_string())
    } else {
        return Err(format!("unknown error kind in {line:?}"));
    };
    Ok(ServerError { line: line.to_string(), field: field.to_string(), value, reason })
}

/// A message as (is it a `\n* ` list, sorted lines); every line parses as a field error.
fn normalized_lines(message: &str) -> Result<(bool, Vec<String>), String> {
    let is_list = message.contains(" is invalid: \n* ");
    let mut lines = Vec::new();
    for line in split_message(message)? {
        parse_server_error(&line)?;
        lines.push(line);
    }
    lines.sort();
    Ok((is_list, lines))
}

/// Our reason matches the server's when it is the same or the server's followed by advice.
fn reason_matches(ours: &FieldError, field: &str, reason: &str) -> bool {
    ours.field == field && ours.detail.starts_with(reason)
}

/// Checks one case; `Err` holds the summary line and the details.
fn check_case(dir: &Path) -> Result<(), (String, Vec<String>)> {
    let yaml = fs::read_to_string(dir.join("quota.yaml")).map_err(|e| (format!("cannot read quota.yaml: {e}"), vec![]))?;
    let expected: Expected =
        serde_json::from_str(&fs::read_to_string(dir.join("expected.json")).map_err(|e| (format!("cannot read expected.json: {e}"), vec![]))?)
            .map_err(|e| (format!("bad expected.json: {e}"), vec![]))?;
    let rq: ResourceQuota = serde_saphyr::from_str(&yaml).map_err(|e| (format!("DECODE ERROR: quota.yaml is not a k8s-openapi ResourceQuota: {e}"), vec![]))?;
    // Recorded on 1.20: its wording (no invalidValuesAsJson, no CrossNamespacePodAffinity).
    let ours = validate_resource_quota(&rq, ValueStyle::for_release(false, false));
    let name = rq.metadata.name.clone().unwrap_or_default();
    let our_message = render_server_message(&name, &ours);

    if expected.valid {
        if ours.is_empty() {
            return Ok(());
        }
        return Err((format!("server accepted, we refused with {} error(s)", ours.len()), ours.iter().map(|e| format!("ours only: {e}")).collect()));
    }
    if ours.is_empty() {
        return Err(("server refused, we accepted".to_string(), vec![format!("server: {}", expected.message)]));
    }

    let server: Vec<ServerError> = split_message(&expected.message)
        .and_then(|lines| lines.iter().map(|l| parse_server_error(l)).collect())
        .map_err(|e| (format!("cannot parse expected message: {e}"), vec![]))?;

    let mut details = Vec::new();
    for s in &server {
        if !ours.iter().any(|o| reason_matches(o, &s.field, &s.reason)) {
            details.push(format!("missing (server has it, we don't): {} -> {}", s.field, s.reason));
        }
    }
    for o in &ours {
        if !server.iter().any(|s| reason_matches(o, &s.field, &s.reason)) {
            details.push(format!("extra (we have it, server doesn't): {o}"));
        }
    }
    // Exact rendering, every line.
    for s in &server {
        let want = &s.line;
        if !ours.iter().any(|o| o.to_string() == *want) {
            details.push(format!("rendering differs: server line {want:?} not among ours"));
        }
    }
    // The whole message: same form (one error inline, or `\n* ` lines) and the same lines,
    // word for word. Line order is not compared: the server walks `spec.hard` in Go map order.
    match (normalized_lines(&expected.message), normalized_lines(&our_message)) {
        (Ok(want), Ok(got)) if want == got => {}
        (Ok(_), Ok(_)) => details.push("whole message differs (form or lines)".to_string()),
        (Err(e), _) | (_, Err(e)) => details.push(format!("cannot parse a message: {e}")),
    }
    if details.is_empty() {
        return Ok(());
    }
    let pairs = |v: Vec<(String, String)>| v.into_iter().collect::<BTreeSet<_>>().len();
    let summary = format!(
        "{} server (field, reason) pair(s) vs {} of ours; {} problem(s)",
        pairs(server.iter().map(|s| (s.field.clone(), s.reason.clone())).collect()),
        pairs(ours.iter().map(|o| (o.field.clone(), o.detail.clone())).collect()),
        details.len()
    );
    details.push(format!("server message: {:?}", expected.message));
    details.push(format!("our message:    {our_message:?}"));
    Err((summary, details))
}

#[test]
fn conformance_validation_corpus() {
    let mut dirs: Vec<PathBuf> =
        fs::read_dir(cases_dir()).expect("tests/conformance-validation exists").map(|e| e.expect("readable entry").path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no cases found");

    let mut failures = Vec::new();
    for dir in &dirs {
        let case = dir.file_name().unwrap().to_string_lossy().to_string();
        if let Err((summary, details)) = check_case(dir) {
            println!("FAIL {case}: {summary}");
            for d in &details {
                println!("     {d}");
            }
            failures.push(case);
        }
    }
    println!("{} of {} validation cases pass", dirs.len() - failures.len(), dirs.len());
    assert!(failures.is_empty(), "failing cases: {}", failures.join(", "));
}

#[test]
fn message_parser_handles_go_values() {
    let line = r#"spec.scopeSelector.matchExpressions: Invalid value: core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{core.ScopedResourceSelectorRequirement{ScopeName:"NotBestEffort", Operator:"NotIn", Values:[]string(nil)}}}: unsupported scope applied to resource"#;
    let e = parse_server_error(line).unwrap();
    assert_eq!(e.field, "spec.scopeSelector.matchExpressions");
    assert_eq!(e.reason, "unsupported scope applied to resource");
    let line = r#"spec.hard[x]: Invalid value: "a: b": must be an integer"#;
    let e = parse_server_error(line).unwrap();
    assert_eq!(e.value.as_deref(), Some(r#""a: b""#));
    assert_eq!(e.reason, "must be an integer");
    let e = parse_server_error("spec.scopeSelector.matchExpressions.values: Required value: must be x").unwrap();
    assert_eq!((e.field.as_str(), e.value, e.reason.as_str()), ("spec.scopeSelector.matchExpressions.values", None, "must be x"));
}
