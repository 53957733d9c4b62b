//! The shipped completion scripts stay in sync with the CLI, and `kubectl_complete-quota`
//! answers kubectl's plugin completion protocol.

mod common;

use std::path::Path;
use std::process::Command;

use common::{bin_without_kubeconfig, root};

#[test]
fn shipped_scripts_match_the_cli() {
    for (shell, file) in [("bash", "kubectl-quota.bash"), ("zsh", "_kubectl-quota"), ("fish", "kubectl-quota.fish"), ("powershell", "kubectl-quota.ps1")] {
        let out = bin_without_kubeconfig().args(["completion", shell]).output().unwrap();
        assert!(out.status.success());
        let shipped = std::fs::read(root().join("completions").join(file)).unwrap();
        assert!(out.stdout == shipped, "completions/{file} is stale: regenerate with `cargo run -- completion {shell} > completions/{file}`");
    }
}

#[test]
fn bash_script_is_valid_bash() {
    let out = Command::new("bash").arg("-n").arg(root().join("completions/kubectl-quota.bash")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn kubectl_complete_quota_speaks_the_plugin_protocol() {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_kubectl-quota")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![""], "check\ncreate\ndescribe\nplan\nsnapshot\nwhy\ncapacity\nuncovered\nblocked\nguard\nversion\ncompletion\n:4\n"),
        (vec!["capacity", "--by", ""], "namespace\n:4\n"),
        (vec!["de"], "describe\n:4\n"),
        (vec!["check", "-f", ""], ":0\n"),
        (vec!["describe", "-o", "w"], "wide\n:4\n"),
        (vec!["create", "q", "--dry-run="], ":4\n"),
        // No cluster reachable: nothing to offer, and no error.
        (vec!["describe", ""], ":4\n"),
        (vec!["-n", ""], ":4\n"),
    ];
    for (words, want) in cases {
        let out = Command::new(root().join("completions/kubectl_complete-quota"))
            .args(&words)
            .env("PATH", &path)
            .env_remove("KUBECONFIG")
            .env("HOME", "/nonexistent")
            .env("KUBERNETES_SERVICE_HOST", "")
            .output()
            .unwrap();
        assert!(out.status.success(), "{words:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{words:?}");
    }
}

#[test]
fn context_names_with_control_characters_are_not_offered() {
    // A newline would inject a candidate of its own; an escape sequence would drive the
    // terminal. Such names are dropped; the others are offered as they are.
    let dir = std::env::temp_dir().join(format!("kq-completion-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("config");
    let context = |name: &str| format!("- name: {}\n  context: {{cluster: c, user: u}}\n", serde_json::to_string(name).unwrap());
    let names = ["prod", "evil\ninjected", "title\u{1b}]0;owned\u{7}", "staging"];
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: 'https://127.0.0.1:1'}}\nusers:\n- name: u\n  user: {{}}\ncontexts:\n{}current-context: prod\n",
        names.iter().map(|n| context(n)).collect::<String>()
    );
    std::fs::write(&kubeconfig, text).unwrap();
    let out = bin_without_kubeconfig().arg("__complete").arg("--kubeconfig").arg(&kubeconfig).args(["--context", ""]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "prod\nstaging\n:4\n");
    let _ = std::fs::remove_dir_all(dir);
}
