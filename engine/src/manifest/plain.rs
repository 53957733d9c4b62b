//! A quick reader for the plain YAML nearly every manifest is written in: block mappings and
//! sequences, one-line flow collections, one-line scalars, comments. Anything else (anchors,
//! tags, block and multi-line scalars, escapes, tabs, non-ASCII text, floats, booleans, nulls
//! written out, octal-looking numbers, duplicate keys, odd indentation) makes it answer `None`,
//! and the full YAML reader reads the document instead, with its errors and its budgets.
//!
//! So it never decides anything the full reader would decide differently: every value it
//! returns is the value the full reader returns for the same text, which the differential
//! tests (tables, every YAML file in the repository, generated documents with printed seeds)
//! hold it to. It only makes the common case fast: it reads about ten times as fast.
//!
//! ```
//! # use kubectl_quota_engine::manifest::plain::read;
//! let v = read("kind: Pod\nspec:\n  containers:\n  - {name: a, resources: {limits: {cpu: 100m}}}\n").unwrap();
//! assert_eq!(v["spec"]["containers"][0]["resources"]["limits"]["cpu"], "100m");
//! assert!(read("kind: Pod\nlabels: &l {a: b}\n").is_none()); // an anchor: the full reader's job
//! ```
//!
//! Why one file of this length: a reader is one state machine; splitting its states
//! across files would hide which input each one accepts. Its tests compare it with the full
//! reader on every shape it claims.

use serde_json::{Map, Value};

/// Nesting this reader takes on; deeper documents go to the full reader (whose own limit,
/// [`super::MAX_DEPTH`], is higher, so nothing it refuses is accepted here).
const MAX_DEPTH: usize = 64;

/// One document's text (a `---` line may open it) as JSON, or `None` when the text is not in
/// the plain subset. A document with no content is `Some(Null)`, as the full reader reads it.
pub fn read(text: &str) -> Option<Value> {
    // Tabs, carriage returns, other control characters and non-ASCII text all have rules of
    // their own (indentation, line breaks, printable sets): not this reader's.
    if text.bytes().any(|b| (b < 0x20 && b != b'\n') || b >= 0x7f) {
        return None;
    }
    let mut lines = Vec::new();
    for (number, raw) in text.split('\n').enumerate() {
        let content = raw.trim_start_matches(' ');
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        if number == 0 && raw.starts_with("---") {
            // The document's own start marker: nothing may follow it but a comment.
            let after = raw[3..].trim_start_matches(' ');
            if (after.is_empty() || after.starts_with('#')) && (raw.len() == 3 || raw.as_bytes()[3] == b' ') {
                continue;
            }
            return None;
        }
        lines.push(Line { indent: raw.len() - content.len(), text: content });
    }
    let mut reader = Reader { lines, at: 0, depth: 0 };
    let Some(first) = reader.lines.first() else { return Some(Value::Null) };
    let value = reader.node(first.indent)?;
    (reader.at == reader.lines.len()).then_some(value)
}

/// A line with content: its indentation and the text after it.
#[derive(Clone, Copy)]
struct Line<'a> {
    indent: usize,
    text: &'a str,
}

struct Reader<'a> {
    lines: Vec<Line<'a>>,
    at: usize,
    depth: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<Line<'a>> {
        self.lines.get(self.at).copied()
    }

    /// `read` one level deeper, or `None` past [`MAX_DEPTH`].
    fn deeper(&mut self, read: impl FnOnce(&mut Self) -> Option<Value>) -> Option<Value> {
        self.depth += 1;
        let value = if self.depth > MAX_DEPTH { None } else { read(self) };
        self.depth -= 1;
        value
    }

    /// The block node whose first line is the current one, at `indent`.
    fn node(&mut self, indent: usize) -> Option<Value> {
        let line = self.peek()?;
        if is_item(line.text) {
            self.deeper(|r| r.sequence(indent))
        } else if entry(line.text).is_some() {
            self.deeper(|r| r.mapping(indent))
        } else {
            None // a scalar on a line of its own may go on over several lines
        }
    }

    /// A block mapping whose entries start at `indent`.
    fn mapping(&mut self, indent: usize) -> Option<Value> {
        let mut map = Map::new();
        while let Some(line) = self.peek().filter(|l| l.indent == indent) {
            if is_item(line.text) {
                return None; // an item where a key belongs
            }
            let (key, rest) = entry(line.text)?;
            self.at += 1;
            let value = if is_empty(rest) { self.nested(indent, true) } else { self.inline(indent, rest) }?;
            if map.insert(key, value).is_some() {
                return None; // a duplicate key: the full reader names it
            }
        }
        self.ends_at(indent).then_some(Value::Object(map))
    }

    /// A block sequence whose `-` are at `indent`.
    fn sequence(&mut self, indent: usize) -> Option<Value> {
        let mut items = Vec::new();
        while let Some(line) = self.peek().filter(|l| l.indent == indent && is_item(l.text)) {
            let after = &line.text[1..];
            let rest = after.trim_start_matches(' ');
            let item = if is_empty(rest) {
                self.at += 1;
                self.nested(indent, false)?
            } else if is_item(rest) {
                return None; // `- - a`: a sequence in a sequence on one line
            } else if entry(rest).is_some() {
                // `- key: value`: a mapping whose first entry shares the item's line.
                let column = indent + 1 + (after.len() - rest.len());
                self.lines[self.at] = Line { indent: column, text: rest };
                self.deeper(|r| r.mapping(column))?
            } else {
                self.at += 1;
                self.inline(indent, rest)?
            };
            items.push(item);
        }
        // A key may follow a sequence at the key's own indentation (`containers:` after
        // `initContainers:` and its items); whoever holds that indentation judges the line.
        self.peek().is_none_or(|next| next.indent <= indent).then_some(Value::Array(items))
    }

    /// The value of a key or item with nothing after it on its line: a block node on the next
    /// lines (a sequence may sit at the key's own indentation), or null.
    fn nested(&mut self, indent: usize, is_key: bool) -> Option<Value> {
        match self.peek() {
            Some(next) if next.indent > indent => self.node(next.indent),
            Some(next) if is_key && next.indent == indent && is_item(next.text) => self.deeper(|r| r.sequence(indent)),
            _ => Some(Value::Null),
        }
    }

    /// A value on the same line as its key or `-`, which must end there.
    fn inline(&mut self, indent: usize, text: &str) -> Option<Value> {
        let value = match text.as_bytes()[0] {
            b'{' | b'[' => {
                let mut flow = Flow { text, at: 0, depth: self.depth };
                let v = flow.node()?;
                is_empty(text[flow.at..].trim_start_matches(' ')).then_some(())?;
                (flow.at == text.len() || text.as_bytes()[flow.at] == b' ').then_some(v)?
            }
            b'"' | b'\'' => {
                let (s, used) = quoted(text)?;
                let after = &text[used..];
                (after.is_empty() || after.starts_with(' ') && is_empty(after.trim_start_matches(' '))).then_some(Value::String(s))?
            }
            _ => {
                let s = text.find(" #").map_or(text, |i| &text[..i]).trim_end_matches(' ');
                if s.contains(": ") || s.ends_with(':') {
                    return None;
                }
                scalar(s)?
            }
        };
        // A more indented line after a one-line value would continue it, or be an error.
        self.peek().is_none_or(|next| next.indent <= indent).then_some(value)
    }

    /// After a block collection at `indent`: the next line must belong to an outer one.
    fn ends_at(&self, indent: usize) -> bool {
        self.peek().is_none_or(|next| next.indent < indent)
    }
}

/// A one-line flow collection (`{a: b, c: [d]}`), read from `text[at..]`.
struct Flow<'a> {
    text: &'a str,
    at: usize,
    depth: usize,
}

impl Flow<'_> {
    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn spaces(&mut self) {
        while self.byte() == Some(b' ') {
            self.at += 1;
        }
    }

    fn node(&mut self) -> Option<Value> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let value = match self.byte()? {
            b'{' => self.collection(b'}', |f| {
                let key = f.key()?;
                f.spaces();
                Some((Some(key), f.node()?))
            }),
            b'[' => self.collection(b']', |f| Some((None, f.node()?))),
            b'"' | b'\'' => {
                let (s, used) = quoted(&self.text[self.at..])?;
                self.at += used;
                Some(Value::String(s))
            }
            _ => {
                let rest = &self.text[self.at..];
                let end = rest.find([',', ']', '}']).unwrap_or(rest.len());
                let s = rest[..end].trim_end_matches(' ');
                if s.contains(": ") || s.ends_with(':') || s.contains(" #") || s.contains(['[', '{']) {
                    return None;
                }
                self.at += s.len();
                scalar(s)
            }
        };
        self.depth -= 1;
        value
    }

    /// `{...}` or `[...]`: entries separated by `, `; no trailing comma, no empty entry.
    fn collection(&mut self, close: u8, mut entry: impl FnMut(&mut Self) -> Option<(Option<String>, Value)>) -> Option<Value> {
        self.at += 1;
        self.spaces();
        let (mut map, mut items) = (Map::new(), Vec::new());
        if self.byte() != Some(close) {
            loop {
                match entry(self)? {
                    (Some(key), value) => {
                        if map.insert(key, value).is_some() {
                            return None;
                        }
                    }
                    (None, value) => items.push(value),
                }
                self.spaces();
                match self.byte()? {
                    b',' => {
                        self.at += 1;
                        self.spaces();
                        if self.byte()? == close {
                            return None; // a trailing comma
                        }
                    }
                    b if b == close => break,
                    _ => return None,
                }
            }
        }
        self.at += 1;
        Some(if close == b'}' { Value::Object(map) } else { Value::Array(items) })
    }

    /// A flow mapping's key and its `: `.
    fn key(&mut self) -> Option<String> {
        let rest = &self.text[self.at..];
        let (key, used) = if rest.starts_with(['"', '\'']) { quoted_key(rest)? } else { plain_key(rest)? };
        rest[used..].starts_with(": ").then_some(())?;
        self.at += used + 2;
        Some(key)
    }
}

/// Whether a line is a block sequence item (`-` alone or before a space).
fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// Nothing, or only a comment.
fn is_empty(text: &str) -> bool {
    text.is_empty() || text.starts_with('#')
}

/// `key: rest` or `key:` — `None` when the line is not a mapping entry this reader takes.
fn entry(text: &str) -> Option<(String, &str)> {
    let (key, used) = if text.starts_with(['"', '\'']) { quoted_key(text)? } else { plain_key(text)? };
    let rest = text[used..].strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    Some((key, rest.trim_start_matches(' ')))
}

/// A quoted key; `<<` is left to the full reader (merge keys are its business).
fn quoted_key(text: &str) -> Option<(String, usize)> {
    quoted(text).filter(|(key, _)| !key.contains('<'))
}

/// A plain key of name characters (`app.kubernetes.io/name`, `cpu`, `0`) and its length.
/// `null` in any case is left to the full reader (it refuses a null key).
fn plain_key(text: &str) -> Option<(String, usize)> {
    let len = text.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b'-')).count();
    let key = &text[..len];
    let first = *key.as_bytes().first()?;
    if !(first.is_ascii_alphanumeric() || first == b'_' || first == b'/') || key.eq_ignore_ascii_case("null") {
        return None;
    }
    Some((key.to_string(), len))
}

/// A one-line quoted scalar at the start of `text` and the bytes it takes: single quotes with
/// `''` for a quote, or double quotes with no escapes.
fn quoted(text: &str) -> Option<(String, usize)> {
    let quote = text.as_bytes()[0];
    let body = &text[1..];
    if quote == b'"' {
        let end = body.find('"')?;
        return (!body[..end].contains('\\')).then(|| (body[..end].to_string(), end + 2));
    }
    let mut out = String::new();
    let mut at = 0;
    loop {
        let end = at + body[at..].find('\'')?;
        out.push_str(&body[at..end]);
        if body[end + 1..].starts_with('\'') {
            out.push('\'');
            at = end + 2;
        } else {
            return Some((out, end + 2));
        }
    }
}

/// Words the full reader reads as booleans or null in some spelling.
const NOT_STRINGS: [&str; 9] = ["true", "false", "yes", "no", "on", "off", "y", "n", "null"];

/// A plain scalar this reader is sure of: text starting with a letter or `/` that is not a
/// boolean or null word, a whole number without a leading zero, or a number (whole, or with
/// a fraction) followed by letters that cannot start an exponent (`100m`, `64Mi`, `1.5Gi`).
fn scalar(s: &str) -> Option<Value> {
    let bytes = s.as_bytes();
    let first = *bytes.first()?;
    if first.is_ascii_alphabetic() {
        return (!NOT_STRINGS.iter().any(|w| s.eq_ignore_ascii_case(w))).then(|| Value::String(s.to_string()));
    }
    if first == b'/' {
        return Some(Value::String(s.to_string()));
    }
    if s == "0" {
        return Some(Value::from(0));
    }
    if !first.is_ascii_digit() {
        return None;
    }
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let mut suffix = &bytes[digits..];
    if suffix.is_empty() {
        return s.parse::<i64>().ok().filter(|_| first != b'0' && digits <= 18).map(Value::from);
    }
    // `1.5Gi`: a fraction is fine before a unit (without one it is a float).
    if let Some(fraction) = suffix.strip_prefix(b".") {
        let decimals = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        if decimals == 0 {
            return None;
        }
        suffix = &fraction[decimals..];
    } else if first == b'0' {
        return None; // `0x1F`, `0o17`, `0b101`
    }
    let unit = !suffix.is_empty() && suffix.iter().all(u8::is_ascii_alphabetic) && !matches!(suffix[0], b'e' | b'E');
    unit.then(|| Value::String(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the full reader makes of one document (before floats are normalized).
    fn full(text: &str) -> Result<Value, String> {
        serde_saphyr::from_str_with_options::<Value>(text, super::super::yaml_options(text.len())).map_err(|e| e.to_string())
    }

    /// The property every test here pins: whatever this reader returns, the full reader returns too.
    fn agrees(text: &str) -> Option<Value> {
        let quick = read(text);
        if let Some(v) = &quick {
            assert_eq!(full(text).as_ref(), Ok(v), "plain reader disagrees on {text:?}");
        }
        quick
    }

    #[test]
    fn common_manifest_shapes_are_read_here_and_as_the_full_reader_reads_them() {
        let cases = [
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels: {app: web, tier: \"1\"}\n",
            "---\nkind: Pod\n",
            "--- # comment\nkind: Pod\n",
            "spec:\n  containers:\n  - name: a\n    image: nginx:1.19\n    resources:\n      limits: {cpu: 100m, memory: 64Mi}\n  - name: b\n  initContainers:\n  - {name: i, image: busybox}\n",
            "spec:\n  containers:\n    - name: a\n      ports:\n      - containerPort: 80\n        protocol: TCP\n",
            "spec:\n  replicas: 3\n  hard: {pods: \"10\", requests.cpu: '2', count/deployments.apps: 5}\n",
            "a: 'it''s'\nb: \"x y\"\nc: [a, b, {c: d}]\nd: []\ne: {}\nf:\ng: /bin/sh\n",
            "# leading comment\nkind: Pod # trailing\n\n  # indented comment\nmetadata: {name: a}\n",
            "  kind: Pod\n  spec: {}\n",
            "a:\n-\n- b\n-   c: d\n    e: f\n",
            "true: 1\ny: 2\n0: 3\n1e3: 4\n",
            "a: 922337203685477580\nb: 0\nc: 1Ki\nd: 1.5Gi\ne: 0.25Gi\n",
            "",
            "# only a comment\n",
        ];
        for text in cases {
            assert!(agrees(text).is_some(), "the plain reader should take {text:?}");
        }
    }

    #[test]
    fn everything_else_is_left_to_the_full_reader() {
        let cases = [
            "a: &x 1\nb: *x\n",
            "a: !!str 3\n",
            "a: |\n  text\n",
            "a: >-\n  text\n",
            "a: b\n  continued\n",
            "a: \"multi\n  line\"\n",
            "a: \"esc\\n\"\n",
            "a:\tb\n",
            "a: b\r\n",
            "a: é\n",
            "a: 1.5\n",
            "a: 0.5\n",
            "a: 1.5e3\n",
            "a: 0.x\n",
            "a: 1e3\n",
            "a: 0755\n",
            "a: 08\n",
            "a: -3\n",
            "a: .inf\n",
            "a: true\n",
            "a: No\n",
            "a: null\n",
            "a: ~\n",
            "null: 1\n",
            "<<: {a: 1}\n",
            "a: 1\na: 2\n",
            "a: {b: 1, b: 2}\n",
            "a: {b: 1,}\n",
            "a: [b,]\n",
            "a: b: c\n",
            "a: [b\n  ]\n",
            "- - a\n",
            "? a\n: b\n",
            "a:\n  b: 1\n c: 2\n",
            "a:\n  - b\n - c\n",
            "kind: A\nb\n",
            "--- kind: A\n",
            "a: 99999999999999999999\n",
            "a: 10Ei\n",
            "a: {b: c{d}}\n",
            "a: {b: c #d}\n",
            "a: \"b\"c\n",
            "a: {b: 1}x\n",
        ];
        for text in cases {
            assert!(agrees(text).is_none(), "the plain reader should leave {text:?} to the full reader");
        }
    }

    /// Every YAML and JSON file in the repository (conformance cases, examples, goldens),
    /// document by document.
    #[test]
    fn every_manifest_in_the_repository_reads_the_same_both_ways() {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = entry.path();
                if p.is_dir() && !p.ends_with("target") && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
                    walk(&p, out);
                } else if matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json")) {
                    out.push(p);
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for dir in ["tests", "examples", "engine"] {
            walk(&root.join(dir), &mut files);
        }
        let (mut documents, mut quick) = (0, 0);
        for f in &files {
            let Ok(text) = std::fs::read_to_string(f) else { continue };
            for (_, chunk) in super::super::plain_documents(&text).unwrap_or_default() {
                documents += 1;
                quick += usize::from(agrees(chunk).is_some());
            }
        }
        assert!(documents > 300 && quick * 2 > documents, "{quick} of {documents} documents read by the plain reader");
    }

    /// A small deterministic generator (xorshift), so a failure prints a seed to replay.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        /// Mostly one of the first `common`, now and then any.
        fn pick<'a>(&mut self, from: &[&'a str], common: usize) -> &'a str {
            let n = if self.below(30) == 0 { from.len() } else { common };
            from[self.below(n)]
        }
    }

    /// Keys and scalars: the first ones are what manifests hold, the rest what trips readers up.
    const KEYS: &[&str] = &[
        "a",
        "b",
        "cpu",
        "b-c",
        "app.kubernetes.io/name",
        "_x",
        "0",
        "1e3",
        "true",
        "y",
        "null",
        "Null",
        "~",
        "<<",
        "\"q\"",
        "'s'",
        "\"<<\"",
        "-a",
        ".a",
        "x y",
        "a#b",
        "\"\"",
        "k:",
    ];
    const COMMON_KEYS: usize = 10;
    const COMMON_SCALARS: usize = 14;
    const SCALARS: &[&str] = &[
        "v",
        "100m",
        "64Mi",
        "1Gi",
        "12",
        "0",
        "a b",
        "/p",
        "a#b",
        "a:b",
        "'it''s'",
        "\"it's\"",
        "1.5Gi",
        "0.5Gi",
        "1.5",
        "0.5",
        "1.5e3",
        "1.5E3Mi",
        "1.5Ei",
        "0.",
        "1.Gi",
        "00.5Gi",
        "0x1F.5",
        "1.5.5Gi",
        "10Ei",
        "1.5Gi",
        "1e3",
        "1E3",
        "1e",
        "7b",
        "0x1F",
        "0o17",
        "0755",
        "08",
        "0",
        "00",
        "12",
        "-3",
        "+1",
        "1_000",
        "1:30",
        "1.",
        "1.5",
        ".5",
        "9223372036854775807",
        "99999999999999999999",
        "true",
        "tRuE",
        "yes",
        "No",
        "on",
        "y",
        "null",
        "nULL",
        "~",
        "nan",
        "inf",
        ".inf",
        ".nan",
        "a b",
        "a #b",
        "a#b",
        "a: b",
        "a:b",
        "x,y",
        "[x",
        "{x",
        "x]",
        "'q'",
        "\"q\"",
        "\"a\\\"b\"",
        "'it''s'",
        "\"it's\"",
        "|",
        ">",
        "&a x",
        "*a",
        "!!str 3",
        "@x",
        "`x",
        "%x",
        "/p",
        "/",
        "",
        "2021-01-01",
        "é",
        "a\tb",
        "?x",
        ":x",
        "-",
        "- x",
        "a :",
        "x\"y",
        "'unclosed",
        "\"unclosed",
        "registry.example.com/app:1",
    ];

    /// A random node rendered in block or flow style, with random indentation steps, comments,
    /// blank lines and trailing spaces.
    fn node(rng: &mut Rng, depth: usize, indent: usize, out: &mut String, flow: bool) {
        let kind = if depth > 4 { 0 } else { rng.below(4) };
        let step = 1 + rng.below(3);
        match kind {
            1 if flow || rng.below(3) == 0 => {
                out.push('{');
                for i in 0..rng.below(4) {
                    out.push_str(if i > 0 { ", " } else { "" });
                    out.push_str(rng.pick(KEYS, COMMON_KEYS));
                    out.push_str(": ");
                    node(rng, depth + 1, indent, out, true);
                }
                out.push('}');
            }
            2 if flow || rng.below(3) == 0 => {
                out.push('[');
                for i in 0..rng.below(4) {
                    out.push_str(if i > 0 { ", " } else { "" });
                    node(rng, depth + 1, indent, out, true);
                }
                out.push(']');
            }
            1 => {
                for _ in 0..1 + rng.below(4) {
                    out.push('\n');
                    out.push_str(&" ".repeat(indent + step));
                    out.push_str(rng.pick(KEYS, COMMON_KEYS));
                    out.push_str(if rng.below(30) == 0 { ":" } else { ": " });
                    node(rng, depth + 1, indent + step, out, false);
                }
            }
            2 => {
                let at = if rng.below(2) == 0 { indent } else { indent + step };
                for _ in 0..1 + rng.below(3) {
                    out.push('\n');
                    out.push_str(&" ".repeat(at));
                    out.push_str(if rng.below(30) == 0 { "-" } else { "- " });
                    if rng.below(3) == 0 {
                        out.push_str(rng.pick(KEYS, COMMON_KEYS));
                        out.push_str(": ");
                    }
                    node(rng, depth + 1, at + 2, out, false);
                }
            }
            _ => {
                out.push_str(rng.pick(SCALARS, COMMON_SCALARS));
                match rng.below(8) {
                    0 if !flow => out.push_str(" # c"),
                    1 => out.push_str("  "),
                    2 if !flow => out.push_str("\n\n# c"),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn generated_documents_read_the_same_both_ways() {
        let seed = std::env::var("PLAIN_YAML_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1) | 1);
        println!("PLAIN_YAML_SEED={seed}");
        let mut rng = Rng(seed);
        let (mut tried, mut quick) = (0, 0);
        for _ in 0..20_000 {
            let mut doc = String::new();
            for _ in 0..1 + rng.below(4) {
                doc.push_str(rng.pick(KEYS, COMMON_KEYS));
                doc.push_str(": ");
                node(&mut rng, 0, 0, &mut doc, false);
                doc.push('\n');
            }
            // Now and then a line moves by one column, or goes.
            if rng.below(8) == 0 {
                let mut lines: Vec<String> = doc.lines().map(str::to_string).collect();
                let i = rng.below(lines.len());
                match rng.below(3) {
                    0 => lines[i].insert(0, ' '),
                    1 => drop(lines.remove(i)),
                    _ => lines[i] = lines[i].trim_start_matches(' ').to_string(),
                }
                doc = lines.join("\n") + "\n";
            }
            tried += 1;
            let result = std::panic::catch_unwind(|| agrees(&doc));
            match result {
                Ok(v) => quick += usize::from(v.is_some()),
                Err(_) => panic!("PLAIN_YAML_SEED={seed}: disagreement on {doc:?}"),
            }
        }
        println!("{quick} of {tried} generated documents read by the plain reader");
        assert!(quick * 10 > tried * 3, "only {quick} of {tried} generated documents were read by the plain reader");
    }
}
