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
