//! The documentation's command blocks, read and run: every fenced block of README.md and
//! docs/*.md with a `$ kubectl quota ...` line is one, and what it shows under each command is
//! what that command must print (standard output and standard error as one stream, as on a
//! terminal). How a block is run is said by an HTML comment on the line before its fence:
//!
//! - none: offline, by `cargo test --test docs`, from the repository's root;
//! - `<!-- docs: offline in DIR -->`: offline, from DIR (a folder of fixtures under tests/docs);
//! - `<!-- docs: live RELEASE SETUP -->`: by `tests/live_docs.rs` against a lab of RELEASE
//!   (`1.20`, `1.37`, or `any`), after the cluster state SETUP names is made;
//! - `<!-- docs: not run: REASON -->`: not run, for the reason given; tests/docs/not-run.txt
//!   lists every such block with a fingerprint of what it shows, so one cannot be added or
//!   changed unseen.
//!
//! Inside a block: `$ COMMAND` lines, each followed by its output. `$ echo $?` shows the previous
//! command's exit status, as does a last output line `(exit N)`; a command followed by neither
//! must exit 0. A line `...` stands for any number of lines.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::root;

/// README.md, then docs/*.md in name order.
pub fn files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut md: Vec<PathBuf> =
        std::fs::read_dir(root().join("docs")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
    md.sort();
    files.extend(md);
    files
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Offline { dir: Option<String> },
    Live { release: String, setup: String },
    NotRun { reason: String },
}

/// One command of a block and what the block shows for it.
#[derive(Debug, Clone)]
pub struct Step {
    pub command: String,
    /// The block's line of the command (1-based, in the file).
    pub line: usize,
    pub output: Vec<String>,
    /// The exit status shown (`echo $?` or `(exit N)`); none shown means 0.
    pub status: Option<i32>,
}

#[derive(Debug, Clone)]
pub struct Block {
    /// The file, relative to the repository's root.
    pub file: String,
    /// The line of the opening fence (1-based).
    pub line: usize,
    pub mode: Mode,
    pub steps: Vec<Step>,
}

impl Block {
    pub fn place(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

fn mode(marker: Option<&str>) -> Result<Mode, String> {
    let Some(m) = marker else { return Ok(Mode::Offline { dir: None }) };
    let m = m.trim();
    if let Some(reason) = m.strip_prefix("not run:") {
        let reason = reason.trim();
        if reason.is_empty() {
            return Err("`not run:` without a reason".into());
        }
        return Ok(Mode::NotRun { reason: reason.to_string() });
    }
    if m == "offline" {
        return Ok(Mode::Offline { dir: None });
    }
    if let Some(dir) = m.strip_prefix("offline in ") {
        return Ok(Mode::Offline { dir: Some(dir.trim().to_string()) });
    }
    if let Some(rest) = m.strip_prefix("live ") {
        let mut words = rest.split_whitespace();
        if let (Some(release), Some(setup), None) = (words.next(), words.next(), words.next()) {
            return Ok(Mode::Live { release: release.to_string(), setup: setup.to_string() });
        }
    }
    Err(format!("unknown marker {m:?}: want `offline`, `offline in DIR`, `live RELEASE SETUP` or `not run: REASON`"))
}

/// The command blocks of one file.
pub fn blocks(file: &str, text: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with("```") {
            i += 1;
            continue;
        }
        let open = i;
        let mut end = open + 1;
        while end < lines.len() && !lines[end].starts_with("```") {
            end += 1;
        }
        let body = &lines[open + 1..end.min(lines.len())];
        i = end + 1;
        if !body.iter().any(|l| l.starts_with("$ ") && l.contains("kubectl quota")) {
            continue;
        }
        let marker = open.checked_sub(1).map(|p| lines[p].trim()).and_then(|l| l.strip_prefix("<!-- docs:")).map(|l| l.strip_suffix("-->").unwrap_or(l));
        let mode = mode(marker).map_err(|e| format!("{file}:{}: {e}", open + 1))?;
        let mut steps: Vec<Step> = Vec::new();
        for (k, l) in body.iter().enumerate() {
            let line = open + 2 + k;
            if let Some(cmd) = l.strip_prefix("$ ") {
                if cmd.trim() == "echo $?" {
                    let Some(prev) = steps.last_mut() else { return Err(format!("{file}:{line}: `echo $?` before any command")) };
                    let status = body.get(k + 1).and_then(|s| s.trim().parse().ok());
                    let Some(status) = status else { return Err(format!("{file}:{line}: `echo $?` not followed by a number")) };
                    if prev.status.is_some() {
                        return Err(format!("{file}:{line}: a second exit status for one command"));
                    }
                    prev.status = Some(status);
                    steps.push(Step { command: "echo $?".into(), line, output: vec![], status: None });
                    continue;
                }
                steps.push(Step { command: cmd.to_string(), line, output: vec![], status: None });
            } else {
                let Some(step) = steps.last_mut() else { return Err(format!("{file}:{line}: output before any command")) };
                if step.command == "echo $?" {
                    continue;
                }
                step.output.push(l.to_string());
            }
        }
        steps.retain(|s| s.command != "echo $?");
        for s in &mut steps {
            if let Some(n) = s.output.last().and_then(|l| l.strip_prefix("(exit ")).and_then(|l| l.strip_suffix(')')).and_then(|n| n.parse().ok()) {
                s.output.pop();
                s.status = Some(n);
            }
        }
        out.push(Block { file: file.to_string(), line: open + 1, mode, steps });
    }
    Ok(out)
}

/// Every command block of README.md and docs/*.md.
pub fn all_blocks() -> Result<Vec<Block>, String> {
    let mut all = Vec::new();
    for path in files() {
        let rel = path.strip_prefix(root()).unwrap().display().to_string();
        all.extend(blocks(&rel, &std::fs::read_to_string(&path).unwrap())?);
    }
    Ok(all)
}

/// A command split as a POSIX shell splits a simple one: words, `'...'`, `"..."` (with `\"`
/// and `\\`), a `#` word starting a comment. Anything a shell would do more (pipes,
/// redirections, expansions, several commands) is an error: such a block is not a plain run.
pub fn split(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '#' if word.is_none() => break,
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(format!("{command:?}: unterminated quote")),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') if matches!(chars.peek(), Some('"' | '\\' | '$')) => w.push(chars.next().unwrap()),
                        Some('$' | '`') => return Err(format!("{command:?}: an expansion needs a shell")),
                        Some(c) => w.push(c),
                        None => return Err(format!("{command:?}: unterminated quote")),
                    }
                }
            }
            '|' | '>' | '<' | ';' | '&' | '$' | '`' | '(' | ')' | '*' | '?' | '\\' => {
                return Err(format!("{command:?}: {c:?} needs a shell"));
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// A `kubectl quota` command: its environment assignments and the plugin's arguments.
pub fn plugin_command(command: &str) -> Result<(Vec<(String, String)>, Vec<String>), String> {
    let words = split(command)?;
    let mut env = Vec::new();
    let mut rest = words.as_slice();
    while let Some((k, v)) =
        rest.first().and_then(|w| w.split_once('=')).filter(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
    {
        env.push((k.to_string(), v.to_string()));
        rest = &rest[1..];
    }
    match rest {
        [kubectl, quota, args @ ..] if kubectl == "kubectl" && quota == "quota" => Ok((env, args.to_vec())),
        _ => Err(format!("{command:?}: not a `kubectl quota` command")),
    }
}

/// Runs the plugin as a user's shell would, standard output and error into one stream, with
/// no kubeconfig, colours or CI variables of the test's own environment.
pub fn run_plugin(dir: &Path, env: &[(String, String)], args: &[String], kubeconfig: Option<&Path>) -> (String, i32) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let scratch = std::env::temp_dir().join(format!("kq-docs-{}-{}", std::process::id(), N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)));
    std::fs::create_dir_all(&scratch).unwrap();
    let out_path = scratch.join("out");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_kubectl-quota"));
    c.current_dir(dir).args(args).env_clear().env("PATH", std::env::var_os("PATH").unwrap_or_default()).env("NO_COLOR", "1");
    c.env("HOME", &scratch);
    match kubeconfig {
        Some(k) => c.env("KUBECONFIG", k),
        None => c.env("KUBECONFIG", scratch.join("no-kubeconfig")),
    };
    for (k, v) in env {
        c.env(k, v);
    }
    let status = c.stdin(Stdio::null()).stdout(out.try_clone().unwrap()).stderr(out).status().unwrap();
    let text = String::from_utf8_lossy(&std::fs::read(&out_path).unwrap()).into_owned();
    let _ = std::fs::remove_dir_all(&scratch);
    (text, status.code().unwrap_or(-1))
}

/// Whether the output matches the lines shown (`...` standing for any lines).
pub fn matches(shown: &[String], got: &[&str]) -> bool {
    match shown.split_first() {
        None => got.is_empty(),
        Some((first, rest)) if first == "..." => (0..=got.len()).any(|skip| matches(rest, &got[skip..])),
        Some((first, rest)) => got.first().is_some_and(|g| g == first) && matches(rest, &got[1..]),
    }
}

/// What a step printed against what the block shows, or `None` when they agree.
pub fn compare(block: &Block, step: &Step, got: &str, status: i32) -> Option<String> {
    let got_lines: Vec<&str> = got.lines().collect();
    let want_status = step.status.unwrap_or(0);
    if matches(&step.output, &got_lines) && status == want_status {
        return None;
    }
    let mut diff = format!("{}:{}: $ {}\n", block.file, step.line, step.command);
    if status != want_status {
        diff.push_str(&format!("  exit status {status}, the block shows {want_status}\n"));
    }
    if !matches(&step.output, &got_lines) {
        diff.push_str("  the block shows:\n");
        for l in &step.output {
            diff.push_str(&format!("    |{l}\n"));
        }
        diff.push_str("  it printed:\n");
        for l in &got_lines {
            diff.push_str(&format!("    |{l}\n"));
        }
    }
    Some(diff)
}
