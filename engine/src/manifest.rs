//! Step 1 of the pipeline: manifest text (multi-document YAML, JSON, `kind: List`) into plain
//! JSON documents that remember where they came from. Reading files is the plugin's job.
//!
//! ```
//! use kubectl_quota_engine::manifest::parse_str;
//!
//! let docs = parse_str("app.yaml", "kind: Pod\n---\n---\nkind: List\nitems: [{kind: Secret}, {kind: ConfigMap}]\n").unwrap();
//! assert_eq!(docs.len(), 3);
//! assert_eq!(docs[2].origin.to_string(), "app.yaml, document 3, item 2");
//! ```

use std::fmt;

use serde::Deserialize;
use serde_json::Value;

/// Where a document came from: the file (`-` for stdin), the 1-based document number in the
/// file, and the 1-based item number inside a `kind: List`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    pub file: String,
    pub document: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<usize>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, document {}", self.file, self.document)?;
        if let Some(item) = self.item {
            write!(f, ", item {item}")?;
        }
        Ok(())
    }
}

/// One Kubernetes object as JSON, with its origin.
#[derive(Debug, Clone)]
pub struct Document {
    pub origin: Origin,
    pub value: Value,
}

/// Input that cannot be read or evaluated: names the file, the document and the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// `None` when the problem is with a path itself (not found, unreadable).
    pub origin: Option<Origin>,
    pub file: String,
    /// A JSON path inside the document such as `spec.containers[0].resources.requests.cpu`.
    pub field: Option<String>,
    pub message: String,
}

impl InputError {
    pub fn file(file: impl Into<String>, message: impl Into<String>) -> Self {
        InputError { origin: None, file: file.into(), field: None, message: message.into() }
    }

    pub fn at(origin: &Origin, field: Option<String>, message: impl Into<String>) -> Self {
        InputError { origin: Some(origin.clone()), file: origin.file.clone(), field, message: message.into() }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.origin {
            Some(o) => write!(f, "{o}")?,
            None => write!(f, "{}", self.file)?,
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

/// Splits a YAML or JSON stream into documents. Empty documents are skipped but still counted,
/// so document numbers match what an editor shows between `---` separators.
pub fn parse_str(file: &str, text: &str) -> Result<Vec<Document>, InputError> {
    let mut out = Vec::new();
    for (i, de) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let origin = Origin { file: file.to_string(), document: i + 1, item: None };
        let yaml = serde_yaml::Value::deserialize(de).map_err(|e| InputError::at(&origin, None, format!("not valid YAML or JSON: {e}")))?;
        if yaml.is_null() {
            continue;
        }
        let mut value: Value = serde_json::to_value(&yaml).map_err(|e| InputError::at(&origin, None, format!("cannot be read as a Kubernetes object: {e}")))?;
        normalize_floats(&mut value, looks_like_json(text));
        if !value.is_object() {
            return Err(InputError::at(&origin, None, "a Kubernetes object must be a mapping (apiVersion, kind, metadata, ...)"));
        }
        let is_list = value.get("kind").and_then(Value::as_str).is_some_and(|k| k == "List" || k.ends_with("List")) && value.get("items").is_some();
        if is_list {
            let items = value["items"].as_array().ok_or_else(|| InputError::at(&origin, Some("items".into()), "must be a list"))?;
            for (j, item) in items.iter().enumerate() {
                let o = Origin { item: Some(j + 1), ..origin.clone() };
                if !item.is_object() {
                    return Err(InputError::at(&o, None, "a list item must be a mapping"));
                }
                out.push(Document { origin: o, value: item.clone() });
            }
        } else {
            out.push(Document { origin, value });
        }
    }
    Ok(out)
}

/// Whether a stream is JSON rather than YAML (kubectl decides the same way: by the first
/// non-blank character).
fn looks_like_json(text: &str) -> bool {
    text.trim_start().starts_with(['{', '['])
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`: shortest digits, exponent form (`1e+09`) when
/// the exponent is below -4 or at least 6.
pub fn go_float_g(f: f64) -> String {
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if f != 0.0 && !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// Floating-point numbers reach the API server as kubectl sends them, and a quantity keeps the
/// notation it arrives in (`1e9` prints as `1e9`, `1000000000` as `1G`). kubectl converts YAML
/// to JSON with Go's `%g` formatting, so a YAML float becomes the text `1e+09`; JSON input is
/// decoded into integers where the value is whole. Floats are replaced here by that text.
fn normalize_floats(v: &mut Value, json: bool) {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            if json || (f.fract() == 0.0 && f.abs() < 1e6) {
                if f.fract() == 0.0 && f.abs() < 9.2e18 {
                    *v = Value::from(f as i64);
                }
            } else if f.is_finite() {
                *v = Value::String(go_float_g(f));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| normalize_floats(i, json)),
        Value::Object(map) => map.values_mut().for_each(|i| normalize_floats(i, json)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_numbered_as_written_including_empty_ones() {
        let docs = parse_str("f.yaml", "---\nkind: A\n---\n# only a comment\n---\nkind: B\n").unwrap();
        let got: Vec<_> = docs.iter().map(|d| (d.origin.document, d.value["kind"].as_str().unwrap().to_string())).collect();
        // serde_yaml counts the leading `---` as opening the first document.
        assert_eq!(got, vec![(1, "A".to_string()), (3, "B".to_string())]);
    }

    #[test]
    fn floats_arrive_as_kubectl_sends_them() {
        let cases = [(1e9, "1e+09"), (0.5, "0.5"), (123456.0, "123456"), (1234567.0, "1.234567e+06"), (1e-5, "1e-05"), (0.0001, "0.0001"), (1.25, "1.25")];
        for (f, want) in cases {
            assert_eq!(go_float_g(f), want);
        }
        let yaml = parse_str("f.yaml", "a: 1e9\nb: 2.0\nc: 0.5\nd: 7\n").unwrap();
        assert_eq!(yaml[0].value, serde_json::json!({"a": "1e+09", "b": 2, "c": "0.5", "d": 7}));
        let json = parse_str("f.json", r#"{"a": 1e9, "c": 0.5}"#).unwrap();
        assert_eq!(json[0].value, serde_json::json!({"a": 1000000000, "c": 0.5}));
    }

    #[test]
    fn lists_expand_into_items() {
        let docs = parse_str("f.json", r#"{"kind":"List","items":[{"kind":"Pod"},{"kind":"Service"}]}"#).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1].origin, Origin { file: "f.json".into(), document: 1, item: Some(2) });
    }

    #[test]
    fn broken_input_names_file_and_document() {
        let cases = [
            ("kind: A\n---\nkind: [unclosed\n", "f.yaml, document 2: not valid YAML or JSON"),
            ("kind: A\n---\n- just\n- a list\n", "f.yaml, document 2: a Kubernetes object must be a mapping"),
            ("kind: List\nitems: 3\n", "f.yaml, document 1: items: must be a list"),
        ];
        for (text, want) in cases {
            let err = parse_str("f.yaml", text).unwrap_err().to_string();
            assert!(err.starts_with(want), "{err:?} should start with {want:?}");
        }
    }
}
