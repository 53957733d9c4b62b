//! Shared by tests/ci.rs and tests/live_ci.rs: a loopback HTTP server, and action.yml's steps
//! run as GitHub's runner runs a composite action's.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};

use super::root;

/// One YAML document, read by the engine's own reader.
pub fn yaml(file: &str, text: &str) -> serde_json::Value {
    let mut docs = kubectl_quota_engine::manifest::parse_str(file, text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(docs.len(), 1, "{file}: one document");
    docs.remove(0).value
}

// --- a loopback HTTP server --------------------------------------------------------------

/// What the test server answers for a path.
#[derive(Clone)]
pub enum Reply {
    Body(Vec<u8>),
    Redirect(String),
    /// A body sent as is with `Content-Encoding: gzip` (the caller compressed it).
    Gzip(Vec<u8>),
    NotFound,
    /// A body that never ends.
    Endless,
    /// Accepts the connection and never answers.
    Silent,
}

/// Starts a real HTTP/1.1 server on a loopback port serving `routes` (one connection at a time
/// per thread, `Connection: close`); returns its base URL. It lives as long as the test process.
pub fn serve(routes: BTreeMap<String, Reply>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let routes = routes.clone();
            std::thread::spawn(move || answer(stream, &routes));
        }
    });
    base
}

fn answer(mut stream: TcpStream, routes: &BTreeMap<String, Reply>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).map_or(true, |n| n == 0) || line == "\r\n" {
            break;
        }
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let head = |status: &str, extra: &str| format!("HTTP/1.1 {status}\r\nConnection: close\r\n{extra}\r\n");
    let _ = match routes.get(&path).cloned().unwrap_or(Reply::NotFound) {
        Reply::Body(b) => stream.write_all(head("200 OK", &format!("Content-Length: {}\r\n", b.len())).as_bytes()).and_then(|_| stream.write_all(&b)),
        Reply::Gzip(b) => stream
            .write_all(head("200 OK", &format!("Content-Encoding: gzip\r\nContent-Length: {}\r\n", b.len())).as_bytes())
            .and_then(|_| stream.write_all(&b)),
        Reply::Redirect(to) => stream.write_all(head("302 Found", &format!("Location: {to}\r\nContent-Length: 0\r\n")).as_bytes()),
        Reply::NotFound => stream.write_all(head("404 Not Found", "Content-Length: 0\r\n").as_bytes()),
        Reply::Endless => {
            let filler = "# filler\n".repeat(1000);
            stream.write_all(head("200 OK", "").as_bytes()).and_then(|_| loop {
                stream.write_all(filler.as_bytes())?;
            })
        }
        Reply::Silent => {
            std::thread::sleep(std::time::Duration::from_secs(120));
            Ok(())
        }
    };
}

/// Runs action.yml's steps as GitHub's runner runs a composite action's: each `run:` with
/// bash, its `env:` with `${{ inputs.* }}` filled from `inputs` (or their defaults), the
/// runner's files (GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) and GITHUB_PATH's lines
/// put before PATH for the steps after. Returns each step's output and the files' contents.
pub struct Run {
    pub steps: Vec<Output>,
    pub output: String,
    pub summary: String,
}

pub fn run_action(dir: &Path, inputs: &[(&str, &str)], path: &str, cwd: &Path) -> Run {
    let action = yaml("action.yml", &std::fs::read_to_string(root().join("action.yml")).unwrap());
    let defaults = action["inputs"].as_object().unwrap();
    let given: BTreeMap<&str, &str> = inputs.iter().copied().collect();
    for k in given.keys() {
        assert!(defaults.contains_key(*k), "action.yml has no input {k}");
    }
    let input =
        |name: &str| -> String { given.get(name).map(|v| v.to_string()).unwrap_or_else(|| defaults[name]["default"].as_str().unwrap_or("").to_string()) };
    let fill = |s: &str| -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("${{") {
            out.push_str(&rest[..i]);
            let end = rest[i..].find("}}").unwrap() + i;
            let expr = rest[i + 3..end].trim();
            let name = expr.strip_prefix("inputs.").unwrap_or_else(|| panic!("an expression the test does not evaluate: {expr}"));
            out.push_str(&input(name));
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    };
    let files = ["GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"].map(|f| (f, dir.join(f)));
    for (_, f) in &files {
        std::fs::write(f, "").unwrap();
    }
    let runner_temp = dir.join("runner-temp");
    std::fs::create_dir_all(&runner_temp).unwrap();
    let mut steps = Vec::new();
    for step in action["runs"]["steps"].as_array().unwrap() {
        assert_eq!(step["shell"].as_str(), Some("bash"));
        let added: Vec<String> = std::fs::read_to_string(&files[0].1).unwrap().lines().rev().map(str::to_string).collect();
        let step_path = added.iter().chain(std::iter::once(&path.to_string())).cloned().collect::<Vec<_>>().join(":");
        let mut c = Command::new("bash");
        c.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &fill(step["run"].as_str().unwrap())]);
        c.current_dir(cwd).env_clear().env("PATH", &step_path).env("HOME", dir).env("GITHUB_ACTIONS", "true").env("NO_COLOR", "1");
        c.env("GITHUB_ACTION_PATH", root()).env("RUNNER_TEMP", &runner_temp).env("RUNNER_OS", "Linux").env("RUNNER_ARCH", "X64");
        for (k, f) in &files {
            c.env(k, f);
        }
        for (k, v) in step["env"].as_object().into_iter().flatten() {
            c.env(k, fill(v.as_str().unwrap()));
        }
        let out = c.output().unwrap();
        let failed = !out.status.success();
        steps.push(out);
        if failed {
            break;
        }
    }
    Run { steps, output: std::fs::read_to_string(&files[1].1).unwrap(), summary: std::fs::read_to_string(&files[2].1).unwrap() }
}
