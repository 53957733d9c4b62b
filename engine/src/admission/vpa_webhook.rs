//! The VerticalPodAutoscaler's admission webhook (vertical-pod-autoscaler's
//! admission-controller, called through MutatingAdmissionWebhook, after every built-in
//! mutating plugin): a pod created for a workload a VPA targets gets the VPA's target as its
//! requests, and, unless the container's policy says `controlledValues: RequestsOnly`, limits
//! scaled by the same factor. What it writes then meets LimitRanger's validation and quota.
//!
//! The rules, as VPA 1.8 applies them (docs/autoscaling.md, "VerticalPodAutoscalers"):
//!
//! 1. A VPA in mode `Off` changes nothing; without `status.recommendation` nothing changes.
//! 2. Only containers the recommendation names are changed (init containers never are), and
//!    only the resources its target lists.
//! 3. The target is first kept within the namespace's `type: Container` LimitRange: its `max`
//!    and `min` are read as limits, turned into the request that would give that limit at the
//!    container's own limit/request ratio (the LimitRange `default` stands in for a missing
//!    limit), and `min` also bounds the request itself. Several LimitRanges: the lowest `max`
//!    and the highest `min` of cpu and memory, the last `default`.
//! 4. Then within the container policy's `minAllowed` and `maxAllowed` (the policy named
//!    after the container, else the one named `*`).
//! 5. Under `RequestsOnly`, the target is lowered to the container's limit.
//! 6. Limits (cpu and memory only, under `RequestsAndLimits`): the original limit (or the
//!    LimitRange default) times target / original request: cpu in millicores, memory in
//!    bytes, both rounded down; a limit equal to its request, or a container without a
//!    request, gets the target itself; no original limit, no limit.
//!
//! ```
//! use kubectl_quota_engine::admission::vpa_webhook::write_pod;
//! use kubectl_quota_engine::objects::{Container, Pod, Vpa, VpaMode};
//! use kubectl_quota_engine::quantity::Quantity;
//!
//! let q = |s: &str| Quantity::parse(s).unwrap();
//! let mut pod = Pod {
//!     containers: vec![Container {
//!         name: "app".into(),
//!         requests: [("cpu".to_string(), q("500m"))].into(),
//!         limits: [("cpu".to_string(), q("1"))].into(),
//!         ..Default::default()
//!     }].into(),
//!     ..Default::default()
//! };
//! let vpa = Vpa {
//!     target: None,
//!     mode: Some(VpaMode::Recreate),
//!     mode_written: String::new(),
//!     policies: vec![],
//!     recommendation: Some(vec![("app".into(), [("cpu".to_string(), q("1200m"))].into())]),
//! };
//! write_pod(&mut pod, "web", &vpa, &[]);
//! // The request is the target; the limit keeps its ratio of 2.
//! assert_eq!(pod.containers[0].requests["cpu"].to_canonical(), "1200m");
//! assert_eq!(pod.containers[0].limits["cpu"].to_canonical(), "2400m");
//! ```

use crate::objects::{LimitRangeItem, Pod, Vpa, VpaContainerPolicy, VpaMode};
use crate::quantity::{Format, Quantity};
use crate::resources::ResourceList;

/// The resources the webhook scales limits for and reads LimitRanges of.
const SCALED: [&str; 2] = ["cpu", "memory"];

/// The namespace's `type: Container` LimitRanges merged as the webhook merges them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerRange {
    pub default: ResourceList,
    pub max: ResourceList,
    pub min: ResourceList,
}

/// A resource's value in `list`, or zero in the format the API gives a missing one.
fn of(list: &ResourceList, resource: &str) -> Quantity {
    list.get(resource).cloned().unwrap_or_else(|| Quantity::from_int(0, if resource == "memory" { Format::BinarySI } else { Format::DecimalSI }))
}

/// Merges the LimitRange items of `type_` (`Container` or `Pod`) that set a max, min or
/// default: `None` when none does.
pub fn merged_range(limit_ranges: &[(&str, &[LimitRangeItem])], type_: &str) -> Option<ContainerRange> {
    let mut out: Option<ContainerRange> = None;
    for item in limit_ranges.iter().flat_map(|(_, items)| items.iter()) {
        if item.type_ != type_ || (item.max.is_empty() && item.min.is_empty() && item.default.is_empty()) {
            continue;
        }
        let r = out.get_or_insert_with(ContainerRange::default);
        if !item.default.is_empty() {
            r.default = item.default.clone();
        }
        for res in SCALED {
            if let Some(m) = item.max.get(res) {
                let lower = r.max.get(res).map_or(m.clone(), |have| have.clone().min(m.clone()));
                r.max.insert(res.to_string(), lower);
            }
            if let Some(m) = item.min.get(res) {
                let higher = r.min.get(res).map_or(m.clone(), |have| have.clone().max(m.clone()));
                r.min.insert(res.to_string(), higher);
            }
        }
    }
    out
}

/// How a proportional result is rounded.
#[derive(Clone, Copy)]
enum Round {
    Down,
}

/// `scaled` × `result` / `base` in millicores (cpu), in `scaled`'s format. A zero base
/// leaves `scaled` as it is; a product past the int64 range is capped there.
fn scale_cpu(scaled: &Quantity, base: &Quantity, result: &Quantity, _round: Round) -> Quantity {
    if base.is_zero() {
        return scaled.clone();
    }
    let product = i128::from(scaled.milli_value()) * i128::from(result.milli_value());
    let q = product.div_euclid(i128::from(base.milli_value()));
    Quantity::from_milli(i64::try_from(q).unwrap_or(i64::MAX), scaled.format())
}

/// `scaled` × `result` / `base` in whole units (bytes for memory), in `scaled`'s format.
fn scale_units(scaled: &Quantity, base: &Quantity, result: &Quantity, _round: Round) -> Quantity {
    let b = base.value();
    if b == 0 {
        return scaled.clone();
    }
    let q = (i128::from(scaled.value()) * i128::from(result.value())).div_euclid(i128::from(b));
    Quantity::from_int(i64::try_from(q).unwrap_or(i64::MAX), scaled.format())
}

fn scale(resource: &str, scaled: &Quantity, base: &Quantity, result: &Quantity) -> Quantity {
    if resource == "cpu" {
        scale_cpu(scaled, base, result, Round::Down)
    } else {
        scale_units(scaled, base, result, Round::Down)
    }
}

/// The limit a container gets with `recommended` as its request (rule 6); `None`: no limit set.
fn proportional_limit(resource: &str, limit: &Quantity, request: &Quantity, recommended: &Quantity, default_limit: &Quantity) -> Option<Quantity> {
    let limit = if limit.value() == 0 { default_limit } else { limit };
    if limit.value() == 0 || recommended.value() == 0 {
        return None;
    }
    if request.value() == 0 || request.milli_value() == limit.milli_value() {
        return Some(recommended.clone());
    }
    Some(scale(resource, limit, request, recommended))
}

/// The request that gives `boundary` as a limit at the container's ratio (rule 3): zero (no
/// bound) when the container has no limit and the LimitRange no default.
fn boundary_request(resource: &str, request: &Quantity, limit: &Quantity, boundary: &Quantity, default_limit: &Quantity) -> Quantity {
    let limit = if limit.value() == 0 { default_limit } else { limit };
    if limit.value() == 0 {
        return Quantity::zero();
    }
    if request.value() == 0 {
        return boundary.clone();
    }
    scale(resource, request, limit, boundary)
}

/// The container policy for `container`: its own, else the `*` one.
fn policy_for<'a>(policies: &'a [VpaContainerPolicy], container: &str) -> Option<&'a VpaContainerPolicy> {
    policies.iter().find(|p| p.container == container).or_else(|| policies.iter().find(|p| p.container == "*"))
}

/// Raises `target[res]` to `floor` (when set and not zero), lowers it to `ceiling`; returns
/// what was done, in the webhook's words.
fn bound(target: &mut ResourceList, floors: &ResourceList, ceilings: &ResourceList, to_min: &str, to_max: &str) -> Vec<String> {
    let mut said = Vec::new();
    for (res, v) in target.iter_mut() {
        if let Some(floor) = floors.get(res).filter(|f| !f.is_zero() && *v < **f) {
            *v = floor.clone();
            said.push(format!("{res} {to_min}"));
        }
        if let Some(ceiling) = ceilings.get(res).filter(|c| !c.is_zero() && *v > **c) {
            *v = ceiling.clone();
            said.push(format!("{res} {to_max}"));
        }
    }
    said
}

/// Rule 3: the target within the container LimitRange.
fn within_range(target: &mut ResourceList, requests: &ResourceList, limits: &ResourceList, range: &ContainerRange) -> Vec<String> {
    let bounds = |b: &ResourceList| -> ResourceList {
        SCALED.iter().map(|r| (r.to_string(), boundary_request(r, &of(requests, r), &of(limits, r), &of(b, r), &of(&range.default, r)))).collect()
    };
    let max = if range.max.is_empty() { ResourceList::new() } else { bounds(&range.max) };
    let mut min = if range.min.is_empty() { ResourceList::new() } else { bounds(&range.min) };
    for r in SCALED {
        if let Some(m) = range.min.get(r) {
            if min.get(r).is_none_or(|have| m > have) {
                min.insert(r.to_string(), m.clone());
            }
        }
    }
    bound(target, &min, &max, "capped to fit Min in container LimitRange", "capped to fit Max in container LimitRange")
}

/// Writes the VPA `name`'s target into `pod` (a pod being created for the VPA's target) as
/// its webhook does; returns what changed, in words, for the report's mutations.
pub fn write_pod(pod: &mut Pod, name: &str, vpa: &Vpa, limit_ranges: &[(&str, &[LimitRangeItem])]) -> Vec<String> {
    let Some(mode) = vpa.mode else {
        return vec![format!("VPA {name} has updateMode {:?}, which this tool does not know: its webhook's changes are not replayed", vpa.mode_written)];
    };
    if mode == VpaMode::Off {
        return vec![];
    }
    let Some(recommendation) = &vpa.recommendation else { return vec![] };
    let range = merged_range(limit_ranges, "Container");
    let mut notes = Vec::new();
    if merged_range(limit_ranges, "Pod").is_some_and(|r| SCALED.iter().any(|res| r.max.contains_key(*res) || r.min.contains_key(*res))) {
        notes.push(format!("VPA {name}: the namespace's Pod LimitRange also bounds the VPA's target, and that step is not replayed"));
    }
    for c in std::sync::Arc::make_mut(&mut pod.containers).iter_mut() {
        let Some((_, target)) = recommendation.iter().find(|(n, _)| *n == c.name) else { continue };
        let mut target = target.clone();
        let policy = policy_for(&vpa.policies, &c.name);
        let mut capped = range.as_ref().map(|r| within_range(&mut target, &c.requests, &c.limits, r)).unwrap_or_default();
        if let Some(p) = policy {
            capped.extend(bound(&mut target, &p.min_allowed, &p.max_allowed, "capped to minAllowed", "capped to maxAllowed"));
        }
        let requests_only = policy.is_some_and(|p| p.requests_only);
        if requests_only {
            capped.extend(bound(&mut target, &ResourceList::new(), &c.limits, "", "capped to container limit"));
        }
        let limits: ResourceList = if requests_only {
            ResourceList::new()
        } else {
            let default = range.as_ref().map(|r| r.default.clone()).unwrap_or_default();
            SCALED
                .iter()
                .filter_map(|r| proportional_limit(r, &of(&c.limits, r), &of(&c.requests, r), &of(&target, r), &of(&default, r)).map(|l| (r.to_string(), l)))
                .collect()
        };
        if target.is_empty() && limits.is_empty() {
            continue;
        }
        let said = |l: &ResourceList| l.iter().map(|(k, v)| format!("{k}={}", v.to_canonical())).collect::<Vec<_>>().join(", ");
        let mut note = format!("VPA {name}'s admission webhook sets container {:?}'s requests to {}", c.name, said(&target));
        if !limits.is_empty() {
            note.push_str(&format!(" and limits to {}", said(&limits)));
        }
        if !capped.is_empty() {
            note.push_str(&format!(" ({})", capped.join(", ")));
        }
        notes.push(note);
        c.requests.extend(target);
        c.limits.extend(limits);
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::testing::{pod_with, rl};

    fn vpa(target: &[(&str, &str)], policies: Vec<VpaContainerPolicy>) -> Vpa {
        Vpa { target: None, mode: Some(VpaMode::Recreate), mode_written: String::new(), policies, recommendation: Some(vec![("app".into(), rl(target))]) }
    }

    fn container_range(max: &[(&str, &str)], min: &[(&str, &str)], default: &[(&str, &str)]) -> LimitRangeItem {
        LimitRangeItem { type_: "Container".into(), max: rl(max), min: rl(min), default: rl(default), ..Default::default() }
    }

    /// (what, requests, limits, target, policies, LimitRange, requests after, limits after)
    type Case = (
        &'static str,
        Vec<(&'static str, &'static str)>,
        Vec<(&'static str, &'static str)>,
        Vec<(&'static str, &'static str)>,
        Vec<VpaContainerPolicy>,
        Option<LimitRangeItem>,
        Vec<(&'static str, &'static str)>,
        Vec<(&'static str, &'static str)>,
    );

    #[test]
    fn the_webhook_writes_the_target_and_scales_limits_as_vpa_1_8_does() {
        let max_cpu = |q: &str| VpaContainerPolicy { container: "*".into(), max_allowed: rl(&[("cpu", q)]), ..Default::default() };
        let requests_only = VpaContainerPolicy { container: "app".into(), requests_only: true, ..Default::default() };
        let cases: Vec<Case> = vec![
            (
                "limits keep their ratio to the request",
                vec![("cpu", "500m"), ("memory", "256Mi")],
                vec![("cpu", "1"), ("memory", "512Mi")],
                vec![("cpu", "1200m"), ("memory", "300Mi")],
                vec![],
                None,
                vec![("cpu", "1200m"), ("memory", "300Mi")],
                vec![("cpu", "2400m"), ("memory", "600Mi")],
            ),
            (
                "a limit equal to the request becomes the target",
                vec![("cpu", "500m")],
                vec![("cpu", "500m")],
                vec![("cpu", "750m")],
                vec![],
                None,
                vec![("cpu", "750m")],
                vec![("cpu", "750m")],
            ),
            ("no limit, no limit", vec![("cpu", "500m")], vec![], vec![("cpu", "2")], vec![], None, vec![("cpu", "2")], vec![]),
            (
                "a limit without a request gets the target",
                vec![],
                vec![("memory", "1Gi")],
                vec![("memory", "300Mi")],
                vec![],
                None,
                vec![("memory", "300Mi")],
                vec![("memory", "300Mi")],
            ),
            (
                "memory scales in bytes, rounded down",
                vec![("memory", "300Mi")],
                vec![("memory", "1Gi")],
                vec![("memory", "100M")],
                vec![],
                None,
                vec![("memory", "100M")],
                vec![("memory", "341333333")],
            ),
            (
                "cpu scales in millicores, rounded down",
                vec![("cpu", "300m")],
                vec![("cpu", "1")],
                vec![("cpu", "100m")],
                vec![],
                None,
                vec![("cpu", "100m")],
                vec![("cpu", "333m")],
            ),
            (
                "maxAllowed of the * policy caps the target",
                vec![("cpu", "500m")],
                vec![("cpu", "1")],
                vec![("cpu", "3")],
                vec![max_cpu("2")],
                None,
                vec![("cpu", "2")],
                vec![("cpu", "4")],
            ),
            (
                "RequestsOnly leaves limits and caps to them",
                vec![("cpu", "500m")],
                vec![("cpu", "1")],
                vec![("cpu", "3")],
                vec![requests_only],
                None,
                vec![("cpu", "1")],
                vec![("cpu", "1")],
            ),
            (
                "LimitRange max is a limit: the request is bounded at the ratio",
                vec![("cpu", "500m")],
                vec![("cpu", "1")],
                vec![("cpu", "3")],
                vec![],
                Some(container_range(&[("cpu", "2")], &[], &[])),
                vec![("cpu", "1")],
                vec![("cpu", "2")],
            ),
            (
                "LimitRange min bounds the request itself",
                vec![("cpu", "500m")],
                vec![],
                vec![("cpu", "50m")],
                vec![],
                Some(container_range(&[], &[("cpu", "100m")], &[])),
                vec![("cpu", "100m")],
                vec![],
            ),
            (
                "the LimitRange default stands in for a missing limit",
                vec![("cpu", "500m")],
                vec![],
                vec![("cpu", "1")],
                vec![],
                Some(container_range(&[], &[], &[("cpu", "1")])),
                vec![("cpu", "1")],
                vec![("cpu", "2")],
            ),
            (
                "resources outside the target are left alone",
                vec![("cpu", "500m"), ("memory", "1Gi")],
                vec![("cpu", "1"), ("memory", "1Gi")],
                vec![("cpu", "250m")],
                vec![],
                None,
                vec![("cpu", "250m"), ("memory", "1Gi")],
                vec![("cpu", "500m"), ("memory", "1Gi")],
            ),
        ];
        for (what, req, lim, target, policies, range, want_req, want_lim) in cases {
            let mut pod = pod_with(&req, &lim);
            let items: Vec<LimitRangeItem> = range.into_iter().collect();
            let ranges: Vec<(&str, &[LimitRangeItem])> = if items.is_empty() { vec![] } else { vec![("lr", items.as_slice())] };
            write_pod(&mut pod, "web", &vpa(&target, policies), &ranges);
            let canon = |l: &ResourceList| l.iter().map(|(k, v)| (k.clone(), v.to_canonical())).collect::<Vec<_>>();
            let want = |l: &[(&str, &str)]| l.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
            assert_eq!(canon(&pod.containers[0].requests), want(&want_req), "{what}: requests");
            assert_eq!(canon(&pod.containers[0].limits), want(&want_lim), "{what}: limits");
        }
    }

    #[test]
    fn off_mode_no_recommendation_and_unnamed_containers_change_nothing() {
        let before = pod_with(&[("cpu", "500m")], &[("cpu", "1")]);
        let mut off = vpa(&[("cpu", "2")], vec![]);
        off.mode = Some(VpaMode::Off);
        let mut none = vpa(&[("cpu", "2")], vec![]);
        none.recommendation = None;
        let mut other = vpa(&[("cpu", "2")], vec![]);
        other.recommendation = Some(vec![("sidecar".into(), rl(&[("cpu", "2")]))]);
        for v in [off, none, other] {
            let mut pod = before.clone();
            assert!(write_pod(&mut pod, "web", &v, &[]).is_empty());
            assert_eq!(pod, before);
        }
    }

    #[test]
    fn several_limit_ranges_merge_to_the_lowest_max_and_highest_min() {
        let a = [container_range(&[("cpu", "2")], &[("cpu", "100m")], &[("cpu", "1")])];
        let b = [container_range(&[("cpu", "3"), ("memory", "1Gi")], &[("cpu", "200m")], &[])];
        let merged = merged_range(&[("a", &a[..]), ("b", &b[..])], "Container").unwrap();
        assert_eq!(merged.max, rl(&[("cpu", "2"), ("memory", "1Gi")]));
        assert_eq!(merged.min, rl(&[("cpu", "200m")]));
        assert_eq!(merged.default, rl(&[("cpu", "1")]));
    }
}
