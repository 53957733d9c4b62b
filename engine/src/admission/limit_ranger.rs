//! LimitRanger, a plugin with both halves. The mutating half ([`apply_limit_ranges`]) fills a
//! new pod's missing container limits and requests from the namespace's LimitRanges
//! (`default`, `defaultRequest`); the validating half, after every mutating plugin, refuses
//! what breaks a LimitRange's `min`, `max` and `maxLimitRequestRatio`, with the server's words
//! (docs/semantics.md §9):
//!
//! - `type: Container`: every container and init container, its own requests and limits;
//! - `type: Pod`: the pod's requests and limits added up as the scheduler adds them
//!   (containers and sidecars summed, the largest init phase), pod-level `cpu` and `memory`
//!   replacing the sum where the release has pod-level resources; before 1.28 as 1.20 adds
//!   them (a resource some container lacks is left out, the rest printed as plain numbers);
//! - `type: PersistentVolumeClaim`: a claim's `storage` request (`min` and `max`), on create
//!   and on every update.
//!
//! Pods are checked on create, and on an in-place resize (`pods/resize`) where the release
//! has it; a claim on create and update.
//!
//! The first LimitRange (in name order) with a violation refuses, naming every violation of
//! it: one as it is, several as `[a, b]`. Within a LimitRange the server walks its maps in
//! Go's random order; resources are taken here in name order.
//!
//! ```
//! use kubectl_quota_engine::admission::limit_ranger::validate_pod;
//! use kubectl_quota_engine::objects::{Container, LimitRangeItem, Pod};
//! use kubectl_quota_engine::quantity::Quantity;
//!
//! let q = |s: &str| Quantity::parse(s).unwrap();
//! let item = LimitRangeItem { type_: "Container".into(), max: [("cpu".to_string(), q("1"))].into(), ..Default::default() };
//! let pod = Pod { containers: vec![Container { name: "app".into(), limits: [("cpu".to_string(), q("2"))].into(), ..Default::default() }].into(), ..Default::default() };
//! let rules = kubectl_quota_engine::version::Rules::current();
//! assert_eq!(validate_pod(&pod, &[("lr", std::slice::from_ref(&item))], &rules), Err("maximum cpu usage per Container is 1, but limit is 2".to_string()));
//! ```

use std::cmp::Ordering;

use crate::defaulting::Bounded;
use crate::objects::{Container, LimitRangeItem, Pod, Pvc};
use crate::pod_totals::aggregate;
use crate::quantity::{Format, Quantity};
use crate::resources::ResourceList;
use crate::version::Rules;

/// LimitRanger's defaults for every container and init container. Within one LimitRange the
/// Container items' defaults are gathered first, a later item's value replacing an earlier
/// one's; then each container gets those it lacks (a first LimitRange's stay).
pub fn apply_limit_ranges(pod: &mut Pod, limit_ranges: &[(&str, &[LimitRangeItem])]) -> Vec<String> {
    let mut notes = Bounded::default();
    for (lr_name, items) in limit_ranges {
        let (mut limits, mut requests) = (ResourceList::new(), ResourceList::new());
        for item in items.iter().filter(|i| i.type_ == "Container") {
            limits.extend(item.default.iter().map(|(k, v)| (k.clone(), v.clone())));
            requests.extend(item.default_request.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        // The containers are changed (and so copied, when shared) only when some one lacks a default.
        let lacks = |c: &crate::objects::Container| limits.keys().any(|k| !c.limits.contains_key(k)) || requests.keys().any(|k| !c.requests.contains_key(k));
        let containers = crate::objects::changing(&mut pod.containers, lacks);
        for c in containers.iter_mut().chain(crate::objects::changing(&mut pod.init_containers, lacks)) {
            for (k, v) in &limits {
                if !c.limits.contains_key(k) {
                    notes.push(|| format!("LimitRange {lr_name}: container {} limits.{k}={v} (default)", c.name));
                    c.limits.insert(k.clone(), v.clone());
                }
            }
            for (k, v) in &requests {
                if !c.requests.contains_key(k) {
                    notes.push(|| format!("LimitRange {lr_name}: container {} requests.{k}={v} (defaultRequest)", c.name));
                    c.requests.insert(k.clone(), v.clone());
                }
            }
        }
    }
    notes.into_vec()
}

/// `resource.MaxMilliValue`: above it a value is compared in whole units, not milli-units.
const MAX_MILLI_VALUE: i64 = i64::MAX / 1000;

/// How a release compares values with a LimitRange's: exactly from 1.38
/// (`limit_range_exact_compare`); before, projected onto integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    Projected,
    Exact,
}

impl Compare {
    fn of(rules: &Rules) -> Compare {
        if rules.limit_range_exact_compare {
            Compare::Exact
        } else {
            Compare::Projected
        }
    }

    /// How the request and the limit (missing: 0) each compare with `enforced`.
    fn order(self, request: Option<&Quantity>, limit: Option<&Quantity>, enforced: &Quantity) -> (Ordering, Ordering) {
        match self {
            Compare::Exact => {
                let zero = Quantity::zero();
                (request.unwrap_or(&zero).cmp(enforced), limit.unwrap_or(&zero).cmp(enforced))
            }
            Compare::Projected => {
                let (r, l, e) = projected(request, limit, enforced);
                (r.cmp(&e), l.cmp(&e))
            }
        }
    }
}

/// Request, limit and enforced value as releases before 1.38 compare them: in milli-units
/// when none would overflow, else in whole units (each rounded up, as `Value()` and
/// `MilliValue()` do).
fn projected(request: Option<&Quantity>, limit: Option<&Quantity>, enforced: &Quantity) -> (i64, i64, i64) {
    let units = |q: Option<&Quantity>| q.map_or(0, Quantity::value);
    let (r, l, e) = (units(request), units(limit), enforced.value());
    if r <= MAX_MILLI_VALUE && l <= MAX_MILLI_VALUE && e <= MAX_MILLI_VALUE {
        let milli = |q: Option<&Quantity>| q.map_or(0, Quantity::milli_value);
        (milli(request), milli(limit), enforced.milli_value())
    } else {
        (r, l, e)
    }
}

fn min_violation(how: Compare, kind: &str, name: &str, enforced: &Quantity, requests: &ResourceList, limits: &ResourceList) -> Option<String> {
    let (req, lim) = (requests.get(name), limits.get(name));
    let (r, l) = how.order(req, lim, enforced);
    match (req, lim) {
        (None, _) => Some(format!("minimum {name} usage per {kind} is {enforced}.  No request is specified")),
        (Some(req), _) if r == Ordering::Less => Some(format!("minimum {name} usage per {kind} is {enforced}, but request is {req}")),
        (_, Some(lim)) if l == Ordering::Less => Some(format!("minimum {name} usage per {kind} is {enforced}, but limit is {lim}")),
        _ => None,
    }
}

fn max_violation(how: Compare, kind: &str, name: &str, enforced: &Quantity, requests: &ResourceList, limits: &ResourceList) -> Option<String> {
    let (req, lim) = (requests.get(name), limits.get(name));
    let (r, l) = how.order(req, lim, enforced);
    match (req, lim) {
        (_, None) => Some(format!("maximum {name} usage per {kind} is {enforced}.  No limit is specified")),
        (_, Some(lim)) if l == Ordering::Greater => Some(format!("maximum {name} usage per {kind} is {enforced}, but limit is {lim}")),
        (Some(req), _) if r == Ordering::Greater => Some(format!("maximum {name} usage per {kind} is {enforced}, but request is {req}")),
        _ => None,
    }
}

fn ratio_violation(how: Compare, kind: &str, name: &str, enforced: &Quantity, requests: &ResourceList, limits: &ResourceList) -> Option<String> {
    let (req, lim) = (requests.get(name), limits.get(name));
    let (r, l, _) = projected(req, lim, enforced);
    let zero = |q: Option<&Quantity>, projected: i64| match how {
        Compare::Exact => q.is_none_or(Quantity::is_zero),
        Compare::Projected => q.is_none() || projected == 0,
    };
    if zero(req, r) {
        return Some(format!("{name} max limit to request ratio per {kind} is {enforced}, but no request is specified or request is 0"));
    }
    if zero(lim, l) {
        return Some(format!("{name} max limit to request ratio per {kind} is {enforced}, but no limit is specified or limit is 0"));
    }
    let (Some(req), Some(lim)) = (req, lim) else { return None };
    let observed = match how {
        // Is the limit above request × ratio, exactly; the ratio printed is the quotient of
        // the two values as floating point, as the server prints it (`+Inf`, `NaN` past f64).
        Compare::Exact => (lim.cmp_product(req, enforced) == Ordering::Greater).then(|| go_float(lim.approximate_f64() / req.approximate_f64())),
        // limit / request > enforced, divided in floating point as the server divides, in
        // milli-units of the ratio when the enforced value allows (past 2^53 the quotient
        // rounds: 10000000000000001 / 10000000000000000 is 1.0).
        Compare::Projected => {
            let observed = l as f64 / r as f64;
            let (scaled, allowed) =
                if enforced.value() <= MAX_MILLI_VALUE { (observed * 1000.0, enforced.milli_value() as f64) } else { (observed, enforced.value() as f64) };
            (scaled > allowed).then(|| go_float(observed))
        }
    };
    observed.map(|ratio| format!("{name} max limit to request ratio per {kind} is {enforced}, but provided ratio is {ratio}"))
}

/// A double as Go's `%f` prints it: six decimals of its exact binary value, the last rounded
/// half to even, or `+Inf`, `-Inf`, `NaN`.
fn go_float(x: f64) -> String {
    match x {
        _ if x.is_nan() => "NaN".into(),
        f64::INFINITY => "+Inf".into(),
        f64::NEG_INFINITY => "-Inf".into(),
        _ => format!("{x:.6}"),
    }
}

/// Every violation of one item's three maps against one set of requests and limits.
fn violations(
    how: Compare,
    item: &LimitRangeItem,
    kind: &str,
    (requests, limits): (&ResourceList, &ResourceList),
    checked: impl Fn(&str) -> bool,
    out: &mut Vec<String>,
) {
    out.extend(item.min.iter().filter(|(k, _)| checked(k)).filter_map(|(k, v)| min_violation(how, kind, k, v, requests, limits)));
    out.extend(item.max.iter().filter(|(k, _)| checked(k)).filter_map(|(k, v)| max_violation(how, kind, k, v, requests, limits)));
    out.extend(item.max_limit_request_ratio.iter().filter(|(k, _)| checked(k)).filter_map(|(k, v)| ratio_violation(how, kind, k, v, requests, limits)));
}

/// The server's aggregate of several errors: each message once (the first time it comes),
/// one alone as it is, several as `[a, b]`.
fn aggregate_errors(errors: Vec<String>) -> Result<(), String> {
    let mut unique: Vec<String> = Vec::new();
    for e in errors {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    match unique.len() {
        0 => Ok(()),
        1 => Err(unique.remove(0)),
        _ => Err(format!("[{}]", unique.join(", "))),
    }
}

/// A pod's totals as releases before 1.28 add them for `type: Pod`: only resources every
/// container names, cpu in milli-units and the rest in whole units (rounded up), printed as
/// plain numbers; then the largest init container, as written.
fn legacy_totals(pod: &Pod, pick: impl Fn(&Container) -> &ResourceList) -> ResourceList {
    let mut out = ResourceList::new();
    let names: std::collections::BTreeSet<&String> = pod.containers.iter().flat_map(|c| pick(c).keys()).collect();
    for name in names {
        let values: Option<Vec<&Quantity>> = pod.containers.iter().map(|c| pick(c).get(name)).collect();
        let Some(values) = values else { continue };
        let total = if name == "cpu" {
            Quantity::from_milli(values.iter().map(|v| v.milli_value()).fold(0i64, i64::saturating_add), Format::DecimalSI)
        } else {
            Quantity::from_int(values.iter().map(|v| v.value()).fold(0i64, i64::saturating_add), Format::DecimalSI)
        };
        out.insert(name.clone(), total);
    }
    for c in pod.init_containers.iter() {
        for (k, v) in pick(c) {
            if out.get(k).is_none_or(|cur| v > cur) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// A pod being created (or resized) against the namespace's LimitRanges, after their
/// defaults and every other mutation: the refusal's message (after `is forbidden: `).
pub fn validate_pod(pod: &Pod, limit_ranges: &[(&str, &[LimitRangeItem])], rules: &Rules) -> Result<(), String> {
    validate_pod_against(pod, None, limit_ranges, rules)
}

/// A pod's totals as LimitRanger adds them for a `type: Pod` item: requests and limits.
fn pod_totals(pod: &Pod, rules: &Rules) -> (ResourceList, ResourceList) {
    let (mut requests, mut limits) = if rules.limit_range_pod_totals_kept {
        (aggregate(pod, |c| &c.requests), aggregate(pod, |c| &c.limits))
    } else {
        (legacy_totals(pod, |c| &c.requests), legacy_totals(pod, |c| &c.limits))
    };
    if rules.pod_level_resources {
        for (list, pod_level) in [(&mut requests, &pod.pod_requests), (&mut limits, &pod.pod_limits)] {
            for (k, v) in pod_level.iter().filter(|(k, _)| *k == "cpu" || *k == "memory") {
                list.insert(k.clone(), v.clone());
            }
        }
    }
    (requests, limits)
}

/// Whether resource `k` has the same request and the same limit in `now` as in `before`
/// (each absent from both, or present in both with equal values).
fn unchanged(k: &str, now: (&ResourceList, &ResourceList), before: (&ResourceList, &ResourceList)) -> bool {
    let same = |a: &ResourceList, b: &ResourceList| a.get(k) == b.get(k);
    same(now.0, before.0) && same(now.1, before.1)
}

/// [`validate_pod`], with the stored pod of a resize: from 1.38 a resource whose request and
/// limit the resize leaves as they were (per container, matched by name in its own list, and
/// for the pod's totals) is not checked again, so a stored value a LimitRange no longer
/// allows does not refuse a resize of something else.
fn validate_pod_against(pod: &Pod, old: Option<&Pod>, limit_ranges: &[(&str, &[LimitRangeItem])], rules: &Rules) -> Result<(), String> {
    let how = Compare::of(rules);
    let old = old.filter(|_| rules.limit_range_skips_unchanged);
    let wants_totals = limit_ranges.iter().any(|(_, items)| items.iter().any(|i| i.type_ == "Pod"));
    let totals = wants_totals.then(|| (pod_totals(pod, rules), old.map(|o| pod_totals(o, rules))));
    for (_, items) in limit_ranges {
        let mut errors = Vec::new();
        for item in items.iter() {
            match item.type_.as_str() {
                "Container" => {
                    for (list, stored) in [(&**pod.containers, old.map(|o| &*o.containers)), (&**pod.init_containers, old.map(|o| &*o.init_containers))] {
                        for c in list {
                            let was = stored.and_then(|s| s.iter().find(|o| o.name == c.name));
                            let checked = |k: &str| was.is_none_or(|o| !unchanged(k, (&c.requests, &c.limits), (&o.requests, &o.limits)));
                            violations(how, item, "Container", (&c.requests, &c.limits), checked, &mut errors);
                        }
                    }
                }
                "Pod" => {
                    let Some(((requests, limits), before)) = &totals else { continue };
                    let checked = |k: &str| before.as_ref().is_none_or(|(r, l)| !unchanged(k, (requests, limits), (r, l)));
                    violations(how, item, "Pod", (requests, limits), checked, &mut errors);
                }
                _ => {}
            }
        }
        aggregate_errors(errors)?;
    }
    Ok(())
}

/// A pod being updated: checked when the update is an in-place resize (`pods/resize`, where
/// the release serves it), in full before 1.38 and only in what it changes from 1.38; any
/// other pod update is not LimitRanger's.
pub fn validate_pod_update(old: &Pod, new: &Pod, limit_ranges: &[(&str, &[LimitRangeItem])], rules: &Rules) -> Result<(), String> {
    if rules.pod_resize && crate::pod_totals::is_resize(old, new) {
        // The stored pod as the server stores it: a state written by hand may leave out the
        // requests the API defaults from limits, which would read as changed.
        let mut stored = old.clone();
        crate::defaulting::default_pod_api_for(&mut stored, rules);
        validate_pod_against(new, Some(&stored), limit_ranges, rules)
    } else {
        Ok(())
    }
}

/// `max` against a request alone (a claim has no limits): `but request is`.
fn max_request_violation(how: Compare, kind: &str, name: &str, enforced: &Quantity, requests: &ResourceList) -> Option<String> {
    let req = requests.get(name);
    let (r, _) = how.order(req, None, enforced);
    match req {
        None => Some(format!("maximum {name} usage per {kind} is {enforced}.  No request is specified")),
        Some(req) if r == Ordering::Greater => Some(format!("maximum {name} usage per {kind} is {enforced}, but request is {req}")),
        _ => None,
    }
}

/// A claim being created or updated (`old`: the stored claim) against the namespace's
/// LimitRanges: its `storage` request against `min` and `max`. From 1.38 an update's request
/// equal to the stored one is not checked again.
pub fn validate_pvc(pvc: &Pvc, old: Option<&Pvc>, limit_ranges: &[(&str, &[LimitRangeItem])], rules: &Rules) -> Result<(), String> {
    let how = Compare::of(rules);
    let requests: ResourceList = pvc.storage_request.iter().map(|q| ("storage".to_string(), q.clone())).collect();
    let stored = old.filter(|_| rules.limit_range_skips_unchanged).and_then(|o| o.storage_request.as_ref());
    let checked = |k: &str| !(k == "storage" && stored.is_some_and(|s| pvc.storage_request.as_ref() == Some(s)));
    for (_, items) in limit_ranges {
        let mut errors = Vec::new();
        for item in items.iter().filter(|i| i.type_ == "PersistentVolumeClaim") {
            let none = ResourceList::new();
            errors.extend(item.min.iter().filter(|(k, _)| checked(k)).filter_map(|(k, v)| min_violation(how, "PersistentVolumeClaim", k, v, &requests, &none)));
            errors
                .extend(item.max.iter().filter(|(k, _)| checked(k)).filter_map(|(k, v)| max_request_violation(how, "PersistentVolumeClaim", k, v, &requests)));
        }
        aggregate_errors(errors)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::objects::testing::{pod_with, rl};

    #[test]
    fn defaulting_notes_are_kept_to_a_hundred_with_a_count_of_the_rest() {
        let containers = std::sync::Arc::new((0..150).map(|i| Container { name: format!("c{i}"), ..Container::default() }).collect());
        let mut pod = Pod { containers, ..Pod::default() };
        let item =
            LimitRangeItem { type_: "Container".into(), default: rl(&[("cpu", "1")]), default_request: rl(&[("cpu", "500m")]), ..LimitRangeItem::default() };
        let notes = apply_limit_ranges(&mut pod, &[("lr", std::slice::from_ref(&item))]);
        assert_eq!(notes.len(), 101);
        assert_eq!(notes[0], "LimitRange lr: container c0 limits.cpu=1 (default)");
        assert_eq!(notes[100], "... and 200 more like these");
        // Every container is defaulted all the same.
        assert!(pod.containers.iter().all(|c| c.limits.len() == 1 && c.requests.len() == 1));
    }

    #[test]
    fn limit_range_fills_only_missing_values() {
        let item = LimitRangeItem {
            type_: "Container".into(),
            default: rl(&[("cpu", "500m")]),
            default_request: rl(&[("cpu", "100m"), ("memory", "64Mi")]),
            ..LimitRangeItem::default()
        };
        let items = [item];
        let cases = [
            (pod_with(&[], &[]), "cpu=100m,memory=64Mi", "cpu=500m"),
            (pod_with(&[("cpu", "200m")], &[]), "cpu=200m,memory=64Mi", "cpu=500m"),
            (pod_with(&[], &[("cpu", "2")]), "cpu=2,memory=64Mi", "cpu=2"),
        ];
        for (mut p, req, lim) in cases {
            crate::defaulting::default_pod_api(&mut p);
            apply_limit_ranges(&mut p, &[("lr", &items)]);
            assert_eq!(crate::resources::pretty_print(&p.containers[0].requests), req);
            assert_eq!(crate::resources::pretty_print(&p.containers[0].limits), lim);
        }
    }

    #[test]
    fn ratios_print_six_decimals_rounded_half_to_even() {
        for (n, d, want) in [(4, 1, "4.000000"), (10, 3, "3.333333"), (2, 3, "0.666667"), (1, 128, "0.007812"), (3, 128, "0.023438")] {
            assert_eq!(go_float(f64::from(n) / f64::from(d)), want, "{n}/{d}");
        }
    }
}
