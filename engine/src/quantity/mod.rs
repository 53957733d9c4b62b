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
//!
//! # Source layout
//!
//! This file holds the types, constructors, accessors and trait impls; `parse.rs` reads text,
//! `format.rs` prints it back, `mag.rs` holds the big integer, `arith.rs` the arithmetic, and
//! `tests.rs` the tests that span them all.

mod arith;
mod format;
pub use format::{Canonical, Inline};
mod mag;
mod parse;
#[cfg(test)]
mod tests;

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use format::go_json_float;
use mag::Mag;

/// Magnitudes must stay below `10^MAX_DIGITS` (see the module documentation).
pub const MAX_DIGITS: usize = 1000;

/// Nano units per unit: a quantity holds `|value| * 10^9`.
const NANOS_PER_UNIT: u128 = 1_000_000_000;

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
    /// Go holds the value as an `inf.Dec` (its parser's slow path: a fraction with a binary
    /// suffix, too many digits, a scale below nano), not an `int64Amount`. Only upstream's
    /// aliasing of such values (see `pod_totals::after_one_usage`) depends on it.
    go_dec: bool,
    /// The text the value was written as, shared by copies.
    cached: Option<Arc<Cached>>,
}

impl Default for Quantity {
    fn default() -> Self {
        Quantity::zero()
    }
}

// Constructors and accessors. Parsing is in `parse.rs`, printing in `format.rs`, arithmetic
// in `arith.rs`.
impl Quantity {
    /// Zero, DecimalSI (prints `0`).
    pub fn zero() -> Quantity {
        Quantity { neg: false, nanos: Mag::default(), format: Format::DecimalSI, go_dec: false, cached: None }
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
        Quantity { neg: v < 0, nanos: Mag::from_u128(u128::from(v.unsigned_abs()) * nanos_per), format, go_dec: false, cached: None }
    }
    /// The [`Format`] this quantity prints with.
    pub fn format(&self) -> Format {
        self.format
    }
    /// True for zero, whatever its sign or format.
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
    /// True when `other` is this quantity in every respect: sign, value, format and the text
    /// kept from parsing (`==` compares values only). A holder of many equal quantities can
    /// then keep one and hand out clones, which share the kept text.
    pub fn is_identical(&self, other: &Quantity) -> bool {
        self.neg == other.neg
            && self.nanos == other.nanos
            && self.format == other.format
            && self.go_dec == other.go_dec
            && match (&self.cached, &other.cached) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b) || (a.text == b.text && a.scale == b.scale),
                _ => false,
            }
    }
    /// Whether Go holds this value as an `inf.Dec` rather than an `int64Amount`.
    pub fn is_go_dec(&self) -> bool {
        self.go_dec
    }
    /// True when the value is a whole number.
    pub fn is_integer(&self) -> bool {
        self.nanos.divmod_small(1_000_000_000).1 == 0
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_canonical(f)
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
        s.serialize_str(&self.canonical())
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
