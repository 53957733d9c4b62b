//! A snapshot records the server's version, and the cluster-scoped kinds it could not read,
//! in its List's annotations; offline `check`, `plan` and `describe` read them back. No cluster
//! needed: the snapshots here are written as `kubectl quota snapshot` writes them
//! (tests/live_snapshot.rs takes real ones from the lab cluster).

mod common;

use std::path::PathBuf;
use std::process::Output;

use kubectl_quota_engine::version::{CURRENT, NEWEST, OLDEST};
use serde_json::Value;

fn run(args: &[&str]) -> Output {
    common::bin().args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// Writes a file named after the test (tests run at once: each call gets its own), under
/// cargo's scratch directory for integration tests, not the system's.
fn file(tag: &str, content: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let f = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("kq-snapver-{tag}-{}-{n}.yaml", std::process::id()));
    std::fs::write(&f, content).unwrap();
    f
}

/// A snapshot as `snapshot` writes it, with these annotations (YAML lines under
/// `annotations:`, indented by four).
fn snapshot(annotations: &str) -> String {
    let meta = if annotations.is_empty() { String::new() } else { format!("metadata:\n  annotations:\n{annotations}") };
    format!(
        "apiVersion: v1\nkind: List\n{meta}items:\n\
         - apiVersion: v1\n  kind: ResourceQuota\n  metadata:\n    name: compute\n    namespace: team-a\n  \
         spec:\n    hard:\n      count/cronjobs.batch: '5'\n      pods: '10'\n  \
         status:\n    hard:\n      count/cronjobs.batch: '5'\n      pods: '10'\n    used:\n      count/cronjobs.batch: '0'\n      pods: '0'\n"
    )
}

const CRONJOB_V1: &str = "\
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: team-a}
spec:
  schedule: '0 3 * * *'
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: job, image: busybox}]
";

fn json(out: &Output) -> Value {
    serde_json::from_str(&text(&out.stdout)).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", text(&out.stdout), text(&out.stderr)))
}

fn check_json(state: &[&PathBuf], extra: &[&str]) -> Output {
    let manifest = file("cronjob", CRONJOB_V1);
    let mut args = vec!["check".to_string(), "-f".into(), manifest.display().to_string(), "-n".into(), "team-a".into(), "-o".into(), "json".into()];
    for s in state {
        args.push("--state".into());
        args.push(s.display().to_string());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&args)
}

#[test]
fn offline_rules_are_the_release_the_snapshot_recorded() {
    let (newest, current) = (NEWEST.to_string(), CURRENT.to_string());
    let (newest, current) = (newest.as_str(), current.as_str());
    let cases = [
        // (annotations, --kubernetes-version, exit, version, source, serverVersion, cronjob allowed)
        ("    kubectl-quota/server-version: v1.20.2\n", None, 1, "1.20", "snapshot", Some("v1.20.2"), false),
        ("    kubectl-quota/server-version: v1.33.4-eks-2d98532\n", None, 0, "1.33", "snapshot", Some("v1.33.4-eks-2d98532"), true),
        // --kubernetes-version still decides.
        ("    kubectl-quota/server-version: v1.20.2\n", Some(newest), 0, newest, "flag", Some("v1.20.2"), true),
        ("", Some("1.20"), 1, "1.20", "flag", None, false),
        // A state file `snapshot` did not write: the rules of the newest release out.
        ("", None, 0, current, "default", None, true),
    ];
    for (annotations, flag, exit, version, source, server, allowed) in cases {
        let state = file("state", &snapshot(annotations));
        let extra: Vec<&str> = flag.map(|v| vec!["--kubernetes-version", v]).unwrap_or_default();
        let out = check_json(&[&state], &extra);
        let what = format!("{annotations:?} {flag:?}");
        assert_eq!(out.status.code(), Some(exit), "{what}\n{}\n{}", text(&out.stdout), text(&out.stderr));
        let r = json(&out);
        assert_eq!(r["kubernetes"]["version"], version, "{what}");
        assert_eq!(r["kubernetes"]["source"], source, "{what}");
        assert_eq!(r["kubernetes"]["serverVersion"].as_str(), server, "{what}");
        assert_eq!(r["documents"][0]["allowed"], allowed, "{what}: {}", r["documents"][0]);
        if !allowed {
            assert_eq!(r["documents"][0]["message"], "no matches for kind \"CronJob\" in version \"batch/v1\"", "{what}");
        }
    }
}

#[test]
fn a_release_not_out_yet_is_answered_with_the_pre_release_its_rules_come_from_named() {
    // 1.38's rules come from v1.38.0-beta.0: JSON names it, text says it in a note; 1.37's
    // report has neither.
    let state = file("plain", &snapshot(""));
    for (flag, from) in [("1.38", Some("v1.38.0-beta.0")), ("1.37", None)] {
        let r = json(&check_json(&[&state], &["--kubernetes-version", flag]));
        assert_eq!(r["kubernetes"]["rulesFrom"].as_str(), from, "{flag}: {}", r["kubernetes"]);
        let noted = r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap_or("").contains("is not out yet: its rules were read from the code of v1.38.0-beta.0"));
        assert_eq!(noted, from.is_some(), "{flag}: {}", r["notes"]);
    }
}

#[test]
fn a_snapshot_outside_the_known_releases_answers_with_the_nearest_and_says_so() {
    let cases = [("v1.19.16".to_string(), OLDEST), (format!("v{}.{}.0", NEWEST.major, NEWEST.minor + 4), NEWEST)];
    for (raw, used) in cases {
        let used = used.to_string();
        let used = used.as_str();
        let state = file("far", &snapshot(&format!("    kubectl-quota/server-version: {raw}\n")));
        let out = check_json(&[&state], &[]);
        let r = json(&out);
        assert_eq!((r["kubernetes"]["version"].as_str(), r["kubernetes"]["source"].as_str()), (Some(used), Some("snapshot")), "{raw}");
        let notes = r["notes"].to_string();
        assert!(
            notes.contains(&format!("was taken from Kubernetes {raw}, outside the {OLDEST} to {NEWEST} this tool knows: answering with the rules of {used}")),
            "{raw}: {notes}"
        );
    }
}

#[test]
fn snapshots_of_different_releases_together_are_refused_naming_both() {
    let a = file("rel-a", &snapshot("    kubectl-quota/server-version: v1.20.2\n"));
    let b = file("rel-b", &snapshot("    kubectl-quota/server-version: v1.33.1\n"));
    let out = check_json(&[&a, &b], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("the snapshots were taken from different Kubernetes releases: {} records v1.20.2, {} records v1.33.1", a.display(), b.display())),
        "{err}"
    );
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
    // plan refuses them the same way.
    let manifest = file("plan-cronjob", CRONJOB_V1);
    let out = run(&["plan", "-f", manifest.to_str().unwrap(), "--state", a.to_str().unwrap(), "--state", b.to_str().unwrap(), "-n", "team-a"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("different Kubernetes releases"), "{}", text(&out.stderr));
    // --kubernetes-version chooses the rules: no conflict left to refuse.
    let out = check_json(&[&a, &b], &["--kubernetes-version", "1.33"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(json(&out)["kubernetes"]["source"], "flag");
    // Two snapshots of one release (patch versions aside) go together.
    let c = file("rel-c", &snapshot("    kubectl-quota/server-version: v1.20.15\n"));
    let out = check_json(&[&a, &c], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(json(&out)["kubernetes"]["version"], "1.20");
}

#[test]
fn kinds_the_snapshot_could_not_read_make_a_note_where_an_answer_needs_them() {
    let state = file(
        "not-read",
        &snapshot(
            "    kubectl-quota/not-read: priorityclasses.scheduling.k8s.io,storageclasses.storage.k8s.io,runtimeclasses.node.k8s.io,deviceclasses.resource.k8s.io\n    kubectl-quota/server-version: v1.20.2\n",
        ),
    );
    let notes_of = |out: &Output| -> Vec<String> { json(out)["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect() };
    // A CronJob whose pods name no class needs none of them: nothing to say.
    let out = check_json(&[&state], &[]);
    let notes = notes_of(&out);
    assert!(!notes.iter().any(|n| n.contains("could not be read")), "{notes:#?}");
    assert!(!text(&out.stderr).contains("incomplete"), "{}", text(&out.stderr));
    // A pod naming a PriorityClass and a RuntimeClass needs both: each is said, and the pod
    // cannot be decided (exit 3).
    let pod = file(
        "not-read-pod",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team-a}\nspec: {priorityClassName: gold, runtimeClassName: kata, containers: [{name: a, image: x}]}\n",
    );
    let out = run(&["check", "-f", pod.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", "team-a", "-o", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let report = json(&out);
    assert_eq!(report["documents"][0]["outcome"], "undecided", "{report:#}");
    let notes = notes_of(&out);
    let s = state.display();
    for w in [
        format!("PriorityClasses could not be read when the snapshot {s} was taken: the global default PriorityClass is not given to pods that name no class (so priority-class scopes see them classless), and unknown class names are not refused"),
        format!("RuntimeClasses could not be read when the snapshot {s} was taken: RuntimeClass overhead is not added to pods"),
    ] {
        assert!(notes.contains(&w), "missing {w:?} in {notes:#?}");
        assert!(text(&out.stderr).contains(&format!("warning: the answer is incomplete: {w}")), "{}", text(&out.stderr));
    }
    // The pod needs no StorageClass, and 1.20 serves no DeviceClasses: neither is said.
    assert!(!notes.iter().any(|n| n.contains("StorageClasses") || n.contains("DeviceClasses")), "{notes:#?}");
    // A claim naming no class, where a quota charges per class, needs the StorageClasses.
    // A snapshot of `release` that could not read `kind`, its quota limiting `resource`.
    let missing = |tag: &str, kind: &str, release: &str, resource: &str| {
        let annotations = format!("    kubectl-quota/not-read: {kind}\n    kubectl-quota/server-version: {release}\n");
        file(tag, &snapshot(&annotations).replace("count/cronjobs.batch", resource))
    };
    let per_class = missing("not-read-per-class", "storageclasses.storage.k8s.io", "v1.20.2", "fast.storageclass.storage.k8s.io/requests.storage");
    let claim = file(
        "not-read-claim",
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c, namespace: team-a}\nspec: {resources: {requests: {storage: 1Gi}}}\n",
    );
    let out = run(&["check", "-f", claim.to_str().unwrap(), "--state", per_class.to_str().unwrap(), "-n", "team-a", "-o", "json"]);
    assert_eq!((out.status.code(), json(&out)["documents"][0]["undecided"][0]["lacking"].as_str()), (Some(3), Some("storageClasses")), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("StorageClasses could not be read"), "{}", text(&out.stderr));
    // On a release that serves DeviceClasses, a pod's claims where a quota limits an extended
    // resource need them too.
    let dra = missing("not-read-dra", "deviceclasses.resource.k8s.io", "v1.37.2", "requests.example.com/gpu");
    let claimed = file(
        "not-read-claimed",
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpu, namespace: team-a}\nspec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team-a}\nspec: {resourceClaims: [{name: g, resourceClaimTemplateName: gpu}], containers: [{name: a, image: x}]}\n",
    );
    let out = run(&["check", "-f", claimed.to_str().unwrap(), "--state", dra.to_str().unwrap(), "-n", "team-a", "-o", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(json(&out)["documents"][1]["undecided"][0]["lacking"], "deviceClasses", "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains(&format!(
            "warning: the answer is incomplete: DeviceClasses could not be read when the snapshot {} was taken: DRA extended resource names are not resolved",
            dra.display()
        )),
        "{}",
        text(&out.stderr)
    );
    // Text output says it too; plan, which sizes quotas for every document, says every gap.
    let out = run(&["check", "-f", claimed.to_str().unwrap(), "--state", dra.to_str().unwrap(), "-n", "team-a"]);
    assert!(text(&out.stdout).contains("note: DeviceClasses could not be read"), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("pod/p: cannot be decided: the claims of the pod are charged as their DeviceClass's extended resource"),
        "{}",
        text(&out.stdout)
    );
    let manifest = file("text-cronjob", CRONJOB_V1);
    let out = run(&["plan", "-f", manifest.to_str().unwrap(), "--state", dra.to_str().unwrap(), "-n", "team-a", "-o", "json"]);
    assert!(text(&out.stdout).contains("DeviceClasses could not be read"), "{}", text(&out.stdout));
}

#[test]
fn the_recorded_version_is_read_from_every_layout_of_the_list() {
    let manifest = file("layout-cronjob", CRONJOB_V1);
    let quota = r#"{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"compute","namespace":"team-a"},"spec":{"hard":{"pods":"10"}},"status":{"hard":{"pods":"10"},"used":{"pods":"0"}}}"#;
    let layouts = [
        // As `snapshot -o json` writes it.
        format!("{{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"metadata\": {{\n    \"annotations\": {{\n      \"kubectl-quota/server-version\": \"v1.20.2\"\n    }}\n  }},\n  \"items\": [{quota}]\n}}\n"),
        // Items first, metadata last.
        format!("apiVersion: v1\nkind: List\nitems:\n- {quota}\nmetadata:\n  annotations: {{kubectl-quota/server-version: v1.20.2}}\n"),
        // After another document.
        format!("apiVersion: v1\nkind: LimitRange\nmetadata: {{name: l, namespace: team-a}}\nspec: {{limits: []}}\n---\napiVersion: v1\nkind: List\nmetadata:\n  annotations:\n    kubectl-quota/server-version: v1.20.2\nitems:\n- {quota}\n"),
        // Flow style.
        format!("{{apiVersion: v1, kind: List, metadata: {{annotations: {{kubectl-quota/server-version: v1.20.2}}}}, items: [{quota}]}}\n"),
    ];
    for (i, layout) in layouts.iter().enumerate() {
        let state = file(&format!("layout-{i}"), layout);
        let out = run(&["check", "-f", manifest.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", "team-a", "-o", "json"]);
        assert_eq!(out.status.code(), Some(1), "layout {i}:\n{layout}\n{}", text(&out.stderr));
        assert_eq!(json(&out)["kubernetes"]["version"], "1.20", "layout {i}:\n{layout}");
    }
    // An annotation that is not on a List records nothing.
    let state = file(
        "on-a-quota",
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\n  namespace: team-a\n  annotations: {kubectl-quota/server-version: v1.20.2}\nspec: {hard: {pods: '1'}}\n",
    );
    let out = run(&["check", "-f", manifest.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", "team-a", "-o", "json"]);
    assert_eq!(json(&out)["kubernetes"]["source"], "default");
}

#[test]
fn a_snapshot_version_that_is_not_a_version_is_an_input_error() {
    let state = file("bad-version", &snapshot("    kubectl-quota/server-version: latest\n"));
    let out = check_json(&[&state], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("{}: annotation kubectl-quota/server-version: \"latest\" is not a Kubernetes version", state.display())), "{err}");
}

#[test]
fn describe_reads_a_snapshot_with_its_annotations() {
    let state = file("describe", &snapshot("    kubectl-quota/not-read: priorityclasses.scheduling.k8s.io\n    kubectl-quota/server-version: v1.20.2\n"));
    let out = run(&["describe", "--state", state.to_str().unwrap(), "-n", "team-a"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("Name:       compute\nNamespace:  team-a\n"), "{}", text(&out.stdout));
}

#[test]
fn a_snapshot_s_claim_templates_are_what_pods_claims_are_made_from() {
    let state = file(
        "dra",
        "apiVersion: v1\nkind: List\nmetadata:\n  annotations:\n    kubectl-quota/server-version: v1.34.1\nitems:\n\
         - apiVersion: v1\n  kind: ResourceQuota\n  metadata: {name: dra, namespace: team-a}\n  \
         spec: {hard: {gpu.deviceclass.resource.k8s.io/devices: '0'}}\n  \
         status: {hard: {gpu.deviceclass.resource.k8s.io/devices: '0'}, used: {gpu.deviceclass.resource.k8s.io/devices: '0'}}\n\
         - apiVersion: resource.k8s.io/v1\n  kind: ResourceClaimTemplate\n  metadata: {name: gpu, namespace: team-a}\n  \
         spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}}\n",
    );
    let pod = file(
        "dra-pod",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: trainer, namespace: team-a}\n\
         spec:\n  containers: [{name: c, image: busybox, resources: {claims: [{name: g}]}}]\n  resourceClaims: [{name: g, resourceClaimTemplateName: gpu}]\n",
    );
    let out = run(&["check", "-f", pod.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", "team-a"]);
    assert_eq!(out.status.code(), Some(1), "{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("note: the pod is created, but its ResourceClaim would be refused: exceeded quota: dra"), "{}", text(&out.stdout));
}

/// A snapshot with these annotations and items (YAML list entries).
fn snapshot_of(annotations: &str, items: &str) -> String {
    format!("apiVersion: v1\nkind: List\nmetadata:\n  annotations:\n{annotations}items:\n{items}")
}

const NAMESPACE_A: &str = "- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: team-a\n";
const QUOTA_A: &str = "- apiVersion: v1\n  kind: ResourceQuota\n  metadata:\n    name: compute\n    namespace: team-a\n  spec:\n    hard:\n      pods: '10'\n  status:\n    hard:\n      pods: '10'\n    used:\n      pods: '0'\n";

#[test]
fn a_snapshot_knows_which_namespaces_exist_within_what_it_covers() {
    let manifest = file("ns-pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n");
    let one = "    kubectl-quota/namespace: team-a\n";
    let cases = [
        // (what the snapshot is, annotations, items, -n, exit, refusal message, stderr has)
        ("of team-a, checked in team-a", one.to_string(), format!("{NAMESPACE_A}{QUOTA_A}"), "team-a", 0, None, None),
        ("of team-a, which did not exist", one.to_string(), "  []\n".to_string(), "team-a", 1, Some("namespaces \"team-a\" not found"), None),
        (
            "of team-a, checked in team-b",
            one.to_string(),
            format!("{NAMESPACE_A}{QUOTA_A}"),
            "team-b",
            3,
            None,
            Some("the state says nothing of namespace \"team-b\" (whether it exists, its quotas): "),
        ),
        (
            "of team-a, by a user who may not read namespaces",
            format!("{one}    kubectl-quota/not-read: namespaces.core\n"),
            QUOTA_A.to_string(),
            "team-a",
            3,
            None,
            Some("Namespaces could not be read when the snapshot"),
        ),
        (
            "of team-a, beside team-b's quota",
            one.to_string(),
            format!("{NAMESPACE_A}{QUOTA_A}{}", QUOTA_A.replace("team-a", "team-b")),
            "team-b",
            0,
            None,
            None,
        ),
        (
            "of every namespace, checked in one that is not there",
            "    kubectl-quota/server-version: v1.37.2\n".into(),
            format!("{NAMESPACE_A}{QUOTA_A}"),
            "team-b",
            1,
            Some("namespaces \"team-b\" not found"),
            None,
        ),
    ];
    for (what, annotations, items, ns, exit, message, stderr) in cases {
        let state = file("ns-scope", &snapshot_of(&annotations, &items));
        for command in ["check", "plan"] {
            let out = run(&[command, "-f", manifest.to_str().unwrap(), "--state", state.to_str().unwrap(), "-n", ns, "-o", "json"]);
            let v = json(&out);
            if command == "check" {
                assert_eq!(out.status.code(), Some(exit), "{what}: {v:#}\n{}", text(&out.stderr));
                assert_eq!(v["documents"][0]["message"].as_str(), message, "{what}: {v:#}");
                match stderr {
                    Some(s) => assert!(text(&out.stderr).contains(s), "{what}: {}", text(&out.stderr)),
                    // A refusal as missing says all there is: no warning beside it.
                    None => assert!(!text(&out.stderr).contains("warning:"), "{what}: {}", text(&out.stderr)),
                }
            } else if let Some(m) = message {
                // plan cannot size a quota for a namespace that does not exist, and says why.
                assert!(v.to_string().contains(&m.replace('"', "\\\"")), "{what}: plan: {v:#}");
            } else if let Some(s) = stderr {
                assert!(v["notes"].to_string().contains(&s.replace('"', "\\\"")), "{what}: plan: {v:#}");
            }
        }
    }
}
