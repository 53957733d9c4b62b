//! Resource-name and scope classification, exactly as kube-apiserver does it.
//!
//! Everything here is a pure function over strings. The lists and rules follow
//! `pkg/apis/core/helper/helpers.go` (standard / quota / integer / extended / native
//! resource names, quota scopes) and `k8s.io/apimachinery/pkg/util/validation`
//! (qualified names, label values, RFC 1123 names) of current (1.3x) servers. The
//! `*_errors` functions return the server's own error strings, in the server's order;
//! an empty vector means "valid".

use std::fmt;

/// Prefix of huge-page resources (`hugepages-2Mi`).
pub const HUGEPAGES_PREFIX: &str = "hugepages-";
/// Prefix of the quota form of huge-page resources (`requests.hugepages-2Mi`).
pub const REQUESTS_HUGEPAGES_PREFIX: &str = "requests.hugepages-";
/// Prefix that quota puts in front of a requested resource (`requests.cpu`, `requests.nvidia.com/gpu`).
pub const REQUESTS_PREFIX: &str = "requests.";
/// Names containing this are in the (native) kubernetes.io namespace.
pub const DEFAULT_NAMESPACE_PREFIX: &str = "kubernetes.io/";

/// The resource names the quota system knows (`standardQuotaResources`), without the
/// `hugepages-*` / `requests.hugepages-*` families, which are also standard.
pub const STANDARD_QUOTA_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

/// Object-count names nearly every namespace's quotas use (`count/<resource>.<group>`).
const COMMON_COUNTS: &[&str] = &[
    "count/pods",
    "count/services",
    "count/secrets",
    "count/configmaps",
    "count/persistentvolumeclaims",
    "count/deployments.apps",
    "count/replicasets.apps",
    "count/statefulsets.apps",
    "count/daemonsets.apps",
    "count/jobs.batch",
    "count/cronjobs.batch",
];

/// `name` as a shared constant when it is a standard quota resource or a common object
/// count, else a copy: reports name a resource per row, for every applying quota of every
/// document, and most of those names are these.
///
/// ```
/// use std::borrow::Cow;
/// use kubectl_quota_engine::resource_names::interned;
/// assert!(matches!(interned("requests.cpu"), Cow::Borrowed("requests.cpu")));
/// assert!(matches!(interned("requests.nvidia.com/gpu"), Cow::Owned(_)));
/// ```
pub fn interned(name: &str) -> std::borrow::Cow<'static, str> {
    match STANDARD_QUOTA_RESOURCES.iter().chain(COMMON_COUNTS).find(|n| **n == name) {
        Some(n) => std::borrow::Cow::Borrowed(n),
        None => std::borrow::Cow::Owned(name.to_string()),
    }
}

/// The resource names the API server knows at all (`standardResources`), without the
/// huge-page families. Unlike [`STANDARD_QUOTA_RESOURCES`] it contains `storage`.
pub const STANDARD_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// Resources counted in whole units (`integerResources`); every extended resource name is
/// an integer resource too (see [`is_integer_resource_name`]).
pub const INTEGER_RESOURCES: &[&str] = &[
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// Resources a pod-object-count scope may track (`podObjectCountQuotaResources`).
const POD_OBJECT_COUNT_QUOTA_RESOURCES: &[&str] = &["pods"];
/// Resources a pod-compute scope may track (`podComputeQuotaResources`).
const POD_COMPUTE_QUOTA_RESOURCES: &[&str] = &["cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"];
/// Resources the VolumeAttributesClass scope may track (PVC count and storage).
const PVC_QUOTA_RESOURCES: &[&str] = &["persistentvolumeclaims", "requests.storage"];

/// `hugepages-*`: a huge-page resource name as containers request it (`IsHugePageResourceName`).
pub fn is_hugepages_resource_name(name: &str) -> bool {
    name.starts_with(HUGEPAGES_PREFIX)
}

/// `hugepages-*` or `requests.hugepages-*`: the huge-page names quota accepts
/// (`IsQuotaHugePageResourceName`).
pub fn is_quota_hugepages_resource_name(name: &str) -> bool {
    name.starts_with(HUGEPAGES_PREFIX) || name.starts_with(REQUESTS_HUGEPAGES_PREFIX)
}

/// A resource name the quota system tracks as standard (`IsStandardQuotaResourceName`):
/// one of [`STANDARD_QUOTA_RESOURCES`], `hugepages-*` or `requests.hugepages-*`.
/// `storage` is NOT a standard quota resource (use `requests.storage`).
pub fn is_standard_quota_resource_name(name: &str) -> bool {
    STANDARD_QUOTA_RESOURCES.contains(&name) || is_quota_hugepages_resource_name(name)
}

/// A resource name the server knows (`IsStandardResourceName`): one of
/// [`STANDARD_RESOURCES`] (which includes `storage`), `hugepages-*` or `requests.hugepages-*`.
/// The server checks this first for any name without a `/`.
pub fn is_standard_resource_name(name: &str) -> bool {
    STANDARD_RESOURCES.contains(&name) || is_quota_hugepages_resource_name(name)
}

/// A name in the `kubernetes.io/` namespace (`IsNativeResource`): no `/` at all, or
/// containing `kubernetes.io/`.
pub fn is_native_resource_name(name: &str) -> bool {
    !name.contains('/') || name.contains(DEFAULT_NAMESPACE_PREFIX)
}

/// An extended resource name (`IsExtendedResourceName`): not native, not prefixed
/// `requests.`, and `requests.<name>` is a valid qualified name.
///
/// So `nvidia.com/gpu`, `example.com/widgets`, `count/pods`, `count/deployments.apps` and
/// `gold.storageclass.storage.k8s.io/requests.storage` are extended, while
/// `requests.nvidia.com/gpu`, `cpu` and `foo.kubernetes.io/bar` are not.
pub fn is_extended_resource_name(name: &str) -> bool {
    if is_native_resource_name(name) || name.starts_with(REQUESTS_PREFIX) {
        return false;
    }
    qualified_name_errors(&format!("{REQUESTS_PREFIX}{name}")).is_empty()
}

/// A resource whose quantities must be whole numbers (`IsIntegerResourceName`): one of
/// [`INTEGER_RESOURCES`] or any extended resource name (this includes `count/*`,
/// `<class>.storageclass.storage.k8s.io/*` and `limits.<vendor>/<x>`, but not
/// `requests.<vendor>/<x>`, which is not an extended name because of its prefix).
pub fn is_integer_resource_name(name: &str) -> bool {
    INTEGER_RESOURCES.contains(&name) || is_extended_resource_name(name)
}

// ---------------------------------------------------------------------------------------
// apimachinery name checks
// ---------------------------------------------------------------------------------------

const QUALIFIED_NAME_ERR_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
const LABEL_VALUE_ERR_MSG: &str =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MAX_LENGTH: usize = 63;
const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR_MSG: &str =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_LABEL_MAX_LENGTH: usize = 63;
const DNS1123_SUBDOMAIN_ERR_MSG: &str =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
/// Maximum length of an RFC 1123 subdomain (and so of most object names).
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

/// `EmptyError()`.
pub fn empty_error() -> String {
    "must be non-empty".to_string()
}

/// `MaxLenError(n)`.
pub fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// `RegexError(msg, fmt, examples...)`: `msg (e.g. 'a' or 'b', regex used for validation is 'fmt')`.
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push('\'');
        s.push_str(e);
        s.push_str("', ");
    }
    s.push_str("regex used for validation is '");
    s.push_str(fmt);
    s.push_str("')");
    s
}

fn is_alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
fn matches_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => is_alnum(f) && is_alnum(l) && b.iter().all(|&c| is_alnum(c) || c == b'-' || c == b'_' || c == b'.'),
        _ => false,
    }
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
fn matches_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    let lower_alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => lower_alnum(f) && lower_alnum(l) && b.iter().all(|&c| lower_alnum(c) || c == b'-'),
        _ => false,
    }
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
fn matches_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(matches_dns1123_label)
}

fn dns1123_subdomain_regex_error() -> String {
    let fmt = format!("{DNS1123_LABEL_FMT}(\\.{DNS1123_LABEL_FMT})*");
    regex_error(DNS1123_SUBDOMAIN_ERR_MSG, &fmt, &["example.com"])
}

/// `IsDNS1123Subdomain`: the checks for object names such as a ResourceQuota's
/// `metadata.name` (at most 253 characters, lower-case RFC 1123 subdomain).
pub fn dns1123_subdomain_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_dns1123_subdomain(value) {
        errs.push(dns1123_subdomain_regex_error());
    }
    errs
}

/// `IsDNS1123Label`: the checks for namespace names (at most 63 characters, lower-case
/// RFC 1123 label).
pub fn dns1123_label_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !matches_dns1123_label(value) {
        errs.push(regex_error(DNS1123_LABEL_ERR_MSG, DNS1123_LABEL_FMT, &["my-name", "123-abc"]));
    }
    errs
}

/// `NameIsDNSSubdomain(name, prefix)`: with `prefix` (a `generateName`), one trailing `-`
/// is ignored before checking.
pub fn object_name_errors(name: &str, prefix: bool) -> Vec<String> {
    let name = if prefix { mask_trailing_dash(name) } else { name.to_string() };
    dns1123_subdomain_errors(&name)
}

/// `maskTrailingDash`, quirk included: when the name is longer than one byte and ends with
/// `-`, its last TWO bytes are replaced by `a`.
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        let cut = name.len() - 2;
        let head = if name.is_char_boundary(cut) { &name[..cut] } else { &name[..name.len() - 1] };
        format!("{head}a")
    } else {
        name.to_string()
    }
}

/// `IsQualifiedName`: `[prefix/]name` where the optional prefix is a DNS subdomain and
/// `name` is at most 63 characters of `[A-Za-z0-9_.-]` starting and ending alphanumeric.
/// Used for resource names, label keys, annotation keys and finalizers.
pub fn qualified_name_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.len() {
        1 => parts[0],
        2 => {
            let prefix = parts[0];
            if prefix.is_empty() {
                errs.push(format!("prefix part {}", empty_error()));
            } else {
                for m in dns1123_subdomain_errors(prefix) {
                    errs.push(format!("prefix part {m}"));
                }
            }
            parts[1]
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {}", empty_error()));
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!("name part {}", max_len_error(QUALIFIED_NAME_MAX_LENGTH)));
    }
    if !matches_qualified_name_part(name) {
        errs.push(format!("name part {}", regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])));
    }
    errs
}

/// `IsValidLabelValue`: empty, or at most 63 characters of `[A-Za-z0-9_.-]` starting and
/// ending alphanumeric. (Scope-selector values for `PriorityClass` /
/// `VolumeAttributesClass` must be label values to match anything.)
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !value.is_empty() && !matches_qualified_name_part(value) {
        errs.push(regex_error(LABEL_VALUE_ERR_MSG, &format!("({QUALIFIED_NAME_FMT})?"), &["MyValue", "my_value", "12345"]));
    }
    errs
}

// ---------------------------------------------------------------------------------------
// Scopes
// ---------------------------------------------------------------------------------------

/// A ResourceQuota scope (`spec.scopes[*]` or `spec.scopeSelector.matchExpressions[*].scopeName`).
/// These are the standard scopes of current servers (`standardResourceQuotaScopes`);
/// any other string is refused by the server as `unsupported scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QuotaScope {
    /// Pods with `activeDeadlineSeconds >= 0`.
    Terminating,
    /// Pods without `activeDeadlineSeconds`.
    NotTerminating,
    /// Pods of QoS class BestEffort.
    BestEffort,
    /// Pods not of QoS class BestEffort.
    NotBestEffort,
    /// Pods by `priorityClassName` (scopeSelector only, with In/NotIn/Exists/DoesNotExist).
    PriorityClass,
    /// Pods with cross-namespace pod (anti-)affinity terms.
    CrossNamespacePodAffinity,
    /// PVCs by VolumeAttributesClass (scopeSelector only, with In/NotIn/Exists/DoesNotExist).
    VolumeAttributesClass,
}

impl QuotaScope {
    /// All standard scopes, in the order above.
    pub const ALL: [QuotaScope; 7] = [
        QuotaScope::Terminating,
        QuotaScope::NotTerminating,
        QuotaScope::BestEffort,
        QuotaScope::NotBestEffort,
        QuotaScope::PriorityClass,
        QuotaScope::CrossNamespacePodAffinity,
        QuotaScope::VolumeAttributesClass,
    ];

    /// Exact (case-sensitive) parse of a scope name, as the server compares it.
    pub fn parse(s: &str) -> Option<Self> {
        QuotaScope::ALL.into_iter().find(|scope| scope.as_str() == s)
    }

    /// The API spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            QuotaScope::Terminating => "Terminating",
            QuotaScope::NotTerminating => "NotTerminating",
            QuotaScope::BestEffort => "BestEffort",
            QuotaScope::NotBestEffort => "NotBestEffort",
            QuotaScope::PriorityClass => "PriorityClass",
            QuotaScope::CrossNamespacePodAffinity => "CrossNamespacePodAffinity",
            QuotaScope::VolumeAttributesClass => "VolumeAttributesClass",
        }
    }

    /// Scopes that only allow the `Exists` operator in a scope selector.
    pub fn requires_exists_operator(self) -> bool {
        matches!(
            self,
            QuotaScope::Terminating | QuotaScope::NotTerminating | QuotaScope::BestEffort | QuotaScope::NotBestEffort | QuotaScope::CrossNamespacePodAffinity
        )
    }
}

impl fmt::Display for QuotaScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a quota with `scope` may list `resource` in `spec.hard`
/// (`IsResourceQuotaScopeValidForResource`, applied by the server only to standard quota
/// resource names: a name for which [`is_standard_quota_resource_name`] is false, such as
/// `count/pods`, `requests.nvidia.com/gpu` or `gold.storageclass.storage.k8s.io/requests.storage`,
/// is never refused, and this function returns true for it).
///
/// - Terminating, NotTerminating, NotBestEffort, PriorityClass, CrossNamespacePodAffinity:
///   `pods`, `cpu`, `memory`, `requests.cpu`, `requests.memory`, `limits.cpu`, `limits.memory`.
/// - BestEffort: `pods` only.
/// - VolumeAttributesClass: `persistentvolumeclaims`, `requests.storage`.
pub fn scope_valid_for_resource(scope: QuotaScope, resource: &str) -> bool {
    if !is_standard_quota_resource_name(resource) {
        return true;
    }
    match scope {
        QuotaScope::Terminating
        | QuotaScope::NotTerminating
        | QuotaScope::NotBestEffort
        | QuotaScope::PriorityClass
        | QuotaScope::CrossNamespacePodAffinity => POD_OBJECT_COUNT_QUOTA_RESOURCES.contains(&resource) || POD_COMPUTE_QUOTA_RESOURCES.contains(&resource),
        QuotaScope::BestEffort => POD_OBJECT_COUNT_QUOTA_RESOURCES.contains(&resource),
        QuotaScope::VolumeAttributesClass => PVC_QUOTA_RESOURCES.contains(&resource),
    }
}

/// A scope-selector operator (`spec.scopeSelector.matchExpressions[*].operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScopeOperator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl ScopeOperator {
    /// All operators.
    pub const ALL: [ScopeOperator; 4] = [ScopeOperator::In, ScopeOperator::NotIn, ScopeOperator::Exists, ScopeOperator::DoesNotExist];

    /// Exact (case-sensitive) parse; anything else is `not a valid selector operator`.
    pub fn parse(s: &str) -> Option<Self> {
        ScopeOperator::ALL.into_iter().find(|op| op.as_str() == s)
    }

    /// The API spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ScopeOperator::In => "In",
            ScopeOperator::NotIn => "NotIn",
            ScopeOperator::Exists => "Exists",
            ScopeOperator::DoesNotExist => "DoesNotExist",
        }
    }
}

impl fmt::Display for ScopeOperator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_table() {
        // name, standard quota, standard, native, extended, integer
        let table: &[(&str, bool, bool, bool, bool, bool)] = &[
            ("cpu", true, true, true, false, false),
            ("memory", true, true, true, false, false),
            ("ephemeral-storage", true, true, true, false, false),
            ("requests.cpu", true, true, true, false, false),
            ("limits.memory", true, true, true, false, false),
            ("requests.storage", true, true, true, false, false),
            ("storage", false, true, true, false, false),
            ("pods", true, true, true, false, true),
            ("Pods", false, false, true, false, false),
            ("resourcequotas", true, true, true, false, true),
            ("services", true, true, true, false, true),
            ("services.nodeports", true, true, true, false, true),
            ("services.loadbalancers", true, true, true, false, true),
            ("replicationcontrollers", true, true, true, false, true),
            ("secrets", true, true, true, false, true),
            ("configmaps", true, true, true, false, true),
            ("persistentvolumeclaims", true, true, true, false, true),
            ("hugepages-2Mi", true, true, true, false, false),
            ("requests.hugepages-1Gi", true, true, true, false, false),
            ("limits.hugepages-2Mi", false, false, true, false, false),
            ("foo", false, false, true, false, false),
            ("requests.foo", false, false, true, false, false),
            ("nvidia.com/gpu", false, false, false, true, true),
            ("example.com/widgets", false, false, false, true, true),
            ("requests.nvidia.com/gpu", false, false, false, false, false),
            ("limits.nvidia.com/gpu", false, false, false, true, true),
            ("count/pods", false, false, false, true, true),
            ("count/deployments.apps", false, false, false, true, true),
            ("count/widgets.example.com", false, false, false, true, true),
            ("gold.storageclass.storage.k8s.io/requests.storage", false, false, false, true, true),
            ("gold.storageclass.storage.k8s.io/persistentvolumeclaims", false, false, false, true, true),
            ("foo.kubernetes.io/bar", false, false, true, false, false),
            ("kubernetes.io/bar", false, false, true, false, false),
            // `requests.` + a 63-character name part is still a valid qualified name because the
            // prefix goes before the `/`; a name part over 63 characters is not extended.
            ("example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false, false, false, false, false),
            ("Example.com/gpu", false, false, false, false, false),
        ];
        for &(name, quota, std, native, ext, int) in table {
            assert_eq!(is_standard_quota_resource_name(name), quota, "standard quota: {name}");
            assert_eq!(is_standard_resource_name(name), std, "standard: {name}");
            assert_eq!(is_native_resource_name(name), native, "native: {name}");
            assert_eq!(is_extended_resource_name(name), ext, "extended: {name}");
            assert_eq!(is_integer_resource_name(name), int, "integer: {name}");
        }
    }

    #[test]
    fn hugepages_table() {
        let table: &[(&str, bool, bool)] =
            &[("hugepages-2Mi", true, true), ("requests.hugepages-2Mi", false, true), ("hugepages", false, false), ("limits.hugepages-2Mi", false, false)];
        for &(name, hp, quota_hp) in table {
            assert_eq!(is_hugepages_resource_name(name), hp, "{name}");
            assert_eq!(is_quota_hugepages_resource_name(name), quota_hp, "{name}");
        }
    }

    #[test]
    fn scope_resource_table() {
        use QuotaScope::*;
        let table: &[(QuotaScope, &str, bool)] = &[
            (Terminating, "pods", true),
            (Terminating, "requests.cpu", true),
            (Terminating, "limits.memory", true),
            (Terminating, "cpu", true),
            (Terminating, "ephemeral-storage", false),
            (Terminating, "services", false),
            (Terminating, "requests.storage", false),
            (Terminating, "hugepages-2Mi", false),
            (NotTerminating, "requests.ephemeral-storage", false),
            (NotBestEffort, "memory", true),
            (NotBestEffort, "persistentvolumeclaims", false),
            (BestEffort, "pods", true),
            (BestEffort, "cpu", false),
            (BestEffort, "memory", false),
            (PriorityClass, "limits.cpu", true),
            (PriorityClass, "requests.storage", false),
            (CrossNamespacePodAffinity, "pods", true),
            (CrossNamespacePodAffinity, "secrets", false),
            (VolumeAttributesClass, "persistentvolumeclaims", true),
            (VolumeAttributesClass, "requests.storage", true),
            (VolumeAttributesClass, "pods", false),
            (VolumeAttributesClass, "cpu", false),
            // non-standard names are never refused
            (BestEffort, "count/pods", true),
            (BestEffort, "requests.nvidia.com/gpu", true),
            (Terminating, "gold.storageclass.storage.k8s.io/requests.storage", true),
            (VolumeAttributesClass, "count/persistentvolumeclaims", true),
            (BestEffort, "storage", true),
            (BestEffort, "Pods", true),
        ];
        for &(scope, name, ok) in table {
            assert_eq!(scope_valid_for_resource(scope, name), ok, "{scope} / {name}");
        }
    }

    #[test]
    fn scope_and_operator_parse() {
        for s in QuotaScope::ALL {
            assert_eq!(QuotaScope::parse(s.as_str()), Some(s));
            assert_eq!(s.to_string(), s.as_str());
        }
        for bad in ["", "Bogus", "besteffort", "Terminating "] {
            assert_eq!(QuotaScope::parse(bad), None, "{bad:?}");
        }
        for op in ScopeOperator::ALL {
            assert_eq!(ScopeOperator::parse(op.as_str()), Some(op));
            assert_eq!(op.to_string(), op.as_str());
        }
        for bad in ["", "Equals", "in", "Exist"] {
            assert_eq!(ScopeOperator::parse(bad), None, "{bad:?}");
        }
        let exists_only: Vec<_> = QuotaScope::ALL.into_iter().filter(|s| s.requires_exists_operator()).collect();
        assert_eq!(
            exists_only,
            vec![QuotaScope::Terminating, QuotaScope::NotTerminating, QuotaScope::BestEffort, QuotaScope::NotBestEffort, QuotaScope::CrossNamespacePodAffinity]
        );
    }

    const SUBDOMAIN_REGEX_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    const NAME_PART_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

    #[test]
    fn subdomain_table() {
        let long = "a".repeat(254);
        let table: Vec<(&str, Vec<String>)> = vec![
            ("q", vec![]),
            ("q.v1", vec![]),
            ("compute-quota", vec![]),
            ("0", vec![]),
            ("Bad_Name", vec![SUBDOMAIN_REGEX_MSG.into()]),
            ("-q", vec![SUBDOMAIN_REGEX_MSG.into()]),
            ("q-", vec![SUBDOMAIN_REGEX_MSG.into()]),
            ("a..b", vec![SUBDOMAIN_REGEX_MSG.into()]),
            (".", vec![SUBDOMAIN_REGEX_MSG.into()]),
            ("", vec![SUBDOMAIN_REGEX_MSG.into()]),
            (&long, vec![max_len_error(253)]),
        ];
        for (name, want) in table {
            assert_eq!(dns1123_subdomain_errors(name), want, "{name:?}");
        }
        assert_eq!(dns1123_subdomain_errors(&"a".repeat(253)), Vec::<String>::new());
        assert_eq!(object_name_errors("quota-", true), Vec::<String>::new());
        assert_eq!(object_name_errors("quota-", false), vec![SUBDOMAIN_REGEX_MSG.to_string()]);
    }

    #[test]
    fn qualified_name_table() {
        // Go's RegexError joins examples as "'a', " + " or " + "'b', ", hence the double space.
        let name_part = NAME_PART_MSG.to_string();
        let table: Vec<(&str, Vec<String>)> = vec![
            ("cpu", vec![]),
            ("nvidia.com/gpu", vec![]),
            ("count/deployments.apps", vec![]),
            ("Pods", vec![]),
            ("requests.foo", vec![]),
            ("a_b", vec![]),
            ("-a", vec![name_part.clone()]),
            ("a b", vec![name_part.clone()]),
            ("/gpu", vec!["prefix part must be non-empty".into()]),
            ("example.com/", vec!["name part must be non-empty".into(), name_part.clone()]),
            ("Example.com/gpu", vec![format!("prefix part {SUBDOMAIN_REGEX_MSG}")]),
            ("a/b/c", vec!["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".into()]),
        ];
        for (name, want) in table {
            assert_eq!(qualified_name_errors(name), want, "{name:?}");
        }
        assert_eq!(qualified_name_errors(&format!("example.com/{}", "a".repeat(64))), vec!["name part must be no more than 63 characters".to_string()]);
    }

    #[test]
    fn regex_error_matches_go() {
        assert_eq!(regex_error("m", "f", &["a", "b"]), "m (e.g. 'a',  or 'b', regex used for validation is 'f')");
        assert_eq!(regex_error("m", "f", &[]), "m (regex used for validation is 'f')");
    }

    #[test]
    fn label_value_and_label_table() {
        let table: &[(&str, usize)] = &[("", 0), ("high", 0), ("my_value", 0), ("12345", 0), ("-x", 1), ("x y", 1)];
        for &(v, n) in table {
            assert_eq!(label_value_errors(v).len(), n, "{v:?}");
        }
        assert_eq!(label_value_errors(&"a".repeat(64)), vec![max_len_error(63)]);
        assert_eq!(dns1123_label_errors("default"), Vec::<String>::new());
        assert_eq!(dns1123_label_errors("a.b").len(), 1);
        assert_eq!(dns1123_label_errors(&"a".repeat(64)), vec![max_len_error(63)]);
    }
}
