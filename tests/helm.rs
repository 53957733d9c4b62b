//! The guard's Helm chart (deploy/helm/kubectl-quota-guard), its kustomize bases
//! (deploy/kustomize) and its Grafana dashboard (deploy/grafana) against the tool itself: the
//! chart's default rendering holds the objects `guard install --dry-run=client -o yaml`
//! applies (the generated certificate aside, which must still be a certificate for the guard's
//! service signed by the CA the registration trusts), `helm lint` passes, and no panel or
//! alert queries a series the guard does not export.
//!
//! `helm` is built from the Go module proxy by tests/cluster/autoscalers/build.sh (cached);
//! where it cannot be built the tests that need it say so and pass, except under `CI=true`.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use kubectl_quota_engine::manifest::parse_str;
use serde_json::Value;

const CHART: &str = "deploy/helm/kubectl-quota-guard";
const NS: &str = "kubectl-quota";

/// The helm binary, or `None` (said loudly) where it cannot be built outside CI.
fn helm() -> Option<PathBuf> {
    let script = common::root().join("tests/cluster/autoscalers/build.sh");
    let out = Command::new("bash").arg(&script).arg("helm").output().expect("bash");
    let dir = String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or("").trim().to_string();
    let bin = PathBuf::from(&dir).join("helm");
    if out.status.success() && bin.exists() {
        return Some(bin);
    }
    let why = String::from_utf8_lossy(&out.stderr);
    eprintln!("\n!!!!!!!!!! HELM NOT AVAILABLE: the chart's helm tests did not run !!!!!!!!!!\n{why}");
    assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true: helm must be built ({why})");
    None
}

fn run(c: &mut Command) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    assert!(out.status.success(), "{c:?} failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Every object of a YAML stream (a `List`'s items taken one by one), in order.
fn objects(yaml: &str) -> Vec<Value> {
    let docs = parse_str("rendered.yaml", yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    docs.into_iter()
        .map(|d| d.value)
        .filter(|v| !v.is_null())
        .flat_map(|v| if v["kind"] == "List" { v["items"].as_array().cloned().unwrap_or_default() } else { vec![v] })
        .collect()
}

/// `helm template` of the chart in namespace `kubectl-quota` with `--set` values.
fn template(helm: &PathBuf, set: &[&str]) -> Vec<Value> {
    let mut c = Command::new(helm);
    c.current_dir(common::root()).args(["template", "kubectl-quota-guard", CHART, "--namespace", NS]);
    for s in set {
        c.args(["--set", s]);
    }
    objects(&run(&mut c))
}

/// `guard install --dry-run=client -o yaml` with `args`.
fn guard_install(args: &[&str]) -> Vec<Value> {
    let mut c = common::bin_without_kubeconfig();
    c.args(["guard", "install", "--dry-run=client", "-o", "yaml", "--kubeconfig", "/dev/null"]).args(args);
    objects(&run(&mut c))
}

/// An object as both sides describe it: without the labels only Helm sets or words otherwise
/// (`helm.sh/chart`, `app.kubernetes.io/managed-by`), and without the generated certificate
/// (the Secret's data, the registration's caBundle), which differ on every run.
fn comparable(mut o: Value) -> Value {
    fn strip_labels(meta: &mut Value) {
        if let Some(labels) = meta.get_mut("labels").and_then(Value::as_object_mut) {
            labels.remove("helm.sh/chart");
            labels.remove("app.kubernetes.io/managed-by");
        }
    }
    strip_labels(&mut o["metadata"]);
    if let Some(t) = o.pointer_mut("/spec/template/metadata") {
        strip_labels(t);
    }
    if o["kind"] == "Secret" {
        o.as_object_mut().unwrap().remove("data");
    }
    if let Some(hooks) = o.get_mut("webhooks").and_then(Value::as_array_mut) {
        for h in hooks {
            if let Some(cc) = h.get_mut("clientConfig").and_then(Value::as_object_mut) {
                cc.remove("caBundle");
            }
        }
    }
    o
}

fn by_kind_and_name(objs: Vec<Value>) -> Vec<(String, String, Value)> {
    let mut v: Vec<(String, String, Value)> = objs
        .into_iter()
        .map(|o| (o["kind"].as_str().unwrap_or("").to_string(), o["metadata"]["name"].as_str().unwrap_or("").to_string(), comparable(o)))
        .collect();
    v.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    v
}

fn assert_same(chart: Vec<Value>, tool: Vec<Value>, what: &str) {
    let (chart, tool) = (by_kind_and_name(chart), by_kind_and_name(tool));
    let names = |v: &[(String, String, Value)]| v.iter().map(|(k, n, _)| format!("{k}/{n}")).collect::<Vec<_>>();
    assert_eq!(names(&chart), names(&tool), "{what}: the chart and guard install render different objects");
    for ((k, n, c), (_, _, t)) in chart.iter().zip(&tool) {
        assert_eq!(c, t, "{what}: {k}/{n} differs\nchart {}\ntool  {}", serde_json::to_string_pretty(c).unwrap(), serde_json::to_string_pretty(t).unwrap());
    }
}

fn find<'a>(objs: &'a [Value], kind: &str) -> &'a Value {
    objs.iter().find(|o| o["kind"] == kind).unwrap_or_else(|| panic!("no {kind} rendered"))
}

fn b64(s: &Value) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s.as_str().unwrap()).unwrap()
}

#[test]
fn the_chart_renders_the_objects_guard_install_applies() {
    let Some(helm) = helm() else { return };
    // With the namespace made by the chart, exactly guard install's objects.
    let chart = template(&helm, &["createNamespace=true"]);
    assert_same(chart.clone(), guard_install(&[]), "generated certificate");
    // By default Helm makes the namespace (`--create-namespace`); the rest is the same.
    let default = template(&helm, &[]);
    let tool: Vec<Value> = guard_install(&[]).into_iter().filter(|o| o["kind"] != "Namespace").collect();
    assert_same(default, tool, "default values");
    // cert-manager: the Issuer, the Certificate and the CA injection guard install --cert-manager makes.
    assert_same(template(&helm, &["createNamespace=true", "certificate.source=cert-manager"]), guard_install(&["--cert-manager"]), "cert-manager");
    // Dry runs: the flags and the right to create pods guard install --dry-run-webhooks gives.
    assert_same(
        template(&helm, &["createNamespace=true", "certificate.source=cert-manager", "dryRunWebhooks=true"]),
        guard_install(&["--cert-manager", "--dry-run-webhooks"]),
        "dry runs",
    );

    // The generated certificate is one for the guard's service, signed by the CA the
    // registration trusts and the Secret holds.
    let secret = find(&chart, "Secret");
    let bundle = &find(&chart, "ValidatingWebhookConfiguration")["webhooks"][0]["clientConfig"]["caBundle"];
    let ca = b64(bundle);
    assert_eq!(b64(&secret["data"]["ca.crt"]), ca, "the Secret's CA is the one the registration trusts");
    let dir = std::env::temp_dir().join(format!("kq-helm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ca.crt"), &ca).unwrap();
    std::fs::write(dir.join("tls.crt"), b64(&secret["data"]["tls.crt"])).unwrap();
    let verify = Command::new("openssl")
        .args(["verify", "-CAfile"])
        .arg(dir.join("ca.crt"))
        .args(["-verify_hostname", &format!("kubectl-quota-guard.{NS}.svc")])
        .arg(dir.join("tls.crt"))
        .output()
        .expect("openssl");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(verify.status.success(), "{}{}", String::from_utf8_lossy(&verify.stdout), String::from_utf8_lossy(&verify.stderr));
}

#[test]
fn the_chart_lints_and_its_values_change_what_they_name() {
    let Some(helm) = helm() else { return };
    run(Command::new(&helm).current_dir(common::root()).args(["lint", "--strict", CHART]));
    let objs = template(
        &helm,
        &[
            "replicas=3",
            "image.tag=v9.9.9",
            "webhook.failurePolicy=Fail",
            "webhook.timeoutSeconds=5",
            "webhook.ignoredNamespaces={batch-jobs}",
            "certificate.source=secret",
            "certificate.caBundle=PEM",
            "metrics.serviceMonitor.enabled=true",
            "metrics.prometheusRule.enabled=true",
            "metrics.dashboard.enabled=true",
        ],
    );
    let kinds: BTreeSet<&str> = objs.iter().filter_map(|o| o["kind"].as_str()).collect();
    for k in ["ServiceMonitor", "PrometheusRule", "ConfigMap"] {
        assert!(kinds.contains(k), "{k} not rendered: {kinds:?}");
    }
    assert!(!kinds.contains("Secret"), "with certificate.source=secret the chart makes no Secret");
    let d = find(&objs, "Deployment");
    assert_eq!(d["spec"]["replicas"], 3);
    let with_dry_runs = template(&helm, &["dryRunWebhooks=true", "webhook.timeoutSeconds=5"]);
    let args = &find(&with_dry_runs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"];
    assert!(args.to_string().contains("\"--dry-run-timeout=2500ms\""), "half the webhook's timeout: {args}");
    assert_eq!(d["spec"]["template"]["spec"]["containers"][0]["image"], "ghcr.io/kubectl-quota/kubectl-quota:v9.9.9");
    let hook = &find(&objs, "ValidatingWebhookConfiguration")["webhooks"][0];
    assert_eq!((hook["failurePolicy"].as_str(), hook["timeoutSeconds"].as_i64()), (Some("Fail"), Some(5)));
    assert_eq!(hook["clientConfig"]["caBundle"], "UEVN");
    assert_eq!(hook["namespaceSelector"]["matchExpressions"][0]["values"], serde_json::json!(["kube-system", NS, "batch-jobs"]));
    let dashboard = &find(&objs, "ConfigMap")["data"]["kubectl-quota-guard.json"];
    assert_eq!(
        dashboard.as_str().map(str::trim),
        Some(std::fs::read_to_string(common::root().join("deploy/grafana/kubectl-quota-guard.json")).unwrap().trim())
    );

    // Values that cannot work are refused by the rendering, naming the value.
    for (set, says) in [
        ("certificate.source=vault", "certificate.source"),
        ("webhook.failurePolicy=Maybe", "webhook.failurePolicy"),
        ("certificate.source=secret", "certificate.caBundle"),
    ] {
        let out = Command::new(&helm).current_dir(common::root()).args(["template", "g", CHART, "--namespace", NS, "--set", set]).output().unwrap();
        assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains(says), "{set}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// The series names an expression reads (`kubectl_quota_...`).
fn series(expr: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = expr;
    while let Some(i) = rest.find("kubectl_quota_") {
        let name: String = rest[i..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        rest = &rest[i + name.len()..];
        out.insert(name);
    }
    out
}

/// Every expression of the dashboard (its panels and template variables).
fn dashboard_exprs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("expr" | "query", Value::String(s)) => out.push(s.clone()),
                    _ => dashboard_exprs(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| dashboard_exprs(x, out)),
        _ => {}
    }
}

#[test]
fn every_series_the_dashboard_and_the_alerts_query_is_one_the_guard_exports() {
    // The families the guard's /metrics declares (`# TYPE` lines), whatever their samples.
    let text = kubectl_quota::guard::metrics::Metrics::default().render(&kubectl_quota::guard::cache::Cache::default());
    let mut exported = BTreeSet::new();
    for line in text.lines().filter_map(|l| l.strip_prefix("# TYPE ")) {
        let mut parts = line.split(' ');
        let (name, kind) = (parts.next().unwrap().to_string(), parts.next().unwrap_or(""));
        if kind == "histogram" {
            for suffix in ["_bucket", "_sum", "_count"] {
                exported.insert(format!("{name}{suffix}"));
            }
        } else {
            exported.insert(name);
        }
    }
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(common::root().join("deploy/grafana/kubectl-quota-guard.json")).unwrap()).unwrap();
    let mut exprs = Vec::new();
    dashboard_exprs(&dashboard, &mut exprs);
    // The chart's alert rules, from the template's text (rendering needs helm).
    let rules = std::fs::read_to_string(common::root().join(CHART).join("templates/monitoring.yaml")).unwrap();
    exprs.extend(rules.lines().filter_map(|l| l.trim().strip_prefix("expr: ")).map(str::to_string));
    let queried: BTreeSet<String> = exprs.iter().flat_map(|e| series(e)).collect();
    assert!(queried.len() >= 15, "the dashboard queries {} series: {queried:?}", queried.len());
    let missing: Vec<&String> = queried.difference(&exported).collect();
    assert!(missing.is_empty(), "queried but not exported by the guard: {missing:?}\nexported: {exported:?}");
    // The chart ships the same dashboard.
    assert_eq!(
        std::fs::read_to_string(common::root().join(CHART).join("files/dashboard.json")).unwrap(),
        std::fs::read_to_string(common::root().join("deploy/grafana/kubectl-quota-guard.json")).unwrap(),
        "deploy/helm/kubectl-quota-guard/files/dashboard.json is a copy of deploy/grafana/kubectl-quota-guard.json"
    );
}

#[test]
fn the_kustomize_bases_hold_guard_install_s_objects() {
    let base = std::fs::read_to_string(common::root().join("deploy/kustomize/base/guard.yaml")).unwrap();
    assert_eq!(
        by_kind_and_name(objects(&base)),
        by_kind_and_name(guard_install(&["--cert-manager"])),
        "deploy/kustomize/base/guard.yaml is stale: `kubectl quota guard install --cert-manager --dry-run=client -o yaml > deploy/kustomize/base/guard.yaml`"
    );
    if Command::new("kubectl").args(["kustomize", "--help"]).output().map_or(true, |o| !o.status.success()) {
        eprintln!("no kubectl: the kustomize builds are not checked");
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true: kubectl must be there");
        return;
    }
    let built = |dir: &str| objects(&run(Command::new("kubectl").current_dir(common::root()).args(["kustomize", dir])));
    assert_same(built("deploy/kustomize/base"), guard_install(&["--cert-manager"]), "kustomize base");
    // The overlay for a Secret of one's own: no cert-manager objects, the CA given.
    let own = built("deploy/kustomize/existing-secret");
    assert!(own.iter().all(|o| o["apiVersion"].as_str().is_none_or(|a| !a.starts_with("cert-manager.io/"))), "cert-manager objects left");
    let hook = find(&own, "ValidatingWebhookConfiguration");
    assert!(hook["metadata"]["annotations"].get("cert-manager.io/inject-ca-from").is_none(), "{hook}");
    assert!(hook["webhooks"][0]["clientConfig"]["caBundle"].is_string());
    assert_eq!(hook["webhooks"][0]["rules"], find(&guard_install(&[]), "ValidatingWebhookConfiguration")["webhooks"][0]["rules"]);
}
