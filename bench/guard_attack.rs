//! Connection attacks on the guard, and a probe that sends normal reviews beside them, for
//! bench/guard-attack.sh. Loopback only; everything stops by itself after SECONDS.
//!
//!     guard_attack idle      ADDR CA_FILE N SECONDS   # N TLS connections that never send a request
//!     guard_attack slowloris ADDR CA_FILE N SECONDS   # N TLS connections sending a request head, 1 byte/s
//!     guard_attack tcp       ADDR CA_FILE N SECONDS   # N TCP connections that never start TLS
//!     guard_attack probe     ADDR CA_FILE RATE SECONDS BODY_FILE
//!
//! An attack opens its N connections (64 at a time, as fast as the guard accepts them) and
//! holds them; a connection the guard closes is opened again 1 s later, so the N stay
//! (the attacker does not give up). Every 5 s, and at the end, it prints how many are open and
//! how many the guard has closed.
//!
//! The probe sends RATE reviews a second (open loop: on schedule whether or not earlier ones
//! have answered), each on a fresh connection (TCP connect, TLS handshake, POST /validate,
//! answer read), as the API server does when it has no idle connection to the webhook; it
//! prints the latency percentiles of the whole exchange, each given 10 s, and how many failed.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls_pki_types::pem::PemObject;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

fn usage() -> ! {
    eprintln!("usage: guard_attack idle|slowloris|tcp ADDR CA_FILE N SECONDS\n       guard_attack probe ADDR CA_FILE RATE SECONDS BODY_FILE");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 5 {
        usage();
    }
    let addr: SocketAddr = args[1].parse().unwrap_or_else(|_| usage());
    let ca = std::fs::read(&args[2]).unwrap_or_else(|e| panic!("{}: {e}", args[2]));
    let n: u64 = args[3].parse().unwrap_or_else(|_| usage());
    let seconds: u64 = args[4].parse().unwrap_or_else(|_| usage());
    let tls = client_config(&ca);
    // One thread: the attacker and the probe take as little of the machine as they can.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    match args[0].as_str() {
        "probe" => {
            let body = std::fs::read(args.get(5).unwrap_or_else(|| usage())).unwrap();
            runtime.block_on(probe(addr, tls, n, seconds, body));
        }
        mode @ ("idle" | "slowloris" | "tcp") => {
            let mode = match mode {
                "idle" => Mode::Idle,
                "slowloris" => Mode::Slowloris,
                _ => Mode::Tcp,
            };
            runtime.block_on(attack(mode, addr, tls, n, deadline));
        }
        _ => usage(),
    }
}

fn client_config(ca: &[u8]) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls_pki_types::CertificateDer::pem_slice_iter(ca) {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut c = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    // Every connection a full handshake, as from a new client: no session resumed.
    c.resumption = rustls::client::Resumption::disabled();
    Arc::new(c)
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Idle,
    Slowloris,
    Tcp,
}

#[derive(Default)]
struct Counts {
    open: AtomicU64,
    opened: AtomicU64,
    closed_by_guard: AtomicU64,
    failed: AtomicU64,
    bytes: AtomicU64,
}

async fn attack(mode: Mode, addr: SocketAddr, tls: Arc<rustls::ClientConfig>, n: u64, deadline: Instant) {
    let counts = Arc::new(Counts::default());
    let connecting = Arc::new(tokio::sync::Semaphore::new(64));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        let (tls, counts, connecting) = (tls.clone(), counts.clone(), connecting.clone());
        tasks.spawn(async move {
            while Instant::now() < deadline {
                let permit = connecting.acquire().await.unwrap();
                let held = tokio::time::timeout_at(deadline.into(), hold(mode, addr, &tls, &counts, i, permit)).await;
                if held.is_err() {
                    break;
                }
                tokio::time::sleep_until(deadline.min(Instant::now() + Duration::from_secs(1)).into()).await;
            }
        });
    }
    let start = Instant::now();
    let report = |counts: &Counts| {
        eprintln!(
            "attack {:>3} s: open {}, opened {}, closed by the guard {}, failed to open {}, bytes sent {}",
            start.elapsed().as_secs(),
            counts.open.load(Relaxed),
            counts.opened.load(Relaxed),
            counts.closed_by_guard.load(Relaxed),
            counts.failed.load(Relaxed),
            counts.bytes.load(Relaxed)
        )
    };
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + Duration::from_secs(5), Duration::from_secs(5));
    loop {
        tokio::select! {
            r = tasks.join_next() => if r.is_none() { break },
            _ = tick.tick() => report(&counts),
        }
    }
    report(&counts);
    println!(
        "{} connections held: opened {}, closed by the guard {}, failed to open {}",
        n,
        counts.opened.load(Relaxed),
        counts.closed_by_guard.load(Relaxed),
        counts.failed.load(Relaxed)
    );
}

/// Opens one connection and holds it the way `mode` does until the guard closes it.
async fn hold(mode: Mode, addr: SocketAddr, tls: &Arc<rustls::ClientConfig>, counts: &Counts, i: u64, permit: tokio::sync::SemaphorePermit<'_>) {
    let Ok(Ok(tcp)) = tokio::time::timeout(Duration::from_secs(10), tokio::net::TcpStream::connect(addr)).await else {
        counts.failed.fetch_add(1, Relaxed);
        return;
    };
    let _ = tcp.set_nodelay(true);
    let name = rustls_pki_types::ServerName::IpAddress(addr.ip().into());
    let mut stream: Box<dyn Stream> = match mode {
        Mode::Tcp => Box::new(tcp),
        _ => match tokio::time::timeout(Duration::from_secs(10), tokio_rustls::TlsConnector::from(tls.clone()).connect(name, tcp)).await {
            Ok(Ok(s)) => Box::new(s),
            _ => {
                counts.failed.fetch_add(1, Relaxed);
                return;
            }
        },
    };
    drop(permit);
    counts.opened.fetch_add(1, Relaxed);
    counts.open.fetch_add(1, Relaxed);
    let mut buf = [0u8; 512];
    match mode {
        Mode::Idle | Mode::Tcp => {
            // Until the guard closes it (EOF or an error).
            while let Ok(n) = read(&mut *stream, &mut buf).await {
                if n == 0 {
                    break;
                }
            }
        }
        Mode::Slowloris => {
            // A request head that never ends, one byte a second; the first byte at a moment
            // of its own, so that the N do not all send together.
            let head = format!("POST /validate HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n");
            let mut bytes = head.into_bytes().into_iter().chain(std::iter::repeat_n(b"X-Padding-Header: 1\r\n".iter().copied(), usize::MAX).flatten());
            let offset = Duration::from_millis((i * 7919) % 1000);
            let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + offset, Duration::from_secs(1));
            loop {
                tokio::select! {
                    r = read(&mut *stream, &mut buf) => if !matches!(r, Ok(n) if n > 0) { break },
                    _ = tick.tick() => {
                        let b = bytes.next().unwrap_or(b' ');
                        if write_all(&mut *stream, &[b]).await.is_err() {
                            break;
                        }
                        counts.bytes.fetch_add(1, Relaxed);
                    }
                }
            }
        }
    }
    counts.open.fetch_sub(1, Relaxed);
    counts.closed_by_guard.fetch_add(1, Relaxed);
}

trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

// Reading and writing by hand: the plugin's tokio is built without `io-util`.
async fn read<S: AsyncRead + Unpin + ?Sized>(s: &mut S, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut rb = ReadBuf::new(buf);
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *s).poll_read(cx, &mut rb)).await?;
    Ok(rb.filled().len())
}

async fn write_all<S: AsyncWrite + Unpin + ?Sized>(s: &mut S, mut buf: &[u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        let n = std::future::poll_fn(|cx| std::pin::Pin::new(&mut *s).poll_write(cx, buf)).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        buf = &buf[n..];
    }
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *s).poll_flush(cx)).await
}

async fn probe(addr: SocketAddr, tls: Arc<rustls::ClientConfig>, rate: u64, seconds: u64, body: Vec<u8>) {
    let head =
        format!("POST /validate HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
    let mut request = head.into_bytes();
    request.extend_from_slice(&body);
    let request: Arc<[u8]> = request.into();
    let total = rate * seconds;
    let gap = Duration::from_nanos(1_000_000_000 / rate.max(1));
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..total {
        tokio::time::sleep_until((start + gap * i as u32).into()).await;
        let (tls, request) = (tls.clone(), request.clone());
        tasks.spawn(async move {
            let sent = Instant::now();
            let r = tokio::time::timeout(Duration::from_secs(10), exchange(addr, &tls, &request)).await;
            (sent.elapsed(), matches!(r, Ok(Ok(()))))
        });
    }
    let mut lat = Vec::with_capacity(total as usize);
    let mut failed = 0u64;
    while let Some(r) = tasks.join_next().await {
        let (d, ok) = r.unwrap();
        if ok {
            lat.push(d);
        } else {
            failed += 1;
        }
    }
    lat.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let pct = |p: u64| lat.get(((lat.len() as u64 * p / 1000) as usize).min(lat.len().saturating_sub(1))).map_or(0.0, |d| ms(*d));
    println!(
        "reviews {} on fresh connections, failed {failed}; latency ms: p50 {:.2} p90 {:.2} p99 {:.2} max {:.2}",
        lat.len() as u64 + failed,
        pct(500),
        pct(900),
        pct(990),
        lat.last().map_or(0.0, |d| ms(*d))
    );
}

/// One review on a fresh connection: connect, handshake, send, read the whole answer (the
/// guard closes the connection after it: `Connection: close`), which must be a 200.
async fn exchange(addr: SocketAddr, tls: &Arc<rustls::ClientConfig>, request: &[u8]) -> Result<(), String> {
    let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let _ = tcp.set_nodelay(true);
    let name = rustls_pki_types::ServerName::IpAddress(addr.ip().into());
    let mut s = tokio_rustls::TlsConnector::from(tls.clone()).connect(name, tcp).await.map_err(|e| e.to_string())?;
    write_all(&mut s, request).await.map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    // The guard may end the TLS session without close_notify: what was read counts.
    while let Ok(n) = read(&mut s, &mut buf).await {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buf[..n]);
    }
    if answer.starts_with(b"HTTP/1.1 200") {
        Ok(())
    } else {
        Err(format!("answered {:?}", String::from_utf8_lossy(&answer[..answer.len().min(40)])))
    }
}
