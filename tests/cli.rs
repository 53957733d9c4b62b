//! The `kubectl-quota` binary end to end: exit statuses, input errors, the validation corpus.

mod common;

use std::io::Write;
use std::process::{Output, Stdio};

use common::{bin, temp_file};

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn run_stdin(args: &[&str], input: &str) -> Output {
    let mut child = bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

const STATE: &str = "tests/conformance/1001-compute-exceeds-requests-cpu/state.yaml";

#[test]
fn exit_status_says_whether_everything_fits() {
    let fits = run(&[
        "check",
        "-f",
        "tests/conformance/1000-compute-fits/candidate.yaml",
        "--state",
        "tests/conformance/1000-compute-fits/state.yaml",
        "-n",
        "NAMESPACE",
    ]);
    assert_eq!(fits.status.code(), Some(0), "{}", text(&fits.stdout));
    let refused = run(&["check", "-f", "tests/conformance/1001-compute-exceeds-requests-cpu/candidate.yaml", "--state", STATE, "-n", "NAMESPACE"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stdout).contains("pod/p: refused by quota compute: requests.cpu 600m + used 500m > hard 1"), "{}", text(&refused.stdout));
}

#[test]
fn a_partly_refused_workload_exits_1() {
    let out = run(&["check", "-f", "examples/app.yaml", "--state", "examples/cluster-state.yaml", "-n", "shop", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["documents"][0]["kind"], "Deployment");
    assert_eq!(v["documents"][0]["allowed"], true);
    assert_eq!(v["documents"][0]["replicas"], 4);
    assert_eq!(v["documents"][0]["replicasAdmitted"], 2);
}

#[test]
fn bad_input_names_file_document_and_field_and_exits_2() {
    let pod = |res: &str| format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - name: app\n    resources: {res}\n");
    let cases: Vec<(String, &str)> = vec![
        ("kind: [broken\n".into(), "-, document 1: not valid YAML or JSON"),
        (format!("{}---\n{}", pod("{}"), pod("{requests: {cpu: 2x}}")), "-, document 2: spec.containers[0].resources.requests.cpu: invalid quantity \"2x\""),
        ("kind: Pod\nmetadata: {name: p}\n".into(), "-, document 1: apiVersion: Required value"),
        ("apiVersion: v1\nmetadata: {name: p}\n".into(), "-, document 1: kind: Required value"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n".into(), "-, document 1: metadata.name: Required value"),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: 3}\n".into(), "-, document 1: spec.containers: invalid type"),
    ];
    for (input, want) in cases {
        let out = run_stdin(&["check", "-f", "-", "--state", STATE], &input);
        assert_eq!(out.status.code(), Some(2), "{input}");
        let err = text(&out.stderr);
        assert!(err.starts_with(&format!("error: {want}")), "stderr {err:?} should start with {want:?}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn unreadable_paths_exit_2() {
    for args in [
        vec!["check", "-f", "no/such/file.yaml", "--state", STATE],
        vec!["check", "-f", "examples/app.yaml", "--state", "no/such/state.yaml"],
        vec!["check", "-f", "examples/app.yaml", "--state", STATE, "--admission-config", "no/such.yaml"],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).starts_with("error: "), "{}", text(&out.stderr));
    }
}

#[test]
fn directories_and_lists_are_read_in_name_order() {
    let dir = std::env::temp_dir().join(format!("kq-dir-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let pod = |n: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{n}"}},"spec":{{"containers":[{{"name":"c","image":"nginx","resources":{{"requests":{{"cpu":"400m"}}}}}}]}}}}"#
        )
    };
    std::fs::write(dir.join("b.json"), format!(r#"{{"apiVersion":"v1","kind":"List","items":[{},{}]}}"#, pod("p1"), pod("p2"))).unwrap();
    std::fs::write(dir.join("a.yaml"), pod("p0")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a manifest").unwrap();
    std::fs::write(dir.join("sub/c.yaml"), pod("p3")).unwrap();
    let state = "tests/conformance/1056-sequential-three-pods/state.yaml";
    let names = |recursive: bool| {
        let mut args = vec!["check", "-f", dir.to_str().unwrap(), "--state", state, "-n", "NAMESPACE", "-o", "json"];
        if recursive {
            args.push("-R");
        }
        let out = run(&args);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out.stderr)));
        v["documents"].as_array().unwrap().iter().map(|d| format!("{}:{}", d["name"].as_str().unwrap(), d["allowed"])).collect::<Vec<_>>()
    };
    // 1 cpu quota: p0 and p1 fit (800m), p2 is the one refused, as the server refuses the third.
    assert_eq!(names(false), vec!["p0:true", "p1:true", "p2:false"]);
    assert_eq!(names(true), vec!["p0:true", "p1:true", "p2:false", "p3:false"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// `check -f quota.yaml` refuses exactly the quotas the API server refused, naming the fields.
#[test]
fn validation_corpus_through_check() {
    let dir = common::root().join("tests/conformance-validation");
    let mut cases: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    cases.sort();
    assert!(cases.len() >= 40);
    let mut failures = Vec::new();
    for c in &cases {
        let expected: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(c.join("expected.json")).unwrap()).unwrap();
        let out = run(&["check", "-f", c.join("quota.yaml").to_str().unwrap(), "--state", "/dev/null", "-n", "default", "-o", "json"]);
        let valid = expected["valid"].as_bool().unwrap();
        let want_code = if valid { 0 } else { 1 };
        if out.status.code() != Some(want_code) {
            failures.push(format!("{}: exit {:?}, want {want_code}: {}{}", c.display(), out.status.code(), text(&out.stdout), text(&out.stderr)));
            continue;
        }
        if !valid {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let ours = v["documents"][0]["message"].as_str().unwrap_or("").to_string();
            let theirs = expected["message"].as_str().unwrap();
            // Every field the server named appears in ours.
            for field in theirs.split(['\n', ' ']).filter(|w| w.ends_with(':') && (w.starts_with("spec.") || w.starts_with("metadata."))) {
                if !ours.contains(field) {
                    failures.push(format!("{}: server names {field} but we say {ours:?}", c.display()));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn scaling_an_existing_workload_checks_only_the_added_replicas() {
    let deploy = |replicas: u32, cpu: &str| {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: {cpu}}}}}}}]}}\n")
    };
    let state = "tests/conformance/1057-deployment-replicas-partial/state.yaml"; // pods: 3, none used
    let cases = [
        // 2 running, scaled to 4: 1 more fits.
        (format!("{}---\n{}", deploy(2, "100m"), deploy(4, "100m")), 3, false),
        // Scaled down: nothing to create, all wanted replicas run.
        (format!("{}---\n{}", deploy(3, "100m"), deploy(1, "100m")), 1, false),
        // A changed template is said to roll out.
        (format!("{}---\n{}", deploy(1, "100m"), deploy(2, "200m")), 2, true),
    ];
    for (input, admitted, rollout) in cases {
        let out = run_stdin(&["check", "-f", "-", "--state", state, "-n", "NAMESPACE", "-o", "json"], &input);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let second = &v["documents"][1];
        assert_eq!(second["replicasAdmitted"], admitted, "{second}");
        let notes = second["notes"].to_string();
        assert!(notes.contains("this is an update"), "{notes}");
        assert_eq!(notes.contains("rollout"), rollout, "{notes}");
    }
}

#[test]
fn cluster_views_say_what_a_snapshot_could_not_read_and_only_that() {
    let snapshot = |not_read: &str| {
        format!("apiVersion: v1\nkind: List\nmetadata:\n  annotations:\n    kubectl-quota/server-version: v1.37.2\n    kubectl-quota/not-read: {not_read}\nitems:\n- {{apiVersion: v1, kind: Namespace, metadata: {{name: a}}}}\n")
    };
    // (kinds not read, view, exit status, note wanted)
    let cases = [
        ("priorityclasses.scheduling.k8s.io", "capacity", 0, None),
        ("priorityclasses.scheduling.k8s.io,nodes.core", "capacity", 3, Some("could not read nodes.core")),
        ("events.core", "blocked", 3, Some("could not read events.core")),
        ("storageclasses.storage.k8s.io", "uncovered", 0, None),
    ];
    for (not_read, view, code, note) in cases {
        let o = run_stdin(&[view, "-A", "--state", "-"].iter().filter(|a| view == "blocked" || **a != "-A").copied().collect::<Vec<_>>(), &snapshot(not_read));
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{view} {not_read}: {err}");
        match note {
            Some(n) => assert!(err.contains(n), "{view} {not_read}: {err}"),
            None => assert!(err.is_empty(), "{view} {not_read}: {err}"),
        }
    }
}

#[test]
fn one_version_string_everywhere() {
    // The krew manifest's spec.version is the same string (tests/krew_manifest.rs).
    let line = format!("kubectl quota v{}\n", env!("CARGO_PKG_VERSION"));
    for args in [&["--version"][..], &["version"], &["check", "--version"], &["guard", "serve", "--version"]] {
        let out = run(args);
        assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), line.clone()), "{args:?}");
    }
    let json: serde_json::Value = serde_json::from_slice(&run(&["version", "-o", "json"]).stdout).unwrap();
    assert_eq!(json["version"], format!("v{}", env!("CARGO_PKG_VERSION")));
    // 1.38's rules are known (from its pre-release); 1.37 is the newest release out.
    let k = &json["kubernetes"];
    assert_eq!((k["oldest"].as_str(), k["newest"].as_str(), k["current"].as_str()), (Some("1.20"), Some("1.38"), Some("1.37")));
    let yaml: serde_json::Value = serde_saphyr::from_str(&text(&run(&["version", "-o", "yaml"]).stdout)).unwrap();
    assert_eq!(yaml, json);
}

#[test]
fn a_new_daemonset_without_a_node_count_cannot_be_decided() {
    let ds = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec:\n      containers:\n      - {name: c, image: x, resources: {requests: {cpu: 400m, memory: 64Mi}, limits: {cpu: 400m, memory: 64Mi}}}\n";
    let state = "tests/conformance/1000-compute-fits/state.yaml";
    // (flags, exit status, what the output must say)
    let cases: [(&[&str], i32, &str); 3] =
        [(&[], 3, "the node count is unknown: pass --nodes N"), (&["--nodes", "1"], 0, "admitted"), (&["--nodes", "10"], 1, "refused")];
    for (flags, code, says) in cases {
        let mut args = vec!["check", "-f", "-", "--state", state, "-n", "NAMESPACE"];
        args.extend_from_slice(flags);
        let out = run_stdin(&args, ds);
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(code), "{flags:?}: {all}");
        assert!(all.contains(says), "{flags:?}: {all}");
    }
}

#[test]
fn a_document_past_its_decision_timeout_is_named_undecided_and_the_rest_is_checked() {
    // (--decision-timeout, exit status, what the output must say): 3 is an incomplete answer.
    let input = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 100m, memory: 64Mi}}}]}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n";
    let state = "tests/conformance/1000-compute-fits/state.yaml";
    let cases: [(&str, i32, &[&str]); 3] = [
        ("1ns", 3, &["deployment/web: cannot be decided: not decided within 1ns (--decision-timeout): its pods", "configmap/settings: admitted"]),
        ("10s", 0, &["deployment/web: admitted", "configmap/settings: admitted"]),
        ("0", 2, &["--decision-timeout", "a decision needs a time above zero"]),
    ];
    for (within, code, says) in cases {
        let out = run_stdin(&["check", "-f", "-", "--state", state, "-n", "NAMESPACE", "--decision-timeout", within], input);
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(code), "{within}: {all}");
        for s in says {
            assert!(all.contains(s), "{within}: {s:?} not in {all}");
        }
    }
}

/// The quotas an object consumes nothing of are named under the resource's plural, as the API
/// names it (`networkpolicies`, `ingresses`), not the kind with an `s`.
#[test]
fn unrelated_quotas_are_named_under_the_resources_plural() {
    let state = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: shop}\nspec: {hard: {requests.cpu: '1'}}\nstatus: {hard: {requests.cpu: '1'}, used: {requests.cpu: '0'}}\n";
    let state_file = temp_file("plurals-state", state);
    let manifest = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: np}\nspec: {podSelector: {}}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\nspec: {defaultBackend: {service: {name: web, port: {number: 80}}}}\n---\napiVersion: v1\nkind: Endpoints\nmetadata: {name: web}\n";
    let out = run_stdin(&["check", "-f", "-", "--state", state_file.to_str().unwrap(), "-n", "shop", "--explain"], manifest);
    let _ = std::fs::remove_file(&state_file);
    let said: Vec<String> = text(&out.stdout).lines().filter(|l| l.contains("limiting nothing")).map(|l| l.trim().to_string()).collect();
    assert_eq!(
        said,
        [
            "quotas limiting nothing networkpolicies consume: compute",
            "quotas limiting nothing ingresses consume: compute",
            "quotas limiting nothing endpoints consume: compute"
        ],
        "{}",
        text(&out.stderr)
    );
}

/// plan's closing line is true in every case: documents refused before quota, nothing charged.
#[test]
fn plans_closing_line_says_what_is_true() {
    let state = "apiVersion: v1\nkind: Namespace\nmetadata: {name: mesh}\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: mesh}\nspec: {hard: {requests.cpu: '1'}}\nstatus: {hard: {requests.cpu: '1'}, used: {requests.cpu: '0'}}\n";
    let state_file = temp_file("plan-closing", state);
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: other}\nspec:\n  replicas: 1\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: x}]}\n";
    let cases = [
        ("every document refused before quota", deployment, "No quota needs to grow, but 1 document is refused for reasons no quota fixes (above)."),
        ("nothing charged", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "Nothing to grow."),
    ];
    for (what, manifest, want) in cases {
        let out = run_stdin(&["plan", "-f", "-", "--state", state_file.to_str().unwrap(), "-n", "mesh"], manifest);
        let said = text(&out.stdout);
        assert_eq!(said.lines().rfind(|l| !l.is_empty() && !l.starts_with("note:")), Some(want), "{what}: {said}");
        assert!(!said.contains("Everything fits"), "{what}: {said}");
    }
    let _ = std::fs::remove_file(&state_file);
}
