//! The objects `guard install` applies (and `--dry-run=client -o yaml` prints), in the order
//! they are applied: the webhook's registration comes last, so the API server never calls a
//! guard that is not there yet, and `guard uninstall` removes it first.
//!
//! Safe by construction: `failurePolicy: Ignore` (a guard that is down or slow never blocks
//! admission), `sideEffects: None` (dry runs are answered too), a short `timeoutSeconds`,
//! `matchPolicy: Equivalent` (any version of the kinds), and never kube-system, the guard's
//! own namespace, or a namespace or object labelled `kubectl-quota.io/guard: ignore`.

use kubectl_quota_engine::check::cluster_kinds::{Guard, CLUSTER_KINDS};
use kubectl_quota_engine::objects::read_autoscaler_types;
use serde_json::{json, Value};

use super::review::LABEL;
use crate::live::guard::Target;

/// The ValidatingWebhookConfiguration's name (and the in-cluster objects').
pub const NAME: &str = "kubectl-quota-guard";
/// The webhook's name inside it.
pub const WEBHOOK: &str = "guard.kubectl-quota.io";
/// Seconds the API server waits for the guard before it admits without it.
pub const TIMEOUT_SECONDS: u32 = 2;
/// The Secret holding the CA and the serving certificate.
pub const TLS_SECRET: &str = "kubectl-quota-guard-tls";
/// Where the guard's container reads its certificate.
const TLS_DIR: &str = "/etc/kubectl-quota-guard/tls";
/// The port the guard's container listens on.
const PORT: i32 = 8443;

/// Where the API server calls the guard.
pub enum Endpoint {
    /// A guard outside the cluster (a control-plane host, the tests): exactly this URL, with
    /// this CA bundle (PEM).
    Url { url: String, ca_pem: String },
    /// The in-cluster Deployment behind its Service.
    InCluster(InCluster),
}

/// What the in-cluster installation needs.
pub struct InCluster {
    pub namespace: String,
    pub image: String,
    /// The TLS material: our own CA and serving certificate (PEM), or cert-manager's.
    pub tls: Tls,
    /// `policy/v1` for the PodDisruptionBudget (1.21 and later), else `policy/v1beta1`.
    pub pdb_v1: bool,
    /// The guard asks for the pods mutating webhooks see in dry runs (`serve
    /// --dry-run-webhooks`), and may create pods (dry runs only) to do so.
    pub dry_run_webhooks: bool,
}

pub enum Tls {
    Own { ca_cert: String, cert: String, key: String },
    CertManager,
}

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s.as_bytes())
}

fn labels() -> Value {
    json!({"app.kubernetes.io/name": NAME, "app.kubernetes.io/managed-by": "kubectl-quota"})
}

/// The DNS names the in-cluster serving certificate is for.
pub fn service_hosts(namespace: &str) -> Vec<String> {
    vec![format!("{NAME}.{namespace}.svc"), format!("{NAME}.{namespace}.svc.cluster.local")]
}

/// The webhook's registration.
pub fn webhook_configuration(endpoint: &Endpoint) -> Value {
    let (client_config, own_namespace, annotations) = match endpoint {
        Endpoint::Url { url, ca_pem } => (json!({"url": url, "caBundle": b64(ca_pem)}), None, json!({})),
        Endpoint::InCluster(c) => {
            let service = json!({"namespace": c.namespace, "name": NAME, "path": "/validate", "port": 443});
            match &c.tls {
                Tls::Own { ca_cert, .. } => (json!({"service": service, "caBundle": b64(ca_cert)}), Some(&c.namespace), json!({})),
                Tls::CertManager => {
                    (json!({"service": service}), Some(&c.namespace), json!({"cert-manager.io/inject-ca-from": format!("{}/{NAME}", c.namespace)}))
                }
            }
        }
    };
    let mut excluded = vec!["kube-system".to_string()];
    excluded.extend(own_namespace.cloned());
    let rule = |group: &str, versions: &[&str], resources: &[&str]| json!({"apiGroups": [group], "apiVersions": versions, "operations": ["CREATE", "UPDATE"], "resources": resources, "scope": "Namespaced"});
    let mut rules = vec![
        rule("apps", &["v1"], &["deployments", "replicasets", "statefulsets", "daemonsets"]),
        rule("batch", &["v1", "v1beta1"], &["jobs", "cronjobs"]),
        rule("", &["v1"], &["replicationcontrollers"]),
    ];
    // Autoscalers: their target's pods at the count they set (an add-on's where installed; a
    // rule for a group the server does not serve matches nothing).
    rules.extend(read_autoscaler_types().map(|t| rule(t.group, t.served_versions, &[t.plural])));
    let mut metadata = json!({"name": NAME, "labels": labels()});
    if annotations.as_object().is_some_and(|a| !a.is_empty()) {
        metadata["annotations"] = annotations;
    }
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": metadata,
        "webhooks": [{
            "name": WEBHOOK,
            "admissionReviewVersions": ["v1"],
            "clientConfig": client_config,
            "rules": rules,
            "failurePolicy": "Ignore",
            "sideEffects": "None",
            "timeoutSeconds": TIMEOUT_SECONDS,
            "matchPolicy": "Equivalent",
            // kubernetes.io/metadata.name is set on every namespace from 1.21; before, the guard
            // itself skips kube-system and its own namespace.
            "namespaceSelector": {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": excluded},
                {"key": LABEL, "operator": "NotIn", "values": ["ignore"]},
            ]},
            "objectSelector": {"matchExpressions": [{"key": LABEL, "operator": "NotIn", "values": ["ignore"]}]},
        }],
    })
}

/// The read-only rights the guard's caches need; with `dry_runs`, also `create` on pods, which
/// a dry-run create of a pod needs (the only write the guard makes, and it stores nothing).
pub fn cluster_role(dry_runs: bool) -> Value {
    // One rule per group and verbs, in the table's order: what is watched, then what is read
    // by name (the workload an autoscaler being created or changed targets).
    let mut grouped: Vec<(&str, &[&str], Vec<&str>)> = Vec::new();
    for k in [Guard::Watch, Guard::Get].into_iter().flat_map(|g| CLUSTER_KINDS.iter().filter(move |k| k.guard == g)) {
        match grouped.iter_mut().find(|(group, verbs, _)| *group == k.group && *verbs == k.guard.verbs()) {
            Some((_, _, plurals)) => plurals.push(k.plural),
            None => grouped.push((k.group, k.guard.verbs(), vec![k.plural])),
        }
    }
    let mut rules: Vec<Value> =
        grouped.into_iter().map(|(group, verbs, plurals)| json!({"apiGroups": [group], "resources": plurals, "verbs": verbs})).collect();
    if dry_runs {
        rules.push(json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}));
    }
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": NAME, "labels": labels()},
        "rules": rules,
    })
}

/// Every object of an installation, in the order applied.
pub fn objects(endpoint: &Endpoint) -> Vec<Value> {
    let Endpoint::InCluster(c) = endpoint else {
        return vec![webhook_configuration(endpoint)];
    };
    let ns = c.namespace.as_str();
    let meta = |name: &str| json!({"name": name, "namespace": ns, "labels": labels()});
    let mut out = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {LABEL: "ignore", "app.kubernetes.io/managed-by": "kubectl-quota"}}}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(NAME)}),
        cluster_role(c.dry_run_webhooks),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": NAME, "labels": labels()},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": ns}],
        }),
    ];
    match &c.tls {
        Tls::Own { ca_cert, cert, key } => out.push(json!({
            "apiVersion": "v1", "kind": "Secret", "metadata": meta(TLS_SECRET), "type": "kubernetes.io/tls",
            "data": {"ca.crt": b64(ca_cert), "tls.crt": b64(cert), "tls.key": b64(key)},
        })),
        Tls::CertManager => {
            out.push(json!({"apiVersion": "cert-manager.io/v1", "kind": "Issuer", "metadata": meta(NAME), "spec": {"selfSigned": {}}}));
            out.push(json!({
                "apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": meta(NAME),
                "spec": {"secretName": TLS_SECRET, "dnsNames": service_hosts(ns), "issuerRef": {"kind": "Issuer", "name": NAME}},
            }));
        }
    }
    let probe = |path: &str| json!({"httpGet": {"path": path, "port": "https", "scheme": "HTTPS"}, "periodSeconds": 10});
    let mut args = vec![
        "guard".to_string(),
        "serve".into(),
        format!("--listen=0.0.0.0:{PORT}"),
        format!("--tls-cert-file={TLS_DIR}/tls.crt"),
        format!("--tls-private-key-file={TLS_DIR}/tls.key"),
        format!("--guard-namespace={ns}"),
    ];
    if c.dry_run_webhooks {
        // Half the webhook's timeout: the rest of the answer fits in the other half.
        args.extend(["--dry-run-webhooks".to_string(), format!("--dry-run-timeout={}ms", TIMEOUT_SECONDS * 500)]);
    }
    out.push(json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(NAME),
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app.kubernetes.io/name": NAME}},
            "template": {
                "metadata": {"labels": labels()},
                "spec": {
                    "serviceAccountName": NAME,
                    "securityContext": {"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                        "weight": 100,
                        "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app.kubernetes.io/name": NAME}}},
                    }]}},
                    "containers": [{
                        "name": "guard",
                        "image": c.image,
                        "args": args,
                        // Server-side apply keys ports by port and protocol (1.20 needs the protocol written).
                        "ports": [{"name": "https", "containerPort": PORT, "protocol": "TCP"}],
                        "readinessProbe": probe("/readyz"),
                        "livenessProbe": probe("/healthz"),
                        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "256Mi"}},
                        "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]}},
                        "volumeMounts": [{"name": "tls", "mountPath": TLS_DIR, "readOnly": true}],
                    }],
                    "volumes": [{"name": "tls", "secret": {"secretName": TLS_SECRET}}],
                },
            },
        },
    }));
    out.push(json!({
        "apiVersion": if c.pdb_v1 { "policy/v1" } else { "policy/v1beta1" }, "kind": "PodDisruptionBudget", "metadata": meta(NAME),
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": NAME}}},
    }));
    out.push(json!({
        "apiVersion": "v1", "kind": "Service", "metadata": meta(NAME),
        "spec": {"selector": {"app.kubernetes.io/name": NAME}, "ports": [{"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"}]},
    }));
    out.push(webhook_configuration(endpoint));
    out
}

/// Where an object of [`objects`] lives, for applying and deleting it.
pub fn target(o: &Value) -> Target {
    let s = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let kind = s("kind");
    // The plural the API serves it at (cert-manager's kinds follow the usual rule).
    let plural = kubectl_quota_engine::objects::type_info(&s("apiVersion"), &kind).resource;
    let meta = o.get("metadata");
    Target {
        api_version: s("apiVersion"),
        kind,
        plural,
        namespace: meta.and_then(|m| m.get("namespace")).and_then(Value::as_str).map(str::to_string),
        name: meta.and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("").to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_cluster(tls: Tls) -> Endpoint {
        Endpoint::InCluster(InCluster { namespace: "guard".into(), image: "img".into(), tls, pdb_v1: true, dry_run_webhooks: false })
    }

    /// A kind added to the guard's watches but not to its ClusterRole would fail only in a
    /// cluster (a watch refused, the kind never synced): the role reads every kind watched.
    #[test]
    fn the_role_reads_every_kind_the_guard_watches() {
        let role = cluster_role(false);
        let readable: Vec<String> = role["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| ["get", "list", "watch"].iter().all(|v| r["verbs"].as_array().unwrap().contains(&json!(v))))
            .flat_map(|r| {
                let group = r["apiGroups"][0].as_str().unwrap().to_string();
                r["resources"].as_array().unwrap().iter().map(move |p| {
                    let p = p.as_str().unwrap();
                    if group.is_empty() {
                        p.to_string()
                    } else {
                        format!("{p}.{group}")
                    }
                })
            })
            .collect();
        for kind in super::super::cache::Kind::ALL {
            assert!(readable.iter().any(|r| r == kind.resource()), "the ClusterRole cannot watch {}", kind.resource());
        }
    }

    #[test]
    fn dry_runs_are_opt_in_and_bring_the_right_to_create_pods() {
        let creates_pods =
            |role: &Value| role["rules"].as_array().unwrap().iter().any(|r| r["resources"] == json!(["pods"]) && r["verbs"] == json!(["create"]));
        let reads_webhooks = |role: &Value| role["rules"].to_string().contains("mutatingwebhookconfigurations");
        let off = objects(&in_cluster(Tls::CertManager));
        assert!(!creates_pods(&off[2]) && reads_webhooks(&off[2]));
        let deployment = |objs: &[Value]| objs.iter().find(|o| o["kind"] == "Deployment").unwrap().clone();
        assert!(!deployment(&off).to_string().contains("--dry-run-webhooks"));
        let Endpoint::InCluster(mut c) = in_cluster(Tls::CertManager) else { unreachable!() };
        c.dry_run_webhooks = true;
        let on = objects(&Endpoint::InCluster(c));
        assert!(creates_pods(&on[2]));
        let args = &deployment(&on)["spec"]["template"]["spec"]["containers"][0]["args"];
        assert!(args.as_array().unwrap().ends_with(&[json!("--dry-run-webhooks"), json!("--dry-run-timeout=1000ms")]), "{args}");
    }

    #[test]
    fn the_registration_never_blocks_admission() {
        for e in [Endpoint::Url { url: "https://127.0.0.1:1/validate".into(), ca_pem: "CA".into() }, in_cluster(Tls::CertManager)] {
            let w = &webhook_configuration(&e)["webhooks"][0];
            assert_eq!(w["failurePolicy"], "Ignore");
            assert_eq!(w["sideEffects"], "None");
            assert_eq!(w["matchPolicy"], "Equivalent");
            assert!(w["timeoutSeconds"].as_u64().unwrap() <= 5);
            let excluded = &w["namespaceSelector"]["matchExpressions"][0]["values"];
            assert!(excluded.as_array().unwrap().contains(&json!("kube-system")));
        }
    }

    #[test]
    fn an_in_cluster_install_registers_last_and_excludes_its_namespace() {
        let objs = objects(&in_cluster(Tls::Own { ca_cert: "C".into(), cert: "c".into(), key: "k".into() }));
        let kinds: Vec<&str> = objs.iter().map(|o| o["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "Namespace",
                "ServiceAccount",
                "ClusterRole",
                "ClusterRoleBinding",
                "Secret",
                "Deployment",
                "PodDisruptionBudget",
                "Service",
                "ValidatingWebhookConfiguration"
            ]
        );
        let w = &objs.last().unwrap()["webhooks"][0];
        assert_eq!(w["namespaceSelector"]["matchExpressions"][0]["values"], json!(["kube-system", "guard"]));
        assert_eq!(w["clientConfig"]["caBundle"], b64("C"));
        let pod = &objs[5]["spec"]["template"]["spec"];
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        assert_eq!(pod["containers"][0]["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(target(&objs[5]).plural, "deployments");
        assert_eq!(target(objs.last().unwrap()).shown(), "validatingwebhookconfiguration.admissionregistration.k8s.io/kubectl-quota-guard");
    }
}
