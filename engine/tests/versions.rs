//! Rule tables, per Kubernetes release: every rule of `version.rs` with the release it applies
//! from, and what a check answers just before and from that release.
//!
//! Releases come from feature-gate defaults, KEPs and kubernetes/kubernetes pull requests (each
//! named in `version.rs` and README's "Per Kubernetes release" table; see docs/semantics.md §8),
//! from the releases recorded in tests/recorded/, and from the Kubernetes API deprecation guide
//! for served API versions; never from what the tool prints.

mod support;

use kubectl_quota_engine::version::{KubeVersion, Rules, RULES};
use support::*;

fn v(s: &str) -> KubeVersion {
    KubeVersion::parse(s).unwrap()
}

fn one_as(version: &str, state: &str, input: &str) -> DocumentReport {
    only(check_version(version, state, input))
}

#[test]
fn every_rule_applies_from_its_release() {
    // (rule, first release, last release). Pinned here so that moving a rule is a visible change.
    let want: &[(&str, &str, Option<&str>)] = &[
        ("cross_namespace_pod_affinity_scope", "1.21", None),
        ("batch_v1_cronjob", "1.21", None),
        ("policy_v1_pod_disruption_budget", "1.21", None),
        ("discovery_v1_endpoint_slice", "1.21", None),
        // The release that relaxed pod update validation (k/k#98866, per upstream's tracking issue
        // k/k#103476); the 1.20 server's message lacks the clause, 1.37's has it (tests/recorded).
        ("pod_update_grace_period", "1.22", None),
        ("service_lb_node_port_control", "1.22", None),
        ("autoscaling_v2", "1.23", None),
        ("networking_v1beta1_ingress", "1.20", Some("1.21")),
        ("v1beta1_rbac_storage_scheduling", "1.20", Some("1.21")),
        ("ephemeral_containers", "1.23", None),
        ("must_specify_names_containers", "1.24", None),
        ("batch_v1beta1_cronjob", "1.20", Some("1.24")),
        ("policy_v1beta1", "1.20", Some("1.24")),
        ("v1beta1_until_1_24", "1.20", Some("1.24")),
        ("autoscaling_v2beta2", "1.20", Some("1.25")),
        ("restartable_sidecars", "1.29", None),
        // The real 1.20.2 and 1.37.2 servers (tests/recorded, case 2805); 1.28 from upstream's history.
        ("limit_range_pod_totals_kept", "1.28", None),
        // The real 1.20.2 and 1.37.2 servers (tests/recorded, case 2810); 1.33 from upstream's history.
        ("scope_change_on_update", "1.33", None),
        ("pod_resize", "1.33", None),
        ("invalid_values_as_json", "1.34", None),
        ("request_limit_message_names_limit", "1.34", None),
        ("volume_attributes_class_scope", "1.34", None),
        ("pod_level_resources", "1.34", None),
        ("dra", "1.34", None),
        ("validating_admission_policy", "1.30", None),
        ("mutating_admission_policy", "1.36", None),
        ("quota_request_limit_warning", "1.35", None),
        // The real 1.35.4 server already does both (tests/recorded, cases 2007, 2016, 2019).
        ("dra_admin_access_counted", "1.34", None),
        ("dra_extended_resources", "1.35", None),
        // Found by the oracle on upstream's 1.37.2 evaluators and pod strategy (tests/oracle.rs).
        // Found by the real 1.36 and 1.37 servers (tests/recorded, case 2017).
        ("dra_claim_extended_resources", "1.36", None),
        ("claim_update_value_null", "1.37", None),
        ("pod_level_limits_defaulting", "1.37", None),
        ("resize_max_of_sums", "1.37", None),
        // Read from k8s.io/kubernetes v1.38.0-beta.0 and its staging modules, and confirmed
        // by the oracle built on that code (tests/oracle, --release 1.38); docs/kubernetes-1.38.md.
        ("pod_limits_all_or_nothing", "1.38", None),
        ("pod_level_overhead_aliased", "1.34", Some("1.37")),
        ("limit_range_exact_compare", "1.38", None),
        ("limit_range_skips_unchanged", "1.38", None),
        ("integer_values_exact", "1.38", None),
        ("runtime_class_empty_name_ignored", "1.38", None),
        // Feature gate defaults of k8s.io/kubernetes v1.37.2 (PodSecurity beta 1.23,
        // ProcMountType beta on by default 1.33) and the AppArmor fields' GA (1.30).
        ("pod_security_admission", "1.23", None),
        ("app_armor_fields", "1.30", None),
        ("proc_mount_type", "1.33", None),
    ];
    let got: Vec<(&str, String, Option<String>)> = RULES.iter().map(|r| (r.name, r.since.to_string(), r.until.map(|u| u.to_string()))).collect();
    let want: Vec<(&str, String, Option<String>)> = want.iter().map(|(n, s, u)| (*n, s.to_string(), u.map(str::to_string))).collect();
    assert_eq!(got, want);
    // And each switch is off the release before, on from `since`, off after `until`.
    let mut t = Table::default();
    for r in RULES {
        let at = |minor: u32| Rules::for_version(KubeVersion::new(1, minor)).switches().into_iter().find(|(n, _)| *n == r.name).unwrap().1;
        if r.since.minor > 20 {
            t.row(&format!("{} before {}", r.name, r.since), format!("{}", at(r.since.minor - 1)), "false");
        }
        t.row(&format!("{} at {}", r.name, r.since), format!("{}", at(r.since.minor)), "true");
        if let Some(u) = r.until {
            t.row(&format!("{} at {u}", r.name), format!("{}", at(u.minor)), "true");
            t.row(&format!("{} after {u}", r.name), format!("{}", at(u.minor + 1)), "false");
        }
    }
    t.done();
}

#[test]
fn must_specify_names_containers_from_1_24() {
    // k/k#107210: before 1.24 the constraint error is the bare sorted list.
    let state = quota("q", "", "limits.cpu=4/0 requests.memory=4Gi/0");
    let p = pod("p").app("app", "requests: {cpu: 1}").init("init", "").yaml();
    let mut t = Table::default();
    for (version, want) in [
        ("1.20", "failed quota: q: must specify limits.cpu,requests.memory"),
        ("1.23", "failed quota: q: must specify limits.cpu,requests.memory"),
        ("1.24", "failed quota: q: must specify limits.cpu for: app,init; requests.memory for: app,init"),
        ("1.36", "failed quota: q: must specify limits.cpu for: app,init; requests.memory for: app,init"),
    ] {
        t.row(version, summary(&one_as(version, &state, &p)), want);
    }
    t.done();
}

#[test]
fn sidecars_are_plain_init_containers_before_1_29() {
    // KEP-753: alpha in 1.28 (off by default), beta on by default in 1.29. With the gate off
    // the field is dropped: the sidecar runs before the app, not beside it.
    let state = quota("q", "", "requests.cpu=10/0");
    let p = pod("p").app("app", "requests: {cpu: 500m}").sidecar("proxy", "requests: {cpu: 300m}").yaml();
    let mut t = Table::default();
    for (version, want) in [("1.27", "allowed: requests.cpu=500m"), ("1.28", "allowed: requests.cpu=500m"), ("1.29", "allowed: requests.cpu=800m")] {
        t.row(version, charged(&one_as(version, &state, &p), &["requests.cpu"]), want);
    }
    t.done();
}

#[test]
fn pod_level_resources_from_1_34() {
    // KEP-2837: beta on by default in 1.34; before, spec.resources is dropped on create.
    let state = quota("q", "", "requests.cpu=10/0 limits.cpu=10/0");
    let p = pod("p").app("app", "requests: {cpu: 500m}, limits: {cpu: 1}").with("resources: {requests: {cpu: 2}, limits: {cpu: 3}}").yaml();
    let mut t = Table::default();
    for (version, want) in [("1.33", "allowed: limits.cpu=1,requests.cpu=500m"), ("1.34", "allowed: limits.cpu=3,requests.cpu=2")] {
        t.row(version, charged(&one_as(version, &state, &p), &["requests.cpu", "limits.cpu"]), want);
    }
    t.done();
}

#[test]
fn pod_level_resources_lift_must_specify_only_where_they_exist() {
    let state = quota("q", "", "limits.cpu=10/0");
    let p = pod("p").app("app", "").with("resources: {limits: {cpu: 2}}").yaml();
    let mut t = Table::default();
    t.row("1.33: dropped, the container lacks limits.cpu", summary(&one_as("1.33", &state, &p)), "failed quota: q: must specify limits.cpu for: app");
    t.row("1.34: pod-level limits satisfy quota", summary(&one_as("1.34", &state, &p)), OK);
    t.done();
}

#[test]
fn removed_api_versions_are_refused_as_kubectl_does() {
    let cron = |api: &str| {
        format!("apiVersion: {api}\nkind: CronJob\nmetadata: {{name: nightly}}\nspec: {{schedule: '0 0 * * *', jobTemplate: {{spec: {{template: {{spec: {{restartPolicy: Never, containers: [{{name: a, image: x}}]}}}}}}}}}}\n")
    };
    let state = quota("q", "", "count/cronjobs.batch=5/0");
    let mut t = Table::default();
    for (what, version, doc, want) in [
        ("batch/v1beta1 CronJob on 1.20", "1.20", cron("batch/v1beta1"), OK.to_string()),
        ("batch/v1beta1 CronJob on 1.24", "1.24", cron("batch/v1beta1"), OK.to_string()),
        ("batch/v1beta1 CronJob on 1.25", "1.25", cron("batch/v1beta1"), "no matches for kind \"CronJob\" in version \"batch/v1beta1\"".to_string()),
        ("batch/v1 CronJob on 1.20", "1.20", cron("batch/v1"), "no matches for kind \"CronJob\" in version \"batch/v1\"".to_string()),
        ("batch/v1 CronJob on 1.21", "1.21", cron("batch/v1"), OK.to_string()),
        (
            "extensions/v1beta1 Deployment (removed in 1.16)",
            "1.20",
            "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: a, image: x}]}}}\n"
                .to_string(),
            "no matches for kind \"Deployment\" in version \"extensions/v1beta1\"".to_string(),
        ),
        (
            "apps/v1beta2 StatefulSet (removed in 1.16)",
            "1.36",
            "apiVersion: apps/v1beta2\nkind: StatefulSet\nmetadata: {name: s}\nspec: {template: {spec: {containers: [{name: a, image: x}]}}}\n".to_string(),
            "no matches for kind \"StatefulSet\" in version \"apps/v1beta2\"".to_string(),
        ),
        (
            "policy/v1beta1 PDB on 1.25",
            "1.25",
            object("policy/v1beta1", "PodDisruptionBudget", "pdb", ""),
            "no matches for kind \"PodDisruptionBudget\" in version \"policy/v1beta1\"".to_string(),
        ),
        (
            "networking.k8s.io/v1beta1 Ingress on 1.22",
            "1.22",
            object("networking.k8s.io/v1beta1", "Ingress", "i", ""),
            "no matches for kind \"Ingress\" in version \"networking.k8s.io/v1beta1\"".to_string(),
        ),
    ] {
        let d = one_as(version, &state, &doc);
        let got = if d.allowed { OK.to_string() } else { d.message.clone().unwrap_or_default() };
        t.row(what, got, want);
    }
    t.done();
}

#[test]
fn older_api_versions_are_charged_like_their_current_version() {
    // Quota counts the request's group and resource: batch/v1beta1 CronJobs are
    // count/cronjobs.batch, policy/v1beta1 PDBs count/poddisruptionbudgets.policy.
    let state = quota("q", "", "count/cronjobs.batch=1/1 count/poddisruptionbudgets.policy=1/1");
    let cron = "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: nightly}\nspec: {schedule: '0 0 * * *', jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: a, image: x}]}}}}}\n";
    let mut t = Table::default();
    let d = one_as("1.24", &state, cron);
    t.row("CronJob batch/v1beta1", summary(&d), exceeded("q", "count/cronjobs.batch", "1", "1", "1"));
    t.row(
        "the note says which releases serve it",
        d.notes.iter().find(|n| n.contains("served")).cloned().unwrap_or_default(),
        "batch/v1beta1 CronJob is served by Kubernetes 1.8 to 1.24; charged like batch/v1 (same group and resource)",
    );
    t.row(
        "PodDisruptionBudget policy/v1beta1",
        summary(&one_as("1.24", &state, &object("policy/v1beta1", "PodDisruptionBudget", "pdb", ""))),
        exceeded("q", "count/poddisruptionbudgets.policy", "1", "1", "1"),
    );
    t.done();
}

#[test]
fn resource_claims_are_served_and_charged_from_1_34() {
    let state = quota("q", "", "count/resourceclaims.resource.k8s.io=5/0 gpu.deviceclass.resource.k8s.io/devices=8/0");
    let c = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu, count: 2}}]}}\n";
    let mut t = Table::default();
    t.row("1.33 serves no resource.k8s.io/v1", summary(&one_as("1.33", &state, c)), "no matches for kind \"ResourceClaim\" in version \"resource.k8s.io/v1\"");
    t.row(
        "1.34 charges the claim and its devices",
        charged_where(&one_as("1.34", &state, c), |_| true),
        "allowed: count/resourceclaims.resource.k8s.io=1,gpu.deviceclass.resource.k8s.io/devices=2",
    );
    t.done();
}

#[test]
fn scopes_a_release_lacks_are_refused_by_quota_validation() {
    let mut t = Table::default();
    let cross = unsynced_quota("q", "scopes: [CrossNamespacePodAffinity]", "pods=2");
    let vac = unsynced_quota("q", &sel("VolumeAttributesClass", "In", &["gold"]), "requests.storage=1Gi");
    t.row(
        "CrossNamespacePodAffinity on 1.20",
        summary(&one_as("1.20", "", &cross)),
        "ResourceQuota \"q\" is invalid: spec.scopes[0]: Unsupported value: \"CrossNamespacePodAffinity\": supported values: \"BestEffort\", \"NotBestEffort\", \"NotTerminating\", \"PriorityClass\", \"Terminating\"",
    );
    t.row("CrossNamespacePodAffinity on 1.21", summary(&one_as("1.21", "", &cross)), OK);
    t.row(
        "VolumeAttributesClass on 1.33",
        summary(&one_as("1.33", "", &vac)),
        "ResourceQuota \"q\" is invalid: spec.scopeSelector.matchExpressions[0].scopeName: Unsupported value: \"VolumeAttributesClass\": supported values: \"BestEffort\", \"CrossNamespacePodAffinity\", \"NotBestEffort\", \"NotTerminating\", \"PriorityClass\", \"Terminating\"",
    );
    t.row("VolumeAttributesClass on 1.34", summary(&one_as("1.34", "", &vac)), OK);
    t.done();
}

#[test]
fn quota_request_above_limit_warns_from_1_35() {
    // k/k#134389.
    let q = unsynced_quota("q", "", "requests.cpu=4 limits.cpu=2");
    let warned = |version: &str| one_as(version, "", &q).notes.iter().filter(|n| n.starts_with("Warning:")).cloned().collect::<Vec<_>>().join("; ");
    let mut t = Table::default();
    t.row("1.34", warned("1.34"), "");
    t.row("1.35", warned("1.35"), "Warning: ResourceQuota requests.cpu (4) should be less than limits.cpu (2)");
    t.done();
}

#[test]
fn versions_parse_as_providers_print_them() {
    let mut t = Table::default();
    for (s, want) in [("1.33", "1.33"), ("v1.33.2", "1.33"), ("1.33+", "1.33"), ("v1.29.8-eks-a737599", "1.29"), ("v1.30.5-gke.1014001", "1.30")] {
        t.row(s, v(s).to_string(), want);
    }
    t.done();
}

#[test]
fn readme_lists_every_version_rule() {
    // docs/fidelity.md (README's "what check emulates", per release) carries the table of
    // version.rs; UPDATE_README=1 rewrites it.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/fidelity.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = ("<!-- version rules: generated from engine/src/version.rs -->\n", "<!-- end of version rules -->");
    let start = readme.find(begin).expect("README lacks the version rules marker") + begin.len();
    let stop = start + readme[start..].find(end).expect("README lacks the end marker");
    let table = kubectl_quota_engine::version::markdown_table();
    if std::env::var("UPDATE_README").is_ok() {
        std::fs::write(&path, format!("{}{table}{}", &readme[..start], &readme[stop..])).unwrap();
        return;
    }
    assert_eq!(&readme[start..stop], table, "README's version table is stale: UPDATE_README=1 cargo test -p kubectl-quota-engine --test versions");
}

// Kubernetes 1.38, read from v1.38.0-beta.0's code (docs/kubernetes-1.38.md): each rule
// against 1.37. The cases are those of the probes run through upstream's own code at both
// releases (tests/oracle, --release 1.37 and 1.38), and of 1.38's new upstream unit tests.

/// 1.37 and 1.38's answers for one input.
fn at_37_and_38(t: &mut Table, what: &str, state: &str, input: &str, show: impl Fn(&DocumentReport) -> String, want: [&str; 2]) {
    for (version, want) in ["1.37", "1.38"].into_iter().zip(want) {
        t.row(&format!("{what} ({version})"), show(&one_as(version, state, input)), want);
    }
}

#[test]
fn pod_limits_count_cpu_and_memory_only_when_every_container_sets_them_from_1_38() {
    // component-helpers 0.38 `omitPartiallySetCPUMemLimits`: a container without a cpu (or
    // memory) limit, or with a zero one, takes that resource out of the pod's limits.
    let mut t = Table::default();
    let q = quota("q", "", "limits.cpu=1/0 limits.memory=10Gi/0");
    let zero = pod("p").app("a", "limits: {cpu: 2, memory: 1Gi}").app("b", "limits: {cpu: '0', memory: 1Gi}").yaml();
    at_37_and_38(
        &mut t,
        "a zero cpu limit beside a limit of 2",
        &q,
        &zero,
        |d| charged(d, &["limits.cpu", "limits.memory"]),
        [&exceeded("q", "limits.cpu", "2", "0", "1"), "allowed: limits.memory=2Gi"],
    );
    // Other resources still add up, a missing limit counting as zero.
    let eph = quota("q", "", "limits.ephemeral-storage=10Gi/0");
    let partial = pod("p").app("a", "limits: {cpu: 2, memory: 1Gi, ephemeral-storage: 1Gi}").app("b", "requests: {cpu: 100m}").yaml();
    at_37_and_38(
        &mut t,
        "partial limits",
        &eph,
        &partial,
        |d| usage(d, &["limits.cpu", "limits.memory", "limits.ephemeral-storage"]),
        ["limits.cpu=2,limits.ephemeral-storage=1Gi,limits.memory=1Gi", "limits.ephemeral-storage=1Gi"],
    );
    // A sidecar without limits takes them out as well; pod-level limits still count.
    let sidecar = pod("p").sidecar("proxy", "requests: {cpu: 100m}").app("app", "limits: {cpu: 1}").yaml();
    at_37_and_38(&mut t, "a sidecar without limits", &eph, &sidecar, |d| usage(d, &["limits.cpu"]), ["limits.cpu=1", ""]);
    let pod_level = pod("p").app("a", "limits: {cpu: 1}").app("b", "requests: {cpu: 100m}").with("resources: {limits: {cpu: 4}}").yaml();
    at_37_and_38(&mut t, "a pod-level limit", &eph, &pod_level, |d| usage(d, &["limits.cpu"]), ["limits.cpu=4", "limits.cpu=4"]);
    // Pod-level limit defaulting reads the same aggregate: with a zero container limit, no
    // pod-level limit is defaulted from it.
    let defaulted = pod("p").app("a", "requests: {cpu: 500m}, limits: {cpu: 2}").app("b", "limits: {cpu: '0'}").with("resources: {requests: {cpu: 1}}").yaml();
    at_37_and_38(&mut t, "pod-level limit defaulting", &eph, &defaulted, |d| usage(d, &["limits.cpu"]), ["limits.cpu=2", ""]);
    t.done();
}

#[test]
fn the_pod_level_overhead_is_charged_once_from_1_38() {
    // 1.37's `PodRequests` adds the overhead in place into a pod-level value Go holds as an
    // exact decimal (4.5Gi); the pod-level limit defaulted from that request is the same value,
    // so both get it twice. 1.38's Quantity is a value: once.
    let mut t = Table::default();
    let state = cluster(&[quota("q", "", "requests.memory=100Gi/0 limits.memory=100Gi/0")]);
    let p = pod("p")
        .app("a", "requests: {memory: 1Gi}, limits: {memory: 2Gi}")
        .with("runtimeClassName: kata")
        .with("resources: {requests: {memory: 4.5Gi}}")
        .yaml();
    at_37_and_38(
        &mut t,
        "4.5Gi with 120Mi of overhead",
        &state,
        &p,
        |d| usage(d, &["requests.memory", "limits.memory"]),
        ["limits.memory=4848Mi,requests.memory=4848Mi", "limits.memory=4728Mi,requests.memory=4728Mi"],
    );
    t.done();
}

#[test]
fn limit_ranger_compares_exactly_from_1_38() {
    // 1.37 compares in milli-units, or in whole units past MaxMilliValue (about 9.2e15), so a
    // limit half a byte above a max that large passed.
    let mut t = Table::default();
    let max = limit_range("{type: Container, max: {memory: '10000000000000000.5'}}");
    let p = pod("p").app("a", "limits: {memory: '10000000000000001'}").yaml();
    at_37_and_38(
        &mut t,
        "a limit just above a max past MaxMilliValue",
        &max,
        &p,
        summary,
        ["allowed", "maximum memory usage per Container is 10000000000000000500m, but limit is 10000000000000001"],
    );
    let pvc_max = limit_range("{type: PersistentVolumeClaim, max: {storage: '10000000000000000.5'}}");
    at_37_and_38(
        &mut t,
        "a claim just above such a max",
        &pvc_max,
        &claim("'10000000000000001'", "", None),
        summary,
        ["allowed", "maximum storage usage per PersistentVolumeClaim is 10000000000000000500m, but request is 10000000000000001"],
    );
    // The ratio, as `limit > request × ratio`; ordinary values answer as before.
    let ratio = limit_range("{type: Container, maxLimitRequestRatio: {cpu: 2}}");
    let p = pod("p").app("a", "requests: {cpu: 300m}, limits: {cpu: 1}").yaml();
    let want = "cpu max limit to request ratio per Container is 2, but provided ratio is 3.333333";
    at_37_and_38(&mut t, "a ratio of 3.33", &ratio, &p, summary, [want, want]);
    t.done();
}

#[test]
fn limit_ranger_ratio_is_exact_at_the_int64_edge_from_1_38() {
    // TestLimitRangerRatioIsExact (plugin/pkg/admission/limitranger, 1.38): (request, limit,
    // ratio, refused). Memory, as bytes: no milli rounding gets in the way.
    let mut t = Table::default();
    for (req, lim, ratio, refused) in [
        ("100", "200", "2", false),
        ("100", "300", "2", true),
        ("1", "9223372036854775809", "2", true),
        ("9223372036854775808", "9223372036854775808", "1", false),
        ("18446744073709551616", "18446744073709551616", "1", false),
        ("9223372036854775808", "18446744073709551616", "2", false),
        ("9223372036854775808", "27670116110564327424", "2", true),
        ("9007199254740992", "18014398509481983", "2", false),
        ("9007199254740992", "18014398509481984", "2", false),
        ("9007199254740992", "18014398509481985", "2", true),
    ] {
        let state = limit_range(&format!("{{type: Container, maxLimitRequestRatio: {{memory: '{ratio}'}}}}"));
        let p = pod("p").app("a", &format!("requests: {{memory: '{req}'}}, limits: {{memory: '{lim}'}}")).yaml();
        let d = one_as("1.38", &state, &p);
        t.row(&format!("{req} {lim} {ratio}"), format!("{}", !d.allowed), format!("{refused}"));
    }
    t.done();
}

#[test]
fn a_resize_is_checked_by_limit_ranger_only_in_what_it_changes_from_1_38() {
    // TestLimitRangerValidatePodResize (1.38): a value the stored pod already holds is not
    // checked again; a changed one is, as on create.
    let running = |containers: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: ns}}\nspec: {{containers: [{containers}]}}\nstatus: {{phase: Running}}\n")
    };
    let resized = |containers: &str| format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {{containers: [{containers}]}}\n");
    let c = |name: &str, req: &str, lim: &str| format!("{{name: {name}, image: x, resources: {{requests: {{cpu: '{req}'}}, limits: {{cpu: '{lim}'}}}}}}");
    let max = "{type: Container, max: {cpu: 1}}";
    let mut t = Table::default();
    let rows = [
        (
            "an unchanged container above the max",
            max,
            vec![c("a", "2", "2"), c("b", "500m", "500m")],
            vec![c("a", "2", "2"), c("b", "800m", "800m")],
            ["maximum cpu usage per Container is 1, but limit is 2", "allowed"],
        ),
        (
            "a resized container above the max",
            max,
            vec![c("a", "500m", "500m")],
            vec![c("a", "2", "2")],
            ["maximum cpu usage per Container is 1, but limit is 2", "maximum cpu usage per Container is 1, but limit is 2"],
        ),
        (
            "a pod total the resize leaves unchanged",
            "{type: Pod, max: {cpu: 2}}",
            vec![c("a", "2", "2"), c("b", "1", "1")],
            vec![c("a", "1", "1"), c("b", "2", "2")],
            ["maximum cpu usage per Pod is 2, but limit is 3", "allowed"],
        ),
        (
            "a limit-to-request ratio kept as it was",
            "{type: Container, maxLimitRequestRatio: {cpu: 2}}",
            vec![c("a", "100m", "1"), c("b", "500m", "500m")],
            vec![c("a", "100m", "1"), c("b", "600m", "600m")],
            ["cpu max limit to request ratio per Container is 2, but provided ratio is 10.000000", "allowed"],
        ),
    ];
    for (what, item, before, after, want) in rows {
        let state = docs(&[limit_range(item), running(&before.join(", "))]);
        at_37_and_38(&mut t, what, &state, &resized(&after.join(", ")), |d| if d.allowed { "allowed".into() } else { summary(d) }, want);
    }
    t.done();
}

#[test]
fn a_claim_update_keeping_its_stored_request_is_not_checked_again_from_1_38() {
    // TestLimitRangerValidatePersistentVolumeClaimUpdate (1.38).
    let range = limit_range("{type: PersistentVolumeClaim, min: {storage: 1Gi}, max: {storage: 10Gi}}");
    let stored = |size: &str| {
        format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: c, namespace: ns}}\nspec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {size}}}}}}}\nstatus: {{phase: Bound}}\n")
    };
    let mut t = Table::default();
    for (what, before, after, want) in [
        (
            "a stored request above the max, kept",
            "100Gi",
            "100Gi",
            ["maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 100Gi", "allowed"],
        ),
        // Printed as Go prints a quantity: 20480Mi is 20Gi.
        (
            "the same request spelled differently",
            "20Gi",
            "20480Mi",
            ["maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi", "allowed"],
        ),
        ("a stored request below the min, kept", "500Mi", "500Mi", ["minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi", "allowed"]),
        (
            "a request moved to another value above the max",
            "100Gi",
            "200Gi",
            [
                "maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 200Gi",
                "maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 200Gi",
            ],
        ),
    ] {
        let state = docs(&[range.clone(), stored(before)]);
        at_37_and_38(&mut t, what, &state, &claim(after, "", None), |d| if d.allowed { "allowed".into() } else { summary(d) }, want);
    }
    t.done();
}

#[test]
fn integer_resources_are_whole_at_any_size_from_1_38() {
    // `isIntegerResourceValue` (1.38): whole after the milli round-up, at any size; 1.37 read
    // the 64-bit milli value (the engine saturates it where the server wrapped).
    let mut t = Table::default();
    for (value, want) in [
        ("10P", ["spec.hard[pods]: Invalid value: \"10P\": must be an integer", ""]),
        ("9223372036854776", ["spec.hard[pods]: Invalid value: \"9223372036854776\": must be an integer", ""]),
        ("1.9999", ["", ""]),
        ("1.5", ["spec.hard[pods]: Invalid value: \"1500m\": must be an integer"; 2]),
        // 1.37.2 accepts it (its milli value wraps to 0); the engine saturates instead, a gap
        // kept for 1.37 (docs/kubernetes-1.38.md §5), so only 1.38 is pinned here.
        ("18446744073709551616m", ["-", "spec.hard[pods]: Invalid value: \"18446744073709551616m\": must be an integer"]),
    ] {
        let q = format!("apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: q}}\nspec: {{hard: {{pods: '{value}'}}}}\n");
        for (version, want) in ["1.37", "1.38"].into_iter().zip(want).filter(|(_, want)| *want != "-") {
            let d = one_as(version, "", &q);
            let got = d.message.as_deref().map(|m| m.split(" is invalid: ").nth(1).unwrap_or(m).to_string()).unwrap_or_default();
            t.row(&format!("{value} ({version})"), got, want);
        }
    }
    t.done();
}

#[test]
fn an_empty_runtime_class_name_reaches_validation_from_1_38() {
    let mut t = Table::default();
    let p = pod("p").app("a", "requests: {cpu: 1}").with("runtimeClassName: ''").yaml();
    at_37_and_38(&mut t, "runtimeClassName ''", &cluster::<&str>(&[]), &p, summary, [
        "pod rejected: RuntimeClass \"\" not found",
        "Pod \"p\" is invalid: spec.runtimeClassName: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]);
    t.done();
}
