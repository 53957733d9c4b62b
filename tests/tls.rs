//! A certificate that fails to verify is said in kubectl's words (Go's `x509: ...`), with what
//! to do about it: a manifest URL's and the API server's, against HTTPS servers on loopback
//! whose certificates this test makes (a CA nobody trusts, a name that does not match, an
//! expired certificate, a CA's own certificate served as the server's).

mod common;

use std::path::PathBuf;

use common::bin;
use rcgen::{BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kq-tls-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A CA named `cn`, valid from 2020 to 2099: its certificate (PEM) and its issuer.
fn ca(cn: &str) -> (String, Issuer<'static, KeyPair>) {
    let mut p = CertificateParams::default();
    p.distinguished_name = DistinguishedName::new();
    p.distinguished_name.push(DnType::CommonName, cn);
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
    p.not_before = rcgen::date_time_ymd(2020, 1, 1);
    p.not_after = rcgen::date_time_ymd(2099, 1, 1);
    let key = KeyPair::generate().unwrap();
    let cert = p.self_signed(&key).unwrap();
    (cert.pem(), Issuer::new(p, key))
}

/// A server certificate for `name` (an IP address or DNS name) signed by `issuer`, valid until
/// `until` (y, m, d): (cert, key) PEM.
fn leaf(issuer: &Issuer<'static, KeyPair>, name: &str, until: (i32, u8, u8)) -> (String, String) {
    let mut p = CertificateParams::default();
    p.distinguished_name = DistinguishedName::new();
    p.distinguished_name.push(DnType::CommonName, name);
    p.subject_alt_names = vec![match name.parse::<std::net::IpAddr>() {
        Ok(ip) => SanType::IpAddress(ip),
        Err(_) => SanType::DnsName(name.try_into().unwrap()),
    }];
    p.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    p.not_before = rcgen::date_time_ymd(2020, 1, 1);
    p.not_after = rcgen::date_time_ymd(until.0, until.1, until.2);
    let key = KeyPair::generate().unwrap();
    (p.signed_by(&key, issuer).unwrap().pem(), key.serialize_pem())
}

/// An HTTPS server on loopback presenting `cert`: its base URL.
fn server(name: &str, cert: &str, key: &str) -> String {
    common::tls::server(&scratch(name), cert, key)
}

/// `check -f URL` with this machine's roots replaced by `roots` (SSL_CERT_FILE), if any:
/// (exit status, standard error).
fn check_url(url: &str, roots: Option<&str>) -> (Option<i32>, String) {
    let mut cmd = bin();
    cmd.args(["check", "-f", url, "--state", "examples/cluster-state.yaml", "-n", "shop"]);
    if let Some(r) = roots {
        let f = scratch("roots").join("roots.pem");
        std::fs::write(&f, r).unwrap();
        cmd.env("SSL_CERT_FILE", f).env_remove("SSL_CERT_DIR");
    }
    let out = cmd.output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_manifest_urls_certificate_failures_are_said_in_kubectls_words() {
    let (ca_pem, issuer) = ca("kq-test CA");
    let (good, good_key) = leaf(&issuer, "127.0.0.1", (2099, 1, 1));
    let (other, other_key) = leaf(&issuer, "other.example", (2099, 1, 1));
    let (old, old_key) = leaf(&issuer, "127.0.0.1", (2021, 1, 1));
    let ca_key = issuer.key().serialize_pem();
    let rows: Vec<(&str, String, Option<&str>, &str)> = vec![
        (
            "a CA nobody here trusts",
            server("unknown", &good, &good_key),
            None,
            "tls: failed to verify certificate: x509: certificate signed by unknown authority (no CA trusted here signs the server's certificate: add its CA to this machine's trusted roots, or point SSL_CERT_FILE at a bundle that holds it)",
        ),
        (
            "a name that does not match",
            server("name", &other, &other_key),
            Some(&ca_pem),
            "tls: failed to verify certificate: x509: certificate is valid for other.example, not 127.0.0.1 (connect by a name the certificate holds, or reissue it for this one)",
        ),
        ("an expired certificate", server("expired", &old, &old_key), Some(&ca_pem), "tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time "),
        (
            "the CA's own certificate served",
            server("ca-as-server", &ca_pem, &ca_key),
            Some(&ca_pem),
            "tls: failed to verify certificate: x509: the server's certificate is a CA certificate (basicConstraints CA:TRUE), not one for a server (the server must present a certificate its CA signs for its name, not the CA's own)",
        ),
    ];
    for (what, base, roots, want) in rows {
        let url = format!("{base}/app.yaml");
        let (code, err) = check_url(&url, roots);
        assert_eq!(code, Some(2), "{what}: {err}");
        assert!(err.contains(&format!("error: {url}: cannot read: {want}")), "{what}: {err}");
    }
    // With the CA trusted, the same server's handshake succeeds (the test server then says
    // nothing, which is no certificate failure).
    let base = server("trusted", &good, &good_key);
    let (_, err) = check_url(&format!("{base}/app.yaml"), Some(&ca_pem));
    assert!(!err.contains("failed to verify certificate"), "{err}");
}

#[test]
fn the_api_servers_certificate_failure_names_the_server_and_the_kubeconfig_fix() {
    let (_, issuer) = ca("kubernetes");
    let (cert, key) = leaf(&issuer, "127.0.0.1", (2099, 1, 1));
    let base = server("apiserver", &cert, &key);
    let fix = "set the cluster's CA in the kubeconfig (kubectl config set-cluster NAME --certificate-authority=FILE --embed-certs)";
    // The kubeconfig trusts another CA: one of another name, and one of the same name (as
    // every kubeadm cluster's CA is called `kubernetes`).
    let rows = [
        ("another CA", "other", format!("x509: certificate signed by unknown authority (no CA trusted here signs the server's certificate: {fix})")),
        (
            "another cluster's CA of the same name",
            "kubernetes",
            format!("x509: certificate signed by unknown authority (possibly because of a verification error while trying to verify a candidate authority certificate of the same name) (a trusted CA has the issuer's name but not its key, as another cluster's CA would: {fix})"),
        ),
    ];
    for (what, cn, want) in rows {
        let (other_ca, _) = ca(cn);
        let dir = scratch(&format!("kubeconfig-{cn}"));
        let ca_file = dir.join("ca.crt");
        std::fs::write(&ca_file, other_ca).unwrap();
        let kubeconfig = dir.join("config");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: '{base}', certificate-authority: '{}'}}}}]\nusers: [{{name: u, user: {{token: t}}}}]\ncontexts: [{{name: x, context: {{cluster: c, user: u, namespace: shop}}}}]\ncurrent-context: x\n",
                ca_file.display()
            ),
        )
        .unwrap();
        let out = bin().env("KUBECONFIG", &kubeconfig).args(["describe", "--request-timeout", "10s"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(&format!("{base}: tls: failed to verify certificate: {want}")), "{what}: {err}");
    }
}

#[test]
fn insecure_skip_tls_verify_reads_no_ca_files_and_connects_without_any() {
    let (_, issuer) = ca("kq-test CA");
    let (cert, key) = leaf(&issuer, "127.0.0.1", (2099, 1, 1));
    let base = server("insecure", &cert, &key);
    let dir = scratch("insecure-kubeconfig");
    let kubeconfig = dir.join("config");
    std::fs::write(
        &kubeconfig,
        format!("apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: '{base}', insecure-skip-tls-verify: true}}}}]\nusers: [{{name: u, user: {{token: t}}}}]\ncontexts: [{{name: x, context: {{cluster: c, user: u, namespace: shop}}}}]\ncurrent-context: x\n"),
    )
    .unwrap();
    // A machine whose CA files are not there (or not certificates): nothing may read them.
    let garbage = dir.join("not-a-bundle.pem");
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    let out = bin()
        .env("KUBECONFIG", &kubeconfig)
        .env("SSL_CERT_FILE", &garbage)
        .env("SSL_CERT_DIR", dir.join("none"))
        .args(["describe", "--request-timeout", "5s"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // The handshake succeeds; the test server then says nothing, which is the only failure.
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&base) && !err.contains("certificate") && !err.contains("root"), "{err}");
}
