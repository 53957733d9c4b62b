//! The answers of real kube-apiservers, one set per release (tests/recorded/<gitVersion>/, made
//! by tests/record/record.sh), replayed offline through `kubectl-quota check` answering as that
//! release (`--kubernetes-version MAJOR.MINOR` of the set's VERSION): the set's
//! cluster-scoped.yaml, the case's own cluster-scoped.yaml (DeviceClasses, ...) and its
//! state.yaml as `--state`, candidate.yaml as `-f`, admission.yaml (when present) as
//! `--admission-config`, and `--allow-privileged=false`, the flag the servers ran with.
//!
//! A case is compared as tests/conformance.rs compares the corpus (tests/common's
//! `compare_report`), and more strictly, since every set holds its release's own words:
//! - every message byte for byte, the must-specify list included (or, when several quotas
//!   refuse, one of the tool's `alternatives`: the server's quota order is a Go map's);
//! - the exit status: 1 exactly when the server refused something, created fewer pods than
//!   a Deployment wanted, or left pods Pending because quota refused their ResourceClaims
//!   (`compare_report` knows only the first two; the third is checked here);
//! - `pods_pending` (pods whose template claims were refused) and `claim_message` (the first
//!   refusal of such a claim, compared with the tool's pod message when no pod was refused).
//!
//! The recordings are the server's; a disagreement is the tool's to fix, never the file's.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;

use common::cases::check_case;
use common::{compare_message, compare_report, root, Compared};

fn recorded() -> PathBuf {
    root().join("tests/recorded")
}

/// The set recorded on release 1.`minor`, with its VERSION (gitVersion).
fn set_for(minor: u32) -> Option<(PathBuf, String)> {
    let mut found: Vec<(PathBuf, String)> = std::fs::read_dir(recorded())
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| std::fs::read_to_string(p.join("VERSION")).ok().map(|v| (p, v.trim().to_string())))
        .filter(|(_, v)| v.strip_prefix("v1.").and_then(|r| r.split('.').next()).and_then(|m| m.parse().ok()) == Some(minor))
        .collect();
    found.sort();
    found.pop()
}

fn cases(set: &Path) -> Vec<PathBuf> {
    let mut c: Vec<PathBuf> = std::fs::read_dir(set).unwrap().map(|e| e.unwrap().path()).filter(|p| p.join("expected.json").exists()).collect();
    c.sort();
    c
}

/// Ok(true) when a message matched only through an alternative.
fn run_case(set: &Path, dir: &Path, version: &str) -> Result<bool, String> {
    let mut states = vec![set.join("cluster-scoped.yaml")];
    if dir.join("cluster-scoped.yaml").exists() {
        states.push(dir.join("cluster-scoped.yaml"));
    }
    // The servers ran without --allow-privileged (tests/cluster/lab.sh passes none): upstream's
    // default, false.
    let (code, got) = check_case(dir, &states, version, &["--allow-privileged=false"])?;
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let want = expected["results"].as_array().unwrap();
    let docs = got["documents"].as_array().cloned().unwrap_or_default();
    let mut problems = Vec::new();

    // The exit status, pending pods included.
    let fully = |w: &Value| {
        w["allowed"] == true
            && w.get("pods_created").is_none_or(|c| c.as_i64() >= w["pods_wanted"].as_i64())
            && w.get("pods_pending").is_none_or(|p| p.as_i64() == Some(0))
    };
    let want_code = if want.iter().all(fully) { 0 } else { 1 };
    if code != want_code {
        problems.push(format!("exit status {code}, the server's answers call for {want_code}"));
    }
    // compare_report derives the status from verdicts and pods created only: give it the
    // status it expects when the tool's 1 is owed to pending pods alone (checked just above).
    let pending_only = code == 1
        && want_code == 1
        && want.iter().all(|w| {
            fully(&Value::Object({
                let mut m = w.as_object().cloned().unwrap_or_default();
                m.remove("pods_pending");
                m
            }))
        });
    let mut via_alternative = match compare_report(dir, if pending_only { 0 } else { code }, &got) {
        Ok(v) => v,
        Err(e) => {
            problems.push(e);
            false
        }
    };

    // Stricter than compare_report: every message exactly, claims too.
    let mut note = |c: Compared, problems: &mut Vec<String>| match c {
        Compared::Same => {}
        Compared::Alternative => via_alternative = true,
        Compared::Differs(d) => problems.push(d),
    };
    for (i, (w, g)) in want.iter().zip(&docs).enumerate() {
        let label = format!("document {} ({} {})", i + 1, w["kind"].as_str().unwrap_or(""), w["name"].as_str().unwrap_or(""));
        note(
            compare_message(&format!("{label} message (exact)"), w["message"].as_str(), g["message"].as_str(), &g["refusal"]["alternatives"], true),
            &mut problems,
        );
        if w.get("pods_created").is_some() {
            note(
                compare_message(
                    &format!("{label} pod message (exact)"),
                    w["pod_message"].as_str().map(common::pod_event_message).as_deref(),
                    g["podMessage"].as_str().map(common::pod_event_message).as_deref(),
                    &g["podMessageAlternatives"],
                    true,
                ),
                &mut problems,
            );
        }
        if let Some(p) = w.get("pods_pending") {
            let got_pending = g["podsPending"].as_i64().unwrap_or(0);
            if p.as_i64() != Some(got_pending) {
                problems.push(format!("{label}: pods pending on refused claims: expected {p}, got {got_pending}"));
            }
            if w["pod_message"].as_str().is_none() {
                note(
                    compare_message(
                        &format!("{label} claim message"),
                        w["claim_message"].as_str(),
                        g["podMessage"].as_str(),
                        &g["podMessageAlternatives"],
                        true,
                    ),
                    &mut problems,
                );
            }
        }
        // The server's warnings (a ValidatingAdmissionPolicy's Warn), every one, in order.
        let strings = |v: &Value| v.as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect::<Vec<_>>()).unwrap_or_default();
        let (want_warnings, got_warnings) = (strings(&w["warnings"]), strings(&g["warnings"]));
        if want_warnings != got_warnings {
            problems.push(format!("{label} warnings:\n      expected {want_warnings:?}\n      got      {got_warnings:?}"));
        }
    }
    if problems.is_empty() {
        Ok(via_alternative)
    } else {
        problems.dedup();
        Err(problems.join("\n    "))
    }
}

fn replay(minor: u32) {
    let Some((set, git_version)) = set_for(minor) else {
        eprintln!("\n*** SKIPPED: nothing recorded on Kubernetes 1.{minor} yet (tests/record/record.sh 1.{minor}) ***\n");
        return;
    };
    let version = format!("1.{minor}");
    let cases = cases(&set);
    assert!(!cases.is_empty(), "{} holds no case", set.display());
    common::replay_all(&format!("recorded on {git_version}"), &cases, |c| run_case(&set, c, &version));
}

#[test]
fn recorded_on_1_20() {
    replay(20);
}

#[test]
fn recorded_on_1_34() {
    replay(34);
}

#[test]
fn recorded_on_1_35() {
    replay(35);
}

#[test]
fn recorded_on_1_36() {
    replay(36);
}

#[test]
fn recorded_on_1_37() {
    replay(37);
}
