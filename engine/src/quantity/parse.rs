//! Reading a quantity: Go's `parseQuantityString` split (`scan`), its suffix table
//! (`interpret`), the exact conversion of the digits to nano units, and [`Quantity::parse`]
//! which ties them together.

use std::cmp::Ordering;
use std::sync::Arc;

use super::arith::within_limit;
use super::mag::Mag;
use super::{Cached, Format, Quantity, QuantityError, MAX_DIGITS, NANOS_PER_UNIT};

/// 2^63-1 units, Go's cap for BinarySI values at parse.
const BINARY_CAP_NANOS: u128 = (i64::MAX as u128) * NANOS_PER_UNIT;

impl Quantity {
    /// Parses like `resource.ParseQuantity` (surrounding whitespace trimmed).
    ///
    /// Errors as Go: empty or malformed -> [`QuantityError::FormatWrong`], unknown suffix
    /// (`K`, `e`, `Mi3`, `1ee3`) -> [`QuantityError::Suffix`], digit-less number part on Go's
    /// slow path -> [`QuantityError::Numeric`]; plus [`QuantityError::TooLarge`] for decimal
    /// values of `10^MAX_DIGITS` or more.
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(QuantityError::FormatWrong);
        }
        if s == "0" {
            return Ok(Quantity { cached: Some(Arc::new(Cached { text: s.to_string(), scale: 0 })), ..Quantity::zero() });
        }
        let sc = scan(s.as_bytes())?;
        let (binary_exp, exponent, mut format) = interpret(sc.suffix).ok_or(QuantityError::Suffix)?;
        let num_len = sc.num.len() as i64;
        let denom_len = sc.denom.len() as i64;

        let mut cached_scale = None;
        let go_dec;
        let nanos = match format {
            Format::DecimalSI | Format::DecimalExponent => {
                let scale = i64::from(exponent) - denom_len;
                let fast = 18 - (num_len + denom_len) >= 0 && scale >= -9;
                go_dec = !fast;
                if fast {
                    let first_is_zero = sc.num.first() == Some(&b'0');
                    // Whether the digits, fraction included, end in `000`.
                    let last = sc.num.iter().chain(sc.denom).rev().take(3);
                    let ends_000 = sc.num.len() + sc.denom.len() >= 3 && last.into_iter().all(|&d| d == b'0');
                    if scale % 3 == 0 && !ends_000 && !first_is_zero {
                        cached_scale = Some(scale);
                    }
                } else if !sc.has_digits {
                    return Err(QuantityError::Numeric);
                }
                match small_nanos(sc.num, sc.denom, scale) {
                    Some(nanos) => nanos,
                    None => {
                        let mut digits = sc.num.to_vec();
                        digits.extend_from_slice(sc.denom);
                        digits_to_nanos(&digits, scale)?
                    }
                }
            }
            Format::BinarySI => {
                let fast = denom_len == 0 && 14 - num_len - i64::from(binary_exp) * 3 / 10 >= 0;
                go_dec = !fast;
                if fast {
                    // Go: `value&0x07 != 0` on the numerator (at most 11 digits here).
                    let low = sc.num.iter().fold(0u64, |acc, &d| acc.wrapping_mul(10).wrapping_add(u64::from(d - b'0')));
                    if low & 7 != 0 {
                        cached_scale = Some(0);
                    }
                } else if !sc.has_digits {
                    return Err(QuantityError::Numeric);
                }
                let cap = Mag::from_u128(BINARY_CAP_NANOS);
                let whole = (sc.denom.is_empty()).then(|| small_integer(sc.num)).flatten();
                let nanos = if sc.num.len() > 19 {
                    // At least 10^19 * 1024 > 2^63-1: capped like Go.
                    cap.clone()
                } else if let Some(n) = whole.and_then(|n| n.checked_mul(1u128 << binary_exp)?.checked_mul(NANOS_PER_UNIT)) {
                    // A whole number of units: exact in 128 bits.
                    Mag::from_u128(n)
                } else {
                    let mut digits = sc.num.to_vec();
                    digits.extend_from_slice(sc.denom);
                    let digits = mul_digits_small(strip_leading_zeros(&digits), 1u64 << binary_exp);
                    digits_to_nanos(&digits, -denom_len)?
                };
                let nanos = if nanos.cmp_mag(&cap) == Ordering::Greater { cap } else { nanos };
                if !nanos.is_zero() && nanos.cmp_mag(&Mag::from_u128(NANOS_PER_UNIT)) == Ordering::Less {
                    format = Format::DecimalSI;
                }
                nanos
            }
        };
        let neg = !sc.positive && !nanos.is_zero();
        Ok(Quantity { neg, nanos, format, go_dec, cached: cached_scale.map(|scale| Arc::new(Cached { text: s.to_string(), scale })) })
    }
}

/// The pieces of `<signedNumber><suffix>` as Go's `parseQuantityString` splits them.
struct Scanned<'a> {
    positive: bool,
    /// Integer digits without leading zeros; `"0"` when there are none.
    num: &'a [u8],
    /// Fraction digits (possibly empty).
    denom: &'a [u8],
    suffix: &'a [u8],
    /// Whether Go's `value` (the number text) holds any digit.
    has_digits: bool,
}

fn has_digit(b: &[u8]) -> bool {
    b.iter().any(u8::is_ascii_digit)
}

/// Port of Go's `parseQuantityString` (same split, same `ErrFormatWrong` cases).
fn scan(b: &[u8]) -> Result<Scanned<'_>, QuantityError> {
    const ZERO: &[u8] = b"0";
    let end = b.len();
    let mut positive = true;
    let mut pos = 0;
    match b.first() {
        Some(b'-') => {
            positive = false;
            pos = 1;
        }
        Some(b'+') => pos = 1,
        _ => {}
    }
    // Leading zeros.
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(Scanned { positive, num: ZERO, denom: b"", suffix: b"", has_digits: true });
    }
    // Numerator.
    let num_start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        return Ok(Scanned { positive, num: &b[num_start..], denom: b"", suffix: b"", has_digits: true });
    }
    let num = if pos == num_start { ZERO } else { &b[num_start..pos] };
    // Denominator.
    let mut denom: &[u8] = b"";
    if b[pos] == b'.' {
        pos += 1;
        let denom_start = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &b[denom_start..pos];
        if pos >= end {
            return Ok(Scanned { positive, num, denom, suffix: b"", has_digits: has_digit(b) });
        }
    }
    let has_digits = has_digit(&b[..pos]);
    // Suffix: letters, an optional sign, digits.
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && (b[pos] == b'-' || b[pos] == b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(QuantityError::FormatWrong);
    }
    Ok(Scanned { positive, num, denom, suffix: &b[suffix_start..], has_digits })
}

/// Go's suffix table: `(binary exponent, decimal exponent, format)`; exactly one exponent is
/// used (binary for BinarySI). `e<int>` exponents outside `[-MaxInt32, MaxInt32]` are rejected
/// (upstream #141203; older Go truncated them to int32).
fn interpret(s: &[u8]) -> Option<(u32, i32, Format)> {
    let dec = |e| Some((0, e, Format::DecimalSI));
    let bin = |e| Some((e, 0, Format::BinarySI));
    match s {
        b"" => dec(0),
        b"n" => dec(-9),
        b"u" => dec(-6),
        b"m" => dec(-3),
        b"k" => dec(3),
        b"M" => dec(6),
        b"G" => dec(9),
        b"T" => dec(12),
        b"P" => dec(15),
        b"E" => dec(18),
        b"Ki" => bin(10),
        b"Mi" => bin(20),
        b"Gi" => bin(30),
        b"Ti" => bin(40),
        b"Pi" => bin(50),
        b"Ei" => bin(60),
        [b'e' | b'E', rest @ ..] if !rest.is_empty() => {
            let parsed: i64 = std::str::from_utf8(rest).ok()?.parse().ok()?;
            if parsed.unsigned_abs() > i32::MAX as u64 {
                return None;
            }
            Some((0, parsed as i32, Format::DecimalExponent))
        }
        _ => None,
    }
}

fn strip_leading_zeros(d: &[u8]) -> &[u8] {
    let first = d.iter().position(|&c| c != b'0').unwrap_or(d.len());
    &d[first..]
}

/// Multiplies an ASCII decimal digit string by `m` (at most 2^60), in linear time.
fn mul_digits_small(d: &[u8], m: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(d.len() + 20);
    let mut carry: u128 = 0;
    for &c in d.iter().rev() {
        let t = u128::from(c - b'0') * u128::from(m) + carry;
        out.push(b'0' + (t % 10) as u8);
        carry = t / 10;
    }
    while carry > 0 {
        out.push(b'0' + (carry % 10) as u8);
        carry /= 10;
    }
    out.reverse();
    out
}

/// ASCII digits as a number; the caller keeps them to 19 at most (below 10^19, so no
/// overflow, with room to scale).
fn fold_digits<'a>(digits: impl IntoIterator<Item = &'a u8>) -> u128 {
    digits.into_iter().fold(0u128, |acc, &d| acc * 10 + u128::from(d - b'0'))
}

/// Up to 19 ASCII digits as a number (`None` when longer: they may not fit 64 bits).
fn small_integer(digits: &[u8]) -> Option<u128> {
    (digits.len() <= 19).then(|| fold_digits(digits))
}

/// [`digits_to_nanos`] of the digits `num` then `denom`, in 128-bit arithmetic, when they
/// are at most 19 and the result needs no more than 10^19 times them (`None` otherwise: the
/// general path decides). The common quantities (`100m`, `2`, `1.5`) take this path.
fn small_nanos(num: &[u8], denom: &[u8], scale: i64) -> Option<Mag> {
    let len = num.len() + denom.len();
    if len > 19 {
        return None;
    }
    let shift = scale + 9;
    let digits = num.iter().chain(denom);
    if (0..=19).contains(&shift) {
        return Some(Mag::from_u128(fold_digits(digits) * 10u128.pow(shift as u32)));
    }
    // Below a nano: the digits dropped round the kept ones up.
    let drop = usize::try_from(-shift).ok()?;
    if drop >= len {
        return None;
    }
    let kept = fold_digits(digits.clone().take(len - drop));
    let round = digits.skip(len - drop).any(|&d| d != b'0');
    Some(Mag::from_u128(kept + u128::from(round)))
}

/// `digits * 10^scale`, rounded up (away from zero) to a whole number of nanos.
fn digits_to_nanos(digits: &[u8], scale: i64) -> Result<Mag, QuantityError> {
    let d = strip_leading_zeros(digits);
    if d.is_empty() {
        return Ok(Mag::default());
    }
    if d.len() as i64 + scale > MAX_DIGITS as i64 {
        return Err(QuantityError::TooLarge);
    }
    let shift = scale + 9;
    let nanos = if shift >= 0 {
        let mut m = Mag::from_digits(d);
        m.mul_pow10(shift as usize);
        m
    } else {
        let drop = (-shift) as u64;
        if drop >= d.len() as u64 {
            Mag::from_u128(1)
        } else {
            let keep = d.len() - drop as usize;
            let mut m = Mag::from_digits(&d[..keep]);
            if d[keep..].iter().any(|&c| c != b'0') {
                m.add_small(1);
            }
            m
        }
    };
    if within_limit(&nanos) {
        Ok(nanos)
    } else {
        Err(QuantityError::TooLarge)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantity::tests::q;

    #[test]
    fn small_quantities_in_128_bits_match_the_digit_path() {
        // A fixed-seed generator: digit strings up to 19 long, split anywhere, every scale
        // around the 128-bit path's edges.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut checked = 0;
        for _ in 0..20_000 {
            let len = next(20) as usize;
            let digits: Vec<u8> = (0..len).map(|_| b'0' + if next(4) == 0 { 0 } else { next(10) as u8 }).collect();
            let split = next(len as u64 + 1) as usize;
            let scale = next(50) as i64 - 35;
            let (num, denom) = digits.split_at(split);
            if let Some(fast) = small_nanos(num, denom, scale) {
                let slow = digits_to_nanos(&digits, scale).expect("small values are in range");
                assert!(fast == slow, "{:?}.{:?} scale {scale}", String::from_utf8_lossy(num), String::from_utf8_lossy(denom));
                checked += 1;
            }
        }
        assert!(checked > 10_000, "only {checked} cases took the 128-bit path");
    }

    #[test]
    fn parse_remembers_format() {
        let cases: &[(&str, Format)] = &[
            ("1", Format::DecimalSI),
            ("0", Format::DecimalSI),
            ("1m", Format::DecimalSI),
            ("1E", Format::DecimalSI),
            ("1Ki", Format::BinarySI),
            ("0Ki", Format::BinarySI),
            ("0.5Ki", Format::BinarySI),
            ("1.1Ki", Format::BinarySI),
            ("8Ei", Format::BinarySI),
            ("0.0001Ki", Format::DecimalSI),
            ("-0.0001Ki", Format::DecimalSI),
            ("0.5Ki", Format::BinarySI),
            ("1e3", Format::DecimalExponent),
            ("1E3", Format::DecimalExponent),
            ("1e-10", Format::DecimalExponent),
        ];
        for (input, want) in cases {
            assert_eq!(q(input).format(), *want, "format of {input:?}");
        }
    }

    #[test]
    fn parse_errors() {
        use QuantityError::*;
        let cases: &[(&str, QuantityError)] = &[
            ("", FormatWrong),
            ("   ", FormatWrong),
            ("abc", FormatWrong),
            ("1x", FormatWrong),
            ("1.2.3", FormatWrong),
            ("1 Gi", FormatWrong),
            ("1e3.5", FormatWrong),
            ("1e--5", FormatWrong),
            ("1KiB", FormatWrong),
            ("1e3i", FormatWrong),
            ("1µ", FormatWrong),
            ("µ", FormatWrong),
            ("1G i", FormatWrong),
            ("0x10", FormatWrong),
            ("1_000", FormatWrong),
            ("1,5", FormatWrong),
            ("K", Suffix),
            ("1K", Suffix),
            ("1Kk", Suffix),
            ("1e", Suffix),
            ("1ee3", Suffix),
            ("1Ee3", Suffix),
            ("1Mi3", Suffix),
            ("1i", Suffix),
            ("1mi", Suffix),
            ("1ki", Suffix),
            ("1KI", FormatWrong),
            ("1k3", Suffix),
            ("1kk", Suffix),
            ("1E+", Suffix),
            ("1e-", Suffix),
            ("1-", Suffix),
            ("1+5", Suffix),
            ("--1", Suffix),
            ("1e99999999999999999999", Suffix),
            ("1e4294967296", Suffix),
            ("1e4294967297", Suffix),
            ("1e2147483648", Suffix),
            ("1e-2147483648", Suffix),
            ("1E9223372036854775807", Suffix),
            ("e-10", Numeric),
            ("-e-10", Numeric),
            (".e-10", Numeric),
            ("Pi", Numeric),
            ("-Pi", Numeric),
            (".Ei", Numeric),
            ("1e1000", TooLarge),
            ("-1e1000", TooLarge),
            ("1e2147483647", TooLarge),
        ];
        for (input, want) in cases {
            assert_eq!(Quantity::parse(input).err(), Some(want.clone()), "error for {input:?}");
            assert_eq!(input.parse::<Quantity>().err(), Some(want.clone()), "FromStr for {input:?}");
        }
        assert_eq!(QuantityError::FormatWrong.to_string(), "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
        assert_eq!(QuantityError::Suffix.to_string(), "unable to parse quantity's suffix");
        assert_eq!(QuantityError::Numeric.to_string(), "unable to parse numeric part of quantity");
    }

    #[test]
    fn go_accepts_digitless_numbers_as_zero() {
        for input in ["m", ".", "-", "+", "-.", "+.", "k", "Ki", "Ti", "e5", "e-9", ".m", "-Gi", "E"] {
            let v = q(input);
            assert!(v.is_zero(), "{input:?} is zero");
            assert_eq!(v.to_canonical(), "0");
        }
    }
}
