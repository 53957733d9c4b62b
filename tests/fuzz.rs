//! Property tests: generated and mutated manifests, state files and quantities go through
//! parse -> decode -> check -> render (the library), and a handful through the binary. None
//! may panic; each runs under a deadline that fails the test (a hang is caught, not waited
//! for); the reports must agree with the exit status (the JSON's outcomes), and the binary's
//! status is one the exit-code rule documents.
//!
//! Seeds are the conformance cases' manifests and states; mutations insert, delete and
//! replace bytes with ones that matter to YAML and to names (indentation, anchors, quotes,
//! control characters, digits). The generator also asks for 2147483647 replicas: identical
//! pods are replayed without a loop per pod, so that must stay quick too.

use std::time::Duration;

use kubectl_quota::render::check::{render, Output, Text};
use kubectl_quota_engine::check::{self, CheckOptions, ClusterState};
use kubectl_quota_engine::manifest::parse_str;
use kubectl_quota_engine::objects::{decode, Object};
use kubectl_quota_engine::quantity::Quantity;
use kubectl_quota_engine::report;
use proptest::prelude::*;

mod common;

use common::bin;
use common::deadline;
use deadline::output_within;
use proptest::test_runner::{Config, TestRunner};

/// Far above any honest case (they take milliseconds); only a hang or a blow-up reaches it.
const BOUND: Duration = Duration::from_secs(10);

fn seeds(file: &str) -> Vec<String> {
    let dir = common::corpus();
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    names.sort();
    names.iter().filter_map(|d| std::fs::read_to_string(d.join(file)).ok()).collect()
}

/// Bytes a mutation may insert: YAML structure, quoting, anchors, numbers, controls.
const PIECES: &[&str] = &[
    "\n",
    " ",
    "  ",
    "- ",
    ": ",
    "{",
    "}",
    "[",
    "]",
    ",",
    "&a ",
    "*a",
    "<<: *a\n",
    "'",
    "\"",
    "#",
    "---\n",
    "...\n",
    "!!str ",
    "?",
    "|",
    ">",
    "\t",
    "\x1b[31m",
    "\r",
    "\u{feff}",
    "\u{9b}",
    "-1",
    "0",
    "9",
    "1e9",
    ".inf",
    ".nan",
    "1.5",
    "m",
    "Ki",
    "Gi",
    "e",
    "~",
    "null",
    "true",
    "0x1F",
    "0o7",
    "2147483648",
    "99999999999999999999",
    "Foo_Bar",
    "kind: List\nitems:\n",
    "apiVersion: v1\n",
    "replicas: ",
    "parallelism: ",
    "cpu: ",
    "pods: ",
];

#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, usize),
    Delete(usize, usize),
    Replace(usize, usize, usize),
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let pos = any::<usize>();
    let piece = 0..PIECES.len();
    prop::collection::vec(
        prop_oneof![
            (pos, piece.clone()).prop_map(|(p, i)| Edit::Insert(p, i)),
            (pos, 1usize..16).prop_map(|(p, n)| Edit::Delete(p, n)),
            (pos, 1usize..8, piece).prop_map(|(p, n, i)| Edit::Replace(p, n, i)),
        ],
        1..6,
    )
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut s = text.to_string();
    let at = |s: &str, p: usize| {
        let mut p = if s.is_empty() { 0 } else { p % (s.len() + 1) };
        while !s.is_char_boundary(p) {
            p -= 1;
        }
        p
    };
    let end = |s: &str, from: usize, n: usize| {
        let mut e = (from + n).min(s.len());
        while !s.is_char_boundary(e) {
            e += 1;
        }
        e
    };
    for e in edits {
        match *e {
            Edit::Insert(p, i) => {
                let p = at(&s, p);
                s.insert_str(p, PIECES[i]);
            }
            Edit::Delete(p, n) => {
                let p = at(&s, p);
                let e = end(&s, p, n);
                s.replace_range(p..e, "");
            }
            Edit::Replace(p, n, i) => {
                let p = at(&s, p);
                let e = end(&s, p, n);
                s.replace_range(p..e, PIECES[i]);
            }
        }
    }
    s
}

fn decode_all(file: &str, text: &str) -> Result<Vec<Object>, ()> {
    let docs = parse_str(file, text).map_err(|_| ())?;
    docs.iter().map(|d| decode(d).map_err(|_| ())).collect()
}

/// The library's pipeline, as `check --state` runs it: the exit status it would give, or
/// what is wrong with its reports (a control character in the text, JSON that does not parse
/// or whose documents disagree with the status).
fn pipeline(manifest: &str, state: &str) -> Result<i32, String> {
    let Ok(state_objs) = decode_all("state.yaml", state) else { return Ok(2) };
    let Ok(objs) = decode_all("m.yaml", manifest) else { return Ok(2) };
    if objs.is_empty() {
        return Ok(2);
    }
    let mut st = ClusterState::from_objects(state_objs, "default");
    let opts = CheckOptions { namespace: "default".into(), limited: vec![], nodes: Some(3), ..CheckOptions::default() };
    let mut r = check::check(&mut st, objs, &opts);
    report::explain(&mut r, &st);
    let code = r.exit_code();
    for output in [Output::Text, Output::Json, Output::Yaml] {
        let text = render(&r, output, Text::Explain);
        if output == Output::Text && text.contains('\x1b') {
            return Err(format!("control characters reach the text report: {text:?}"));
        }
        if output == Output::Json {
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("the JSON report does not parse ({e}): {text}"))?;
            let outcomes: Vec<&str> = v["documents"].as_array().into_iter().flatten().map(|d| d["outcome"].as_str().unwrap_or("none")).collect();
            let clean = outcomes.iter().all(|o| *o == "admitted");
            if outcomes.is_empty() || clean != (code == 0) {
                return Err(format!("exit status {code} but outcomes {outcomes:?}"));
            }
        }
    }
    let _ = render(&r, Output::Text, Text::Refusals);
    let _ = render(&r, Output::Text, Text::Concise);
    Ok(code)
}

/// Runs `f` on its own thread and fails the test if it has not ended within [`BOUND`]: a
/// hang is caught, not waited for (the stuck thread is left behind; the test has failed).
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    // The main thread's stack: a deep document must not overflow a smaller one.
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let _ = tx.send(f());
        })
        .unwrap();
    match rx.recv_timeout(BOUND) {
        Ok(out) => out,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what} still ran after {BOUND:?}"),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() })
}

#[test]
fn mutated_manifests_never_panic_or_hang() {
    colored::control::set_override(false);
    let manifests = seeds("candidate.yaml");
    let states = seeds("state.yaml");
    let strategy = (0..manifests.len(), 0..states.len(), edits());
    runner(400)
        .run(&strategy, |(m, s, e)| {
            let (text, state) = (apply(&manifests[m], &e), states[s].clone());
            let got = bounded("a mutated manifest", move || pipeline(&text, &state));
            prop_assert!(got.is_ok(), "{}", got.unwrap_err());
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_states_never_panic_or_hang() {
    colored::control::set_override(false);
    let manifests = seeds("candidate.yaml");
    let states = seeds("state.yaml");
    let strategy = (0..manifests.len(), 0..states.len(), edits());
    runner(300)
        .run(&strategy, |(m, s, e)| {
            let (manifest, text) = (manifests[m].clone(), apply(&states[s], &e));
            let got = bounded("a mutated state", move || pipeline(&manifest, &text));
            prop_assert!(got.is_ok(), "{}", got.unwrap_err());
            Ok(())
        })
        .unwrap();
}

/// Names, counts and quantities a generator writes into a pod-making manifest.
fn generated_manifest() -> impl Strategy<Value = String> {
    let name = prop_oneof![Just("web".to_string()), "[a-zA-Z0-9_.\\-\n\t\u{1b}\u{9b}:/]{0,70}".prop_map(|s| format!("{s:?}"))];
    let count = prop_oneof![
        (-5i64..50).prop_map(|n| n.to_string()),
        Just("2147483647".into()),
        Just("1000000".into()),
        Just("1.5".into()),
        Just(".inf".into()),
        Just("'3'".into()),
        Just("null".into())
    ];
    let qty = "[0-9.+\\-eEinumkKMGTP ]{0,12}";
    let kind = prop_oneof![
        Just(("apps/v1", "Deployment")),
        Just(("batch/v1", "Job")),
        Just(("v1", "ReplicationController")),
        Just(("apps/v1", "StatefulSet")),
        Just(("v1", "Pod"))
    ];
    (name, count, qty, kind).prop_map(|(name, count, qty, (api, kind))| {
        let pod = format!("{{containers: [{{name: a, image: b, resources: {{requests: {{cpu: '{qty}', memory: 1Gi}}, limits: {{cpu: '{qty}'}}}}}}]}}");
        if kind == "Pod" {
            format!("apiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}}}\nspec: {pod}\n")
        } else {
            format!("apiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}}}\nspec: {{replicas: {count}, parallelism: {count}, selector: {{}}, template: {{spec: {pod}}}}}\n")
        }
    })
}

#[test]
fn generated_manifests_never_panic_or_hang() {
    colored::control::set_override(false);
    let states = seeds("state.yaml");
    runner(300)
        .run(&(generated_manifest(), 0..states.len()), |(m, s)| {
            let state = states[s].clone();
            let got = bounded("a generated manifest", move || pipeline(&m, &state));
            prop_assert!(got.is_ok(), "{}", got.unwrap_err());
            Ok(())
        })
        .unwrap();
}

#[test]
fn quantities_parse_format_and_add_without_panic() {
    runner(2000)
        .run(&("[0-9.+\\-eEinumkKMGTP ]{0,40}", "[0-9.]{0,30}[a-zA-Z]{0,3}"), |(a, b)| {
            for s in [&a, &b] {
                if let Ok(q) = Quantity::parse(s) {
                    let canon = q.to_canonical();
                    let again = Quantity::parse(&canon).expect("a canonical form parses");
                    prop_assert_eq!(again.to_canonical(), canon);
                    let _ = (q.round_up(-3), q.to_string());
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_handful_through_the_binary_exit_with_a_documented_status() {
    let dir = std::env::temp_dir().join(format!("kq-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let manifests = seeds("candidate.yaml");
    let states = seeds("state.yaml");
    let mut runner = runner(12);
    runner
        .run(&(0..manifests.len(), 0..states.len(), edits(), prop::bool::ANY), |(m, s, e, mutate_state)| {
            let (manifest, state) = if mutate_state { (manifests[m].clone(), apply(&states[s], &e)) } else { (apply(&manifests[m], &e), states[s].clone()) };
            std::fs::write(dir.join("m.yaml"), &manifest).unwrap();
            std::fs::write(dir.join("s.yaml"), &state).unwrap();
            for output in ["text", "json", "yaml"] {
                let mut cmd = bin();
                cmd.args(["check", "-f", "m.yaml", "--state", "s.yaml", "--nodes", "3", "-o", output]).current_dir(&dir);
                let o = output_within(cmd, BOUND);
                let err = String::from_utf8_lossy(&o.stderr);
                // 0 fits, 1 refused, 2 bad input, 3 incomplete (a mutated state may
                // cover only other namespaces): never a crash or a signal.
                prop_assert!(matches!(o.status.code(), Some(0..=3)), "{:?}: {}", o.status, err);
                prop_assert!(!err.contains("panicked"), "{}", err);
            }
            Ok(())
        })
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
