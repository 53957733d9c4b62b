use super::*;

fn review(request: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})).unwrap()
}

#[test]
fn bad_reviews_are_named() {
    let cases: [(&[u8], &str); 4] = [
        (b"{", "the body is not JSON"),
        (br#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}"#, "want an admission.k8s.io/v1 AdmissionReview"),
        (br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#, "has no request"),
        (br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}"#, "has no uid"),
    ];
    for (body, want) in cases {
        let e = parse(body.to_vec()).err().unwrap();
        assert!(e.contains(want), "{e}");
    }
}

#[test]
fn deep_or_broken_objects_never_crash_the_parse() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let review = |object: &str| {
        parse(format!(r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","object":{object}}}}}"#).into_bytes())
    };
    // Read past where nothing is built: an object that is not a map is no object, and a
    // tree of one too deep is none either (so it is not decided).
    assert!(review(&deep(100_000)).unwrap().object().is_none());
    assert!(review(&format!(r#"{{"metadata":{{"labels":{}}}}}"#, deep(100_000))).unwrap().object().is_none());
    // A spec is hashed as deep as serde_json reads: past that, a bad review.
    assert!(review(&format!(r#"{{"spec":{}}}"#, deep(100_000))).is_err());
    assert!(review("{").is_err());
    assert!(review(&format!(r#"{{"spec":{}}}"#, deep(100))).unwrap().object().is_some());
}

#[test]
fn what_deciding_never_reads_is_not_kept() {
    let object = json!({"metadata": {"name": "web", "managedFields": [{"manager": "kubectl"}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...}", "team": "a"}, "labels": {"app": "web"}},
            "spec": {"replicas": 2, "template": {"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "kept here"}}}}});
    let r = parse(review(json!({"uid": "u", "kind": {"group": "apps", "kind": "Deployment"}, "operation": "UPDATE", "namespace": "a",
            "userInfo": {"username": "me", "groups": ["x"]}, "object": object, "oldObject": object})))
    .unwrap();
    let want = json!({"metadata": {"name": "web", "annotations": {"team": "a"}, "labels": {"app": "web"}},
            "spec": {"replicas": 2, "template": {"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "kept here"}}}}});
    assert_eq!(r.object(), Some(want.clone()));
    assert_eq!(r.old_object(), Some(want));
    assert_eq!((r.uid.as_str(), r.group.as_str(), r.kind.as_str(), r.operation.as_str(), r.namespace.as_str()), ("u", "apps", "Deployment", "UPDATE", "a"));
    // An object that is not a map is no object.
    assert!(parse(review(json!({"uid": "u", "object": [1, "two"]}))).unwrap().object().is_none());
}

/// `v` as JSON text with every map's keys in reverse order (as no serializer here writes them).
fn reversed(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            format!("{{{}}}", m.iter().rev().map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), reversed(v))).collect::<Vec<_>>().join(","))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(reversed).collect::<Vec<_>>().join(",")),
        v => v.to_string(),
    }
}

/// Whether the guard takes an update with these two specs (JSON text) as one that leaves
/// them as they were.
fn same_spec(new: &str, old: &str) -> bool {
    let body = format!(
        r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","kind":{{"group":"apps","kind":"Deployment"}},"operation":"UPDATE","object":{{"spec":{new}}},"oldObject":{{"spec":{old}}}}}}}"#
    );
    !concerns(&parse(body.into_bytes()).unwrap())
}

#[test]
fn specs_are_compared_as_trees_without_building_them() {
    let cases = [
        (r#"{"a":1,"b":[1,2]}"#, r#"{"b":[1,2],"a":1}"#, true),
        (r#"{"a":1,"b":[1,2]}"#, r#"{"a":1,"b":[2,1]}"#, false),
        (r#"{"a":1}"#, r#"{"a":1.0}"#, false),
        (r#"{"a":0.0}"#, r#"{"a":-0.0}"#, true),
        (r#"{"a":-1}"#, r#"{"a":-1}"#, true),
        (r#"{"a":"1"}"#, r#"{"a":1}"#, false),
        (r#"{"a":{}}"#, r#"{"a":[]}"#, false),
        (r#"{"a":null}"#, r#"{}"#, false),
        (r#"{"a":1,"a":2}"#, r#"{"a":2}"#, true),
        (r#"{"a":2,"a":1}"#, r#"{"a":2}"#, false),
        (r#"{"a":[{"x":1,"y":2}]}"#, r#"{"a":[{"y":2,"x":1}]}"#, true),
        (r#"{"a":"\u0041"}"#, r#"{"a":"A"}"#, true),
    ];
    for (new, old, want) in cases {
        let trees = serde_json::from_str::<Value>(new).unwrap() == serde_json::from_str::<Value>(old).unwrap();
        assert_eq!(trees, want, "{new} {old}");
        assert_eq!(same_spec(new, old), want, "{new} {old}");
    }
    // No spec on either side is the same spec; on one side only, a change.
    let body = |old: &str| {
        format!(
            r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","kind":{{"group":"apps","kind":"Deployment"}},"operation":"UPDATE","object":{{"metadata":{{}}}},"oldObject":{old}}}}}"#
        )
    };
    assert!(!concerns(&parse(body("{}").into_bytes()).unwrap()));
    assert!(concerns(&parse(body(r#"{"spec":{}}"#).into_bytes()).unwrap()));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 400, ..Default::default() })]
    #[test]
    fn a_spec_is_the_same_exactly_when_its_tree_is(a in json_value(), b in json_value(), flip in proptest::bool::ANY) {
        let b = if flip { a.clone() } else { b };
        proptest::prop_assert_eq!(same_spec(&a.to_string(), &reversed(&b)), a == b);
    }
}

/// Small JSON values over few keys and scalars, so that equal ones come often.
fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-2i64..3).prop_map(Value::from),
        prop_oneof![Just(0.0f64), Just(-0.0), Just(1.0), Just(2.5)].prop_map(Value::from),
        prop_oneof![Just("a"), Just("b"), Just("")].prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(prop_oneof![Just("x".to_string()), Just("y".to_string()), Just("z".to_string())], inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

#[test]
fn an_owner_or_the_opt_out_label_is_read_whatever_shape_the_metadata_has() {
    let with = |meta: &str| {
        let body = format!(
            r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","kind":{{"group":"apps","kind":"Deployment"}},"operation":"CREATE","object":{{"metadata":{meta},"spec":{{}}}}}}}}"#
        );
        concerns(&parse(body.into_bytes()).unwrap())
    };
    let label = LABEL;
    for (meta, concerned) in [
        (r#"{"ownerReferences":[{"controller":true}]}"#.to_string(), false),
        (r#"{"ownerReferences":[{"controller":false},{"kind":"x","controller":true}]}"#.into(), false),
        (r#"{"ownerReferences":[{"controller":"true"}]}"#.into(), true),
        (r#"{"ownerReferences":[{"controller":true,"controller":false}]}"#.into(), true),
        (r#"{"ownerReferences":{"controller":true}}"#.into(), true),
        (r#"{"ownerReferences":[[{"controller":true}], 1, null]}"#.into(), true),
        (format!(r#"{{"labels":{{"{label}":"ignore"}}}}"#), false),
        (format!(r#"{{"labels":{{"{label}":"enforce"}}}}"#), true),
        (format!(r#"{{"labels":{{"{label}":["ignore"]}}}}"#), true),
        (format!(r#"{{"labels":[{{"{label}":"ignore"}}]}}"#), true),
        ("5".into(), true),
        ("[]".into(), true),
    ] {
        assert_eq!(with(&meta), concerned, "{meta}");
    }
}

#[test]
fn the_engine_decodes_a_lean_tree_as_the_whole_one() {
    let container = |name: &str| {
        json!({"name": name, "image": "app:1", "imagePullPolicy": "Always", "restartPolicy": if name == "side" { json!("Always") } else { Value::Null },
                "env": [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
                "envFrom": [{"configMapRef": {"name": "c"}}], "args": ["--x"], "command": ["/app"],
                "volumeMounts": [{"name": "v", "mountPath": "/v"}], "volumeDevices": [{"name": "d", "devicePath": "/dev/d"}],
                "ports": [{"containerPort": 80, "hostPort": 8080}], "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"cpu": "1"}},
                "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
                "securityContext": {"privileged": true, "capabilities": {"add": ["NET_ADMIN"]}, "runAsUser": 0},
                "livenessProbe": {"httpGet": {"host": "h", "port": 80}}, "lifecycle": {"preStop": {"tcpSocket": {"host": "l", "port": 1}}}})
    };
    let pod = json!({"metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
            "spec": {"containers": [container("app"), container("two")], "initContainers": [container("init"), container("side")],
                "volumes": [{"name": "v", "hostPath": {"path": "/"}}], "hostNetwork": true, "priorityClassName": "high", "serviceAccountName": "sa",
                "securityContext": {"runAsNonRoot": false}, "overhead": {"cpu": "10m"}, "runtimeClassName": "rc",
                "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "k", "namespaces": ["o"]}]}}}});
    let objects = [
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "a"},
                "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": pod}}),
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s", "namespace": "a"},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "serviceName": "s", "template": pod,
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}),
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c", "namespace": "a"},
                "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"parallelism": 2, "template": pod}}}}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a"}, "spec": pod["spec"]}),
    ];
    for object in objects {
        let text = object.to_string();
        let whole = Kept::read(text.as_bytes(), false, None).unwrap().0;
        let lean = Kept::read(text.as_bytes(), true, None).unwrap().0;
        assert!(whole.to_string().contains("\"envFrom\"") && !lean.to_string().contains("\"envFrom\""), "{lean}");
        let decode = |v: Value| objects::decode(&Document { origin: Origin::new(String::from("t"), 1), value: v }).unwrap();
        assert_eq!(decode(lean), decode(whole), "{}", object["kind"]);
    }
}

/// The object of a review whose text is `object`, as the guard decodes it (lean, long
/// container lists taken as they are read), and as the engine decodes its whole lean tree;
/// and whether the lists were taken.
fn decoded_both_ways(object: &str) -> (Result<objects::Object, String>, Result<objects::Object, String>, bool) {
    let body = format!(r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","operation":"CREATE","object":{object}}}}}"#);
    let r = parse(body.into_bytes()).unwrap();
    let doc = |value| Document { origin: Origin::new("t", 1), value };
    let (v, lists) = r.lean_tree(r.object.clone()).unwrap();
    let taken = lists.is_some();
    let got = match lists {
        Some(lists) => objects::decode_with_lists(&doc(v), lists),
        None => objects::decode(&doc(v)),
    };
    let want = objects::decode(&doc(r.tree(r.object.clone(), true).unwrap()));
    (got.map_err(|e| e.to_string()), want.map_err(|e| e.to_string()), taken)
}

#[test]
fn long_container_lists_are_taken_as_they_are_read_and_decoded_as_the_whole_tree() {
    let n = objects::MANY_CONTAINERS;
    let container = |i: usize| {
        json!({"name": format!("c{i}"), "image": "registry.example.com/app:1", "env": [{"name": "A", "value": "b"}], "ports": [{"containerPort": 80 + i % 3}],
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"cpu": format!("{}m", 20 + i % 7)}}})
    };
    let many = |k: usize| Value::Array((0..k).map(container).collect());
    let with_bad = |k: usize, bad: usize, c: Value| {
        let mut list = many(k);
        list[bad] = c;
        list
    };
    let spec = |containers: Value, init: Value| json!({"hostNetwork": true, "containers": containers, "initContainers": init});
    let deployment = |s: Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 2, "selector": {}, "template": {"spec": s}}})
            .to_string()
    };
    let cronjob = |s: Value| {
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": s}}}}})
                .to_string()
    };
    let pod = |s: Value| json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": s}).to_string();
    let bad_name = json!({"image": "x"});
    let bad_quantity = json!({"name": "q", "resources": {"limits": {"memory": "1K"}}});
    let long_then_short = format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"web"}},"spec":{{"selector":{{}},"template":{{"spec":{}}}}},"spec":{{"selector":{{}},"template":{{"spec":{}}}}}}}"#,
        spec(many(n + 2), many(1)),
        spec(many(2), many(1))
    );
    // (object, whether its lists are taken)
    let cases = [
        (deployment(spec(many(n + 1), many(2))), true),
        (deployment(spec(many(3), many(n + 1))), true),
        (deployment(spec(many(n), many(n))), false),
        (deployment(spec(json!({"not": "a list"}), many(n + 1))), true),
        (deployment(spec(with_bad(n + 5, n + 3, bad_name.clone()), with_bad(3, 1, bad_quantity.clone()))), true),
        (deployment(spec(with_bad(n + 5, 2, bad_quantity.clone()), many(1))), true),
        (cronjob(spec(many(n + 5), many(1))), true),
        (pod(spec(many(1), with_bad(n + 5, n + 4, bad_name))), true),
        (pod(spec(many(n + 5), Value::Null)), true),
        // The pod spec is not known to be there before the kind is read: nothing taken.
        (format!(r#"{{"spec":{},"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p"}}}}"#, spec(many(n + 5), many(1))), false),
        // A key on the way given twice: read again as a whole tree, where the later counts.
        (long_then_short, false),
    ];
    for (i, (object, taken)) in cases.into_iter().enumerate() {
        let (got, want, took) = decoded_both_ways(&object);
        assert_eq!(took, taken, "case {i}");
        assert_eq!(got, want, "case {i}");
    }
    // The request size limit measures the lists too: at the limit, and one byte past it.
    let base = deployment(spec(many(n + 1), many(1)));
    let lean_len = |object: &str| {
        let r = parse(format!(r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","object":{object}}}}}"#).into_bytes())
            .unwrap();
        serde_json::to_vec(&r.tree(r.object.clone(), true).unwrap()).unwrap().len()
    };
    let padded = |k: usize| base.replacen(r#""name":"web""#, &format!(r#""name":"web{}""#, "x".repeat(k)), 1);
    let short = objects::MAX_REQUEST_BODY_BYTES - lean_len(&padded(0));
    for (k, too_large) in [(short, false), (short + 1, true)] {
        let object = padded(k);
        assert_eq!(lean_len(&object), objects::MAX_REQUEST_BODY_BYTES + usize::from(too_large));
        let (got, want, took) = decoded_both_ways(&object);
        assert!(took);
        assert_eq!(got.as_ref().map(|o| o.meta.too_large), Ok(too_large));
        assert_eq!(got, want);
    }
}

#[test]
fn only_created_or_changed_unowned_workloads_concern_the_guard() {
    let deploy = json!({"metadata": {"name": "web"}, "spec": {"replicas": 2}});
    let base = json!({"uid": "u", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"}, "operation": "CREATE", "namespace": "a", "object": deploy});
    let with = |f: &dyn Fn(&mut Value)| {
        let mut r = base.clone();
        f(&mut r);
        concerns(&parse(review(r)).unwrap())
    };
    assert!(with(&|_| {}));
    assert!(!with(&|r| r["kind"] = json!({"group": "", "version": "v1", "kind": "ConfigMap"})));
    assert!(!with(&|r| r["operation"] = json!("DELETE")));
    assert!(!with(&|r| r["object"]["metadata"]["ownerReferences"] = json!([{"controller": true, "kind": "Deployment", "name": "x"}])));
    assert!(!with(&|r| r["object"]["metadata"]["labels"] = json!({LABEL: "ignore"})));
    assert!(!with(&|r| {
        r["operation"] = json!("UPDATE");
        r["oldObject"] = r["object"].clone();
    }));
    assert!(with(&|r| {
        r["operation"] = json!("UPDATE");
        r["oldObject"] = json!({"metadata": {"name": "web"}, "spec": {"replicas": 1}});
    }));
}

/// The namespace shop of examples/autoscaling: quota compute (requests.cpu 4, limits.cpu 8,
/// pods 10) and Deployment web running 5 pods of 500m/1 cpu.
fn shop() -> ClusterState {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/autoscaling/state.yaml")).unwrap();
    let objs: Vec<_> = kubectl_quota_engine::manifest::parse_str("state.yaml", &text).unwrap().iter().map(|d| objects::decode(d).unwrap()).collect();
    ClusterState::from_objects(objs, "shop")
}

fn hpa_review(operation: &str, min: i64, old_min: Option<i64>) -> Request {
    hpa_review_with(operation, min, old_min, |_| {})
}

/// The review of an HPA of `deployment/web`, its object changed by `change`.
fn hpa_review_with(operation: &str, min: i64, old_min: Option<i64>, change: impl Fn(&mut Value)) -> Request {
    let hpa = |min: i64| {
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": min, "maxReplicas": 20}})
    };
    let mut r = json!({"uid": "u", "kind": {"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"}, "operation": operation,
            "namespace": "shop", "object": hpa(min)});
    change(&mut r["object"]);
    if let Some(old) = old_min {
        r["oldObject"] = hpa(old);
    }
    parse(review(r)).unwrap()
}

#[test]
fn an_autoscaler_is_answered_for_the_pods_of_the_workload_it_targets() {
    let opts = CheckOptions { namespace: "shop".into(), ..CheckOptions::default() };
    let refused = "quota compute will refuse 4 of the 12 pods of deployment/web: exceeded quota: compute, requested: limits.cpu=1,requests.cpu=500m, used: limits.cpu=8,requests.cpu=4, limited: limits.cpu=8,requests.cpu=4";
    let min12 = "HPA web scales deployment/web from 12 to 20 pods; quota compute lets 8 run (limits.cpu, requests.cpu): even its minimum of 12 is refused";
    let min3 = "HPA web scales deployment/web from 3 to 20 pods; quota compute lets 8 run (limits.cpu, requests.cpu): scale-ups past 8 will be refused";
    // (request, the target known, warnings)
    let cases: Vec<(Request, bool, Vec<&str>)> = vec![
        // Created with a minimum above what fits: the pods refused, and the ceiling.
        (hpa_review("CREATE", 12, None), true, vec![refused, min12]),
        // A minimum that fits: the ceiling alone.
        (hpa_review("CREATE", 3, None), true, vec![min3]),
        // Changed from 3 to 12: the new minimum decides, not the old one.
        (hpa_review("UPDATE", 12, Some(3)), true, vec![refused, min12]),
        // Changed from 12 to 3: the old minimum is gone.
        (hpa_review("UPDATE", 3, Some(12)), true, vec![min3]),
        // A target that could not be read: nothing is said.
        (hpa_review("CREATE", 12, None), false, vec![]),
    ];
    for (i, (req, known, want)) in cases.into_iter().enumerate() {
        assert!(concerns(&req), "case {i}");
        assert_eq!(scale_target(&req).map(|t| t.name), Some("web".to_string()), "case {i}");
        let mut state = shop();
        if !known {
            state.existing.clear();
        }
        let a = decide(req, state, &opts, false);
        assert_eq!(a.warnings, want, "case {i}");
    }
    // A change of the autoscaler's status or metadata only is not spoken about.
    assert!(!concerns(&hpa_review("UPDATE", 12, Some(12))));
    let keda = hpa_review_with("CREATE", 12, None, |o| o["metadata"]["ownerReferences"] = json!([{"controller": true, "kind": "ScaledObject", "name": "web"}]));
    assert!(!concerns(&keda), "the HPA KEDA makes for a ScaledObject is the ScaledObject's");
}

#[test]
fn a_vpa_is_answered_for_the_running_pods_of_its_target() {
    let opts = CheckOptions { namespace: "shop".into(), ..CheckOptions::default() };
    let vpa = json!({"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
            "status": {"recommendation": {"containerRecommendations": [{"containerName": "app", "target": {"cpu": "1200m"}}]}}});
    let req = parse(review(json!({"uid": "u", "kind": {"group": "autoscaling.k8s.io", "version": "v1", "kind": "VerticalPodAutoscaler"},
            "operation": "CREATE", "namespace": "shop", "object": vpa})))
    .unwrap();
    assert!(concerns(&req));
    assert_eq!(scale_target(&req).map(|t| t.name), Some("web".to_string()));
    let a = decide(req, shop(), &opts, false);
    assert_eq!(
            a.warnings,
            vec!["quota compute lets 3 of 5 pods of deployment/web be recreated at VPA web's target (limits.cpu=2400m, requests.cpu=1200m each): the other 2 stay evicted"]
        );
}

/// The engine's own bound (what is left of the guard's deadline) ran out between steps: the
/// answer is allowed, never refused (even where the namespace enforces), and counted late.
#[test]
fn a_review_the_engine_left_undecided_for_time_is_allowed_and_late() {
    let opts = CheckOptions { namespace: "shop".into(), decide_within: Some(std::time::Duration::ZERO), ..CheckOptions::default() };
    let a = decide(hpa_review("CREATE", 12, None), shop(), &opts, true);
    assert_eq!((a.allowed, a.why), (true, Why::Late));
    assert!(a.warnings.iter().any(|w| w.contains("not decided within 0 ms")), "{:?}", a.warnings);
    let opts = CheckOptions { decide_within: None, ..opts };
    assert_eq!(decide(hpa_review("CREATE", 12, None), shop(), &opts, false).why, Why::Warned);
}

#[test]
fn warnings_fit_the_servers_limits() {
    let long = "x".repeat(1000);
    let fitted = fit(vec![long.clone(); 40]);
    assert!(fitted.iter().all(|w| w.chars().count() <= MAX_WARNING_CHARS && w.ends_with("...")));
    assert!(fitted.iter().map(|w| w.chars().count()).sum::<usize>() <= MAX_TOTAL_CHARS);
    assert_eq!(fitted.len(), MAX_TOTAL_CHARS / MAX_WARNING_CHARS);
    let controls = fit(vec!["a\u{1b}[31mb\nc".into()]);
    assert!(!controls[0].chars().any(char::is_control), "{controls:?}");
    // The line and paragraph separators are line breaks to many readers: escaped too.
    assert_eq!(fit(vec!["a\u{2028}b\u{2029}c".into()]), ["a\\u2028b\\u2029c"]);
}

#[test]
fn the_answer_is_an_admission_review() {
    let a = Answer { allowed: false, warnings: vec!["w".into()], message: Some("m".into()), why: Why::Denied, ceiling: None };
    let r = response("u1", &a);
    assert_eq!(r["response"]["uid"], "u1");
    assert_eq!(r["response"]["allowed"], false);
    assert_eq!(r["response"]["warnings"], json!(["w"]));
    assert_eq!(r["response"]["status"]["code"], 403);
    let ok = response("u2", &Answer { allowed: true, warnings: vec![], message: None, why: Why::Fits, ceiling: None });
    assert!(ok["response"].get("warnings").is_none() && ok["response"].get("status").is_none());
}
