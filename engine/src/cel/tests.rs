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

/// Each expression fails, with an error containing the text beside it.
fn errors(cases: &[(&str, &str)]) {
    let mut wrong = Vec::new();
    for (source, want) in cases {
        match eval(source) {
            Err(e) if e.contains(want) => {}
            got => wrong.push(format!("{source}: got {got:?}, want an error with {want:?}")),
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn explore() {
    for s in [
        "has({'a': 1}.a)", "[1,2].all(x, x > 0)", "[1,2].exists(x, x > 1)", "[1,2].exists_one(x, x > 1)",
        "[1,2].map(x, x * 2)", "[1,2,3].map(x, x > 1, x * 2)", "[1,2].filter(x, x > 1)", "size([1])", "size('ab')", "'ab'.size()",
        "1 in [1]", "'a' in {'a': 1}", "'abc'.startsWith('a')", "'abc'.endsWith('c')", "'abc'.contains('b')", "'abc'.matches('^a.c$')",
        "true ? 1 : 2", "1 < 1.5", "1 == 1.0", "2u > 1", "1 == 1u", "{'a': 1}.?a.orValue(5)", "{'a': 1}.?b.orValue(5)", "optional.of(1).hasValue()",
        "optional.none().hasValue()", "optional.of(2).value()", "[1, 2].sum()", "'a,b'.split(',')", "'%s-%d'.format(['a', 1])",
        "{'a': 1}.all(k, k == 'a')", "[1,2].all(i, v, v > i)", "math.greatest(1, 2)", "'x'.charAt(0)", "['a','b'].join('-')",
        "[3,1,2].sort()", "lists.range(3)", "type(1) == int", "string(1)", "int('2')", "double(1)", "dyn(1) == 1", "[1, 2][1]",
        "{'a': {'b': 1}}.a.b", "null == null", "b'abc'", "1 / 0", "'abc'.substring(1)", "'  a '.trim()", "'Ab'.lowerAscii()",
        "sets.contains([1,2], [1])", "'abc'.find('b.')", "'a1b2'.findAll('[0-9]')", "'a1b2'.findAll('[0-9]', 1)",
        "[1, 2, 1].lastIndexOf(1)", "[1,2].indexOf(2)", "[1,3,2].isSorted()", "[2,1].min()", "[2,1].max()",
        "quantity('1Gi')", "quantity('1Gi').isGreaterThan(quantity('1G'))", "{1: 'a'}", "[1,2].map(x, {'v': x})",
        "optional.none()", "{'a': 1}[?'a']", "has(x.y)", "unknownFn(1)", "[[1]].flatten()", "1.5", "-1", "18446744073709551615u",
        "{'a': 1} == {'a': 1}", "[1] + [2]", "'a' + 'b'", "timestamp('2020-01-01T00:00:00Z')", "duration('1s')",
        "'a'.reverse()", "strings.quote('a')", "[1,1].distinct()", "[1,2,3].slice(1,2)",
    ] {
        let r = std::panic::catch_unwind(|| eval(s));
        println!("{s:50} => {r:?}");
    }
}

#[test]
fn probe_depth() {
    let Ok(case) = std::env::var("CEL_PROBE") else { return };
    let (kind, n) = case.split_once(':').unwrap();
    let n: usize = n.parse().unwrap();
    let src = match kind {
        "plus" => vec!["1"; n].join("+"),
        "and" => vec!["true"; n].join("&&"),
        "select" => format!("x{}", ".a".repeat(n)),
        "neg" => format!("{}1", "-".repeat(n)),
        "not" => format!("{}true", "!".repeat(n)),
        "call" => format!("{}1{}", "f(".repeat(n), ")".repeat(n)),
        "size" => format!("{}1{}", "size(".repeat(n), ")".repeat(n)),
        "list" => format!("{}1{}", "[".repeat(n), "]".repeat(n)),
        "compr" => format!("{}1{}", "[1].map(x,".repeat(n), ")".repeat(n)),
        "index" => format!("x{}", "[0]".repeat(n)),
        "method" => format!("x{}", ".f()".repeat(n)),
        "ternary" => format!("{}1", "true ? 1 : ".repeat(n)),
        _ => panic!(),
    };
    let r = compile(&src, Mode::Validating).map(|p| Evaluation::new(Activation::default()).eval(&p));
    println!("{kind}:{n} => {:?}", r.map(|r| r.map(|_| ())).map_err(|e| e.chars().take(100).collect::<String>()));
}
