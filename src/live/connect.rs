//! Connecting as kubectl does: kubeconfig files (merged, read through the input cap),
//! context, user, impersonation, `--request-timeout`, and the retry policy for 429/503/504.

use super::body::capped_body;
use super::Conn;
use std::time::{Duration, Instant};

use crate::error::Fatal;
use crate::global::KubeFlags;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::Config;

/// The longest `--request-timeout` accepted: a year. Anything longer is surely a typo, and
/// would overflow the clock arithmetic underneath.
const MAX_REQUEST_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// How long a command's requests may take together when no `--request-timeout` is given:
/// without a bound, a server sending one byte a second would hold the command for ever.
/// Five minutes is far beyond what a real server needs (it ends a request after 60 s by
/// default, and the largest cluster views take seconds), so it cuts only a server that is
/// stuck or hostile. `KUBECTL_QUOTA_DEADLINE` (a duration, as `--request-timeout` takes) changes it.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(300);

/// How long the server may take.
#[derive(Debug, Clone, Copy)]
pub enum Bound {
    /// `--request-timeout`: each request as a whole.
    PerRequest(Duration),
    /// No `--request-timeout`: every request ends by `at`, `total` after the command connected.
    Deadline { at: Instant, total: Duration },
    /// `--request-timeout 0`, and `guard serve` without one: no bound.
    None,
}

/// The command's deadline: [`DEFAULT_DEADLINE`], or `KUBECTL_QUOTA_DEADLINE`.
fn command_deadline() -> Result<Duration, String> {
    match std::env::var("KUBECTL_QUOTA_DEADLINE") {
        Ok(v) => parse_duration(&v)
            .map(|d| d.unwrap_or(MAX_REQUEST_TIMEOUT))
            .map_err(|e| format!("KUBECTL_QUOTA_DEADLINE: {}", e.trim_start_matches("invalid --request-timeout "))),
        Err(_) => Ok(DEFAULT_DEADLINE),
    }
}

/// A duration as Go (and so kubectl) prints one: `5m0s`, `1h0m30s`, `1.5s`, `500ms`.
pub fn go_duration(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        return format!("{}ms", d.as_millis());
    }
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let frac = d.subsec_millis();
    let s = if frac == 0 { s.to_string() } else { format!("{s}.{frac:03}").trim_end_matches('0').to_string() };
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, m) => format!("{m}m{s}s"),
        (h, m) => format!("{h}h{m}m{s}s"),
    }
}

/// kubectl's `--request-timeout`: `0` (none), a bare whole number of seconds, or a duration as
/// Go writes one: numbers, each with a unit (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`), decimals
/// allowed, such as `1m30s`, `1.5h` or `500ms`.
pub fn parse_duration(s: &str) -> Result<Option<Duration>, String> {
    let s = s.trim();
    let shown = crate::escape::escape(s);
    let invalid = || format!("invalid --request-timeout {shown:?}: use a whole number of seconds, or numbers with units (e.g. 30s, 1m30s, 500ms), or 0");
    let too_large = || format!("invalid --request-timeout {shown:?}: longer than the maximum of 8760h");
    // Nanoseconds, exactly; anything past the maximum stops the sum.
    let max = MAX_REQUEST_TIMEOUT.as_nanos();
    let nanos: u128 = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        let secs: u128 = s.parse().map_err(|_| too_large())?;
        secs.checked_mul(1_000_000_000).ok_or_else(too_large)?
    } else {
        let mut rest = s.strip_prefix('+').unwrap_or(s);
        if rest.is_empty() {
            return Err(invalid());
        }
        let mut total: u128 = 0;
        while !rest.is_empty() {
            let int_len = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            let (int, after) = rest.split_at(int_len);
            let (frac, after) = match after.strip_prefix('.') {
                Some(a) => a.split_at(a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len())),
                None => ("", after),
            };
            if int.is_empty() && frac.is_empty() {
                return Err(invalid());
            }
            let unit_len = after.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(after.len());
            let (unit, after) = after.split_at(unit_len);
            let per: u128 = match unit {
                "ns" => 1,
                "us" | "µs" | "μs" => 1_000,
                "ms" => 1_000_000,
                "s" => 1_000_000_000,
                "m" => 60_000_000_000,
                "h" => 3_600_000_000_000,
                _ => return Err(invalid()),
            };
            // Digits beyond the maximum's 20 make it too large whatever the unit (a digit of
            // a fraction beyond a nanosecond's is dropped, as Go drops it).
            let whole: u128 = if int.is_empty() { 0 } else { int.parse().map_err(|_| too_large())? };
            let mut part = whole.checked_mul(per).ok_or_else(too_large)?;
            let mut scale = per;
            for d in frac.bytes() {
                scale /= 10;
                part += u128::from(d - b'0') * scale;
            }
            total = total.checked_add(part).filter(|t| *t <= max).ok_or_else(too_large)?;
            rest = after;
        }
        total
    };
    if nanos > max {
        return Err(too_large());
    }
    let d = Duration::from_nanos(nanos as u64);
    Ok((!d.is_zero()).then_some(d))
}

/// Connects as kubectl would: `--kubeconfig`, else `$KUBECONFIG` (several files merged), else
/// `~/.kube/config`, else the in-cluster service account; then `--context`, `--cluster`,
/// `--user`, `--as`, `--as-group`, `--request-timeout`. A context, cluster or user the
/// kubeconfig does not have is refused as kubectl refuses it (exit status 1); any other
/// unusable configuration is exit status 2.
pub async fn connect(k: &KubeFlags, namespace: Option<&str>) -> Result<Conn, Fatal> {
    connect_with(k, namespace).await.map_err(|e| match e {
        Unusable::Names(m) => Fatal::server(m),
        Unusable::Other(m) => Fatal::input(m),
    })
}

/// Why a kubeconfig cannot be used.
enum Unusable {
    /// It lacks the context, cluster or user asked for: kubectl's words, exit status 1.
    Names(String),
    Other(String),
}

impl From<String> for Unusable {
    fn from(m: String) -> Unusable {
        Unusable::Other(m)
    }
}

/// kubectl's checks of the names a command asks for, before anything else is read from
/// the kubeconfig: a context (`--context`, else the current one) it lacks, then a
/// `--cluster` it lacks, are "Error in configuration" (both listed when both are missing;
/// a missing cluster alone is worded on its own); a `--user` it lacks is refused after.
fn names_exist(kc: &Kubeconfig, k: &KubeFlags) -> Result<(), Unusable> {
    let context_name = k.context.clone().or_else(|| kc.current_context.clone()).filter(|c| !c.is_empty());
    let context = context_name.as_ref().and_then(|n| kc.contexts.iter().find(|c| &c.name == n));
    let mut errors = Vec::new();
    if let (Some(name), None) = (&context_name, context) {
        errors.push(format!("context was not found for specified context: {name}"));
    }
    if let Some(cluster) = k.cluster.as_ref().filter(|c| !c.is_empty() && !kc.clusters.iter().any(|n| &n.name == *c)) {
        let missing = format!("no server found for cluster {cluster:?}");
        if errors.is_empty() {
            return Err(Unusable::Names(missing));
        }
        errors.push(missing);
    }
    match errors.as_slice() {
        [] => {}
        [one] => return Err(Unusable::Names(format!("Error in configuration: {one}"))),
        many => return Err(Unusable::Names(format!("Error in configuration: \n* {}", many.join("\n* ")))),
    }
    match k.user.as_ref().filter(|u| !u.is_empty() && !kc.auth_infos.iter().any(|n| &n.name == *u)) {
        Some(user) => Err(Unusable::Names(format!("auth info {user:?} does not exist"))),
        None => Ok(()),
    }
}

async fn connect_with(k: &KubeFlags, namespace: Option<&str>) -> Result<Conn, Unusable> {
    let options = KubeConfigOptions { context: k.context.clone(), cluster: k.cluster.clone(), user: k.user.clone() };
    let (timeout, bound) = match &k.request_timeout {
        Some(t) => match parse_duration(t)? {
            Some(d) => (Some(d), Bound::PerRequest(d)),
            None => (None, Bound::None),
        },
        None => {
            let total = command_deadline()?;
            (None, Bound::Deadline { at: Instant::now() + total, total })
        }
    };
    let mut config = match &k.kubeconfig {
        Some(path) => {
            let kc = read_kubeconfig(std::path::Path::new(path))?;
            names_exist(&kc, k)?;
            Config::from_custom_kubeconfig(kc, &options).await.map_err(|e| format!("{path}: {e}"))?
        }
        None => match kubeconfig_from_env()? {
            Some(kc) => {
                names_exist(&kc, k)?;
                Config::from_custom_kubeconfig(kc, &options).await.map_err(|e| format!("kubeconfig: {e}"))?
            }
            None => Config::incluster().map_err(|_| "no kubeconfig found and not running in a cluster: pass --kubeconfig or set KUBECONFIG".to_string())?,
        },
    };
    // insecure-skip-tls-verify without a CA: no root is consulted, so none is read (this
    // machine's CA files cost ~30 ms, and a machine without any could not connect at all).
    if config.accept_invalid_certs && config.root_cert.is_none() {
        config.root_cert = Some(Vec::new());
    }
    if let Some(u) = &k.as_user {
        config.auth_info.impersonate = Some(u.clone());
    }
    if !k.as_group.is_empty() {
        config.auth_info.impersonate_groups = Some(k.as_group.clone());
    }
    if let Some(d) = timeout {
        config.connect_timeout = Some(d);
        config.read_timeout = Some(d);
        config.write_timeout = Some(d);
    }
    let namespace = namespace.map(str::to_string).unwrap_or_else(|| config.default_namespace.clone());
    let server = config.cluster_url.to_string().trim_end_matches('/').to_string();
    // A server asking to be asked again (429, 503, 504) is, a bounded number of times: the
    // client's own default honours any Retry-After and waits up to 1000 s between 15 tries,
    // so a server answering 429 for ever held the command for ever.
    config.default_retry = false;
    let retry = tower::retry::RetryLayer::new(retry_policy());
    // Every response body is read through a cap, so a server streaming without end fails
    // with an error instead of filling memory.
    let limit = tower::util::MapResponseLayer::new(capped_body);
    let builder = kube::client::ClientBuilder::try_from(config).map_err(|e| Unusable::Other(format!("cannot build a client: {e}")))?;
    // Repeating needs a service it can clone: a buffer in front of the client's own stack.
    let client = builder.with_layer(&tower::buffer::BufferLayer::new(256)).with_layer(&retry).with_layer(&limit).build();
    Ok(Conn { client, namespace, server, timeout: bound })
}

/// Tries after the first of a request the server asks to repeat (429, 503, 504), as many
/// as kubectl's client makes.
const RETRIES: u32 = 10;

/// How a request the server asks to repeat is repeated: [`RETRIES`] times, 20 ms after the
/// first answer, then twice as long each time up to 200 ms: about 1.5 s in all, whatever
/// Retry-After says. Then the server's last answer is the error.
fn retry_policy() -> kube::client::retry::RetryPolicy {
    kube::client::retry::RetryPolicy::new(Duration::from_millis(20), Duration::from_millis(200), RETRIES, false).expect("valid backoff")
}

/// A kubeconfig file read through the input cap, its token files read through it too (a
/// `tokenFile: /dev/zero` ends with an error instead of filling memory).
fn read_kubeconfig(path: &std::path::Path) -> Result<Kubeconfig, String> {
    let shown = path.display().to_string();
    crate::input::read_file(path).map_err(|e| format!("{shown}: {e}"))?;
    let mut kc = Kubeconfig::read_from(path).map_err(|e| format!("{shown}: {e}"))?;
    for named in kc.auth_infos.iter_mut() {
        let Some(auth) = named.auth_info.as_mut() else { continue };
        if auth.token.is_some() {
            continue;
        }
        if let Some(file) = auth.token_file.clone() {
            match crate::input::read_file(std::path::Path::new(&file)) {
                Ok(token) => {
                    auth.token = Some(token.trim().to_string().into());
                    auth.token_file = None;
                }
                Err(e) if e.contains("larger than") => return Err(format!("{shown}: user {:?}: tokenFile {file}: {e}", named.name)),
                Err(_) => {}
            }
        }
    }
    Ok(kc)
}

/// `$KUBECONFIG` as kubectl reads it: the listed files merged, the first to set a value
/// winning; files that do not exist are skipped (kubectl ignores them too). Without the
/// variable, `~/.kube/config` when it exists.
fn kubeconfig_from_env() -> Result<Option<Kubeconfig>, String> {
    let paths: Vec<std::path::PathBuf> = match std::env::var_os("KUBECONFIG") {
        Some(v) => std::env::split_paths(&v).filter(|p| !p.as_os_str().is_empty()).collect(),
        None => vec![],
    };
    let paths = if paths.is_empty() {
        match std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".kube").join("config")) {
            Some(p) => vec![p],
            None => vec![],
        }
    } else {
        paths
    };
    let mut merged: Option<Kubeconfig> = None;
    for p in paths.iter().filter(|p| p.exists()) {
        let kc = read_kubeconfig(p)?;
        merged = Some(match merged {
            Some(m) => m.merge(kc).map_err(|e| format!("{}: {e}", p.display()))?,
            None => kc,
        });
    }
    Ok(merged)
}

/// The kubeconfig kubectl would use: `--kubeconfig`, else `$KUBECONFIG` / `~/.kube/config`
/// (read as in [`connect`]: capped, missing list entries skipped). `None` when there is none.
pub fn load_kubeconfig(path: Option<&str>) -> Result<Option<Kubeconfig>, String> {
    match path {
        Some(p) => read_kubeconfig(std::path::Path::new(p)).map(Some),
        None => kubeconfig_from_env(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_timeout_accepts_kubectl_forms() {
        let cases = [
            ("0", Ok(None)),
            ("30", Ok(Some(30_000))),
            ("30s", Ok(Some(30_000))),
            ("500ms", Ok(Some(500))),
            ("2m", Ok(Some(120_000))),
            ("1h", Ok(Some(3_600_000))),
            ("1m30s", Ok(Some(90_000))),
            ("1h2m3s4ms", Ok(Some(3_723_004))),
            ("1.5h", Ok(Some(5_400_000))),
            (".5s", Ok(Some(500))),
            ("2500us", Ok(Some(2))),
            ("+10s", Ok(Some(10_000))),
            ("0s", Ok(None)),
        ];
        for (s, want) in cases {
            let got: Result<Option<u128>, String> = parse_duration(s).map(|d| d.map(|d| d.as_millis()));
            assert_eq!(got, want, "{s}");
        }
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("18446744073709551615h").unwrap_err().contains("maximum"));
        assert!(parse_duration("99999999999999999999999").unwrap_err().contains("maximum"));
        assert!(parse_duration("8761h").is_err());
        assert_eq!(parse_duration("8760h").unwrap(), Some(Duration::from_secs(8760 * 3600)));
        for bad in ["5d", "-1s", "1m30", "s", "", ".s", "1..5s", "1s2"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn help_states_the_default_deadline() {
        let flags = <KubeFlags as clap::Args>::augment_args(clap::Command::new("t"));
        let arg = flags.get_arguments().find(|a| a.get_id() == "request_timeout").expect("the flag");
        let help = arg.get_help().expect("its help").to_string().split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(help.contains(&format!("must end within {} together", go_duration(DEFAULT_DEADLINE))), "{help}");
    }

    #[test]
    fn durations_print_as_go_prints_them() {
        for (ms, want) in [(500, "500ms"), (1_000, "1s"), (1_500, "1.5s"), (30_000, "30s"), (300_000, "5m0s"), (90_000, "1m30s"), (3_630_000, "1h0m30s")] {
            assert_eq!(go_duration(Duration::from_millis(ms)), want);
        }
    }
}
