//! Tests of the types, constructors, comparison and serde in `mod.rs`, and the tests that span
//! parsing, printing and arithmetic at once (upstream tables, limits, exhaustive round trips).

use super::*;

/// Parses `s`, panicking with the error if it is not a quantity (shared by every test module).
pub(super) fn q(s: &str) -> Quantity {
    match Quantity::parse(s) {
        Ok(v) => v,
        Err(e) => panic!("parse({s:?}) failed: {e}"),
    }
}

/// Expectations taken from upstream's quantity_test.go (TestQuantityParse,
/// TestQuantityParseEmit, TestQuantityString, TestQuantityRoundUp, TestMilliNewSet,
/// TestNegativeValueRoundsAwayFromZero).
#[test]
fn upstream_test_tables() {
    // (input, equal value, format)
    let parsed: &[(&str, &str, Format)] = &[
        ("0n", "0", Format::DecimalSI),
        ("0Ti", "0", Format::BinarySI),
        ("8Ki", "8192", Format::BinarySI),
        ("3Ei", "3458764513820540928", Format::BinarySI),
        ("100Ti", "109951162777600", Format::BinarySI),
        ("50k", "50000", Format::DecimalSI),
        ("300T", "3e14", Format::DecimalSI),
        ("1E-3", "1m", Format::DecimalExponent),
        ("1e14", "100T", Format::DecimalExponent),
        ("100.035k", "100035", Format::DecimalSI),
        ("0.0005k", "500m", Format::DecimalSI),
        ("0.00050k", "500m", Format::DecimalSI),
        ("0.05000", "50m", Format::DecimalSI),
        ("0.5e-2", "5m", Format::DecimalExponent),
        ("10.035M", "10035000", Format::DecimalSI),
        ("1.3E+6", "1300000", Format::DecimalExponent),
        ("1.40e9", "1400M", Format::DecimalExponent),
        ("1.53E12", "1530G", Format::DecimalExponent),
        ("1.7E18", "1700P", Format::DecimalExponent),
        ("7.123456M", "7123456", Format::DecimalSI),
        ("6.987654321G", "6987654321", Format::DecimalSI),
        ("1.01E", "1010P", Format::DecimalSI),
        ("3.001n", "4n", Format::DecimalSI),
        ("1.1E-9", "2n", Format::DecimalExponent),
        ("0.0000000005", "1n", Format::DecimalSI),
        ("0.00000000050", "1n", Format::DecimalSI),
        ("0.5e-9", "1n", Format::DecimalExponent),
        ("0.9n", "1n", Format::DecimalSI),
        ("0.00000012345", "124n", Format::DecimalSI),
        ("0.00000012354", "124n", Format::DecimalSI),
        ("9Ei", "9223372036854775807", Format::BinarySI),
        ("9223372036854775807Ki", "9223372036854775807", Format::BinarySI),
        ("12E", "12e18", Format::DecimalSI),
        ("100.035Ki", "102435.84", Format::BinarySI),
        ("0.5Mi", "524288", Format::BinarySI),
        ("0.05Gi", "53687091.2", Format::BinarySI),
        ("0.025Ti", "27487790694.4", Format::BinarySI),
        ("0.000000000001Ki", "2n", Format::DecimalSI),
        (".001", "1m", Format::DecimalSI),
        (".0001k", "100m", Format::DecimalSI),
        ("1.", "1", Format::DecimalSI),
        ("1.G", "1G", Format::DecimalSI),
    ];
    for (input, value, format) in parsed {
        for prefix in ["", "+", "-"] {
            let got = q(&format!("{prefix}{input}"));
            let want = if prefix == "-" { q(value).neg() } else { q(value) };
            assert_eq!(got, want, "value of {prefix}{input}");
            assert_eq!(got.format(), *format, "format of {prefix}{input}");
        }
    }
    for invalid in ["1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", "1e4294967297"] {
        assert!(Quantity::parse(invalid).is_err(), "{invalid:?} is rejected");
    }
    // Canonical strings are kept verbatim; alternates canonicalize to them.
    let strings: &[(&str, &str)] = &[
        ("1Gi", "1024Mi"),
        ("300Mi", "307200Ki"),
        ("6Ki", ""),
        ("1001Gi", "1025024Mi"),
        ("1Ti", "1024Gi"),
        ("5", "5000m"),
        ("500m", "0.5"),
        ("1G", "1000M"),
        ("1G", "0.001T"),
        ("1m", "1000u"),
        ("80m", ""),
        ("1080m", "1.08"),
        ("1080m", "1080000000n"),
        ("300M", ""),
        ("1T", ""),
        ("1E", ""),
        ("1e21", "1000E"),
        ("5e21", "5000E"),
        ("1e24", "1000000E"),
        ("10e69", ""),
        ("20e69", ""),
        ("1e72", ""),
        ("1234567M", ""),
        ("1234567m", ""),
        ("3k", ""),
        ("1025", ""),
        ("0", "00"),
        ("1e9", ".001e12"),
        ("1e-3", "0.001e0"),
        ("1e-9", "1000e-12"),
        ("80e-3", ""),
        ("300e6", ""),
        ("1e12", ""),
        ("3e3", ""),
        ("1n", ""),
        ("80n", ""),
        ("1080n", ""),
        ("1u", ""),
        ("80u", ""),
        ("1080u", ""),
    ];
    for (canonical, alternate) in strings {
        assert_eq!(q(canonical).to_canonical(), *canonical, "{canonical} is kept");
        if !alternate.is_empty() {
            assert_eq!(q(alternate).to_canonical(), *canonical, "{alternate} canonicalizes");
        }
        if *canonical != "0" {
            assert_eq!(q(canonical).neg().to_canonical(), format!("-{canonical}"));
        }
    }
    let emit: &[(&str, &str)] = &[
        ("1Ki", "1Ki"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
    ];
    for (input, want) in emit {
        assert_eq!(q(input).to_canonical(), *want, "{input}");
        assert_eq!(q(&format!("-{input}")).to_canonical(), format!("-{want}"), "-{input}");
    }
    // RoundUp of 9.01 and -9.01.
    let rounds: &[(i32, &str)] = &[(-3, "9.01"), (-2, "9.01"), (-1, "9.1"), (0, "10"), (1, "10"), (2, "100")];
    for (scale, want) in rounds {
        assert_eq!(q("9.01").round_up(*scale), q(want), "RoundUp({scale}) of 9.01");
        assert_eq!(q("-9.01").round_up(*scale), q(want).neg(), "RoundUp({scale}) of -9.01");
    }
    assert_eq!(q("9.01").neg().to_canonical(), "-9010m");
    assert_eq!(Quantity::from_milli(1024, Format::BinarySI).to_canonical(), "1024m");
    assert_eq!(Quantity::from_milli(1024 * 1024, Format::BinarySI).to_canonical(), "1048576m");
    assert_eq!(Quantity::from_milli(1234000, Format::DecimalSI).to_canonical(), "1234");
    assert_eq!(Quantity::from_int(1234000, Format::DecimalSI).to_canonical(), "1234k");
    assert_eq!(Quantity::from_int(1024 * 1024, Format::BinarySI).to_canonical(), "1Mi");
    let values: &[(&str, i64, i64)] = &[
        ("-.484785E-7466", -1, -1),
        (".484785E-7466", 1, 1),
        ("-.484785E-1", -1, -49),
        (".484785E-1", 1, 49),
        ("-0.0005", -1, -1),
        ("0.0005", 1, 1),
        ("-9.5000000001Gi", -10200547329, -10200547328108),
        ("9.5000000001Gi", 10200547329, 10200547328108),
    ];
    for (input, value, milli) in values {
        assert_eq!((q(input).value(), q(input).milli_value()), (*value, *milli), "{input}");
    }
    assert_eq!(q("10000T").cmp(&q("100Gi")), Ordering::Greater);
}

#[test]
fn cmp_across_formats() {
    let equal: &[(&str, &str)] = &[
        ("1k", "1000"),
        ("1k", "1e3"),
        ("1000", "1000000m"),
        ("1.5Gi", "1536Mi"),
        ("1Ki", "1024"),
        ("0", "-0"),
        ("0", "0Ki"),
        ("0", "0e9"),
        ("1e-9", "1n"),
        ("1e-10", "1n"),
        ("0.5Ki", "512"),
        ("1.", "1"),
        ("+1", "1"),
        ("01", "1"),
        ("1E", "1e18"),
        ("8Ei", "9223372036854775807"),
    ];
    for (a, b) in equal {
        assert_eq!(q(a).cmp(&q(b)), Ordering::Equal, "{a} == {b}");
        assert_eq!(q(a), q(b));
    }
    let less: &[(&str, &str)] = &[
        ("1k", "1Ki"),
        ("1G", "1Gi"),
        ("-1", "0"),
        ("0", "1n"),
        ("-1n", "0"),
        ("-2", "-1"),
        ("-1Gi", "-1G"),
        ("999m", "1"),
        ("999999999n", "1"),
        ("8Ei", "1e100"),
        ("-1e100", "-8Ei"),
        ("1e998", "1e999"),
        ("1023", "1Ki"),
        ("1.1Ki", "1127"),
    ];
    for (a, b) in less {
        assert_eq!(q(a).cmp(&q(b)), Ordering::Less, "{a} < {b}");
        assert_eq!(q(b).cmp(&q(a)), Ordering::Greater, "{b} > {a}");
        assert!(q(a) < q(b));
    }
    let mut v: Vec<Quantity> = ["1Gi", "-1", "1G", "0", "500m", "1e3", "1Ki", "1n"].iter().map(|s| q(s)).collect();
    v.sort();
    let printed: Vec<String> = v.iter().map(Quantity::to_canonical).collect();
    assert_eq!(printed, ["-1", "0", "1n", "500m", "1e3", "1Ki", "1G", "1Gi"]);
}

#[test]
fn identical_means_equal_value_format_and_kept_text() {
    // (a, b, identical): equal values written differently are not identical.
    let cases: &[(&str, &str, bool)] = &[
        ("1", "1", true),
        ("500m", "500m", true),
        ("1Gi", "1Gi", true),
        ("1k", "1000", false),
        // Neither keeps its text (not canonical), but Go holds 1.5Gi as an inf.Dec (a fraction
        // with a binary suffix) and 1536Mi as an int64Amount.
        ("1.5Gi", "1536Mi", false),
        ("1.5Gi", "1.5Gi", true),
        ("1", "1.0", false),
        ("0", "-0", false),
        ("1", "2", false),
    ];
    for (a, b, want) in cases {
        assert_eq!(q(a).is_identical(&q(b)), *want, "{a} vs {b}");
        assert!(q(a).is_identical(&q(a).clone()), "{a} and its clone");
    }
}

#[test]
fn sign_is_zero_and_is_integer() {
    let cases: &[(&str, i32, bool, bool)] = &[
        ("0", 0, true, true),
        ("-0", 0, true, true),
        ("0Ki", 0, true, true),
        ("1", 1, false, true),
        ("-1", -1, false, true),
        ("1n", 1, false, false),
        ("-1n", -1, false, false),
        ("1.5", 1, false, false),
        ("1.5Ki", 1, false, true),
        ("1.1Ki", 1, false, false),
        ("1e-3", 1, false, false),
        ("1e3", 1, false, true),
        ("1000m", 1, false, true),
    ];
    for (input, sign, zero, integer) in cases {
        assert_eq!(q(input).sign(), *sign, "sign of {input:?}");
        assert_eq!(q(input).is_zero(), *zero, "is_zero of {input:?}");
        assert_eq!(q(input).is_integer(), *integer, "is_integer of {input:?}");
    }
}

#[test]
fn from_int_and_from_milli_like_new_quantity() {
    let cases: &[(Quantity, &str, Format)] = &[
        (Quantity::from_int(0, Format::BinarySI), "0", Format::BinarySI),
        (Quantity::from_int(1024, Format::BinarySI), "1Ki", Format::BinarySI),
        (Quantity::from_int(1000, Format::BinarySI), "1k", Format::BinarySI),
        (Quantity::from_int(-2048, Format::BinarySI), "-2Ki", Format::BinarySI),
        (Quantity::from_int(1000, Format::DecimalSI), "1k", Format::DecimalSI),
        (Quantity::from_int(1001, Format::DecimalSI), "1001", Format::DecimalSI),
        (Quantity::from_int(5, Format::DecimalExponent), "5", Format::DecimalExponent),
        (Quantity::from_int(5000, Format::DecimalExponent), "5e3", Format::DecimalExponent),
        (Quantity::from_int(i64::MIN, Format::DecimalSI), "-9223372036854775808", Format::DecimalSI),
        (Quantity::from_int(i64::MAX, Format::BinarySI), "9223372036854775807", Format::BinarySI),
        (Quantity::from_milli(1500, Format::DecimalSI), "1500m", Format::DecimalSI),
        (Quantity::from_milli(1000, Format::DecimalSI), "1", Format::DecimalSI),
        (Quantity::from_milli(-250, Format::DecimalSI), "-250m", Format::DecimalSI),
        (Quantity::from_milli(500, Format::BinarySI), "500m", Format::BinarySI),
        (Quantity::from_milli(1536000, Format::BinarySI), "1536", Format::BinarySI),
        (Quantity::from_milli(2048000, Format::BinarySI), "2Ki", Format::BinarySI),
        (Quantity::from_milli(5, Format::DecimalExponent), "5e-3", Format::DecimalExponent),
        (Quantity::from_milli(i64::MIN, Format::DecimalSI), "-9223372036854775808m", Format::DecimalSI),
    ];
    for (quantity, want, format) in cases {
        assert_eq!(quantity.to_canonical(), *want);
        assert_eq!(quantity.format(), *format, "format of {want}");
    }
    assert_eq!(Quantity::from_milli(i64::MIN, Format::DecimalSI).milli_value(), i64::MIN);
    assert_eq!(Quantity::from_int(7, Format::DecimalSI), q("7"));
    assert_eq!(Quantity::zero().to_canonical(), "0");
    assert_eq!(Quantity::zero().format(), Format::DecimalSI);
    assert_eq!(Quantity::default(), Quantity::zero());
}

#[test]
fn limits_saturate_or_are_checked() {
    let big = q("9e999");
    assert_eq!(big.to_canonical(), "9e999");
    assert!(big.checked_add(&big).is_none());
    assert!(big.neg().checked_sub(&big).is_none());
    let sat = big.add(&big);
    assert_eq!(sat.sign(), 1);
    assert!(sat > big);
    assert_eq!(sat.add(&q("1")), sat);
    assert_eq!(big.neg().sub(&big).sign(), -1);
    assert_eq!(q("1e999").add(&q("1e999")).to_canonical(), "2e999");
    assert_eq!(q("1e999").add(&q("1n")).sub(&q("1e999")).to_canonical(), "1e-9");
    // 1000 integer digits parse; 1001 do not.
    assert!(Quantity::parse(&format!("9{}", "9".repeat(999))).is_ok());
    assert_eq!(Quantity::parse(&format!("1{}", "0".repeat(1000))).err(), Some(QuantityError::TooLarge));
    // Extra precision is never "too large": it rounds up to nano.
    assert_eq!(q(&format!("0.{}1", "0".repeat(100_000))).to_canonical(), "1n");
    assert_eq!(q(&format!("1.{}1Ki", "0".repeat(100_000))).to_canonical(), "1024000000001n");
    let padded = format!("{}1", "0".repeat(100_000));
    assert_eq!(q(&padded), q("1"));
    assert!(q(&padded).to_canonical() == padded, "Go keeps the canonical-looking original");
    assert_eq!(q(&format!("{}Ki", "9".repeat(100_000))).to_canonical(), "9223372036854775807");
    assert_eq!(q(&"9".repeat(1000)).value(), i64::MAX);
}

#[test]
fn deserialize_strings_numbers_and_null() {
    let cases: &[(&str, &str)] = &[
        (r#""1Gi""#, "1Gi"),
        (r#"" 500m ""#, "500m"),
        (r#""1.5""#, "1500m"),
        ("1024", "1024"),
        ("1000", "1k"),
        ("-1", "-1"),
        ("0", "0"),
        ("18446744073709551615", "18446744073709551615"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("1.5", "1500m"),
        ("0.5", "500m"),
        ("1e3", "1k"),
        ("1.0", "1"),
        ("-0.0", "0"),
        ("1e20", "100E"),
        ("1e21", "1e+21"),
        ("1.5e300", "1500e297"),
        ("1e-6", "1u"),
        ("1e-7", "100e-9"),
        ("1.5e-7", "150e-9"),
        ("null", "0"),
    ];
    for (json, want) in cases {
        let v: Quantity = match serde_json::from_str(json) {
            Ok(v) => v,
            Err(e) => panic!("deserialize {json}: {e}"),
        };
        assert_eq!(v.to_canonical(), *want, "deserialize {json}");
    }
    for bad in [r#""1K""#, r#""""#, "true", "[]", "{}", r#""1e1000""#] {
        assert!(serde_json::from_str::<Quantity>(bad).is_err(), "{bad} is rejected");
    }
    let map: std::collections::BTreeMap<String, Quantity> = serde_json::from_str(r#"{"cpu": "500m", "memory": "1Gi", "pods": 10}"#).unwrap_or_default();
    assert_eq!(map.len(), 3);
    assert_eq!(map["pods"].to_canonical(), "10");
    let opt: Option<Quantity> = serde_json::from_str("null").unwrap_or(Some(q("1")));
    assert!(opt.is_none());
}

#[test]
fn deserialize_arbitrary_precision_number_uses_exact_text() {
    use serde::de::value::{Error, MapDeserializer};
    use serde::Deserialize;
    let cases: &[(&str, &str)] = &[("1e3", "1e3"), ("1.50", "1500m"), ("1000", "1k"), ("-0", "0")];
    for (token, want) in cases {
        let entries = vec![("$serde_json::private::Number", *token)];
        let d = MapDeserializer::<_, Error>::new(entries.into_iter());
        let v = Quantity::deserialize(d).map(|v| v.to_canonical());
        assert_eq!(v.ok().as_deref(), Some(*want), "number token {token}");
    }
    let entries = vec![("cpu", "1")];
    let d = MapDeserializer::<_, Error>::new(entries.into_iter());
    assert!(Quantity::deserialize(d).is_err(), "an ordinary map is not a quantity");
}

#[test]
fn serialize_prints_canonical_string() {
    let cases: &[(&str, &str)] = &[("1Gi", r#""1Gi""#), ("1000", r#""1k""#), ("+1", r#""+1""#), ("0.5", r#""500m""#)];
    for (input, want) in cases {
        assert_eq!(serde_json::to_string(&q(input)).ok().as_deref(), Some(*want));
    }
    let back: Quantity = serde_json::from_str(r#""1536Mi""#).unwrap_or_default();
    assert_eq!(back, q("1.5Gi"));
    assert_eq!(format!("{:?}", q("1.5Gi")), "Quantity(1536Mi)");
}

/// Every string of up to 4 characters over a quantity-ish alphabet: parse never panics, and
/// every accepted value survives all operations and re-parses to itself from its printed form.
#[test]
fn exhaustive_short_strings_never_panic_and_round_trip() {
    let alphabet: &[u8] = b"0159.+-eEiKkmMGPn x";
    let mut inputs: Vec<Vec<u8>> = vec![Vec::new()];
    let mut frontier: Vec<Vec<u8>> = vec![Vec::new()];
    for _ in 0..4 {
        let mut next = Vec::new();
        for prefix in &frontier {
            for &c in alphabet {
                let mut s = prefix.clone();
                s.push(c);
                next.push(s);
            }
        }
        inputs.extend(next.iter().cloned());
        frontier = next;
    }
    let one = q("1");
    let mut accepted = 0;
    for bytes in &inputs {
        let s = std::str::from_utf8(bytes).unwrap_or("");
        let Ok(v) = Quantity::parse(s) else { continue };
        accepted += 1;
        let printed = v.to_canonical();
        let _ = (v.value(), v.milli_value(), v.is_integer(), v.sign(), v.format());
        let _ = (v.add(&one), v.sub(&v), v.neg(), v.round_up(-3), v.round_up(0), v.round_up(3));
        assert_eq!(v.sub(&v).sign(), 0, "{s:?} - itself");
        assert_eq!(v.add(&v.neg()), Quantity::zero());
        let back = Quantity::parse(&printed).unwrap_or_else(|e| panic!("{s:?} printed {printed:?}: {e}"));
        assert_eq!(back, v, "{s:?} printed as {printed:?}");
        assert_eq!(back.to_canonical(), printed, "{printed:?} is stable");
        let recomputed = v.add(&Quantity::zero());
        let back = Quantity::parse(&recomputed.to_canonical()).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        assert_eq!(back, v, "{s:?} recomputed as {recomputed}");
    }
    assert!(accepted > 1000, "only {accepted} accepted");
}

#[test]
fn a_quantity_stays_small() {
    // Every resource list is a B-tree of quantities: a Pod of 100,000 containers with
    // LimitRange defaults holds 200,000 of its nodes, whose size follows this one.
    assert!(std::mem::size_of::<Quantity>() <= 40, "{} bytes", std::mem::size_of::<Quantity>());
}
