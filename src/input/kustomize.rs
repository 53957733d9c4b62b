//! `-k DIR`: a kustomization built as `kubectl apply -k` builds it (by kubectl, else by
//! kustomize), its output bounded like every read, each document named by its resource id.

use super::url::url_timeout;
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
        let mut command = std::process::Command::new(program);
        // The directory is always a path: a value that starts with `-` would otherwise be read
        // as one of the program's options (`--load-restrictor=LoadRestrictionsNone`).
        command.args(args).arg(as_path(dir)).stdin(std::process::Stdio::null()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        // A group of its own, so that the deadline ends every process the build started (kubectl
        // may run git or a helm of its own), not only the first.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = match command.spawn() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(InputError::file(dir, format!("-k: cannot run {program}: {e}"))),
        };
        let shown_command = format!("{program} {}", args.join(" "));
        return run_bounded(child, &shown_command, dir).map(|text| (shown, text));
    }
    Err(InputError::file(dir, "-k: building a kustomization needs kubectl (`kubectl kustomize`) or kustomize on PATH; neither was found"))
}

/// `dir` as an argument that can only be a path: `./` before a value that starts with `-`.
fn as_path(dir: &str) -> String {
    if dir.starts_with('-') {
        format!("./{dir}")
    } else {
        dir.to_string()
    }
}

/// The build's output, read to its end within the deadline every read has ([`url_timeout`]: a
/// kustomization may name remote resources, which the program fetches). When the deadline
/// passes, or the output is over the cap, the program and everything it started are killed.
fn run_bounded(mut child: std::process::Child, program: &str, dir: &str) -> Result<String, InputError> {
    let deadline = std::time::Instant::now() + url_timeout();
    let what = format!("the output of {program} {dir}");
    let (out_tx, out_rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().expect("piped");
    // Both pipes are read on threads of their own (a full pipe would stall the program), so
    // that this one can stop waiting at the deadline; standard error keeps its head only.
    std::thread::spawn(move || {
        let _ = out_tx.send(read_capped(stdout, &what));
    });
    let (err_tx, err_rx) = std::sync::mpsc::channel();
    if let Some(mut err) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut head = Vec::new();
            let _ = err.by_ref().take(STDERR_CAP).read_to_end(&mut head);
            let _ = std::io::copy(&mut err, &mut std::io::sink());
            let _ = err_tx.send(String::from_utf8_lossy(&head).into_owned());
        });
    }
    let late = || {
        InputError::file(
            dir,
            format!("-k: {program} did not finish within {} s (set KUBECTL_QUOTA_URL_TIMEOUT to wait longer); it was stopped", url_timeout().as_secs()),
        )
    };
    let remaining = || deadline.saturating_duration_since(std::time::Instant::now());
    let text = match out_rx.recv_timeout(remaining()) {
        Ok(text) => text,
        Err(_) => {
            kill_all(&mut child);
            return Err(late());
        }
    };
    if text.is_err() {
        // Too much, or unreadable: the rest is not wanted.
        kill_all(&mut child);
    }
    // The output has ended; the program should end with it.
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if remaining().is_zero() => {
                kill_all(&mut child);
                return Err(late());
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(e) => return Err(InputError::file(dir, format!("-k: {program}: {e}"))),
        }
    };
    // Whatever it started and left behind is not wanted either.
    kill_group(&child);
    let err = err_rx.recv_timeout(remaining().max(std::time::Duration::from_millis(100))).unwrap_or_default();
    let text = text.map_err(|e| InputError::file(dir, format!("-k: {e}")))?;
    if !status.success() {
        let said = err.trim();
        let said = if said.is_empty() { String::new() } else { format!(": {said}") };
        return Err(InputError::file(dir, format!("-k: {program} failed ({status}){said}")));
    }
    Ok(text)
}

/// Kills the build's program and every process in its group, and reaps the program.
fn kill_all(child: &mut std::process::Child) {
    kill_group(child);
    let _ = child.kill();
    let _ = child.wait();
}

/// Kills every process in the group the program leads (the program was made its leader).
fn kill_group(child: &std::process::Child) {
    #[cfg(unix)]
    if let Ok(group) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group; it touches no memory.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = child;
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
