//! Exact Kubernetes quantities (`resource.Quantity`): parse, compare, add, subtract and print
//! them exactly as kube-apiserver does. No floating point anywhere.
//!
//! # Representation
//!
//! A quantity is a sign plus an arbitrary-precision count of **nano units** (`|value| * 10^9`,
//! a small built-in big integer), the [`Format`] it prints with, and (like Go) the original
//! string when the parser judged it canonical. Every Kubernetes quantity is a multiple of
//! 10^-9 (parsing rounds finer values up, away from zero), so this is exact.
//!
//! # Limits
//!
//! Magnitudes are limited to `|value| < 10^`[`MAX_DIGITS`] (Go has no bound for decimal formats):
//! * [`Quantity::parse`] returns [`QuantityError::TooLarge`] for a larger decimal value
//!   (BinarySI values are capped at 2^63-1 like Go, so they never hit this);
//! * [`Quantity::add`], [`Quantity::sub`] and [`Quantity::round_up`] saturate at the largest
//!   representable magnitude (`10^MAX_DIGITS - 1n`); [`Quantity::checked_add`] and
//!   [`Quantity::checked_sub`] return `None` instead;
//! * [`Quantity::value`], [`Quantity::milli_value`] and [`Quantity::scaled_value`] saturate at
//!   the `i64` bounds.
//!
//! Nothing here panics, whatever the input.
//!
//! # Go quirks reproduced
//!
//! * Canonical-looking originals print verbatim, even odd ones: `+1`, `1.`, `01`, `1.500k`.
//! * Digit-less numbers parse as zero when Go's int64 fast path takes them (`m`, `.`, `-`, `Ki`),
//!   and fail with [`QuantityError::Numeric`] when its arbitrary-precision path does (`e-10`,
//!   `Pi`).
//! * BinarySI values are capped at 2^63-1 at parse (`8Ei` prints `9223372036854775807`).
//!
//! # Recent upstream fixes followed (merged in kubernetes/kubernetes in 2026)
//!
//! * #140459: a DecimalSI value beyond `E` prints in exponent form (`1000E` -> `1e21`; older
//!   servers print `1`), a BinarySI value beyond `Ei` likewise (`1024Ei` ->
//!   `1180591620717411303424`; older servers print `1`).
//! * #141203: an `e` exponent outside `[-MaxInt32, MaxInt32]` is a suffix error (older servers
//!   truncated it to int32: `1e4294967297` meant `1e1`).
//!
//! # Go behaviours not reproduced
//!
//! * Decimal values of `10^MAX_DIGITS` or more: Go accepts them, here they are `TooLarge`.
//! * Go's `Value()`/`MilliValue()` wrap on its big-number path; here they saturate.
//! * An exponent near `-MaxInt32` combined with fraction digits wraps Go's int32 scale (a tiny
//!   value becomes astronomically large); here the value stays exact (it rounds up to `1n`).
//! * `ErrNumeric` has its own variant, [`QuantityError::Numeric`].

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// Magnitudes must stay below `10^MAX_DIGITS` (see the module documentation).
pub const MAX_DIGITS: usize = 1000;

/// How a quantity prints, remembered from the suffix it was written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// `n u m "" k M G T P E`
    DecimalSI,
    /// `Ki Mi Gi Ti Pi Ei`
    BinarySI,
    /// `1e3`, `5E-3`
    DecimalExponent,
}

/// Why a string is not a quantity. The texts are the API server's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`
    #[error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")]
    FormatWrong,
    /// `unable to parse quantity's suffix`
    #[error("unable to parse quantity's suffix")]
    Suffix,
    /// A value too large (or too precise) for the exact representation.
    #[error("quantity is too large to represent exactly")]
    TooLarge,
    /// `unable to parse numeric part of quantity` (Go's `ErrNumeric`): a number part without
    /// any digit that Go sends down its arbitrary-precision path, e.g. `e-10`, `-Pi`, `.Ei`.
    #[error("unable to parse numeric part of quantity")]
    Numeric,
}

/// The original text of a quantity, kept when parse judged it canonical (Go's `q.s`).
#[derive(Clone)]
struct Cached {
    text: String,
    /// The base-10 scale Go's int64 fast path stored the value with; `RoundUp(scale)` keeps
    /// the text when this is `>= scale`.
    scale: i64,
}

/// An exact decimal quantity with its print format.
#[derive(Clone)]
pub struct Quantity {
    /// True for negative values; never true for zero.
    neg: bool,
    /// `|value| * 10^9`, exact.
    nanos: Mag,
    format: Format,
    cached: Option<Cached>,
}

impl Default for Quantity {
    fn default() -> Self {
        Quantity::zero()
    }
}

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
            return Ok(Quantity { cached: Some(Cached { text: s.to_string(), scale: 0 }), ..Quantity::zero() });
        }
        let sc = scan(s.as_bytes())?;
        let (binary_exp, exponent, mut format) = interpret(sc.suffix).ok_or(QuantityError::Suffix)?;
        let num_len = sc.num.len() as i64;
        let denom_len = sc.denom.len() as i64;

        let mut cached_scale = None;
        let nanos = match format {
            Format::DecimalSI | Format::DecimalExponent => {
                let scale = i64::from(exponent) - denom_len;
                let fast = 18 - (num_len + denom_len) >= 0 && scale >= -9;
                if fast {
                    let first_is_zero = sc.num.first() == Some(&b'0');
                    let ends_000 = if sc.denom.len() >= 3 {
                        sc.denom.ends_with(b"000")
                    } else {
                        let mut shifted = sc.num.to_vec();
                        shifted.extend_from_slice(sc.denom);
                        shifted.ends_with(b"000")
                    };
                    if scale % 3 == 0 && !ends_000 && !first_is_zero {
                        cached_scale = Some(scale);
                    }
                } else if !sc.has_digits {
                    return Err(QuantityError::Numeric);
                }
                let mut digits = sc.num.to_vec();
                digits.extend_from_slice(sc.denom);
                digits_to_nanos(&digits, scale)?
            }
            Format::BinarySI => {
                let fast = denom_len == 0 && 14 - num_len - i64::from(binary_exp) * 3 / 10 >= 0;
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
                let nanos = if sc.num.len() > 19 {
                    // At least 10^19 * 1024 > 2^63-1: capped like Go.
                    cap.clone()
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
        Ok(Quantity { neg, nanos, format, cached: cached_scale.map(|scale| Cached { text: s.to_string(), scale }) })
    }
    /// Zero, DecimalSI (prints `0`).
    pub fn zero() -> Quantity {
        Quantity { neg: false, nanos: Mag::default(), format: Format::DecimalSI, cached: None }
    }
    /// `resource.NewQuantity(v, format)`.
    pub fn from_int(v: i64, format: Format) -> Quantity {
        Quantity::from_scaled_i64(v, NANOS_PER_UNIT, format)
    }
    /// `resource.NewMilliQuantity(v, format)`.
    pub fn from_milli(v: i64, format: Format) -> Quantity {
        Quantity::from_scaled_i64(v, 1_000_000, format)
    }
    fn from_scaled_i64(v: i64, nanos_per: u128, format: Format) -> Quantity {
        Quantity { neg: v < 0, nanos: Mag::from_u128(u128::from(v.unsigned_abs()) * nanos_per), format, cached: None }
    }
    pub fn format(&self) -> Format {
        self.format
    }
    pub fn is_zero(&self) -> bool {
        self.nanos.is_zero()
    }
    /// -1, 0 or 1.
    pub fn sign(&self) -> i32 {
        if self.nanos.is_zero() {
            0
        } else if self.neg {
            -1
        } else {
            1
        }
    }
    /// `q.Add(y)`: when `self` is zero the result takes `other`'s format.
    /// Saturates at the representation limit (see [`MAX_DIGITS`]).
    pub fn add(&self, other: &Quantity) -> Quantity {
        let (neg, nanos) = signed_add(self.neg, &self.nanos, other.neg, &other.nanos);
        self.arith_result(other, neg, saturate(nanos))
    }
    /// `q.Sub(y)`: same format rule as `add`.
    /// Saturates at the representation limit (see [`MAX_DIGITS`]).
    pub fn sub(&self, other: &Quantity) -> Quantity {
        let (neg, nanos) = signed_add(self.neg, &self.nanos, !other.neg, &other.nanos);
        self.arith_result(other, neg, saturate(nanos))
    }
    /// Like [`Quantity::add`], but `None` instead of saturating.
    pub fn checked_add(&self, other: &Quantity) -> Option<Quantity> {
        let (neg, nanos) = signed_add(self.neg, &self.nanos, other.neg, &other.nanos);
        within_limit(&nanos).then(|| self.arith_result(other, neg, nanos))
    }
    /// Like [`Quantity::sub`], but `None` instead of saturating.
    pub fn checked_sub(&self, other: &Quantity) -> Option<Quantity> {
        let (neg, nanos) = signed_add(self.neg, &self.nanos, !other.neg, &other.nanos);
        within_limit(&nanos).then(|| self.arith_result(other, neg, nanos))
    }
    fn arith_result(&self, other: &Quantity, neg: bool, nanos: Mag) -> Quantity {
        let format = if self.is_zero() { other.format } else { self.format };
        Quantity { neg: neg && !nanos.is_zero(), nanos, format, cached: None }
    }
    pub fn neg(&self) -> Quantity {
        Quantity { neg: !self.neg && !self.nanos.is_zero(), nanos: self.nanos.clone(), format: self.format, cached: None }
    }
    /// `q.RoundUp(scale)` with scale as a power of ten (`-3` = milli, `0` = whole units);
    /// rounds away from zero; the cached original string is dropped only if the value changed.
    ///
    /// Precisely as Go: the original string survives when it was parsed with a scale at least
    /// as coarse as `scale` (which implies the value did not change). Saturates at the
    /// representation limit.
    pub fn round_up(&self, scale: i32) -> Quantity {
        let keep = self.cached.as_ref().filter(|c| c.scale >= i64::from(scale)).cloned();
        let shift = i64::from(scale) + 9;
        let nanos = if shift <= 0 || self.nanos.is_zero() {
            self.nanos.clone()
        } else if shift as u64 > (MAX_DIGITS + 9) as u64 {
            max_nanos()
        } else {
            let shift = shift as usize;
            let mut m = ceil_shift_right(&self.nanos, shift);
            m.mul_pow10(shift);
            saturate(m)
        };
        Quantity { neg: self.neg, nanos, format: self.format, cached: keep }
    }
    /// `q.Value()`: ceiling to an integer (away from zero). Saturates at i64 bounds.
    pub fn value(&self) -> i64 {
        self.scaled_value(0)
    }
    /// `q.MilliValue()`: ceiling to milli units (away from zero). Saturates at i64 bounds.
    pub fn milli_value(&self) -> i64 {
        self.scaled_value(-3)
    }
    /// `q.ScaledValue(scale)`: `value / 10^scale` rounded away from zero. Saturates at i64
    /// bounds.
    pub fn scaled_value(&self, scale: i32) -> i64 {
        if self.nanos.is_zero() {
            return 0;
        }
        let shift = i64::from(scale) + 9;
        let mag = if shift >= 0 {
            // Anything longer than the number itself rounds to one unit.
            if shift as u64 > (MAX_DIGITS + 64) as u64 {
                Mag::from_u128(1)
            } else {
                ceil_shift_right(&self.nanos, shift as usize)
            }
        } else if -shift > 40 {
            // A non-zero value times 10^41 is beyond i64.
            Mag::from_u128(u128::MAX)
        } else {
            let mut m = self.nanos.clone();
            m.mul_pow10((-shift) as usize);
            m
        };
        let mag = mag.to_u128().unwrap_or(u128::MAX);
        if self.neg {
            if mag >= 1u128 << 63 {
                i64::MIN
            } else {
                -(mag as i64)
            }
        } else if mag > i64::MAX as u128 {
            i64::MAX
        } else {
            mag as i64
        }
    }
    /// True when the value is a whole number.
    pub fn is_integer(&self) -> bool {
        self.nanos.divmod_small(1_000_000_000).1 == 0
    }
    /// The canonical string (`q.String()`).
    pub fn to_canonical(&self) -> String {
        match &self.cached {
            Some(c) => c.text.clone(),
            None => self.canonicalize(),
        }
    }

    /// Go's `CanonicalizeBytes` (the printed form when no original string is kept).
    fn canonicalize(&self) -> String {
        if self.nanos.is_zero() {
            return "0".to_string();
        }
        let sign = if self.neg { "-" } else { "" };
        let mut format = self.format;
        if format == Format::BinarySI {
            let (units, frac) = self.nanos.divmod_small(1_000_000_000);
            if frac != 0 || units.cmp_mag(&Mag::from_u128(1024)) == Ordering::Less {
                // Below 1024 or fractional: printed as DecimalSI.
                format = Format::DecimalSI;
            } else {
                let mut n = units;
                let mut times = 0u32;
                loop {
                    let (q, r) = n.divmod_small(1024);
                    if r != 0 || q.is_zero() {
                        break;
                    }
                    n = q;
                    times += 1;
                }
                let suffix = match times {
                    0 => Some(""),
                    1 => Some("Ki"),
                    2 => Some("Mi"),
                    3 => Some("Gi"),
                    4 => Some("Ti"),
                    5 => Some("Pi"),
                    6 => Some("Ei"),
                    _ => None,
                };
                match suffix {
                    Some(suffix) => return format!("{sign}{}{suffix}", n.to_decimal()),
                    // Beyond Ei (upstream #140459): the decimal-exponent form.
                    None => format = Format::DecimalExponent,
                }
            }
        }
        let digits = self.nanos.to_decimal();
        let trimmed = digits.trim_end_matches('0');
        let mut exponent = (digits.len() - trimmed.len()) as i64 - 9;
        let mut mantissa = trimmed.to_string();
        while exponent.rem_euclid(3) != 0 {
            mantissa.push('0');
            exponent -= 1;
        }
        let si_suffix = match exponent {
            -9 => Some("n"),
            -6 => Some("u"),
            -3 => Some("m"),
            0 => Some(""),
            3 => Some("k"),
            6 => Some("M"),
            9 => Some("G"),
            12 => Some("T"),
            15 => Some("P"),
            18 => Some("E"),
            _ => None,
        };
        match (format, si_suffix) {
            (Format::DecimalSI, Some(suffix)) => format!("{sign}{mantissa}{suffix}"),
            // DecimalExponent, or DecimalSI beyond E (upstream #140459): `e<exp>`.
            _ if exponent == 0 => format!("{sign}{mantissa}"),
            _ => format!("{sign}{mantissa}e{exponent}"),
        }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_canonical())
    }
}

impl fmt::Debug for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Quantity({})", self.to_canonical())
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quantity::parse(s)
    }
}

/// Numeric equality (`1k == 1000 == 1e3`), format ignored.
impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Quantity {}
impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
/// Exact numeric order (`Quantity.Cmp`).
impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.sign(), other.sign()) {
            (a, b) if a != b => a.cmp(&b),
            (0, _) => Ordering::Equal,
            (1, _) => self.nanos.cmp_mag(&other.nanos),
            _ => other.nanos.cmp_mag(&self.nanos),
        }
    }
}

impl serde::Serialize for Quantity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_canonical())
    }
}

/// Accepts what Go's `UnmarshalJSON` accepts: a string (trimmed, then parsed), `null` (zero),
/// or a number token.
///
/// Integers are parsed from their exact decimal text. A float token reaches serde as `f64`
/// (its original text is gone); it is parsed from the text Go's `encoding/json` would write
/// for that float64 (the path a YAML manifest takes through `sigs.k8s.io/yaml`): the
/// shortest round-trip digits, in plain notation unless `|v| < 1e-6` or `|v| >= 1e21`, where
/// it is `1e+21` / `1e-7` style. The float is only formatted, never used in arithmetic.
impl<'de> serde::Deserialize<'de> for Quantity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(QuantityVisitor)
    }
}

struct QuantityVisitor;

impl<'de> serde::de::Visitor<'de> for QuantityVisitor {
    type Value = Quantity;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a quantity (a string such as \"500m\" or \"1Gi\", or a number)")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Quantity, E> {
        Quantity::parse(v).map_err(E::custom)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Quantity, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Quantity, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Quantity, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Quantity, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Quantity, E> {
        self.visit_str(&go_json_float(v))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Quantity, E> {
        Ok(Quantity::zero())
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Quantity, E> {
        Ok(Quantity::zero())
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Quantity, D::Error> {
        d.deserialize_any(QuantityVisitor)
    }
    /// serde_json with `arbitrary_precision` hands numbers over as a one-entry map holding
    /// the token's exact text, which is what Go parses.
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Quantity, A::Error> {
        use serde::de::Error;
        let key: Option<String> = map.next_key()?;
        if key.as_deref() != Some("$serde_json::private::Number") {
            return Err(A::Error::invalid_type(serde::de::Unexpected::Map, &self));
        }
        let text: String = map.next_value()?;
        Quantity::parse(&text).map_err(A::Error::custom)
    }
}

/// The text Go's `encoding/json` writes for a float64 (formatting only, no float arithmetic).
fn go_json_float(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let is_zero = mantissa.trim_start_matches('-').bytes().all(|b| b == b'0' || b == b'.');
    if is_zero || (-6..21).contains(&exp) {
        format!("{v}")
    } else if exp < 0 {
        format!("{mantissa}e-{}", -exp)
    } else {
        format!("{mantissa}e+{exp}")
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing helpers

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

// ---------------------------------------------------------------------------------------------
// Arithmetic helpers

const NANOS_PER_UNIT: u128 = 1_000_000_000;
/// 2^63-1 units, Go's cap for BinarySI values at parse.
const BINARY_CAP_NANOS: u128 = (i64::MAX as u128) * NANOS_PER_UNIT;

/// `a + b` on sign-magnitude pairs; returns `(negative, magnitude)`.
fn signed_add(a_neg: bool, a: &Mag, b_neg: bool, b: &Mag) -> (bool, Mag) {
    if a_neg == b_neg {
        return (a_neg, a.add(b));
    }
    match a.cmp_mag(b) {
        Ordering::Greater => (a_neg, a.sub(b)),
        Ordering::Less => (b_neg, b.sub(a)),
        Ordering::Equal => (false, Mag::default()),
    }
}

/// `nanos < 10^(MAX_DIGITS + 9)`, i.e. the value is below `10^MAX_DIGITS`.
fn within_limit(nanos: &Mag) -> bool {
    // 10^(MAX_DIGITS+9) > 2^floor((MAX_DIGITS+9) * log2(10)); 3.3219 < log2(10).
    let safe_bits = ((MAX_DIGITS + 9) as u64 * 33219) / 10000;
    if nanos.bits() <= safe_bits {
        return true;
    }
    nanos.cmp_mag(&Mag::pow10(MAX_DIGITS + 9)) == Ordering::Less
}

fn max_nanos() -> Mag {
    Mag::pow10(MAX_DIGITS + 9).sub(&Mag::from_u128(1))
}

fn saturate(nanos: Mag) -> Mag {
    if within_limit(&nanos) {
        nanos
    } else {
        max_nanos()
    }
}

/// `ceil(m / 10^shift)` for `m > 0` (`m` if `shift == 0`).
fn ceil_shift_right(m: &Mag, shift: usize) -> Mag {
    if shift == 0 {
        return m.clone();
    }
    let s = m.to_decimal();
    if shift >= s.len() {
        return Mag::from_u128(1);
    }
    let keep = s.len() - shift;
    let mut r = Mag::from_digits(&s.as_bytes()[..keep]);
    if s.as_bytes()[keep..].iter().any(|&c| c != b'0') {
        r.add_small(1);
    }
    r
}

/// A non-negative big integer: little-endian base-2^32 limbs, no zero limb at the top.
#[derive(Clone, Default, PartialEq, Eq)]
struct Mag(Vec<u32>);

impl Mag {
    fn from_u128(mut v: u128) -> Mag {
        let mut limbs = Vec::new();
        while v != 0 {
            limbs.push(v as u32);
            v >>= 32;
        }
        Mag(limbs)
    }
    fn pow10(n: usize) -> Mag {
        let mut m = Mag::from_u128(1);
        m.mul_pow10(n);
        m
    }
    /// From ASCII decimal digits (all `0-9`).
    fn from_digits(d: &[u8]) -> Mag {
        let mut m = Mag::default();
        for chunk in d.chunks(9) {
            let v = chunk.iter().fold(0u32, |acc, &c| acc * 10 + u32::from(c - b'0'));
            m.mul_small(10u32.pow(chunk.len() as u32));
            m.add_small(v);
        }
        m
    }
    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }
    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }
    fn bits(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => (self.0.len() as u64 - 1) * 32 + u64::from(32 - top.leading_zeros()),
        }
    }
    fn to_u128(&self) -> Option<u128> {
        if self.0.len() > 4 {
            return None;
        }
        Some(self.0.iter().rev().fold(0u128, |acc, &l| (acc << 32) | u128::from(l)))
    }
    fn cmp_mag(&self, other: &Mag) -> Ordering {
        self.0.len().cmp(&other.0.len()).then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
    fn add(&self, other: &Mag) -> Mag {
        let (long, short) = if self.0.len() >= other.0.len() { (self, other) } else { (other, self) };
        let mut out = Vec::with_capacity(long.0.len() + 1);
        let mut carry = 0u64;
        for (i, &l) in long.0.iter().enumerate() {
            let t = u64::from(l) + u64::from(short.0.get(i).copied().unwrap_or(0)) + carry;
            out.push(t as u32);
            carry = t >> 32;
        }
        if carry != 0 {
            out.push(carry as u32);
        }
        Mag(out)
    }
    /// `self - other`; requires `self >= other`.
    fn sub(&self, other: &Mag) -> Mag {
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i64;
        for (i, &l) in self.0.iter().enumerate() {
            let mut t = i64::from(l) - i64::from(other.0.get(i).copied().unwrap_or(0)) - borrow;
            borrow = 0;
            if t < 0 {
                t += 1 << 32;
                borrow = 1;
            }
            out.push(t as u32);
        }
        let mut m = Mag(out);
        m.trim();
        m
    }
    fn mul_small(&mut self, f: u32) {
        let mut carry = 0u64;
        for l in self.0.iter_mut() {
            let t = u64::from(*l) * u64::from(f) + carry;
            *l = t as u32;
            carry = t >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }
    fn add_small(&mut self, a: u32) {
        let mut carry = u64::from(a);
        for l in self.0.iter_mut() {
            if carry == 0 {
                break;
            }
            let t = u64::from(*l) + carry;
            *l = t as u32;
            carry = t >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }
    fn mul_pow10(&mut self, mut n: usize) {
        while n >= 9 {
            self.mul_small(1_000_000_000);
            n -= 9;
        }
        self.mul_small(10u32.pow(n as u32));
    }
    /// `(self / d, self % d)`; `d` must be non-zero.
    fn divmod_small(&self, d: u32) -> (Mag, u32) {
        let d = u64::from(d.max(1));
        let mut out = vec![0u32; self.0.len()];
        let mut rem = 0u64;
        for (i, &l) in self.0.iter().enumerate().rev() {
            let cur = (rem << 32) | u64::from(l);
            out[i] = (cur / d) as u32;
            rem = cur % d;
        }
        let mut q = Mag(out);
        q.trim();
        (q, rem as u32)
    }
    fn to_decimal(&self) -> String {
        if self.is_zero() {
            return "0".to_string();
        }
        let mut chunks = Vec::new();
        let mut cur = self.clone();
        while !cur.is_zero() {
            let (q, r) = cur.divmod_small(1_000_000_000);
            chunks.push(r);
            cur = q;
        }
        let mut s = String::with_capacity(chunks.len() * 9);
        for (i, c) in chunks.iter().rev().enumerate() {
            if i == 0 {
                s.push_str(&c.to_string());
            } else {
                s.push_str(&format!("{c:09}"));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        match Quantity::parse(s) {
            Ok(v) => v,
            Err(e) => panic!("parse({s:?}) failed: {e}"),
        }
    }

    fn sum(items: &[&str]) -> Quantity {
        items.iter().fold(Quantity::zero(), |acc, s| acc.add(&q(s)))
    }

    #[test]
    fn canonical_form_of_parsed_strings() {
        let cases: &[(&str, &str)] = &[
            // The examples of the spec (section 7.2), one row each.
            ("1000", "1k"),
            ("0.5", "500m"),
            ("1.5", "1500m"),
            ("1500", "1500"),
            ("15000", "15k"),
            ("1.5e3", "1500"),
            ("15e3", "15e3"),
            ("1000000", "1M"),
            ("0.1m", "100u"),
            ("1e-3", "1e-3"),
            ("0.001", "1m"),
            ("1.5Gi", "1536Mi"),
            ("1024Mi", "1Gi"),
            ("0.5Ki", "512"),
            ("1.1Ki", "1126400m"),
            ("1000Mi", "1000Mi"),
            ("500m", "500m"),
            ("1G", "1G"),
            ("2", "2"),
            ("10Gi", "10Gi"),
            ("0.0000000001", "1n"),
            // Zero in all its spellings.
            ("0", "0"),
            ("-0", "0"),
            ("+0", "0"),
            ("00", "0"),
            ("0.0", "0"),
            ("0m", "0"),
            ("0Ki", "0"),
            ("0Ei", "0"),
            ("0e5", "0"),
            ("0.000000000000", "0"),
            // Signs and odd number shapes: canonical-looking originals are kept verbatim.
            ("+1", "+1"),
            ("-1", "-1"),
            ("1.", "1."),
            ("5.", "5."),
            (".5", "500m"),
            ("-.5", "-500m"),
            ("01", "01"),
            ("1.500k", "1.500k"),
            ("1.000k", "1k"),
            ("1.5k", "1500"),
            ("-1.5", "-1500m"),
            ("-1500", "-1500"),
            ("-15000", "-15k"),
            // Decimal SI.
            ("100m", "100m"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("0.5m", "500u"),
            ("1u", "1u"),
            ("1n", "1n"),
            ("1000n", "1u"),
            ("1000000n", "1m"),
            ("0.1n", "1n"),
            ("1.5n", "2n"),
            ("-1.5n", "-2n"),
            ("1.0000000001", "1000000001n"),
            ("1.000000001", "1.000000001"),
            ("1.0000000000", "1"),
            ("1k", "1k"),
            ("1M", "1M"),
            ("1T", "1T"),
            ("1P", "1P"),
            ("1E", "1E"),
            ("10E", "10E"),
            ("100E", "100E"),
            ("1.5E", "1500P"),
            ("123456789E", "123456789E"),
            ("1000k", "1M"),
            ("1000G", "1T"),
            ("12345678", "12345678"),
            ("123456789012345678", "123456789012345678"),
            ("1234567890123456789", "1234567890123456789"),
            ("12345678901234567890", "12345678901234567890"),
            ("12345678901234567890000", "12345678901234567890k"),
            // Beyond E: exponent form (upstream #140459; older servers dropped the suffix).
            ("1000E", "1e21"),
            ("1000000E", "1e24"),
            ("12000E", "12e21"),
            ("5000E", "5e21"),
            ("10000E", "10e21"),
            ("-1000E", "-1e21"),
            ("1000000000000000000000", "1e21"),
            // Decimal exponent.
            ("1e3", "1e3"),
            ("1E3", "1E3"),
            ("1e0", "1e0"),
            ("10e0", "10e0"),
            ("1000e0", "1e3"),
            ("12e6", "12e6"),
            ("12e5", "1200e3"),
            ("1e-9", "1e-9"),
            ("1e-10", "1e-9"),
            ("1.5e-9", "2e-9"),
            ("1e+3", "1e+3"),
            ("1e21", "1e21"),
            ("1e999", "1e999"),
            ("0.5e3", "500"),
            ("5e-1", "500e-3"),
            ("-1e3", "-1e3"),
            ("1e-2000000000", "1e-9"),
            ("1e-2147483647", "1e-9"),
            // Binary SI.
            ("1Ki", "1Ki"),
            ("8Gi", "8Gi"),
            ("16Gi", "16Gi"),
            ("2048Ki", "2Mi"),
            ("1023Ki", "1023Ki"),
            ("1025Ki", "1025Ki"),
            ("1.5Ki", "1536"),
            ("0.5Gi", "512Mi"),
            ("1Ti", "1Ti"),
            ("1Pi", "1Pi"),
            ("1Ei", "1Ei"),
            ("7Ei", "7Ei"),
            ("8Ei", "9223372036854775807"),
            ("-8Ei", "-9223372036854775807"),
            ("100000000000000000000Ki", "9223372036854775807"),
            ("-1Ki", "-1Ki"),
            ("-1.5Gi", "-1536Mi"),
            ("-0.5Ki", "-512"),
            ("0.0001Ki", "102400u"),
            ("0.000000000001Ki", "2n"),
            ("1.Ki", "1.Ki"),
            ("1024Ki", "1Mi"),
            ("1048576Ki", "1Gi"),
            ("1073741824", "1073741824"),
            // Whitespace around is trimmed.
            ("  1Gi  ", "1Gi"),
            ("\t500m\n", "500m"),
        ];
        for (input, want) in cases {
            assert_eq!(q(input).to_canonical(), *want, "canonical form of {input:?}");
            assert_eq!(q(input).to_string(), *want, "Display of {input:?}");
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
    fn sum_takes_format_of_first_nonzero_addend() {
        // (addends summed onto Quantity::zero(), printed result)
        let cases: &[(&[&str], &str)] = &[
            // Recorded on a real API server.
            (&["3Gi", "1G"], "4221225472"),
            (&["1Gi", "512Mi"], "1536Mi"),
            (&["4", "250m"], "4250m"),
            (&["1e9"], "1e9"),
            (&["0", "1e9"], "1e9"),
            (&["999", "500m"], "999500m"),
            (&["1000000000", "64Mi"], "1067108864"),
            (&["3Gi", "512Mi"], "3584Mi"),
            (&["1Gi", "1Gi", "1Gi"], "3Gi"),
            (&["500Mi", "1000Mi"], "1500Mi"),
            (&["1001"], "1001"),
            // The first non-zero addend decides.
            (&["1G", "3Gi"], "4221225472"),
            (&["1G", "1G"], "2G"),
            (&["1Gi", "1G"], "2073741824"),
            (&["1G", "1Gi"], "2073741824"),
            (&["512Mi", "512Mi"], "1Gi"),
            (&["512M", "512Mi"], "1048870912"),
            (&["0Ki", "1G"], "1G"),
            (&["0", "0Ki", "1Gi"], "1Gi"),
            (&["1e3", "14e3"], "15e3"),
            (&["1e3", "500"], "1500"),
            (&["1e3", "1k"], "2e3"),
            (&["1k", "1e3"], "2k"),
            (&["1k", "1"], "1001"),
            (&["100m", "900m"], "1"),
            (&["1Ki", "1Ki"], "2Ki"),
            (&["1Ki", "1"], "1025"),
            (&["1Ki", "-1Ki", "1G"], "1G"),
            (&["1n", "1"], "1000000001n"),
            (&["0.5Ki", "0.5Ki"], "1Ki"),
            (&["0.0001Ki", "1Ki"], "1024102400u"),
            (&["1", "-1500m"], "-500m"),
            (&["-1Gi", "-1Gi"], "-2Gi"),
            (&["4Ei", "4Ei"], "8Ei"),
            (&["8Ei", "8Ei"], "18446744073709551614"),
            (&["1000E", "1E"], "1001E"),
            (&["1000E", "1000E"], "2e21"),
            (&["7Ei", "1Ei"], "8Ei"),
            (&["4Ei", "4Ei", "8Ei", "8Ei"], "27670116110564327422"),
            (&[], "0"),
        ];
        for (addends, want) in cases {
            assert_eq!(sum(addends).to_canonical(), *want, "sum of {addends:?}");
        }
        assert_eq!(sum(&["0Ki"]).format(), Format::BinarySI);
        assert_eq!(sum(&["1e3", "1Ki"]).format(), Format::DecimalExponent);
    }

    #[test]
    fn binary_beyond_ei_prints_in_exponent_form() {
        let two_pow_70 = (0..1024).fold(Quantity::zero(), |acc, _| acc.add(&q("1Ei")));
        assert_eq!(two_pow_70.format(), Format::BinarySI);
        assert_eq!(two_pow_70.to_canonical(), "1180591620717411303424");
        let ten_pow_70 = q("1Ki").add(&q("1e70")).sub(&q("1Ki"));
        assert_eq!(ten_pow_70.format(), Format::BinarySI);
        assert_eq!(ten_pow_70.to_canonical(), "10e69");
        assert_eq!(ten_pow_70.neg().to_canonical(), "-10e69");
        let twenty_pow = ten_pow_70.add(&ten_pow_70);
        assert_eq!(twenty_pow.to_canonical(), "20e69");
        assert_eq!(Quantity::from_int(2000, Format::BinarySI).to_canonical(), "2000");
        assert_eq!(Quantity::from_int(-2000, Format::BinarySI).to_canonical(), "-2000");
        assert_eq!(Quantity::from_int(1 << 60, Format::BinarySI).to_canonical(), "1Ei");
    }

    #[test]
    fn sub_takes_format_of_other_when_receiver_is_zero() {
        let cases: &[(&str, &str, &str)] = &[
            ("0", "1Gi", "-1Gi"),
            ("0", "500m", "-500m"),
            ("1Gi", "1Gi", "0"),
            ("1Gi", "512Mi", "512Mi"),
            ("2Gi", "1G", "1147483648"),
            ("1", "1500m", "-500m"),
            ("4250m", "250m", "4"),
            ("1k", "1", "999"),
            ("1e3", "1", "999"),
            ("1e3", "-1e3", "2e3"),
            ("-1", "-1", "0"),
            ("1n", "1n", "0"),
            ("10Gi", "1", "10737418239"),
        ];
        for (a, b, want) in cases {
            assert_eq!(q(a).sub(&q(b)).to_canonical(), *want, "{a} - {b}");
            assert_eq!(q(a).checked_sub(&q(b)).map(|r| r.to_canonical()).as_deref(), Some(*want));
        }
        assert_eq!(Quantity::zero().sub(&q("1Ki")).format(), Format::BinarySI);
        assert_eq!(q("1").sub(&q("1Ki")).format(), Format::DecimalSI);
    }

    #[test]
    fn arithmetic_drops_the_original_string() {
        let cases: &[(&str, &str)] = &[("+1", "1"), ("1.", "1"), ("01", "1"), ("1.500k", "1500"), ("1E3", "1e3")];
        for (input, want) in cases {
            assert_eq!(q(input).add(&Quantity::zero()).to_canonical(), *want, "{input} + 0");
            assert_eq!(Quantity::zero().add(&q(input)).to_canonical(), *want, "0 + {input}");
            assert_eq!(q(input).sub(&Quantity::zero()).to_canonical(), *want, "{input} - 0");
            assert_eq!(q(input).neg().neg().to_canonical(), *want, "--{input}");
        }
    }

    #[test]
    fn neg_flips_sign() {
        let cases: &[(&str, &str)] = &[("1Gi", "-1Gi"), ("-500m", "500m"), ("0", "0"), ("-0", "0"), ("1e3", "-1e3"), ("1.5", "-1500m")];
        for (input, want) in cases {
            let n = q(input).neg();
            assert_eq!(n.to_canonical(), *want, "-({input})");
            assert_eq!(n.format(), q(input).format());
            assert_eq!(n.sign(), -q(input).sign());
        }
    }

    #[test]
    fn round_up_to_milli() {
        let cases: &[(&str, &str)] = &[
            ("0.1m", "1m"),
            ("100u", "1m"),
            ("1n", "1m"),
            ("-1n", "-1m"),
            ("1001u", "2m"),
            ("-1001u", "-2m"),
            ("12345n", "1m"),
            ("1.0001", "1001m"),
            ("500m", "500m"),
            ("1.5", "1500m"),
            ("1", "1"),
            ("0", "0"),
            ("1Gi", "1Gi"),
            ("0.0001Ki", "103m"),
            ("1.1Ki", "1126400m"),
            ("1e-10", "1e-3"),
            ("1e-3", "1e-3"),
            // Cached originals survive when parsed at milli scale or coarser.
            ("+1", "+1"),
            ("1.", "1."),
            ("1.500", "1.500"),
            ("1.500k", "1.500k"),
            ("01", "01"),
            // Cached at a finer scale: dropped (and the value changes).
            ("1.000001", "1001m"),
            ("1u", "1m"),
        ];
        for (input, want) in cases {
            let r = q(input).round_up(-3);
            assert_eq!(r.to_canonical(), *want, "RoundUp(-3) of {input:?}");
            assert_eq!(r.format(), q(input).format(), "format kept for {input:?}");
        }
    }

    #[test]
    fn round_up_to_other_scales() {
        let cases: &[(&str, i32, &str)] = &[
            ("500m", 0, "1"),
            ("-500m", 0, "-1"),
            ("1.1Ki", 0, "1127"),
            ("1.5Gi", 0, "1536Mi"),
            ("1n", 0, "1"),
            ("1.500", 0, "2"),
            ("1.500", -1, "1500m"), // Go: parsed at scale -3 < -1, so the original is dropped
            ("1.500", -2, "1500m"),
            ("1e-3", 0, "1"),
            ("1e9", 3, "1e9"),
            ("1e9", 9, "1e9"),
            ("1e9", 10, "10e9"),
            ("1001", 3, "2k"),
            ("1", 3, "1k"),
            ("-1", 3, "-1k"),
            ("1", -9, "1"),
            ("1n", -9, "1n"),
            ("1n", -12, "1n"),
            ("1n", i32::MIN, "1n"),
            ("0", 2000, "0"),
            ("0", i32::MAX, "0"),
            ("1234567", 2, "1234600"),
        ];
        for (input, scale, want) in cases {
            assert_eq!(q(input).round_up(*scale).to_canonical(), *want, "RoundUp({scale}) of {input:?}");
        }
        // Beyond the representation limit: saturates.
        let big = q("1").round_up(i32::MAX);
        assert_eq!(big.sign(), 1);
        assert_eq!(big.value(), i64::MAX);
        assert_eq!(big.round_up(i32::MAX), big);
        assert_eq!(q("-1").round_up(5000).sign(), -1);
        assert!(q("1").round_up(999) == q("1e999"));
    }

    #[test]
    fn value_and_milli_value_ceil() {
        let cases: &[(&str, i64, i64)] = &[
            ("0", 0, 0),
            ("1", 1, 1000),
            ("1.5", 2, 1500),
            ("-1.5", -2, -1500),
            ("1n", 1, 1),
            ("-1n", -1, -1),
            ("999999999n", 1, 1000),
            ("1001u", 1, 2),
            ("-1001u", -1, -2),
            ("500m", 1, 500),
            ("1Gi", 1073741824, 1073741824000),
            ("1.1Ki", 1127, 1126400),
            ("1e-9", 1, 1),
            ("1e3", 1000, 1000000),
            ("9223372036854775", 9223372036854775, 9223372036854775000),
            ("9223372036854776", 9223372036854776, i64::MAX),
            ("-9223372036854776", -9223372036854776, i64::MIN),
            ("9223372036854775807", i64::MAX, i64::MAX),
            ("9223372036854775808", i64::MAX, i64::MAX),
            ("-9223372036854775808", i64::MIN, i64::MIN),
            ("-9223372036854775809", i64::MIN, i64::MIN),
            ("9223372036854775806.5", i64::MAX, i64::MAX),
            ("1E", 1_000_000_000_000_000_000, i64::MAX),
            ("-1E", -1_000_000_000_000_000_000, i64::MIN),
            ("8Ei", i64::MAX, i64::MAX),
            ("1e100", i64::MAX, i64::MAX),
            ("-1e100", i64::MIN, i64::MIN),
            ("1e999", i64::MAX, i64::MAX),
        ];
        for (input, value, milli) in cases {
            assert_eq!(q(input).value(), *value, "Value() of {input:?}");
            assert_eq!(q(input).milli_value(), *milli, "MilliValue() of {input:?}");
            assert_eq!(q(input).scaled_value(0), *value);
            assert_eq!(q(input).scaled_value(-3), *milli);
        }
    }

    #[test]
    fn scaled_value_ceil() {
        let cases: &[(&str, i32, i64)] = &[
            ("1500", 3, 2),
            ("-1500", 3, -2),
            ("1", 3, 1),
            ("1", -9, 1_000_000_000),
            ("1", -12, 1_000_000_000_000),
            ("1", -18, 1_000_000_000_000_000_000),
            ("1", -19, i64::MAX),
            ("-1", -19, i64::MIN),
            ("1", -60, i64::MAX),
            ("1", i32::MIN, i64::MAX),
            ("1n", i32::MAX, 1),
            ("-1n", i32::MAX, -1),
            ("0", i32::MIN, 0),
            ("1e999", 990, 1_000_000_000),
            ("1e999", 1000, 1),
            ("1.5Gi", 6, 1611),
        ];
        for (input, scale, want) in cases {
            assert_eq!(q(input).scaled_value(*scale), *want, "ScaledValue({scale}) of {input:?}");
        }
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
    fn go_accepts_digitless_numbers_as_zero() {
        for input in ["m", ".", "-", "+", "-.", "+.", "k", "Ki", "Ti", "e5", "e-9", ".m", "-Gi", "E"] {
            let v = q(input);
            assert!(v.is_zero(), "{input:?} is zero");
            assert_eq!(v.to_canonical(), "0");
        }
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
    fn go_json_float_text() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-10, "1.5e-10"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (-1e21, "-1e+21"),
            (1.2345e100, "1.2345e+100"),
        ];
        for (v, want) in cases {
            assert_eq!(go_json_float(*v), *want);
        }
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
}
