//! The krew install, for real: krew itself (sigs.k8s.io/krew, built from the Go module proxy
//! by tests/krew/build.sh and cached), the release archive packed by scripts/release.sh, the
//! manifest rewritten with its sha256 and validated by krew-index's own validator, then
//! `kubectl krew install --manifest --archive` into a scratch KREW_ROOT, `kubectl quota
//! version`, `kubectl quota <TAB>` through the installed kubectl_complete-quota, and
//! `kubectl krew uninstall quota`. Nothing leaves loopback: `--archive` is the local file.
//!
//! The archive packs the binary this test build made (`release.sh --binary`): a release's
//! own `--profile dist` build (fat LTO) takes minutes and tests nothing krew sees. It is the
//! glibc stand-in target for linux/amd64; the other platforms keep their placeholders (they
//! cannot be built here, docs/release.md says why).
//!
//! Without Go or kubectl the test says so loudly and skips, except under CI=true, where it
//! fails.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::root;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(what: &str, out: Output) -> String {
    assert!(out.status.success(), "{what}: exit {:?}\n{}\n{}", out.status.code(), text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

fn skip(why: &str) -> bool {
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{why} (under CI the krew install must run)");
    eprintln!("\n*** SKIPPED: {why} ***\n");
    true
}

#[test]
fn krew_installs_the_release_archive_and_kubectl_runs_and_completes_it() {
    if Command::new("kubectl").args(["version", "--client"]).output().is_err() && skip("kubectl is not installed") {
        return;
    }
    let built = Command::new(root().join("tests/krew/build.sh")).output();
    let krew_dir = match built {
        Ok(out) if out.status.success() => PathBuf::from(text(&out.stdout).trim()),
        Ok(out) => {
            if skip(&format!("krew could not be built: {}", text(&out.stderr))) {
                return;
            }
            unreachable!()
        }
        Err(e) => {
            if skip(&format!("tests/krew/build.sh: {e}")) {
                return;
            }
            unreachable!()
        }
    };
    let scratch = std::env::temp_dir().join(format!("kq-krew-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let (dist, krew_root, bin, index) = (scratch.join("dist"), scratch.join("krew-root"), scratch.join("bin"), scratch.join("index"));
    for d in [&dist, &krew_root, &bin, &index] {
        std::fs::create_dir_all(d).unwrap();
    }
    // krew-index's layout: plugins/<name>.yaml (its validator checks the file name).
    let manifest = index.join("quota.yaml");
    std::fs::copy(root().join("krew-manifest.yaml"), &manifest).unwrap();
    // kubectl finds krew as the kubectl-krew plugin.
    std::os::unix::fs::symlink(krew_dir.join("krew"), bin.join("kubectl-krew")).unwrap();
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));

    // The release script packs the archive and writes its sha256 into the manifest.
    let target = "x86_64-unknown-linux-gnu";
    let release = Command::new(root().join("scripts/release.sh"))
        .args([&tag, "--targets", target, "--binary", env!("CARGO_BIN_EXE_kubectl-quota")])
        .arg("--dist")
        .arg(&dist)
        .arg("--manifest")
        .arg(&manifest)
        .output()
        .unwrap();
    ok("release.sh", release);
    let archive = dist.join(format!("kubectl-quota-{tag}-{target}.tar.gz"));
    let sum = std::fs::read_to_string(dist.join(format!("kubectl-quota-{tag}-{target}.tar.gz.sha256"))).unwrap();
    let sum = sum.split_whitespace().next().unwrap().to_string();
    let written = std::fs::read_to_string(&manifest).unwrap();
    assert!(written.contains(&format!("sha256: \"{sum}\"")), "the manifest carries the archive's sum {sum}:\n{written}");
    assert!(written.contains(&format!("  version: {tag}")), "{written}");

    // krew-index's validator (its install exercise downloads every platform's uri: the one
    // built here is installed below from the archive instead).
    ok("validate-krew-manifest", Command::new(krew_dir.join("validate-krew-manifest")).arg("-manifest").arg(&manifest).arg("-skip-install").output().unwrap());

    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let kubectl = |args: &[&str]| {
        let mut c = Command::new("kubectl");
        c.args(args).env("KREW_ROOT", &krew_root).env("PATH", &path).env("HOME", &scratch).env_remove("KUBECONFIG");
        c
    };
    // krew's local index, as `kubectl krew update` would clone krew-index (uninstall wants
    // one): a git directory holding the manifest as plugins/quota.yaml.
    let local_index = krew_root.join("index/default");
    std::fs::create_dir_all(local_index.join("plugins")).unwrap();
    std::fs::copy(&manifest, local_index.join("plugins/quota.yaml")).unwrap();
    ok("git init", Command::new("git").args(["init", "-q"]).current_dir(&local_index).output().unwrap());
    let installed = ok(
        "kubectl krew install",
        kubectl(&["krew", "install"]).arg(format!("--manifest={}", manifest.display())).arg(format!("--archive={}", archive.display())).output().unwrap(),
    );
    let _ = installed;
    let with_plugin = format!("{}:{path}", krew_root.join("bin").display());
    let plugin = |args: &[&str]| {
        let mut c = Command::new("kubectl");
        c.args(args).env("KREW_ROOT", &krew_root).env("PATH", &with_plugin).env("HOME", &scratch).env_remove("KUBECONFIG");
        c.output().unwrap()
    };
    assert_eq!(ok("kubectl quota version", plugin(&["quota", "version"])), format!("kubectl quota {tag}\n"));
    let store = krew_root.join("store/quota").join(&tag);
    for f in ["kubectl-quota", "LICENSE", "kubectl_complete-quota"] {
        assert!(store.join(f).is_file(), "{f} installed in {}", store.display());
    }
    // kubectl quota <TAB>: kubectl runs kubectl_complete-quota from PATH (where completion
    // --help says to link it).
    std::os::unix::fs::symlink(store.join("kubectl_complete-quota"), bin.join("kubectl_complete-quota")).unwrap();
    let completed = ok("kubectl __complete quota desc", plugin(&["__complete", "quota", "desc"]));
    let lines: Vec<&str> = completed.lines().collect();
    assert!(lines.contains(&"describe") && lines.last().is_some_and(|l| l.starts_with(':')), "{completed}");
    let completed = ok("kubectl __complete quota check --out", plugin(&["__complete", "quota", "check", "--out"]));
    assert!(completed.lines().any(|l| l.starts_with("--output")), "{completed}");

    ok("kubectl krew uninstall", kubectl(&["krew", "uninstall", "quota"]).output().unwrap());
    assert!(!krew_root.join("bin/kubectl-quota").exists() && !store.exists(), "uninstalled");
    let gone = plugin(&["quota", "version"]);
    assert!(!gone.status.success(), "kubectl quota still runs after the uninstall");
    let _ = std::fs::remove_dir_all(&scratch);
}
