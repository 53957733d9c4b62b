//! Benchmarks of kubectl-quota's library (criterion, `harness = false`).
//!
//! Run: `cargo bench --bench check` (all groups: about 2.5 minutes on 2 cores, plus the
//! optimised build), or one group:
//! `cargo bench --bench check -- pipeline`. Results and targets: `bench/RESULTS.md`.
//!
//! Groups:
//! - `quantity`: parse + canonical print of a mixed set of 20 quantity strings; the sum of 1,000
//!   quantities of mixed formats.
//! - `pipeline`: the offline `check` on generated inputs: 1,000 pod documents (1-3 containers,
//!   0-2 init containers some of them sidecars, limits only / requests only / both / none, four
//!   priority classes, some with activeDeadlineSeconds) against a namespace with 20 quotas
//!   (plain; Terminating, NotTerminating, BestEffort, NotBestEffort; PriorityClass In / NotIn /
//!   Exists; count/ quotas), a LimitRange and PriorityClasses. YAML parse, decode + check, and
//!   check alone are measured separately; check alone also at 250 and 4,000 pods to show how it
//!   scales.
//! - `replay`: one Deployment of 1,000 replicas against a quota that admits 900 of them (pods
//!   are replayed one by one), with that quota alone and among the 20 quotas.
//! - `describe`: `describe::view` + `render_text` of 2,000 quotas (20 namespaces of 100), and
//!   view + JSON (what `describe -o json` prints).
//! - scaling suspects: loading 1,000 vs 4,000 quotas of one namespace into a `ClusterState`;
//!   checking 250 vs 500 Jobs and CronJobs. Time per element should not grow with the size.
//!
//! Every input is generated here, deterministically, outside the timed closures.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use kubectl_quota_engine::check::{self, CheckOptions, ClusterState};
use kubectl_quota_engine::manifest::{parse_str, Document};
use kubectl_quota_engine::objects::{decode, Body, Object};
use kubectl_quota_engine::quantity::Quantity;
use kubectl_quota_engine::report::quota_view as describe;

const NS: &str = "bench";

// ------------------------------------------------------------------------------------------
// Deterministic generators
// ------------------------------------------------------------------------------------------

/// A tiny deterministic generator (xorshift64*), so inputs are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// 20 quota strings of every notation: DecimalSI, BinarySI, exponents, fractions, signs,
/// canonical and not.
const QUANTITIES: [&str; 20] = [
    "100m",
    "1",
    "2.5",
    "1500m",
    "0.1",
    "512Mi",
    "1Gi",
    "1.5Gi",
    "2048Ki",
    "1000",
    "1e3",
    "5E-3",
    "12345678901234",
    "+3",
    "-250m",
    "1.000k",
    "8Ei",
    "3Ti",
    "750u",
    "123n",
];

fn quota_yaml(out: &mut String, ns: &str, name: &str, spec_extra: &str, hard: &[(&str, &str)], used: &[(&str, &str)]) {
    let map = |kv: &[(&str, &str)]| kv.iter().map(|(k, v)| format!("{k}: '{v}'")).collect::<Vec<_>>().join(", ");
    let _ = write!(
        out,
        "---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  hard: {{{h}}}\n{spec_extra}status:\n  hard: {{{h}}}\n  used: {{{u}}}\n",
        h = map(hard),
        u = map(used),
    );
}

/// The namespace's 20 quotas, plus a LimitRange and PriorityClasses. `pods_cap` adds a plain
/// quota `cap` with `pods: N` (the 20th quota) for the replay benchmark. The compute quotas
/// are sized so that about 95% of `pods_yaml(1000 * scale, _)` fit.
fn state_yaml(ns: &str, pods_cap: Option<u32>, scale: u32) -> String {
    let mut s = String::new();
    let compute = [("requests.cpu", "1500"), ("requests.memory", "2000Gi"), ("limits.cpu", "3600"), ("limits.memory", "4000Gi"), ("pods", "5000")];
    let compute_used = [("requests.cpu", "0"), ("requests.memory", "0"), ("limits.cpu", "0"), ("limits.memory", "0"), ("pods", "0")];
    // 4 plain compute quotas with different sizes (the tightest one refuses the last pods).
    for (i, factor) in ["1", "2", "4", "8"].iter().enumerate() {
        let hard: Vec<(String, String)> = compute
            .iter()
            .map(|(k, v)| {
                let q = Quantity::parse(v).unwrap();
                let mut sum = Quantity::zero();
                for _ in 0..factor.parse::<u32>().unwrap() * scale {
                    sum = sum.add(&q);
                }
                (k.to_string(), sum.to_string())
            })
            .collect();
        let hard: Vec<(&str, &str)> = hard.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        quota_yaml(&mut s, ns, &format!("compute-{i}"), "", &hard, &compute_used);
    }
    let pods_cpu = [("pods", "100000"), ("requests.cpu", "100000")];
    let pods_cpu_used = [("pods", "0"), ("requests.cpu", "0")];
    for scope in ["Terminating", "NotTerminating", "NotBestEffort"] {
        quota_yaml(&mut s, ns, &format!("scope-{}", scope.to_lowercase()), &format!("  scopes: [{scope}]\n"), &pods_cpu, &pods_cpu_used);
    }
    quota_yaml(&mut s, ns, "scope-besteffort", "  scopes: [BestEffort]\n", &[("pods", "100000")], &[("pods", "0")]);
    quota_yaml(&mut s, ns, "scope-terminating-besteffort", "  scopes: [Terminating, BestEffort]\n", &[("pods", "100000")], &[("pods", "0")]);
    let selectors = [
        ("pc-high", "{scopeName: PriorityClass, operator: In, values: [high]}"),
        ("pc-low-medium", "{scopeName: PriorityClass, operator: In, values: [low, medium]}"),
        ("pc-medium", "{scopeName: PriorityClass, operator: In, values: [medium]}"),
        ("pc-not-high", "{scopeName: PriorityClass, operator: NotIn, values: [high]}"),
        ("pc-exists", "{scopeName: PriorityClass, operator: Exists}"),
        ("pc-high-notterminating", "{scopeName: PriorityClass, operator: In, values: [high]}, {scopeName: NotTerminating, operator: Exists}"),
    ];
    for (name, expr) in selectors {
        let extra = format!("  scopeSelector:\n    matchExpressions: [{expr}]\n");
        quota_yaml(
            &mut s,
            ns,
            name,
            &extra,
            &[("pods", "100000"), ("requests.cpu", "100000"), ("limits.memory", "100Ti")],
            &[("pods", "0"), ("requests.cpu", "0"), ("limits.memory", "0")],
        );
    }
    quota_yaml(
        &mut s,
        ns,
        "counts",
        "",
        &[
            ("count/pods", "100000"),
            ("count/deployments.apps", "1000"),
            ("count/replicasets.apps", "1000"),
            ("count/configmaps", "100"),
            ("count/secrets", "100"),
            ("services", "10"),
        ],
        &[
            ("count/pods", "0"),
            ("count/deployments.apps", "0"),
            ("count/replicasets.apps", "0"),
            ("count/configmaps", "0"),
            ("count/secrets", "0"),
            ("services", "0"),
        ],
    );
    quota_yaml(
        &mut s,
        ns,
        "storage",
        "",
        &[("requests.storage", "10Ti"), ("persistentvolumeclaims", "100")],
        &[("requests.storage", "0"), ("persistentvolumeclaims", "0")],
    );
    quota_yaml(
        &mut s,
        ns,
        "ephemeral",
        "",
        &[("requests.ephemeral-storage", "10Ti"), ("limits.ephemeral-storage", "20Ti")],
        &[("requests.ephemeral-storage", "0"), ("limits.ephemeral-storage", "0")],
    );
    quota_yaml(&mut s, ns, "gpu", "", &[("requests.nvidia.com/gpu", "64")], &[("requests.nvidia.com/gpu", "0")]);
    match pods_cap {
        Some(n) => quota_yaml(&mut s, ns, "cap", "", &[("pods", &n.to_string())], &[("pods", "0")]),
        None => quota_yaml(&mut s, ns, "objects", "", &[("configmaps", "1000"), ("secrets", "1000")], &[("configmaps", "0"), ("secrets", "0")]),
    }
    let _ = write!(
        s,
        "---\napiVersion: v1\nkind: LimitRange\nmetadata: {{name: defaults, namespace: {ns}}}\nspec:\n  limits:\n  - type: Container\n    default: {{cpu: 500m, memory: 512Mi}}\n    defaultRequest: {{cpu: 250m, memory: 256Mi}}\n"
    );
    for (name, value, global) in [("high", 100000, false), ("medium", 1000, false), ("low", 100, true)] {
        let _ = write!(s, "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: {value}\nglobalDefault: {global}\n");
    }
    s
}

/// A container's `resources:` block, varied: limits only, requests only, both, or none (the
/// LimitRange defaults apply to what is missing).
fn resources(rng: &mut Rng) -> String {
    let cpu = rng.pick(&["100m", "250m", "500m", "1", "1500m", "2"]);
    let mem = rng.pick(&["128Mi", "256Mi", "512Mi", "1Gi", "1.5Gi"]);
    match rng.below(5) {
        0 => format!("{{limits: {{cpu: '{cpu}', memory: {mem}}}}}"),
        // Requests only: the LimitRange's default limits (500m, 512Mi) are added, so stay
        // below them (the API server would refuse requests above the defaulted limits).
        1 => format!("{{requests: {{cpu: '{}', memory: {}}}}}", rng.pick(&["100m", "250m", "500m"]), rng.pick(&["128Mi", "256Mi", "512Mi"])),
        2 => format!("{{requests: {{cpu: '{cpu}', memory: {mem}}}, limits: {{cpu: '{cpu}', memory: {mem}, ephemeral-storage: 1Gi}}}}"),
        3 => format!("{{requests: {{cpu: '{cpu}', memory: {mem}, ephemeral-storage: 500Mi}}, limits: {{cpu: '{cpu}', memory: {mem}}}}}"),
        _ => "{}".to_string(),
    }
}

/// `n` pod documents, varied containers, init containers (some sidecars), priority classes
/// and activeDeadlineSeconds.
fn pods_yaml(n: usize, seed: u64) -> String {
    let mut rng = Rng(seed);
    let mut s = String::new();
    for i in 0..n {
        let _ = write!(s, "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: pod-{i}, labels: {{app: a{}}}}}\nspec:\n", i % 17);
        match rng.below(4) {
            0 => {}
            1 => s.push_str("  priorityClassName: high\n"),
            2 => s.push_str("  priorityClassName: medium\n"),
            _ => s.push_str("  priorityClassName: low\n"),
        }
        if rng.below(5) == 0 {
            s.push_str("  activeDeadlineSeconds: 3600\n");
        }
        let inits = rng.below(3);
        if inits > 0 {
            s.push_str("  initContainers:\n");
            for j in 0..inits {
                let sidecar = if rng.below(3) == 0 { ", restartPolicy: Always" } else { "" };
                let _ = writeln!(s, "  - {{name: init-{j}, image: busybox{sidecar}, resources: {}}}", resources(&mut rng));
            }
        }
        s.push_str("  containers:\n");
        for j in 0..=rng.below(3) {
            let _ = writeln!(s, "  - {{name: c{j}, image: registry.example.com/app:{}, resources: {}}}", i % 7, resources(&mut rng));
        }
    }
    s
}

fn deployment_yaml(replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      priorityClassName: high\n      initContainers:\n      - {{name: migrate, image: busybox, resources: {{requests: {{cpu: 200m, memory: 64Mi}}}}}}\n      containers:\n      - {{name: app, image: web:1, resources: {{requests: {{cpu: 100m, memory: 128Mi}}, limits: {{cpu: 500m, memory: 256Mi}}}}}}\n      - {{name: shipper, image: shipper:2}}\n"
    )
}

/// 2,000 quotas over 20 namespaces, varied resources, scopes and usage; a few unsynced.
fn many_quotas_yaml(n: usize) -> String {
    let mut rng = Rng(7);
    let mut s = String::new();
    let names = ["requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "pods", "count/deployments.apps", "services", "requests.storage"];
    for i in 0..n {
        let ns = format!("team-{:02}", i % 20);
        let k = 2 + rng.below(5) as usize;
        let mut hard = Vec::new();
        let mut used = Vec::new();
        for name in names.iter().skip(rng.below(3) as usize).take(k) {
            let (h, u) = match *name {
                "requests.memory" | "limits.memory" => (format!("{}Gi", 1 + rng.below(64)), format!("{}Mi", rng.below(70000))),
                "requests.storage" => (format!("{}Ti", 1 + rng.below(8)), format!("{}Gi", rng.below(9000))),
                "requests.cpu" | "limits.cpu" => (format!("{}", 1 + rng.below(64)), format!("{}m", rng.below(70000))),
                _ => (format!("{}", 1 + rng.below(100)), format!("{}", rng.below(110))),
            };
            hard.push((name.to_string(), h));
            used.push((name.to_string(), u));
        }
        let extra = match rng.below(6) {
            0 => "  scopes: [NotTerminating]\n".to_string(),
            1 => "  scopeSelector:\n    matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high, critical]}]\n".to_string(),
            _ => String::new(),
        };
        let h: Vec<(&str, &str)> = hard.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let u: Vec<(&str, &str)> = used.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        if i % 50 == 49 {
            // Not synced yet: no status.
            let map = h.iter().map(|(k, v)| format!("{k}: '{v}'")).collect::<Vec<_>>().join(", ");
            let _ = write!(s, "---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: q-{i:04}, namespace: {ns}}}\nspec:\n  hard: {{{map}}}\n{extra}");
        } else {
            quota_yaml(&mut s, &ns, &format!("q-{i:04}"), &extra, &h, &u);
        }
    }
    s
}

fn docs(file: &str, text: &str) -> Vec<Document> {
    parse_str(file, text).expect("generated YAML parses")
}

fn decode_all(docs: &[Document]) -> Vec<Object> {
    docs.iter().map(|d| decode(d).expect("generated objects decode")).collect()
}

fn state(text: &str) -> ClusterState {
    ClusterState::from_objects(decode_all(&docs("state.yaml", text)), NS)
}

fn opts() -> CheckOptions {
    CheckOptions { namespace: NS.into(), ..Default::default() }
}

// ------------------------------------------------------------------------------------------
// Benchmarks
// ------------------------------------------------------------------------------------------

fn bench_quantity(c: &mut Criterion) {
    let mut g = c.benchmark_group("quantity");
    g.throughput(Throughput::Elements(QUANTITIES.len() as u64));
    g.bench_function("parse_print_20", |b| {
        b.iter(|| {
            let mut n = 0;
            for s in black_box(&QUANTITIES) {
                n += Quantity::parse(s).unwrap().to_string().len();
            }
            n
        })
    });
    let mut rng = Rng(42);
    let addends: Vec<Quantity> = (0..1000)
        .map(|_| {
            let s = match rng.below(4) {
                0 => format!("{}m", rng.below(4000)),
                1 => format!("{}Mi", rng.below(4096)),
                2 => format!("{}", rng.below(100)),
                _ => format!("{}.{}Gi", rng.below(16), rng.below(10)),
            };
            Quantity::parse(&s).unwrap()
        })
        .collect();
    g.throughput(Throughput::Elements(addends.len() as u64));
    g.bench_function("sum_1000", |b| b.iter(|| black_box(&addends).iter().fold(Quantity::zero(), |acc, q| acc.add(q))));
    g.bench_function("sum_1000_print", |b| b.iter(|| black_box(&addends).iter().fold(Quantity::zero(), |acc, q| acc.add(q)).to_string()));
    g.finish();
}

fn bench_pipeline(c: &mut Criterion) {
    let base = state(&state_yaml(NS, None, 1));
    let text = pods_yaml(1000, 1);
    let pod_docs = docs("pods.yaml", &text);
    let pods = decode_all(&pod_docs);
    {
        // Sanity: the input exercises both verdicts.
        let report = check::check(&mut base.clone(), pods.clone(), &opts());
        let admitted = report.documents.iter().filter(|d| d.allowed).count();
        assert!(admitted > 900 && admitted < 1000, "{admitted} of 1000 admitted: adjust the generator");
        assert_eq!(base.quotas[NS].len(), 20);
        eprintln!("pipeline input: 1000 pods, {admitted} admitted, {} quotas", base.quotas[NS].len());
    }

    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Elements(1000));
    g.bench_function("parse_yaml_1000_pods", |b| b.iter(|| parse_str("pods.yaml", black_box(&text)).unwrap()));
    g.bench_function("decode_1000_pods", |b| b.iter(|| decode_all(black_box(&pod_docs))));
    g.bench_function("decode_check_1000_pods", |b| {
        b.iter_batched(
            || base.clone(),
            |mut st| {
                let objs = decode_all(&pod_docs);
                check::check(&mut st, objs, &opts())
            },
            BatchSize::LargeInput,
        )
    });
    // What `--quiet` asks of the engine: the same decisions, only the refusing quotas explained.
    g.bench_function("decode_check_refusals_1000_pods", |b| {
        let lean = CheckOptions { detail: kubectl_quota_engine::admission::Detail::Refusals, ..opts() };
        b.iter_batched(
            || base.clone(),
            |mut st| {
                let objs = decode_all(&pod_docs);
                check::check(&mut st, objs, &lean)
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("render_json_1000_pods", |b| {
        let report = check::check(&mut base.clone(), pods.clone(), &opts());
        b.iter(|| {
            kubectl_quota::render::check::render(black_box(&report), kubectl_quota::render::check::Output::Json, kubectl_quota::render::check::Text::Explain)
        })
    });
    g.bench_function("render_text_1000_pods", |b| {
        colored::control::set_override(false);
        let report = check::check(&mut base.clone(), pods.clone(), &opts());
        b.iter(|| {
            kubectl_quota::render::check::render(black_box(&report), kubectl_quota::render::check::Output::Text, kubectl_quota::render::check::Text::Explain)
        })
    });
    g.finish();

    // Scaling of check alone: time per pod should stay flat.
    let mut g = c.benchmark_group("pipeline_check_scaling");
    for n in [250usize, 1000, 4000] {
        let objs = decode_all(&docs("pods.yaml", &pods_yaml(n, 1)));
        let st = state(&state_yaml(NS, None, n.div_ceil(1000) as u32));
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &objs, |b, objs| {
            b.iter_batched(|| (st.clone(), objs.clone()), |(mut st, objs)| check::check(&mut st, objs, &opts()), BatchSize::LargeInput)
        });
    }
    g.finish();
}

fn bench_replay(c: &mut Criterion) {
    let deployment = decode_all(&docs("deploy.yaml", &deployment_yaml(1000)));
    let one_quota = state(&format!(
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: cap, namespace: {NS}}}\nspec:\n  hard: {{pods: '900'}}\nstatus:\n  hard: {{pods: '900'}}\n  used: {{pods: '0'}}\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: high}}\nvalue: 100000\n"
    ));
    let twenty = state(&state_yaml(NS, Some(900), 1));
    for (label, st) in [("1_quota", &one_quota), ("20_quotas", &twenty)] {
        let r = check::check(&mut st.clone(), deployment.clone(), &opts());
        assert_eq!(r.documents[0].replicas_admitted, Some(900), "{label}: {:?}", r.documents[0].pod_message);
    }
    let mut g = c.benchmark_group("replay_deployment_1000_replicas");
    g.throughput(Throughput::Elements(1000));
    for (label, st) in [("1_quota", &one_quota), ("20_quotas", &twenty)] {
        g.bench_function(label, |b| {
            b.iter_batched(|| (st.clone(), deployment.clone()), |(mut st, objs)| check::check(&mut st, objs, &opts()), BatchSize::SmallInput)
        });
    }
    g.finish();
}

fn bench_describe(c: &mut Criterion) {
    colored::control::set_override(false);
    let quotas: Vec<(String, String, kubectl_quota_engine::objects::ResourceQuota)> = decode_all(&docs("quotas.yaml", &many_quotas_yaml(2000)))
        .into_iter()
        .map(|o| match o.body {
            Body::ResourceQuota(q) => (o.meta.namespace.unwrap(), o.meta.name, *q),
            _ => unreachable!(),
        })
        .collect();
    let views =
        |qs: &[(String, String, kubectl_quota_engine::objects::ResourceQuota)]| qs.iter().map(|(ns, n, q)| describe::view(ns, n, q)).collect::<Vec<_>>();
    let mut g = c.benchmark_group("describe_2000_quotas");
    g.throughput(Throughput::Elements(quotas.len() as u64));
    g.bench_function("view", |b| b.iter(|| views(black_box(&quotas))));
    g.bench_function("view_render_text", |b| b.iter(|| kubectl_quota::render::describe::render_text(&views(black_box(&quotas)), false)));
    g.bench_function("view_render_json", |b| b.iter(|| serde_json::to_string_pretty(&views(black_box(&quotas))).unwrap()));
    g.finish();
}

/// `n` Jobs or CronJobs of one small pod each.
fn jobs_yaml(n: usize, kind: &str) -> String {
    let mut s = String::new();
    let pod = "restartPolicy: Never, containers: [{name: a, image: x, resources: {requests: {cpu: 10m, memory: 16Mi}}}]";
    for i in 0..n {
        let spec = if kind == "CronJob" {
            format!("{{schedule: '*/5 * * * *', jobTemplate: {{spec: {{template: {{spec: {{{pod}}}}}}}}}}}")
        } else {
            format!("{{template: {{spec: {{{pod}}}}}}}")
        };
        let api = "batch/v1";
        let _ = write!(s, "---\napiVersion: {api}\nkind: {kind}\nmetadata: {{name: j-{i}}}\nspec: {spec}\n");
    }
    s
}

/// Inputs whose cost grew faster than linearly when this benchmark was written (see
/// bench/RESULTS.md): time per element should stay flat from the small size to the large one.
fn bench_scaling_suspects(c: &mut Criterion) {
    // Quotas of one namespace loaded into a ClusterState.
    let mut g = c.benchmark_group("state_from_quotas_one_namespace");
    for n in [1000usize, 4000] {
        let text: String = (0..n)
            .map(|i| format!("---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: q-{:06}, namespace: {NS}}}\nspec: {{hard: {{pods: '100'}}}}\nstatus: {{hard: {{pods: '100'}}, used: {{pods: '0'}}}}\n", (i * 7919) % n))
            .collect();
        let objs = decode_all(&docs("quotas.yaml", &text));
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &objs, |b, objs| {
            b.iter_batched(|| objs.clone(), |objs| ClusterState::from_objects(objs, NS), BatchSize::LargeInput)
        });
    }
    g.finish();
    // Jobs (linear) against CronJobs (each evaluated on a scratch copy of the state).
    let base = state(&state_yaml(NS, None, 1));
    let mut g = c.benchmark_group("jobs_vs_cronjobs");
    for kind in ["Job", "CronJob"] {
        for n in [250usize, 500] {
            let objs = decode_all(&docs("jobs.yaml", &jobs_yaml(n, kind)));
            g.throughput(Throughput::Elements(n as u64));
            g.bench_with_input(BenchmarkId::new(kind, n), &objs, |b, objs| {
                b.iter_batched(|| (base.clone(), objs.clone()), |(mut st, objs)| check::check(&mut st, objs, &opts()), BatchSize::LargeInput)
            });
        }
    }
    g.finish();
}

fn config() -> Criterion {
    // Modest: 2 cores shared with other work; `cargo bench` must finish in about 2 minutes.
    Criterion::default().sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2)).without_plots()
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_quantity, bench_pipeline, bench_replay, bench_describe, bench_scaling_suspects
}
criterion_main!(benches);
