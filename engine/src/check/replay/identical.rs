//! Identical replicas all at once: what one replica charged each quota, how many more like it
//! every quota still admits (exactly, in O(log k) sums), and charging them together, so a
//! workload of 2^31 replicas needs no loop per replica.

use crate::check::state::ClusterState;
use crate::quantity::Quantity;
use crate::resources::ResourceList;

/// The used lists of the namespace's quotas, in quota order.
pub(super) fn used_in(state: &ClusterState, ns: &str) -> Vec<ResourceList> {
    state.quotas.get(ns).map(|qs| qs.iter().map(|q| q.quota.status_used.clone()).collect()).unwrap_or_default()
}

/// Per quota and resource, what one replica (its claims and its pod) charged: `after - before`.
/// `None` when the charge is not a plain positive growth the next replicas would repeat
/// exactly (a quota appeared, a used value was zero afterwards so the next sum would take the
/// other side's format, a resource has no hard limit).
fn unit_charges(state: &ClusterState, ns: &str, before: &[ResourceList]) -> Option<Vec<Vec<(String, Quantity)>>> {
    let quotas = state.quotas.get(ns).map(Vec::as_slice).unwrap_or_default();
    if quotas.len() != before.len() {
        return None;
    }
    let mut out = Vec::with_capacity(quotas.len());
    for (q, b) in quotas.iter().zip(before) {
        let mut charges = Vec::new();
        for (r, after) in &q.quota.status_used {
            let unit = match b.get(r) {
                Some(prev) => after.sub(prev),
                None => return None,
            };
            match unit.sign() {
                0 => continue,
                s if s < 0 => return None,
                _ => {}
            }
            if after.is_zero() || !q.quota.status_hard.contains_key(r) {
                return None;
            }
            charges.push((r.clone(), unit));
        }
        if b.keys().any(|r| !q.quota.status_used.contains_key(r)) {
            return None;
        }
        out.push(charges);
    }
    Some(out)
}

/// The largest `k <= cap` with `k * unit <= avail` (`unit > 0`), exactly, in O(log k) sums.
fn max_multiple(unit: &Quantity, avail: &Quantity, cap: i64) -> i64 {
    if cap <= 0 || avail.sign() < 0 || unit > avail {
        return 0;
    }
    // powers[b] = unit * 2^b, while it stays within avail and 2^b within cap.
    let mut powers = vec![unit.clone()];
    while powers.len() < 62 && (1i64 << powers.len()) <= cap {
        match powers[powers.len() - 1].checked_add(&powers[powers.len() - 1]) {
            Some(next) if &next <= avail => powers.push(next),
            _ => break,
        }
    }
    let (mut k, mut acc) = (0i64, Quantity::zero());
    for b in (0..powers.len()).rev() {
        if k + (1i64 << b) > cap {
            continue;
        }
        if let Some(t) = acc.checked_add(&powers[b]) {
            if &t <= avail {
                acc = t;
                k += 1i64 << b;
            }
        }
    }
    k
}

/// `unit * n`, exactly (`n >= 0`).
fn times(unit: &Quantity, n: i64) -> Quantity {
    let (mut acc, mut power, mut n) = (Quantity::zero(), unit.clone(), n);
    while n > 0 {
        if n & 1 == 1 {
            acc = acc.add(&power);
        }
        n >>= 1;
        if n > 0 {
            power = power.add(&power);
        }
    }
    acc
}

/// How many more replicas, each charging what the last one did, every quota still admits
/// (at most `cap`): per quota and resource the largest k with `used + k * unit <= hard`.
pub(super) fn identical_units_that_fit(state: &ClusterState, ns: &str, before: &[ResourceList], cap: i64) -> i64 {
    if cap <= 0 {
        return 0;
    }
    let Some(charges) = unit_charges(state, ns, before) else { return 0 };
    let quotas = state.quotas.get(ns).map(Vec::as_slice).unwrap_or_default();
    let mut k = cap;
    for (q, charges) in quotas.iter().zip(&charges) {
        for (r, unit) in charges {
            let avail = q.quota.status_hard[r].sub(&q.quota.status_used[r]);
            k = k.min(max_multiple(unit, &avail, k));
            if k == 0 {
                return 0;
            }
        }
    }
    k
}

/// Charges `n` more replicas, each charging what the last one did.
pub(super) fn charge_units(state: &mut ClusterState, ns: &str, before: &[ResourceList], n: i64) {
    let Some(charges) = unit_charges(state, ns, before) else { return };
    let Some(quotas) = state.quotas.get_mut(ns) else { return };
    for (q, charges) in quotas.iter_mut().zip(charges) {
        for (r, unit) in charges {
            let used = q.quota.status_used.get_mut(&r).expect("charged resources are in used");
            *used = used.add(&times(&unit, n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_multiple_within_an_allowance_is_exact() {
        let q = |s: &str| Quantity::parse(s).unwrap();
        for (unit, avail, cap, want) in [
            ("1m", "999", 1_000_000_000, 999_000),
            ("3", "10", 100, 3),
            ("333m", "1", 100, 3),
            ("1Gi", "1Ti", 10_000, 1024),
            ("1.5Gi", "1Ti", 10_000, 682),
            ("1", "0", 100, 0),
            ("1", "-1", 100, 0),
            ("2", "1", 100, 0),
            ("1n", "9", i64::MAX, 9_000_000_000),
            ("1n", "8Ei", i64::MAX, (1i64 << 62) - 1),
            ("7", "1000", 5, 5),
        ] {
            assert_eq!(max_multiple(&q(unit), &q(avail), cap), want, "{unit} into {avail}");
            assert_eq!(times(&q(unit), want), (0..want.min(2000)).fold(Quantity::zero(), |a, _| a.add(&q(unit))).add(&times(&q(unit), want - want.min(2000))));
        }
    }
}
