//! Rule tables, step `scopes`: Which quotas select an object: scopes and scope selectors (§3).
//!
//! One test per behaviour; each row is (what, input, expected). Expected values come from the
//! quota semantics in `docs/semantics.md` (cited as §n) or from the upstream source named in a
//! comment, never from what the tool prints. How state and input are written: `support/mod.rs`.

mod support;

use support::*;

/// Rows of (what, extra state, quota spec, pod, selected): a selected pod meets the full quota.
fn scope_rows(rows: Vec<(&str, String, String, PodSpec, bool)>) {
    let mut t = Table::default();
    for (what, extra_state, spec, p, selected) in rows {
        let state = cluster(&[full_pods_quota("q", &spec), extra_state]);
        let want = if selected { full_pods("q") } else { OK.into() };
        t.row(what, summary(&check_one(&state, &p.yaml())), want);
    }
    t.done();
}

#[test]
fn terminating_and_best_effort_scopes() {
    // §3.2: Terminating = activeDeadlineSeconds set; §3.3: BestEffort = no cpu/memory request or
    // limit above zero on any container, init containers and sidecars included.
    let s = |scope: &str| format!("scopes: [{scope}]");
    let lr = limit_range("{type: Container, default: {cpu: 500m}}");
    let rows = vec![
        ("Terminating selects a pod with a deadline", String::new(), s("Terminating"), pod("p").with("activeDeadlineSeconds: 30"), true),
        ("Terminating skips a pod without one", String::new(), s("Terminating"), pod("p"), false),
        ("NotTerminating selects a pod without a deadline", String::new(), s("NotTerminating"), pod("p"), true),
        ("NotTerminating skips a pod with one", String::new(), s("NotTerminating"), pod("p").with("activeDeadlineSeconds: 30"), false),
        ("BestEffort selects a pod without resources", String::new(), s("BestEffort"), pod("p"), true),
        ("BestEffort skips a pod with a cpu request", String::new(), s("BestEffort"), pod("p").app("a", "requests: {cpu: 100m}"), false),
        ("an init container's request makes the pod Burstable", String::new(), s("BestEffort"), pod("p").init("i", "requests: {cpu: 100m}"), false),
        ("a sidecar's limit makes the pod Burstable", String::new(), s("BestEffort"), pod("p").sidecar("s", "limits: {memory: 64Mi}"), false),
        (
            "ephemeral-storage and extended resources leave it BestEffort",
            String::new(),
            s("BestEffort"),
            pod("p").app("a", "requests: {ephemeral-storage: 1Gi}, limits: {nvidia.com/gpu: 1}"),
            true,
        ),
        ("a zero request leaves it BestEffort", String::new(), s("BestEffort"), pod("p").app("a", "requests: {cpu: '0'}"), true),
        ("a LimitRange default makes it Burstable", lr.clone(), s("BestEffort"), pod("p"), false),
        ("pod-level resources decide the QoS class", String::new(), s("BestEffort"), pod("p").with("resources: {requests: {cpu: 1}}"), false),
        ("NotBestEffort selects a pod whose init container has a limit", String::new(), s("NotBestEffort"), pod("p").init("i", "limits: {memory: 64Mi}"), true),
        ("NotBestEffort skips a pod without resources", String::new(), s("NotBestEffort"), pod("p"), false),
    ];
    scope_rows(rows);
}

#[test]
fn priority_class_scope_selector_operators() {
    // §3.2: label-selector semantics on {PriorityClass: name}, an empty name being no label;
    // the Priority plugin fills an empty name from the global default class first (§0).
    let default = priority_class("standard", 500, true);
    let p = |class: &str| if class.is_empty() { pod("p") } else { pod("p").class(class) };
    let rows = vec![
        ("In selects a listed class", String::new(), sel("PriorityClass", "In", &["high"]), p("high"), true),
        ("In skips another class", String::new(), sel("PriorityClass", "In", &["high"]), p("low"), false),
        ("In skips an empty class", String::new(), sel("PriorityClass", "In", &["high"]), p(""), false),
        ("NotIn selects an empty class", String::new(), sel("PriorityClass", "NotIn", &["high"]), p(""), true),
        ("NotIn selects another class", String::new(), sel("PriorityClass", "NotIn", &["high"]), p("low"), true),
        ("NotIn skips a listed class", String::new(), sel("PriorityClass", "NotIn", &["high"]), p("high"), false),
        ("Exists skips an empty class", String::new(), sel("PriorityClass", "Exists", &[]), p(""), false),
        ("Exists selects any class", String::new(), sel("PriorityClass", "Exists", &[]), p("low"), true),
        ("DoesNotExist selects an empty class", String::new(), sel("PriorityClass", "DoesNotExist", &[]), p(""), true),
        ("DoesNotExist skips a class", String::new(), sel("PriorityClass", "DoesNotExist", &[]), p("low"), false),
        ("the global default fills an empty class: DoesNotExist", default.clone(), sel("PriorityClass", "DoesNotExist", &[]), p(""), false),
        ("the global default fills an empty class: In", default.clone(), sel("PriorityClass", "In", &["standard"]), p(""), true),
        ("the global default fills an empty class: NotIn", default.clone(), sel("PriorityClass", "NotIn", &["standard"]), p(""), false),
        ("the global default fills an empty class: Exists", default.clone(), sel("PriorityClass", "Exists", &[]), p(""), true),
        ("the global default does not replace a class", default, sel("PriorityClass", "In", &["standard"]), p("low"), false),
    ];
    scope_rows(rows);
}

#[test]
fn cross_namespace_pod_affinity_scope() {
    // §3.2: any pod (anti-)affinity term, required or preferred, with non-empty `namespaces`
    // or a non-nil `namespaceSelector` (even `{}`).
    let scope = "scopes: [CrossNamespacePodAffinity]".to_string();
    let term = |extra: &str| format!("{{topologyKey: zone, labelSelector: {{matchLabels: {{app: db}}}}{extra}}}");
    let affinity = |kind: &str, list: &str, term: String| pod("p").with(&format!("affinity: {{{kind}: {{{list}: [{term}]}}}}"));
    let required = "requiredDuringSchedulingIgnoredDuringExecution";
    let preferred = "preferredDuringSchedulingIgnoredDuringExecution";
    let rows = vec![
        ("a required affinity term naming namespaces", affinity("podAffinity", required, term(", namespaces: [other]")), true),
        (
            "a preferred anti-affinity term with namespaceSelector {}",
            affinity("podAntiAffinity", preferred, format!("{{weight: 1, podAffinityTerm: {}}}", term(", namespaceSelector: {}"))),
            true,
        ),
        ("a term in the pod's own namespace", affinity("podAffinity", required, term("")), false),
        ("an empty namespaces list", affinity("podAntiAffinity", required, term(", namespaces: []")), false),
        ("no affinity", pod("p"), false),
    ];
    scope_rows(rows.into_iter().map(|(w, p, s)| (w, String::new(), scope.clone(), p, s)).collect());
}

#[test]
fn volume_attributes_class_scope_selects_claims() {
    // §3.4: label-selector semantics on the claim's VolumeAttributesClass name; §3.1: no other
    // scope ever selects a claim.
    let vac = |name: &str| format!("volumeAttributesClassName: {name}");
    let rows = [
        ("In selects a listed class", sel("VolumeAttributesClass", "In", &["gold"]), vac("gold"), true),
        ("In skips another class", sel("VolumeAttributesClass", "In", &["gold"]), vac("silver"), false),
        ("In skips a claim without a class", sel("VolumeAttributesClass", "In", &["gold"]), String::new(), false),
        ("NotIn selects a claim without a class", sel("VolumeAttributesClass", "NotIn", &["gold"]), String::new(), true),
        ("DoesNotExist selects a claim without a class", sel("VolumeAttributesClass", "DoesNotExist", &[]), String::new(), true),
        ("Exists skips a claim without a class", sel("VolumeAttributesClass", "Exists", &[]), String::new(), false),
        ("Exists selects a claim with a class", sel("VolumeAttributesClass", "Exists", &[]), vac("gold"), true),
        ("a PriorityClass scope never selects a claim", sel("PriorityClass", "Exists", &[]), String::new(), false),
        ("a pod scope never selects a claim", "scopes: [NotBestEffort]".into(), String::new(), false),
    ];
    let mut t = Table::default();
    for (what, spec, claim_spec, selected) in rows {
        let state = cluster(&[quota("q", &spec, "persistentvolumeclaims=1/1")]);
        let want = if selected { exceeded("q", "persistentvolumeclaims", "1", "1", "1") } else { OK.into() };
        t.row(what, summary(&check_one(&state, &claim("1Gi", &claim_spec, None))), want);
    }
    t.done();
}

#[test]
fn scopes_and_scope_selector_are_intersected() {
    // §3.1: every scope and every selector expression must match.
    let both = format!("scopes: [NotTerminating], {}", sel("PriorityClass", "In", &["high"]));
    let two = "scopes: [BestEffort, NotTerminating]".to_string();
    let rows = vec![
        ("scope and selector both match", String::new(), both.clone(), pod("p").class("high"), true),
        ("the scope fails", String::new(), both.clone(), pod("p").class("high").with("activeDeadlineSeconds: 30"), false),
        ("the selector fails", String::new(), both, pod("p").class("low"), false),
        ("two scopes both match", String::new(), two.clone(), pod("p"), true),
        ("the second scope fails", String::new(), two.clone(), pod("p").with("activeDeadlineSeconds: 30"), false),
        ("the first scope fails", String::new(), two, pod("p").app("a", "requests: {cpu: 1}"), false),
    ];
    scope_rows(rows);
}

#[test]
fn scoped_quotas_never_select_services_configmaps_or_secrets() {
    // §3.1: evaluators without scope support never match a quota with any scope or selector.
    let hard = "services=1/1 configmaps=1/1 count/secrets=1/1";
    let objects = [
        ("service", service("ports: [{port: 80}]"), "services"),
        ("configmap", object("v1", "ConfigMap", "c", ""), "configmaps"),
        ("secret", object("v1", "Secret", "s", ""), "count/secrets"),
    ];
    let specs = [("no scope", String::new()), ("a scope", "scopes: [NotBestEffort]".to_string()), ("a selector", sel("PriorityClass", "Exists", &[]))];
    let mut t = Table::default();
    for (kind, yaml, key) in &objects {
        for (scoped, spec) in &specs {
            let want = if spec.is_empty() { exceeded("q", key, "1", "1", "1") } else { OK.into() };
            t.row(&format!("{kind} under a quota with {scoped}"), summary(&check_one(&quota("q", spec, hard), yaml)), want);
        }
    }
    t.done();
}
