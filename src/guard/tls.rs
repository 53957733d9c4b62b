//! The guard's TLS: the serving certificate and key read from files (and read again when they
//! change, as cert-manager and kubelet's Secret volumes replace them), and the certificates
//! `guard certs` and `guard install` make: a CA of our own and a serving certificate it signs.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// A server configuration read from a certificate and a key file.
pub fn load(cert: &Path, key: &Path) -> Result<ServerConfig, String> {
    let read = |p: &Path| crate::input::read_file(p).map_err(|e| format!("{}: {e}", p.display()));
    let cert_pem = read(cert)?;
    let key_pem = read(key)?;
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(cert_pem.as_bytes()).collect::<Result<_, _>>().map_err(|e| format!("{}: not a PEM certificate: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate in the file", cert.display()));
    }
    let key_der = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(|e| format!("{}: not a PEM private key: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key_der)
        .map_err(|e| format!("{} and {}: {e}", cert.display(), key.display()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The configuration in use, swapped when the files change.
pub struct Reloading {
    current: RwLock<Arc<ServerConfig>>,
    cert: PathBuf,
    key: PathBuf,
}

/// What tells a file changed: its modification time and length.
fn stamp(p: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(p).ok()?;
    Some((m.modified().ok()?, m.len()))
}

impl Reloading {
    pub fn new(cert: &Path, key: &Path) -> Result<Arc<Reloading>, String> {
        let config = load(cert, key)?;
        Ok(Arc::new(Reloading { current: RwLock::new(Arc::new(config)), cert: cert.into(), key: key.into() }))
    }

    pub fn current(&self) -> Arc<ServerConfig> {
        self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Looks at the files every `every`, for ever: a changed pair that reads well replaces the
    /// configuration (new connections use it); one that does not is said, and the old kept.
    pub async fn watch(self: Arc<Self>, every: Duration) {
        let mut seen = (stamp(&self.cert), stamp(&self.key));
        loop {
            tokio::time::sleep(every).await;
            let now = (stamp(&self.cert), stamp(&self.key));
            if now == seen {
                continue;
            }
            seen = now;
            match load(&self.cert, &self.key) {
                Ok(c) => {
                    *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(c);
                    crate::error::print_err("guard: serving certificate reloaded\n");
                }
                Err(e) => crate::error::print_err(&format!("guard: keeping the old serving certificate: {}\n", crate::escape::escape(&e))),
            }
        }
    }
}

/// A CA and a serving certificate it signed, as PEM.
pub struct Issued {
    pub ca_cert: String,
    pub ca_key: String,
    pub cert: String,
    pub key: String,
}

/// Years the certificates made here are valid, from the day before they are made.
pub const VALID_YEARS: i32 = 10;

/// The calendar date (year, month, day) of a day counted from 1970-01-01 (the proleptic
/// Gregorian calendar, as certificates' times are).
fn civil(days: i64) -> (i32, u8, u8) {
    // Shifted to 0000-03-01 so that leap days end each 400-year era.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
    (year, month, day)
}

/// Yesterday's date, and the date [`VALID_YEARS`] later (a 29 February becomes the 28th).
fn validity() -> ((i32, u8, u8), (i32, u8, u8)) {
    let days = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs() / 86_400).unwrap_or(0) as i64;
    let (y, m, d) = civil(days - 1);
    ((y, m, d), (y + VALID_YEARS, m, d.min(28)))
}

/// A new CA, and a serving certificate it signs for `hosts` (DNS names or IP addresses).
pub fn issue(hosts: &[String]) -> Result<Issued, String> {
    use rcgen::{BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, KeyPair, KeyUsagePurpose, SanType};
    let err = |e: rcgen::Error| format!("cannot make a certificate: {e}");
    let ((y0, m0, d0), (y1, m1, d1)) = validity();
    let mut ca = CertificateParams::default();
    ca.distinguished_name = DistinguishedName::new();
    ca.distinguished_name.push(DnType::CommonName, "kubectl-quota guard CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    ca.not_before = rcgen::date_time_ymd(y0, m0, d0);
    ca.not_after = rcgen::date_time_ymd(y1, m1, d1);
    let ca_key = KeyPair::generate().map_err(err)?;
    let ca_cert = ca.self_signed(&ca_key).map_err(err)?;
    let issuer = rcgen::Issuer::new(ca, ca_key);

    let mut leaf = CertificateParams::default();
    leaf.distinguished_name = DistinguishedName::new();
    leaf.distinguished_name.push(DnType::CommonName, hosts.first().cloned().unwrap_or_else(|| "kubectl-quota-guard".into()));
    leaf.subject_alt_names = hosts
        .iter()
        .map(|h| match h.parse::<std::net::IpAddr>() {
            Ok(ip) => Ok(SanType::IpAddress(ip)),
            Err(_) => h.clone().try_into().map(SanType::DnsName).map_err(|e: rcgen::Error| format!("{h:?}: {e}")),
        })
        .collect::<Result<_, _>>()?;
    leaf.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
    leaf.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    leaf.not_before = rcgen::date_time_ymd(y0, m0, d0);
    leaf.not_after = rcgen::date_time_ymd(y1, m1, d1);
    let leaf_key = KeyPair::generate().map_err(err)?;
    let leaf_cert = leaf.signed_by(&leaf_key, &issuer).map_err(err)?;
    Ok(Issued { ca_cert: ca_cert.pem(), ca_key: issuer.key().serialize_pem(), cert: leaf_cert.pem(), key: leaf_key.serialize_pem() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_dates_from_days() {
        for (days, want) in [(0, (1970, 1, 1)), (59, (1970, 3, 1)), (11_016, (2000, 2, 29)), (20_782, (2026, 11, 25)), (-1, (1969, 12, 31))] {
            assert_eq!(civil(days), want, "{days}");
        }
    }

    #[test]
    fn issued_certificates_serve() {
        let i = issue(&["127.0.0.1".into(), "guard.ns.svc".into()]).unwrap();
        let dir = std::env::temp_dir().join(format!("kq-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tls.crt"), &i.cert).unwrap();
        std::fs::write(dir.join("tls.key"), &i.key).unwrap();
        assert!(load(&dir.join("tls.crt"), &dir.join("tls.key")).is_ok());
        std::fs::write(dir.join("bad.key"), "not a key").unwrap();
        assert!(load(&dir.join("tls.crt"), &dir.join("bad.key")).unwrap_err().contains("bad.key"));
        assert!(i.ca_cert.starts_with("-----BEGIN CERTIFICATE-----"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn a_changed_certificate_replaces_the_old_one_and_a_broken_one_does_not() {
        let dir = std::env::temp_dir().join(format!("kq-tls-reload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
        let first = issue(&["127.0.0.1".into()]).unwrap();
        std::fs::write(&cert, &first.cert).unwrap();
        std::fs::write(&key, &first.key).unwrap();
        let r = Reloading::new(&cert, &key).unwrap();
        let before = r.current();
        tokio::spawn(r.clone().watch(Duration::from_millis(20)));
        // Broken: kept.
        std::fs::write(&key, "not a key").unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(Arc::ptr_eq(&before, &r.current()));
        // A new pair: taken.
        let second = issue(&["127.0.0.1".into()]).unwrap();
        std::fs::write(&cert, &second.cert).unwrap();
        std::fs::write(&key, &second.key).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while Arc::ptr_eq(&before, &r.current()) {
            assert!(std::time::Instant::now() < deadline, "the new certificate was never taken");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
