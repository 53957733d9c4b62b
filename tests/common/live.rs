//! Shared by the live suites: finding the test cluster, a client for it, running the plugin.

use std::path::{Path, PathBuf};
use std::process::Output;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

/// The test cluster's state directory (`KUBECTL_QUOTA_LAB`). Without one the live tests skip
/// loudly, except under CI, where they fail.
pub fn lab_dir() -> Option<PathBuf> {
    match std::env::var("KUBECTL_QUOTA_LAB") {
        Ok(dir) => Some(PathBuf::from(dir)),
        Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("live tests need the lab cluster under CI: run them through tests/run-all.sh")
        }
        Err(_) => {
            eprintln!("\n*** SKIPPED: live tests need a real cluster; run tests/run-all.sh (as root on Debian) to build and start one ***\n");
            None
        }
    }
}

pub async fn client(kubeconfig: &Path) -> Client {
    let kc = Kubeconfig::read_from(kubeconfig).unwrap();
    let config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await.unwrap();
    Client::try_from(config).unwrap()
}

/// Runs the plugin binary against a kubeconfig.
pub fn plugin(kubeconfig: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-quota"))
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .output()
        .unwrap()
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}
