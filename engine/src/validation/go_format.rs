//! A refused value as the release prints it: JSON (1.34 on) or Go's `%q` and `%#v`.

use k8s_openapi::api::core::v1::ScopeSelector;

/// How a release words a refusal: a refused value that is not a string or a number as Go's
/// `%#v` (`[]core.ResourceQuotaScope{"BestEffort"}`, `resource.Quantity{...}`, before 1.34)
/// or as JSON (`["BestEffort"]`, `"500m"`, apimachinery 0.34 on; a struct of the server's
/// internal types keeps its Go field names,
/// `{"MatchExpressions":[{"ScopeName":"X","Operator":"In","Values":["a"]}]}`); and, before the
/// CrossNamespacePodAffinity scope (1.20), the exists-only operator rule in its old words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValueStyle {
    /// 1.20: Go's `%#v`, and [`reasons::EXISTS_ONLY_OPERATOR_V1_20`](super::reasons::EXISTS_ONLY_OPERATOR_V1_20).
    GoSyntaxV1_20,
    /// 1.21 to 1.33: Go's `%#v`.
    GoSyntax,
    /// 1.34 to 1.37.
    #[default]
    Json,
    /// 1.38 on: worded as [`ValueStyle::Json`]; an integer resource's value is checked
    /// exactly (`integerValuesExact`), where earlier releases read its 64-bit milli value.
    JsonExactIntegers,
}

impl ValueStyle {
    /// The wording of a release, from its rules `invalidValuesAsJson` and
    /// `crossNamespacePodAffinityScope` (the operator rule was reworded with that scope).
    /// The style of a release from its rules `invalidValuesAsJson`,
    /// `crossNamespacePodAffinityScope` and `integerValuesExact`.
    pub fn for_rules(invalid_values_as_json: bool, cross_namespace_pod_affinity_scope: bool, integer_values_exact: bool) -> ValueStyle {
        match ValueStyle::for_release(invalid_values_as_json, cross_namespace_pod_affinity_scope) {
            ValueStyle::Json if integer_values_exact => ValueStyle::JsonExactIntegers,
            style => style,
        }
    }

    pub fn for_release(invalid_values_as_json: bool, cross_namespace_pod_affinity_scope: bool) -> ValueStyle {
        match (invalid_values_as_json, cross_namespace_pod_affinity_scope) {
            (true, _) => ValueStyle::Json,
            (false, true) => ValueStyle::GoSyntax,
            (false, false) => ValueStyle::GoSyntaxV1_20,
        }
    }

    /// A list of strings: `spec.scopes` (`[]core.ResourceQuotaScope`) or `[]string`.
    pub(super) fn strings(self, go_type: &str, items: Option<&[String]>) -> String {
        match self {
            ValueStyle::GoSyntax | ValueStyle::GoSyntaxV1_20 => go_slice(go_type, items),
            ValueStyle::Json | ValueStyle::JsonExactIntegers => json_strings(items),
        }
    }

    /// `spec.scopeSelector`.
    pub(super) fn selector(self, selector: &ScopeSelector) -> String {
        match self {
            ValueStyle::GoSyntax | ValueStyle::GoSyntaxV1_20 => go_scope_selector(selector),
            ValueStyle::Json | ValueStyle::JsonExactIntegers => {
                let exprs = match &selector.match_expressions {
                    None => "null".to_string(),
                    Some(list) => {
                        let items: Vec<String> = list
                            .iter()
                            .map(|r| {
                                format!(
                                    "{{\"ScopeName\":{},\"Operator\":{},\"Values\":{}}}",
                                    json_string(&r.scope_name),
                                    json_string(&r.operator),
                                    json_strings(r.values.as_deref())
                                )
                            })
                            .collect();
                        format!("[{}]", items.join(","))
                    }
                };
                format!("{{\"MatchExpressions\":{exprs}}}")
            }
        }
    }
}

/// A string as Go's `encoding/json` writes it (`<`, `>` and `&` escaped too).
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A list of strings as JSON (`null` for none, as Go marshals a nil slice).
fn json_strings(items: Option<&[String]>) -> String {
    match items {
        None => "null".into(),
        Some(items) => format!("[{}]", items.iter().map(|s| json_string(s)).collect::<Vec<_>>().join(",")),
    }
}

/// Go's `%q` of a string: double-quoted with Go escapes.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => {
                let v = c as u32;
                if v <= 0xffff {
                    out.push_str(&format!("\\u{v:04x}"));
                } else {
                    out.push_str(&format!("\\U{v:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn go_slice(type_name: &str, items: Option<&[String]>) -> String {
    match items {
        None => format!("{type_name}(nil)"),
        Some(items) => {
            let inner: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
            format!("{type_name}{{{}}}", inner.join(", "))
        }
    }
}

/// `%#v` of `[]string`: `[]string{"a", "b"}` or `[]string(nil)`.
pub fn go_string_slice(items: Option<&[String]>) -> String {
    go_slice("[]string", items)
}

/// `%#v` of `spec.scopes`: `[]core.ResourceQuotaScope{"BestEffort"}` or `[]core.ResourceQuotaScope(nil)`.
pub fn go_scopes(scopes: Option<&[String]>) -> String {
    go_slice(SCOPES_TYPE, scopes)
}

/// The Go type of `spec.scopes`, as `%#v` names it.
pub(super) const SCOPES_TYPE: &str = "[]core.ResourceQuotaScope";

/// `%#v` of `spec.scopeSelector`:
/// `core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{core.ScopedResourceSelectorRequirement{ScopeName:"X", Operator:"In", Values:[]string{"a"}}}}`.
pub fn go_scope_selector(selector: &ScopeSelector) -> String {
    const REQ: &str = "core.ScopedResourceSelectorRequirement";
    let exprs = match &selector.match_expressions {
        None => format!("[]{REQ}(nil)"),
        Some(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|r| {
                    format!(
                        "{REQ}{{ScopeName:{}, Operator:{}, Values:{}}}",
                        go_quote(&r.scope_name),
                        go_quote(&r.operator),
                        go_string_slice(r.values.as_deref())
                    )
                })
                .collect();
            format!("[]{REQ}{{{}}}", items.join(", "))
        }
    };
    format!("core.ScopeSelector{{MatchExpressions:{exprs}}}")
}

/// `%#v` of the `resource.Quantity` the server holds for `raw` once API defaulting has rounded
/// it up to milli units, as a release before 1.34 prints it in `must be an integer`:
/// `resource.Quantity{i:resource.int64Amount{value:5, scale:-1}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"DecimalSI"}`.
///
/// apimachinery's parser keeps the number as written, digits and scale (`0.5`: 5 at scale -1),
/// and caches the text in `s` only when it is already canonical (`500m`; not `0.5`, `1.50`
/// nor `5e-1`); rounding to milli units keeps both unless the scale is finer, when it rounds
/// away from zero and drops `s`. `None` when Go would hold the number as an `inf.Dec` (more
/// than 18 digits, finer than nano, a fractional binary suffix, an overflow), whose `%#v` is a
/// pointer's address, or when `raw` is not a quantity.
pub fn go_quantity(raw: &str) -> Option<String> {
    let s = raw.trim();
    if s.is_empty() {
        return None;
    }
    let (positive, num, denom, rest) = split_number(s);
    let (exponent, format) = suffix(rest)?;
    let n_digits = (num.len() + denom.len()) as i64;
    let (mut scale, mantissa, precision) = match format {
        GoFormat::BinarySi if exponent >= 0 && denom.is_empty() && exponent < 63 => {
            (0i64, 1i64 << exponent, 15 - num.len() as i64 - (exponent as f32 * 3.0 / 10.0) as i64 - 1)
        }
        GoFormat::BinarySi => return None,
        _ => (exponent, 1, 18 - n_digits),
    };
    if precision < 0 {
        return None;
    }
    scale -= denom.len() as i64;
    if scale < -9 {
        return None;
    }
    let shifted = format!("{num}{denom}");
    let value: i64 = shifted.parse().ok()?;
    let mut value = value.checked_mul(mantissa)?;
    if !positive {
        value = -value;
    }
    let canonical = match format {
        GoFormat::BinarySi => exponent % 10 == 0 && (shifted.parse::<i64>().ok()? & 7) != 0,
        _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
    };
    let mut cached = if canonical { s } else { "" };
    if scale < -3 {
        // RoundUp(Milli): away from zero, and the cached text dropped.
        cached = "";
        let base = value;
        let mut fraction = false;
        for _ in 0..(-3 - scale) {
            if value % 10 != 0 {
                fraction = true;
            }
            value /= 10;
        }
        if fraction {
            value += base.signum();
        }
        scale = -3;
    }
    Some(format!(
        "resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{}, Format:{}}}",
        go_quote(cached),
        go_quote(format.name())
    ))
}

/// A quantity's text as apimachinery's parser splits it: the sign, the integer digits without
/// leading zeros (`"0"` when none), the fraction's digits, and what follows (the suffix).
fn split_number(s: &str) -> (bool, &str, &str, &str) {
    let b = s.as_bytes();
    let digits_from = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let (positive, mut pos) = match b.first() {
        Some(b'-') => (false, 1),
        Some(b'+') => (true, 1),
        _ => (true, 0),
    };
    while pos < b.len() && b[pos] == b'0' {
        pos += 1;
    }
    let end = digits_from(pos);
    let num = if end == pos { "0" } else { &s[pos..end] };
    pos = end;
    let mut denom = "";
    if pos < b.len() && b[pos] == b'.' {
        let end = digits_from(pos + 1);
        denom = &s[pos + 1..end];
        pos = end;
    }
    (positive, num, denom, &s[pos..])
}

/// A quantity's format, as Go names it.
#[derive(PartialEq, Clone, Copy)]
enum GoFormat {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

impl GoFormat {
    fn name(self) -> &'static str {
        match self {
            GoFormat::DecimalSi => "DecimalSI",
            GoFormat::BinarySi => "BinarySI",
            GoFormat::DecimalExponent => "DecimalExponent",
        }
    }
}

/// A suffix's exponent (of 10, or of 2 for the binary ones) and format; `None`: no suffix.
fn suffix(text: &str) -> Option<(i64, GoFormat)> {
    Some(match text {
        "" => (0, GoFormat::DecimalSi),
        "n" => (-9, GoFormat::DecimalSi),
        "u" => (-6, GoFormat::DecimalSi),
        "m" => (-3, GoFormat::DecimalSi),
        "k" => (3, GoFormat::DecimalSi),
        "M" => (6, GoFormat::DecimalSi),
        "G" => (9, GoFormat::DecimalSi),
        "T" => (12, GoFormat::DecimalSi),
        "P" => (15, GoFormat::DecimalSi),
        "E" => (18, GoFormat::DecimalSi),
        "Ki" => (10, GoFormat::BinarySi),
        "Mi" => (20, GoFormat::BinarySi),
        "Gi" => (30, GoFormat::BinarySi),
        "Ti" => (40, GoFormat::BinarySi),
        "Pi" => (50, GoFormat::BinarySi),
        "Ei" => (60, GoFormat::BinarySi),
        e if e.len() > 1 && (e.starts_with('e') || e.starts_with('E')) => (e[1..].parse().ok()?, GoFormat::DecimalExponent),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_quantity_is_the_struct_a_release_before_1_34_prints() {
        let q = |v: i64, scale: i64, s: &str, f: &str| {
            format!("resource.Quantity{{i:resource.int64Amount{{value:{v}, scale:{scale}}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:\"{s}\", Format:\"{f}\"}}")
        };
        let cases: &[(&str, Option<String>)] = &[
            // As the real 1.20.2 server printed them (tests/conformance-validation).
            ("500m", Some(q(500, -3, "500m", "DecimalSI"))),
            ("0.5", Some(q(5, -1, "", "DecimalSI"))),
            ("1.5", Some(q(15, -1, "", "DecimalSI"))),
            // Canonical text is cached, other spellings are not.
            ("1500m", Some(q(1500, -3, "1500m", "DecimalSI"))),
            ("2.50", Some(q(250, -2, "", "DecimalSI"))),
            ("-500m", Some(q(-500, -3, "-500m", "DecimalSI"))),
            ("5e-1", Some(q(5, -1, "", "DecimalExponent"))),
            // Finer than milli: rounded up, away from zero, the text dropped.
            ("0.0005", Some(q(1, -3, "", "DecimalSI"))),
            ("1500u", Some(q(2, -3, "", "DecimalSI"))),
            ("-0.0015", Some(q(-2, -3, "", "DecimalSI"))),
            // Held as an inf.Dec by Go: no struct we could print.
            ("1.5Ki", None),
            ("0.0000000001", None),
            ("1234567890123456789m", None),
            ("abc", None),
        ];
        for (raw, want) in cases {
            assert_eq!(&go_quantity(raw), want, "{raw}");
        }
    }

    #[test]
    fn go_rendering() {
        assert_eq!(go_quote("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\x01é\"");
        assert_eq!(go_scopes(None), "[]core.ResourceQuotaScope(nil)");
        assert_eq!(go_scopes(Some(&[])), "[]core.ResourceQuotaScope{}");
        assert_eq!(go_string_slice(Some(&["a".into(), "b".into()])), "[]string{\"a\", \"b\"}");
        assert_eq!(
            go_scope_selector(&ScopeSelector { match_expressions: None }),
            "core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement(nil)}"
        );
        assert_eq!(json_string("<a&\"\\\n\u{1}>"), "\"\\u003ca\\u0026\\\"\\\\\\n\\u0001\\u003e\"");
    }
}
