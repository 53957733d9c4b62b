//! Rule tables, Dynamic Resource Allocation (GA 1.34): the ResourceClaim evaluator, claims
//! created from ResourceClaimTemplates per pod (a workload's pods included), pods left Pending
//! when quota refuses their claims, and DRA extended resources on pods (1.36).
//!
//! Rules from docs/semantics.md §4.2 (ResourceClaims) and §1.1-§1.2 (DRA extended resources on
//! pods), after KEP-4381 (device quota), KEP-5018 (admin access) and KEP-5004 (extended
//! resources); the releases are those of `version.rs`, checked against the recorded servers.

mod support;

use support::*;

const DEVICES: &str = "gpu.deviceclass.resource.k8s.io/devices";

fn claim_doc(requests: &str) -> String {
    format!("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: c}}\nspec: {{devices: {{requests: [{requests}]}}}}\n")
}

fn template(name: &str, requests: &str) -> String {
    format!(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {{name: {name}}}\nspec: {{spec: {{devices: {{requests: [{requests}]}}}}}}\n"
    )
}

/// A pod template using one claim from the template `tmpl`.
fn gpu_pod(tmpl: &str) -> PodSpec {
    pod("p").app("app", "claims: [{name: gpu}]").with(&format!("resourceClaims: [{{name: gpu, resourceClaimTemplateName: {tmpl}}}]"))
}

fn claim_usage(version: &str, requests: &str) -> String {
    let state = quota(
        "q",
        "",
        "count/resourceclaims.resource.k8s.io=100/0 gpu.deviceclass.resource.k8s.io/devices=1000/0 fpga.deviceclass.resource.k8s.io/devices=1000/0",
    );
    charged_where(&only(check_version(version, &state, &claim_doc(requests))), |_| true)
}

#[test]
fn claim_devices_per_allocation_mode() {
    let mut t = Table::default();
    for (what, requests, want) in [
        ("ExactCount adds its count", "{name: r, exactly: {deviceClassName: gpu, allocationMode: ExactCount, count: 3}}", "count/resourceclaims.resource.k8s.io=1,gpu.deviceclass.resource.k8s.io/devices=3"),
        ("no count means 1", "{name: r, exactly: {deviceClassName: gpu}}", "count/resourceclaims.resource.k8s.io=1,gpu.deviceclass.resource.k8s.io/devices=1"),
        ("All counts 32 (the largest allocation result)", "{name: r, exactly: {deviceClassName: gpu, allocationMode: All}}", "count/resourceclaims.resource.k8s.io=1,gpu.deviceclass.resource.k8s.io/devices=32"),
        (
            "firstAvailable charges the largest alternative per class",
            "{name: r, firstAvailable: [{name: a, deviceClassName: gpu, count: 1}, {name: b, deviceClassName: gpu, count: 2}, {name: c, deviceClassName: fpga, count: 4}]}",
            "count/resourceclaims.resource.k8s.io=1,fpga.deviceclass.resource.k8s.io/devices=4,gpu.deviceclass.resource.k8s.io/devices=2",
        ),
        (
            "two requests of one class add up",
            "{name: a, exactly: {deviceClassName: gpu, count: 2}}, {name: b, exactly: {deviceClassName: gpu, count: 1}}",
            "count/resourceclaims.resource.k8s.io=1,gpu.deviceclass.resource.k8s.io/devices=3",
        ),
    ] {
        // 1.35: before claims are charged their classes' extended resource names too.
        t.row(what, claim_usage("1.35", requests), format!("{OK}: {want}"));
    }
    t.done();
}

#[test]
fn admin_access_is_charged_on_every_release_with_dra() {
    // The real 1.34.4 and 1.35.4 servers charge it (tests/recorded, case 2007), though KEP-5018
    // is GA only in 1.36.
    let admin = "{name: r, exactly: {deviceClassName: gpu, count: 2, adminAccess: true}}";
    let mut t = Table::default();
    t.row("1.34: admin access is charged", claim_usage("1.34", admin), format!("{OK}: count/resourceclaims.resource.k8s.io=1,{DEVICES}=2"));
    t.row("1.35: admin access is charged", claim_usage("1.35", admin), format!("{OK}: count/resourceclaims.resource.k8s.io=1,{DEVICES}=2"));
    t.done();
}

#[test]
fn claim_refused_by_a_device_class_quota() {
    let state = quota("gpu", "", &format!("{DEVICES}=4/3"));
    let d = only(check_version("1.34", &state, &claim_doc("{name: r, exactly: {deviceClassName: gpu, count: 2}}")));
    assert_eq!(summary(&d), exceeded("gpu", DEVICES, "2", "3", "4"));
}

#[test]
fn deployment_of_gpu_pods_with_a_claim_template_under_a_device_class_quota() {
    // The Deployment controller creates pods 1..5; the pods quota stops the fifth. The
    // resourceclaim controller creates one claim per pod from the template: the device-class
    // quota admits two, so pods 3 and 4 exist but stay Pending.
    let state = docs(&[quota("pods", "", "pods=4/0"), quota("gpu", "", &format!("{DEVICES}=2/0"))]);
    let input =
        docs(&[template("gpu-tmpl", "{name: r, exactly: {deviceClassName: gpu}}"), workload("Deployment", "train", "replicas: 5", &gpu_pod("gpu-tmpl"))]);
    let reports = check_version("1.34", &state, &input);
    let d = &reports[1];
    let mut t = Table::default();
    t.row("template admitted", summary(&reports[0]), OK);
    t.row("pods", summary(d), pods_stop(4, 5, exceeded("pods", "pods", "1", "4", "4")));
    t.row("pending", format!("{:?}", d.pods_pending), "Some(2)");
    t.row(
        "per-replica note",
        d.notes.iter().find(|n| n.contains("claims of")).cloned().unwrap_or_default(),
        format!("4 of 5 pods admitted; the claims of pods 3\u{2013}4 would be refused: {}; those pods stay Pending", exceeded("gpu", DEVICES, "1", "2", "2")),
    );
    t.row("not fully admitted", format!("{}", d.fully_admitted()), "false");
    t.done();
}

#[test]
fn many_replicas_with_claims_agree_with_the_small_case() {
    // The same shape at a size where identical replicas are counted, not replayed one by one:
    // 400 pods fit, the device-class quota admits the claims of the first 20.
    let state = docs(&[quota("pods", "", "pods=400/0"), quota("gpu", "", &format!("{DEVICES}=20/0"))]);
    let input =
        docs(&[template("gpu-tmpl", "{name: r, exactly: {deviceClassName: gpu}}"), workload("Deployment", "train", "replicas: 500", &gpu_pod("gpu-tmpl"))]);
    let reports = check_version("1.34", &state, &input);
    let d = &reports[1];
    let mut t = Table::default();
    t.row("pods", summary(d), pods_stop(400, 500, exceeded("pods", "pods", "1", "400", "400")));
    t.row("pending", format!("{:?}", d.pods_pending), "Some(380)");
    t.row(
        "per-replica note",
        d.notes.iter().find(|n| n.contains("claims of")).cloned().unwrap_or_default(),
        format!(
            "400 of 500 pods admitted; the claims of pods 21\u{2013}400 would be refused: {}; those pods stay Pending",
            exceeded("gpu", DEVICES, "1", "20", "20")
        ),
    );
    t.done();
}

#[test]
fn claims_from_templates_only_where_dra_is_on() {
    // Before 1.34 spec.resourceClaims is dropped with the DRA gate off: no claim is created.
    let state = docs(&[quota("gpu", "", &format!("{DEVICES}=1/0"))]);
    let input = |tmpl_api: &str| {
        docs(&[
            template("t", "{name: r, exactly: {deviceClassName: gpu}}").replace("resource.k8s.io/v1", tmpl_api),
            workload("Deployment", "train", "replicas: 3", &gpu_pod("t")),
        ])
    };
    let mut t = Table::default();
    let on = check_version("1.34", &state, &input("resource.k8s.io/v1"));
    t.row("1.34: claims of pods 2-3 refused", format!("{:?}", on[1].pods_pending), "Some(2)");
    let off = check_version("1.33", &state, &input("resource.k8s.io/v1beta2"));
    t.row("1.33: the template's API is off", summary(&off[0]), "no matches for kind \"ResourceClaimTemplate\" in version \"resource.k8s.io/v1beta2\"");
    t.row("1.33: pods created without claims", summary(&off[1]), pods_fit(3));
    t.row("1.33: nothing pending", format!("{:?}", off[1].pods_pending), "None");
    t.done();
}

#[test]
fn a_pod_whose_claim_is_refused_stays_pending() {
    let state = docs(&[quota("gpu", "", &format!("{DEVICES}=1/1"))]);
    let input = docs(&[template("t", "{name: r, exactly: {deviceClassName: gpu}}"), gpu_pod("t").yaml()]);
    let reports = check_version("1.36", &state, &input);
    let d = &reports[1];
    let mut t = Table::default();
    t.row("the pod is admitted", format!("{}", d.allowed), "true");
    t.row("its claim is not", d.pod_message.clone().unwrap_or_default(), exceeded("gpu", DEVICES, "1", "1", "1"));
    t.row("so the check fails", format!("{}", d.fully_admitted()), "false");
    t.done();
}

#[test]
fn an_unknown_template_is_noted() {
    let d = only(check_version("1.36", "", &gpu_pod("missing").yaml()));
    assert!(d.notes.iter().any(|n| n.contains("ResourceClaimTemplate \"missing\" is neither in the cluster")), "{:?}", d.notes);
}

#[test]
fn dra_extended_resources_are_charged_on_pods_from_1_35() {
    // KEP-5004: a container may ask for a device class by its implicit extended resource name.
    // The real 1.35.4 server charges it (tests/recorded/v1.35.4, cases 2016 and 2019).
    let state = quota("q", "", "requests.deviceclass.resource.kubernetes.io/gpu=4/0 pods=10/0");
    let p = pod("p").app("app", "requests: {deviceclass.resource.kubernetes.io/gpu: 1}, limits: {deviceclass.resource.kubernetes.io/gpu: 1}").yaml();
    let mut t = Table::default();
    t.row(
        "1.34: not a pod resource",
        charged(&only(check_version("1.34", &state, &p)), &["requests.deviceclass.resource.kubernetes.io/gpu", "pods"]),
        format!("{OK}: pods=1"),
    );
    t.row(
        "1.35: charged",
        charged(&only(check_version("1.35", &state, &p)), &["requests.deviceclass.resource.kubernetes.io/gpu", "pods"]),
        format!("{OK}: pods=1,requests.deviceclass.resource.kubernetes.io/gpu=1"),
    );
    t.done();
}
