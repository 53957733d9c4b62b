//! The JSON reader held to the full one: table cases of what it takes and what it leaves, every
//! JSON file in the repository, and generated documents (with a printed seed to replay), each
//! compared with what the full reader makes of the same text.

use super::*;
use crate::manifest::{parse_str, parse_whole};

/// What the full reader makes of one document (before floats are normalized).
fn full(text: &str) -> Result<Value, String> {
    serde_saphyr::from_str_with_options::<Value>(text, super::super::yaml_options(text.len())).map_err(|e| e.to_string())
}

/// The property every test here pins: whatever this reader returns, the full reader returns too.
fn agrees(text: &str) -> Option<Value> {
    let quick = if fits(text) { value(text, 0) } else { None };
    if let Some(v) = &quick {
        assert_eq!(full(text).as_ref(), Ok(v), "the JSON reader disagrees on {text:?}");
    }
    quick
}

/// A stream read document by document (this reader first) and read whole by the full reader:
/// the same documents, origins and errors.
fn same_as_whole(text: &str) {
    let each = parse_str("f.json", text).map(|d| d.iter().map(|d| (d.origin.clone(), d.value.clone())).collect::<Vec<_>>()).map_err(|e| e.to_string());
    let mut whole = Vec::new();
    let all = parse_whole("f.json", text, true, |d| {
        whole.push((d.origin.clone(), d.value.clone()));
        Ok(())
    })
    .map(|()| whole)
    .map_err(|e| e.to_string());
    assert_eq!(each, all, "{}", &text[..text.len().min(300)]);
}

#[test]
fn common_json_is_read_here_and_as_the_full_reader_reads_it() {
    let cases = [
        r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "labels": {"app": "web"}}}"#,
        r#"{"a":1,"b":-2,"c":true,"d":false,"e":null,"f":[],"g":{},"h":"","i":[1,[2,[3]]]}"#,
        r#"{"n": 9223372036854775807, "m": -9223372036854775808, "z": 0}"#,
        r#"{"s": "quote \" backslash \\ slash \/ controls \b\f\n\r\t \u0001 \u00e9 \u20ac"}"#,
        r#"{"s": "é € 漢字 😀", "é": "key"}"#,
        r#"{"cpu": "100m", "memory": "1.5Gi", "x": "1e3", "y": "true", "z": "null", "w": "0755"}"#,
        "{\r\n  \"a\": [\r\n    1\r\n  ]\r\n}\r\n",
        "  \n{\"a\": 1}\n\n",
        r#"["a", {"b": "c"}]"#,
        r#""just a string""#,
        "null",
        "42",
        r##"{"- a": "b", "#c": "d", "e: f": "g", "[h]": "i", "&j": "*k", "!l": "|m", "?": "%"}"##,
        r#"{"a": "b # c", "d": "--- e", "f": "..."}"#,
    ];
    for text in cases {
        assert!(agrees(text).is_some(), "the JSON reader should take {text:?}");
    }
}

#[test]
fn what_could_read_otherwise_is_left_to_the_full_reader() {
    let deep = format!("{}1{}", "[".repeat(101), "]".repeat(101));
    let long_key = format!("{{\"{}\": 1}}", "k".repeat(1001));
    let cases = [
        r#"{"a": 1.5}"#,
        r#"{"a": 1.0}"#,
        r#"{"a": 1e9}"#,
        r#"{"a": -0}"#,
        r#"{"a": 9223372036854775808}"#,
        r#"{"a": 99999999999999999999}"#,
        r#"{"a": 1, "a": 2}"#,
        r#"{"m": {"b": 1, "b": 2}}"#,
        r#"{"<<": {"a": 1}}"#,
        "{\"a\":\t1}",
        "{\"a\": \"\u{7f}\"}",
        "{\"a\": \"\u{85}\"}",
        "{\"a\": \"\u{ffff}\"}",
        r#"{"a": "\ud83d\ude00"}"#,
        r#"{"a": "\uDC00"}"#,
        r#"{"a": 1} {"b": 2}"#,
        r#"{"a": 1,}"#,
        "{a: 1}",
        "{\"a\": 1} # comment",
        "",
        &deep,
        &long_key,
    ];
    for text in cases {
        assert!(agrees(text).is_none(), "the JSON reader should leave {text:?} to the full reader");
    }
}

#[test]
fn a_json_list_is_handed_out_item_by_item_as_it_is_read_whole() {
    let item = |i: usize| format!(r#"{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "n{i}"}}, "status": {{"allocatable": {{"cpu": "4"}}}}}}"#);
    let items: Vec<String> = (0..50).map(item).collect();
    let items = items.join(",\n");
    let cases = [
        // kind before items (the API server's order), after them (kubectl's: keys sorted)
        format!(r#"{{"kind": "NodeList", "apiVersion": "v1", "metadata": {{"resourceVersion": "1"}}, "items": [{items}]}}"#),
        format!(r#"{{"apiVersion": "v1", "items": [{items}], "kind": "List", "metadata": {{"resourceVersion": ""}}}}"#),
        "{\"kind\": \"List\", \"items\": []}\n---\n{\"kind\": \"Pod\"}\n".to_string(),
        // not a List, or not its shape: read whole, the same
        format!(r#"{{"kind": "Foo", "items": [{items}]}}"#),
        r#"{"kind": "List", "items": 3}"#.to_string(),
        r#"{"kind": "List", "items": null}"#.to_string(),
        r#"{"kind": 3, "items": [{"kind": "Pod"}]}"#.to_string(),
        // an item that is not a mapping: the error after the items before it
        format!(r#"{{"kind": "List", "items": [{items}, "a string"]}}"#),
        // an item the full reader must read (a float), and one it refuses (a key twice)
        format!(r#"{{"kind": "List", "items": [{items}, {{"kind": "Pod", "x": 1.5}}, {}]}}"#, item(99)),
        format!(r#"{{"kind": "List", "items": [{items}, {{"kind": "Pod", "a": 1, "a": 2}}, {}]}}"#, item(99)),
        // the head refused, or broken
        format!(r#"{{"kind": "List", "metadata": {{"a": 1, "a": 2}}, "items": [{items}]}}"#),
        format!(r#"{{"kind": "List", "kind": "List", "items": [{items}]}}"#),
        format!(r#"{{"kind": "List", "items": [{items}]"#),
        format!(r#"{{"kind": "List", "items": [{items}, {{"x": 1.5e400}}]}}"#),
    ];
    for text in &cases {
        same_as_whole(text);
    }
    // Read here, one item at a time.
    let (mut seen, origin) = (0, Origin::new("f", 1));
    let read = super::read(&origin, &cases[1], &mut |d| {
        seen += 1;
        assert_eq!(d.origin.item, Some(seen));
        Ok(())
    });
    assert!(matches!(read, Read::Items(Items::Read)) && seen == 50);
    // A caller that stops the reading stops it at once.
    let mut seen = 0;
    let read = super::read(&origin, &cases[0], &mut |d| {
        seen += 1;
        if seen == 3 {
            return Err(InputError::at(&d.origin, None, "enough"));
        }
        Ok(())
    });
    assert!(matches!(read, Read::Items(Items::Stopped(e)) if e.to_string() == "f, document 1, item 3: enough") && seen == 3);
}

/// Every JSON file in the repository (conformance cases, goldens, recordings).
#[test]
fn every_json_file_in_the_repository_reads_the_same_both_ways() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() && !p.ends_with("target") && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
                walk(&p, out);
            } else if p.extension().and_then(|e| e.to_str()) == Some("json") {
                out.push(p);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["tests", "examples", "engine", "docs"] {
        walk(&root.join(dir), &mut files);
    }
    let (mut documents, mut quick) = (0, 0);
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else { continue };
        if !text.trim_start().starts_with(['{', '[']) {
            continue;
        }
        documents += 1;
        quick += usize::from(agrees(text.strip_prefix('\u{feff}').unwrap_or(&text)).is_some());
        same_as_whole(&text);
    }
    assert!(documents > 10 && quick * 2 > documents, "{quick} of {documents} JSON files read by the JSON reader");
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
}

/// Strings that mean something else unquoted, or hold what escapes and YAML treat specially.
const STRINGS: &[&str] = &[
    "a", "cpu", "100m", "1.5Gi", "true", "null", "~", "0755", "1e3", "-", "- a", "#", "a #b", "&a", "*a", "!a", "|", ">", "%", "@", "`", "? a", ": a", "a: b",
    "[a]", "{a}", "---", "...", "<<", "", " ", "  a  ", "\"", "\\", "/", "\n", "\r\n", "\t", "\u{1}", "\u{0}", "é", "€", "😀", "\u{a0}", "\u{feff}",
    "\u{2028}", "\u{fffd}", "\u{e000}",
];

fn json_string(rng: &mut Rng, out: &mut String) {
    let mut s = String::new();
    for _ in 0..1 + rng.below(3) {
        s.push_str(STRINGS[rng.below(STRINGS.len())]);
    }
    out.push_str(&serde_json::to_string(&s).expect("a string"));
    // Now and then an escape serde_json itself would not write.
    if rng.below(20) == 0 {
        out.insert_str(out.len() - 1, ["\\u00e9", "\\/", "\\u0041", "\\b", "\\f"][rng.below(5)]);
    }
}

fn json_value(rng: &mut Rng, depth: usize, out: &mut String) {
    let ws = |rng: &mut Rng, out: &mut String| out.push_str(["", "", " ", "\n  ", "\r\n"][rng.below(5)]);
    match rng.below(if depth > 4 { 6 } else { 9 }) {
        0 => out.push_str(["true", "false", "null"][rng.below(3)]),
        1 => out
            .push_str(["0", "1", "-1", "42", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "1.5", "1e2", "-0", "10E-1"][rng.below(11)]),
        2..=5 => json_string(rng, out),
        6 => {
            out.push('[');
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                json_value(rng, depth + 1, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..rng.below(5) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                json_string(rng, out);
                out.push(':');
                ws(rng, out);
                json_value(rng, depth + 1, out);
            }
            ws(rng, out);
            out.push('}');
        }
    }
}

#[test]
fn generated_json_reads_the_same_both_ways() {
    let seed = std::env::var("JSON_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1) | 1);
    println!("JSON_SEED={seed}");
    let mut rng = Rng(seed);
    let (mut tried, mut quick) = (0, 0);
    for _ in 0..20_000 {
        let mut doc = String::new();
        json_value(&mut rng, 0, &mut doc);
        tried += 1;
        match std::panic::catch_unwind(|| agrees(&doc)) {
            Ok(v) => quick += usize::from(v.is_some()),
            Err(_) => panic!("JSON_SEED={seed}: disagreement on {doc:?}"),
        }
    }
    println!("{quick} of {tried} generated documents read by the JSON reader");
    assert!(quick * 10 > tried * 3, "only {quick} of {tried} generated documents were read by the JSON reader");
}
