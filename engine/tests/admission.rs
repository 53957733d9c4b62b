//! Rule tables, step `admission`: One object against the quotas: quota status (§5), limitedResources, several quotas (§2.4), invalid quotas.
//!
//! One test per behaviour; each row is (what, input, expected). Expected values come from the
//! quota semantics in `docs/semantics.md` (cited as §n) or from the upstream source named in a
//! comment, never from what the tool prints. How state and input are written: `support/mod.rs`.

mod support;

use support::*;

#[test]
fn quota_status_decides_enforcement() {
    // §5 "Status.Hard vs Spec.Hard": admission reads status only; a quota without status
    // matches nothing; a restricted hard key without a used value is `status unknown`, listing
    // every restricted resource of the quota (§2.2, prettyPrintResourceNames).
    let rows = [
        ("a quota without status lets everything through", unsynced_quota("q", "", "pods=0"), pod("p"), OK.to_string(), QuotaVerdict::NotEnforced),
        (
            "a hard key without used",
            quota("q", "", "pods=10/0 requests.cpu=4"),
            pod("p").app("a", "requests: {cpu: 1}"),
            "status unknown for quota: q, resources: pods,requests.cpu".into(),
            QuotaVerdict::StatusUnknown,
        ),
        (
            "status unknown whatever the pod requests",
            quota("q", "", "requests.ephemeral-storage=10Gi"),
            pod("p"),
            "status unknown for quota: q, resources: requests.ephemeral-storage".into(),
            QuotaVerdict::StatusUnknown,
        ),
        ("a missing used value for another kind does not matter", quota("q", "", "pods=10/0 configmaps=5"), pod("p"), OK.into(), QuotaVerdict::Fits),
        ("a scoped quota that does not select the pod", quota("q", "scopes: [Terminating]", "pods=10"), pod("p"), OK.into(), QuotaVerdict::NotApplicable),
    ];
    let mut t = Table::default();
    for (what, state, p, want, want_verdict) in rows {
        let d = check_one(&state, &p.yaml());
        t.row(what, format!("{} [{:?}]", summary(&d), verdict(&d, "q")), format!("{want} [{:?}]", Some(want_verdict)));
    }
    t.done();
}

#[test]
fn zero_usage_is_allowed_without_charge() {
    // §5 step f/h: zero entries are dropped; a quota whose keys are all zero for the object is
    // not exceeded and not charged.
    let cpu0 = |name: &str| pod(name).app("a", "requests: {cpu: '0'}").yaml();
    let rows = [
        (
            "a full quota lets zero requests through, uncharged",
            quota("q", "", "requests.cpu=1/1"),
            docs(&[cpu0("a"), cpu0("b"), pod("c").app("a", "requests: {cpu: 1m}").yaml()]),
            vec![OK.to_string(), OK.into(), exceeded("q", "requests.cpu", "1m", "1", "1")],
        ),
        ("a zero hard value admits zero usage", quota("q", "", "requests.cpu=0/0"), cpu0("a"), vec![OK.into()]),
        (
            "a ClusterIP service under a full node-port quota",
            quota("q", "", "services.nodeports=0/0 services.loadbalancers=0/0"),
            service("ports: [{port: 80}]"),
            vec![OK.into()],
        ),
    ];
    let mut t = Table::default();
    for (what, state, input, want) in rows {
        let got: Vec<String> = check_all(&state, &input).iter().map(summary).collect();
        t.row(what, got.join(" | "), want.join(" | "));
    }
    t.done();
}

#[test]
fn limited_resources_match_contains() {
    // §5 step b/g: consumed names (> 0) containing a matchContains string must be among the
    // resources of a quota that applies; else `insufficient quota to consume: a,b` (sorted).
    let gpu_limited = limited(&["{resource: pods, matchContains: [nvidia.com/gpu]}"]);
    let gpu_pod = pod("p").app("a", "limits: {nvidia.com/gpu: 1}");
    let gold = claim("1Gi", "storageClassName: gold", None);
    let gold_limited = limited(&["{resource: persistentvolumeclaims, matchContains: [gold.storageclass.storage.k8s.io/requests.storage]}"]);
    let consume = |names: &str| format!("insufficient quota to consume: {names}");
    let rows = [
        ("an uncovered GPU", gpu_limited.clone(), String::new(), gpu_pod.yaml(), consume("requests.nvidia.com/gpu")),
        ("a quota covers it", gpu_limited.clone(), quota("q", "", "requests.nvidia.com/gpu=4/0"), gpu_pod.yaml(), OK.into()),
        ("a pod that does not consume it", gpu_limited.clone(), String::new(), pod("p").yaml(), OK.into()),
        (
            "a covering quota that does not select the pod",
            gpu_limited.clone(),
            quota("q", &sel("PriorityClass", "In", &["high"]), "requests.nvidia.com/gpu=4/0"),
            gpu_pod.yaml(),
            consume("requests.nvidia.com/gpu"),
        ),
        (
            "a covering quota not synced yet",
            gpu_limited.clone(),
            unsynced_quota("q", "", "requests.nvidia.com/gpu=4"),
            gpu_pod.yaml(),
            consume("requests.nvidia.com/gpu"),
        ),
        (
            "the bare name is limited too: a quota on requests.cpu does not cover cpu",
            limited(&["{resource: pods, matchContains: [cpu]}"]),
            quota("q", "", "requests.cpu=4/0"),
            pod("p").app("a", "requests: {cpu: 1}").yaml(),
            consume("cpu"),
        ),
        (
            "every matching name, sorted",
            limited(&["{resource: pods, matchContains: [cpu]}"]),
            String::new(),
            pod("p").app("a", "limits: {cpu: 1}").yaml(),
            consume("cpu,limits.cpu,requests.cpu"),
        ),
        ("a storage class on claims", gold_limited.clone(), String::new(), gold.clone(), consume("gold.storageclass.storage.k8s.io/requests.storage")),
        ("another storage class", gold_limited, String::new(), claim("1Gi", "storageClassName: bronze", None), OK.into()),
        (
            "a substring matches several names",
            limited(&["{resource: persistentvolumeclaims, matchContains: [storage]}"]),
            String::new(),
            gold.clone(),
            consume("gold.storageclass.storage.k8s.io/persistentvolumeclaims,gold.storageclass.storage.k8s.io/requests.storage,requests.storage"),
        ),
        (
            "a quota covers some of them",
            limited(&["{resource: persistentvolumeclaims, matchContains: [storage]}"]),
            quota("q", "", "requests.storage=100Gi/0"),
            gold,
            consume("gold.storageclass.storage.k8s.io/persistentvolumeclaims,gold.storageclass.storage.k8s.io/requests.storage"),
        ),
        (
            "an entry for another resource",
            limited(&["{resource: persistentvolumeclaims, matchContains: [nvidia.com/gpu]}"]),
            String::new(),
            gpu_pod.yaml(),
            OK.into(),
        ),
        (
            "an entry for another API group",
            limited(&["{apiGroup: apps, resource: pods, matchContains: [nvidia.com/gpu]}"]),
            String::new(),
            gpu_pod.yaml(),
            OK.into(),
        ),
    ];
    let mut t = Table::default();
    for (what, admission, state, yaml, want) in &rows {
        let d = only(check_with(&cluster(&[state]), yaml, Some(admission), None));
        t.row(what, summary(&d), want);
    }
    // A 403 naming the pod.
    let d = only(check_with(&docs(&[CLUSTER]), &gpu_pod.yaml(), Some(&gpu_limited), None));
    t.row("the whole server error", d.server_error.unwrap_or_default(), "pods \"p\" is forbidden: insufficient quota to consume: requests.nvidia.com/gpu");
    t.done();
}

#[test]
fn limited_resources_match_scopes() {
    // §3.2 / §5 step a, g: an object matching a limited scope needs some quota with a selector
    // of the same scope NAME that the object satisfies (operator and values ignored, the
    // quota's status and resources too); else `insufficient quota to match these scopes: %v`
    // (Go format), a plain error. The limited scopes of EVERY entry apply, whatever its
    // resource (controller.go getMatchedLimitedScopes); a claim never matches PriorityClass.
    let critical = limited(&["{resource: pods, matchScopes: [{scopeName: PriorityClass, operator: In, values: [cluster-services]}]}"]);
    let refused = "insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]".to_string();
    let cs = pod("p").class("cluster-services").yaml();
    let rows = [
        ("no quota covers the scope", critical.clone(), String::new(), cs.clone(), refused.clone()),
        (
            "a quota with the same selector",
            critical.clone(),
            quota("q", &sel("PriorityClass", "In", &["cluster-services"]), "pods=10/0"),
            cs.clone(),
            OK.into(),
        ),
        ("another class", critical.clone(), String::new(), pod("p").class("high").yaml(), OK.into()),
        ("no class", critical.clone(), String::new(), pod("p").yaml(), OK.into()),
        ("covered by scope name only", critical.clone(), quota("q", &sel("PriorityClass", "NotIn", &["low"]), "pods=10/0"), cs.clone(), OK.into()),
        (
            "a quota whose selector the pod fails",
            critical.clone(),
            quota("q", &sel("PriorityClass", "In", &["high"]), "pods=10/0"),
            cs.clone(),
            refused.clone(),
        ),
        (
            "covered by a quota limiting nothing pods use",
            critical.clone(),
            quota("q", &sel("PriorityClass", "In", &["cluster-services"]), "count/configmaps=10/0"),
            cs.clone(),
            OK.into(),
        ),
        (
            "covered by a quota not synced yet",
            critical.clone(),
            unsynced_quota("q", &sel("PriorityClass", "In", &["cluster-services"]), "pods=10"),
            cs.clone(),
            OK.into(),
        ),
        (
            "an entry for claims limits pods too",
            limited(&["{resource: persistentvolumeclaims, matchScopes: [{scopeName: PriorityClass, operator: In, values: [cluster-services]}]}"]),
            String::new(),
            cs.clone(),
            refused.clone(),
        ),
        (
            "a claim never matches a PriorityClass scope",
            limited(&["{resource: persistentvolumeclaims, matchScopes: [{scopeName: PriorityClass, operator: In, values: [cluster-services]}]}"]),
            String::new(),
            claim("1Gi", "", None),
            OK.into(),
        ),
        (
            "several values print space-separated",
            limited(&["{resource: pods, matchScopes: [{scopeName: PriorityClass, operator: In, values: [cluster-services, high]}]}"]),
            String::new(),
            pod("p").class("high").yaml(),
            "insufficient quota to match these scopes: [{PriorityClass In [cluster-services high]}]".into(),
        ),
        (
            "Exists prints empty values",
            limited(&["{resource: pods, matchScopes: [{scopeName: PriorityClass, operator: Exists}]}"]),
            String::new(),
            pod("p").class("low").yaml(),
            "insufficient quota to match these scopes: [{PriorityClass Exists []}]".into(),
        ),
    ];
    let mut t = Table::default();
    for (what, admission, state, yaml, want) in &rows {
        let d = only(check_with(&cluster(&[state]), yaml, Some(admission), None));
        t.row(what, summary(&d), want);
    }
    // A plain error: the server returns the bare message (§2.2).
    let d = only(check_with(&docs(&[CLUSTER]), &cs, Some(&critical), None));
    t.row("not a 403", d.server_error.unwrap_or_default(), refused);
    t.done();
}

#[test]
fn invalid_resource_quota_is_refused_with_field_errors() {
    // §3.5 validation, before admission; messages as a v1.20.2 server printed them
    // (tests/conformance-validation 1019, 1013, 1015, 1020).
    let rows = [
        ("a negative value", "{hard: {count/pods: '-1'}}", "The ResourceQuota \"bad\" is invalid: spec.hard[count/pods]: Invalid value: \"-1\": must be greater than or equal to 0"),
        ("not a quota resource", "{hard: {storage: '3'}}", "The ResourceQuota \"bad\" is invalid: spec.hard[storage]: Invalid value: \"storage\": must be a standard resource for quota"),
        (
            "conflicting scopes",
            "{hard: {pods: '2'}, scopes: [Terminating, NotTerminating]}",
            "The ResourceQuota \"bad\" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{\"Terminating\", \"NotTerminating\"}: conflicting scopes",
        ),
        (
            "a scope that cannot limit the resource",
            "{hard: {cpu: '1'}, scopes: [BestEffort]}",
            "The ResourceQuota \"bad\" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\"}: unsupported scope applied to resource",
        ),
    ];
    let mut t = Table::default();
    for (what, spec, want) in rows {
        let d = only(check_version("1.20", "", &object("v1", "ResourceQuota", "bad", &format!("spec: {spec}\n"))));
        let forbidden = d.refusal.as_ref().map(|r| r.forbidden);
        t.row(what, format!("{} (403: {forbidden:?})", summary(&d)), format!("{want} (403: Some(false))"));
    }
    // From 1.34 a value that is neither a string nor a number is printed as JSON.
    let d = only(check_version("1.37", "", &object("v1", "ResourceQuota", "bad", "spec: {hard: {cpu: '1'}, scopes: [BestEffort]}\n")));
    t.row(
        "a list value on 1.34 and later",
        summary(&d),
        "The ResourceQuota \"bad\" is invalid: spec.scopes: Invalid value: [\"BestEffort\"]: unsupported scope applied to resource",
    );
    // A refused quota is neither created nor counted.
    let bad = object("v1", "ResourceQuota", "bad", "spec: {hard: {count/pods: '-1'}}\n");
    let allowed: Vec<bool> =
        check_all(&quota("q", "", "resourcequotas=1/0"), &docs(&[bad, unsynced_quota("good", "", "pods=1")])).iter().map(|d| d.allowed).collect();
    t.row("an invalid quota is not counted", format!("{allowed:?}"), "[false, true]");
    t.done();
}

#[test]
fn alternatives_list_the_other_quotas_that_refuse() {
    // The server reports the first refusing quota in its cache's order (undefined); the tool
    // answers in name order and lists the others. Constraint and status failures come from the
    // first loop over quotas, before any exceeded check, so an exceeded quota is never an
    // alternative to them.
    let must = |q: &str, r: &str| format!("failed quota: {q}: must specify {r} for: app");
    let rows = [
        ("both exceeded, first by name", vec![full_pods_quota("b", ""), full_pods_quota("a", "")], vec![full_pods("a"), full_pods("b")]),
        ("only one refuses", vec![full_pods_quota("a", ""), quota("b", "", "pods=10/0")], vec![full_pods("a")]),
        ("must specify beats exceeded", vec![full_pods_quota("a", ""), quota("b", "", "limits.cpu=4/0")], vec![must("b", "limits.cpu")]),
        (
            "two must specify",
            vec![quota("a", "", "limits.cpu=4/0"), quota("b", "", "limits.memory=4Gi/0")],
            vec![must("a", "limits.cpu"), must("b", "limits.memory")],
        ),
        (
            "status unknown beats exceeded",
            vec![full_pods_quota("a", ""), quota("b", "", "requests.ephemeral-storage=1Gi")],
            vec!["status unknown for quota: b, resources: requests.ephemeral-storage".into()],
        ),
    ];
    let mut t = Table::default();
    for (what, quotas, want) in rows {
        let d = check_one(&docs(&quotas), &pod("p").yaml());
        let mut got = vec![summary(&d)];
        got.extend(d.refusal.map(|r| r.alternatives).unwrap_or_default());
        t.row(what, got.join(" | or | "), want.join(" | or | "));
    }
    t.done();
}
