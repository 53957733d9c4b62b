//! `-k DIR`: a kustomization built as `kubectl apply -k` builds it (by kubectl, else by
//! kustomize), its output bounded like every read, each document named by its resource id.

use super::*;
use kubectl_quota_engine::manifest::InputError;
use std::io::Read;
use std::path::Path;

/// The names a kustomization file may have, in the order kustomize looks for them.
const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Builds a kustomization as `kubectl apply -k` does: `kubectl kustomize DIR` (kubectl is on
/// PATH wherever a kubectl plugin runs), else `kustomize build DIR`. Returns the file the
/// documents are attributed to (the kustomization file in `DIR`, or `DIR` itself when it is
/// not a local directory: kustomize also builds remote targets) and the build's text, capped
/// as every other read.
pub(super) fn kustomize_build(dir: &str) -> Result<(String, String), InputError> {
    let shown = KUSTOMIZATION_FILES.iter().map(|f| Path::new(dir).join(f)).find(|p| p.is_file()).map(|p| p.display().to_string());
    let shown = match shown {
        Some(f) => f,
        None if Path::new(dir).is_dir() => {
            return Err(InputError::file(dir, format!("-k: no kustomization here ({})", KUSTOMIZATION_FILES.join(", "))));
        }
        None => dir.to_string(),
    };
    let programs: [(&str, &[&str]); 2] = [("kubectl", &["kustomize"]), ("kustomize", &["build"])];
    for (program, args) in programs {
        let child = std::process::Command::new(program)
            .args(args)
            .arg(dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(InputError::file(dir, format!("-k: cannot run {program}: {e}"))),
        };
        let what = format!("the output of {program} {} {dir}", args.join(" "));
        // Standard error is read to its end beside standard output (a full pipe would stall the
        // program), keeping its head only.
        let stderr = child.stderr.take().map(|mut err| {
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let _ = err.by_ref().take(STDERR_CAP).read_to_end(&mut head);
                let _ = std::io::copy(&mut err, &mut std::io::sink());
                String::from_utf8_lossy(&head).into_owned()
            })
        });
        let text = read_capped(child.stdout.take().expect("piped"), &what);
        if text.is_err() {
            // Too much, or unreadable: the rest is not wanted.
            let _ = child.kill();
        }
        let status = child.wait().map_err(|e| InputError::file(dir, format!("-k: {program}: {e}")))?;
        let err = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
        let text = text.map_err(|e| InputError::file(dir, format!("-k: {e}")))?;
        if !status.success() {
            let said = err.trim();
            let said = if said.is_empty() { String::new() } else { format!(": {said}") };
            return Err(InputError::file(dir, format!("-k: {program} {} failed ({status}){said}", args.join(" "))));
        }
        return Ok((shown, text));
    }
    Err(InputError::file(dir, "-k: building a kustomization needs kubectl (`kubectl kustomize`) or kustomize on PATH; neither was found"))
}

/// What a failing kustomize may say on standard error that is shown, at most.
const STDERR_CAP: u64 = 64 << 10;

/// A resource's id in a built input: `Kind/namespace/name`, or `Kind/name` without a namespace.
pub(super) fn resource_id(v: &serde_json::Value) -> String {
    let s = |v: Option<&serde_json::Value>| v.and_then(serde_json::Value::as_str).unwrap_or("").to_string();
    let kind = s(v.get("kind"));
    let name = s(v.pointer("/metadata/name"));
    match v.pointer("/metadata/namespace").and_then(serde_json::Value::as_str) {
        Some(ns) if !ns.is_empty() => format!("{kind}/{ns}/{name}"),
        _ => format!("{kind}/{name}"),
    }
}
