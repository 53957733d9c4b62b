//! A fixed-rate HTTPS load for the guard's benchmark (bench/guard.sh): POSTs one body at RATE
//! requests a second for SECONDS, over keep-alive connections that trust CA_FILE, and prints
//! the latency percentiles (whole request: send, answer, body read) and how many failed.
//!
//!     cargo run --release --example guard_load -- URL BODY_FILE CA_FILE RATE SECONDS [TOKEN_FILE]
//!
//! The requests are sent on schedule whether or not earlier ones have answered (an open loop),
//! so a slow answer shows in the percentiles instead of slowing the load down. Bounded: at most
//! RATE x SECONDS requests, 4 x RATE in flight, each given 10 s.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls_pki_types::pem::PemObject;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 5 {
        eprintln!("usage: guard_load URL BODY_FILE CA_FILE RATE SECONDS [TOKEN_FILE]");
        std::process::exit(2);
    }
    let (url, body, ca) = (args[0].clone(), std::fs::read(&args[1]).unwrap(), std::fs::read(&args[2]).unwrap());
    let rate: u64 = args[3].parse().unwrap();
    let seconds: u64 = args[4].parse().unwrap();
    let token = args.get(5).map(|f| std::fs::read_to_string(f).unwrap().trim().to_string());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    runtime.block_on(run(url, body, ca, rate, seconds, token));
}

async fn run(url: String, body: Vec<u8>, ca: Vec<u8>, rate: u64, seconds: u64, token: Option<String>) {
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls_pki_types::CertificateDer::pem_slice_iter(&ca) {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls).https_only().enable_http1().build();
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).pool_max_idle_per_host(256).build(connector);
    let body = Bytes::from(body);
    let total = rate * seconds;
    let gap = Duration::from_nanos(1_000_000_000 / rate);
    let slots = Arc::new(tokio::sync::Semaphore::new((4 * rate) as usize));
    let mut tasks = tokio::task::JoinSet::new();
    let start = Instant::now();
    let mut dropped = 0u64;
    for i in 0..total {
        tokio::time::sleep_until((start + gap * i as u32).into()).await;
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            dropped += 1;
            continue;
        };
        let (client, url, body, token) = (client.clone(), url.clone(), body.clone(), token.clone());
        tasks.spawn(async move {
            let _permit = permit;
            let mut req = http::Request::post(&url).header("content-type", "application/json");
            if let Some(t) = &token {
                req = req.header("authorization", format!("Bearer {t}"));
            }
            let req = req.body(Full::new(body)).unwrap();
            let sent = Instant::now();
            let r = tokio::time::timeout(Duration::from_secs(10), async {
                let resp = client.request(req).await.map_err(|e| e.to_string())?;
                let ok = resp.status().is_success();
                resp.into_body().collect().await.map_err(|e| e.to_string())?;
                if ok {
                    Ok(())
                } else {
                    Err("HTTP error".to_string())
                }
            })
            .await;
            (sent.elapsed(), matches!(r, Ok(Ok(()))))
        });
    }
    let mut lat: Vec<Duration> = Vec::with_capacity(total as usize);
    let mut failed = 0u64;
    while let Some(r) = tasks.join_next().await {
        let (d, ok) = r.unwrap();
        if ok {
            lat.push(d);
        } else {
            failed += 1;
        }
    }
    let took = start.elapsed();
    lat.sort();
    let pct = |p: f64| lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1))).map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    println!(
        "requests {} in {:.1} s ({:.0}/s), failed {failed}, not sent (too many in flight) {dropped}; latency ms: p50 {:.2} p90 {:.2} p99 {:.2} p99.9 {:.2} max {:.2}",
        lat.len() as u64 + failed,
        took.as_secs_f64(),
        (lat.len() as u64 + failed) as f64 / took.as_secs_f64(),
        pct(0.50),
        pct(0.90),
        pct(0.99),
        pct(0.999),
        lat.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    );
}
