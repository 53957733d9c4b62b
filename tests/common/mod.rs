//! Shared by the integration tests, each of which includes it with `mod common;` and uses
//! only some of it (hence `allow(dead_code)`, which covers the submodules too): where the
//! repository is and how the plugin binary is run offline (here), the lab cluster for the
//! live suites (`live`), and how a recorded case is run (`cases`) and its `check -o json`
//! report compared with its `expected.json`, as tests/conformance/README.md prescribes (here).
#![allow(dead_code)]

pub mod autoscalers;
pub mod cases;
pub mod ci;
#[path = "../support/deadline.rs"]
pub mod deadline;
pub mod docs;
pub mod injector;
pub mod live;
pub mod node;
pub mod tls;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The repository's root (the plugin crate's directory), where the tests' fixtures are read
/// from and the binary runs.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The plugin binary, run from the repository's root (so paths in its output are relative),
/// without colours, and without GitHub Actions annotations (`GITHUB_ACTIONS`) or an input cap
/// (`KUBECTL_QUOTA_MAX_INPUT_BYTES`) taken from the test's own environment.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kubectl-quota"));
    c.current_dir(root()).env("NO_COLOR", "1").env_remove("GITHUB_ACTIONS").env_remove("KUBECTL_QUOTA_MAX_INPUT_BYTES");
    c
}

/// [`bin`] without the user's kubeconfig: no `KUBECONFIG`, and a `HOME` without a
/// `.kube/config` (only a `--kubeconfig` the test passes is read).
pub fn bin_without_kubeconfig() -> Command {
    let mut c = bin();
    c.env_remove("KUBECONFIG").env("HOME", "/nonexistent");
    c
}

/// The recorded corpus.
/// A file holding `content`, named after `tag` and this process (the caller removes it).
pub fn temp_file(tag: &str, content: &str) -> PathBuf {
    let f = std::env::temp_dir().join(format!("kq-{tag}-{}.yaml", std::process::id()));
    std::fs::write(&f, content).unwrap();
    f
}

pub fn corpus() -> PathBuf {
    root().join("tests/conformance")
}

/// Every case folder, sorted.
pub fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(corpus()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    cases.sort();
    cases
}

/// (quota, resources) of a `failed quota: Q: must specify ...` message, in either format.
pub fn must_specify(msg: &str) -> Option<(String, BTreeSet<String>)> {
    let rest = msg.strip_prefix("failed quota: ")?;
    let (quota, list) = rest.split_once(": must specify ")?;
    let resources = if list.contains(" for: ") {
        list.split("; ").filter_map(|part| part.split_once(" for: ").map(|(r, _)| r.to_string())).collect()
    } else {
        list.split(',').map(str::to_string).collect()
    };
    Some((quota.to_string(), resources))
}

/// Whether two messages agree as the README prescribes. `exact`: the report answered as the
/// release the corpus was recorded on (1.20), so every message, the must-specify list
/// included, must be byte-identical; otherwise a must-specify message in the newer format
/// agrees when it names the same quota and resources.
///
/// A validation error the server follows with a dump of the old and new specs (Go's diff of
/// its internal types, whose format changed between releases: `core.PodSpec{...}` in 1.20, a
/// line diff of JSON in 1.37) agrees when the tool's one-line message is its first line, the
/// verdict: the dump is not reproduced.
pub fn same_message(expected: &str, got: &str, exact: bool) -> bool {
    match must_specify(expected) {
        Some(want) if !exact => must_specify(got) == Some(want),
        _ if expected.contains('\n') && !got.contains('\n') && expected.contains(" is invalid: ") => expected.lines().next() == Some(got),
        _ => expected == got,
    }
}

/// A pod refusal as both sides can say it: a controller's FailedCreate event says a 422 as
/// `Error creating: Pod "web-6d4b8c9f7-x2k9q" is invalid: ...`, with the name the server
/// generated, which no check can know: the prefix goes and the name is masked. A 403's event
/// was already recorded after its `is forbidden: `.
pub fn pod_event_message(m: &str) -> String {
    let m = m.strip_prefix("Error creating: ").unwrap_or(m);
    match (m.strip_prefix("Pod \""), m.find("\" is invalid: ")) {
        (Some(_), Some(end)) => format!("Pod \"<generated>{}", &m[end..]),
        _ => m.to_string(),
    }
}

/// The release the corpus was recorded on.
pub const RECORDED_VERSION: &str = "1.20";

/// The outcome of comparing one message.
pub enum Compared {
    Same,
    /// The recorded answer is one of the tool's alternatives (server quota order).
    Alternative,
    Differs(String),
}

pub fn compare_message(what: &str, expected: Option<&str>, got: Option<&str>, alternatives: &Value, exact: bool) -> Compared {
    match (expected, got) {
        (None, _) => Compared::Same,
        (Some(e), None) => Compared::Differs(format!("{what}: expected {e:?}, got none")),
        (Some(e), Some(g)) if same_message(e, g, exact) => Compared::Same,
        (Some(e), Some(g)) => {
            let alts = alternatives.as_array().cloned().unwrap_or_default();
            if alts.iter().filter_map(Value::as_str).any(|a| same_message(e, a, exact)) {
                Compared::Alternative
            } else {
                Compared::Differs(format!("{what}:\n      expected {e:?}\n      got      {g:?}\n      alternatives {alts:?}"))
            }
        }
    }
}

/// Compares a report (`check -o json` output) and the exit status with `expected.json`.
/// Returns Ok(true) when a message matched only through the tool's `alternatives`.
pub fn compare_report(dir: &Path, code: i32, got: &Value) -> Result<bool, String> {
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let want = expected["results"].as_array().unwrap();
    let docs = got["documents"].as_array().unwrap();
    let exact = got["kubernetes"]["version"] == RECORDED_VERSION;
    if want.len() != docs.len() {
        return Err(format!("expected {} results, got {}", want.len(), docs.len()));
    }
    let mut problems = Vec::new();
    let mut via_alternative = false;
    let mut note = |c: Compared, problems: &mut Vec<String>| match c {
        Compared::Same => {}
        Compared::Alternative => via_alternative = true,
        Compared::Differs(d) => problems.push(d),
    };
    for (i, (w, g)) in want.iter().zip(docs).enumerate() {
        let label = format!("document {} ({} {})", i + 1, w["kind"].as_str().unwrap_or(""), w["name"].as_str().unwrap_or(""));
        if w["kind"] != g["kind"] || w["name"] != g["name"] {
            problems.push(format!("{label}: got {} {}", g["kind"], g["name"]));
        }
        if w["allowed"] != g["allowed"] {
            problems.push(format!("{label}: allowed expected {}, got {} ({})", w["allowed"], g["allowed"], g["message"]));
        }
        note(compare_message(&format!("{label} message"), w["message"].as_str(), g["message"].as_str(), &g["refusal"]["alternatives"], exact), &mut problems);
        if let Some(created) = w.get("pods_created") {
            if created != &g["replicasAdmitted"] || w["pods_wanted"] != g["replicas"] {
                problems.push(format!("{label}: pods expected {created} of {}, got {} of {}", w["pods_wanted"], g["replicasAdmitted"], g["replicas"]));
            }
            note(
                compare_message(
                    &format!("{label} pod message"),
                    w["pod_message"].as_str().map(pod_event_message).as_deref(),
                    g["podMessage"].as_str().map(pod_event_message).as_deref(),
                    &g["podMessageAlternatives"],
                    exact,
                ),
                &mut problems,
            );
        }
    }
    let all_fit = docs.iter().all(|d| d["allowed"] == true && d.get("replicasAdmitted").is_none_or(|a| a.is_null() || a == &d["replicas"]));
    if (code == 0) != all_fit {
        problems.push(format!("exit status {code} does not agree with the verdicts"));
    }
    if problems.is_empty() {
        Ok(via_alternative)
    } else {
        Err(problems.join("\n    "))
    }
}

/// Replays every case with `run` (Ok(true): matched only through the tool's alternatives),
/// prints how many match and which needed an alternative, and fails listing every case that
/// differs. `what` names the set (`conformance`, `recorded on v1.37.2`).
pub fn replay_all(what: &str, cases: &[PathBuf], mut run: impl FnMut(&Path) -> Result<bool, String>) {
    let mut failures = Vec::new();
    let mut alternatives = Vec::new();
    for c in cases {
        let name = c.file_name().unwrap().to_string_lossy().to_string();
        match run(c) {
            Ok(false) => {}
            Ok(true) => alternatives.push(name),
            Err(e) => failures.push(format!("{name}:\n    {e}")),
        }
    }
    println!("{what}: {} of {} cases match", cases.len() - failures.len(), cases.len());
    if !alternatives.is_empty() {
        println!("matched through the server's undefined quota order (recorded answer = one of the tool's alternatives): {}", alternatives.join(", "));
    }
    assert!(failures.is_empty(), "{} of {} cases ({what}) differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
