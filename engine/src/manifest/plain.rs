//! A quick reader for the plain YAML nearly every manifest is written in: block mappings and
//! sequences, one-line flow collections, one-line scalars (`true`, `false` and `null` among
//! them), comments. Anything else (anchors, tags, block and multi-line scalars, escapes, tabs,
//! non-ASCII text, floats, booleans and nulls in other spellings, octal-looking numbers,
//! duplicate keys, odd indentation) makes it answer `None`,
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
//! across files would hide which input each one accepts. Its tests (`plain/tests.rs`) compare
//! it with the full reader on every shape it claims.

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

/// A plain scalar this reader is sure of: `true`, `false` and `null` as written in every
/// YAML (and JSON), text starting with a letter or `/` that is not a boolean or null word in
/// another spelling, a whole number without a leading zero, or a number (whole, or with a
/// fraction) followed by letters that cannot start an exponent (`100m`, `64Mi`, `1.5Gi`).
fn scalar(s: &str) -> Option<Value> {
    match s {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        "null" => return Some(Value::Null),
        _ => {}
    }
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
mod tests;
