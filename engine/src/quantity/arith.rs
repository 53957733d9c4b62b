//! Exact arithmetic on quantities, built on the big integer of their nano units (`Mag`, in
//! `mag.rs`): add, sub, neg, round_up, scaled_value, which saturate at the representation
//! limit.

use std::cmp::Ordering;

use super::mag::Mag;
use super::{Quantity, MAX_DIGITS};

impl Quantity {
    /// `q.Add(y)`: when `self` is zero the result takes `other`'s format.
    /// Saturates at the representation limit (see [`MAX_DIGITS`]).
    pub fn add(&self, other: &Quantity) -> Quantity {
        // Below 2^96 nano units each (every quantity a cluster really uses), the signed sum is
        // worked out in 128 bits, far from the limit.
        if let (Some(a), Some(b)) = (self.small_signed(), other.small_signed()) {
            let sum = a + b;
            return self.arith_result(other, sum < 0, Mag::from_u128(sum.unsigned_abs()));
        }
        let (neg, nanos) = signed_add(self.neg, &self.nanos, other.neg, &other.nanos);
        self.arith_result(other, neg, saturate(nanos))
    }
    /// The signed nano units, when the magnitude is below 2^96.
    fn small_signed(&self) -> Option<i128> {
        let m = &self.nanos;
        (m.0.len() < 4).then(|| if self.neg { -(m.small() as i128) } else { m.small() as i128 })
    }
    /// `q.Sub(y)`: same format rule as `add`.
    /// Saturates at the representation limit (see [`MAX_DIGITS`]).
    pub fn sub(&self, other: &Quantity) -> Quantity {
        // Below 2^96 nano units each, in 128 bits, as in `add`.
        if let (Some(a), Some(b)) = (self.small_signed(), other.small_signed()) {
            let diff = a - b;
            return self.arith_result(other, diff < 0, Mag::from_u128(diff.unsigned_abs()));
        }
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
        // Go's Add and Sub keep an int64Amount only when both sides are one (an overflow,
        // which would also turn to inf.Dec, is not followed).
        Quantity { neg: neg && !nanos.is_zero(), nanos, format, go_dec: self.go_dec || other.go_dec, cached: None }
    }
    /// `q.Neg()`: the same value with the other sign (zero stays zero), same format; the
    /// original string is dropped.
    pub fn neg(&self) -> Quantity {
        Quantity { neg: !self.neg && !self.nanos.is_zero(), nanos: self.nanos.clone(), format: self.format, go_dec: self.go_dec, cached: None }
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
        Quantity { neg: self.neg, nanos, format: self.format, go_dec: self.go_dec, cached: keep }
    }
    /// How `self` compares with the exact product `a × b` (LimitRanger's ratio test from 1.38:
    /// is a limit above request × ratio), with no rounding at any size.
    pub fn cmp_product(&self, a: &Quantity, b: &Quantity) -> Ordering {
        let product_sign = a.sign() * b.sign();
        if self.sign() != product_sign {
            return self.sign().cmp(&product_sign);
        }
        // |self| × 10^9 against |a| × |b|, both in nano² units.
        let mut scaled = self.nanos.clone();
        scaled.mul_pow10(9);
        let by_magnitude = scaled.cmp_mag(&a.nanos.mul(&b.nanos));
        if self.sign() < 0 {
            by_magnitude.reverse()
        } else {
            by_magnitude
        }
    }
    /// `q.AsApproximateFloat64()`: the double nearest the exact value (infinite beyond the
    /// double range). The one place a quantity becomes floating point, for callers that ask.
    pub fn approximate_f64(&self) -> f64 {
        let sign = if self.neg { "-" } else { "" };
        format!("{sign}{}e-9", self.nanos.to_decimal()).parse().unwrap_or(f64::NAN)
    }
    /// `q.AsInt64()`: the value as an `i64` when it is a whole number within the `i64` range.
    pub fn as_i64(&self) -> Option<i64> {
        let v = self.value();
        (self.is_integer() && Quantity::from_int(v, self.format) == *self).then_some(v)
    }
    /// `q.Value()`: ceiling to an integer (away from zero). Saturates at i64 bounds.
    pub fn value(&self) -> i64 {
        self.scaled_value(0)
    }
    /// `q.MilliValue()`: ceiling to milli units (away from zero). Saturates at i64 bounds.
    pub fn milli_value(&self) -> i64 {
        self.scaled_value(-3)
    }
    /// Whole percent of `whole` that `self` is, rounded down, exactly: computed in milli-units,
    /// or at the first coarser scale (units, kilo, ...) at which neither value saturates (memory
    /// summed over a large cluster exceeds milli-units). `None` when both are zero (or cannot be
    /// compared at any scale); `u64::MAX` for use over a zero `whole`. Negative use counts as 0.
    pub fn percent_of(&self, whole: &Quantity) -> Option<u64> {
        for scale in [-3, 0, 3, 6, 9, 12, 15, 18] {
            let (x, y) = (self.scaled_value(scale), whole.scaled_value(scale));
            if x == i64::MAX || y == i64::MAX {
                continue;
            }
            if y <= 0 {
                return if x > 0 { Some(u64::MAX) } else { None };
            }
            return Some(((x.max(0) as i128) * 100 / y as i128).min(u64::MAX as i128 - 1) as u64);
        }
        None
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
}

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
pub(super) fn within_limit(nanos: &Mag) -> bool {
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
    // Common sizes fit in 128 bits: divide there instead of going through the digits.
    if let Some(v) = m.to_u128() {
        if shift > 38 {
            return Mag::from_u128(if v == 0 { 0 } else { 1 });
        }
        // 64-bit division where the value allows: several times cheaper than 128-bit.
        if let (Ok(v), true) = (u64::try_from(v), shift <= 19) {
            let p = 10u64.pow(shift as u32);
            return Mag::from_u128(u128::from(v / p + u64::from(v % p != 0)));
        }
        let p = 10u128.pow(shift as u32);
        let (q, r) = (v / p, v % p);
        return Mag::from_u128(if r == 0 { q } else { q + 1 });
    }
    ceil_shift_right_on_digits(m, shift)
}

/// [`ceil_shift_right`] for any magnitude, on its decimal digits.
fn ceil_shift_right_on_digits(m: &Mag, shift: usize) -> Mag {
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
#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantity::mag::tests::boundary_mags;
    use crate::quantity::tests::q;
    use crate::quantity::Format;

    #[test]
    fn quantity_add_and_sub_in_128_bits_equal_the_sign_magnitude_results() {
        let mags = boundary_mags();
        let quantity = |neg: bool, m: &Mag| Quantity { neg: neg && !m.is_zero(), nanos: m.clone(), format: Format::DecimalSI, go_dec: false, cached: None };
        for a in &mags {
            for b in &mags {
                for (an, bn) in [(false, false), (false, true), (true, false), (true, true)] {
                    let (x, y) = (quantity(an, a), quantity(bn, b));
                    let (neg, nanos) = signed_add(x.neg, &x.nanos, y.neg, &y.nanos);
                    let want = x.arith_result(&y, neg, saturate(nanos));
                    let got = x.add(&y);
                    assert!(got.neg == want.neg && got.nanos == want.nanos, "{x} + {y}");
                    assert_eq!((got.format, got.to_canonical()), (want.format, want.to_canonical()), "{x} + {y}");
                    let (neg, nanos) = signed_add(x.neg, &x.nanos, !y.neg, &y.nanos);
                    let want = x.arith_result(&y, neg, saturate(nanos));
                    let got = x.sub(&y);
                    assert!(got.neg == want.neg && got.nanos == want.nanos, "{x} - {y}");
                    assert_eq!((got.format, got.to_canonical()), (want.format, want.to_canonical()), "{x} - {y}");
                }
            }
        }
    }

    fn sum(items: &[&str]) -> Quantity {
        items.iter().fold(Quantity::zero(), |acc, s| acc.add(&q(s)))
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
    fn native_ceil_shift_matches_shifting_digits() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u128;
        let mut values: Vec<u128> = vec![1, 9, 10, 11, 999_999, 1_000_000, 1_000_001, u128::from(u64::MAX), u128::from(u64::MAX) + 1, u128::MAX];
        for _ in 0..3000 {
            x = x.wrapping_mul(0x2545_f491_4f6c_dd1d).wrapping_add(1442695040888963407);
            values.push(x >> (x % 127));
        }
        // Zero never reaches it (scaled_value answers zero first).
        for v in values.into_iter().filter(|&v| v != 0) {
            for shift in [1, 3, 6, 9, 12, 18, 19, 20, 25, 38, 39] {
                let m = Mag::from_u128(v);
                assert_eq!(ceil_shift_right(&m, shift).to_u128(), ceil_shift_right_on_digits(&m, shift).to_u128(), "{v} shifted {shift}");
            }
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
}
