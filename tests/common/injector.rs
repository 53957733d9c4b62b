//! A sidecar injector as the real API server calls it: an HTTPS server on loopback (its own CA,
//! from the guard's certificate maker) answering AdmissionReview v1 for pods with a JSONPatch
//! that adds container `istio-proxy` (requests cpu 100m / memory 128Mi, limits cpu 2 / memory
//! 1Gi), once. A pod labelled `kq-deny` is refused instead, with a message holding a control
//! character (what the plugin prints of it must show it escaped).
//!
//! One connection at a time, each read within 5 s and answered with `Connection: close`; the
//! server stops when its [`Injector`] is dropped.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

/// The message the injector refuses a `kq-deny` pod with (a BEL inside).
pub const DENIAL: &str = "sidecars refused for this pod\u{7}";

/// A running injector: its URL's port, the CA that signed its certificate (PEM), how many
/// reviews it answered.
pub struct Injector {
    pub port: u16,
    pub ca_pem: String,
    pub reviews: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Injector {
    /// Starts the injector on a free loopback port.
    pub fn start() -> Injector {
        let issued = kubectl_quota::guard::tls::issue(&["127.0.0.1".into()]).unwrap();
        let dir = std::env::temp_dir().join(format!("kq-injector-{}-{}", std::process::id(), rand_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tls.crt"), &issued.cert).unwrap();
        std::fs::write(dir.join("tls.key"), &issued.key).unwrap();
        let config = Arc::new(kubectl_quota::guard::tls::load(&dir.join("tls.crt"), &dir.join("tls.key")).unwrap());
        std::fs::remove_dir_all(&dir).ok();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let reviews = Arc::new(AtomicUsize::new(0));
        let (stopped, counted) = (stop.clone(), reviews.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                if serve(stream, config.clone()).is_some() {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        Injector { port, ca_pem: issued.ca_cert, reviews, stop }
    }

    /// The URL the webhook configuration names.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}/inject", self.port)
    }

    /// The CA as a webhook's `caBundle` (base64 of the PEM).
    pub fn ca_bundle(&self) -> String {
        base64(self.ca_pem.as_bytes())
    }

    /// A MutatingWebhookConfiguration `name` (apiVersion and kind left to the caller) that
    /// sends this injector the pods created in namespaces labelled `<name>: "yes"`, with the
    /// `sideEffects` given (v1 takes `None`, v1beta1 also `Unknown`).
    pub fn configuration(&self, name: &str, side_effects: &str) -> Value {
        json!({
            "metadata": {"name": name},
            "webhooks": [{
                "name": "sidecar-injector.kq.test",
                "clientConfig": {"url": self.url(), "caBundle": self.ca_bundle()},
                "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
                "namespaceSelector": {"matchLabels": {name: "yes"}},
                "failurePolicy": "Fail", "sideEffects": side_effects, "admissionReviewVersions": ["v1"], "timeoutSeconds": 5,
            }],
        })
    }
}

impl Drop for Injector {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

/// One connection: one request read (headers, then `Content-Length` bytes), one answer.
/// `None` when it was not a review this server answered.
fn serve(stream: TcpStream, config: Arc<rustls::ServerConfig>) -> Option<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream.set_write_timeout(Some(Duration::from_secs(5))).ok()?;
    let conn = rustls::ServerConnection::new(config).ok()?;
    let mut tls = rustls::StreamOwned::new(conn, stream);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 20 {
            return None;
        }
        let n = tls.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
    let length: usize = head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    while buf.len() < head_end + length.min(8 << 20) {
        let n = tls.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let review: Value = serde_json::from_slice(&buf[head_end..head_end + length]).ok()?;
    let body = serde_json::to_vec(&answer(&review)).ok()?;
    let reply = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
    tls.write_all(reply.as_bytes()).ok()?;
    tls.write_all(&body).ok()?;
    tls.flush().ok()?;
    tls.conn.send_close_notify();
    let _ = tls.flush();
    Some(())
}

/// The AdmissionReview answer: the sidecar added (once), or a `kq-deny` pod refused.
fn answer(review: &Value) -> Value {
    let request = &review["request"];
    let uid = request["uid"].clone();
    let pod = &request["object"];
    let mut response = json!({"uid": uid, "allowed": true});
    if pod["metadata"]["labels"]["kq-deny"].is_string() {
        response = json!({"uid": uid, "allowed": false, "status": {"code": 403, "message": DENIAL}});
    } else if pod["kind"] == "Pod" && !pod["spec"]["containers"].as_array().is_some_and(|cs| cs.iter().any(|c| c["name"] == "istio-proxy")) {
        let patch = json!([{"op": "add", "path": "/spec/containers/-", "value": {
            "name": "istio-proxy", "image": "x",
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "2", "memory": "1Gi"}},
        }}]);
        response["patchType"] = json!("JSONPatch");
        response["patch"] = json!(base64(patch.to_string().as_bytes()));
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
