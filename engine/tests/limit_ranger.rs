//! Rule table, LimitRanger's validation (step 3½): a LimitRange's min, max and
//! maxLimitRequestRatio refuse pods and claims before quota is asked, and a workload whose
//! template breaks them gets none of its pods. Each row: the LimitRange items, the document,
//! and the verdict (`allowed`, or the message after `is forbidden: `).

mod support;

use support::*;

#[test]
fn limit_ranges_refuse_what_breaks_them() {
    let p = |res: &str| pod("p").app("app", res).yaml();
    let two = |a: &str, b: &str| pod("p").app("a", a).app("b", b).yaml();
    let claim = |size: &str| {
        format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: c}}\nspec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {size}}}}}}}\n")
    };
    let rows: Vec<(&str, &str, String, &str)> = vec![
        (
            "container max: the limit",
            "{type: Container, max: {cpu: '1'}}",
            p("requests: {cpu: 500m}, limits: {cpu: '2'}"),
            "maximum cpu usage per Container is 1, but limit is 2",
        ),
        ("container max: within", "{type: Container, max: {cpu: '1'}}", p("requests: {cpu: 500m}, limits: {cpu: '1'}"), OK),
        (
            "container max: no limit at all (the max becomes the default limit, so only a request above it is refused)",
            "{type: Container, max: {cpu: '1'}}",
            p("requests: {cpu: '2'}"),
            "Pod \"p\" is invalid",
        ),
        (
            "container min: the request",
            "{type: Container, min: {memory: 64Mi}}",
            p("requests: {memory: 32Mi}, limits: {memory: 32Mi}"),
            "minimum memory usage per Container is 64Mi, but request is 32Mi",
        ),
        (
            "ratio: no limit",
            "{type: Container, maxLimitRequestRatio: {cpu: '2'}}",
            p("requests: {cpu: 100m}"),
            "cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0",
        ),
        (
            "ratio: above",
            "{type: Container, maxLimitRequestRatio: {cpu: '2'}}",
            p("requests: {cpu: 100m}, limits: {cpu: 500m}"),
            "cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000",
        ),
        ("ratio: exactly", "{type: Container, maxLimitRequestRatio: {cpu: '2'}}", p("requests: {cpu: 100m}, limits: {cpu: 200m}"), OK),
        (
            "ratio: a third above",
            "{type: Container, maxLimitRequestRatio: {cpu: '2'}}",
            p("requests: {cpu: 300m}, limits: {cpu: '1'}"),
            "cpu max limit to request ratio per Container is 2, but provided ratio is 3.333333",
        ),
        (
            "several at once, in brackets",
            "{type: Container, min: {memory: 64Mi}, max: {cpu: '1'}}",
            p("requests: {cpu: 500m, memory: 32Mi}, limits: {cpu: '2', memory: 32Mi}"),
            "[minimum memory usage per Container is 64Mi, but request is 32Mi, maximum cpu usage per Container is 1, but limit is 2]",
        ),
        (
            "defaults first, then the pod's max",
            "{type: Container, default: {cpu: 800m}, defaultRequest: {cpu: 100m}}, {type: Pod, max: {cpu: '1'}}",
            two("", ""),
            "maximum cpu usage per Pod is 1, but limit is 1600m",
        ),
        (
            "pod max: the containers added up",
            "{type: Pod, max: {cpu: '1'}}",
            two("limits: {cpu: 600m}", "limits: {cpu: 600m}"),
            "maximum cpu usage per Pod is 1, but limit is 1200m",
        ),
        (
            "pod min: no request at all",
            "{type: Pod, min: {memory: 100Mi}}",
            p("limits: {cpu: 100m}"),
            "minimum memory usage per Pod is 100Mi.  No request is specified",
        ),
        (
            "claim min",
            "{type: PersistentVolumeClaim, min: {storage: 1Gi}, max: {storage: 5Gi}}",
            claim("500Mi"),
            "minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi",
        ),
        (
            "claim max: the request",
            "{type: PersistentVolumeClaim, min: {storage: 1Gi}, max: {storage: 5Gi}}",
            claim("10Gi"),
            "maximum storage usage per PersistentVolumeClaim is 5Gi, but request is 10Gi",
        ),
        ("claim within", "{type: PersistentVolumeClaim, min: {storage: 1Gi}, max: {storage: 5Gi}}", claim("2Gi"), OK),
        (
            "a workload whose template breaks a max gets none of its pods",
            "{type: Container, max: {cpu: '1'}}",
            workload("Deployment", "web", "replicas: 3", &pod("p").app("app", "requests: {cpu: 500m}, limits: {cpu: '2'}")),
            "allowed; pods 0/3: maximum cpu usage per Container is 1, but limit is 2",
        ),
    ];
    let mut t = Table(vec![]);
    for (what, items, doc, want) in rows {
        let d = only(check_with(&cluster(&[quota("q", "", "pods=10/0"), limit_range(items)]), &doc, None, None));
        let got = summary(&d);
        // A field validation error (422) is pinned by its start only.
        let got = if want.ends_with("is invalid") { got.split(':').next().unwrap_or("").to_string() } else { got };
        t.row(what, got, want);
    }
    t.done();
}

#[test]
fn pod_level_requests_must_cover_the_containers_after_limit_range_defaults() {
    let defaults = "{type: Container, default: {cpu: '1'}, defaultRequest: {cpu: 400m}}";
    let pod_level = |at_pod: &str, a: &str, b: &str| pod("p").app("a", a).app("b", b).with(&format!("resources: {{requests: {{cpu: {at_pod}}}}}")).yaml();
    let rows: Vec<(&str, String, &str)> = vec![
        (
            "below the containers' own requests",
            pod_level("500m", "requests: {cpu: 300m}", "requests: {cpu: 300m}"),
            "Pod \"p\" is invalid: spec.resources.requests[cpu]: Invalid value: \"500m\": must be greater than or equal to aggregate container requests of 600m",
        ),
        (
            "below what LimitRange defaults then give the containers",
            pod_level("500m", "", ""),
            "Pod \"p\" is invalid: spec.resources.requests[cpu]: Invalid value: \"500m\": must be greater than or equal to aggregate container requests of 800m",
        ),
        ("covering the defaulted containers", pod_level("'1'", "", ""), OK),
    ];
    let mut t = Table(vec![]);
    for (what, doc, want) in rows {
        let d = only(check_with(&cluster(&[quota("q", "", "pods=10/0"), limit_range(defaults)]), &doc, None, None));
        t.row(what, summary(&d), want);
    }
    t.done();
}
