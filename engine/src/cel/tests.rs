use serde_json::{json, Value as Json};

use super::*;

fn eval_with(source: &str, mode: Mode, a: Activation<'_>) -> Result<Json, String> {
    let p = compile(source, mode)?;
    Evaluation::new(a).eval(&p)
}

fn eval(source: &str) -> Result<Json, String> {
    eval_with(source, Mode::Validating, Activation::default())
}

/// Each expression, evaluated with no documents, gives the JSON beside it.
fn table(cases: &[(&str, Json)]) {
    let mut wrong = Vec::new();
    for (source, want) in cases {
        match eval(source) {
            Ok(got) if got == *want => {}
            got => wrong.push(format!("{source}: got {got:?}, want {want}")),
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// Each expression fails (to compile or to evaluate), with an error containing the text beside
/// it.
fn errors(mode: Mode, cases: &[(&str, &str)]) {
    let mut wrong = Vec::new();
    for (source, want) in cases {
        match eval_with(source, mode, Activation::default()) {
            Err(e) if e.contains(want) => {}
            got => wrong.push(format!("{source}: got {got:?}, want an error with {want:?}")),
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

fn pod(containers: Json) -> Json {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "web"}}, "spec": {"containers": containers}})
}

#[test]
fn programs_and_evaluations_can_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Program>();
    send_sync::<Evaluation<'static>>();
}

#[test]
fn core_cel_that_cel_rust_provides() {
    table(&[
        ("has({'a': 1}.a)", json!(true)),
        ("has({'a': 1}.b)", json!(false)),
        ("[1, 2].all(x, x > 0)", json!(true)),
        ("[1, 2].exists(x, x > 1)", json!(true)),
        ("[1, 2].exists_one(x, x > 0)", json!(false)),
        ("[1, 2].map(x, x * 2)", json!([2, 4])),
        ("[1, 2, 3].map(x, x > 1, x * 2)", json!([4, 6])),
        ("[1, 2].filter(x, x > 1)", json!([2])),
        ("{'a': 1, 'b': 2}.all(k, k in ['a', 'b'])", json!(true)),
        ("size([1]) + size('ab') + 'abc'.size() + size({'a': 1})", json!(7)),
        ("1 in [1] && 'a' in {'a': 1} && !(2 in [1])", json!(true)),
        ("'abc'.startsWith('a') && 'abc'.endsWith('c') && 'abc'.contains('b')", json!(true)),
        ("'abc'.matches('^a.c$')", json!(true)),
        ("true ? 1 : 2", json!(1)),
        ("1 < 1.5 && 2u > 1 && 1 == 1.0 && 1 == 1u", json!(true)),
        ("{'a': 1}.?a.orValue(5)", json!(1)),
        ("{'a': 1}.?b.orValue(5)", json!(5)),
        ("{'a': 1}[?'b'].hasValue()", json!(false)),
        ("optional.of(1).hasValue() && !optional.none().hasValue()", json!(true)),
        ("optional.of(2).value()", json!(2)),
        ("optional.none()", json!(null)),
        ("[?optional.none(), ?optional.of(1)]", json!([1])),
        ("string(1) + string(2.5)", json!("12.5")),
        ("int('2') + int(2.7)", json!(4)),
        ("type(1) == int", json!(true)),
        ("null == null", json!(true)),
        ("b'abc'", json!("YWJj")),
        ("{1: 'a', true: 'b'}", json!({"1": "a", "true": "b"})),
        ("[1] + [2.5, 'x', null]", json!([1, 2.5, "x", null])),
        ("18446744073709551615u", json!(18446744073709551615u64)),
    ]);
}

#[test]
fn strings_extension() {
    table(&[
        ("'abc'.charAt(1)", json!("b")),
        ("'abcb'.indexOf('b') * 10 + 'abcb'.lastIndexOf('b')", json!(13)),
        ("'AbC'.lowerAscii() + 'AbC'.upperAscii()", json!("abcABC")),
        ("'a-b-c'.replace('-', '+')", json!("a+b+c")),
        ("'a,b'.split(',')", json!(["a", "b"])),
        ("'abcd'.substring(1) + 'abcd'.substring(1, 2)", json!("bcdb")),
        ("'  a '.trim()", json!("a")),
        ("['a', 'b'].join('-') + ['c'].join()", json!("a-bc")),
        ("'%s needs %d'.format(['web', 2])", json!("web needs 2")),
        ("'ab'.reverse()", json!("ba")),
        ("strings.quote('a\"b')", json!("\"a\\\"b\"")),
    ]);
}

#[test]
fn kubernetes_lists() {
    table(&[
        ("[1, 2, 2].isSorted() && !['b', 'a'].isSorted() && [].isSorted()", json!(true)),
        ("[1, 2, 3].sum()", json!(6)),
        ("[1.5, 2.5].sum()", json!(4.0)),
        ("[1u, 2u].sum()", json!(3)),
        ("[].sum()", json!(0)),
        ("[3, 1, 2].min()", json!(1)),
        ("['b', 'c', 'a'].max()", json!("c")),
        ("[1, 2, 1].indexOf(1)", json!(0)),
        ("[1, 2, 1].lastIndexOf(1)", json!(2)),
        ("[1, 2].indexOf(3)", json!(-1)),
        ("[[1], [2]].indexOf([2])", json!(1)),
        // cel-go's lists extension, as cel-rust has it
        ("[3, 1, 2].sort()", json!([1, 2, 3])),
        ("[[1], [2, [3]]].flatten()", json!([1, 2, [3]])),
        ("[1, 1, 2].distinct()", json!([1, 2])),
        ("[1, 2, 3].slice(1, 2)", json!([2])),
        ("lists.range(3)", json!([0, 1, 2])),
    ]);
    errors(
        Mode::Validating,
        &[
            ("[].min()", "min called on empty list"),
            ("[].max()", "max called on empty list"),
            ("[9223372036854775807, 1].sum()", "overflow"),
            ("[1, 'a'].sum()", "cannot add a string"),
            ("[1, 'a'].isSorted()", "cannot be compared"),
        ],
    );
}

#[test]
fn regex_find_and_find_all() {
    table(&[
        ("'abc 123'.find('[0-9]+')", json!("123")),
        ("'abc'.find('[0-9]+')", json!("")),
        ("'a1b2c3'.findAll('[0-9]')", json!(["1", "2", "3"])),
        ("'a1b2c3'.findAll('[0-9]', 2)", json!(["1", "2"])),
        ("'a1b2c3'.findAll('[0-9]', 0)", json!([])),
        ("'a1b2c3'.findAll('[0-9]', -1)", json!(["1", "2", "3"])),
    ]);
    errors(Mode::Validating, &[("'a'.find('(')", "invalid regular expression")]);
}

#[test]
fn sets() {
    table(&[
        ("sets.contains([1, 2, 3], [3, 1])", json!(true)),
        ("sets.contains([1], [1, 2])", json!(false)),
        ("sets.contains([1], [])", json!(true)),
        ("sets.contains([1.0], [1])", json!(true)),
        ("sets.equivalent([1, 2, 2], [2, 1])", json!(true)),
        ("sets.equivalent([1], [1, 2])", json!(false)),
        ("sets.intersects([1, 2], [2, 3])", json!(true)),
        ("sets.intersects([1], [])", json!(false)),
    ]);
}

#[test]
fn quantities_are_exact() {
    table(&[
        ("quantity('0.1').add(quantity('0.2')) == quantity('300m')", json!(true)),
        ("quantity('0.1').add(quantity('0.2'))", json!("300m")),
        ("quantity('1Gi')", json!("1Gi")),
        ("quantity('1k') == quantity('1000')", json!(true)),
        ("quantity('1k') != quantity('1001')", json!(true)),
        ("quantity('200M').compareTo(quantity('0.2G'))", json!(0)),
        ("quantity('50M').compareTo(quantity('50Mi'))", json!(-1)),
        ("quantity('50Mi').compareTo(quantity('50M'))", json!(1)),
        ("quantity('150Mi').isGreaterThan(quantity('100Mi'))", json!(true)),
        ("quantity('50Mi').isGreaterThan(quantity('100Mi'))", json!(false)),
        ("quantity('50M').isLessThan(quantity('100M'))", json!(true)),
        ("quantity('1000000000000000000001').isGreaterThan(quantity('1000000000000000000000'))", json!(true)),
        ("quantity('50k').add(20) == quantity('50020')", json!(true)),
        ("quantity('50k').sub(quantity('20k')) == quantity('30k')", json!(true)),
        ("quantity('50k').sub(20000) == quantity('30k')", json!(true)),
        ("quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", json!(true)),
        ("quantity('100m').sub(quantity('100m'))", json!("0")),
        ("quantity('-1').sign() * 100 + sign(quantity('0')) * 10 + quantity('5m').sign()", json!(-99)),
        ("quantity('50k').isInteger() && quantity('50000000G').isInteger()", json!(true)),
        ("quantity('1500m').isInteger() || quantity('9999999999999999999999999999999999999G').isInteger()", json!(false)),
        ("quantity('50k').asInteger()", json!(50000)),
        ("quantity('1000m').asInteger()", json!(1)),
        ("quantity('50k').sub(20000).asApproximateFloat() == 30000.0", json!(true)),
        ("quantity('1.5').asApproximateFloat()", json!(1.5)),
        ("isQuantity('1.3Gi') && isQuantity('10000k')", json!(true)),
        ("isQuantity('200K') || isQuantity('Three') || isQuantity('1,3G')", json!(false)),
        ("[quantity('1'), quantity('2')]", json!(["1", "2"])),
        ("{'cpu': quantity('500m')}", json!({"cpu": "500m"})),
    ]);
    errors(
        Mode::Validating,
        &[
            ("quantity('200K')", "unable to parse quantity's suffix"),
            ("quantity('Three')", "quantities must match the regular expression"),
            ("quantity('1.5').asInteger()", "cannot convert value to integer"),
            ("quantity('9999999999999999999999999999999999999G').asInteger()", "cannot convert value to integer"),
            ("quantity('1') < quantity('2')", "no matching overload for '_<_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'"),
            ("quantity('1').add('1')", "add"),
        ],
    );
}

#[test]
fn a_container_memory_limit_against_a_quantity() {
    let expr = "object.spec.containers.all(c, quantity(c.resources.limits.memory).compareTo(quantity('1Gi')) <= 0)";
    let p = compile(expr, Mode::Validating).unwrap();
    for (limit, want) in [("512Mi", true), ("1Gi", true), ("1073741824", true), ("1073741825", false), ("1.1Gi", false), ("2G", false)] {
        let object = pod(json!([{"name": "a", "resources": {"limits": {"memory": limit}}}]));
        let got = Evaluation::new(Activation { object: Some(&object), ..Default::default() }).eval(&p);
        assert_eq!(got, Ok(json!(want)), "{limit}");
    }
}

#[test]
fn the_memory_limit_validation_on_sample_pods() {
    let expr = "object.spec.containers.all(c, has(c.resources.limits) && 'memory' in c.resources.limits)";
    let p = compile(expr, Mode::Validating).unwrap();
    let cases = [
        (json!([{"name": "a", "resources": {"limits": {"memory": "1Gi"}}}]), true),
        (json!([{"name": "a", "resources": {"limits": {"memory": "1Gi"}}}, {"name": "b", "resources": {}}]), false),
        (json!([{"name": "a", "resources": {"limits": {"cpu": "1"}}}]), false),
        (json!([]), true),
    ];
    for (containers, want) in cases {
        let object = pod(containers.clone());
        let got = Evaluation::new(Activation { object: Some(&object), ..Default::default() }).eval(&p);
        assert_eq!(got, Ok(json!(want)), "{containers}");
    }
}

#[test]
fn a_message_expression_builds_a_string() {
    let object = pod(json!([{"name": "a", "resources": {"limits": {"memory": "1Gi"}}}, {"name": "b", "resources": {}}]));
    let a = Activation { object: Some(&object), ..Default::default() };
    let got = eval_with(
        "object.spec.containers.filter(c, !has(c.resources.limits)).map(c, 'container ' + c.name + ' needs a memory limit').join(', ')",
        Mode::Validating,
        a,
    );
    assert_eq!(got, Ok(json!("container b needs a memory limit")));
    assert_eq!(eval_with("'pod ' + object.metadata.name + ' of app ' + object.metadata.labels['app']", Mode::Validating, a), Ok(json!("pod p of app web")));
}

#[test]
fn every_document_of_the_activation_is_named_as_upstream() {
    let (object, old, request, params, ns) = (
        json!({"o": 1}),
        json!({"o": 2}),
        json!({"operation": "CREATE", "userInfo": {"username": "u"}}),
        json!({"max": 3}),
        json!({"metadata": {"name": "n"}}),
    );
    let a = Activation { object: Some(&object), old_object: Some(&old), request: Some(&request), params: Some(&params), namespace_object: Some(&ns) };
    let got =
        eval_with("[object.o, oldObject.o, request.operation, request.userInfo.username, params.max, namespaceObject.metadata.name]", Mode::Validating, a);
    assert_eq!(got, Ok(json!([1, 2, "CREATE", "u", 3, "n"])));
    assert_eq!(eval("oldObject == null && object == null && params == null"), Ok(json!(true)));
}

#[test]
fn json_numbers_are_ints_unless_they_have_a_fraction() {
    let object = json!({"i": 3, "d": 1.5, "big": 18446744073709551615u64});
    let a = Activation { object: Some(&object), ..Default::default() };
    let got = eval_with(
        "[type(object.i) == int, type(object.d) == double, object.i + 1, object.d * 2.0, object.i < object.d * 3.0, object.big]",
        Mode::Validating,
        a,
    );
    assert_eq!(got, Ok(json!([true, true, 4, 3.0, true, 18446744073709551615u64])));
}

#[test]
fn variables_are_visible_to_later_variables_and_expressions() {
    let object = pod(json!([{"name": "a", "resources": {"limits": {"memory": "2Gi"}}}, {"name": "b", "resources": {"limits": {"memory": "1Gi"}}}]));
    let mut e = Evaluation::new(Activation { object: Some(&object), ..Default::default() });
    e.bind("limits", &compile("object.spec.containers.map(c, quantity(c.resources.limits.memory))", Mode::Validating).unwrap());
    e.bind("total", &compile("variables.limits[0].add(variables.limits[1])", Mode::Validating).unwrap());
    e.bind("max", &compile("quantity('2Gi')", Mode::Validating).unwrap());
    assert_eq!(e.eval(&compile("variables.total", Mode::Validating).unwrap()), Ok(json!("3Gi")));
    assert_eq!(e.eval(&compile("variables.total.isGreaterThan(variables.max)", Mode::Validating).unwrap()), Ok(json!(true)));
}

#[test]
fn an_error_in_a_variable_is_reported_by_the_expressions_that_read_it() {
    let mut e = Evaluation::new(Activation::default());
    e.bind("bad", &compile("quantity('nope')", Mode::Validating).unwrap());
    e.bind("good", &compile("1", Mode::Validating).unwrap());
    let uses = e.eval(&compile("variables.bad.sign() == 1", Mode::Validating).unwrap()).unwrap_err();
    assert!(uses.starts_with("variables.bad: ") && uses.contains("quantities must match"), "{uses}");
    assert_eq!(e.eval(&compile("variables.good + 1", Mode::Validating).unwrap()), Ok(json!(2)));
    assert_eq!(e.eval(&compile("true || variables.bad", Mode::Validating).unwrap()), Ok(json!(true)));
    let unknown = e.eval(&compile("variables.nope", Mode::Validating).unwrap()).unwrap_err();
    assert_eq!(unknown, "no such variable: variables.nope");
}

#[test]
fn a_mutation_builds_an_apply_configuration() {
    let object = pod(json!([
        {"name": "a", "resources": {"requests": {"cpu": "100m"}}},
        {"name": "b", "resources": {}},
        {"name": "c", "resources": {"requests": {"memory": "1Gi"}}},
    ]));
    let expr = "Object{spec: Object.spec{containers: object.spec.containers.filter(c, !has(c.resources.requests) || !('cpu' in c.resources.requests)).map(c, Object.spec.containers{name: c.name, resources: Object.spec.containers.resources{requests: {'cpu': '400m'}}})}}";
    let got = eval_with(expr, Mode::Mutating, Activation { object: Some(&object), ..Default::default() });
    assert_eq!(
        got,
        Ok(json!({"spec": {"containers": [
            {"name": "b", "resources": {"requests": {"cpu": "400m"}}},
            {"name": "c", "resources": {"requests": {"cpu": "400m"}}},
        ]}}))
    );
}

#[test]
fn struct_literals_leave_unset_fields_out() {
    assert_eq!(
        eval_with(
            "Object{metadata: Object.metadata{labels: {'a': 'b'}}, spec: Object.spec{?replicas: optional.none(), ?paused: optional.of(true)}}",
            Mode::Mutating,
            Activation::default()
        ),
        Ok(json!({"metadata": {"labels": {"a": "b"}}, "spec": {"paused": true}}))
    );
    assert_eq!(eval_with("Object{}", Mode::Mutating, Activation::default()), Ok(json!({})));
    assert_eq!(eval_with("Object.a.b.c.d{x: null}", Mode::Mutating, Activation::default()), Ok(json!({"x": null})));
}

#[test]
fn a_mutation_builds_a_json_patch_list() {
    let object = pod(json!([{"name": "a", "resources": {}}, {"name": "b", "resources": {"limits": {"cpu": "1"}}}]));
    let expr = "object.spec.containers.filter(c, !has(c.resources.limits)).map(c, JSONPatch{op: 'add', path: '/spec/containers/' + string(object.spec.containers.indexOf(c)) + '/resources/limits', value: {'memory': '1Gi'}}) + [JSONPatch{op: 'remove', path: '/metadata/labels/app'}, JSONPatch{op: 'copy', from: '/a', path: '/b'}]";
    let got = eval_with(expr, Mode::Mutating, Activation { object: Some(&object), ..Default::default() });
    assert_eq!(
        got,
        Ok(json!([
            {"op": "add", "path": "/spec/containers/0/resources/limits", "value": {"memory": "1Gi"}},
            {"op": "remove", "path": "/metadata/labels/app"},
            {"op": "copy", "from": "/a", "path": "/b"},
        ]))
    );
    errors(
        Mode::Mutating,
        &[("JSONPatch{op: 'add', path: '/a', values: 1}", "no such field values"), ("JSONPatch{op: 1, path: '/a'}", "field op must be a string")],
    );
}

#[test]
fn struct_literals_outside_a_mutation_are_refused() {
    errors(Mode::Validating, &[("Object{spec: 1}", "only allowed in a mutating policy"), ("JSONPatch{op: 'add'}", "only allowed in a mutating policy")]);
    errors(Mode::Mutating, &[("Pod{spec: 1}", "unknown type Pod"), ("Objects{}", "unknown type Objects")]);
}

#[test]
fn hostile_expressions_are_errors_not_panics() {
    let long = format!("'{}'", "a".repeat(MAX_SOURCE_LEN));
    let deep = |open: &str, close: &str, n: usize| format!("{}1{}", open.repeat(n), close.repeat(n));
    let chain = |op: &str, n: usize| vec!["1"; n].join(op);
    let cases = [
        (long, "bytes long"),
        (deep("(", ")", 5000), "nested too deeply"),
        (deep("[", "]", 5000), "nested too deeply"),
        (deep("f(", ")", 5000), "nested too deeply"),
        (deep("[1].map(x, ", ")", 200), "nested"),
        (chain("+", 30000), "nested more than"),
        (chain(" < ", 20000), "nested more than"),
        (format!("x{}", ".a".repeat(30000)), "nested more than"),
        (format!("x{}", "[0]".repeat(30000)), "nested more than"),
        ("unknownFunction(1)".into(), "undeclared reference to 'unknownFunction'"),
        ("'a'.noSuchMethod()".into(), "noSuchMethod"),
        ("1 +".into(), "syntax error"),
        ("{'a': 1, 'a': 2}".into(), "repeated key"),
        ("1 / 0".into(), "division by zero"),
        ("9223372036854775807 + 1".into(), "Overflow"),
        ("[1][5]".into(), "out of bounds"),
        ("object.spec".into(), "no such key"),
        ("timestamp('2020-01-01T00:00:00Z')".into(), "timestamp"),
        ("'\\u0000' + \"\\xff\"".into(), ""),
    ];
    for (source, want) in cases {
        let object = json!({});
        let got = eval_with(&source, Mode::Validating, Activation { object: Some(&object), ..Default::default() });
        let short: String = source.chars().take(40).collect();
        match got {
            Err(e) => assert!(e.contains(want), "{short}: {e}"),
            Ok(v) => assert!(want.is_empty(), "{short}: {v}"),
        }
    }
}

#[test]
fn deep_but_allowed_expressions_evaluate() {
    let sum = vec!["1"; 90].join("+");
    assert_eq!(eval(&sum), Ok(json!(90)));
    let nested = format!("{}1{}", "[".repeat(90), "]".repeat(90));
    assert!(eval(&nested).is_ok());
    let maps = format!("{}1{}", "[1].map(x, ".repeat(20), ")".repeat(20));
    assert!(eval(&maps).is_ok());
}

#[test]
fn deeply_nested_documents_are_refused() {
    let mut doc = json!(1);
    for _ in 0..300 {
        doc = json!([doc]);
    }
    let got = eval_with("object", Mode::Validating, Activation { object: Some(&doc), ..Default::default() });
    assert!(got.as_ref().is_err_and(|e| e.contains("nested deeper")), "{got:?}");
    let got = eval_with("1", Mode::Validating, Activation { object: Some(&doc), ..Default::default() });
    assert_eq!(got, Ok(json!(1)), "a document no expression reads is not converted");
}

#[test]
fn huge_results_are_refused() {
    let got = eval("lists.range(2000).map(i, lists.range(2000).map(j, 'xxxxxxxxxx'))");
    assert!(got.as_ref().is_err_and(|e| e.contains("larger than")), "{:?}", got.map(|_| ()));
}

#[test]
fn results_without_json_form_are_errors() {
    errors(Mode::Validating, &[("0.0 / 0.0", "no JSON representation")]);
}

/// Expected values and errors are those of k8s.io/apiserver v0.37.2's library on the same
/// expressions (ip.go, cidr.go over Go's net/netip).
#[test]
fn ip_and_cidr_read_and_print_addresses_as_upstream() {
    table(&[
        ("ip('1.2.3.4').family()", json!(4)),
        ("ip('::1').family()", json!(6)),
        ("string(ip('2001:0DB8:0:0:0:0:0:1'))", json!("2001:db8::1")),
        ("string(ip('2001:db8:0:0:1:0:0:1'))", json!("2001:db8::1:0:0:1")),
        ("string(ip('0:0:0:0:0:0:0:0'))", json!("::")),
        ("string(ip('1:0:0:2:0:0:0:3'))", json!("1:0:0:2::3")),
        ("string(ip('1:2:3:4:5:6:7:0'))", json!("1:2:3:4:5:6:7:0")),
        ("string(ip('0:1:2:3:4:5:6:7'))", json!("0:1:2:3:4:5:6:7")),
        ("string(ip('1:0:2:3:4:5:6:7'))", json!("1:0:2:3:4:5:6:7")),
        ("string(ip('::1.2.3.4'))", json!("::102:304")),
        ("string(ip('64:ff9b::192.0.2.33'))", json!("64:ff9b::c000:221")),
        ("string(ip('fe80::1'))", json!("fe80::1")),
        ("ip('1.2.3.4') == ip('1.2.3.4')", json!(true)),
        ("ip('1.2.3.4') == ip('1.2.3.5')", json!(false)),
        ("ip('::1') == ip('0:0::1')", json!(true)),
        ("ip('1:2:3:4:5:6:7::')", json!("1:2:3:4:5:6:7:0")),
        ("ip('1:2:3:4:5:6:1.2.3.4') == ip('1:2:3:4:5:6:102:304')", json!(true)),
        ("isIP('1.2.3.4')", json!(true)),
        ("isIP('::ffff:1.2.3.4')", json!(false)),
        ("isIP('fe80::1%eth0')", json!(false)),
        ("isIP('1.2.3')", json!(false)),
        ("ip.isCanonical('127.0.0.1')", json!(true)),
        ("ip.isCanonical('2001:db8::abcd')", json!(true)),
        ("ip.isCanonical('2001:DB8::ABCD')", json!(false)),
        ("ip.isCanonical('2001:db8::0:0:0:abcd')", json!(false)),
        ("ip('0.0.0.0').isUnspecified()", json!(true)),
        ("ip('::').isUnspecified()", json!(true)),
        ("ip('127.0.0.1').isUnspecified()", json!(false)),
        ("ip('127.0.0.1').isLoopback()", json!(true)),
        ("ip('127.1.2.3').isLoopback()", json!(true)),
        ("ip('::1').isLoopback()", json!(true)),
        ("ip('::2').isLoopback()", json!(false)),
        ("ip('224.0.0.1').isLinkLocalMulticast()", json!(true)),
        ("ip('224.0.1.1').isLinkLocalMulticast()", json!(false)),
        ("ip('ff02::1').isLinkLocalMulticast()", json!(true)),
        ("ip('ff12::1').isLinkLocalMulticast()", json!(true)),
        ("ip('ff05::1').isLinkLocalMulticast()", json!(false)),
        ("ip('169.254.1.2').isLinkLocalUnicast()", json!(true)),
        ("ip('169.255.1.2').isLinkLocalUnicast()", json!(false)),
        ("ip('fe80::1').isLinkLocalUnicast()", json!(true)),
        ("ip('febf::1').isLinkLocalUnicast()", json!(true)),
        ("ip('fec0::1').isLinkLocalUnicast()", json!(false)),
        ("ip('192.168.0.1').isGlobalUnicast()", json!(true)),
        ("ip('255.255.255.255').isGlobalUnicast()", json!(false)),
        ("ip('0.0.0.0').isGlobalUnicast()", json!(false)),
        ("ip('224.0.0.1').isGlobalUnicast()", json!(false)),
        ("ip('2001:db8::1').isGlobalUnicast()", json!(true)),
        ("ip('ff00::1').isGlobalUnicast()", json!(false)),
        ("ip('::').isGlobalUnicast()", json!(false)),
        ("ip('::1').isGlobalUnicast()", json!(false)),
        ("ip('fe80::1').isGlobalUnicast()", json!(false)),
        ("cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", json!(true)),
        ("cidr('10.0.0.0/8').containsIP('10.1.2.3')", json!(true)),
        ("cidr('10.0.0.0/8').containsIP('11.1.2.3')", json!(false)),
        ("cidr('10.0.0.0/8').containsIP('::1')", json!(false)),
        ("cidr('::/0').containsIP('1.2.3.4')", json!(false)),
        ("cidr('0.0.0.0/0').containsIP('1.2.3.4')", json!(true)),
        ("cidr('2001:db8::/32').containsIP('2001:db8:1::1')", json!(true)),
        ("cidr('2001:db8::/32').containsIP('2001:db9::1')", json!(false)),
        ("cidr('10.0.0.0/8').containsCIDR(cidr('10.1.0.0/16'))", json!(true)),
        ("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", json!(true)),
        ("cidr('10.0.0.0/8').containsCIDR('10.0.0.0/8')", json!(true)),
        ("cidr('10.0.0.0/16').containsCIDR('10.0.0.0/8')", json!(false)),
        ("cidr('10.0.0.0/8').containsCIDR('11.0.0.0/16')", json!(false)),
        ("cidr('10.0.0.0/8').containsCIDR('::/0')", json!(false)),
        ("cidr('::/0').containsCIDR('::/0')", json!(true)),
        ("string(cidr('10.1.2.3/8').ip())", json!("10.1.2.3")),
        ("string(cidr('10.1.2.3/8').masked())", json!("10.0.0.0/8")),
        ("string(cidr('2001:db8:1:2::/32').masked())", json!("2001:db8::/32")),
        ("string(cidr('10.0.0.0/0').masked())", json!("0.0.0.0/0")),
        ("string(cidr('::1/128').masked())", json!("::1/128")),
        ("cidr('10.1.2.3/8').prefixLength()", json!(8)),
        ("cidr('::/0').prefixLength()", json!(0)),
        ("cidr('10.1.2.3/8') == cidr('10.0.0.0/8')", json!(false)),
        ("cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8')", json!(true)),
        ("cidr('10.0.0.0/8') == cidr('10.0.0.0/9')", json!(false)),
        ("isCIDR('10.0.0.0/8')", json!(true)),
        ("isCIDR('10.0.0.0')", json!(false)),
        ("isCIDR('::ffff:1.2.3.4/120')", json!(false)),
        ("isCIDR('2001:db8::/32')", json!(true)),
        ("string(cidr('2001:DB8::/32'))", json!("2001:db8::/32")),
        ("cidr('10.0.0.0/8').ip() == ip('10.0.0.0')", json!(true)),
        ("ip('1.2.3.4').family() == 4 && cidr('::/0').ip().family() == 6", json!(true)),
        ("[ip('1.2.3.4'), ip('1.2.3.5')].exists(i, i == ip('1.2.3.5'))", json!(true)),
        ("type(ip('1.2.3.4')) == net.IP", json!(true)),
    ]);
    errors(
        Mode::Validating,
        &[
            ("ip('01.2.3.4')", "IP Address \"01.2.3.4\" parse error during conversion from string: ParseAddr(\"01.2.3.4\"): IPv4 field has octet with leading zero"),
            ("ip('1.2.3')", "IP Address \"1.2.3\" parse error during conversion from string: ParseAddr(\"1.2.3\"): IPv4 address too short"),
            ("ip('1.2.3.4.5')", "IP Address \"1.2.3.4.5\" parse error during conversion from string: ParseAddr(\"1.2.3.4.5\"): IPv4 address too long"),
            ("ip('1.2.3.256')", "IP Address \"1.2.3.256\" parse error during conversion from string: ParseAddr(\"1.2.3.256\"): IPv4 field has value >255"),
            ("ip('1..2.3')", "IP Address \"1..2.3\" parse error during conversion from string: ParseAddr(\"1..2.3\"): IPv4 field must have at least one digit (at \".2.3\")"),
            ("ip('.1.2.3')", "IP Address \".1.2.3\" parse error during conversion from string: ParseAddr(\".1.2.3\"): IPv4 field must have at least one digit (at \".1.2.3\")"),
            ("ip('1.2.3.')", "IP Address \"1.2.3.\" parse error during conversion from string: ParseAddr(\"1.2.3.\"): IPv4 field must have at least one digit (at \".\")"),
            ("ip('1.2.3.x')", "IP Address \"1.2.3.x\" parse error during conversion from string: ParseAddr(\"1.2.3.x\"): unexpected character (at \"x\")"),
            ("ip('foo')", "IP Address \"foo\" parse error during conversion from string: ParseAddr(\"foo\"): unable to parse IP"),
            ("ip('')", "IP Address \"\" parse error during conversion from string: ParseAddr(\"\"): unable to parse IP"),
            ("ip('%eth0')", "IP Address \"%eth0\" parse error during conversion from string: ParseAddr(\"%eth0\"): missing IPv6 address"),
            ("ip('fe80::1%eth0')", "IP address \"fe80::1%eth0\" with zone value is not allowed"),
            ("ip('fe80::1%')", "IP Address \"fe80::1%\" parse error during conversion from string: ParseAddr(\"fe80::1%\"): zone must be a non-empty string"),
            ("ip('::ffff:1.2.3.4')", "IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed"),
            ("ip('::ffff:c0a8:1')", "IPv4-mapped IPv6 address \"::ffff:c0a8:1\" is not allowed"),
            ("ip('1:2:3:4:5:6:7:8:9')", "IP Address \"1:2:3:4:5:6:7:8:9\" parse error during conversion from string: ParseAddr(\"1:2:3:4:5:6:7:8:9\"): trailing garbage after address (at \"9\")"),
            ("ip('1::2::3')", "IP Address \"1::2::3\" parse error during conversion from string: ParseAddr(\"1::2::3\"): multiple :: in address (at \":3\")"),
            ("ip('12345::1')", "IP Address \"12345::1\" parse error during conversion from string: ParseAddr(\"12345::1\"): each group must have 4 or less digits (at \"12345::1\")"),
            ("ip('1:2:3:4:5:6:7:8::')", "IP Address \"1:2:3:4:5:6:7:8::\" parse error during conversion from string: ParseAddr(\"1:2:3:4:5:6:7:8::\"): the :: must expand to at least one field of zeros"),
            ("ip('1:2:3')", "IP Address \"1:2:3\" parse error during conversion from string: ParseAddr(\"1:2:3\"): address string too short"),
            ("ip(':1')", "IP Address \":1\" parse error during conversion from string: ParseAddr(\":1\"): each colon-separated field must have at least one digit (at \":1\")"),
            ("ip('1:')", "IP Address \"1:\" parse error during conversion from string: ParseAddr(\"1:\"): colon must be followed by more characters (at \":\")"),
            ("ip('1:2.3.4.5')", "IP Address \"1:2.3.4.5\" parse error during conversion from string: ParseAddr(\"1:2.3.4.5\"): embedded IPv4 address must replace the final 2 fields of the address (at \"2.3.4.5\")"),
            ("ip('1:2:3:4:5:6:7:1.2.3.4')", "IP Address \"1:2:3:4:5:6:7:1.2.3.4\" parse error during conversion from string: ParseAddr(\"1:2:3:4:5:6:7:1.2.3.4\"): embedded IPv4 address must replace the final 2 fields of the address (at \"1.2.3.4\")"),
            ("ip('::1.2.3.04')", "IP Address \"::1.2.3.04\" parse error during conversion from string: ParseAddr(\"::1.2.3.04\"): IPv4 field has octet with leading zero"),
            ("ip('1:g::')", "IP Address \"1:g::\" parse error during conversion from string: ParseAddr(\"1:g::\"): each colon-separated field must have at least one digit (at \"g::\")"),
            ("ip('1.2.3.4 ')", "IP Address \"1.2.3.4 \" parse error during conversion from string: ParseAddr(\"1.2.3.4 \"): unexpected character (at \" \")"),
            ("ip('1.2.3.é')", "IP Address \"1.2.3.é\" parse error during conversion from string: ParseAddr(\"1.2.3.é\"): unexpected character (at \"é\")"),
            ("ip.isCanonical('bad')", "IP Address \"bad\" parse error during conversion from string: ParseAddr(\"bad\"): unable to parse IP"),
            ("cidr('10.0.0.0/8').containsIP('bad')", "no such overload"),
            ("cidr('10.0.0.0/8').containsCIDR('bad')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"bad\"): no '/'"),
            ("cidr('10.0.0.0/8').containsCIDR('::ffff:10.0.0.0/104')", "network address parse error during conversion from string: IPv4-mapped IPv6 address \"::ffff:10.0.0.0/104\" is not allowed"),
            ("cidr('1.2.3.4')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4\"): no '/'"),
            ("cidr('1.2.3.4/33')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4/33\"): prefix length out of range"),
            ("cidr('::/129')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"::/129\"): prefix length out of range"),
            ("cidr('1.2.3.4/-1')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4/-1\"): bad bits after slash: \"-1\""),
            ("cidr('1.2.3.4/+1')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4/+1\"): bad bits after slash: \"+1\""),
            ("cidr('1.2.3.4/08')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4/08\"): bad bits after slash: \"08\""),
            ("cidr('1.2.3.4/')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4/\"): bad bits after slash: \"\""),
            ("cidr('1.2.3.4/x')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4/x\"): bad bits after slash: \"x\""),
            ("cidr('1.2.3.4/99999999999999999999999')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4/99999999999999999999999\"): bad bits after slash: \"99999999999999999999999\""),
            ("cidr('fe80::1%eth0/64')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"fe80::1%eth0/64\"): IPv6 zones cannot be present in a prefix"),
            ("cidr('::ffff:1.2.3.4/120')", "network address parse error during conversion from string: IPv4-mapped IPv6 address \"::ffff:1.2.3.4/120\" is not allowed"),
            ("cidr('::ffff:1.2.3.4/200')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"::ffff:1.2.3.4/200\"): prefix length out of range"),
            ("cidr('1.2.3/8')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3/8\"): ParseAddr(\"1.2.3\"): IPv4 address too short"),
            ("cidr('1.2.3.4/1/2')", "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4/1/2\"): ParseAddr(\"1.2.3.4/1\"): unexpected character (at \"/1\")"),
            ("ip(1)", "ip"),
        ],
    );
}

/// 1.38's `isMask`, on the cases of apiserver v0.38.0-beta.0's own tests and a few more.
#[test]
fn a_cidr_is_a_mask_when_no_bit_is_set_past_its_prefix() {
    table(&[
        ("cidr('192.168.0.0/24').isMask()", json!(true)),
        ("cidr('192.168.0.1/24').isMask()", json!(false)),
        ("cidr('2001:db8::/32').isMask()", json!(true)),
        ("cidr('2001:db8:1::/32').isMask()", json!(false)),
        ("cidr('0.0.0.0/0').isMask() && cidr('10.1.2.3/32').isMask() && cidr('::/0').isMask()", json!(true)),
        ("cidr('10.1.2.3/8').masked().isMask()", json!(true)),
    ]);
}

/// The server quotes a library's error as the library words it: `expression '...' resulted in
/// error: IP Address ...`, nothing before it.
#[test]
fn library_errors_are_upstream_words_alone() {
    let cases = [
        ("ip('1.2.3')", r#"IP Address "1.2.3" parse error during conversion from string: ParseAddr("1.2.3"): IPv4 address too short"#),
        ("cidr('10.0.0.0/8').containsIP('x')", "no such overload"),
        ("url('x')", r#"URL parse error during conversion from string: parse "x": invalid URI for request"#),
        ("semver('1.2')", "No Major.Minor.Patch elements found"),
        ("quantity('1.5').asInteger()", "cannot convert value to integer"),
        ("[].min()", "min called on empty list"),
        ("[].max()", "max called on empty list"),
        ("quantity('nope')", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
        ("quantity('200K')", "unable to parse quantity's suffix"),
    ];
    for (source, want) in cases {
        assert_eq!(eval(source), Err(want.to_owned()), "{source}");
    }
}

#[test]
fn ips_and_cidrs_are_kept_in_variables() {
    let mut e = Evaluation::new(Activation::default());
    e.bind("net", &compile("cidr('10.0.0.0/8')", Mode::Validating).unwrap());
    e.bind("ips", &compile("[ip('10.1.2.3'), ip('192.168.0.1')]", Mode::Validating).unwrap());
    let p = compile("variables.ips.filter(i, variables.net.containsIP(i))", Mode::Validating).unwrap();
    assert_eq!(e.eval(&p), Ok(json!(["10.1.2.3"])));
    assert_eq!(e.eval(&compile("variables.net", Mode::Validating).unwrap()), Ok(json!("10.0.0.0/8")));
}

/// Expected values and errors are those of k8s.io/apiserver v0.37.2's library (urls.go over
/// Go 1.26's net/url) on the same expressions.
#[test]
fn urls_are_read_as_go_reads_a_request_uri() {
    table(&[
        ("url('https://example.com:80/v1/pods?x=1&y=2#frag').getScheme()", json!("https")),
        ("url('https://example.com:80/v1/pods').getHost()", json!("example.com:80")),
        ("url('https://example.com:80/v1/pods').getHostname()", json!("example.com")),
        ("url('https://example.com:80/v1/pods').getPort()", json!("80")),
        ("url('https://example.com/v1/pods').getPort()", json!("")),
        ("url('https://example.com/v1/pods').getEscapedPath()", json!("/v1/pods")),
        ("url('https://example.com/a%20b/c').getEscapedPath()", json!("/a%20b/c")),
        ("url('https://example.com/a b/c').getEscapedPath()", json!("/a%20b/c")),
        ("url('https://example.com/a%2Fb').getEscapedPath()", json!("/a%2Fb")),
        ("url('https://example.com/a%2fb').getEscapedPath()", json!("/a%2fb")),
        ("url('https://example.com').getEscapedPath()", json!("")),
        ("url('https://example.com/p?x=1&x=2&y=a+b&z=%41').getQuery()", json!({"x": ["1", "2"], "y": ["a b"], "z": ["A"]})),
        ("url('https://example.com/p?a;b=1&c=2').getQuery()", json!({"c": ["2"]})),
        ("url('https://example.com/p?a=%zz&c=2').getQuery()", json!({"c": ["2"]})),
        ("url('https://example.com/p?=1&&k').getQuery()", json!({"": ["1"], "k": [""]})),
        ("url('https://example.com/p?').getQuery()", json!({})),
        ("url('https://example.com/p').getQuery()", json!({})),
        ("url('https://[::1]:80/').getHostname()", json!("::1")),
        ("url('https://[::1]:80/').getHost()", json!("[::1]:80")),
        ("url('https://[::1]:80/').getPort()", json!("80")),
        ("url('https://[fe80::1%25eth0]/').getHostname()", json!("fe80::1%eth0")),
        ("url('https://[fe80::1%25eth0]/').getHost()", json!("[fe80::1%eth0]")),
        ("url('https://user:pass@example.com/').getHost()", json!("example.com")),
        ("url('HTTPS://Example.COM/A').getScheme()", json!("https")),
        ("url('HTTPS://Example.COM/A').getHost()", json!("Example.COM")),
        ("url('/absolute/path').getEscapedPath()", json!("/absolute/path")),
        ("url('/absolute/path').getScheme()", json!("")),
        ("url('/absolute/path').getHost()", json!("")),
        ("url('mailto:a@b.c').getScheme()", json!("mailto")),
        ("url('mailto:a@b.c').getEscapedPath()", json!("")),
        ("url('file:///etc/hosts').getHost()", json!("")),
        ("url('file:///etc/hosts').getEscapedPath()", json!("/etc/hosts")),
        ("url('https://example.com/a#b%20c').getEscapedPath()", json!("/a")),
        ("url('https://example.com:8080') == url('https://example.com:8080')", json!(true)),
        ("url('https://example.com:8080') == url('https://example.com:8081')", json!(false)),
        ("url('https://example.com/a%41') == url('https://example.com/aA')", json!(false)),
        ("url('https://example.com/a%2F') == url('https://example.com/a/')", json!(false)),
        ("url('HTTPS://example.com') == url('https://example.com')", json!(true)),
        ("url('https://example.com/')", json!("https://example.com/")),
        ("url('https://u:p@example.com/a b?q#f g')", json!("https://u:p@example.com/a%20b?q#f%20g")),
        ("url('mailto:a@b.c')", json!("mailto:a@b.c")),
        ("url('/a/b')", json!("/a/b")),
        ("url('*')", json!("*")),
        ("isURL('https://example.com')", json!(true)),
        ("isURL('/path')", json!(true)),
        ("isURL('path')", json!(false)),
        ("isURL('')", json!(false)),
        ("isURL('example.com')", json!(false)),
        ("isURL('https://exa mple.com')", json!(false)),
        ("isURL('https://example.com:port')", json!(false)),
        ("isURL('https://example.com:80:90')", json!(false)),
        ("isURL('ftp://example.com:80:90')", json!(true)),
        ("isURL('https://[::1')", json!(false)),
        ("isURL('https://a[::1]')", json!(false)),
        ("isURL('https://[1.2.3.4]/')", json!(false)),
        ("isURL('https://[::1]x/')", json!(false)),
        ("isURL('https://[zz]/')", json!(false)),
        ("isURL('https://ex%41mple.com')", json!(false)),
        ("isURL('https://ex%01mple.com')", json!(false)),
        ("isURL('https://ex%zzmple.com')", json!(false)),
        ("isURL('https://a<b.com')", json!(true)),
        ("isURL('https://us er@x.com')", json!(false)),
        ("isURL('https://%zz@x.com')", json!(false)),
        ("isURL('https://x.com/%zz')", json!(false)),
        ("isURL('https://x.com/a#%zz')", json!(false)),
        ("isURL(':foo')", json!(false)),
        ("isURL('1http://x')", json!(false)),
        ("isURL('http://x/\\u0001')", json!(false)),
        ("isURL('http://x/\\u007f')", json!(false)),
        ("isURL('*')", json!(true)),
        ("isURL('http://x.com?a#b')", json!(true)),
        ("url('ftp://example.com:80:90').getPort()", json!("90")),
        ("url('ftp://example.com:80:90').getHostname()", json!("example.com:80")),
        ("url('https://example.com:/').getPort()", json!("")),
        ("url('https://example.com:/').getHostname()", json!("example.com")),
        ("url('http://a/b/../c').getEscapedPath()", json!("/b/../c")),
        ("url('http://a/%7e').getEscapedPath()", json!("/%7e")),
        ("url('http://a/~').getEscapedPath()", json!("/~")),
        ("url('http://a/é').getEscapedPath()", json!("/%C3%A9")),
        ("url('http://a/%C3%A9').getEscapedPath()", json!("/%C3%A9")),
        ("url('http://a/b;c,d$e').getEscapedPath()", json!("/b;c,d$e")),
        ("url('http://a/b?c?d').getQuery()", json!({"c?d": [""]})),
        ("url('http://[::1]').getHostname()", json!("::1")),
        ("url('http://[::1%25en0]:8/').getPort()", json!("8")),
        ("url('http://x.com/a/b').getQuery() == {}", json!(true)),
    ]);
    errors(
        Mode::Validating,
        &[
            ("url('https://x.com/a#%zz')", "URL parse error during conversion from string: parse \"https://x.com/a#%zz\": invalid URL escape \"%zz\""),
            ("url(':foo')", "URL parse error during conversion from string: parse \":foo\": missing protocol scheme"),
            ("url('')", "URL parse error during conversion from string: parse \"\": empty url"),
            ("url('path')", "URL parse error during conversion from string: parse \"path\": invalid URI for request"),
            (
                "url('https://exa mple.com')",
                "URL parse error during conversion from string: parse \"https://exa mple.com\": invalid character \" \" in host name",
            ),
            (
                "url('https://example.com:port')",
                "URL parse error during conversion from string: parse \"https://example.com:port\": invalid port \":port\" after host",
            ),
            (
                "url('https://example.com:80:90')",
                "URL parse error during conversion from string: parse \"https://example.com:80:90\": invalid port \":80:90\" after host",
            ),
            ("url('https://[::1')", "URL parse error during conversion from string: parse \"https://[::1\": missing ']' in host"),
            ("url('https://a[::1]')", "URL parse error during conversion from string: parse \"https://a[::1]\": invalid IP-literal"),
            ("url('https://[1.2.3.4]/')", "URL parse error during conversion from string: parse \"https://[1.2.3.4]/\": invalid IP-literal"),
            (
                "url('https://[zz]/')",
                "URL parse error during conversion from string: parse \"https://[zz]/\": invalid host: ParseAddr(\"zz\"): unable to parse IP",
            ),
            ("url('https://ex%01mple.com')", "URL parse error during conversion from string: parse \"https://ex%01mple.com\": invalid URL escape \"%01\""),
            ("url('https://us er@x.com')", "URL parse error during conversion from string: parse \"https://us er@x.com\": net/url: invalid userinfo"),
            ("url('https://x.com/%zz')", "URL parse error during conversion from string: parse \"https://x.com/%zz\": invalid URL escape \"%zz\""),
            ("url('https://[::1]x/')", "URL parse error during conversion from string: parse \"https://[::1]x/\": invalid port \"x\" after host"),
            ("url('http://x/\\u0001')", "URL parse error during conversion from string: parse \"http://x/\\x01\": net/url: invalid control character in URL"),
        ],
    );
    let mut e = Evaluation::new(Activation::default());
    e.bind("u", &compile("url('https://example.com:8443/a')", Mode::Validating).unwrap());
    assert_eq!(
        e.eval(&compile("[variables.u.getPort(), string(variables.u == url('https://example.com:8443/a'))]", Mode::Validating).unwrap()),
        Ok(json!(["8443", "true"]))
    );
}

/// Expected values and errors are those of k8s.io/apiserver v0.37.2's library (semverlib.go over
/// blang/semver v4) on the same expressions.
#[test]
fn semver_reads_and_orders_versions_as_upstream() {
    table(&[
        ("semver('1.2.3').major()", json!(1)),
        ("semver('1.2.3').minor()", json!(2)),
        ("semver('1.2.3').patch()", json!(3)),
        ("semver('1.2.3-alpha.1+build.5')", json!("1.2.3-alpha.1+build.5")),
        ("semver('18446744073709551615.0.0').major()", json!(-1)),
        ("semver('1.2.3') == semver('1.2.3+build')", json!(true)),
        ("semver('1.2.3') == semver('1.2.4')", json!(false)),
        ("semver('1.2.3-alpha') == semver('1.2.3')", json!(false)),
        ("semver('1.2.3').isGreaterThan(semver('1.2.2'))", json!(true)),
        ("semver('1.2.3').isGreaterThan(semver('1.2.3'))", json!(false)),
        ("semver('1.2.3').isLessThan(semver('1.10.0'))", json!(true)),
        ("semver('1.2.3').compareTo(semver('1.2.3'))", json!(0)),
        ("semver('1.2.3').compareTo(semver('2.0.0'))", json!(-1)),
        ("semver('2.0.0').compareTo(semver('1.99.99'))", json!(1)),
        ("semver('1.0.0-alpha').compareTo(semver('1.0.0'))", json!(-1)),
        ("semver('1.0.0-alpha').compareTo(semver('1.0.0-alpha.1'))", json!(-1)),
        ("semver('1.0.0-alpha.1').compareTo(semver('1.0.0-alpha.beta'))", json!(-1)),
        ("semver('1.0.0-alpha.beta').compareTo(semver('1.0.0-beta'))", json!(-1)),
        ("semver('1.0.0-beta.2').compareTo(semver('1.0.0-beta.11'))", json!(-1)),
        ("semver('1.0.0-rc.1').compareTo(semver('1.0.0-beta.11'))", json!(1)),
        ("semver('1.0.0-2').compareTo(semver('1.0.0-10'))", json!(-1)),
        ("semver('1.0.0-a').compareTo(semver('1.0.0-B'))", json!(1)),
        ("semver('1.0.0+a').compareTo(semver('1.0.0+b'))", json!(0)),
        ("isSemver('1.2.3')", json!(true)),
        ("isSemver('1.2')", json!(false)),
        ("isSemver('v1.2.3')", json!(false)),
        ("isSemver('01.2.3')", json!(false)),
        ("isSemver('1.2.3-')", json!(false)),
        ("isSemver('1.2.3+')", json!(false)),
        ("isSemver('1.2.3-01')", json!(false)),
        ("isSemver('1.2.3-0a')", json!(true)),
        ("isSemver('1.2.3-a..b')", json!(false)),
        ("isSemver('1.2.3-a_b')", json!(false)),
        ("isSemver('1.2.3+a_b')", json!(false)),
        ("isSemver('1.2.3.4')", json!(false)),
        ("isSemver('')", json!(false)),
        ("isSemver('v1.2.3', true)", json!(true)),
        ("isSemver('1.2', true)", json!(true)),
        ("isSemver('1', true)", json!(true)),
        ("isSemver('v01.002.0003', true)", json!(true)),
        ("isSemver('1.2-alpha', true)", json!(false)),
        ("isSemver('1.2.3', false)", json!(true)),
        ("isSemver('v1.2.3', false)", json!(false)),
        ("semver('v1.2.3', true)", json!("1.2.3")),
        ("semver('1.2', true)", json!("1.2.0")),
        ("semver('1', true)", json!("1.0.0")),
        ("semver('v01.002.0003', true)", json!("1.2.3")),
        ("semver('1.0.00', true)", json!("1.0.0")),
        ("semver('1.2.03-alpha+b', true)", json!("1.2.3-alpha+b")),
        ("semver('v1.2', true).minor()", json!(2)),
        ("semver('1.2.3', false)", json!("1.2.3")),
        ("quantity('1').isGreaterThan(quantity('0')) && semver('1.0.0').isGreaterThan(semver('0.1.0'))", json!(true)),
    ]);
    errors(
        Mode::Validating,
        &[
            ("semver('1.0.0-01', true)", "Numeric PreRelease version must not contain leading zeroes \"01\""),
            ("semver('v', true)", "strconv.ParseUint: parsing \"\": invalid syntax"),
            ("semver('1.x', true)", "Invalid character(s) found in minor number \"x\""),
            ("semver('1.2-alpha', true)", "short version cannot contain PreRelease/Build meta data"),
            ("semver('1.2+b', true)", "short version cannot contain PreRelease/Build meta data"),
            ("semver('')", "Version string empty"),
            ("semver('1.2')", "No Major.Minor.Patch elements found"),
            ("semver('1.2.3.4')", "Invalid character(s) found in patch number \"3.4\""),
            ("semver('v1.2.3')", "Invalid character(s) found in major number \"v1\""),
            ("semver('a.2.3')", "Invalid character(s) found in major number \"a\""),
            ("semver('1.b.3')", "Invalid character(s) found in minor number \"b\""),
            ("semver('1.2.c')", "Invalid character(s) found in patch number \"c\""),
            ("semver('01.2.3')", "Major number must not contain leading zeroes \"01\""),
            ("semver('1.02.3')", "Minor number must not contain leading zeroes \"02\""),
            ("semver('1.2.03')", "Patch number must not contain leading zeroes \"03\""),
            ("semver('.2.3')", "strconv.ParseUint: parsing \"\": invalid syntax"),
            ("semver('1..3')", "strconv.ParseUint: parsing \"\": invalid syntax"),
            ("semver('1.2.')", "strconv.ParseUint: parsing \"\": invalid syntax"),
            ("semver('99999999999999999999.0.0')", "strconv.ParseUint: parsing \"99999999999999999999\": value out of range"),
            ("semver('1.2.3-')", "Prerelease is empty"),
            ("semver('1.2.3-a..b')", "Prerelease is empty"),
            ("semver('1.2.3-01')", "Numeric PreRelease version must not contain leading zeroes \"01\""),
            ("semver('1.2.3-a_b')", "Invalid character(s) found in prerelease \"a_b\""),
            ("semver('1.2.3+')", "Build meta data is empty"),
            ("semver('1.2.3+a..b')", "Build meta data is empty"),
            ("semver('1.2.3+a_b')", "Invalid character(s) found in build meta data \"a_b\""),
            ("semver('1.2.3-99999999999999999999')", "strconv.ParseUint: parsing \"99999999999999999999\": value out of range"),
            ("semver('1.2.3-é')", "Invalid character(s) found in prerelease \"é\""),
        ],
    );
    let mut e = Evaluation::new(Activation::default());
    e.bind("min", &compile("semver('1.30.0')", Mode::Validating).unwrap());
    assert_eq!(e.eval(&compile("semver('v1.31', true).isGreaterThan(variables.min)", Mode::Validating).unwrap()), Ok(json!(true)));
}

/// Expected values are those of k8s.io/apiserver v0.37.2's library (format.go over
/// apimachinery 0.37.2 and kube-openapi's strfmt) on the same expressions; `null` is none.
#[test]
fn named_formats_validate_as_upstream() {
    table(&[
        ("format.dns1123Label().validate('my-name')", json!(null)),
        ("format.dns1123Label().validate('My_Name')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123Label().validate('a-')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123Label().validate('-a')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123Label().validate('1abc')", json!(null)),
        ("format.dns1123Label().validate('')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123Label().validate('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')", json!(["must be no more than 63 characters"])),
        ("format.dns1123Label().validate('a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a')", json!(["must be no more than 63 characters", "must not contain dots"])),
        ("format.dns1123Label().validate('example.com/MyName')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123Label().validate('a/b/c')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123Label().validate('/x')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123Label().validate('x-')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123Label().validate('ab-')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123Label().validate('a.b')", json!(["must not contain dots"])),
        ("format.dns1123Subdomain().validate('my-name')", json!(null)),
        ("format.dns1123Subdomain().validate('My_Name')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123Subdomain().validate('a-')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123Subdomain().validate('-a')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123Subdomain().validate('1abc')", json!(null)),
        ("format.dns1123Subdomain().validate('')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123Subdomain().validate('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')", json!(null)),
        ("format.dns1123Subdomain().validate('a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a')", json!(["must be no more than 253 characters"])),
        ("format.dns1123Subdomain().validate('example.com/MyName')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123Subdomain().validate('a/b/c')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123Subdomain().validate('/x')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123Subdomain().validate('x-')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123Subdomain().validate('ab-')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123Subdomain().validate('a.b')", json!(null)),
        ("format.dns1035Label().validate('my-name')", json!(null)),
        ("format.dns1035Label().validate('My_Name')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035Label().validate('a-')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035Label().validate('-a')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035Label().validate('1abc')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035Label().validate('')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035Label().validate('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')", json!(["must be no more than 63 characters"])),
        ("format.dns1035Label().validate('a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a')", json!(["must be no more than 63 characters", "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035Label().validate('example.com/MyName')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035Label().validate('a/b/c')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035Label().validate('/x')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035Label().validate('x-')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035Label().validate('ab-')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035Label().validate('a.b')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.qualifiedName().validate('my-name')", json!(null)),
        ("format.qualifiedName().validate('My_Name')", json!(null)),
        ("format.qualifiedName().validate('a-')", json!(["name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"])),
        ("format.qualifiedName().validate('-a')", json!(["name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"])),
        ("format.qualifiedName().validate('1abc')", json!(null)),
        ("format.qualifiedName().validate('')", json!(["name part must be non-empty", "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"])),
        ("format.qualifiedName().validate('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')", json!(["name part must be no more than 63 bytes"])),
        ("format.qualifiedName().validate('a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a')", json!(["name part must be no more than 63 bytes"])),
        ("format.qualifiedName().validate('example.com/MyName')", json!(null)),
        ("format.qualifiedName().validate('a/b/c')", json!(["a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"])),
        ("format.qualifiedName().validate('/x')", json!(["prefix part must be non-empty"])),
        ("format.qualifiedName().validate('x-')", json!(["name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"])),
        ("format.qualifiedName().validate('ab-')", json!(["name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"])),
        ("format.qualifiedName().validate('a.b')", json!(null)),
        ("format.dns1123LabelPrefix().validate('my-name')", json!(null)),
        ("format.dns1123LabelPrefix().validate('My_Name')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123LabelPrefix().validate('a-')", json!(null)),
        ("format.dns1123LabelPrefix().validate('-a')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123LabelPrefix().validate('1abc')", json!(null)),
        ("format.dns1123LabelPrefix().validate('')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123LabelPrefix().validate('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')", json!(["must be no more than 63 characters"])),
        ("format.dns1123LabelPrefix().validate('a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a')", json!(["must be no more than 63 characters", "must not contain dots"])),
        ("format.dns1123LabelPrefix().validate('example.com/MyName')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123LabelPrefix().validate('a/b/c')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123LabelPrefix().validate('/x')", json!(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1123LabelPrefix().validate('x-')", json!(null)),
        ("format.dns1123LabelPrefix().validate('ab-')", json!(null)),
        ("format.dns1123LabelPrefix().validate('a.b')", json!(["must not contain dots"])),
        ("format.dns1123SubdomainPrefix().validate('my-name')", json!(null)),
        ("format.dns1123SubdomainPrefix().validate('My_Name')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123SubdomainPrefix().validate('a-')", json!(null)),
        ("format.dns1123SubdomainPrefix().validate('-a')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123SubdomainPrefix().validate('1abc')", json!(null)),
        ("format.dns1123SubdomainPrefix().validate('')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123SubdomainPrefix().validate('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')", json!(null)),
        ("format.dns1123SubdomainPrefix().validate('a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a')", json!(["must be no more than 253 characters"])),
        ("format.dns1123SubdomainPrefix().validate('example.com/MyName')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123SubdomainPrefix().validate('a/b/c')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123SubdomainPrefix().validate('/x')", json!(["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])),
        ("format.dns1123SubdomainPrefix().validate('x-')", json!(null)),
        ("format.dns1123SubdomainPrefix().validate('ab-')", json!(null)),
        ("format.dns1123SubdomainPrefix().validate('a.b')", json!(null)),
        ("format.dns1035LabelPrefix().validate('my-name')", json!(null)),
        ("format.dns1035LabelPrefix().validate('My_Name')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035LabelPrefix().validate('a-')", json!(null)),
        ("format.dns1035LabelPrefix().validate('-a')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035LabelPrefix().validate('1abc')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035LabelPrefix().validate('')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035LabelPrefix().validate('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')", json!(["must be no more than 63 characters"])),
        ("format.dns1035LabelPrefix().validate('a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a')", json!(["must be no more than 63 characters", "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035LabelPrefix().validate('example.com/MyName')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035LabelPrefix().validate('a/b/c')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035LabelPrefix().validate('/x')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.dns1035LabelPrefix().validate('x-')", json!(null)),
        ("format.dns1035LabelPrefix().validate('ab-')", json!(null)),
        ("format.dns1035LabelPrefix().validate('a.b')", json!(["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"])),
        ("format.labelValue().validate('my-name')", json!(null)),
        ("format.labelValue().validate('My_Name')", json!(null)),
        ("format.labelValue().validate('a-')", json!(["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"])),
        ("format.labelValue().validate('-a')", json!(["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"])),
        ("format.labelValue().validate('1abc')", json!(null)),
        ("format.labelValue().validate('')", json!(null)),
        ("format.labelValue().validate('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')", json!(["must be no more than 63 bytes"])),
        ("format.labelValue().validate('a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a')", json!(["must be no more than 63 bytes"])),
        ("format.labelValue().validate('example.com/MyName')", json!(["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"])),
        ("format.labelValue().validate('a/b/c')", json!(["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"])),
        ("format.labelValue().validate('/x')", json!(["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"])),
        ("format.labelValue().validate('x-')", json!(["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"])),
        ("format.labelValue().validate('ab-')", json!(["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"])),
        ("format.labelValue().validate('a.b')", json!(null)),
        ("format.uri().validate('https://x.com')", json!(null)),
        ("format.uri().validate('/p')", json!(null)),
        ("format.uri().validate('p')", json!(["parse \"p\": invalid URI for request"])),
        ("format.uri().validate('')", json!(["parse \"\": empty url"])),
        ("format.uri().validate(':x')", json!(["parse \":x\": missing protocol scheme"])),
        ("format.uuid().validate('123e4567-e89b-12d3-a456-426614174000')", json!(null)),
        ("format.uuid().validate('123E4567E89B12D3A456426614174000')", json!(null)),
        ("format.uuid().validate('123e4567-e89b-12d3-a456')", json!(["does not match the UUID format"])),
        ("format.uuid().validate('g23e4567-e89b-12d3-a456-426614174000')", json!(["does not match the UUID format"])),
        ("format.byte().validate('YWJj')", json!(null)),
        ("format.byte().validate('YWI=')", json!(null)),
        ("format.byte().validate('YQ==')", json!(null)),
        ("format.byte().validate('YQ=')", json!(["invalid base64"])),
        ("format.byte().validate('')", json!(["invalid base64"])),
        ("format.byte().validate('YW J')", json!(["invalid base64"])),
        ("format.byte().validate('YW_j')", json!(["invalid base64"])),
        ("format.byte().validate('YWJjZA==')", json!(null)),
        ("format.date().validate('2024-02-29')", json!(null)),
        ("format.date().validate('2023-02-29')", json!(["invalid date"])),
        ("format.date().validate('2024-13-01')", json!(["invalid date"])),
        ("format.date().validate('2024-1-01')", json!(["invalid date"])),
        ("format.date().validate('2024-01-32')", json!(["invalid date"])),
        ("format.date().validate('2024-04-31')", json!(["invalid date"])),
        ("format.date().validate('0000-01-01')", json!(null)),
        ("format.date().validate('2024-01-01x')", json!(["invalid date"])),
        ("format.date().validate('24-01-01')", json!(["invalid date"])),
        ("format.datetime().validate('2024-01-01T10:00:00Z')", json!(null)),
        ("format.datetime().validate('2024-01-01t10:00:00z')", json!(null)),
        ("format.datetime().validate('2024-01-01T10:00:00.123+01:00')", json!(null)),
        ("format.datetime().validate('2024-01-01T24:00:00Z')", json!(["invalid datetime"])),
        ("format.datetime().validate('2024-01-01T10:60:00Z')", json!(["invalid datetime"])),
        ("format.datetime().validate('2024-01-01T10:00:00')", json!(["invalid datetime"])),
        ("format.datetime().validate('2024-01-01 10:00:00Z')", json!(["invalid datetime"])),
        ("format.datetime().validate('2024-01-01T10:00:00Zt junk')", json!(null)),
        ("format.datetime().validate('2023-02-29T10:00:00Z')", json!(["invalid datetime"])),
        ("format.datetime().validate('2024-01-01T10:00:00x5Z')", json!(null)),
        ("format.datetime().validate('abc')", json!(["invalid datetime"])),
        ("format.named('dns1123Label').hasValue()", json!(true)),
        ("format.named('nope').hasValue()", json!(false)),
        ("format.named('uuid').value().validate('x')", json!(["does not match the UUID format"])),
        ("format.named('labelValue').value() == format.labelValue()", json!(true)),
        ("format.dns1123Label() == format.dns1035Label()", json!(false)),
        ("format.named('dns1123Label').value().validate('ok').hasValue()", json!(false)),
        ("format.dns1123Label().validate('ok')", json!(null)),
    ]);
    errors(Mode::Validating, &[("format.nope()", "format"), ("format.named('dns1123Label').validate('a')", "validate")]);
}

#[test]
fn two_variable_comprehensions_are_named_not_evaluated() {
    let cases = [
        ("[1, 2].all(i, v, v > i)", Some("all")),
        ("[1, 2].exists(i, v, v == 2)", Some("exists")),
        ("[1, 2].existsOne(i, v, v == 2)", Some("existsOne")),
        ("[1, 2].transformList(i, v, v * i)", Some("transformList")),
        ("[1, 2].transformList(i, v, i > 0, v * i)", Some("transformList")),
        ("{'a': 1}.transformMap(k, v, v + 1)", Some("transformMap")),
        ("{'a': 1}.transformMapEntry(k, v, {v: k})", Some("transformMapEntry")),
        ("[1, 2].map(x, [x].all(i, v, v > i))", Some("all")),
        ("[1, 2].all(x, x > 0) && [1].exists(x, x == 1)", None),
        ("all(1, 2, 3)", None),
    ];
    for (source, want) in cases {
        let p = compile(source, Mode::Validating).unwrap();
        assert_eq!(p.two_variable_comprehension(), want, "{source}");
        if want.is_some() {
            assert!(Evaluation::new(Activation::default()).eval(&p).is_err(), "{source}");
        }
    }
}

#[test]
fn evaluations_sharing_conversions_read_the_shared_document_only_where_it_is_the_same_borrow() {
    let shared_object = json!({"metadata": {"name": "shared"}});
    let other_object = json!({"metadata": {"name": "other"}});
    let namespace = json!({"metadata": {"name": "ns"}});
    let shared = Conversions::new(Activation { object: Some(&shared_object), namespace_object: Some(&namespace), ..Default::default() });
    let p = compile("object.metadata.name + '/' + (namespaceObject == null ? 'none' : namespaceObject.metadata.name)", Mode::Validating).unwrap();
    // (what, the evaluation's activation, its answer)
    let rows: [(&str, Activation, &str); 4] = [
        ("the shared documents", Activation { object: Some(&shared_object), namespace_object: Some(&namespace), ..Default::default() }, "shared/ns"),
        ("the shared object, no namespace (match conditions)", Activation { object: Some(&shared_object), ..Default::default() }, "shared/none"),
        ("another object", Activation { object: Some(&other_object), namespace_object: Some(&namespace), ..Default::default() }, "other/ns"),
        (
            "twice the shared: read from one conversion",
            Activation { object: Some(&shared_object), namespace_object: Some(&namespace), ..Default::default() },
            "shared/ns",
        ),
    ];
    for (what, a, want) in rows {
        assert_eq!(Evaluation::sharing(a, &shared).eval(&p), Ok(json!(want)), "{what}");
    }
}
