//! Large documents, handled from their text: one surely larger than the API server reads is
//! named only (the server refuses it before decoding), and a large block List is cut into its
//! items, each read alone, so only one item's JSON is held at a time.

use serde_json::Value;

use super::{has_content, is_marker, normalize_floats, plain, yaml_options, Document, InputError, Origin, MAX_REQUEST_BODY_BYTES};

/// What names a document (its `apiVersion`, `kind` and `metadata`) when its text alone shows
/// that its JSON is larger than [`MAX_REQUEST_BODY_BYTES`] ([`json_len_at_least`]); `None`
/// otherwise, and for a List (whose items are sent one by one).
pub(super) fn too_large_for_a_request(chunk: &str, json: bool) -> Option<Value> {
    if json || chunk.len() <= MAX_REQUEST_BODY_BYTES || json_len_at_least(chunk)? <= MAX_REQUEST_BODY_BYTES {
        return None;
    }
    // The top-level apiVersion, kind and metadata lines (metadata with its indented block).
    let mut head = String::new();
    let mut in_metadata = false;
    for line in chunk.split_inclusive('\n') {
        if line.starts_with(' ') || !has_content(line) {
            if in_metadata {
                head.push_str(line);
            }
            continue;
        }
        in_metadata = line.starts_with("metadata:");
        if in_metadata || line.starts_with("apiVersion:") || line.starts_with("kind:") {
            head.push_str(line);
        }
    }
    let named = plain::read(&head)?;
    let kind = named.get("kind")?.as_str()?;
    (named.get("apiVersion").is_some_and(Value::is_string) && !kind.ends_with("List")).then_some(named)
}

/// A lower bound of the length of a YAML document's compact JSON, from its text: each
/// character of a plain scalar or key appears in the JSON, each flow bracket and comma too,
/// each `- ` item becomes a bracket or a comma; a number may shrink (`1.50`, `0x1F`), so it
/// counts one. `None` for text with what could make the JSON shorter in other ways (anchors
/// and aliases, tags, block scalars, escapes, `''`, merge keys, comments after content,
/// directives): such a document is measured once read.
fn json_len_at_least(text: &str) -> Option<usize> {
    if text.contains(['&', '*', '!', '|', '>', '\\', '%', '<', '\t', '\r']) || text.contains("''") || text.contains(" #") {
        return None;
    }
    let mut n = 0;
    for line in text.lines() {
        let t = line.trim_start();
        if t.is_empty() || t.starts_with('#') || is_marker(line, "---") {
            continue;
        }
        let flow = |c: char| matches!(c, ',' | '{' | '}' | '[' | ']');
        n += t.chars().filter(|c| flow(*c)).count();
        for token in t.split(|c: char| c == ' ' || flow(c)).filter(|s| !s.is_empty()) {
            let starts_number = |s: &str| s.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '+');
            let number = starts_number(token) || (token.len() > 1 && token.starts_with('-') && starts_number(&token[1..]));
            n += if number { 1 } else { token.len() };
        }
    }
    Some(n)
}

/// A document this large that is a block `kind: List` is read item by item.
const LIST_READ_BY_ITEM: usize = 256 << 10;

/// What [`list_items`] did.
pub(super) enum Items {
    /// Not a List it reads item by item (nothing handed out): read the document whole.
    NotAList,
    /// Every item handed out.
    Read,
    /// `each` stopped the parse.
    Stopped(InputError),
    /// An item could not be read after this many were handed out: the whole stream's parse
    /// says why.
    Failed(usize),
}

/// Reads a large block List (`items:` at the start of a line, each item a `- ` at the start
/// of a line, as kubectl and `snapshot` write them) one item at a time, each item's text
/// read alone: only one item's JSON is held at a time. Only a document without anchors is
/// cut (an alias in one item could name an anchor in another).
pub(super) fn list_items(origin: &Origin, chunk: &str, json: bool, each: &mut impl FnMut(Document) -> Result<(), InputError>) -> Items {
    if chunk.len() < LIST_READ_BY_ITEM || json || chunk.contains('&') {
        return Items::NotAList;
    }
    let Some((head, items)) = cut_list(chunk) else { return Items::NotAList };
    let read = |t: &str| plain::read(t).map_or_else(|| serde_saphyr::from_str_with_options::<Value>(t, yaml_options(t.len())).ok(), Some);
    let Some(head) = read(&head) else { return Items::NotAList };
    let is_list = head.get("kind").and_then(Value::as_str).is_some_and(|k| k == "List" || k.ends_with("List")) && head.get("items").is_none();
    if !is_list {
        return Items::NotAList;
    }
    for (j, item_text) in items.into_iter().enumerate() {
        // `- ...` alone is a sequence of one item.
        let Some(Value::Array(mut one)) = read(item_text) else { return Items::Failed(j) };
        let (Some(mut item), true) = (one.pop(), one.is_empty()) else { return Items::Failed(j) };
        normalize_floats(&mut item, json);
        let o = Origin { item: Some(j + 1), ..origin.clone() };
        if !item.is_object() {
            return Items::Stopped(InputError::at(&o, None, "a list item must be a mapping"));
        }
        if let Err(e) = each(Document { origin: o, value: item }) {
            return Items::Stopped(e);
        }
    }
    Items::Read
}

/// A block List cut into its text without the items and each item's text (`- ...` and the
/// indented lines after it); `None` unless `items:` is a line of its own at the start of a
/// line and every item starts with `- ` there.
fn cut_list(chunk: &str) -> Option<(String, Vec<&str>)> {
    let mut offset = 0;
    let mut at = None;
    for line in chunk.split_inclusive('\n') {
        if line.trim_end() == "items:" {
            if at.is_some() {
                return None;
            }
            at = Some((offset, offset + line.len()));
        }
        offset += line.len();
    }
    let (items_line, start) = at?;
    let mut items = Vec::new();
    let (mut item_start, mut end) = (None, start);
    for line in chunk[start..].split_inclusive('\n') {
        let top = !line.starts_with(' ') && has_content(line);
        if line.starts_with("- ") || line.trim_end() == "-" {
            if let Some(s) = item_start {
                items.push(&chunk[s..end]);
            }
            item_start = Some(end);
        } else if top {
            break;
        } else if item_start.is_none() && has_content(line) {
            // Content before the first item (an indented list): not this shape.
            return None;
        }
        end += line.len();
    }
    if let Some(s) = item_start {
        items.push(&chunk[s..end]);
    }
    if items.is_empty() {
        return None;
    }
    let head = format!("{}{}", &chunk[..items_line], &chunk[end..]);
    Some((head, items))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{parse_str, parse_whole};

    #[test]
    fn a_large_list_is_read_item_by_item_as_it_is_read_whole() {
        let item = |i: usize| {
            format!("- apiVersion: v1\n  kind: Node\n  metadata: {{name: n{i}}}\n  # a comment\n\n  status:\n    allocatable: {{cpu: '4', ratio: 1.5}}\n")
        };
        let items: String = (0..2500).map(item).collect();
        let cases = [
            format!("apiVersion: v1\nitems:\n{items}kind: List\nmetadata: {{resourceVersion: ''}}\n"),
            format!("---\nkind: NodeList\nitems:\n{items}---\nkind: Pod\n"),
            // Not this shape, or not a List: read whole, the same.
            format!("kind: Foo\nitems:\n{items}"),
            format!("kind: List\nitems:\n{}", items.replace("\n- ", "\n  - ").replacen("- ", "  - ", 1)),
            // A broken item: the whole stream's error.
            format!("kind: List\nitems:\n{items}- {{unclosed\n"),
            format!("kind: List\nitems:\n{items}- just a string\n"),
        ];
        for text in &cases {
            assert!(text.len() > LIST_READ_BY_ITEM);
            let each = parse_str("f", text).map(|d| d.iter().map(|d| (d.origin.clone(), d.value.clone())).collect::<Vec<_>>()).map_err(|e| e.to_string());
            let mut whole = Vec::new();
            let all = parse_whole("f", text, false, |d| {
                whole.push((d.origin.clone(), d.value.clone()));
                Ok(())
            })
            .map(|()| whole)
            .map_err(|e| e.to_string());
            assert_eq!(each, all, "{}", &text[..200]);
        }
        assert!(cut_list(&format!("kind: List\nitems:\n{}", item(1))).is_some());
        // The first shape is read item by item: one item's JSON at a time.
        let (mut seen, origin) = (0, Origin::new("f", 1));
        let read = list_items(&origin, &cases[0], false, &mut |_| {
            seen += 1;
            Ok(())
        });
        assert!(matches!(read, Items::Read) && seen == 2500);
    }

    #[test]
    fn a_document_surely_over_the_request_limit_is_named_only() {
        let containers: String = (0..200_000).map(|i| format!("  - {{name: c{i}, image: x}}\n")).collect();
        let big = format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\n  namespace: a\nspec:\n  containers:\n{containers}");
        let docs = parse_str("f", &format!("{big}---\nkind: B\n")).unwrap();
        assert!(docs[0].origin.too_large && !docs[1].origin.too_large);
        assert_eq!(docs[0].value, serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "a"}}));
        // The bound never passes the JSON's real length; text that could shrink is not judged.
        let whole: Value = plain::read(&big).unwrap();
        let real = serde_json::to_string(&whole).unwrap().len();
        assert!(json_len_at_least(&big).unwrap() <= real);
        for odd in ["a: &x b\nc: *x\n", "a: |\n  b\n", "a: 'it''s'\n", "a: b # c\n", "<<: {a: b}\n", "a: !!str b\n"] {
            assert_eq!(json_len_at_least(odd), None, "{odd:?}");
        }
        let cases = [("a: 1.500\n", 3), ("- 0x1F\n- -1.0\n", 4), ("a: {b: c, d: [e, f]}\n", 15), ("key:\n", 4)];
        for (text, at_least) in cases {
            let value: Value = serde_saphyr::from_str(text).unwrap();
            let real = serde_json::to_string(&value).unwrap().len();
            assert_eq!(json_len_at_least(text), Some(at_least), "{text:?}");
            assert!(at_least <= real, "{text:?}: {at_least} > {real}");
        }
        // Under the limit, a List, or JSON text: read as always.
        let small = format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: s}}\nspec:\n  containers:\n{}", &containers[..100_000]);
        assert!(!parse_str("f", &small).unwrap()[0].origin.too_large);
    }
}
