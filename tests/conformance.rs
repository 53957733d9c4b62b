//! Every case recorded on a real kube-apiserver (tests/conformance, see its README) replayed
//! offline through `kubectl-quota check`: cluster-scoped.yaml and state.yaml as `--state`,
//! candidate.yaml as `-f`, admission.yaml (when present) as `--admission-config`.
//!
//! What must match, as the corpus README says: `allowed` for every document; for Deployments
//! the pods created; `exceeded quota` / `insufficient quota` messages exactly; for
//! `must specify` refusals the quota and the set of resources (v1.20 printed
//! `must specify a,b`, newer servers and this tool `must specify a for: c; b for: c`).

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

/// Compares one message as the README prescribes; returns a description of the mismatch.
fn compare_message(what: &str, expected: Option<&str>, got: Option<&str>) -> Option<String> {
    match (expected, got) {
        (None, _) => None,
        (Some(e), None) => Some(format!("{what}: expected {e:?}, got none")),
        (Some(e), Some(g)) => {
            if let Some(want) = must_specify(e) {
                (must_specify(g).as_ref() != Some(&want)).then(|| format!("{what}: expected must-specify {want:?}, got {g:?}"))
            } else {
                (e != g).then(|| format!("{what}:\n      expected {e:?}\n      got      {g:?}"))
            }
        }
    }
}

fn run_case(dir: &Path) -> Result<(), String> {
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
    for (i, (w, g)) in want.iter().zip(docs).enumerate() {
        let label = format!("document {} ({} {})", i + 1, w["kind"].as_str().unwrap_or(""), w["name"].as_str().unwrap_or(""));
        if w["kind"] != g["kind"] || w["name"] != g["name"] {
            problems.push(format!("{label}: got {} {}", g["kind"], g["name"]));
        }
        if w["allowed"] != g["allowed"] {
            problems.push(format!("{label}: allowed expected {}, got {} ({})", w["allowed"], g["allowed"], g["message"]));
        }
        if let Some(m) = compare_message(&format!("{label} message"), w["message"].as_str(), g["message"].as_str()) {
            problems.push(m);
        }
        if let Some(created) = w.get("pods_created") {
            if created != &g["replicasAdmitted"] || w["pods_wanted"] != g["replicas"] {
                problems.push(format!(
                    "{label}: pods expected {created} of {}, got {} of {}",
                    w["pods_wanted"], g["replicasAdmitted"], g["replicas"]
                ));
            }
            if let Some(m) = compare_message(&format!("{label} pod message"), w["pod_message"].as_str(), g["podMessage"].as_str()) {
                problems.push(m);
            }
        }
    }
    let all_fit = docs.iter().all(|d| d["allowed"] == true && d.get("replicasAdmitted").is_none_or(|a| a.is_null() || a == &d["replicas"]));
    if (code == 0) != all_fit {
        problems.push(format!("exit status {code} does not agree with the verdicts"));
    }
    if problems.is_empty() {
        Ok(())
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
    for c in &cases {
        if let Err(e) = run_case(c) {
            failures.push(format!("{}:\n    {e}", c.file_name().unwrap().to_string_lossy()));
        }
    }
    println!("conformance: {} of {} cases match", cases.len() - failures.len(), cases.len());
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn must_specify_messages_compare_by_quota_and_resources() {
    let v120 = must_specify("failed quota: q: must specify limits.cpu,requests.cpu").unwrap();
    let newer = must_specify("failed quota: q: must specify limits.cpu for: app; requests.cpu for: app,init").unwrap();
    assert_eq!(v120, newer);
    assert!(must_specify("exceeded quota: q, requested: pods=1").is_none());
}
