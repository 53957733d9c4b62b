//! Quota checks where the pipeline is: `-k` (a kustomization built by kubectl), `-f URL` (read
//! from a loopback HTTP server started here), `-o junit` (read by a real JUnit consumer),
//! GitHub Actions annotations (checked line by line), the pre-commit hook (run by the
//! `pre-commit` tool itself) and the GitHub Action's steps (run as the runner runs them).
//!
//! Tools these tests need (kubectl; pre-commit; python3 with junitparser and xmlschema;
//! git, curl, tar) are installed by tests/run-all.sh where it can. Without one a test says so
//! loudly and skips, except under CI=true, where it fails.
//!
//! Why one file of this length: every test here shares the loopback server, the scratch
//! repository and the Action's step runner, and each section is one way into CI.

mod common;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::ci::{run_action, serve, yaml, Reply};
use common::{bin, root};
use serde_json::Value;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Whether a tool this test needs is here; without it the test skips loudly (fails under CI).
fn have(what: &str, probe: &mut Command) -> bool {
    let ok = probe.stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
    if !ok {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{what} is needed under CI: tests/run-all.sh installs it");
        }
        eprintln!("\n*** SKIPPED: {what} is not available (tests/run-all.sh installs it) ***\n");
    }
    ok
}

fn have_kubectl() -> bool {
    have("kubectl (for kubectl kustomize)", Command::new("kubectl").args(["kustomize", "--help"]))
}

fn have_junit_consumer() -> bool {
    have("python3 with junitparser and xmlschema", Command::new("python3").args(["-c", "import junitparser, xmlschema"]))
}

/// A fresh scratch directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kq-ci-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const EXAMPLE: [&str; 6] = ["-f", "examples/app.yaml", "--state", "examples/cluster-state.yaml", "-n", "shop"];

// --- -f URL ------------------------------------------------------------------------------

#[test]
fn urls_are_read_as_kubectl_reads_them_and_bounded() {
    let app = std::fs::read(root().join("examples/app.yaml")).unwrap();
    let routes = BTreeMap::from([
        ("/app.yaml".to_string(), Reply::Body(app)),
        ("/moved".to_string(), Reply::Redirect("/app.yaml".into())),
        ("/loop".to_string(), Reply::Redirect("/loop".into())),
        ("/endless".to_string(), Reply::Endless),
        ("/silent".to_string(), Reply::Silent),
    ]);
    let base = serve(routes);
    // (path, extra env, exit status, what standard error says)
    type Case<'a> = (&'a str, Option<(&'a str, &'a str)>, i32, &'a str);
    let cases: [Case; 7] = [
        ("/app.yaml", None, 1, ""),
        ("/moved", None, 1, ""),
        ("/missing.yaml", None, 2, "the server answered 404 Not Found"),
        ("/loop", None, 2, "more than 10 redirects"),
        ("/endless", Some(("KUBECTL_QUOTA_MAX_INPUT_BYTES", "100000")), 2, "larger than 100000 bytes"),
        ("/silent", Some(("KUBECTL_QUOTA_URL_TIMEOUT", "1")), 2, "no complete answer within 1 s"),
        ("/app.yaml", Some(("KUBECTL_QUOTA_URL_TIMEOUT", "1")), 1, ""),
    ];
    for (path, env, code, says) in cases {
        let url = format!("{base}{path}");
        let mut c = bin();
        c.args(["check", "-f", &url, "-n", "shop", "--quiet"]);
        // The state through a file: the URL is the only thing read from the server.
        c.args(["--state", "examples/cluster-state.yaml"]);
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{path}: {err}");
        if code == 2 {
            assert!(err.contains(&format!("error: {url}: ")), "{path}: the error names the URL: {err}");
            assert!(err.contains(says), "{path}: {err}");
        } else {
            assert!(text(&out.stdout).contains("pod/payments-worker: refused by quota compute"), "{path}");
        }
    }
    // A connection refused names the URL too.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let url = format!("http://{closed}/app.yaml");
    let out = bin().args(["check", "-f", &url, "--state", "examples/cluster-state.yaml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(&format!("error: {url}: cannot read: ")), "{}", text(&out.stderr));
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// An HTTPS server on loopback with a certificate of a CA nobody trusts (made here); it
/// answers nothing past the handshake. Returns its base URL.
fn self_signed_server() -> String {
    let issued = kubectl_quota::guard::tls::issue(&["127.0.0.1".into()]).unwrap();
    common::tls::server(&scratch("self-signed"), &issued.cert, &issued.key)
}

#[test]
fn redirects_encodings_and_certificates_are_handled_as_kubectl_handles_them() {
    let app = std::fs::read(root().join("examples/app.yaml")).unwrap();
    let other = serve(BTreeMap::from([("/app.yaml".to_string(), Reply::Body(app.clone()))]));
    let network_path = other.trim_start_matches("http:").to_string() + "/app.yaml";
    let routes = BTreeMap::from([
        ("/to-file".to_string(), Reply::Redirect("file:///etc/passwd".into())),
        ("/network-path".to_string(), Reply::Redirect(network_path)),
        ("/utf8".to_string(), Reply::Redirect("/caf\u{e9}/\u{6587}.yaml".into())),
        ("/caf%C3%A9/%E6%96%87.yaml".to_string(), Reply::Body(app.clone())),
        ("/gzip".to_string(), Reply::Gzip(gzip(&app))),
        ("/gzip-bomb".to_string(), Reply::Gzip(gzip(&vec![b'#'; 10 << 20]))),
    ]);
    let base = serve(routes);
    let tls = self_signed_server();
    // (URL, exit status, what standard error says)
    let cases = [
        (format!("{base}/to-file"), 2, "with a Location \"file:///etc/passwd\": unsupported protocol scheme \"file\" (only http and https URLs are read)"),
        (format!("{base}/network-path"), 1, ""),
        (format!("{base}/utf8"), 1, ""),
        (format!("{base}/gzip"), 1, ""),
        (format!("{base}/gzip-bomb"), 2, "larger than 100000 bytes (set KUBECTL_QUOTA_MAX_INPUT_BYTES to allow more) once decoded from gzip"),
        (format!("{tls}/app.yaml"), 2, "tls: failed to verify certificate: x509: certificate signed by unknown authority"),
    ];
    for (url, code, says) in cases {
        let out = bin()
            .args(["check", "-f", &url, "-n", "shop", "--quiet", "--state", "examples/cluster-state.yaml"])
            .env("KUBECTL_QUOTA_URL_TIMEOUT", "10")
            .env("KUBECTL_QUOTA_MAX_INPUT_BYTES", "100000")
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{url}: {err}");
        if code == 2 {
            assert!(err.starts_with(&format!("error: {url}: ")) && err.contains(says), "{url}: {err}");
        } else {
            assert!(text(&out.stdout).contains("pod/payments-worker: refused by quota compute"), "{url}: {err}");
        }
    }
}

/// A proxy on loopback that records each request's first line and answers it: an absolute-form
/// GET with the example manifest, a CONNECT with 403 (no TLS here: the tunnel being asked
/// for is what is checked).
fn proxy() -> (String, std::sync::mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let app = std::fs::read(root().join("examples/app.yaml")).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push(line.trim_end().to_string());
            }
            let first = head.first().cloned().unwrap_or_default();
            let _ = tx.send(head.join("\n"));
            let mut w = stream;
            if first.starts_with("CONNECT ") {
                let _ = w.write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n");
            } else {
                let _ = write!(w, "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", app.len());
                let _ = w.write_all(&app);
            }
        }
    });
    (format!("http://{addr}"), rx)
}

#[test]
fn urls_go_through_the_proxy_the_environment_names_as_kubectl_does() {
    let (proxy_url, seen) = proxy();
    let check = |url: &str, env: &[(&str, &str)]| {
        let mut c = bin();
        for v in ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "ALL_PROXY", "all_proxy"] {
            c.env_remove(v);
        }
        c.args(["check", "-f", url, "-n", "shop", "--quiet", "--state", "examples/cluster-state.yaml"]).env("KUBECTL_QUOTA_URL_TIMEOUT", "5");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let drain = || seen.try_iter().collect::<Vec<String>>();
    // http: asked of the proxy in absolute form, with the origin's Host.
    let out = check("http://manifests.example.invalid/app.yaml", &[("HTTP_PROXY", &proxy_url)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("pod/payments-worker: refused by quota compute"));
    let asked = drain();
    assert!(asked.len() == 1 && asked[0].starts_with("GET http://manifests.example.invalid/app.yaml HTTP/1.1"), "{asked:?}");
    assert!(asked[0].to_lowercase().contains("host: manifests.example.invalid"), "{asked:?}");
    // The lower-case spelling too, with credentials sent as Proxy-Authorization.
    let with_user = proxy_url.replace("http://", "http://me:secret@");
    let out = check("http://manifests.example.invalid/app.yaml", &[("http_proxy", &with_user)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let asked = drain();
    assert!(asked.len() == 1 && asked[0].to_lowercase().contains("proxy-authorization: basic bwu6c2vjcmv0"), "{asked:?}");
    // https: a CONNECT tunnel to the origin's host and port; the proxy's refusal is the error.
    let out = check("https://manifests.example.invalid/app.yaml", &[("HTTPS_PROXY", &proxy_url)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("error: https://manifests.example.invalid/app.yaml: cannot read: ") && text(&out.stderr).contains("through proxy"),
        "{}",
        text(&out.stderr)
    );
    let asked = drain();
    assert!(asked.len() == 1 && asked[0].starts_with("CONNECT manifests.example.invalid:443 HTTP/1.1"), "{asked:?}");
    // NO_PROXY, ALL_PROXY (which kubectl ignores) and loopback: straight to the host, the proxy
    // never asked (an .invalid name does not resolve).
    for env in [
        vec![("HTTP_PROXY", proxy_url.as_str()), ("NO_PROXY", "example.invalid")],
        vec![("HTTP_PROXY", proxy_url.as_str()), ("no_proxy", ".example.invalid")],
        vec![("ALL_PROXY", proxy_url.as_str())],
    ] {
        let out = check("http://manifests.example.invalid/app.yaml", &env);
        assert_eq!(out.status.code(), Some(2), "{env:?}: {}", text(&out.stderr));
        assert!(!text(&out.stderr).contains("through proxy"), "{env:?}: {}", text(&out.stderr));
        assert_eq!(drain(), Vec::<String>::new(), "{env:?}");
    }
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let out = check(&format!("http://{closed}/app.yaml"), &[("HTTP_PROXY", &proxy_url)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(drain(), Vec::<String>::new(), "loopback is never proxied");
}

#[test]
fn documents_from_a_url_point_at_the_url_and_line() {
    let base = serve(BTreeMap::from([("/app.yaml".to_string(), Reply::Body(std::fs::read(root().join("examples/app.yaml")).unwrap()))]));
    let url = format!("{base}/app.yaml");
    let out = bin().args(["check", "-f", &url, "--state", "examples/cluster-state.yaml", "-n", "shop", "-o", "json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sources: Vec<(String, u64)> = report["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["source"]["file"].as_str().unwrap().to_string(), d["source"]["line"].as_u64().unwrap()))
        .collect();
    let local = bin().args(["check", "-o", "json"]).args(EXAMPLE).output().unwrap();
    let local: Value = serde_json::from_slice(&local.stdout).unwrap();
    let lines: Vec<u64> = local["documents"].as_array().unwrap().iter().map(|d| d["source"]["line"].as_u64().unwrap()).collect();
    assert_eq!(sources, lines.iter().map(|l| (url.clone(), *l)).collect::<Vec<_>>());
}

// --- -k ----------------------------------------------------------------------------------

#[test]
fn a_kustomization_is_built_as_kubectl_apply_k_builds_it() {
    if !have_kubectl() {
        return;
    }
    let args = ["check", "-k", "tests/ci/kustomize/prod", "--state", "examples/cluster-state.yaml", "-n", "shop"];
    let out = bin().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    golden("check-kustomize", &text(&out.stdout));
    // Each document is named by the kustomization and its resource id, not by a line of the
    // build's output that its author never sees.
    let json = bin().args(args).args(["-o", "json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    let sources: Vec<&Value> = report["documents"].as_array().unwrap().iter().map(|d| &d["source"]).collect();
    for s in &sources {
        assert_eq!(s["file"], "tests/ci/kustomize/prod/kustomization.yaml");
        assert!(s.get("line").is_none(), "{s}");
    }
    let ids: Vec<&str> = sources.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["Deployment/shop/web", "Pod/shop/worker"]);
}

#[test]
fn plan_takes_a_kustomization_and_a_url_too() {
    let base = serve(BTreeMap::from([("/app.yaml".to_string(), Reply::Body(std::fs::read(root().join("examples/app.yaml")).unwrap()))]));
    let from_url = bin().args(["plan", "-f", &format!("{base}/app.yaml"), "--state", "examples/cluster-state.yaml", "-n", "shop"]).output().unwrap();
    let from_file = bin().args(["plan", "-f", "examples/app.yaml", "--state", "examples/cluster-state.yaml", "-n", "shop"]).output().unwrap();
    assert_eq!(from_url.status.code(), Some(1), "{}", text(&from_url.stderr));
    assert_eq!(text(&from_url.stdout), text(&from_file.stdout));
    if !have_kubectl() {
        return;
    }
    let out = bin().args(["plan", "-k", "tests/ci/kustomize/prod", "--state", "examples/cluster-state.yaml", "-n", "shop", "-o", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    // 6 replicas of web and the worker: 7 pods, 3 more than quota compute leaves room for.
    let compute = plan["quotas"].as_array().unwrap().iter().find(|q| q["name"] == "compute").unwrap();
    let pods = compute["resources"].as_array().unwrap().iter().find(|r| r["resource"] == "pods").unwrap();
    assert_eq!((pods["requested"].as_str(), pods["missing"].as_str()), (Some("7"), Some("3")), "{plan}");
}

#[test]
fn a_kustomization_that_cannot_be_built_is_an_error_naming_why() {
    let empty = scratch("no-kustomization");
    let no_tools = scratch("no-tools");
    let cases: Vec<(PathBuf, Option<&Path>, &str)> = vec![
        (empty.clone(), None, "-k: no kustomization here (kustomization.yaml, kustomization.yml, Kustomization)"),
        (
            root().join("tests/ci/kustomize/prod"),
            Some(&no_tools),
            "-k: building a kustomization needs kubectl (`kubectl kustomize`) or kustomize on PATH; neither was found",
        ),
    ];
    for (dir, path, says) in cases {
        let mut c = bin();
        c.args(["check", "-k"]).arg(&dir).args(["--state", "examples/cluster-state.yaml"]);
        if let Some(p) = path {
            c.env("PATH", p);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(text(&out.stderr), format!("error: {}: {says}\n", dir.display()));
    }
    if have_kubectl() {
        // A kustomization kubectl refuses: its own words, and exit 2.
        let bad = scratch("bad-kustomization");
        std::fs::write(bad.join("kustomization.yaml"), "resources:\n- missing.yaml\n").unwrap();
        let out = bin().args(["check", "-k"]).arg(&bad).args(["--state", "examples/cluster-state.yaml"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(err.starts_with(&format!("error: {}: -k: kubectl kustomize failed (exit status: 1): ", bad.display())), "{err}");
        assert!(err.contains("missing.yaml"), "{err}");
        let _ = std::fs::remove_dir_all(bad);
    }
    let _ = std::fs::remove_dir_all(empty);
    let _ = std::fs::remove_dir_all(no_tools);
}

/// A directory holding one program, `kubectl`, with the shell script `body`, and a PATH with
/// it first (the shell and coreutils after it).
fn fake_kubectl(name: &str, body: &str) -> (PathBuf, String) {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch(name);
    let bin_dir = dir.join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let program = bin_dir.join("kubectl");
    std::fs::write(&program, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin_dir.display());
    (dir, path)
}

/// Whether process `pid` has ended (gone, or a zombie left for its parent to reap), waiting
/// up to 10 s for it to.
fn ended(pid: u32) -> bool {
    for _ in 0..1000 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')) => return true,
            Ok(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
    false
}

#[test]
fn a_kustomize_build_that_never_ends_is_stopped_at_the_deadline_with_its_children() {
    // A build that fetches a remote resource from a server that never answers: the program
    // (and the child it started) would wait for ever.
    let (dir, path) = fake_kubectl("kustomize-silent", "sleep 120 &\necho $! > \"$KQ_CHILD\"\nsleep 120\n");
    std::fs::write(dir.join("kustomization.yaml"), "resources:\n- https://manifests.example.invalid/app.yaml\n").unwrap();
    let pid_file = dir.join("child.pid");
    let out = bin()
        .args(["check", "-k"])
        .arg(&dir)
        .args(["--state", "examples/cluster-state.yaml"])
        .env("PATH", &path)
        .env("KQ_CHILD", &pid_file)
        .env("KUBECTL_QUOTA_URL_TIMEOUT", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!("error: {}: -k: kubectl kustomize did not finish within 1 s (set KUBECTL_QUOTA_URL_TIMEOUT to wait longer); it was stopped\n", dir.display())
    );
    let child: u32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert!(ended(child), "the build's own child {child} was left running");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_kustomize_value_that_starts_with_a_dash_is_a_path() {
    // The program records its arguments and builds one Pod.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\nspec:\n  containers: [{name: c, image: i}]\n";
    let (dir, path) = fake_kubectl("kustomize-dash", &format!("printf '%s\\n' \"$@\" > \"$KQ_ARGS\"\ncat <<'EOF'\n{pod}EOF\n"));
    let odd = dir.join("--load-restrictor=LoadRestrictionsNone");
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::write(odd.join("kustomization.yaml"), "resources: [pod.yaml]\n").unwrap();
    let args = dir.join("args");
    let out = bin()
        .current_dir(&dir)
        .args(["check", "--kustomize=--load-restrictor=LoadRestrictionsNone", "--state"])
        .arg(root().join("examples/cluster-state.yaml"))
        .args(["-o", "json"])
        .env("PATH", &path)
        .env("KQ_ARGS", &args)
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&args).unwrap(), "kustomize\n./--load-restrictor=LoadRestrictionsNone\n");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["documents"][0]["source"]["id"], "Pod/shop/p");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn helm_template_output_is_read_from_standard_input() {
    // `helm template ... | kubectl quota check -f -`: any program writing YAML stands in for
    // helm here; what matters is the pipe.
    let mut child = Command::new("cat").arg("examples/app.yaml").current_dir(root()).stdout(Stdio::piped()).spawn().unwrap();
    let out = bin()
        .args(["check", "-f", "-", "--state", "examples/cluster-state.yaml", "-n", "shop", "--quiet"])
        .stdin(child.stdout.take().unwrap())
        .output()
        .unwrap();
    child.wait().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let file = bin().args(["check", "--quiet"]).args(EXAMPLE).output().unwrap();
    assert_eq!(text(&out.stdout), text(&file.stdout));
}

// --- golden output -----------------------------------------------------------------------

/// Compares with tests/golden/NAME.txt (`UPDATE_GOLDEN=1` rewrites it).
fn golden(name: &str, got: &str) {
    let path = root().join("tests/golden").join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("missing {}: run with UPDATE_GOLDEN=1", path.display()));
    assert_eq!(got, want, "{name} differs from {}", path.display());
}

// --- JUnit -------------------------------------------------------------------------------

/// Inputs whose JUnit reports are read back: the example, a rollout that stalls, and corpus
/// cases of every outcome.
fn junit_cases() -> Vec<Vec<String>> {
    let mut cases = vec![
        EXAMPLE.iter().map(|s| s.to_string()).collect(),
        ["-f", "tests/golden/rollout-app.yaml", "--state", "tests/golden/rollout-state.yaml", "-n", "shop"].iter().map(|s| s.to_string()).collect(),
    ];
    // A workload refused itself (its pods' test case is skipped).
    cases.push(
        ["-f", "tests/ci/refused-workload/app.yaml", "--state", "tests/ci/refused-workload/state.yaml", "-n", "ns"].iter().map(|s| s.to_string()).collect(),
    );
    for c in ["1000-compute-fits", "1005-compute-missing-all", "1057-deployment-replicas-partial", "1029-two-quotas-both-fail", "4000-s-limited-scope-no-quota"]
    {
        let dir = format!("tests/conformance/{c}");
        cases.push(vec![
            "-f".into(),
            format!("{dir}/candidate.yaml"),
            "--state".into(),
            "tests/conformance/cluster-scoped.yaml".into(),
            "--state".into(),
            format!("{dir}/state.yaml"),
            "-n".into(),
            "NAMESPACE".into(),
        ]);
    }
    cases
}

/// A test case as read: name, class, line, its failure's message, and whether it was skipped.
type JunitCase = (String, String, Option<String>, Option<String>, bool);

#[test]
fn junit_reports_are_read_by_a_junit_consumer() {
    if !have_junit_consumer() {
        return;
    }
    let dir = scratch("junit");
    for (i, args) in junit_cases().iter().enumerate() {
        let xml = bin().arg("check").args(args).args(["-o", "junit"]).output().unwrap();
        let json = bin().arg("check").args(args).args(["-o", "json"]).output().unwrap();
        assert_eq!(xml.status.code(), json.status.code(), "{args:?}: the same exit status whatever the output");
        let file = dir.join(format!("report-{i}.xml"));
        std::fs::write(&file, &xml.stdout).unwrap();
        let read = Command::new("python3").arg(root().join("tests/ci/junit_read.py")).arg(&file).output().unwrap();
        assert!(read.status.success(), "{args:?}: the consumer refused the report: {}", text(&read.stderr));
        let suites: Value = serde_json::from_slice(&read.stdout).unwrap();
        let suite = &suites[0];
        let report: Value = serde_json::from_slice(&json.stdout).unwrap();
        let documents = report["documents"].as_array().unwrap();
        // One test case per document, one more per workload; a failure per refusal, carrying
        // the server's message.
        let mut want: Vec<JunitCase> = Vec::new();
        for d in documents {
            let file = d["source"]["file"].as_str().unwrap();
            let line = d["source"]["line"].as_u64().map(|l| l.to_string());
            let name =
                format!("{}/{} (namespace {})", d["kind"].as_str().unwrap().to_lowercase(), d["name"].as_str().unwrap(), d["namespace"].as_str().unwrap());
            let outcome = d["outcome"].as_str().unwrap();
            let refused = (outcome == "refused").then(|| d["message"].as_str().unwrap().to_string());
            want.push((name.clone(), file.to_string(), line.clone(), refused, false));
            let kind = d["kind"].as_str().unwrap();
            let workload = ["Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Job", "CronJob"].contains(&kind);
            if workload {
                let message = match outcome {
                    "podsRefused" | "podsPending" => Some(d["podMessage"].as_str().unwrap().to_string()),
                    "rolloutStalls" => Some(d["rollout"]["stall"]["message"].as_str().unwrap().to_string()),
                    _ => None,
                };
                // A refused workload's pods are skipped: none is created.
                want.push((format!("{name}: pods"), file.to_string(), line, message, outcome == "refused"));
            }
        }
        let got: Vec<JunitCase> = suite["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let failures = c["failures"].as_array().unwrap();
                assert!(failures.len() <= 1);
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["classname"].as_str().unwrap().to_string(),
                    c["line"].as_str().map(str::to_string),
                    failures.first().map(|f| f["message"].as_str().unwrap().to_string()),
                    c["skipped"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, want, "{args:?}");
        assert_eq!(suite["tests"].as_u64().unwrap() as usize, want.len());
        assert_eq!(suite["failures"].as_u64().unwrap() as usize, want.iter().filter(|w| w.3.is_some()).count());
        assert_eq!(suite["skipped"].as_u64().unwrap() as usize, want.iter().filter(|w| w.4).count());
        let refused = documents.iter().filter(|d| d["outcome"] != "admitted").count();
        assert_eq!(suite["failures"].as_u64().unwrap() as usize, refused, "{args:?}: a failure per refused document");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_check_that_cannot_run_writes_a_junit_report_with_the_error_as_a_failed_case() {
    if !have_junit_consumer() {
        return;
    }
    let dir = scratch("junit-error");
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "apiVersion: v1\nkind: Pod\nmetadata: {name: [not, a, name]}\n").unwrap();
    let out = bin().args(["check", "-f"]).arg(&bad).args(["--state", "examples/cluster-state.yaml", "-o", "junit"]).output().unwrap();
    // The exit status and standard error stay those of an input error.
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.starts_with(&format!("error: {}", bad.display())), "{err}");
    let file = dir.join("report.xml");
    std::fs::write(&file, &out.stdout).unwrap();
    let read = Command::new("python3").arg(root().join("tests/ci/junit_read.py")).arg(&file).output().unwrap();
    assert!(read.status.success(), "the consumer refused the report: {}\n{}", text(&read.stderr), text(&out.stdout));
    let suites: Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!((suites[0]["tests"].as_u64(), suites[0]["failures"].as_u64()), (Some(1), Some(1)), "{suites}");
    let case = &suites[0]["cases"][0];
    assert_eq!(case["name"], "the check could not run");
    assert_eq!(case["failures"][0]["message"].as_str(), err.lines().next().and_then(|l| l.strip_prefix("error: ")), "{suites}");
    let _ = std::fs::remove_dir_all(dir);
}

// --- GitHub annotations ------------------------------------------------------------------

/// A workflow command's data decoded (`%25`, `%0D`, `%0A`; in properties `%3A`, `%2C` too).
fn decode(s: &str) -> String {
    s.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
}

/// An `::error` line as (properties, message), both decoded.
fn parse_annotation(line: &str) -> (BTreeMap<String, String>, String) {
    let rest = line.strip_prefix("::error ").unwrap_or_else(|| panic!("not an error annotation: {line:?}"));
    let (props, message) = rest.split_once("::").unwrap();
    assert!(!message.contains('\n') && !message.contains('\r'), "{line:?}");
    let props = props
        .split(',')
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap();
            assert!(!v.contains(':'), "a property's ':' is escaped: {line:?}");
            (k.to_string(), decode(v))
        })
        .collect();
    (props, decode(message))
}

#[test]
fn annotations_point_at_each_refused_documents_first_line() {
    for args in junit_cases() {
        let out = bin().arg("check").args(&args).args(["-o", "github"]).output().unwrap();
        let json = bin().arg("check").args(&args).args(["-o", "json"]).output().unwrap();
        assert_eq!(out.status.code(), json.status.code(), "{args:?}");
        let report: Value = serde_json::from_slice(&json.stdout).unwrap();
        let refused: Vec<&Value> = report["documents"].as_array().unwrap().iter().filter(|d| d["outcome"] != "admitted").collect();
        let stdout = text(&out.stdout);
        let (errors, others): (Vec<&str>, Vec<&str>) = stdout.lines().partition(|l| l.starts_with("::error "));
        assert!(others.iter().all(|l| l.starts_with("::warning title=quota check::")), "{args:?}: {others:?}");
        assert_eq!(errors.len(), refused.len(), "{args:?}: one annotation per refused document");
        for (line, d) in errors.iter().zip(&refused) {
            let (props, message) = parse_annotation(line);
            let file = d["source"]["file"].as_str().unwrap();
            assert_eq!(props["file"], file);
            let at: usize = props["line"].parse().unwrap();
            assert_eq!(at as u64, d["source"]["line"].as_u64().unwrap());
            // The line is the document's first: its first key (a comment or `---` never).
            let source = std::fs::read_to_string(root().join(file)).unwrap();
            let first = source.lines().nth(at - 1).unwrap();
            assert!(!first.starts_with('#') && !first.starts_with("---") && !first.trim().is_empty(), "{file}:{at}: {first:?}");
            let who = format!("{}/{}", d["kind"].as_str().unwrap().to_lowercase(), d["name"].as_str().unwrap());
            assert!(props["title"].contains(&who), "{line}");
            assert!(message.starts_with(&format!("{who}: ")), "{message}");
            if let Some(server) = d.get("serverError").and_then(Value::as_str) {
                assert!(message.contains(&format!("\nserver: {server}")), "{message}");
            }
        }
    }
}

#[test]
fn under_github_actions_the_report_comes_first_then_the_annotations() {
    let run = |github: bool, extra: &[&str]| {
        let mut c = bin();
        c.arg("check").args(EXAMPLE).args(extra);
        if github {
            c.env("GITHUB_ACTIONS", "true");
        }
        text(&c.output().unwrap().stdout)
    };
    let plain = run(false, &[]);
    let annotations = run(false, &["-o", "github"]);
    let both = run(true, &[]);
    let warnings: String = annotations.lines().filter(|l| l.starts_with("::warning")).map(|l| format!("{l}\n")).collect();
    let errors: String = annotations.lines().filter(|l| l.starts_with("::error")).map(|l| format!("{l}\n")).collect();
    assert_eq!(both, format!("{plain}{errors}{warnings}"));
    // An output chosen with -o is that output alone.
    assert_eq!(run(true, &["-o", "text"]), plain);
    assert_eq!(run(true, &["-o", "json"]), run(false, &["-o", "json"]));
    let quiet = run(true, &["--quiet"]);
    assert_eq!(quiet, format!("{}{errors}{warnings}", run(false, &["--quiet"])));
}

#[test]
fn a_check_that_cannot_run_is_annotated_under_github_actions() {
    let dir = scratch("broken");
    let file = dir.join("broken.yaml");
    std::fs::write(&file, "apiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n").unwrap();
    let out = bin().env("GITHUB_ACTIONS", "true").args(["check", "-f"]).arg(&file).args(["--state", "examples/cluster-state.yaml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    let stdout = text(&out.stdout);
    let message = err.strip_prefix("error: ").unwrap().trim_end();
    assert_eq!(stdout, format!("::error title=quota check could not run::{}\n", message.replace('%', "%25").replace('\n', "%0A")));
    // Without GitHub Actions, or with another output, standard output stays empty.
    let plain = bin().args(["check", "-f"]).arg(&file).args(["--state", "examples/cluster-state.yaml"]).output().unwrap();
    assert_eq!(text(&plain.stdout), "");
    assert_eq!(text(&plain.stderr), err);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn annotation_text_is_escaped_as_github_requires() {
    let dir = scratch("escaping");
    // A file name with the characters a property must escape, an object name GitHub's
    // data escaping must carry (`%`), and a control character made visible.
    let file = dir.join("app,v2: 100%.yaml");
    std::fs::write(&file, "# leading comment\n\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"bad%0Aname\\u001b\"}\n").unwrap();
    let out = bin().args(["check", "-f"]).arg(&file).args(["--state", "examples/cluster-state.yaml", "-n", "shop", "-o", "github"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let line = stdout.lines().find(|l| l.starts_with("::error")).unwrap();
    assert!(
        line.starts_with(&format!("::error file={},line=4,title=", file.display().to_string().replace('%', "%25").replace(':', "%3A").replace(',', "%2C"))),
        "{line}"
    );
    assert!(!line.contains('\x1b'), "{line:?}");
    let (props, message) = parse_annotation(line);
    assert_eq!(props["file"], file.display().to_string());
    assert!(props["title"].contains("configmap/bad%0Aname^["), "{props:?}");
    assert!(message.starts_with("configmap/bad%0Aname^[: invalid: "), "{message}");
    let _ = std::fs::remove_dir_all(dir);
}

// --- the pre-commit hook -----------------------------------------------------------------

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
}

#[test]
fn the_pre_commit_hook_checks_staged_manifests_under_pre_commit() {
    if !have("pre-commit", Command::new("pre-commit").arg("--version")) || !have("git", Command::new("git").arg("--version")) {
        return;
    }
    let dir = scratch("pre-commit");
    // The hook's repository: this repository's hook definition and entry, committed as they
    // are in the working tree (pre-commit clones a hook repository at a revision).
    let hooks = dir.join("hooks");
    std::fs::create_dir_all(hooks.join("scripts")).unwrap();
    std::fs::copy(root().join(".pre-commit-hooks.yaml"), hooks.join(".pre-commit-hooks.yaml")).unwrap();
    std::fs::copy(root().join("scripts/pre-commit-quota-check"), hooks.join("scripts/pre-commit-quota-check")).unwrap();
    git(&hooks, &["init", "-q"]);
    git(&hooks, &["add", "."]);
    git(&hooks, &["commit", "-qm", "hooks"]);
    let rev = text(&Command::new("git").args(["rev-parse", "HEAD"]).current_dir(&hooks).output().unwrap().stdout).trim().to_string();
    // The team's repository: manifests, a snapshot, and the hook configured as the README says.
    let team = dir.join("team");
    std::fs::create_dir_all(team.join("deploy")).unwrap();
    std::fs::create_dir_all(team.join(".quota")).unwrap();
    std::fs::copy(root().join("examples/cluster-state.yaml"), team.join(".quota/state.yaml")).unwrap();
    let config = format!(
        "repos:\n- repo: {}\n  rev: {rev}\n  hooks:\n  - id: kubectl-quota-check\n    files: ^deploy/\n    args: [--state=.quota/state.yaml, --namespace=shop]\n",
        hooks.display()
    );
    std::fs::write(team.join(".pre-commit-config.yaml"), config).unwrap();
    std::fs::write(team.join("deploy/fits.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n").unwrap();
    git(&team, &["init", "-q"]);
    git(&team, &["add", "."]);
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_kubectl-quota")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let pre_commit = |args: &[&str]| -> Output {
        Command::new("pre-commit")
            .args(args)
            .current_dir(&team)
            .env("PATH", &path)
            .env("PRE_COMMIT_HOME", dir.join("cache"))
            .env_remove("GITHUB_ACTIONS")
            .output()
            .unwrap()
    };
    // What is staged fits: the hook passes.
    let out = pre_commit(&["run"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("kubectl quota check"), "{}", text(&out.stdout));
    // A staged manifest that quota refuses: the hook fails with the verdict.
    std::fs::copy(root().join("examples/app.yaml"), team.join("deploy/app.yaml")).unwrap();
    git(&team, &["add", "deploy/app.yaml"]);
    let out = pre_commit(&["run"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("Failed"), "{stdout}");
    assert!(stdout.contains("pod/payments-worker: refused by quota compute"), "{stdout}");
    // Only what is staged is checked: an unstaged file is not.
    std::fs::write(team.join("deploy/app.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n").unwrap();
    let out = pre_commit(&["run"]);
    assert_eq!(out.status.code(), Some(1), "the staged version is checked: {}", text(&out.stdout));
    let _ = std::fs::remove_dir_all(dir);
}

// --- the GitHub Action's steps -----------------------------------------------------------

#[test]
fn the_actions_steps_install_check_and_fail_the_job_on_a_refusal() {
    if !have("curl, tar and sha256sum", Command::new("sh").args(["-c", "command -v curl && command -v tar && command -v sha256sum"])) {
        return;
    }
    eprintln!(
        "note: not exercised here (no network): downloads from github.com itself, `install: cargo`, and GitHub's own \
         rendering of the annotations; the release download runs against a loopback server holding an archive laid out as scripts/release.sh lays it out"
    );
    let dir = scratch("action");
    let binary = Path::new(env!("CARGO_BIN_EXE_kubectl-quota"));
    let bin_dir = binary.parent().unwrap().display().to_string();
    let system = "/usr/local/bin:/usr/bin:/bin";
    let with_binary = format!("{bin_dir}:{system}");

    // 1. The plugin already on PATH: nothing is downloaded; the check fails the job on the
    // example's refusals, with the report, the annotations, the step's output and summary.
    let junit = dir.join("quota.xml");
    let inputs = [("files", "examples/app.yaml"), ("state", "examples/cluster-state.yaml"), ("namespace", "shop"), ("junit-file", junit.to_str().unwrap())];
    let run = run_action(&dir, &inputs, &with_binary, root());
    assert_eq!(run.steps.len(), 2);
    assert!(run.steps[0].status.success(), "{}", text(&run.steps[0].stdout));
    assert!(text(&run.steps[0].stdout).contains(&format!("using {}", binary.display())), "{}", text(&run.steps[0].stdout));
    let check = &run.steps[1];
    assert_eq!(check.status.code(), Some(1), "{}{}", text(&check.stdout), text(&check.stderr));
    let stdout = text(&check.stdout);
    assert!(stdout.contains("pod/payments-worker: refused by quota compute"), "{stdout}");
    assert!(stdout.contains("::error file=examples/app.yaml,line=21,title="), "{stdout}");
    assert_eq!(run.output, "exit-code=1\n");
    assert!(run.summary.starts_with("### kubectl quota check: something would be refused\n"), "{}", run.summary);
    assert!(run.summary.contains("3 document(s) checked, 2 would be refused"), "{}", run.summary);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<testsuites name=\"kubectl quota check\" tests=\"4\" failures=\"2\""), "{xml}");

    // 2. What fits passes the job.
    let run = run_action(
        &dir,
        &[
            ("files", "tests/conformance/1000-compute-fits/candidate.yaml"),
            ("state", "tests/conformance/cluster-scoped.yaml tests/conformance/1000-compute-fits/state.yaml"),
            ("namespace", "NAMESPACE"),
        ],
        &with_binary,
        root(),
    );
    assert_eq!(run.steps[1].status.code(), Some(0), "{}", text(&run.steps[1].stdout));
    assert_eq!(run.output, "exit-code=0\n");

    // 3. Installed from a release archive (as scripts/release.sh names and sums them), the
    // latest release found through its redirect, on a PATH without the plugin.
    let stage = dir.join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::copy(binary, stage.join("kubectl-quota")).unwrap();
    let archive = "kubectl-quota-v9.9.9-x86_64-unknown-linux-musl.tar.gz";
    let tar =
        Command::new("tar").args(["-czf", &dir.join(archive).display().to_string(), "-C", &stage.display().to_string(), "kubectl-quota"]).status().unwrap();
    assert!(tar.success());
    let bytes = std::fs::read(dir.join(archive)).unwrap();
    let sum = text(&Command::new("sha256sum").arg(dir.join(archive)).output().unwrap().stdout).split_whitespace().next().unwrap().to_string();
    let release = "/owner/kubectl-quota/releases";
    let good = serve(BTreeMap::from([
        (format!("{release}/latest"), Reply::Redirect(format!("{release}/tag/v9.9.9"))),
        (format!("{release}/tag/v9.9.9"), Reply::Body(b"a release page".to_vec())),
        (format!("{release}/download/v9.9.9/{archive}"), Reply::Body(bytes.clone())),
        (format!("{release}/download/v9.9.9/{archive}.sha256"), Reply::Body(format!("{sum}  {archive}\n").into_bytes())),
    ]));
    let from_release = [
        ("install", "auto"),
        ("server-url", good.as_str()),
        ("repository", "owner/kubectl-quota"),
        ("files", "examples/app.yaml"),
        ("state", "examples/cluster-state.yaml"),
        ("namespace", "shop"),
    ];
    let run = run_action(&dir, &from_release, system, root());
    assert!(run.steps[0].status.success(), "{}{}", text(&run.steps[0].stdout), text(&run.steps[0].stderr));
    assert!(text(&run.steps[0].stdout).contains(&format!("downloading {good}{release}/download/v9.9.9/{archive}")), "{}", text(&run.steps[0].stdout));
    assert_eq!(run.steps[1].status.code(), Some(1), "{}{}", text(&run.steps[1].stdout), text(&run.steps[1].stderr));
    assert!(text(&run.steps[1].stdout).contains("::error file=examples/app.yaml"));

    // 4. An archive that does not match its published sum is refused, and nothing runs.
    let bad = serve(BTreeMap::from([
        (format!("{release}/download/v9.9.9/{archive}"), Reply::Body(bytes)),
        (format!("{release}/download/v9.9.9/{archive}.sha256"), Reply::Body(format!("{}  {archive}\n", "0".repeat(64)).into_bytes())),
    ]));
    let tampered =
        [("install", "release"), ("version", "v9.9.9"), ("server-url", bad.as_str()), ("repository", "owner/kubectl-quota"), ("files", "examples/app.yaml")];
    let run = run_action(&dir, &tampered, system, root());
    assert_eq!(run.steps.len(), 1);
    assert_eq!(run.steps[0].status.code(), Some(2));
    assert!(text(&run.steps[0].stdout).contains(&format!("::error title=kubectl-quota install::{archive}: sha256 ")), "{}", text(&run.steps[0].stdout));

    // 5. install: path without the plugin on PATH says so.
    let run = run_action(&dir, &[("install", "path"), ("files", "examples/app.yaml")], system, root());
    assert_eq!(run.steps[0].status.code(), Some(2));
    assert!(text(&run.steps[0].stdout).contains("kubectl-quota is not on PATH"), "{}", text(&run.steps[0].stdout));
    let _ = std::fs::remove_dir_all(dir);
}

// --- the README's recipe -----------------------------------------------------------------

/// The fenced blocks of docs/ci.md (the CI recipes README links to), as (language, text).
fn readme_ci_blocks() -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(root().join("docs/ci.md")).unwrap();
    let mut blocks = Vec::new();
    let mut rest = doc.as_str();
    while let Some(i) = rest.find("\n```") {
        let after = &rest[i + 4..];
        let (lang, body) = after.split_once('\n').unwrap();
        let close = body.find("\n```").unwrap();
        blocks.push((lang.to_string(), body[..close + 1].to_string()));
        rest = &body[close + 4..];
    }
    blocks
}

#[test]
fn the_readme_recipe_uses_the_actions_real_inputs_and_shows_real_output() {
    let action = yaml("action.yml", &std::fs::read_to_string(root().join("action.yml")).unwrap());
    let inputs = action["inputs"].as_object().unwrap();
    let blocks = readme_ci_blocks();
    let mut uses = 0;
    for (_, body) in blocks.iter().filter(|(lang, _)| lang == "yaml") {
        let workflow = yaml("a README yaml block", body);
        for job in workflow["jobs"].as_object().into_iter().flat_map(|m| m.values()) {
            for step in job["steps"].as_array().unwrap() {
                if step["uses"].as_str().is_some_and(|u| u.starts_with("kubectl-quota/kubectl-quota@")) {
                    uses += 1;
                    for key in step["with"].as_object().unwrap().keys() {
                        assert!(inputs.contains_key(key), "the README passes {key:?}, which action.yml does not take");
                    }
                }
            }
        }
    }
    assert_eq!(uses, 2, "the scheduled job and the pull request's job");
    // The console session is real output, and the refusal explained is the example's.
    let (_, session) = blocks.iter().find(|(lang, body)| lang == "console" && body.contains("GITHUB_ACTIONS=true")).unwrap();
    let mut lines = session.lines();
    let command = lines.next().unwrap().strip_prefix("$ GITHUB_ACTIONS=true kubectl quota ").unwrap();
    let shown: Vec<&str> = lines.by_ref().take_while(|l| !l.starts_with("$ echo $?")).collect();
    let out = bin().env("GITHUB_ACTIONS", "true").args(command.split_whitespace()).output().unwrap();
    assert_eq!(text(&out.stdout).lines().collect::<Vec<_>>(), shown);
    assert_eq!(out.status.code().map(|c| c.to_string()).as_deref(), lines.next());
    let (_, refusal) = blocks.iter().find(|(_, body)| body.starts_with("pod/payments-worker: refused")).unwrap();
    let report = text(&bin().arg("check").args(EXAMPLE).output().unwrap().stdout);
    assert!(report.contains(refusal.as_str()), "the README's refusal is not what check prints:\n{refusal}");
}

#[test]
fn hostile_names_make_valid_junit_and_one_line_annotations() {
    if !have_junit_consumer() {
        return;
    }
    let dir = scratch("hostile");
    let names = ["a]]>b", "x<y>&\\\"z\\\"", "esc\\u001b[31mred", "nl\\nforged: admitted", "bidi\\u202eevil", "non\\uffffchar", "pct%0A%25"];
    let docs: String = names.iter().map(|n| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: \"{n}\"}}\n")).collect();
    let file = dir.join("hostile.yaml");
    std::fs::write(&file, docs).unwrap();
    let run = |o: &str| bin().args(["check", "-f"]).arg(&file).args(["--state", "examples/cluster-state.yaml", "-n", "shop", "-o", o]).output().unwrap();
    let xml = run("junit");
    assert_eq!(xml.status.code(), Some(1), "{}", text(&xml.stderr));
    let report = dir.join("hostile.xml");
    std::fs::write(&report, &xml.stdout).unwrap();
    let read = Command::new("python3").arg(root().join("tests/ci/junit_read.py")).arg(&report).output().unwrap();
    assert!(read.status.success(), "the consumer refused the report: {}", text(&read.stderr));
    let suites: Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(suites[0]["failures"].as_u64(), Some(names.len() as u64));
    let annotations = run("github");
    let stdout = text(&annotations.stdout);
    let errors: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::error ")).collect();
    assert_eq!(errors.len(), names.len(), "one line each, none forged: {stdout}");
    for line in errors {
        assert!(!line.contains('\u{1b}') && !line.contains('\u{202e}'), "{line:?}");
        parse_annotation(line);
    }
    let _ = std::fs::remove_dir_all(dir);
}
