//! `kubectl quota guard`: the admission webhook (`serve`), its installation (`install`,
//! `uninstall`), how it is doing (`status`), and certificates for a guard outside the cluster
//! (`certs`). The webhook itself lives in [`crate::guard`].

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use serde_json::Value;

use crate::error::{print_out, Fatal};
use crate::global::GlobalFlags;
use crate::guard::install::{self, Endpoint, InCluster, Tls};
use crate::guard::{self, tls};
use crate::live;

pub const GUARD_HELP: &str = "\
Examples:
  # Install in the cluster: the guard's Deployment, its Service and the webhook registration
  kubectl quota guard install

  # See the objects first, without applying them
  kubectl quota guard install --dry-run=client -o yaml

  # A guard outside the cluster (a control-plane host): certificates, the server, its registration
  kubectl quota guard certs --host 10.0.0.5 --dir /etc/kubectl-quota-guard
  kubectl quota guard serve --listen 10.0.0.5:8443 --tls-cert-file /etc/kubectl-quota-guard/tls.crt \\
      --tls-private-key-file /etc/kubectl-quota-guard/tls.key
  kubectl quota guard install --url https://10.0.0.5:8443/validate --ca-file /etc/kubectl-quota-guard/ca.crt

  # Registered? Reachable? Synced? Which release's rules?
  kubectl quota guard status

  # Refuse, in namespace team-a, workloads none of whose pods quota would let be created
  kubectl label namespace team-a kubectl-quota.io/guard=enforce

The guard answers CREATE and UPDATE of Deployments, ReplicaSets, StatefulSets, DaemonSets,
Jobs, CronJobs and ReplicationControllers with the warnings `check` would give: pods quota
will refuse, ResourceClaims that keep pods Pending, a rollout that will stall, and the scope
or priority class that made a quota apply. It allows everything unless a namespace opts in
with the label above. It never speaks about kube-system, its own namespace, or a namespace or
object labelled kubectl-quota.io/guard=ignore. The API server calls it with failurePolicy
Ignore and a 2-second timeout: a guard that is down or slow never blocks admission.";

/// `kubectl quota guard`.
#[derive(Debug, Args)]
pub struct GuardArgs {
    #[command(subcommand)]
    pub command: GuardCommand,
}

#[derive(Debug, Subcommand)]
pub enum GuardCommand {
    /// Serve the webhook over HTTPS: /validate, /healthz, /readyz, /metrics, /status.
    #[command(after_help = "Examples:\n  kubectl quota guard serve --tls-cert-file tls.crt --tls-private-key-file tls.key")]
    Serve(ServeArgs),
    /// Register the webhook (and, without --url, run the guard in the cluster).
    #[command(
        after_help = "Examples:\n  kubectl quota guard install\n  kubectl quota guard install --url https://10.0.0.5:8443/validate --ca-file ca.crt\n  kubectl quota guard install --dry-run=client -o yaml"
    )]
    Install(InstallArgs),
    /// Remove the webhook registration first, then the in-cluster guard.
    #[command(after_help = "Examples:\n  kubectl quota guard uninstall")]
    Uninstall(UninstallArgs),
    /// Registered? Reachable? Synced? Which release's rules answer?
    #[command(after_help = "Examples:\n  kubectl quota guard status")]
    Status,
    /// Make a CA and a serving certificate for a guard outside the cluster.
    #[command(after_help = "Examples:\n  kubectl quota guard certs --host 10.0.0.5 --dir /etc/kubectl-quota-guard")]
    Certs(CertsArgs),
}

/// `guard serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address and port to listen on.
    #[arg(long, value_name = "ADDR:PORT", default_value = "0.0.0.0:8443")]
    pub listen: std::net::SocketAddr,
    /// The serving certificate (PEM); read again when it changes.
    #[arg(long = "tls-cert-file", value_name = "FILE")]
    pub tls_cert_file: PathBuf,
    /// The serving certificate's private key (PEM); read again when it changes.
    #[arg(long = "tls-private-key-file", value_name = "FILE")]
    pub tls_private_key_file: PathBuf,
    /// The guard's own namespace: never spoken about.
    #[arg(long = "guard-namespace", value_name = "NAMESPACE")]
    pub guard_namespace: Option<String>,
    /// The API server's admission configuration (its ResourceQuota `limitedResources`).
    #[arg(long = "admission-config", value_name = "FILE")]
    pub admission_config: Option<String>,
    /// Where a mutating webhook (a sidecar injector) sees a workload's pods, ask the API server
    /// for its pod in a dry run (dryRun=All) and answer for the pods as it returns them. Needs
    /// `create` on pods (`guard install --dry-run-webhooks` grants it).
    #[arg(long = "dry-run-webhooks")]
    pub dry_run_webhooks: bool,
    /// How long one dry run may take (default: half the webhook's 2-second timeout); past it
    /// the webhooks are named instead.
    #[arg(long = "dry-run-timeout", value_name = "DURATION", default_value = "1s", value_parser = super::flags::above_zero("--dry-run-timeout", "a dry run"))]
    pub dry_run_timeout: std::time::Duration,
    /// How long a review may take from its arrival to its answer (below the webhook's
    /// timeoutSeconds, 2 s as installed); past it the review is answered allowed, unchecked,
    /// with a warning saying so, and counted as late.
    #[arg(long = "decision-timeout", value_name = "DURATION", default_value = "1500ms", value_parser = super::flags::above_zero("--decision-timeout", "a decision"))]
    pub decision_timeout: std::time::Duration,
}

/// `--dry-run` as kubectl takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DryRun {
    None,
    Client,
}

/// Output formats of `install --dry-run=client`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InstallOutput {
    Yaml,
    Json,
}

/// `guard install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Register exactly this URL (a guard outside the cluster) instead of running one inside.
    #[arg(long, value_name = "URL", requires = "ca_file")]
    pub url: Option<String>,
    /// With --url: the CA (PEM) that signed the guard's serving certificate.
    #[arg(long = "ca-file", value_name = "FILE", requires = "url")]
    pub ca_file: Option<PathBuf>,
    /// The namespace the in-cluster guard runs in.
    #[arg(long = "guard-namespace", value_name = "NAMESPACE", default_value = "kubectl-quota")]
    pub guard_namespace: String,
    /// The in-cluster guard's image.
    #[arg(long, default_value = concat!("ghcr.io/kubectl-quota/kubectl-quota:v", env!("CARGO_PKG_VERSION")))]
    pub image: String,
    /// Let cert-manager issue the serving certificate and inject the CA, instead of a CA of ours.
    #[arg(long = "cert-manager", conflicts_with = "url")]
    pub cert_manager: bool,
    /// Run the in-cluster guard with `serve --dry-run-webhooks`, and let it create pods in dry
    /// runs (`create` on pods in its ClusterRole; nothing is ever stored).
    #[arg(long = "dry-run-webhooks", conflicts_with = "url")]
    pub dry_run_webhooks: bool,
    /// `client`: print the objects, apply nothing.
    #[arg(long = "dry-run", value_enum, default_value = "none", num_args = 0..=1, default_missing_value = "client")]
    pub dry_run: DryRun,
    /// Output format of --dry-run=client.
    #[arg(short = 'o', long, value_enum, default_value = "yaml")]
    pub output: InstallOutput,
}

/// `guard uninstall`.
#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// The namespace the in-cluster guard runs in.
    #[arg(long = "guard-namespace", value_name = "NAMESPACE", default_value = "kubectl-quota")]
    pub guard_namespace: String,
}

/// `guard certs`.
#[derive(Debug, Args)]
pub struct CertsArgs {
    /// A DNS name or IP address the API server calls the guard at (repeatable).
    #[arg(long = "host", value_name = "HOST", required = true)]
    pub hosts: Vec<String>,
    /// Where to write ca.crt, tls.crt and tls.key.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
}

/// Runs `guard`.
pub async fn run(g: &GlobalFlags, args: &GuardArgs) -> Result<i32, Fatal> {
    match &args.command {
        GuardCommand::Serve(a) => {
            let limited = crate::input::load_limited(a.admission_config.as_deref())?;
            let pod_security = crate::input::load_pod_security(a.admission_config.as_deref())?;
            // The files first: a mistake there is said before any cluster is looked for.
            tls::load(&a.tls_cert_file, &a.tls_private_key_file).map_err(Fatal::input)?;
            // The server runs until stopped: its watches are not held to a command's deadline.
            let conn = live::connect(&g.kube, None).await?.serving();
            let opts = guard::ServeOptions {
                listen: a.listen,
                cert: a.tls_cert_file.clone(),
                key: a.tls_private_key_file.clone(),
                own_namespace: a.guard_namespace.clone(),
                limited,
                pod_security,
                dry_run_webhooks: a.dry_run_webhooks.then_some(a.dry_run_timeout),
                decide_within: a.decision_timeout,
            };
            guard::serve(conn, opts).await
        }
        GuardCommand::Install(a) => install(g, a).await,
        GuardCommand::Uninstall(a) => uninstall(g, a).await,
        GuardCommand::Status => status(g).await,
        GuardCommand::Certs(a) => certs(a),
    }
}

fn certs(a: &CertsArgs) -> Result<i32, Fatal> {
    let issued = tls::issue(&a.hosts).map_err(Fatal::input)?;
    std::fs::create_dir_all(&a.dir).map_err(|e| Fatal::input(format!("{}: {e}", a.dir.display())))?;
    let write = |name: &str, text: &str, private: bool| -> Result<(), Fatal> {
        let path = a.dir.join(name);
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create(true).truncate(true);
        if private {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        use std::io::Write;
        o.open(&path).and_then(|mut f| f.write_all(text.as_bytes())).map_err(|e| Fatal::input(format!("{}: {e}", path.display())))
    };
    write("ca.crt", &issued.ca_cert, false)?;
    write("tls.crt", &issued.cert, false)?;
    write("tls.key", &issued.key, true)?;
    print_out(&format!("wrote {0}/ca.crt, {0}/tls.crt and {0}/tls.key (valid {1} years)\n", a.dir.display(), tls::VALID_YEARS))?;
    Ok(0)
}

/// Reads a CA bundle given with --ca-file: it must hold a PEM certificate.
fn read_ca(path: &Path) -> Result<String, Fatal> {
    use rustls_pki_types::pem::PemObject;
    let shown = path.display();
    let text = crate::input::read_file(path).map_err(|e| Fatal::input(format!("--ca-file {shown}: {e}")))?;
    match rustls_pki_types::CertificateDer::pem_slice_iter(text.as_bytes()).next() {
        Some(Ok(_)) => Ok(text),
        _ => Err(Fatal::input(format!("--ca-file {shown}: no PEM certificate in the file"))),
    }
}

async fn install(g: &GlobalFlags, a: &InstallArgs) -> Result<i32, Fatal> {
    if let Some(url) = &a.url {
        if !url.starts_with("https://") {
            return Err(Fatal::input(format!("--url {url}: the API server calls webhooks over https only")));
        }
    }
    let client_only = a.dry_run == DryRun::Client;
    let conn = if client_only { None } else { Some(live::connect(&g.kube, None).await?) };
    let endpoint = match (&a.url, &a.ca_file) {
        (Some(url), Some(ca)) => Endpoint::Url { url: url.clone(), ca_pem: read_ca(ca)? },
        _ => {
            let tls = if a.cert_manager { Tls::CertManager } else { own_tls(conn.as_ref(), &a.guard_namespace).await? };
            let pdb_v1 = match &conn {
                Some(c) => {
                    live::server_version(c).await.map(|(_, v)| v >= kubectl_quota_engine::version::KubeVersion::parse("1.21").expect("valid")).unwrap_or(true)
                }
                None => true,
            };
            Endpoint::InCluster(InCluster { namespace: a.guard_namespace.clone(), image: a.image.clone(), tls, pdb_v1, dry_run_webhooks: a.dry_run_webhooks })
        }
    };
    let objects = install::objects(&endpoint);
    let Some(conn) = conn else {
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": objects});
        let text = match a.output {
            InstallOutput::Yaml => crate::render::yaml::to_string(&list).map_err(Fatal::input)?,
            InstallOutput::Json => serde_json::to_string_pretty(&list).map_err(|e| Fatal::input(e.to_string()))? + "\n",
        };
        print_out(&text)?;
        return Ok(0);
    };
    for o in &objects {
        let t = install::target(o);
        live::guard::apply(&conn, &t, o).await.map_err(Fatal::server)?;
        print_out(&format!("{} serverside-applied\n", t.shown()))?;
    }
    Ok(0)
}

/// The CA and serving certificate of an in-cluster guard: the ones its Secret already holds
/// (so a second install keeps the webhook's CA bundle), else new ones.
async fn own_tls(conn: Option<&live::Conn>, namespace: &str) -> Result<Tls, Fatal> {
    if let Some(conn) = conn {
        let secret = live::guard::Target {
            api_version: "v1".into(),
            kind: "Secret".into(),
            plural: "secrets".into(),
            namespace: Some(namespace.into()),
            name: install::TLS_SECRET.into(),
        };
        if let Some(s) = live::guard::get(conn, &secret).await.map_err(Fatal::server)? {
            let field = |k: &str| -> Option<String> {
                use base64::Engine;
                let b = s.get("data")?.get(k)?.as_str()?;
                String::from_utf8(base64::engine::general_purpose::STANDARD.decode(b).ok()?).ok()
            };
            if let (Some(ca_cert), Some(cert), Some(key)) = (field("ca.crt"), field("tls.crt"), field("tls.key")) {
                return Ok(Tls::Own { ca_cert, cert, key });
            }
        }
    }
    let issued = tls::issue(&install::service_hosts(namespace)).map_err(Fatal::input)?;
    Ok(Tls::Own { ca_cert: issued.ca_cert, cert: issued.cert, key: issued.key })
}

async fn uninstall(g: &GlobalFlags, a: &UninstallArgs) -> Result<i32, Fatal> {
    let conn = live::connect(&g.kube, None).await?;
    // Every object either kind of installation makes, the registration first.
    let mut targets: Vec<live::guard::Target> = Vec::new();
    for (cert_manager, pdb_v1) in [(true, true), (false, true), (false, false)] {
        let tls = if cert_manager { Tls::CertManager } else { Tls::Own { ca_cert: String::new(), cert: String::new(), key: String::new() } };
        let endpoint = Endpoint::InCluster(InCluster { namespace: a.guard_namespace.clone(), image: String::new(), tls, pdb_v1, dry_run_webhooks: false });
        for o in install::objects(&endpoint).iter().rev().filter(|o| o["kind"] != "Namespace") {
            let t = install::target(o);
            if !targets.iter().any(|x| x.api_version == t.api_version && x.kind == t.kind && x.name == t.name) {
                targets.push(t);
            }
        }
    }
    let mut any = false;
    for t in &targets {
        match live::guard::delete(&conn, t).await {
            Ok(true) => {
                any = true;
                print_out(&format!("{} deleted\n", t.shown()))?;
            }
            Ok(false) => {}
            // A kind the cluster does not serve (cert-manager's, policy/v1beta1 on a new release).
            Err(e) if e.contains("could not find the requested resource") || e.contains("404") => {}
            Err(e) => return Err(Fatal::server(e)),
        }
    }
    if !any {
        print_out("nothing to uninstall: the guard is not installed\n")?;
        return Ok(0);
    }
    // Only an in-cluster installation made the namespace (one with --url made none): it is
    // spoken of only when it is seen there (a user who may not read it is told nothing).
    let namespace = live::guard::Target {
        api_version: "v1".into(),
        kind: "Namespace".into(),
        plural: "namespaces".into(),
        namespace: None,
        name: a.guard_namespace.clone(),
    };
    if matches!(live::guard::get(&conn, &namespace).await, Ok(Some(_))) {
        print_out(&format!(
            "namespace {:?} is kept: delete it with `kubectl delete namespace {}` if nothing else lives there\n",
            a.guard_namespace, a.guard_namespace
        ))?;
    }
    Ok(0)
}

async fn status(g: &GlobalFlags) -> Result<i32, Fatal> {
    let conn = live::connect(&g.kube, None).await?;
    let target = install::target(&install::webhook_configuration(&Endpoint::Url { url: String::new(), ca_pem: String::new() }));
    let Some(config) = live::guard::get(&conn, &target).await.map_err(Fatal::server)? else {
        print_out(&format!("Registered:  no (no {} on {})\n", target.shown(), conn.server))?;
        return Ok(1);
    };
    let webhook =
        config.get("webhooks").and_then(|w| w.as_array()).and_then(|w| w.iter().find(|w| w["name"] == install::WEBHOOK)).cloned().unwrap_or(Value::Null);
    let cc = &webhook["clientConfig"];
    let mut out = format!("Registered:  yes ({}, webhook {})\n", target.shown(), install::WEBHOOK);
    let reached = if let Some(url) = cc["url"].as_str() {
        out.push_str(&format!("Calls:       {url}\n"));
        let ca = cc["caBundle"].as_str().and_then(|b| {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(b).ok()
        });
        let base = url.strip_suffix("/validate").unwrap_or(url);
        live::guard::via_url(&format!("{base}/status"), &ca.unwrap_or_default()).await
    } else {
        let s = &cc["service"];
        let (ns, name, port) = (s["namespace"].as_str().unwrap_or(""), s["name"].as_str().unwrap_or(""), s["port"].as_i64().unwrap_or(443) as i32);
        out.push_str(&format!("Calls:       service {ns}/{name}:{port}{}\n", s["path"].as_str().unwrap_or("")));
        live::guard::via_service(&conn, ns, name, port, "/status").await
    };
    out.push_str(&format!(
        "Policy:      failurePolicy {}, timeout {}s, sideEffects {}\n",
        webhook["failurePolicy"].as_str().unwrap_or("?"),
        webhook["timeoutSeconds"].as_i64().unwrap_or(10),
        webhook["sideEffects"].as_str().unwrap_or("?")
    ));
    let code = match reached.and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| format!("not the guard's status: {e}"))) {
        Err(e) => {
            out.push_str(&format!("Reachable:   no ({e})\n"));
            1
        }
        Ok(s) => {
            out.push_str("Reachable:   yes\n");
            let ready = s["ready"].as_bool().unwrap_or(false);
            let caches: Vec<String> = s["caches"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    let synced = if c["synced"].as_bool().unwrap_or(false) { "" } else { " (not listed yet)" };
                    format!("{} {}{synced}", c["resource"].as_str().unwrap_or("?"), c["objects"])
                })
                .collect();
            out.push_str(&format!("Synced:      {}\n", if ready { "yes" } else { "no" }));
            out.push_str(&format!("Caches:      {}\n", caches.join(", ")));
            let k = &s["kubernetes"];
            let server = k["serverVersion"].as_str().map(|v| format!(", server {v}")).unwrap_or_default();
            out.push_str(&format!(
                "Rules:       Kubernetes {} (from the {}{server})\n",
                k["version"].as_str().unwrap_or("?"),
                k["source"].as_str().unwrap_or("?")
            ));
            out.push_str(&format!("Answered:    {} requests\n", s["requests"]));
            if ready {
                0
            } else {
                1
            }
        }
    };
    print_out(&crate::escape::escape_lines(&out))?;
    Ok(code)
}
