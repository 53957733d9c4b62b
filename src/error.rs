//! The one exit-status rule of every subcommand:
//!
//! - **0**: done (for `check`: everything fits).
//! - **1**: refused: the API server refused what the command asked (`create` answered with
//!   422 or 403, or refused by the server's validation replayed before sending, `describe`'s
//!   LIST forbidden), a kubeconfig without the context, cluster or user named (as kubectl),
//!   or, for `check`, the replayed validation or admission would refuse something.
//! - **2**: the command could not do its job: bad flags or input (unreadable, too large,
//!   malformed), an unusable environment (no kubeconfig, bad `--request-timeout`), a server
//!   that cannot be reached or does not answer in time, a quota (`describe`) or workload
//!   (`why`) named that does not exist. `check` also exits 2 when it cannot read the quotas,
//!   since exit 1 would claim a verdict it never reached.
//! - **3** (`check`): nothing would be refused, but the answer is incomplete: something the
//!   verdict depends on could not be read (RBAC, an unreachable API), or an offline state says
//!   nothing about the namespace checked. Each gap is said on standard error. A refusal still
//!   exits 1: it stands whatever else could have been read. The cluster views (`capacity`,
//!   `uncovered`, `blocked`) exit 3 the same way when a read they can do without failed
//!   (nodes, pods, events the user may not list); `blocked` exits 1 when something is blocked,
//!   as `why` does while pods are missing.
//!
//! A closed standard output (`... | head`) is not an error: output stops quietly and the
//! status is the command's own, as ripgrep does.

use std::io::Write;

use kubectl_quota_engine::manifest::InputError;

/// `check`'s status when nothing would be refused but the answer is incomplete.
pub const INCOMPLETE: i32 = 3;

/// An error that ends the command: the message (printed as `error: ...`) and the exit status.
#[derive(Debug)]
pub struct Fatal(pub String, pub u8);

impl Fatal {
    /// Bad input or an unusable environment: exit status 2.
    pub fn input(msg: impl Into<String>) -> Fatal {
        Fatal(msg.into(), 2)
    }

    /// The server refused: exit status 1.
    pub fn server(msg: impl Into<String>) -> Fatal {
        Fatal(msg.into(), 1)
    }
}

impl From<InputError> for Fatal {
    fn from(e: InputError) -> Self {
        Fatal::input(e.to_string())
    }
}

/// Whether an error message is one kubectl shows without its `error: ` prefix: a server's
/// answer (`Error from server (Reason): ...`, or a refusal of invalid input, `The Kind
/// "name" is invalid: ...`), or a kubeconfig lacking the context asked for (`Error in
/// configuration: ...`).
pub fn is_server_answer(msg: &str) -> bool {
    msg.starts_with("Error from server")
        || msg.starts_with("Error in configuration: ")
        || (msg.starts_with("The ") && msg.lines().next().is_some_and(|l| l.contains(" is invalid")))
}

/// An error's message with its causes, as Go prints wrapped errors (`a: b: c`): each cause
/// after `: `, unless the message so far already says it. `tidy` rewrites each message first.
pub fn cause_chain(e: &dyn std::error::Error, tidy: impl Fn(String) -> String) -> String {
    let mut out = tidy(e.to_string());
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = tidy(c.to_string());
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

/// Writes to standard output. A closed pipe ends output quietly (the reader has seen enough);
/// any other write error is fatal.
pub fn print_out(text: &str) -> Result<(), Fatal> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Fatal::input(format!("cannot write to standard output: {e}"))),
    }
}

/// Writes to standard error, ignoring failure (there is nowhere left to report it).
pub fn print_err(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
