//! Hostile and broken input, at the binary: one reproducer per problem found by trying the
//! plugin as a hostile user would. Big inputs are generated here, never committed. Each case
//! must end with a clear message or a correct answer; how long they take and how much memory
//! they use in a release build is in bench/RESULTS.md ("Hostile input").

use std::io::{Read, Write};

mod common;

use common::deadline;
use common::{bin_without_kubeconfig, root};
use deadline::output_within;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// A scratch directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kq-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited, not killed by a signal")
}

const STATE: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: default}\nspec: {hard: {pods: '10'}}\nstatus: {hard: {pods: '10'}, used: {pods: '0'}}\n";
const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: a, image: b}]}\n";

/// `check -f <manifest> --state <STATE>` on generated text.
fn check_text(name: &str, manifest: impl AsRef<[u8]>) -> Output {
    let d = scratch(name);
    let m = write(&d, "m.yaml", manifest);
    let s = write(&d, "state.yaml", STATE);
    bin_without_kubeconfig().args(["check", "-f", &m, "--state", &s]).output().unwrap()
}

fn assert_refused_input(o: &Output, needle: &str) {
    let err = text(&o.stderr);
    assert_eq!(code(o), 2, "stderr: {err}");
    assert!(err.contains(needle), "{needle:?} not in {err:?}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn alias_bombs_are_refused_not_expanded() {
    // A 62 KB anchor of 5,000 keys referenced 6,000 times (4.7 GB expanded).
    let keys: String = (0..5000).map(|i| format!("  k{i}: v\n")).collect();
    let refs: String = (0..6000).map(|i| format!("r{i}: *a\n")).collect();
    assert_refused_input(&check_text("bomb-keys", format!("base: &a\n{keys}{refs}")), "alias");
    // A 1 MB string referenced 2,000 times (3.9 GB).
    let s = format!("s: &a {}\nl: [{}]\n", "x".repeat(1 << 20), vec!["*a"; 2000].join(", "));
    assert_refused_input(&check_text("bomb-string", s), "through aliases");
    // Billion laughs.
    let mut laughs = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (i, c) in "bcdefghi".chars().enumerate() {
        let prev = (b'a' + i as u8) as char;
        laughs.push_str(&format!("{c}: &{c} [{}]\n", vec![format!("*{prev}"); 9].join(", ")));
    }
    assert_refused_input(&check_text("laughs", laughs), "alias");
}

#[test]
fn deep_nesting_is_refused_quickly() {
    assert_refused_input(&check_text("brackets", "[".repeat(1 << 20)), "nested deeper than 128");
    assert_refused_input(&check_text("braces", "{a: ".repeat(100_000)), "nested deeper than 128");
    assert_refused_input(&check_text("dashes", "- ".repeat(200_000)), "document 1");
}

#[test]
fn endless_inputs_stop_at_the_cap() {
    let d = scratch("zero");
    let s = write(&d, "state.yaml", STATE);
    let m = write(&d, "m.yaml", POD);
    let cases: Vec<(Vec<&str>, bool)> = vec![
        (vec!["check", "-f", "/dev/zero", "--state", &s], false),
        (vec!["check", "-f", "-", "--state", &s], true),
        (vec!["check", "-f", &m, "--state", "/dev/zero"], false),
        (vec!["check", "-f", &m, "--state", &s, "--admission-config", "/dev/zero"], false),
        (vec!["describe", "--state", "/dev/zero"], false),
        (vec!["capacity", "--state", "/dev/zero"], false),
        (vec!["uncovered", "--state", "-"], true),
        (vec!["blocked", "-A", "--state", "/dev/zero"], false),
    ];
    for (args, stdin) in cases {
        let mut c = bin_without_kubeconfig();
        c.args(&args);
        if stdin {
            c.stdin(std::fs::File::open("/dev/zero").unwrap());
        }
        let o = c.output().unwrap();
        assert_refused_input(&o, "larger than 67108864 bytes (set KUBECTL_QUOTA_MAX_INPUT_BYTES");
    }
    // The cap can be raised or lowered.
    let o = bin_without_kubeconfig().args(["check", "-f", &m, "--state", &s]).env("KUBECTL_QUOTA_MAX_INPUT_BYTES", "10").output().unwrap();
    assert_refused_input(&o, "larger than 10 bytes");
}

#[test]
fn a_token_file_of_dev_zero_is_refused() {
    let d = scratch("token");
    let kc = "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {tokenFile: /dev/zero}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n";
    let k = write(&d, "kubeconfig", kc);
    let o = bin_without_kubeconfig().args(["describe", "--kubeconfig", &k]).output().unwrap();
    assert_refused_input(&o, "tokenFile /dev/zero");
}

/// A fake API server on loopback, serving each connection with `serve` on its own thread.
/// It stops by itself: it accepts at most `connections` connections.
fn fake_server(connections: usize, serve: fn(std::net::TcpStream)) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming().take(connections).flatten() {
            std::thread::spawn(move || serve(s));
        }
    });
    format!("http://{addr}")
}

fn kubeconfig_for(dir: &Path, server: &str) -> String {
    let kc = format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: '{server}'}}}}]\nusers: [{{name: u, user: {{token: t}}}}]\ncontexts: [{{name: x, context: {{cluster: c, user: u, namespace: default}}}}]\ncurrent-context: x\n"
    );
    write(dir, "kubeconfig", kc)
}

fn read_request(s: &mut std::net::TcpStream) {
    let mut buf = [0u8; 4096];
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = s.read(&mut buf);
}

/// Answers one request with `status` and a JSON `body`, then closes.
fn answer(mut s: std::net::TcpStream, status: &str, body: &str) {
    read_request(&mut s);
    let head = format!("HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
    let _ = s.write_all(head.as_bytes()).and_then(|()| s.write_all(body.as_bytes()));
}

/// Answers with a body of spaces that does not end (at most 256 MiB, then gives up).
fn serve_endless(mut s: std::net::TcpStream) {
    read_request(&mut s);
    let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    let chunk = format!("{:x}\r\n{}\r\n", 64 * 1024, " ".repeat(64 * 1024));
    for _ in 0..4096 {
        if s.write_all(chunk.as_bytes()).is_err() {
            return;
        }
    }
}

#[test]
fn an_endless_list_ends_at_the_body_cap() {
    let server = fake_server(4, serve_endless);
    let d = scratch("endless");
    let k = kubeconfig_for(&d, &server);
    let o = bin_without_kubeconfig().args(["describe", "--kubeconfig", &k]).env("KUBECTL_QUOTA_MAX_INPUT_BYTES", "1048576").output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains(&server) && err.contains("length limit exceeded"), "{err}");
}

#[test]
fn endless_lists_read_at_once_share_one_cap() {
    // check LISTs quotas, LimitRanges and the cluster-scoped kinds at once: every one endless.
    // The cap counts what all bodies being read hold together (bench/hostile.sh measures the
    // memory: about the cap, not the cap per LIST).
    let server = fake_server(64, serve_endless);
    let d = scratch("endless-all");
    let k = kubeconfig_for(&d, &server);
    let mut cmd = bin_without_kubeconfig();
    cmd.args(["check", "-f", "examples/app.yaml", "--kubeconfig", &k]).env("KUBECTL_QUOTA_MAX_INPUT_BYTES", "4194304");
    let o = output_within(cmd, Duration::from_secs(20));
    let err = text(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains(&server) && err.contains("length limit exceeded"), "{err}");
}

#[test]
fn request_timeout_bounds_the_whole_request() {
    // Headers at once, then a body that trickles forever: each read is quick, the whole is not.
    let server = fake_server(4, |mut s| {
        read_request(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
        for _ in 0..100 {
            if s.write_all(b"1\r\n \r\n").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let d = scratch("trickle");
    let k = kubeconfig_for(&d, &server);
    let o = bin_without_kubeconfig().args(["describe", "--kubeconfig", &k, "--request-timeout", "1s"]).output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains("no complete answer within --request-timeout (1s)"), "{err}");
}

/// Answers with headers, then one byte of body a second (for ten minutes at most).
fn serve_trickle(mut s: std::net::TcpStream) {
    read_request(&mut s);
    let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    for _ in 0..600 {
        if s.write_all(b"1\r\n \r\n").is_err() {
            return;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[test]
fn without_request_timeout_every_command_ends_at_its_deadline() {
    // A server that sends one byte a second held every command for ever: each read is quick.
    // The default deadline (5m0s, in every help) is shortened here so the test takes seconds.
    let server = fake_server(1000, serve_trickle);
    let d = scratch("deadline");
    let k = kubeconfig_for(&d, &server);
    let m = write(&d, "m.yaml", POD);
    let commands: Vec<Vec<String>> = [
        vec!["describe"],
        vec!["describe", "-A"],
        vec!["check", "-f", &m],
        vec!["plan", "-f", &m],
        vec!["create", "q", "--hard", "pods=1"],
        vec!["why", "deployment/web"],
        vec!["snapshot", "-n", "default"],
        vec!["capacity"],
        vec!["uncovered"],
        vec!["blocked", "-A"],
    ]
    .into_iter()
    .map(|args| args.into_iter().map(String::from).collect())
    .collect();
    let runs: Vec<_> = commands
        .into_iter()
        .map(|args| {
            let mut cmd = bin_without_kubeconfig();
            cmd.args(&args).args(["--kubeconfig", &k]).env("KUBECTL_QUOTA_DEADLINE", "2s");
            std::thread::spawn(move || (args.join(" "), output_within(cmd, Duration::from_secs(60))))
        })
        .collect();
    for run in runs {
        let (args, o) = run.join().unwrap();
        let err = text(&o.stderr);
        assert_eq!(code(&o), 2, "{args}: {err}");
        assert!(err.contains(&server), "{args}: {err}");
        assert!(err.contains("no complete answer within 2s, the time a command's requests may take together without --request-timeout"), "{args}: {err}");
    }
}

#[test]
fn the_default_deadline_is_the_one_help_states() {
    let o = bin_without_kubeconfig().args(["describe", "--help"]).output().unwrap();
    let help = text(&o.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("Without it, a command's requests must end within 5m0s together (`guard serve` excepted)"), "{help}");
    // An unusable override is an error, as an unusable --request-timeout is.
    let o = bin_without_kubeconfig().args(["describe", "--kubeconfig", "/nonexistent"]).env("KUBECTL_QUOTA_DEADLINE", "soon").output().unwrap();
    assert_refused_input(&o, "KUBECTL_QUOTA_DEADLINE");
}

#[test]
fn completion_gives_a_silent_server_a_short_deadline() {
    let server = fake_server(4, |mut s| {
        read_request(&mut s);
        std::thread::sleep(Duration::from_secs(10));
    });
    let d = scratch("completion");
    let k = kubeconfig_for(&d, &server);
    let start = std::time::Instant::now();
    let o = bin_without_kubeconfig().args(["__complete", "--kubeconfig", &k, "describe", ""]).output().unwrap();
    // Generous: the deadline is 1.5 s; 30 s (the old behaviour) would fail this.
    assert!(start.elapsed() < Duration::from_secs(8), "{:?}", start.elapsed());
    assert_eq!(code(&o), 0);
}

#[test]
fn connection_errors_name_the_server_and_exit_2_everywhere() {
    let d = scratch("refused");
    let k = kubeconfig_for(&d, "https://127.0.0.1:1");
    let m = write(&d, "m.yaml", POD);
    for args in [vec!["describe"], vec!["create", "q", "--hard", "pods=1"], vec!["check", "-f", &m]] {
        let o = bin_without_kubeconfig().args(&args).args(["--kubeconfig", &k]).output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains("https://127.0.0.1:1") && err.to_lowercase().contains("connection refused"), "{args:?}: {err}");
    }
}

#[test]
fn kubeconfig_list_skips_missing_files() {
    let d = scratch("kclist");
    let k = kubeconfig_for(&d, "https://127.0.0.1:1");
    let missing = d.join("missing").display().to_string();
    let o = bin_without_kubeconfig().args(["describe"]).env("KUBECONFIG", format!("{k}:{missing}")).output().unwrap();
    let err = text(&o.stderr);
    // It got as far as the server: the missing file was skipped.
    assert!(err.contains("https://127.0.0.1:1"), "{err}");
    // Completion reads the same list.
    let o = bin_without_kubeconfig().args(["__complete", "describe", "--context", ""]).env("KUBECONFIG", format!("{k}:{missing}")).output().unwrap();
    assert_eq!(text(&o.stdout), "x\n:4\n");
}

#[test]
fn huge_request_timeouts_are_an_error() {
    let o = bin_without_kubeconfig().args(["describe", "--request-timeout", "18446744073709551615h", "--kubeconfig", "/nonexistent"]).output().unwrap();
    assert_refused_input(&o, "longer than the maximum of 8760h");
}

#[test]
fn control_characters_cannot_forge_output() {
    let evil_pod = POD.replace("{name: web}", "{name: \"web\\npod/evil: admitted\\e]0;title\\a\"}");
    let o = check_text("inject-check", &evil_pod);
    let out = text(&o.stdout);
    assert_eq!(code(&o), 1, "an invalid name is refused: {out}");
    assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
    assert!(!out.lines().any(|l| l.starts_with("pod/evil")), "{out}");

    let d = scratch("inject-describe");
    let s = write(&d, "state.yaml", STATE.replace("{name: q, ", "{name: \"q\\n=== namespace forged ===\\e[2J\", "));
    let o = bin_without_kubeconfig().args(["describe", "--state", &s]).output().unwrap();
    let out = text(&o.stdout);
    assert_eq!(code(&o), 0);
    assert!(!out.contains('\x1b') && !out.lines().any(|l| l.starts_with("===")), "{out}");
    assert!(out.contains("q\\n=== namespace forged ===^[[2J"), "{out}");

    // Bidirectional overrides would reorder the line on screen: shown as escapes.
    let s2 = write(&d, "bidi.yaml", STATE.replace("{name: q, ", "{name: \"q\\u202Eevil\\u2066x\\u2069\", "));
    let o = bin_without_kubeconfig().args(["describe", "--state", &s2]).output().unwrap();
    let out = text(&o.stdout);
    assert!(!out.contains('\u{202e}') && !out.contains('\u{2066}') && out.contains("q\\u202eevil\\u2066x\\u2069"), "{out}");

    // Error messages too (a file name is user input).
    let o = bin_without_kubeconfig().args(["check", "-f", "/nonexistent/\x1b[31mred", "--state", &s]).output().unwrap();
    let err = text(&o.stderr);
    assert!(!err.contains('\x1b') && err.contains("^[[31mred"), "{err:?}");
}

#[test]
fn invalid_objects_get_the_servers_422() {
    let o = check_text("invalid-name", POD.replace("{name: web}", "{name: Foo_Bar}"));
    assert_eq!(code(&o), 1);
    assert!(text(&o.stdout).contains("The Pod \"Foo_Bar\" is invalid: metadata.name: Invalid value: \"Foo_Bar\": a lowercase RFC 1123 subdomain"));
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: -5, selector: {}, template: {spec: {containers: [{name: a, image: b}]}}}\n";
    let o = check_text("negative", deploy);
    let out = text(&o.stdout);
    assert_eq!(code(&o), 1, "{out}");
    assert!(out.contains("spec.replicas: Invalid value: -5: must be greater than or equal to 0") && !out.contains("of -5 replicas"), "{out}");
}

#[test]
fn a_closed_pipe_ends_output_quietly() {
    let d = scratch("pipe");
    let state: String = (0..3000).map(|i| STATE.replace("{name: q,", &format!("{{name: q{i},")) + "---\n").collect();
    let s = write(&d, "state.yaml", state);
    let m = write(&d, "m.yaml", POD);
    let namespaces: String = (0..3000).map(|i| format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: ns{i}}}\n---\n")).collect();
    let n = write(&d, "namespaces.yaml", namespaces);
    for args in [vec!["describe", "-A", "--state", &s], vec!["check", "-f", &m, "--state", &s], vec!["uncovered", "--state", &n]] {
        let mut child = bin_without_kubeconfig().args(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let mut head = [0u8; 16];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        // stdout is dropped here: the pipe is closed, as `| head` does.
        let o = child.wait_with_output().unwrap();
        let err = text(&o.stderr);
        assert!(matches!(code(&o), 0 | 1), "{args:?}: {:?} {err}", o.status);
        assert!(!err.contains("panicked") && err.is_empty(), "{args:?}: {err}");
    }
}

#[test]
fn recursive_walks_do_not_follow_directory_links() {
    let d = scratch("links");
    write(&d, "pod.yaml", POD);
    let s = write(&d, "state.txt", STATE);
    std::os::unix::fs::symlink(".", d.join("a")).unwrap();
    std::os::unix::fs::symlink(".", d.join("b")).unwrap();
    let o = bin_without_kubeconfig().args(["check", "-R", "-f", &d.display().to_string(), "--state", &s, "-o", "json"]).output().unwrap();
    let out = text(&o.stdout);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert_eq!(out.matches("\"kind\": \"Pod\"").count(), 1, "{out}");
}

#[test]
fn encodings_and_yaml_features_kubectl_accepts() {
    let utf16: Vec<u8> = [0xFF, 0xFE].into_iter().chain(POD.encode_utf16().flat_map(u16::to_le_bytes)).collect();
    let utf16be: Vec<u8> = [0xFE, 0xFF].into_iter().chain(POD.encode_utf16().flat_map(u16::to_be_bytes)).collect();
    let merged = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - &base {name: a, image: b}\n  - <<: *base\n    name: c\n";
    for (what, bytes) in
        [("utf8-bom", [&[0xEF, 0xBB, 0xBF][..], POD.as_bytes()].concat()), ("utf16le", utf16), ("utf16be", utf16be), ("merge-key", merged.as_bytes().to_vec())]
    {
        let o = check_text(what, bytes);
        assert_eq!(code(&o), 0, "{what}: {}", text(&o.stderr));
    }
}

#[test]
fn numbers_kubernetes_refuses_get_precise_messages() {
    let deploy = |replicas: &str| {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec: {{replicas: {replicas}, selector: {{}}, template: {{spec: {{containers: [{{name: a, image: b}}]}}}}}}\n")
    };
    assert_refused_input(&check_text("inf", deploy(".inf")), "m.yaml, document 1: not valid YAML or JSON: .inf is not a number Kubernetes accepts");
    assert_refused_input(&check_text("nan", deploy(".nan")), ".nan is not a number Kubernetes accepts");
    assert_refused_input(&check_text("fraction", deploy("1.5")), "m.yaml, document 1: spec.replicas: must be an integer, got 1.5");
    assert_refused_input(&check_text("too-big", deploy("3000000000")), "spec.replicas: 3000000000 is out of range");
}

#[test]
fn create_prints_quantities_as_the_server_stores_them() {
    let o = bin_without_kubeconfig()
        .args(["create", "q", "--hard", "cpu=0.1111111111111,memory=1024Mi,pods=10.0", "--dry-run=client", "-o", "yaml"])
        .output()
        .unwrap();
    let out = text(&o.stdout);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(out.contains("cpu: 111111112n") && out.contains("memory: 1Gi") && out.contains("pods: \"10\""), "{out}");
    let o = bin_without_kubeconfig().args(["create", "q", "--hard", "cpu=1 ", "--dry-run=client", "-o", "yaml"]).output().unwrap();
    assert_refused_input(&o, "quantities must match the regular expression");
}

#[test]
fn a_walked_directory_reads_regular_files_only() {
    let d = scratch("fifo");
    write(&d, "pod.yaml", POD);
    let s = write(&d, "state.txt", STATE);
    let fifo = d.join("z.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("note: mkfifo is not available: the FIFO case is not tried");
        return;
    }
    // Nobody ever writes to the FIFO: reading it would block for ever.
    let mut cmd = bin_without_kubeconfig();
    cmd.args(["check", "-R", "-f", &d.display().to_string(), "--state", &s, "-o", "json"]);
    let o = output_within(cmd, std::time::Duration::from_secs(10));
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).matches("\"kind\": \"Pod\"").count(), 1, "{}", text(&o.stdout));

    // Named on its own (as `-f <(helm template ...)` does), a FIFO is read.
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, POD))
    };
    let mut cmd = bin_without_kubeconfig();
    cmd.args(["check", "-f", &fifo.display().to_string(), "--state", &s, "-o", "json"]);
    let o = output_within(cmd, std::time::Duration::from_secs(10));
    writer.join().unwrap().unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).matches("\"kind\": \"Pod\"").count(), 1, "{}", text(&o.stdout));
}

/// Answers every request on the connection (up to 500) with `body`, keeping it open.
fn answer_always(mut s: std::net::TcpStream, body: &str) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = [0u8; 8192];
    for _ in 0..500 {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
        if s.write_all(head.as_bytes()).and_then(|()| s.write_all(body.as_bytes())).is_err() {
            return;
        }
    }
}

#[test]
fn a_list_that_never_ends_is_an_error_naming_the_server() {
    // Every page names the same next page: each request is quick, the list endless.
    let same = fake_server(64, |s| answer_always(s, r#"{"kind":"List","apiVersion":"v1","metadata":{"continue":"again"},"items":[]}"#));
    let d = scratch("same-token");
    let k = kubeconfig_for(&d, &same);
    for args in [vec!["describe"], vec!["snapshot", "-n", "default"]] {
        let mut cmd = bin_without_kubeconfig();
        cmd.args(&args).args(["--kubeconfig", &k, "--request-timeout", "5s"]);
        let o = output_within(cmd, Duration::from_secs(20));
        let err = text(&o.stderr);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(&format!("{same} gave page 2 the continue token of an earlier page: the list would never end")), "{args:?}: {err}");
    }
    // Every page empty, each naming a new next page.
    let fresh = fake_server(64, |mut s| {
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let mut buf = [0u8; 8192];
        for i in 0..500 {
            if !matches!(s.read(&mut buf), Ok(n) if n > 0) {
                return;
            }
            let body = format!(r#"{{"kind":"List","apiVersion":"v1","metadata":{{"continue":"t{i}-{:?}"}},"items":[]}}"#, std::thread::current().id());
            let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
            if s.write_all(head.as_bytes()).and_then(|()| s.write_all(body.as_bytes())).is_err() {
                return;
            }
        }
    });
    let k = kubeconfig_for(&d, &fresh);
    let mut cmd = bin_without_kubeconfig();
    cmd.args(["describe", "--kubeconfig", &k, "--request-timeout", "5s"]);
    let o = output_within(cmd, Duration::from_secs(20));
    let err = text(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains(&format!("{fresh} gave 65 pages in a row with no item, each asking for more")), "{err}");
}

#[test]
fn a_server_that_always_says_retry_later_is_asked_ten_more_times_then_believed() {
    static ASKED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let server = fake_server(64, |mut s| {
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let mut buf = [0u8; 8192];
        let body = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Too many requests, please try again later.","reason":"TooManyRequests","code":429}"#;
        for _ in 0..100 {
            if !matches!(s.read(&mut buf), Ok(n) if n > 0) {
                return;
            }
            ASKED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // Retry-After of a day: the client must not wait for it.
            let head =
                format!("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 86400\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
            if s.write_all(head.as_bytes()).and_then(|()| s.write_all(body.as_bytes())).is_err() {
                return;
            }
        }
    });
    let d = scratch("retry-later");
    let k = kubeconfig_for(&d, &server);
    let mut cmd = bin_without_kubeconfig();
    cmd.args(["describe", "--kubeconfig", &k]);
    let o = output_within(cmd, Duration::from_secs(10));
    let err = text(&o.stderr);
    assert_eq!(code(&o), 1, "{err}");
    assert!(err.contains("Too many requests, please try again later."), "{err}");
    assert_eq!(ASKED.load(std::sync::atomic::Ordering::SeqCst), 11, "the first request and ten more");
}

#[test]
fn a_server_s_error_answer_always_names_the_server_and_a_cause() {
    type Serve = fn(std::net::TcpStream);
    let cases: [(Serve, &str); 4] = [
        (|s| answer(s, "503 Service Unavailable", ""), "the server answered HTTP 503 Service Unavailable with an empty body"),
        (
            |s| answer(s, "502 Bad Gateway", "<html><body>\n<h1>502 Bad Gateway</h1>\n</body></html>"),
            "the server answered HTTP 502 Bad Gateway with a body that is not a Status: <html><body> <h1>502 Bad Gateway</h1> </body></html>",
        ),
        // A Status the client's types cannot read (a code as a string): read leniently.
        (
            |s| {
                answer(
                    s,
                    "500 Internal Server Error",
                    r#"{"kind":"Status","status":"Failure","message":"etcdserver: request timed out","reason":"InternalError","code":"500"}"#,
                )
            },
            "Error from server (InternalError): etcdserver: request timed out",
        ),
        (|s| answer(s, "500 Internal Server Error", r#"{"foo":"bar"}"#), "the server answered an error with no message"),
    ];
    let d = scratch("server-errors");
    for (serve, want) in cases {
        let server = fake_server(1000, serve);
        let k = kubeconfig_for(&d, &server);
        for args in [vec!["describe"], vec!["check", "-f", "examples/app.yaml"]] {
            let mut cmd = bin_without_kubeconfig();
            cmd.args(&args).args(["--kubeconfig", &k]);
            let o = output_within(cmd, Duration::from_secs(20));
            let err = text(&o.stderr);
            assert!(matches!(code(&o), 1 | 2), "{args:?}: {err}");
            assert!(err.contains(&format!("cannot list resourcequotas in namespace \"default\" on {server}: {want}")), "{args:?}: {err}");
        }
    }
}

#[test]
fn an_object_larger_than_the_server_reads_is_refused_with_its_words() {
    // 120,000 containers: about 3.6 MB as the JSON kubectl sends, over the API server's 3 MiB.
    let containers: String = (0..120_000).map(|i| format!("  - {{name: c{i}, image: x}}\n")).collect();
    let d = scratch("too-large");
    let m = write(&d, "big.yaml", format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: big}}\nspec:\n  containers:\n{containers}"));
    let s = write(&d, "state.yaml", STATE);
    let mut cmd = bin_without_kubeconfig();
    cmd.args(["check", "-f", &m, "--state", &s, "-o", "json"]);
    let o = output_within(cmd, Duration::from_secs(20));
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("\"message\": \"Request entity too large: limit is 3145728\"") && out.contains("\"reason\": \"tooLarge\""),
        "{}",
        &out[..out.len().min(2000)]
    );
}

#[test]
fn a_document_whose_text_shows_it_over_the_server_s_limit_is_refused_from_its_size() {
    // 200,000 containers: its text alone shows its JSON is over 3 MiB, so it is refused
    // without being read further than its name (bench/state-size.sh measures its memory).
    let containers: String = (0..200_000).map(|i| format!("  - {{name: c{i}, image: x, resources: {{requests: {{cpu: 1m}}}}}}\n")).collect();
    let d = scratch("too-large-text");
    let m = write(&d, "big.yaml", format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: big}}\nspec:\n  containers:\n{containers}---\n{POD}"));
    let s = write(&d, "state.yaml", STATE);
    let o = bin_without_kubeconfig().args(["check", "-f", &m, "--state", &s, "-o", "json"]).output().unwrap();
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let docs = report["documents"].as_array().unwrap();
    assert_eq!((docs[0]["name"].as_str(), docs[0]["message"].as_str()), (Some("big"), Some("Request entity too large: limit is 3145728")));
    assert!(docs[0].to_string().contains("\"reason\":\"tooLarge\""), "{}", docs[0]);
    // The next document is read as always.
    assert_eq!((docs[1]["name"].as_str(), docs[1]["outcome"].as_str()), (Some("web"), Some("admitted")));
}

#[test]
fn describe_state_over_many_namespaces_streams_and_shows_every_quota() {
    // Each quota becomes its view as it is decoded (bench/hostile.sh measures 100,000 of them:
    // under 1 s and 90 MB); here 20,000, under a deadline that only a hang would reach.
    let state: String = (0..20_000).map(|i| STATE.replace("namespace: default", &format!("namespace: ns{i:05}")) + "---\n").collect();
    let d = scratch("many-namespaces");
    let s = write(&d, "state.yaml", state);
    let mut cmd = bin_without_kubeconfig();
    cmd.args(["describe", "-A", "--state", &s]);
    let o = output_within(cmd, Duration::from_secs(60));
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(out.lines().filter(|l| l.starts_with("Namespace:")).count(), 20_000);
    // In namespace order.
    let first = out.find("ns00000").unwrap();
    assert!(out.find("ns19999").is_some_and(|last| last > first));
}

/// What kubectl prints for a server's refusal, pinned in tests/golden/errors-server.txt (the
/// loopback server's address written as SERVER): the Status as kubectl shows it, after what
/// failed and where for reads, and alone (no `error: `) for create's refusals, as kubectl
/// prints them.
#[test]
fn server_refusals_are_printed_as_kubectl_prints_them() {
    type Serve = fn(std::net::TcpStream);
    let forbidden: Serve = |s| {
        answer(
            s,
            "403 Forbidden",
            r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"resourcequotas is forbidden: User \"dev\" cannot list resource \"resourcequotas\" in API group \"\" in the namespace \"default\"","reason":"Forbidden","details":{"kind":"resourcequotas"},"code":403}"#,
        )
    };
    let exists: Serve = |s| {
        answer(
            s,
            "409 Conflict",
            r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"resourcequotas \"q\" already exists","reason":"AlreadyExists","details":{"name":"q","kind":"resourcequotas"},"code":409}"#,
        )
    };
    let invalid: Serve = |s| {
        answer(
            s,
            "422 Unprocessable Entity",
            r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"ResourceQuota \"q\" is invalid: [spec.hard[pods]: Invalid value: \"5\": must be less than 3, metadata.labels: Invalid value: \"x\": bad]","reason":"Invalid","details":{"name":"q","kind":"ResourceQuota","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"5\": must be less than 3","field":"spec.hard[pods]"},{"reason":"FieldValueInvalid","message":"Invalid value: \"x\": bad","field":"metadata.labels"}]},"code":422}"#,
        )
    };
    let unauthorized: Serve = |s| {
        answer(s, "401 Unauthorized", r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#)
    };
    let cases: [(&str, Serve, &[&str]); 6] = [
        ("check, quotas forbidden", forbidden, &["check", "-f", "examples/app.yaml"]),
        ("describe, quotas forbidden", forbidden, &["describe"]),
        ("create, already exists", exists, &["create", "q", "--hard=pods=1"]),
        ("create, invalid (the server's own validation)", invalid, &["create", "q", "--hard=pods=1"]),
        ("create, not logged in", unauthorized, &["create", "q", "--hard=pods=1"]),
        ("describe, not logged in", unauthorized, &["describe"]),
    ];
    let d = scratch("server-refusals");
    let mut got = String::new();
    for (what, serve, args) in cases {
        let server = fake_server(1000, serve);
        let k = kubeconfig_for(&d, &server);
        let mut cmd = bin_without_kubeconfig();
        cmd.args(args).args(["--kubeconfig", &k]);
        let o = output_within(cmd, Duration::from_secs(20));
        got.push_str(&format!("# {what}: kubectl quota {}\n{}exit status {}\n\n", args.join(" "), text(&o.stderr).replace(&server, "SERVER"), code(&o)));
    }
    let path = root().join("tests/golden/errors-server.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &got).unwrap();
    }
    assert_eq!(got, std::fs::read_to_string(&path).unwrap(), "run with UPDATE_GOLDEN=1 to rewrite {}", path.display());
}

#[test]
fn objects_a_state_holds_twice_count_once_the_later_winning_with_one_warning() {
    let d = scratch("duplicates");
    let nodes = "apiVersion: v1\nkind: List\nitems:\n\
        - {apiVersion: v1, kind: Node, metadata: {name: w1}, status: {allocatable: {cpu: '4', pods: '10'}, conditions: [{type: Ready, status: 'True'}]}}\n\
        - {apiVersion: v1, kind: Node, metadata: {name: w2}, spec: {unschedulable: true}, status: {allocatable: {cpu: '4'}, conditions: [{type: Ready, status: 'True'}]}}\n\
        - {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n\
        - {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: a}, spec: {containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}, status: {phase: Running}}\n";
    let nodes = write(&d, "nodes.yaml", nodes);
    let quota = |hard: &str| {
        format!("apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: compute, namespace: a}}\nspec: {{hard: {{requests.cpu: '{hard}', pods: '{hard}'}}}}\nstatus: {{hard: {{requests.cpu: '{hard}', pods: '{hard}'}}, used: {{requests.cpu: '0', pods: '0'}}}}\n")
    };
    let (q1, q2) = (write(&d, "q1.yaml", quota("1")), write(&d, "q2.yaml", quota("3")));
    let view = |args: &[&str]| bin_without_kubeconfig().args(["capacity", "-o", "json"]).args(args).output().unwrap();

    // The same file twice is the file once: every node, pod and quota counted once.
    let once = view(&["--state", &nodes, "--state", &q2]);
    let twice = view(&["--state", &nodes, "--state", &nodes, "--state", &q2]);
    assert_eq!(code(&once), 0, "{}", text(&once.stderr));
    assert_eq!(text(&twice.stdout), text(&once.stdout));
    let report: serde_json::Value = serde_json::from_slice(&twice.stdout).unwrap();
    assert_eq!((report["nodes"].as_u64(), report["nodesCounted"].as_u64()), (Some(2), Some(1)), "{report}");
    assert_eq!(text(&twice.stderr), format!("warning: --state names the same file more than once, read once: {nodes}\n"));

    // Two quotas of one namespace and name (two files, two spellings of the same node): one
    // each, the later read, and one warning naming them.
    let again = write(
        &d,
        "w1-again.yaml",
        "{apiVersion: v1, kind: Node, metadata: {name: w1}, status: {allocatable: {cpu: '8', pods: '10'}, conditions: [{type: Ready, status: 'True'}]}}\n",
    );
    let out = view(&["--state", &nodes, "--state", &q1, "--state", &q2, "--state", &again]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cpu = report["resources"].as_array().unwrap().iter().find(|r| r["resource"] == "requests.cpu").unwrap();
    assert_eq!((cpu["allocatable"].as_str(), cpu["promised"].as_str()), (Some("8"), Some("3")), "{report}");
    assert_eq!(text(&out.stderr), "warning: the state holds 2 objects more than once, counted once (each as last read): ResourceQuota a/compute, Node w1\n");

    // A check reads the state the same way: the later quota (3 pods) is the one that counts.
    let pods = write(&d, "pods.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: a}\nspec: {containers: [{name: c, image: i, resources: {requests: {cpu: 100m}, limits: {cpu: 100m}}}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p2, namespace: a}\nspec: {containers: [{name: c, image: i, resources: {requests: {cpu: 100m}, limits: {cpu: 100m}}}]}\n");
    let out = bin_without_kubeconfig().args(["check", "-f", &pods, "--state", &q1, "--state", &q2, "--quiet"]).output().unwrap();
    assert_eq!(code(&out), 0, "{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(text(&out.stderr), "warning: the state holds 1 object more than once, counted once (it as last read): ResourceQuota a/compute\n");
}

#[test]
fn a_negative_allocatable_is_refused_as_the_server_refuses_it() {
    let d = scratch("negative-allocatable");
    let state = write(
        &d,
        "nodes.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: w1}\nstatus: {allocatable: {cpu: '-4', pods: '10'}, conditions: [{type: Ready, status: 'True'}]}\n",
    );
    for view in ["capacity", "uncovered"] {
        let out = bin_without_kubeconfig().args([view, "--state", &state]).output().unwrap();
        assert_refused_input(&out, "Node \"w1\" is invalid: status.allocatable.cpu: Invalid value: \"-4\": must be greater than or equal to 0");
    }
}
