//! The documentation's live blocks (`<!-- docs: live RELEASE SETUP -->`, tests/common/docs.rs),
//! run against the lab as a user would type them: each line through `sh -c`, with the lab's
//! kubeconfig and the plugin on PATH (kubectl finds it as `kubectl quota`). SETUP names the
//! cluster state the block's text describes, made here first; what the server generates
//! (ReplicaSet hashes, pod suffixes, ages) is masked on both sides before comparing. A read
//! (`describe`, `why`, ...) is retried for 30 s until it prints what the block shows, as the
//! quota controller syncs a quota's usage moments after a write.
//!
//! `KUBECTL_QUOTA_LAB` names the lab's state directory; without it the test says so and
//! skips (under CI=true it fails), as every live target.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::docs as blocks;
use common::live::{client, lab, lab_version, wait_default_service_account};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, PostParams};
use kube::Client;

/// The namespaces the setups make (the docs' own names).
const NAMESPACES: &[&str] = &["shop"];

/// A fresh, empty namespace of this name: an old one is deleted and waited for.
async fn fresh_namespace(c: &Client, name: &str) {
    let api = Api::<Namespace>::all(c.clone());
    let _ = api.delete(name, &DeleteParams::default()).await;
    let deadline = Instant::now() + Duration::from_secs(120);
    while api.get_opt(name).await.unwrap().is_some() {
        assert!(Instant::now() < deadline, "namespace {name} was never deleted");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let ns: Namespace = serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap();
    api.create(&PostParams::default(), &ns).await.unwrap();
    wait_default_service_account(c, name).await;
}

/// `kubectl apply -f -` of `yaml` on the lab.
fn apply(kubeconfig: &Path, yaml: &str) {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["apply", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), yaml.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "kubectl apply: {}", String::from_utf8_lossy(&out.stderr));
}

/// The PriorityClass the docs' scoped quota names (left in place: cluster-scoped, harmless).
const HIGH: &str = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n";

/// A pod of `shop` with these requests and limits (no service account token needed).
fn pod(name: &str, requests: &str, limits: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  automountServiceAccountToken: false\n  containers:\n  - name: app\n    image: app:1\n    resources: {{requests: {{{requests}}}, limits: {{{limits}}}}}\n---\n"
    )
}

/// Makes the state a block's SETUP names.
async fn setup(c: &Client, kubeconfig: &Path, name: &str) {
    match name {
        // An empty namespace `shop` (README's and create-describe.md's `create`), in a
        // cluster with the PriorityClass `high` their `--priority-class=high` names.
        "shop" => {
            fresh_namespace(c, "shop").await;
            // Another test may have made it already (with its own value, which cannot change).
            let exists = Command::new("kubectl").arg("--kubeconfig").arg(kubeconfig).args(["get", "priorityclass", "high"]).output().unwrap().status.success();
            if !exists {
                apply(kubeconfig, HIGH);
            }
        }
        // create-describe.md's two quotas, then three pods of 1 cpu / 2Gi (limits twice that).
        "shop-three-pods" => {
            fresh_namespace(c, "shop").await;
            apply(
                kubeconfig,
                "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: shop}\nspec: {hard: {requests.cpu: '4', requests.memory: 8Gi, limits.cpu: '8', limits.memory: 16Gi, pods: '10'}}\n---\n\
                 apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: critical, namespace: shop}\nspec:\n  hard: {pods: '2', requests.cpu: '1'}\n  scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]}\n",
            );
            // The quota controller must have synced the quotas before pods are charged.
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let out = Command::new("kubectl")
                    .arg("--kubeconfig")
                    .arg(kubeconfig)
                    .args(["get", "resourcequota", "-n", "shop", "-o", "jsonpath={.items[*].status.hard}"])
                    .output()
                    .unwrap();
                if String::from_utf8_lossy(&out.stdout).matches("pods").count() == 2 {
                    break;
                }
                assert!(Instant::now() < deadline, "the quotas never synced");
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            let pods: String = (1..=3).map(|i| pod(&format!("app-{i}"), "cpu: '1', memory: 2Gi", "cpu: '2', memory: 4Gi")).collect();
            apply(kubeconfig, &pods);
        }
        other => panic!("no setup named {other:?} in tests/live_docs.rs"),
    }
}

/// What the server generates, masked: ReplicaSet hashes and pods' random suffixes (`web-5865669495-x5r6t`,
/// `web-5865669495`), and ages (`5m3s`).
fn normalise(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    // Where the last hash ended: a suffix follows it after one `-`.
    let mut hash_end = None;
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_alphanumeric() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let token: String = chars[start..i].iter().collect();
        let safe = |n: std::ops::RangeInclusive<usize>| n.contains(&token.len()) && token.chars().all(|c| SAFE.contains(c));
        let after_hash = start > 0 && chars[start - 1] == '-' && hash_end == Some(start - 1);
        hash_end = None;
        if safe(8..=10) && token.chars().any(|c| c.is_ascii_digit()) {
            out.push_str("<hash>");
            hash_end = Some(i);
        } else if after_hash && safe(5..=5) {
            out.push_str("<suffix>");
        } else {
            out.push_str(&age(&token).unwrap_or(token));
        }
    }
    out
}

/// The alphabet Kubernetes draws generated names from (apimachinery's SafeEncodeString).
const SAFE: &str = "bcdfghjklmnpqrstvwxz2456789";

/// `<age>` for an age as kubectl prints it (`5m3s`, `42s`, `3h`, `2d`); `500m` is a quantity.
fn age(w: &str) -> Option<String> {
    let units = w.chars().filter(|c| c.is_ascii_alphabetic()).count();
    let is_age = w.starts_with(|c: char| c.is_ascii_digit())
        && w.chars().all(|c| c.is_ascii_digit() || "smhd".contains(c))
        && (units >= 2 || w.ends_with(['s', 'h', 'd']));
    is_age.then(|| "<age>".to_string())
}

/// Whether a step only reads (so it may be retried until the controllers caught up).
fn reads(command: &str) -> bool {
    ["kubectl quota describe", "kubectl quota why", "kubectl quota blocked", "kubectl quota check", "kubectl quota capacity", "kubectl get"]
        .iter()
        .any(|p| command.starts_with(p))
}

/// One step through `sh -c` as a user's shell runs it; output and status.
fn run_step(command: &str, kubeconfig: &Path, cwd: &Path) -> (String, i32) {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_kubectl-quota")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let out_path = cwd.join(".out");
    let out = std::fs::File::create(&out_path).unwrap();
    let status = Command::new("sh")
        .args(["-c", command])
        .current_dir(cwd)
        .env_clear()
        .env("PATH", path)
        .env("HOME", cwd)
        .env("KUBECONFIG", kubeconfig)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .status()
        .unwrap();
    (String::from_utf8_lossy(&std::fs::read(&out_path).unwrap()).into_owned(), status.code().unwrap_or(-1))
}

#[tokio::test(flavor = "multi_thread")]
async fn every_live_block_prints_what_it_shows_on_the_lab() {
    let Some(kubeconfig) = lab() else { return };
    let c = client(&kubeconfig).await;
    let release = lab_version().to_string();
    let all = blocks::all_blocks().unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    let mut ran = 0;
    for b in &all {
        let blocks::Mode::Live { release: want, setup: name } = &b.mode else { continue };
        if want != "any" && *want != release {
            println!("{}: for {want}, the lab runs {release}: not run here", b.place());
            continue;
        }
        setup(&c, &kubeconfig, name).await;
        let cwd = std::env::temp_dir().join(format!("kq-live-docs-{}-{}", std::process::id(), b.line));
        std::fs::create_dir_all(&cwd).unwrap();
        for s in &b.steps {
            let deadline = Instant::now() + Duration::from_secs(if reads(&s.command) { 30 } else { 0 });
            let shown: Vec<String> = s.output.iter().map(|l| normalise(l)).collect();
            let masked = blocks::Step { output: shown, ..s.clone() };
            let failure = loop {
                let (got, status) = run_step(&s.command, &kubeconfig, &cwd);
                let got: String = got.lines().map(|l| normalise(l) + "\n").collect();
                match blocks::compare(b, &masked, &got, status) {
                    None => break None,
                    Some(f) if Instant::now() >= deadline => break Some(f),
                    Some(_) => tokio::time::sleep(Duration::from_millis(500)).await,
                }
            };
            ran += 1;
            if let Some(f) = failure {
                failures.push(f);
                break;
            }
        }
        let _ = std::fs::remove_dir_all(&cwd);
    }
    for ns in NAMESPACES {
        let _ = Api::<Namespace>::all(c.clone()).delete(ns, &DeleteParams::default()).await;
    }
    assert!(ran > 0, "no live block ran on {release}");
    assert!(failures.is_empty(), "{} live block(s) print something else on {release}:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn generated_names_and_ages_are_masked() {
    let cases = [
        ("web-5865669495   web:1   5         5", "web-<hash>   web:1   5         5"),
        ("pods \"api-6df87c9b75-x5r6t\" is forbidden", "pods \"api-<hash>-<suffix>\" is forbidden"),
        ("replicaset/web-755667fb9d, 4 times", "replicaset/web-<hash>, 4 times"),
        ("AGE 5m3s", "AGE <age>"),
        ("requests.cpu  3500m  4", "requests.cpu  3500m  4"),
        ("AGE 42s 3h", "AGE <age> <age>"),
        ("limits.memory 16Gi", "limits.memory 16Gi"),
    ];
    for (line, want) in cases {
        assert_eq!(normalise(line), want, "{line}");
    }
}
