//! Printing a quantity: the canonical string (`q.String()`: the original text when parse kept
//! it, else Go's `CanonicalizeBytes`), and the text Go's `encoding/json` writes for a float64.

use std::cmp::Ordering;
use std::fmt;

use super::mag::Mag;
use super::{Format, Quantity};

impl Quantity {
    /// The canonical string (`q.String()`).
    pub fn to_canonical(&self) -> String {
        match &self.cached {
            Some(c) => c.text.clone(),
            None => self.to_string(),
        }
    }

    /// The canonical string without allocating: the kept text borrowed, or the text written
    /// into an inline buffer (on the heap only past 128-bit magnitudes). What renderers use
    /// for every quantity they print.
    ///
    /// ```
    /// use kubectl_quota_engine::quantity::Quantity;
    /// assert_eq!(&*Quantity::parse("1536Mi").unwrap().canonical(), "1536Mi");
    /// assert_eq!(&*Quantity::parse("1536Mi").unwrap().add(&Quantity::parse("512Mi").unwrap()).canonical(), "2Gi");
    /// ```
    pub fn canonical(&self) -> Canonical<'_> {
        if let Some(c) = &self.cached {
            return Canonical::Kept(&c.text);
        }
        let mut inline = Inline { buf: [0; INLINE], len: 0 };
        match self.write_canonical(&mut inline) {
            Ok(()) => Canonical::Inline(inline),
            Err(_) => Canonical::Heap(self.to_string()),
        }
    }

    /// Writes the canonical string: the kept text, or Go's `CanonicalizeBytes` worked out in
    /// native integers when the magnitude fits 128 bits (every real quantity), else limb by limb.
    pub fn write_canonical(&self, f: &mut impl fmt::Write) -> fmt::Result {
        match (&self.cached, self.nanos.to_u128()) {
            (Some(c), _) => f.write_str(&c.text),
            (None, Some(nanos)) => write_canonical_u128(self.neg, nanos, self.format, f),
            (None, None) => f.write_str(&self.canonicalize()),
        }
    }

    /// Go's `CanonicalizeBytes` (the printed form when no original string is kept), on limbs.
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
                match BINARY_SUFFIXES.get(times as usize) {
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
        let mut out = String::new();
        let _ = write_decimal(&mut out, sign, &mantissa, exponent, format);
        out
    }
}

/// Bytes of inline text: a 128-bit magnitude has 39 digits, plus sign, point and suffix.
const INLINE: usize = 48;

/// Text written into a fixed buffer; writing past its end fails (and the caller allocates).
#[derive(Clone, Copy)]
pub struct Inline {
    buf: [u8; INLINE],
    len: u8,
}

impl fmt::Write for Inline {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let start = usize::from(self.len);
        let end = start + s.len();
        if end > INLINE {
            return Err(fmt::Error);
        }
        self.buf[start..end].copy_from_slice(s.as_bytes());
        self.len = end as u8;
        Ok(())
    }
}

/// A quantity's canonical string, from [`Quantity::canonical`]: dereferences to `str`.
pub enum Canonical<'a> {
    /// The text the quantity was written as.
    Kept(&'a str),
    Inline(Inline),
    Heap(String),
}

impl std::ops::Deref for Canonical<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Canonical::Kept(s) => s,
            // Only whole `&str`s are ever copied in, so the bytes are UTF-8.
            Canonical::Inline(i) => std::str::from_utf8(&i.buf[..usize::from(i.len)]).unwrap_or_default(),
            Canonical::Heap(s) => s,
        }
    }
}

/// `mantissa * 10^exponent` (the exponent a multiple of three) with its SI suffix, or in
/// exponent form for DecimalExponent and for DecimalSI beyond E (upstream #140459).
fn write_decimal(f: &mut impl fmt::Write, sign: &str, mantissa: &str, exponent: i64, format: Format) -> fmt::Result {
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
    f.write_str(sign)?;
    f.write_str(mantissa)?;
    match (format, si_suffix) {
        (Format::DecimalSI, Some(suffix)) => f.write_str(suffix),
        _ if exponent == 0 => Ok(()),
        _ => write!(f, "e{exponent}"),
    }
}

const BINARY_SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// [`Quantity::canonicalize`] for a magnitude of `nanos` (not zero unless the value is),
/// without allocating: the same steps in `u128`.
fn write_canonical_u128(neg: bool, nanos: u128, mut format: Format, f: &mut impl fmt::Write) -> fmt::Result {
    if nanos == 0 {
        return f.write_str("0");
    }
    let sign = if neg { "-" } else { "" };
    // Digits by itoa: quantities are printed a million times in a large report.
    let mut digits = itoa::Buffer::new();
    // Whole units and the fraction: one 128-bit division, and none below 2^64.
    let (units, frac) = match u64::try_from(nanos) {
        Ok(n) => (u128::from(n / 1_000_000_000), n % 1_000_000_000),
        Err(_) => (nanos / 1_000_000_000, (nanos % 1_000_000_000) as u64),
    };
    if format == Format::BinarySI {
        if frac != 0 || units < 1024 {
            format = Format::DecimalSI;
        } else {
            let mut units = units;
            let mut times = 0;
            while units & 1023 == 0 && units >= 1024 {
                units >>= 10;
                times += 1;
            }
            match BINARY_SUFFIXES.get(times) {
                Some(suffix) => {
                    f.write_str(sign)?;
                    f.write_str(digits_of(&mut digits, units))?;
                    return f.write_str(suffix);
                }
                None => format = Format::DecimalExponent,
            }
        }
    }
    // Trailing zeros become the exponent, rounded down to a multiple of three.
    let (mut mantissa, mut zeros) = if frac == 0 { (units, 9i64) } else { (nanos, 0i64) };
    while mantissa > u128::from(u64::MAX) && mantissa % 10 == 0 {
        mantissa /= 10;
        zeros += 1;
    }
    if let Ok(mut small) = u64::try_from(mantissa) {
        // 64-bit division is several times cheaper than 128-bit.
        while small % 10 == 0 {
            small /= 10;
            zeros += 1;
        }
        mantissa = u128::from(small);
    }
    let mut exponent = zeros - 9;
    while exponent.rem_euclid(3) != 0 {
        mantissa *= 10;
        exponent -= 1;
    }
    write_decimal(f, sign, digits_of(&mut digits, mantissa), exponent, format)
}

/// The decimal digits of `v`, in 64-bit arithmetic when it fits (nearly always): printing a
/// `u128` divides in 128 bits.
fn digits_of(buf: &mut itoa::Buffer, v: u128) -> &str {
    match u64::try_from(v) {
        Ok(v) => buf.format(v),
        Err(_) => buf.format(v),
    }
}

/// The text Go's `encoding/json` writes for a float64 (formatting only, no float arithmetic).
pub(super) fn go_json_float(v: f64) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantity::tests::q;

    #[test]
    fn native_printing_matches_printing_on_limbs() {
        // Powers of ten and of 1024, their neighbours and products, in every format and sign.
        let mut magnitudes: Vec<u128> = vec![1, 7, 999, 1000, 1023, 1024, 1025];
        for i in 0..39 {
            let p = 10u128.pow(i);
            magnitudes.extend([Some(p), p.checked_mul(3), p.checked_mul(1024), Some(p - 1)].into_iter().flatten());
        }
        for i in 0..13 {
            let units = 1024u128.pow(i).checked_mul(1_000_000_000);
            magnitudes.extend([units, units.and_then(|u| u.checked_mul(5)), units.map(|u| u + 1)].into_iter().flatten());
        }
        magnitudes.push(u128::MAX);
        let mut x = 0x9e37_79b9_7f4a_7c15_u128;
        for _ in 0..2000 {
            x = x.wrapping_mul(0x2545_f491_4f6c_dd1d).wrapping_add(1442695040888963407);
            magnitudes.push(x >> (x % 120));
        }
        for &m in &magnitudes {
            for format in [Format::DecimalSI, Format::BinarySI, Format::DecimalExponent] {
                for neg in [false, true] {
                    let quantity = Quantity { neg: neg && m != 0, nanos: Mag::from_u128(m), format, go_dec: false, cached: None };
                    assert_eq!(quantity.to_string(), quantity.canonicalize(), "{m} nanos, {format:?}, negative: {neg}");
                    assert_eq!(&*quantity.canonical(), quantity.canonicalize(), "{m} nanos, {format:?}, negative: {neg}");
                }
            }
        }
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
            assert_eq!(&*q(input).canonical(), *want, "canonical() of {input:?}");
        }
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
        assert_eq!(&*ten_pow_70.neg().canonical(), "-10e69");
        let twenty_pow = ten_pow_70.add(&ten_pow_70);
        assert_eq!(twenty_pow.to_canonical(), "20e69");
        assert_eq!(Quantity::from_int(2000, Format::BinarySI).to_canonical(), "2000");
        assert_eq!(Quantity::from_int(-2000, Format::BinarySI).to_canonical(), "-2000");
        assert_eq!(Quantity::from_int(1 << 60, Format::BinarySI).to_canonical(), "1Ei");
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
}
