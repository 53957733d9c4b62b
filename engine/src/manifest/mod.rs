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

use serde_json::Value;

mod json;
mod large;
pub mod plain;

use large::{list_items, too_large_for_a_request, Items};

/// Where a document came from: the file (`-` for stdin, or a URL), the 1-based document
/// number in the file, the 1-based item number inside a `kind: List`, the line the document
/// starts on, and, for what a tool built (a kustomization), the resource's id there.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    pub file: String,
    pub document: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<usize>,
    /// The 1-based line of the document's first content (its first key, after any `---`,
    /// blank or comment lines): where an editor or a CI annotation should point. `None` when
    /// the text is not the user's own (a kustomization's build).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The resource's id (`Kind/namespace/name`, or `Kind/name`) in a built input such as a
    /// kustomization, whose document numbers mean nothing to its author: `file` is then the
    /// kustomization file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The document is surely larger, as the JSON kubectl sends, than the API server reads
    /// ([`MAX_REQUEST_BODY_BYTES`]): judged from its text, only what names it was read.
    #[serde(skip)]
    pub too_large: bool,
}

/// The most bytes of a request body the API server reads (`--max-request-body-bytes`, 3 MiB
/// by default); past it the answer is `Request entity too large: limit is 3145728` (413).
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Whether a document of a state (`--state`, a snapshot) can be an object a server stores: one
/// over [`MAX_REQUEST_BODY_BYTES`] cannot, so the state was not read from a server, and it is an
/// error naming the document.
pub fn stored_by_a_server(origin: &Origin) -> Result<(), InputError> {
    if origin.too_large {
        return Err(InputError::at(
            origin,
            None,
            "larger than the API server takes in a request (3 MiB): no server stores such an object, so this state was not read from one",
        ));
    }
    Ok(())
}

impl Origin {
    /// Document `document` of `file`, nothing more known.
    pub fn new(file: impl Into<String>, document: usize) -> Origin {
        Origin { file: file.into(), document, ..Origin::default() }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(id) = &self.id {
            return write!(f, "{}, {id}", self.file);
        }
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
    /// `None` when the problem is with a path itself (not found, unreadable). Boxed: errors
    /// travel in every `Result` of the reader, and most results are not errors.
    pub origin: Option<Box<Origin>>,
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
        InputError { origin: Some(Box::new(origin.clone())), file: origin.file.clone(), field, message: message.into() }
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

/// Limits of the YAML reader, so that no input can make it run long or grow without bound.
/// The nesting depth matches what any real manifest needs many times over; alias expansion
/// is capped in total (as kubectl's YAML reader refuses excessive aliasing), and node, event
/// and scalar budgets scale with the input's size so a large honest file always passes.
pub const MAX_DEPTH: usize = 128;
/// Events an alias may replay over the whole stream (a 5,000-key anchor used 6,000 times is
/// 30 million; real manifests replay a few hundred).
pub const MAX_ALIAS_EVENTS: usize = 100_000;

fn yaml_options(len: usize) -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: MAX_DEPTH,
            max_documents: usize::MAX,
            max_nodes: len + 100_000,
            max_events: 2 * len + 200_000,
            max_total_scalar_bytes: len + (1 << 20),
        },
        alias_limits: serde_saphyr::alias_limits! { max_total_replayed_events: MAX_ALIAS_EVENTS },
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::Reject,
        legacy_octal_numbers: true,
        with_snippet: false,
    }
}

/// Splits a YAML or JSON stream into documents. Empty documents are skipped but still counted,
/// so document numbers match what an editor shows between `---` separators.
///
/// A document in plain YAML is read by [`plain::read`]; any other, and any error, by
/// serde-saphyr: linear in the input (serde_yaml is quadratic on deep nesting: 200 KB of `[`
/// took 50 s) and bounded on aliases, depth and size, with line and column in its errors. A
/// leading byte-order mark is accepted, as kubectl does.
pub fn parse_str(file: &str, text: &str) -> Result<Vec<Document>, InputError> {
    let mut out = Vec::new();
    parse_each(file, text, |d| {
        out.push(d);
        Ok(())
    })?;
    Ok(out)
}

/// [`parse_str`], handing each document to `each` as soon as it is read, so that a caller
/// which turns documents into something smaller never holds the whole stream as JSON values.
/// `each` may stop the parse by returning an error.
///
/// A stream of plain `---`-separated documents is read one document at a time (YAML does not
/// let an anchor, a scalar or a collection cross a `---` line at the start of a line). A stream
/// with directives (`%`), explicit ends (`...`), or anchors in more than a few documents is
/// read whole, so the alias budget stays one budget for the whole stream; so is any stream a
/// document of which fails, so that errors are the whole stream's (line numbers included).
pub fn parse_each(file: &str, text: &str, mut each: impl FnMut(Document) -> Result<(), InputError>) -> Result<(), InputError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let json = looks_like_json(text);
    if let Some(chunks) = plain_documents(text) {
        let mut handed_out = 0;
        for (number, line, chunk) in chunks {
            let origin = Origin { line, ..Origin::new(file, number) };
            // JSON is read by serde_json where that reads as the YAML reader does, a List an
            // item at a time; a large block List too (a state of 100,000 nodes is one).
            let items = if json {
                match json::read(&origin, chunk, &mut each) {
                    json::Read::Value(value) => {
                        emit(origin, value, json, &mut each)?;
                        handed_out = number;
                        continue;
                    }
                    json::Read::Items(items) => items,
                    json::Read::Refused => Items::NotAList,
                }
            } else {
                list_items(&origin, chunk, json, &mut each)
            };
            match items {
                Items::Read => {
                    handed_out = number;
                    continue;
                }
                Items::Stopped(e) => return Err(e),
                Items::Failed(items) => {
                    return parse_whole(file, text, json, |d| {
                        let done = d.origin.document < number || (d.origin.document == number && d.origin.item.is_some_and(|i| i <= items));
                        if d.origin.document <= handed_out || done {
                            Ok(())
                        } else {
                            each(d)
                        }
                    })
                }
                Items::NotAList => {}
            }
            // A document surely larger than the server reads is refused from its size, as the
            // server refuses it before decoding: only what names it is read. (Never a List: its
            // items are sent one by one. Measuring the text of one costs a tenth of reading it.)
            if let Some(named) = too_large_for_a_request(chunk, json) {
                emit(Origin { too_large: true, ..origin }, named, json, &mut each)?;
                handed_out = number;
                continue;
            }
            match plain::read(chunk).map_or_else(|| serde_saphyr::from_str_with_options::<Value>(chunk, yaml_options(chunk.len())), Ok) {
                Ok(value) => emit(origin, value, json, &mut each)?,
                // The whole stream's parse names the error, with the whole text's line numbers.
                Err(_) => return parse_whole(file, text, json, |d| if d.origin.document <= handed_out { Ok(()) } else { each(d) }),
            }
            handed_out = number;
        }
        return Ok(());
    }
    parse_whole(file, text, json, each)
}

/// The whole stream in one parse (one alias budget, line numbers of the whole text).
fn parse_whole(file: &str, text: &str, json: bool, mut each: impl FnMut(Document) -> Result<(), InputError>) -> Result<(), InputError> {
    let starts = document_first_lines(text);
    let doc_at = |line: u64| starts.partition_point(|&s| s <= line).max(1);
    let parsed: Vec<serde_saphyr::Spanned<Value>> = serde_saphyr::from_multiple_with_options(text, yaml_options(text.len())).map_err(|e| {
        let loc = e.location();
        let origin = Origin::new(file, loc.map(|l| doc_at(l.line())).unwrap_or(1));
        InputError::at(&origin, None, format!("not valid YAML or JSON: {}", yaml_message(&e)))
    })?;
    for spanned in parsed {
        let line = spanned.referenced.line();
        emit(Origin { line: usize::try_from(line).ok().filter(|l| *l > 0), ..Origin::new(file, doc_at(line)) }, spanned.value, json, &mut each)?;
    }
    Ok(())
}

/// Anchors in more documents than this make [`parse_each`] read the stream whole: each
/// document read alone would get the whole alias budget.
const MAX_DOCUMENTS_WITH_ANCHORS: usize = 8;

/// A stream cut at its `---` lines, as (document number, first content line, text) — `None`
/// when the stream has directives or `...` ends (read whole then). Document numbers follow
/// `document_first_lines`: text before the first `---` is a document only when it has
/// content; every `---` opens one.
fn plain_documents<'a>(text: &'a str) -> Option<Vec<(usize, Option<usize>, &'a str)>> {
    let mut chunks: Vec<(usize, Option<usize>, &str)> = Vec::new();
    let (mut start, mut offset, mut content, mut first) = (0usize, 0usize, None, true);
    let close = |start: usize, end: usize, content: Option<usize>, first: bool, chunks: &mut Vec<(usize, Option<usize>, &'a str)>| {
        if content.is_some() || !first {
            chunks.push((chunks.len() + 1, content, &text[start..end]));
        }
    };
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if line.starts_with('%') || is_marker(line, "...") {
            return None;
        }
        if is_marker(line, "---") {
            close(start, offset, content, first, &mut chunks);
            // `--- {kind: Pod}`: the document starts on the marker's line.
            let rest = line[3..].trim();
            (start, first, content) = (offset, false, (!rest.is_empty() && !rest.starts_with('#')).then_some(i + 1));
        } else if content.is_none() && has_content(line) {
            content = Some(i + 1);
        }
        offset += line.len();
    }
    close(start, offset, content, first, &mut chunks);
    let anchored = chunks.iter().filter(|(_, _, c)| c.contains('&')).count();
    (anchored <= MAX_DOCUMENTS_WITH_ANCHORS).then_some(chunks)
}

/// One parsed document: floats as kubectl sends them, a mapping required, a `kind: List`
/// expanded into its items.
fn emit(origin: Origin, mut value: Value, json: bool, each: &mut impl FnMut(Document) -> Result<(), InputError>) -> Result<(), InputError> {
    if value.is_null() {
        return Ok(());
    }
    normalize_floats(&mut value, json);
    if !value.is_object() {
        return Err(InputError::at(&origin, None, "a Kubernetes object must be a mapping (apiVersion, kind, metadata, ...)"));
    }
    let is_list = value.get("kind").and_then(Value::as_str).is_some_and(|k| k == "List" || k.ends_with("List")) && value.get("items").is_some();
    if !is_list {
        return each(Document { origin, value });
    }
    let Value::Object(mut map) = value else { unreachable!("checked above") };
    let Some(Value::Array(items)) = map.remove("items") else {
        return Err(InputError::at(&origin, Some("items".into()), "must be a list"));
    };
    for (j, item) in items.into_iter().enumerate() {
        let o = Origin { item: Some(j + 1), ..origin.clone() };
        if !item.is_object() {
            return Err(InputError::at(&o, None, "a list item must be a mapping"));
        }
        each(Document { origin: o, value: item })?;
    }
    Ok(())
}

/// The reader's message in our words where its own would puzzle (budget names), with the
/// line and column it gives.
fn yaml_message(e: &serde_saphyr::Error) -> String {
    let raw = e.to_string();
    let at = e.location().map(|l| format!(" (line {}, column {})", l.line(), l.column())).unwrap_or_default();
    if raw.contains("alias replay limit") || raw.contains("alias") && raw.contains("budget") {
        format!("aliases expand to more than {MAX_ALIAS_EVENTS} nodes (an alias bomb?){at}")
    } else if raw.contains("recursion limit") || raw.contains("Depth") {
        format!("nested deeper than {MAX_DEPTH} levels{at}")
    } else if raw.contains("ScalarBytes") || raw.contains("budget breached") {
        format!("expands far beyond its own size through aliases{at}")
    } else if let Some(rest) = raw.split_once("duplicate mapping key").map(|(_, r)| r) {
        // The reader's advice to its programmer (`set DuplicateKeyPolicy in Options if
        // acceptable`) means nothing to the manifest's author: the key and where it is.
        let key = rest.trim_start_matches(':').trim_start();
        let key = key.split(", set DuplicateKeyPolicy").next().unwrap_or(key);
        let key = key.split(" at line ").next().unwrap_or(key);
        format!("duplicate mapping key \"{key}\": a key may appear once in a mapping{at}")
    } else if raw.contains("non-finite float") {
        format!("{} is not a number Kubernetes accepts (.inf and .nan are refused){at}", raw.split('`').nth(1).unwrap_or("the value"))
    } else {
        raw
    }
}

/// A document marker (`---` or `...`) at the start of a line, alone or before white space.
fn is_marker(line: &str, marker: &str) -> bool {
    line.starts_with(marker) && line[marker.len()..].chars().next().is_none_or(char::is_whitespace)
}

/// Whether a line counts as content for numbering documents: not blank and not a comment
/// starting the line (directives are the caller's to judge).
fn has_content(line: &str) -> bool {
    !line.trim().is_empty() && !line.starts_with('#')
}

/// First line of each document: a leading `---` opens document 1, each later `---` (or
/// content after `...`) opens the next one. The reader skips null documents without saying
/// so; these lines put the numbers back.
fn document_first_lines(text: &str) -> Vec<u64> {
    let (mut starts, mut open, mut ended) = (vec![1], false, false);
    for (i, line) in text.lines().enumerate() {
        let content = has_content(line) && (!line.starts_with('%') || open);
        if is_marker(line, "---") || (content && ended) {
            if open || ended {
                starts.push(i as u64 + 1);
            }
            (open, ended) = (true, false);
        } else if is_marker(line, "...") {
            (open, ended) = (false, true);
        } else if content {
            open = true;
        }
    }
    starts
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
        // A leading `---` opens the first document.
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
    fn document_numbers_survive_markers_comments_and_ends() {
        let cases = [
            ("kind: A\n---\nkind: B\n", vec![1, 2]),
            ("---\n---\nkind: A\n---\n", vec![2]),
            ("# c\nkind: A\n...\nkind: B\n", vec![1, 2]),
            ("%YAML 1.2\n---\nkind: A\n---\n\n---\nkind: B\n", vec![1, 3]),
            ("\u{feff}kind: A\n", vec![1]),
        ];
        for (text, want) in cases {
            let got: Vec<usize> = parse_str("f", text).unwrap().iter().map(|d| d.origin.document).collect();
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn hostile_yaml_is_refused_with_a_reason() {
        let keys: String = (0..500).map(|i| format!("  k{i}: v\n")).collect();
        let refs: String = (0..500).map(|i| format!("r{i}: *a\n")).collect();
        let cases = [
            (format!("kind: A\n---\nbase: &a\n{keys}{refs}"), "f, document 2: not valid YAML or JSON: aliases expand to more than 100000 nodes"),
            ("[".repeat(10_000), "f, document 1: not valid YAML or JSON: nested deeper than 128 levels"),
            ("a: .inf\n".to_string(), "f, document 1: not valid YAML or JSON: .inf is not a number Kubernetes accepts"),
            (
                "a: 1\na: 2\n".to_string(),
                "f, document 1: not valid YAML or JSON: duplicate mapping key \"a\": a key may appear once in a mapping (line 2, column 1)",
            ),
            (
                "m: {name: a, name: b}\n".to_string(),
                "f, document 1: not valid YAML or JSON: duplicate mapping key \"name\": a key may appear once in a mapping (line 1",
            ),
        ];
        for (text, want) in cases {
            let err = parse_str("f", &text).unwrap_err().to_string();
            assert!(err.starts_with(want), "{err:?} should start with {want:?}");
            // Nothing of the reader's own advice to its programmer.
            assert!(!err.contains("DuplicateKeyPolicy") && !err.contains("Options"), "{err:?}");
        }
    }

    #[test]
    fn reading_document_by_document_gives_what_reading_the_whole_stream_gives() {
        let whole = |text: &str| {
            let mut out = Vec::new();
            parse_whole("f", text, looks_like_json(text), |d| {
                out.push(d);
                Ok(())
            })
            .map(|()| out)
        };
        let anchored: String = (0..12).map(|i| format!("---\nkind: A\nmetadata: {{name: &n{i} x{i}}}\nspec: *n{i}\n")).collect();
        let cases = [
            "kind: A\n---\nkind: B\n".to_string(),
            "# header\n---\nkind: A\n---\n---\n# c\n---\nkind: B\nitems: [{kind: C}]\n".to_string(),
            "---\nkind: List\nitems: [{kind: A}, {kind: B}]\n--- {kind: C}\n".to_string(),
            "kind: A\ndata: |\n  ---\n  not a marker\n---\nkind: B\n".to_string(),
            "kind: A\n---\nkind: [unclosed\n---\nkind: C\n".to_string(),
            "kind: A\n---\n- a list\n".to_string(),
            "  # an indented comment\n---\nkind: A\n".to_string(),
            anchored,
        ];
        for text in cases {
            let each = parse_str("f", &text).map(|d| d.iter().map(|d| (d.origin.clone(), d.value.clone())).collect::<Vec<_>>()).map_err(|e| e.to_string());
            let all = whole(&text).map(|d| d.iter().map(|d| (d.origin.clone(), d.value.clone())).collect::<Vec<_>>()).map_err(|e| e.to_string());
            assert_eq!(each, all, "{text:?}");
        }
    }

    #[test]
    fn documents_remember_the_line_they_start_on() {
        let cases: [(&str, &[usize]); 6] = [
            ("kind: A\n---\nkind: B\n", &[1, 3]),
            ("# header\n\n---\n# about B\n\nkind: B\nspec: {}\n---\nkind: C\n", &[6, 9]),
            ("--- {kind: A}\n--- # comment\nkind: B\n", &[1, 3]),
            ("---\nkind: List\nitems: [{kind: A}, {kind: B}]\n", &[2, 2]),
            ("%YAML 1.2\n---\nkind: A\n...\n---\n\nkind: B\n", &[3, 7]),
            ("{\"kind\": \"A\"}\n", &[1]),
        ];
        for (text, want) in cases {
            let lines: Vec<usize> = parse_str("f", text).unwrap().iter().map(|d| d.origin.line.expect("a line")).collect();
            assert_eq!(lines, want, "{text:?}");
        }
    }

    #[test]
    fn merge_keys_merge() {
        let docs = parse_str("f", "base: &b {x: 1, y: 2}\nv:\n  <<: *b\n  y: 3\n").unwrap();
        assert_eq!(docs[0].value["v"], serde_json::json!({"x": 1, "y": 3}));
    }

    #[test]
    fn lists_expand_into_items() {
        let docs = parse_str("f.json", r#"{"kind":"List","items":[{"kind":"Pod"},{"kind":"Service"}]}"#).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1].origin, Origin { item: Some(2), line: Some(1), ..Origin::new("f.json", 1) });
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
