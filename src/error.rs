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

/// Whose certificate failed to verify: the API server's (its CA comes from the kubeconfig) or a
/// manifest URL's (this machine's roots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsPeer {
    ApiServer,
    Url,
}

/// A certificate that failed to verify, found in `e`'s causes, in kubectl's (Go's) words, then
/// what to do about it; `None` when no cause is one.
pub fn tls_failure(e: &(dyn std::error::Error + 'static), peer: TlsPeer) -> Option<String> {
    use rustls::CertificateError as C;
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        // An io::Error hands on its inner error's source, not the inner error (and the
        // connectors wrap one io::Error in another): look inside.
        let mut found = c.downcast_ref::<rustls::Error>();
        let mut io = c.downcast_ref::<std::io::Error>();
        while let (None, Some(e)) = (found, io) {
            let inner = e.get_ref().map(|i| i as &(dyn std::error::Error + 'static));
            found = inner.and_then(|i| i.downcast_ref::<rustls::Error>());
            io = inner.and_then(|i| i.downcast_ref::<std::io::Error>());
        }
        if let Some(rustls::Error::InvalidCertificate(ce)) = found {
            let ca = match peer {
                TlsPeer::ApiServer => "set the cluster's CA in the kubeconfig (kubectl config set-cluster NAME --certificate-authority=FILE --embed-certs)",
                TlsPeer::Url => "add its CA to this machine's trusted roots, or point SSL_CERT_FILE at a bundle that holds it",
            };
            let renew = "renew the server's certificate, or correct this machine's clock";
            let rename = "connect by a name the certificate holds, or reissue it for this one";
            let (words, fix) = match ce {
                C::UnknownIssuer => ("x509: certificate signed by unknown authority".to_string(), format!("no CA trusted here signs the server's certificate: {ca}")),
                // A trusted CA of the issuer's name whose key did not sign it (every kubeadm
                // cluster's CA is called `kubernetes`): Go says unknown authority too.
                C::BadSignature => (
                    "x509: certificate signed by unknown authority (possibly because of a verification error while trying to verify a candidate authority certificate of the same name)".to_string(),
                    format!("a trusted CA has the issuer's name but not its key, as another cluster's CA would: {ca}"),
                ),
                C::NotValidForName => ("x509: certificate is not valid for the host".to_string(), rename.to_string()),
                C::NotValidForNameContext { expected, presented } => {
                    // The names as the certificate has them (`DnsName("a.example")` -> a.example).
                    let names: Vec<&str> = presented.iter().map(|p| p.split('"').nth(1).unwrap_or(p)).collect();
                    (format!("x509: certificate is valid for {}, not {}", names.join(", "), expected.to_str()), rename.to_string())
                }
                C::Expired | C::NotValidYet => ("x509: certificate has expired or is not yet valid".to_string(), renew.to_string()),
                C::ExpiredContext { time, not_after } => (
                    format!("x509: certificate has expired or is not yet valid: current time {} is after {}", rfc3339(time.as_secs()), rfc3339(not_after.as_secs())),
                    renew.to_string(),
                ),
                C::NotValidYetContext { time, not_before } => (
                    format!("x509: certificate has expired or is not yet valid: current time {} is before {}", rfc3339(time.as_secs()), rfc3339(not_before.as_secs())),
                    renew.to_string(),
                ),
                C::Other(o) if format!("{o:?}").contains("CaUsedAsEndEntity") => (
                    "x509: the server's certificate is a CA certificate (basicConstraints CA:TRUE), not one for a server".to_string(),
                    "the server must present a certificate its CA signs for its name, not the CA's own".to_string(),
                ),
                other => (format!("x509: {other:?}"), ca.to_string()),
            };
            return Some(format!("tls: failed to verify certificate: {words} ({fix})"));
        }
        cause = c.source();
    }
    None
}

/// Seconds since the epoch as Go prints a UTC time (`2026-01-02T03:04:05Z`).
fn rfc3339(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days to a civil date (proleptic Gregorian), after Howard Hinnant's algorithm.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3_600, rest % 3_600 / 60, rest % 60)
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

#[cfg(test)]
mod tls_tests {
    use super::*;

    #[test]
    fn times_print_as_go_prints_utc() {
        for (secs, want) in [(0, "1970-01-01T00:00:00Z"), (951_782_400, "2000-02-29T00:00:00Z"), (1_795_829_530, "2026-11-28T01:32:10Z")] {
            assert_eq!(rfc3339(secs), want);
        }
    }

    #[test]
    fn certificate_failures_are_found_inside_the_connectors_wrapping() {
        let io = |e: rustls::Error| std::io::Error::other(std::io::Error::new(std::io::ErrorKind::InvalidData, e));
        let said = tls_failure(&io(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)), TlsPeer::ApiServer).unwrap();
        assert!(said.starts_with("tls: failed to verify certificate: x509: certificate signed by unknown authority (no CA trusted here signs"), "{said}");
        assert!(said.contains("kubectl config set-cluster"), "{said}");
        assert_eq!(tls_failure(&std::io::Error::other("connection refused"), TlsPeer::Url), None);
    }
}
