//! Every case recorded on a real kube-apiserver (tests/conformance, see its README) replayed
//! offline through `kubectl-quota check`: cluster-scoped.yaml and state.yaml as `--state`,
//! candidate.yaml as `-f`, admission.yaml (when present) as `--admission-config`.
//!
//! What must match, as the corpus README says: `allowed` for every document; for Deployments
//! the pods created; `exceeded quota` / `insufficient quota` messages exactly; for
//! `must specify` refusals the quota and the set of resources (v1.20 printed
//! `must specify a,b`, newer servers and this tool `must specify a for: c; b for: c`).
//!
//! One thing the corpus cannot pin: when several quotas would refuse, the server reports the
//! first in its informer cache's order, a Go map iteration (for two quotas in one bucket the
//! later-created one comes first one time in eight). The tool answers in name order and lists
//! the other refusals the server could return as `alternatives`. A recorded answer that
//! differs from the tool's first answer passes only if the tool listed it as an alternative;
//! such cases are printed, and named in the closing notes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

/// (quota, resources) of a `failed quota: Q: must specify ...` message, in either format.
fn must_specify(msg: &str) -> Option<(String, BTreeSet<String>)> {
    let rest = msg.strip_prefix("failed quota: ")?;
    let (quota, list) = rest.split_once(": must specify ")?;
    let resources = if list.contains(" for: ") {
        list.split("; ").filter_map(|part| part.split_once(" for: ").map(|(r, _)| r.to_string())).collect()
    } else {
        list.split(',').map(str::to_string).collect()
    };
    Some((quota.to_string(), resources))
}

/// Whether two messages agree as the README prescribes.
fn same_message(expected: &str, got: &str) -> bool {
    match must_specify(expected) {
        Some(want) => must_specify(got) == Some(want),
        None => expected == got,
    }
}

/// The outcome of comparing one message.
enum Compared {
    Same,
    /// The recorded answer is one of the tool's alternatives (server quota order).
    Alternative,
    Differs(String),
}

fn compare_message(what: &str, expected: Option<&str>, got: Option<&str>, alternatives: &Value) -> Compared {
    match (expected, got) {
        (None, _) => Compared::Same,
        (Some(e), None) => Compared::Differs(format!("{what}: expected {e:?}, got none")),
        (Some(e), Some(g)) if same_message(e, g) => Compared::Same,
        (Some(e), Some(g)) => {
            let alts = alternatives.as_array().cloned().unwrap_or_default();
            if alts.iter().filter_map(Value::as_str).any(|a| same_message(e, a)) {
                Compared::Alternative
            } else {
                Compared::Differs(format!("{what}:\n      expected {e:?}\n      got      {g:?}\n      alternatives {alts:?}"))
            }
        }
    }
}

/// Ok(true) when the case matched only through an alternative.
fn run_case(dir: &Path) -> Result<bool, String> {
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-quota"));
    cmd.arg("check")
        .arg("-f")
        .arg(dir.join("candidate.yaml"))
        .arg("--state")
        .arg(corpus().join("cluster-scoped.yaml"))
        .arg("--state")
        .arg(dir.join("state.yaml"))
        .args(["-n", "NAMESPACE", "-o", "json"])
        .env("NO_COLOR", "1");
    if dir.join("admission.yaml").exists() {
        cmd.arg("--admission-config").arg(dir.join("admission.yaml"));
    }
    let out = cmd.output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    if code == 2 || code < 0 {
        return Err(format!("exit {code}: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let got: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("bad JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))?;
    let want = expected["results"].as_array().unwrap();
    let docs = got["documents"].as_array().unwrap();
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
        note(compare_message(&format!("{label} message"), w["message"].as_str(), g["message"].as_str(), &g["refusal"]["alternatives"]), &mut problems);
        if let Some(created) = w.get("pods_created") {
            if created != &g["replicasAdmitted"] || w["pods_wanted"] != g["replicas"] {
                problems.push(format!(
                    "{label}: pods expected {created} of {}, got {} of {}",
                    w["pods_wanted"], g["replicasAdmitted"], g["replicas"]
                ));
            }
            note(compare_message(&format!("{label} pod message"), w["pod_message"].as_str(), g["podMessage"].as_str(), &g["podMessageAlternatives"]), &mut problems);
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

#[test]
fn every_recorded_case_matches_the_api_server() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(corpus()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    cases.sort();
    assert!(cases.len() >= 100, "the corpus is missing: {} cases", cases.len());
    let mut failures = Vec::new();
    let mut alternatives = Vec::new();
    for c in &cases {
        let name = c.file_name().unwrap().to_string_lossy().to_string();
        match run_case(c) {
            Ok(false) => {}
            Ok(true) => alternatives.push(name),
            Err(e) => failures.push(format!("{name}:\n    {e}")),
        }
    }
    println!("conformance: {} of {} cases match", cases.len() - failures.len(), cases.len());
    if !alternatives.is_empty() {
        println!("matched through the server's undefined quota order (recorded answer = one of the tool's alternatives): {}", alternatives.join(", "));
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn must_specify_messages_compare_by_quota_and_resources() {
    let v120 = must_specify("failed quota: q: must specify limits.cpu,requests.cpu").unwrap();
    let newer = must_specify("failed quota: q: must specify limits.cpu for: app; requests.cpu for: app,init").unwrap();
    assert_eq!(v120, newer);
    assert!(must_specify("exceeded quota: q, requested: pods=1").is_none());
}
