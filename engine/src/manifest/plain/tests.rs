//! The quick reader held to the full one: table cases of what it takes and what it leaves,
//! every YAML file in the repository, and generated documents (with a printed seed to replay),
//! each compared document by document with what the full reader makes of it.

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
        "spec: {unschedulable: true, paused: false}\nstatus:\n  ready: true\n  x: null\n  l: [true, false, null]\n",
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
        "a: True\n",
        "a: No\n",
        "a: NULL\n",
        "a: Null\n",
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
        for (_, _, chunk) in super::super::plain_documents(&text).unwrap_or_default() {
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
const COMMON_SCALARS: usize = 16;
const SCALARS: &[&str] = &[
    "v",
    "true",
    "false",
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
