//! The guard: `check`'s answers given by the API server itself, as admission warnings at
//! `kubectl apply` time, to every client (kubectl, Argo CD, Flux, Helm).
//!
//! A validating admission webhook for the workloads whose pods controllers create later. It
//! decides with the same engine as `check`, from list+watch caches of what admission consults,
//! and answers `allowed: true` with warnings (or, in a namespace labelled
//! `kubectl-quota.io/guard: enforce`, refuses a workload none of whose pods can be created).
//!
//! Rooms: [`review`] (an AdmissionReview in, its answer out; no I/O), [`cache`] (what the
//! watches keep), [`dry_run`] (the pods mutating webhooks return, asked for where told to), [`serve`] (the HTTPS server), [`tls`] (certificates: read, reloaded, made),
//! [`metrics`] (Prometheus text), [`install`] (the objects an installation applies). Every
//! request to the cluster goes through [`crate::live`].

pub mod cache;
pub mod dry_run;
pub mod install;
pub mod metrics;
pub mod review;
pub mod serve;
pub mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kubectl_quota_engine::admission::LimitedResource;
use kubectl_quota_engine::check::cluster_kinds::Served;
use kubectl_quota_engine::version::{Rules, VersionReport, CURRENT};

use crate::error::{print_err, Fatal};
use crate::live::{self, Conn};
use cache::{Cache, Kind};

/// What `guard serve` is told.
pub struct ServeOptions {
    pub listen: SocketAddr,
    pub cert: PathBuf,
    pub key: PathBuf,
    /// The guard's own namespace, never spoken about.
    pub own_namespace: Option<String>,
    pub limited: Vec<LimitedResource>,
    /// The PodSecurity configuration from the same file (`None`: upstream's defaults).
    pub pod_security: Option<kubectl_quota_engine::admission::pod_security::Config>,
    /// Ask the API server for a workload's pod a mutating webhook sees, in a dry run taking at
    /// most this long (`None`: never; the webhooks are named).
    pub dry_run_webhooks: Option<Duration>,
    /// How long a review may take before it is answered allowed, unchecked, with a warning.
    pub decide_within: Duration,
}

/// Runs the guard until the process is stopped.
pub async fn serve(conn: Conn, o: ServeOptions) -> Result<i32, Fatal> {
    let tls = tls::Reloading::new(&o.cert, &o.key).map_err(Fatal::input)?;
    let (rules, kubernetes) = match live::server_version(&conn).await {
        Ok((raw, v)) => (Rules::for_version(v), VersionReport::new(&Rules::for_version(v), "server", Some(raw))),
        Err(e) => {
            print_err(&format!("guard: the server's version could not be read ({}): answering with the rules of {CURRENT}\n", crate::escape::escape(&e)));
            (Rules::current(), VersionReport::new(&Rules::current(), "default", None))
        }
    };
    let cache = Arc::new(Cache::default());
    watch_all(&conn, &cache).await;
    let mut excluded = vec!["kube-system".to_string()];
    excluded.extend(o.own_namespace);
    let large = Arc::new(tokio::sync::Semaphore::new(serve::LARGE_DECISIONS));
    let app = Arc::new(serve::App {
        cache,
        metrics: Default::default(),
        rules,
        kubernetes,
        limited: o.limited,
        pod_security: o.pod_security,
        excluded,
        large,
        medium: Arc::new(tokio::sync::Semaphore::new(serve::MEDIUM_READS)),
        dry_runs: o.dry_run_webhooks.map(|deadline| dry_run::DryRuns::new(Some(conn.clone()), deadline)),
        targets: Some(conn.clone()),
        decide_within: o.decide_within,
    });
    tokio::spawn(tls.clone().watch(Duration::from_secs(2)));
    tokio::spawn(serve::refresh_ceilings(app.clone()));
    let server = serve::serve(app, o.listen, tls);
    tokio::select! {
        r = server => r.map(|()| 0).map_err(Fatal::input),
        _ = stopped() => {
            print_err("guard: stopping\n");
            Ok(0)
        }
    }
}

/// SIGTERM (a pod being stopped) or SIGINT.
async fn stopped() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// Starts one watch per cached kind, as its row of the cluster-data kinds says; a kind the
/// server does not serve is taken as listed and empty (DeviceClasses before 1.34, say), and
/// an add-on's kind is watched only where discovery says it is served.
async fn watch_all(conn: &Conn, cache: &Arc<Cache>) {
    for kind in Kind::ALL {
        let k = kind.row();
        let api_version = k.api_version();
        let watched = match k.served {
            Served::Always => true,
            Served::Since(_) => live::guard::serves(conn, &api_version, k.plural).await != Some(false),
            Served::AddOn(_) => live::guard::serves(conn, &api_version, k.plural).await == Some(true),
        };
        if !watched {
            cache.not_served(kind);
            continue;
        }
        let (conn, cache) = (conn.clone(), cache.clone());
        tokio::spawn(async move { live::watch_kind(&conn, &api_version, k.kind, k.plural, |o| cache.keep(o), |c| cache.apply(kind, c)).await });
    }
}
