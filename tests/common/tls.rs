//! An HTTPS server on loopback for the tests of what the plugin says when a certificate fails
//! to verify: it presents the certificate given and answers nothing past the handshake.

use std::net::TcpListener;
use std::path::Path;

/// Serves `cert` (with `key`, both PEM, written into `dir`) on a free loopback port; returns
/// its base URL (`https://127.0.0.1:PORT`).
pub fn server(dir: &Path, cert: &str, key: &str) -> String {
    std::fs::write(dir.join("tls.crt"), cert).unwrap();
    std::fs::write(dir.join("tls.key"), key).unwrap();
    let config = std::sync::Arc::new(kubectl_quota::guard::tls::load(&dir.join("tls.crt"), &dir.join("tls.key")).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("https://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut conn = rustls::ServerConnection::new(config.clone()).unwrap();
            while conn.is_handshaking() && conn.complete_io(&mut stream).is_ok() {}
        }
    });
    base
}
