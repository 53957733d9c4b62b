//! Dynamic Resource Allocation and quota (step 4, beside [`crate::admission::usage`]).
//!
//! From 1.34 a ResourceClaim is charged `count/resourceclaims.resource.k8s.io` and, per device
//! class, `<class>.deviceclass.resource.k8s.io/devices`: an ExactCount request adds its count
//! (0 or absent means 1), an `All` request adds 32 (the most devices an allocation result can
//! hold), and a `firstAvailable` request adds, per class, the largest of its alternatives.
//! Admin-access requests are charged too (the real 1.34.4 and 1.35.4 servers do).
//!
//! Pods do not carry devices themselves: a pod's `spec.resourceClaims` entry that names a
//! ResourceClaimTemplate makes the resourceclaim controller create one claim per pod, after the
//! pod exists. A claim refused by quota leaves its pod Pending; [`pod_claims`] builds those
//! claims so the check can admit them.
//!
//! ```
//! use kubectl_quota_engine::dra::claim_usage;
//! use kubectl_quota_engine::objects::{Claim, DeviceAsk, DeviceRequest};
//!
//! let ask = |class: &str, mode: &str, count: i64| DeviceAsk { device_class_name: class.into(), allocation_mode: mode.into(), count, admin_access: false };
//! let claim = Claim { requests: vec![
//!     DeviceRequest { name: "a".into(), exactly: Some(ask("gpu", "ExactCount", 2)), first_available: vec![] },
//!     DeviceRequest { name: "b".into(), exactly: None, first_available: vec![ask("gpu", "ExactCount", 1), ask("gpu", "ExactCount", 4), ask("fpga", "All", 0)] },
//! ] };
//! let u = claim_usage(&claim, true, false, None);
//! assert_eq!(u["gpu.deviceclass.resource.k8s.io/devices"].to_string(), "6");
//! assert_eq!(u["fpga.deviceclass.resource.k8s.io/devices"].to_string(), "32");
//! assert_eq!(u["count/resourceclaims.resource.k8s.io"].to_string(), "1");
//! ```

use std::collections::BTreeMap;

/// Prefix of the extended resource names DRA gives device classes (1.36).
pub const DRA_EXTENDED_PREFIX: &str = "deviceclass.resource.kubernetes.io/";

use crate::objects::{type_info, Body, Claim, DeviceAsk, Meta, Object};
use crate::quantity::{Format, Quantity};
use crate::resources::ResourceList;

/// The quota name counting claims.
pub const CLAIM_COUNT: &str = "count/resourceclaims.resource.k8s.io";
/// The suffix of a device class's quota name.
pub const DEVICE_CLASS_SUFFIX: &str = ".deviceclass.resource.k8s.io/devices";
/// The most devices one allocation result holds: what an `All` request is charged.
pub const ALLOCATION_RESULTS_MAX_SIZE: i64 = 32;

/// `<class>.deviceclass.resource.k8s.io/devices`.
pub fn device_class_resource(class: &str) -> String {
    format!("{class}{DEVICE_CLASS_SUFFIX}")
}

/// Whether the claim evaluator charges the quota name `n`.
pub fn tracks(n: &str) -> bool {
    n == CLAIM_COUNT || n.strip_suffix(DEVICE_CLASS_SUFFIX).is_some_and(|c| !c.is_empty())
}

fn devices(ask: &DeviceAsk) -> i64 {
    match ask.allocation_mode.as_str() {
        "All" => ALLOCATION_RESULTS_MAX_SIZE,
        _ if ask.count <= 0 => 1,
        _ => ask.count,
    }
}

/// The cluster's DeviceClasses as quota of claims reads them: each class's name and its
/// `extendedResourceName`. Shared, not copied, by every claim's evaluator.
pub type DeviceClasses = std::sync::Arc<BTreeMap<String, Option<String>>>;

/// Whether the claim evaluator of 1.36+ (DRA extended resources) charges the quota name `n`
/// beyond [`tracks`], given the cluster's DeviceClasses (`None`: unknown).
///
/// - `requests.deviceclass.resource.kubernetes.io/<class>`: when the class exists (unknown
///   classes: every class is taken to exist);
/// - `requests.<name>` for an extended resource name: when some class has that
///   `extendedResourceName`.
///
/// ```
/// use std::collections::BTreeMap;
/// use kubectl_quota_engine::dra::tracks_extended;
///
/// let classes = BTreeMap::from([("gpu".to_string(), Some("example.com/gpu".to_string())), ("fpga".to_string(), None)]);
/// assert!(tracks_extended("requests.deviceclass.resource.kubernetes.io/fpga", Some(&classes)));
/// assert!(!tracks_extended("requests.deviceclass.resource.kubernetes.io/nic", Some(&classes)));
/// assert!(tracks_extended("requests.example.com/gpu", Some(&classes)));
/// assert!(!tracks_extended("requests.example.com/nic", Some(&classes)));
/// assert!(tracks_extended("requests.deviceclass.resource.kubernetes.io/nic", None));
/// ```
pub fn tracks_extended(n: &str, classes: Option<&BTreeMap<String, Option<String>>>) -> bool {
    let Some(name) = n.strip_prefix("requests.") else { return false };
    let implicit = name.strip_prefix(DRA_EXTENDED_PREFIX).filter(|c| !c.is_empty());
    match classes {
        None => implicit.is_some(),
        Some(classes) => {
            implicit.is_some_and(|class| classes.contains_key(class))
                || ((!crate::resource_names::is_native_resource_name(name) || implicit.is_some()) && classes.values().any(|e| e.as_deref() == Some(name)))
        }
    }
}

/// What a claim consumes. `admin_access_counted`: whether admin-access requests are charged.
/// `extended` (1.36): each class's devices are also charged as the class's implicit extended
/// resource, `requests.deviceclass.resource.kubernetes.io/<class>`, and as
/// `requests.<extendedResourceName>` of a class that has one (`classes`, when known).
pub fn claim_usage(claim: &Claim, admin_access_counted: bool, extended: bool, classes: Option<&BTreeMap<String, Option<String>>>) -> ResourceList {
    let mut per_class: BTreeMap<String, i64> = BTreeMap::new();
    let counted = |a: &DeviceAsk| admin_access_counted || !a.admin_access;
    for r in &claim.requests {
        if let Some(a) = r.exactly.as_ref().filter(|a| counted(a)) {
            *per_class.entry(a.device_class_name.clone()).or_default() += devices(a);
        }
        let mut largest: BTreeMap<&str, i64> = BTreeMap::new();
        for a in r.first_available.iter().filter(|a| counted(a)) {
            let e = largest.entry(a.device_class_name.as_str()).or_default();
            *e = (*e).max(devices(a));
        }
        for (class, n) in largest {
            *per_class.entry(class.to_string()).or_default() += n;
        }
    }
    let mut out = ResourceList::new();
    out.insert(CLAIM_COUNT.into(), Quantity::from_int(1, Format::DecimalSI));
    for (class, n) in per_class {
        if extended {
            out.insert(format!("requests.{}{class}", DRA_EXTENDED_PREFIX), Quantity::from_int(n, Format::DecimalSI));
            if let Some(Some(name)) = classes.and_then(|c| c.get(&class)) {
                out.insert(format!("requests.{name}"), Quantity::from_int(n, Format::DecimalSI));
            }
        }
        out.insert(device_class_resource(&class), Quantity::from_int(n, Format::DecimalSI));
    }
    out
}

/// The claims the resourceclaim controller creates for `pod` (a Pod object): one per
/// `spec.resourceClaims` entry naming a template, looked up with `template`. Entries whose
/// template is unknown are returned in the second list (their names).
pub fn pod_claims(pod: &Object, template: impl Fn(&str) -> Option<Claim>) -> (Vec<Object>, Vec<String>) {
    let Body::Pod(p) = &pod.body else { return (vec![], vec![]) };
    let mut claims = Vec::new();
    let mut unknown = Vec::new();
    for (claim_name, tmpl) in &p.resource_claim_templates {
        match template(tmpl) {
            Some(c) => claims.push(Object {
                origin: pod.origin.clone(),
                type_info: type_info("resource.k8s.io/v1", "ResourceClaim"),
                meta: Meta { name: format!("{}-{claim_name}-<random>", pod.meta.name), namespace: pod.meta.namespace.clone(), ..Meta::default() },
                body: Body::ResourceClaim(c),
                source: Default::default(),
            }),
            None => unknown.push(tmpl.clone()),
        }
    }
    (claims, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::DeviceRequest;
    use crate::resources::pretty_print;

    fn ask(class: &str, mode: &str, count: i64, admin: bool) -> DeviceAsk {
        DeviceAsk { device_class_name: class.into(), allocation_mode: mode.into(), count, admin_access: admin }
    }

    fn exactly(a: DeviceAsk) -> DeviceRequest {
        DeviceRequest { name: "r".into(), exactly: Some(a), first_available: vec![] }
    }

    #[test]
    fn claim_usage_per_allocation_mode() {
        let cases: Vec<(&str, Vec<DeviceRequest>, bool, &str)> = vec![
            (
                "exact count adds its count",
                vec![exactly(ask("gpu", "ExactCount", 3, false))],
                true,
                "count/resourceclaims.resource.k8s.io=1,gpu.deviceclass.resource.k8s.io/devices=3",
            ),
            (
                "count 0 means 1",
                vec![exactly(ask("gpu", "ExactCount", 0, false))],
                true,
                "count/resourceclaims.resource.k8s.io=1,gpu.deviceclass.resource.k8s.io/devices=1",
            ),
            (
                "All adds 32",
                vec![exactly(ask("gpu", "All", 0, false))],
                true,
                "count/resourceclaims.resource.k8s.io=1,gpu.deviceclass.resource.k8s.io/devices=32",
            ),
            (
                "requests of one class add up",
                vec![exactly(ask("gpu", "ExactCount", 1, false)), exactly(ask("gpu", "ExactCount", 2, false))],
                true,
                "count/resourceclaims.resource.k8s.io=1,gpu.deviceclass.resource.k8s.io/devices=3",
            ),
            (
                "firstAvailable charges the largest alternative per class",
                vec![DeviceRequest {
                    name: "r".into(),
                    exactly: None,
                    first_available: vec![ask("big", "ExactCount", 1, false), ask("small", "ExactCount", 2, false), ask("small", "ExactCount", 4, false)],
                }],
                true,
                "big.deviceclass.resource.k8s.io/devices=1,count/resourceclaims.resource.k8s.io=1,small.deviceclass.resource.k8s.io/devices=4",
            ),
            (
                "admin access is charged from 1.35",
                vec![exactly(ask("gpu", "ExactCount", 2, true))],
                true,
                "count/resourceclaims.resource.k8s.io=1,gpu.deviceclass.resource.k8s.io/devices=2",
            ),
            ("admin access is not charged before", vec![exactly(ask("gpu", "ExactCount", 2, true))], false, "count/resourceclaims.resource.k8s.io=1"),
        ];
        for (name, requests, admin, want) in cases {
            assert_eq!(pretty_print(&claim_usage(&Claim { requests }, admin, false, None)), want, "{name}");
        }
    }
}
