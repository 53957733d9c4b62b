//! Differential test against upstream Kubernetes code (tests/oracle: a Go program built from
//! Debian's k8s.io 0.36.4 sources, see its README).
//!
//! - 5,000 generated pods (containers, init containers, restartable sidecars, overhead,
//!   pod-level resources, hugepages, extended resources, assorted quantity formats): the
//!   engine's requests and limits must equal `PodRequests` / `PodLimits` of
//!   k8s.io/component-helpers, as Kubernetes 1.36 computes them (pod-level resources on).
//! - 1,000 generated quota sets: the engine's `check_request` (1.36 rules) on a generated pod
//!   must give `CheckRequest`'s verdict, its byte-identical message and the quotas' usage
//!   after charging.
//!
//! The generator is seeded from `KUBECTL_QUOTA_ORACLE_SEED` (or the clock); the seed is printed
//! on failure so a run can be repeated. Where the oracle cannot be built the test says so on
//! stderr and passes, except under `CI=true`, where it fails.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use kubectl_quota_engine::admission::{check_request_with, NamedQuota};
use kubectl_quota_engine::manifest::parse_str;
use kubectl_quota_engine::objects::{decode, Body, Object};
use kubectl_quota_engine::resources::ResourceList;
use kubectl_quota_engine::usage::{self, Evaluator};
use kubectl_quota_engine::version::Rules;
use serde_json::{json, Map, Value};

const PODS: usize = 5_000;
const QUOTA_SETS: usize = 1_000;

/// splitmix64: small, seedable, good enough to spread cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A quantity string for `resource`, in one of the forms people write (all exact at milli).
fn quantity(rng: &mut Rng, resource: &str) -> String {
    match resource {
        "cpu" => match rng.below(5) {
            0 => format!("{}m", rng.below(4000)),
            1 => format!("{}", rng.below(8)),
            2 => format!("{}.{}", rng.below(4), rng.below(10)),
            3 => format!("{}m", 100 * (1 + rng.below(40))),
            _ => format!("{}e-3", rng.below(3000)),
        },
        "memory" | "ephemeral-storage" => match rng.below(6) {
            0 => format!("{}Mi", 1 + rng.below(4096)),
            1 => format!("{}Gi", rng.below(16)),
            2 => format!("{}M", 1 + rng.below(4000)),
            3 => format!("{}", 1024 * (1 + rng.below(1_000_000))),
            4 => format!("{}.5Gi", rng.below(8)),
            _ => format!("{}k", 1 + rng.below(100_000)),
        },
        r if r.starts_with("hugepages-2Mi") => format!("{}Mi", 2 * rng.below(64)),
        r if r.starts_with("hugepages-1Gi") => format!("{}Gi", rng.below(4)),
        _ => format!("{}", rng.below(9)),
    }
}

const CONTAINER_RESOURCES: &[&str] = &["cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "hugepages-1Gi", "example.com/gpu", "nvidia.com/gpu"];
const POD_LEVEL_RESOURCES: &[&str] = &["cpu", "memory", "hugepages-2Mi"];

fn list(rng: &mut Rng, names: &[&str], percent: u64, always: &[&str]) -> Map<String, Value> {
    let mut m = Map::new();
    for n in names {
        if always.contains(n) || rng.chance(percent) {
            m.insert(n.to_string(), Value::String(quantity(rng, n)));
        }
    }
    m
}

/// A container; `complete`: cpu and memory requests and limits always set (no must-specify).
fn container(rng: &mut Rng, name: String, sidecar: bool, complete: bool) -> Value {
    let always: &[&str] = if complete { &["cpu", "memory"] } else { &[] };
    let mut resources = Map::new();
    if complete || rng.chance(85) {
        resources.insert("requests".into(), Value::Object(list(rng, CONTAINER_RESOURCES, 40, always)));
    }
    if complete || rng.chance(60) {
        resources.insert("limits".into(), Value::Object(list(rng, CONTAINER_RESOURCES, 35, always)));
    }
    let mut c = json!({"name": name, "image": "x", "resources": resources});
    if sidecar {
        c["restartPolicy"] = json!("Always");
    }
    c
}

fn pod(rng: &mut Rng, complete: bool) -> Value {
    let containers: Vec<Value> = (0..1 + rng.below(3)).map(|i| container(rng, format!("c{i}"), false, complete)).collect();
    let inits: Vec<Value> = (0..rng.below(4))
        .map(|i| {
            let sidecar = rng.chance(50);
            container(rng, format!("i{i}"), sidecar, complete)
        })
        .collect();
    let mut spec = json!({"containers": containers});
    if !inits.is_empty() {
        spec["initContainers"] = Value::Array(inits);
    }
    if rng.chance(30) {
        spec["overhead"] = Value::Object(list(rng, &["cpu", "memory"], 70, &[]));
    }
    if rng.chance(30) {
        let mut r = Map::new();
        if rng.chance(80) {
            r.insert("requests".into(), Value::Object(list(rng, POD_LEVEL_RESOURCES, 60, &[])));
        }
        if rng.chance(70) {
            r.insert("limits".into(), Value::Object(list(rng, POD_LEVEL_RESOURCES, 60, &[])));
        }
        spec["resources"] = Value::Object(r);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": spec})
}

fn engine_object(v: &Value) -> Object {
    let docs = parse_str("generated.json", &v.to_string()).unwrap();
    decode(&docs[0]).unwrap_or_else(|e| panic!("the generator wrote an object the engine refuses: {e}\n{v}"))
}

fn as_json(l: &ResourceList) -> Value {
    Value::Object(l.iter().map(|(k, q)| (k.clone(), Value::String(q.to_string()))).collect())
}

/// A quantity's text that the oracle parses back to the same value and format. The engine
/// carries a quantity's format as the API server does in memory; text loses it in one case:
/// a binary-format (`Mi`, `Gi`) sum that is no multiple of 1024 prints as plain digits
/// (`5532270000`), which parses back as decimal and prints `5532270k`. Written as a fraction
/// of `Ki` (`5402607.421875Ki`) it parses back binary and prints the digits again.
fn wire(q: &str) -> String {
    let plain = q.len() > 3 && q.bytes().all(|b| b.is_ascii_digit()) && q.ends_with("000");
    let Some(n) = q.parse::<u128>().ok().filter(|_| plain) else { return q.to_string() };
    // n / 1024 = n * 5^10 / 10^10, exactly.
    let digits = format!("{:011}", n * 9_765_625);
    let (int, frac) = digits.split_at(digits.len() - 10);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{int}Ki")
    } else {
        format!("{int}.{frac}Ki")
    }
}

fn usage_json(l: &ResourceList) -> Value {
    Value::Object(l.iter().map(|(k, q)| (k.clone(), Value::String(wire(&q.to_string())))).collect())
}

fn kind_of(name: &str) -> &'static str {
    if name.contains("cpu") {
        "cpu"
    } else if name.contains("memory") || name.contains("storage") || name.contains("hugepages") {
        "memory"
    } else {
        "x"
    }
}

/// A set of 1-3 quotas around the pod's usage: limits at zero, exactly at the pod's usage,
/// below and well above it; used values zero, assorted or missing (status unknown);
/// unrelated names.
fn quotas(rng: &mut Rng, usage: &ResourceList) -> Vec<Value> {
    let mut names: Vec<String> = usage.keys().cloned().collect();
    names.extend(
        ["count/configmaps", "services", "requests.storage", "requests.ephemeral-storage", "requests.nvidia.com/gpu", "limits.memory"].map(String::from),
    );
    (0..1 + rng.below(3))
        .map(|i| {
            let mut hard = Map::new();
            let mut used = Map::new();
            for n in &names {
                if !rng.chance(30) {
                    continue;
                }
                let asked = usage.get(n).map(|q| wire(&q.to_string()));
                let roomy = match kind_of(n) {
                    "cpu" => format!("{}", 20 + rng.below(80)),
                    "memory" => format!("{}Gi", 100 + rng.below(100)),
                    _ => format!("{}", 50 + rng.below(50)),
                };
                let h = match (rng.below(20), &asked) {
                    (0, _) => "0".to_string(),
                    (1..=4, Some(a)) => a.clone(),
                    (5..=6, _) => quantity(rng, kind_of(n)),
                    _ => roomy,
                };
                let exact = asked.as_ref() == Some(&h);
                hard.insert(n.clone(), Value::String(h));
                if !rng.chance(4) {
                    let u = if exact || rng.chance(60) { "0".to_string() } else { quantity(rng, kind_of(n)) };
                    used.insert(n.clone(), Value::String(u));
                }
            }
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": format!("q{i}"), "namespace": "ns"},
                   "spec": {"hard": hard.clone()}, "status": {"hard": hard, "used": used}})
        })
        .collect()
}

/// The oracle binary, or why there is none.
fn oracle() -> Result<String, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/build.sh");
    let out = Command::new("bash").arg(&script).output().map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let path = stdout.lines().last().unwrap_or("").trim().to_string();
    if !out.status.success() || path.is_empty() || !Path::new(&path).exists() {
        return Err(format!("{} failed ({}): {}", script.display(), out.status, String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(path)
}

/// Sends every line to the oracle at once and reads one answer per line.
fn ask(binary: &str, lines: Vec<String>) -> Vec<Value> {
    let mut child = Command::new(binary).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let n = lines.len();
    let writer = std::thread::spawn(move || {
        let mut w = std::io::BufWriter::new(&mut stdin);
        for l in lines {
            writeln!(w, "{l}").unwrap();
        }
    });
    let answers: Vec<Value> = BufReader::new(child.stdout.take().unwrap()).lines().map(|l| serde_json::from_str(&l.unwrap()).unwrap()).collect();
    writer.join().unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(answers.len(), n, "the oracle answered {} of {n} lines", answers.len());
    answers
}

#[test]
fn binary_sums_keep_their_format_on_the_wire() {
    for (q, want) in [("5532270000", "5402607.421875Ki"), ("1024000", "1000Ki"), ("1025023", "1025023"), ("5532270k", "5532270k"), ("1500m", "1500m")] {
        assert_eq!(wire(q), want, "{q}");
    }
}

#[test]
fn engine_agrees_with_upstream_code() {
    let binary = match oracle() {
        Ok(b) => b,
        Err(why) => {
            eprintln!("\n!!!!!!!!!! ORACLE NOT AVAILABLE: the differential test against upstream Kubernetes code DID NOT RUN !!!!!!!!!!\n{why}\n");
            assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true: the oracle must be built ({why})");
            return;
        }
    };
    let seed: u64 = std::env::var("KUBECTL_QUOTA_ORACLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64);
    let mut rng = Rng(seed);
    let rules = Rules::newest();

    // Pods: requests and limits.
    let mut pods = Vec::with_capacity(PODS);
    let mut lines = Vec::with_capacity(PODS + QUOTA_SETS);
    for i in 0..PODS {
        let p = pod(&mut rng, false);
        lines.push(json!({"id": i, "op": "pod", "podLevelResources": rules.pod_level_resources, "pod": p}).to_string());
        pods.push(p);
    }
    // Quota sets: the verdict of a pod create.
    let mut checks = Vec::with_capacity(QUOTA_SETS);
    for i in 0..QUOTA_SETS {
        let p = pod(&mut rng, true);
        let obj = engine_object(&p);
        let Body::Pod(pod) = &obj.body else { unreachable!() };
        let usage = usage::pod_usage_with(pod, &rules);
        let qs = quotas(&mut rng, &usage);
        let ev = Evaluator::for_object_with(&obj, &rules);
        let hard_names: Vec<String> = qs.iter().flat_map(|q| q["status"]["hard"].as_object().unwrap().keys().cloned()).collect();
        let matching: Vec<&str> = ev.matching_resources(&hard_names).into_vec();
        lines.push(
            json!({"id": PODS + i, "op": "check", "namespace": "ns", "name": "web", "quotas": qs, "usage": usage_json(&usage), "matchingResources": matching})
                .to_string(),
        );
        checks.push((obj, qs));
    }
    let request_lines = lines.clone();
    let answers = ask(&binary, lines);

    let mut failures = Vec::new();
    for (i, p) in pods.iter().enumerate() {
        let a = &answers[i];
        let obj = engine_object(p);
        let Body::Pod(pod) = &obj.body else { unreachable!() };
        let got = json!({"requests": as_json(&usage::pod_requests(pod)), "limits": as_json(&usage::pod_limits(pod))});
        let want = json!({"requests": a["requests"], "limits": a["limits"]});
        if got != want {
            failures.push(format!("pod {i}: engine {got}\n  upstream {want}\n  request {}", request_lines[i]));
        }
    }
    for (i, (obj, qs)) in checks.iter().enumerate() {
        let a = &answers[PODS + i];
        let mut named: Vec<NamedQuota> = qs
            .iter()
            .map(|q| {
                let o = engine_object(q);
                let Body::ResourceQuota(rq) = o.body else { unreachable!() };
                NamedQuota { name: o.meta.name, quota: *rq }
            })
            .collect();
        let d = check_request_with(&mut named, obj, None, &[], &rules);
        let message = d.refusal.as_ref().map(|r| r.server_error(obj)).unwrap_or_default();
        let used: Vec<Value> = if d.allowed { named.iter().map(|q| as_json(&q.quota.status_used)).collect() } else { vec![] };
        let got = json!({"allowed": d.allowed, "message": message, "quotas": used});
        let want = json!({"allowed": a["allowed"], "message": a["message"], "quotas": a["quotas"]});
        if got != want {
            failures.push(format!("quota set {i}: engine {got}\n  upstream {want}\n  request {}", request_lines[PODS + i]));
        }
    }
    let refused = answers[PODS..].iter().filter(|a| a["allowed"] == false).count();
    println!("oracle (seed {seed}): {PODS} pods, {QUOTA_SETS} quota sets ({refused} refused upstream), {} differences", failures.len());
    assert!(
        failures.is_empty(),
        "seed {seed} (repeat with KUBECTL_QUOTA_ORACLE_SEED={seed}): {} of {} cases differ from upstream; first ones:\n{}",
        failures.len(),
        PODS + QUOTA_SETS,
        failures.iter().take(5).cloned().collect::<Vec<_>>().join("\n")
    );
}
