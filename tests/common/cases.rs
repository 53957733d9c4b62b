//! A recorded case (tests/conformance/*, tests/recorded/<gitVersion>/*) run offline through
//! `kubectl-quota check -o json`, for tests/conformance.rs and tests/recorded.rs to compare
//! with its `expected.json`, each as strictly as its corpus calls for.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::bin;

/// Runs `check` on the case in `dir`: its candidate.yaml as `-f`; `states` (the corpus's
/// cluster-scoped objects, ...) and then its state.yaml as `--state`; in namespace
/// `NAMESPACE`, answering as Kubernetes `version`, with `flags`; its admission.yaml (when it
/// has one) as `--admission-config`. Ok: the exit status and the JSON report. Err: the tool
/// failed (exit 2, or a signal) or printed no JSON.
pub fn check_case(dir: &Path, states: &[PathBuf], version: &str, flags: &[&str]) -> Result<(i32, Value), String> {
    let mut cmd = bin();
    cmd.arg("check").arg("-f").arg(dir.join("candidate.yaml"));
    for state in states {
        cmd.arg("--state").arg(state);
    }
    cmd.arg("--state").arg(dir.join("state.yaml")).args(["-n", "NAMESPACE", "-o", "json", "--kubernetes-version", version]).args(flags);
    if dir.join("admission.yaml").exists() {
        cmd.arg("--admission-config").arg(dir.join("admission.yaml"));
    }
    let out = cmd.output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    if code == 2 || code < 0 {
        return Err(format!("exit {code}: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let got: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("bad JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))?;
    Ok((code, got))
}
