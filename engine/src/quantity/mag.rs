//! `Mag`: the small built-in big integer that holds a quantity's nano units (non-negative,
//! base-2^32 limbs, the first four inline), with the few operations quantities need: sums and
//! differences (in 128 bits where they fit), multiplication by powers of ten, division by a
//! small number, decimal digits in and out.

use std::cmp::Ordering;

use smallvec::SmallVec;

/// Limbs of a [`Mag`]: four (128 bits, nanos up to about 3.4e29, i.e. every quantity a
/// cluster really uses) live inline, so adding and copying quantities allocates nothing.
type Limbs = SmallVec<[u32; 4]>;

/// A non-negative big integer: little-endian base-2^32 limbs, no zero limb at the top.
#[derive(Default, PartialEq, Eq)]
pub(super) struct Mag(pub(super) Limbs);

impl Clone for Mag {
    /// One copy of the limbs: the derived clone pushes them one by one.
    fn clone(&self) -> Mag {
        Mag(Limbs::from_slice(&self.0))
    }
}

impl Mag {
    /// Written straight into the inline limbs, without a loop of pushes.
    pub(super) fn from_u128(v: u128) -> Mag {
        let len = (128 - v.leading_zeros() as usize).div_ceil(32);
        let buf = [v as u32, (v >> 32) as u32, (v >> 64) as u32, (v >> 96) as u32];
        Mag(Limbs::from_buf_and_len(buf, len))
    }
    pub(super) fn pow10(n: usize) -> Mag {
        let mut m = Mag::from_u128(1);
        m.mul_pow10(n);
        m
    }
    /// From ASCII decimal digits (all `0-9`).
    pub(super) fn from_digits(d: &[u8]) -> Mag {
        let mut m = Mag::default();
        for chunk in d.chunks(9) {
            let v = chunk.iter().fold(0u32, |acc, &c| acc * 10 + u32::from(c - b'0'));
            m.mul_small(10u32.pow(chunk.len() as u32));
            m.add_small(v);
        }
        m
    }
    pub(super) fn is_zero(&self) -> bool {
        self.0.is_empty()
    }
    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }
    pub(super) fn bits(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => (self.0.len() as u64 - 1) * 32 + u64::from(32 - top.leading_zeros()),
        }
    }
    /// The value of a magnitude of at most four limbs.
    pub(super) fn small(&self) -> u128 {
        debug_assert!(self.0.len() <= 4);
        self.0.iter().rev().fold(0u128, |acc, &l| (acc << 32) | u128::from(l))
    }
    pub(super) fn to_u128(&self) -> Option<u128> {
        (self.0.len() <= 4).then(|| self.small())
    }
    pub(super) fn cmp_mag(&self, other: &Mag) -> Ordering {
        self.0.len().cmp(&other.0.len()).then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
    pub(super) fn add(&self, other: &Mag) -> Mag {
        // Below 2^96 each, the sum fits in 128 bits: the common case, added in one go.
        if self.0.len() < 4 && other.0.len() < 4 {
            return Mag::from_u128(self.small() + other.small());
        }
        self.add_limbs(other)
    }
    /// [`Mag::add`] limb by limb, for any size.
    fn add_limbs(&self, other: &Mag) -> Mag {
        let (long, short) = if self.0.len() >= other.0.len() { (self, other) } else { (other, self) };
        let mut out = Limbs::with_capacity(long.0.len() + 1);
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
    pub(super) fn sub(&self, other: &Mag) -> Mag {
        if self.0.len() <= 4 {
            return Mag::from_u128(self.small() - other.small());
        }
        self.sub_limbs(other)
    }
    /// [`Mag::sub`] limb by limb, for any size.
    fn sub_limbs(&self, other: &Mag) -> Mag {
        let mut out = Limbs::with_capacity(self.0.len());
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
    /// The product, exact (schoolbook: quantities have at most a few dozen limbs).
    pub(super) fn mul(&self, other: &Mag) -> Mag {
        if self.is_zero() || other.is_zero() {
            return Mag::default();
        }
        let mut out = vec![0u32; self.0.len() + other.0.len()];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u64;
            for (j, &b) in other.0.iter().enumerate() {
                let t = u64::from(a) * u64::from(b) + u64::from(out[i + j]) + carry;
                out[i + j] = t as u32;
                carry = t >> 32;
            }
            out[i + other.0.len()] = carry as u32;
        }
        let mut m = Mag(Limbs::from_vec(out));
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
    pub(super) fn add_small(&mut self, a: u32) {
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
    pub(super) fn mul_pow10(&mut self, mut n: usize) {
        while n >= 9 {
            self.mul_small(1_000_000_000);
            n -= 9;
        }
        self.mul_small(10u32.pow(n as u32));
    }
    /// `(self / d, self % d)`; `d` must be non-zero.
    pub(super) fn divmod_small(&self, d: u32) -> (Mag, u32) {
        let d = u64::from(d.max(1));
        let mut out = Limbs::from_elem(0u32, self.0.len());
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
    pub(super) fn to_decimal(&self) -> String {
        if let Some(v) = self.to_u128() {
            return v.to_string();
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
pub(super) mod tests {
    use super::*;

    /// Magnitudes around the limb boundaries (2^32, 2^64, 2^96, 2^128) and beyond.
    pub(in crate::quantity) fn boundary_mags() -> Vec<Mag> {
        let mut out = vec![Mag::default()];
        for bits in [1u32, 31, 32, 33, 63, 64, 65, 95, 96, 97, 127] {
            let p = 1u128 << bits;
            out.extend([p - 1, p, p + 1].map(Mag::from_u128));
        }
        out.push(Mag::from_u128(u128::MAX));
        out.push(Mag::pow10(40));
        out.push(Mag::pow10(40).add_limbs(&Mag::from_u128(u128::MAX)));
        out
    }

    #[test]
    fn add_and_sub_in_128_bits_equal_the_limb_by_limb_results() {
        let mags = boundary_mags();
        for a in &mags {
            if let Some(v) = a.to_u128() {
                assert!(Mag::from_u128(v) == *a, "from_u128 of {v}");
            }
            assert!(a.clone() == *a, "clone of {}", a.to_decimal());
            for b in &mags {
                assert!(a.add(b) == a.add_limbs(b), "{} + {}", a.to_decimal(), b.to_decimal());
                let (hi, lo) = if a.cmp_mag(b) == Ordering::Less { (b, a) } else { (a, b) };
                let fast = hi.sub(lo);
                assert!(fast == hi.sub_limbs(lo), "{} - {}", hi.to_decimal(), lo.to_decimal());
                assert!(fast.add(lo) == *hi, "({} - {}) + {}", hi.to_decimal(), lo.to_decimal(), lo.to_decimal());
            }
        }
    }
}
