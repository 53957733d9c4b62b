//! The Kubernetes version a check answers for, and every rule that depends on it.
//!
//! This is the one place where the engine knows about releases: [`Rules::for_version`] turns a
//! [`KubeVersion`] into one named switch per rule, and every other step reads those switches
//! instead of comparing versions. [`RULES`] lists each rule with the release it applies from
//! and why (a feature gate's default, a changed message, an API version served or removed);
//! docs/fidelity.md's per-release table is generated from it.
//!
//! ```
//! use kubectl_quota_engine::version::{KubeVersion, Rules};
//!
//! let v = KubeVersion::parse("v1.27.3-eks-2d98532").unwrap();
//! assert_eq!(v.to_string(), "1.27");
//! let rules = Rules::for_version(v);
//! assert!(rules.must_specify_names_containers);
//! assert!(!rules.restartable_sidecars);
//! assert!(Rules::for_version(KubeVersion::parse("1.29").unwrap()).restartable_sidecars);
//! ```

use std::fmt;

use serde::Serialize;

/// A Kubernetes release, `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeVersion {
    pub major: u32,
    pub minor: u32,
}

/// The oldest release whose rules the engine knows.
pub const OLDEST: KubeVersion = KubeVersion { major: 1, minor: 20 };
/// The newest release whose rules the engine knows. It may be a release not out yet, whose
/// rules were read from a pre-release ([`PRERELEASES`]).
pub const NEWEST: KubeVersion = KubeVersion { major: 1, minor: 38 };
/// The newest release out: what an offline check answers for when nothing names a release,
/// and what a live check falls back to when the server's version cannot be read.
pub const CURRENT: KubeVersion = KubeVersion { major: 1, minor: 37 };

/// The releases not out yet whose rules the engine has, each with the pre-release whose code
/// they were read from. When the release ships, its entry goes and [`CURRENT`] moves to it.
pub const PRERELEASES: &[(KubeVersion, &str)] = &[(KubeVersion { major: 1, minor: 38 }, "v1.38.0-beta.0")];

/// The pre-release `version`'s rules were read from, when it is not out yet.
pub fn prerelease(version: KubeVersion) -> Option<&'static str> {
    PRERELEASES.iter().find(|(v, _)| *v == version).map(|(_, from)| *from)
}

impl KubeVersion {
    pub const fn new(major: u32, minor: u32) -> KubeVersion {
        KubeVersion { major, minor }
    }

    /// Parses `1.33`, `v1.33.2`, `1.33+` (as GKE and EKS print their minor version) or
    /// `v1.27.3-eks-2d98532`: the major and minor numbers, the rest ignored.
    pub fn parse(s: &str) -> Result<KubeVersion, String> {
        let t = s.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let mut parts = t.splitn(3, '.');
        let digits = |p: Option<&str>| -> Option<u32> {
            let p = p?;
            let end = p.find(|c: char| !c.is_ascii_digit()).unwrap_or(p.len());
            if end == 0 {
                return None;
            }
            p[..end].parse().ok()
        };
        let major = digits(parts.next());
        let minor = digits(parts.next());
        match (major, minor) {
            (Some(major), Some(minor)) => Ok(KubeVersion { major, minor }),
            _ => Err(format!("{s:?} is not a Kubernetes version (expected MAJOR.MINOR, e.g. 1.33 or v1.33.2)")),
        }
    }

    /// Whether the engine has this release's rules.
    pub fn supported(self) -> bool {
        (OLDEST..=NEWEST).contains(&self)
    }

    /// The nearest release the engine has rules for.
    pub fn nearest_supported(self) -> KubeVersion {
        self.max(OLDEST).min(NEWEST)
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

const fn v(minor: u32) -> KubeVersion {
    KubeVersion::new(1, minor)
}

/// One version-dependent rule: its switch in [`Rules`], the release it applies from, and what
/// changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleInfo {
    /// The field of [`Rules`] (snake case); the JSON report names it in camel case.
    pub name: &'static str,
    pub since: KubeVersion,
    /// The release after which it no longer applies (an API version removed), if any.
    pub until: Option<KubeVersion>,
    pub what: &'static str,
}

macro_rules! rules {
    ($( $field:ident: $since:expr, $until:expr, $what:expr; )*) => {
        /// Every version-dependent rule, in the order [`Rules`] declares them.
        pub const RULES: &[RuleInfo] = &[ $( RuleInfo { name: stringify!($field), since: $since, until: $until, what: $what }, )* ];

        /// The switches for one release: one field per version-dependent rule.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Rules {
            /// The release these rules are for.
            pub version: KubeVersion,
            $( #[doc = $what] pub $field: bool, )*
        }

        impl Rules {
            /// The rules of `version` (clamped to the supported range).
            pub fn for_version(version: KubeVersion) -> Rules {
                let version = version.nearest_supported();
                let on = |since: KubeVersion, until: Option<KubeVersion>| version >= since && until.is_none_or(|u| version <= u);
                Rules { version, $( $field: on($since, $until), )* }
            }

            /// `(rule, applies)` for every rule, in table order.
            pub fn switches(&self) -> Vec<(&'static str, bool)> {
                vec![ $( (stringify!($field), self.$field), )* ]
            }
        }
    };
}

rules! {
    cross_namespace_pod_affinity_scope: v(21), None,
        "the CrossNamespacePodAffinity quota scope (KEP-2249: alpha 1.21 behind a gate on by default for quota scopes, GA 1.24)";
    batch_v1_cronjob: v(21), None,
        "CronJob is served as batch/v1 (GA in 1.21; 1.20 serves only batch/v1beta1)";
    policy_v1_pod_disruption_budget: v(21), None,
        "PodDisruptionBudget is served as policy/v1 (1.21)";
    discovery_v1_endpoint_slice: v(21), None,
        "EndpointSlice is served as discovery.k8s.io/v1 (1.21)";
    pod_update_grace_period: v(22), None,
        "a refused pod update names `spec.terminationGracePeriodSeconds` among the fields that may change (k/k#98866 lets a negative value be set to 1); before, the list ends at `spec.tolerations`";
    service_lb_node_port_control: v(22), None,
        "a LoadBalancer Service's `allocateLoadBalancerNodePorts: false` is honoured: its ports get no node ports and charge no `services.nodeports` (ServiceLBNodePortControl: alpha 1.20 off by default, beta on by default 1.22, GA 1.24); before, the field is dropped";
    autoscaling_v2: v(23), None,
        "HorizontalPodAutoscaler is served as autoscaling/v2 (1.23)";
    networking_v1beta1_ingress: v(20), Some(v(21)),
        "Ingress and IngressClass are served as networking.k8s.io/v1beta1 and Ingress as extensions/v1beta1 (removed in 1.22)";
    v1beta1_rbac_storage_scheduling: v(20), Some(v(21)),
        "rbac, scheduling, coordination, admissionregistration, apiextensions and storage (CSIDriver, StorageClass, VolumeAttachment) are served as v1beta1 (removed in 1.22)";
    ephemeral_containers: v(23), None,
        "spec.ephemeralContainers is kept (EphemeralContainers: alpha 1.16 off by default, beta on by default 1.23, GA 1.25): only the pods/ephemeralcontainers subresource may add them, so a create or a template with one is refused; before, the field is dropped";
    must_specify_names_containers: v(24), None,
        "the must-specify message names the containers per resource (`must specify limits.cpu for: app; requests.cpu for: app`; before: `must specify limits.cpu,requests.cpu`, k/k#107210)";
    batch_v1beta1_cronjob: v(20), Some(v(24)),
        "CronJob is served as batch/v1beta1 (removed in 1.25)";
    policy_v1beta1: v(20), Some(v(24)),
        "PodDisruptionBudget and PodSecurityPolicy are served as policy/v1beta1 (removed in 1.25)";
    v1beta1_until_1_24: v(20), Some(v(24)),
        "autoscaling/v2beta1, discovery.k8s.io/v1beta1, events.k8s.io/v1beta1 and node.k8s.io/v1beta1 are served (removed in 1.25)";
    autoscaling_v2beta2: v(20), Some(v(25)),
        "HorizontalPodAutoscaler is served as autoscaling/v2beta2 (removed in 1.26)";
    restartable_sidecars: v(29), None,
        "restartable init containers (`restartPolicy: Always`, sidecars) add to the running sum and to later init phases (KEP-753: alpha 1.28 off by default, beta on by default 1.29, GA 1.33); before, the field is dropped and the container is a plain init container";
    limit_range_pod_totals_kept: v(28), None,
        "LimitRanger adds a `type: Pod` item's totals as the scheduler does (sidecars, each quantity kept as written: `32Mi`); before, a resource some container lacks is left out of the total, cpu is added in milli-units and the rest in whole units, printed plain (`33554432`): the real 1.20.2 and 1.34.4 to 1.37.2 servers (tests/recorded, case 2805); 1.28 is the release its sidecar accounting came with";
    scope_change_on_update: v(33), None,
        "a pod update that flips the Terminating scope (activeDeadlineSeconds set or unset) is charged; quotas the old pod did not match are charged its full usage (k/k#130060)";
    pod_resize: v(33), None,
        "in-place resize (pods/resize) is quota-checked with usage the larger of spec, status.resources and allocated resources (KEP-1287: beta on by default 1.33, GA 1.35); before, a running pod's resources cannot change";
    invalid_values_as_json: v(34), None,
        "a refused value that is not a string or a number is printed as JSON (`spec.scopes: Invalid value: [\"BestEffort\"]`, a template's labels `{\"app\":\"other\"}`); before, as Go's `%#v` prints it (`[]core.ResourceQuotaScope{\"BestEffort\"}`, `map[string]string{\"app\":\"other\"}`): apimachinery 0.34's field errors (0.33.7 still prints `%#v`), and the real 1.20.2, 1.34.4 and 1.37.2 servers (tests/recorded, case 2810)";
    request_limit_message_names_limit: v(34), None,
        "a container request above its limit is refused naming the limit (`must be less than or equal to cpu limit of 500m`; the wording of 1.34.4 to 1.37.2's validation, found by the real 1.37 server); before, `... cpu limit`";
    volume_attributes_class_scope: v(34), None,
        "the VolumeAttributesClass quota scope on claims (added in 1.33 behind the VolumeAttributesClass gate, off by default until the GA in 1.34)";
    pod_level_resources: v(34), None,
        "pod-level spec.resources replace the container totals for cpu, memory and hugepages, and lift must-specify (KEP-2837: alpha 1.32, beta on by default 1.34); before, the field is dropped";
    dra: v(34), None,
        "ResourceClaims are charged `count/resourceclaims.resource.k8s.io` and `<class>.deviceclass.resource.k8s.io/devices` (DRA GA in 1.34, resource.k8s.io/v1); before, resource.k8s.io is not served by default";
    validating_admission_policy: v(30), None,
        "ValidatingAdmissionPolicy and its bindings are served as admissionregistration.k8s.io/v1 and run before quota (KEP-3488: beta and off by default 1.28-1.29, GA 1.30)";
    mutating_admission_policy: v(36), None,
        "MutatingAdmissionPolicy and its bindings are served as admissionregistration.k8s.io/v1 and run before the mutating webhooks (KEP-3962: alpha 1.32, beta and off by default 1.34-1.35, GA and on 1.36)";
    quota_request_limit_warning: v(35), None,
        "a quota whose requests.X exceeds its limits.X gets a warning (k/k#134389)";
    dra_admin_access_counted: v(34), None,
        "admin-access device requests count toward the device-class quota (the real 1.34.4 and 1.35.4 servers charge them, tests/recorded; KEP-5018 GA 1.36); before 1.34 there is no DRA quota";
    dra_extended_resources: v(35), None,
        "pods' implicit DRA extended resources (`deviceclass.resource.kubernetes.io/<class>`) are charged as `requests.deviceclass.resource.kubernetes.io/<class>` (the real 1.35.4 server does, tests/recorded; KEP-5004); a DeviceClass's own extendedResourceName is charged as any extended resource";
    dra_claim_extended_resources: v(36), None,
        "a ResourceClaim is also charged `requests.deviceclass.resource.kubernetes.io/<class>` for its devices of each class, and `requests.<extendedResourceName>` for a class that has one; a quota on the first covers claims only when the class exists, on the second only when a class has that name (found by the upstream 1.37.2 evaluator; the real 1.36.3 server does it too and 1.35.4 does not, tests/recorded)";
    claim_update_value_null: v(37), None,
        "the refusal of a changed ResourceClaim spec says `Invalid value: null` (declarative validation); before, it prints the new spec";
    pod_level_limits_defaulting: v(37), None,
        "a pod-level request without a pod-level limit, for a resource every container limits, gets the pod-level limit the larger of the two (PodLevelResourcesFixDefaulting); before, the pod's limit is the containers' aggregate";
    resize_max_of_sums: v(37), None,
        "a pod whose status reports resources (in-place resize) is charged per resource the largest of three totals: from the spec, from the node's status.resources (init containers' too) and from allocatedResources; before, per container the largest of the three, summed";
    pod_limits_all_or_nothing: v(38), None,
        "a pod's cpu and memory limits (quota's `limits.cpu`, `limits.memory`, and the pod-level limit defaulting) count only when every init and regular container sets a non-zero limit, else not at all; pod-level limits and the other resources are unchanged (component-helpers 0.38's `AggregateContainerLimits`); before, the containers that set one are summed";
    pod_level_overhead_aliased: v(34), Some(v(37)),
        "a pod-level request or limit that Go holds as an exact decimal (`4.5Gi`) gains the pod's overhead in place as quota adds the pod up, so the overhead is charged twice when the pod-level limit was defaulted from the request or when `limitedResources` makes quota evaluate the pod twice (upstream's code, tests/oracle.rs); from 1.38 a `Quantity` is a value and the overhead is added once";
    limit_range_exact_compare: v(38), None,
        "LimitRanger compares min, max and maxLimitRequestRatio exactly (the ratio as `limit > request × ratio`); before, in milli-units, or in whole units rounded up past about 9.2e15, so values beyond that could pass a max they exceed";
    limit_range_skips_unchanged: v(38), None,
        "on a pod resize and a PersistentVolumeClaim update, LimitRanger checks only what changed: a container (matched by name) or pod total whose request and limit are both unchanged, a claim request equal to the stored one; before, the new object is checked in full";
    integer_values_exact: v(38), None,
        "an integer resource (`pods`, `count/*`, extended resources) is refused as `must be an integer` only when its value, rounded up to milli-units, is not whole, at any size; before, only while its milli value fits in 64 bits (`10P` was refused, `18446744073709551616m` passed)";
    runtime_class_empty_name_ignored: v(38), None,
        "`runtimeClassName: \"\"` is not looked up by RuntimeClass admission; pod validation refuses it as an invalid name (422); before, admission refuses it: `pod rejected: RuntimeClass \"\" not found` (403)";
    pod_security_admission: v(23), None,
        "PodSecurity admission runs: a namespace's `pod-security.kubernetes.io/enforce` level refuses the pods that break it (beta on by default 1.23, GA 1.25); before, the plugin is off (alpha in 1.22) and no label refuses anything";
    app_armor_fields: v(30), None,
        "a container's AppArmor annotation is copied into its `securityContext.appArmorProfile` when the field is unset (AppArmor fields GA 1.30), so PodSecurity names the container as well as the annotation";
    proc_mount_type: v(33), None,
        "a container's `securityContext.procMount` is kept (ProcMountType beta on by default 1.33); before, the field is forced to `Default` and PodSecurity never sees `Unmasked`";
}

/// Which PodSecurity checks apply, and how, for a policy version (`pod-security.kubernetes.io/
/// enforce-version`, or `latest`: the server's own release). Each switch is the policy
/// version a check was added or changed at, as k8s.io/pod-security-admission's versioned
/// checks say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodSecurityChecks {
    /// The policy version these switches are for.
    pub version: KubeVersion,
    /// 1.8: restricted requires `allowPrivilegeEscalation: false`.
    pub allow_privilege_escalation: bool,
    /// 1.19: seccomp is read from the `seccompProfile` fields (before, from the annotations),
    /// and restricted requires it.
    pub seccomp_fields: bool,
    /// 1.22: restricted requires `capabilities.drop: [ALL]` and adds at most
    /// `NET_BIND_SERVICE` (it replaces baseline's capabilities check).
    pub capabilities_restricted: bool,
    /// 1.23: restricted refuses `runAsUser: 0`.
    pub run_as_user: bool,
    /// 1.25: a Windows pod (`spec.os.name: windows`) is not asked for
    /// allowPrivilegeEscalation, capabilities or seccomp.
    pub windows_relaxed: bool,
    /// 1.31: SELinux type `container_engine_t` is allowed.
    pub selinux_engine_type: bool,
    /// 1.34: baseline refuses a host in probes and lifecycle hooks.
    pub probe_hosts: bool,
    /// 1.35: a pod in a user namespace (`hostUsers: false`) is not asked for runAsNonRoot,
    /// runAsUser or procMount (baseline); restricted asks for procMount even then.
    pub user_namespace_relaxed: bool,
    /// The safe sysctls: the set of 1.0, with those added in 1.27, 1.29, 1.32 and 1.37.
    pub sysctls: &'static [&'static str],
}

const SAFE_SYSCTLS: &[(u32, &[&str])] = &[
    (
        0,
        &[
            "kernel.shm_rmid_forced",
            "net.ipv4.ip_local_port_range",
            "net.ipv4.tcp_syncookies",
            "net.ipv4.ping_group_range",
            "net.ipv4.ip_unprivileged_port_start",
        ],
    ),
    (27, &["net.ipv4.ip_local_reserved_ports"]),
    (29, &["net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"]),
    (32, &["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"]),
    (37, &["net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat"]),
];

/// Every safe sysctl, in the order of the release that allowed it.
const ALL_SAFE_SYSCTLS: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_notsent_lowat",
];

impl PodSecurityChecks {
    /// The checks of policy version `policy` (`None`: `latest`) on a server of release
    /// `server`: a version newer than the server's is evaluated as the server's (its library
    /// knows no newer checks).
    pub fn for_policy(policy: Option<KubeVersion>, server: KubeVersion) -> PodSecurityChecks {
        let version = policy.map_or(server, |p| p.min(server));
        let at = |minor| version >= v(minor);
        let count: usize = SAFE_SYSCTLS.iter().filter(|(minor, _)| version >= v(*minor)).map(|(_, names)| names.len()).sum();
        PodSecurityChecks {
            version,
            allow_privilege_escalation: at(8),
            seccomp_fields: at(19),
            capabilities_restricted: at(22),
            run_as_user: at(23),
            windows_relaxed: at(25),
            selinux_engine_type: at(31),
            probe_hosts: at(34),
            user_namespace_relaxed: at(35),
            sysctls: &ALL_SAFE_SYSCTLS[..count],
        }
    }
}

impl Rules {
    /// The rules of the newest release out ([`CURRENT`]).
    pub fn current() -> Rules {
        Rules::for_version(CURRENT)
    }

    /// The camel-case names of the rules that apply (for the JSON report).
    pub fn applied(&self) -> Vec<String> {
        self.switches().into_iter().filter(|(_, on)| *on).map(|(n, _)| camel(n)).collect()
    }
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::current()
    }
}

/// The table of version-dependent rules in docs/fidelity.md (`engine/tests/versions.rs` keeps it in sync).
pub fn markdown_table() -> String {
    let mut out = String::from("| rule (JSON `kubernetes.rules`) | applies | what changes |\n|---|---|---|\n");
    for r in RULES {
        let when = match r.until {
            Some(u) => format!("{} to {u}", r.since),
            None if r.since == OLDEST => format!("{} and later", r.since),
            None => format!("from {}", r.since),
        };
        out.push_str(&format!("| `{}` | {when} | {} |\n", camel(r.name), r.what.replace('|', "\\|")));
    }
    out
}

fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// What the JSON report says about the version a check answered for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionReport {
    /// `1.36`: the release whose rules were applied.
    pub version: String,
    /// Where the version came from: `default`, `flag` or `server`.
    pub source: String,
    /// The version the server reported, when it differs from the rules applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// The version-dependent rules that applied (camel case names of [`Rules`]' fields).
    pub rules: Vec<String>,
    /// The pre-release the rules were read from, for a release not out yet (`v1.38.0-beta.0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules_from: Option<String>,
}

impl VersionReport {
    pub fn new(rules: &Rules, source: &str, server_version: Option<String>) -> VersionReport {
        VersionReport {
            version: rules.version.to_string(),
            source: source.into(),
            server_version,
            rules: rules.applied(),
            rules_from: prerelease(rules.version).map(str::to_string),
        }
    }

    /// The note a report carries when its rules come from a pre-release.
    pub fn prerelease_note(&self) -> Option<String> {
        let from = self.rules_from.as_deref()?;
        Some(format!("Kubernetes {} is not out yet: its rules were read from the code of {from}, and the release may still change them", self.version))
    }
}

/// A quota scope the release does not know yet, as its validation words it
/// (`spec.scopes[0]: Unsupported value: ...`), or `None`.
pub fn unsupported_scope(rules: &Rules, scopes: &[String], selector: Option<&[crate::objects::ScopeRequirement]>) -> Option<String> {
    let mut supported = vec!["BestEffort", "NotBestEffort", "NotTerminating", "PriorityClass", "Terminating"];
    if rules.cross_namespace_pod_affinity_scope {
        supported.push("CrossNamespacePodAffinity");
    }
    if rules.volume_attributes_class_scope {
        supported.push("VolumeAttributesClass");
    }
    supported.sort();
    let listed = supported.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ");
    let bad = |name: &str| !supported.contains(&name);
    if let Some((i, s)) = scopes.iter().enumerate().find(|(_, s)| bad(s)) {
        return Some(format!("spec.scopes[{i}]: Unsupported value: {s:?}: supported values: {listed}"));
    }
    let (i, r) = selector?.iter().enumerate().find(|(_, r)| bad(&r.scope_name))?;
    Some(format!("spec.scopeSelector.matchExpressions[{i}].scopeName: Unsupported value: {:?}: supported values: {listed}", r.scope_name))
}

/// Where an object's API version stands on a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Served {
    /// Served: nothing to say.
    Yes,
    /// Served, but worth a note (deprecated, removed later): the note.
    Deprecated(String),
    /// Not served on this release: the note saying which releases serve it.
    No(String),
}

/// Whether `api_version` serves `kind` on the rules' release. Only group versions that
/// changed between 1.20 and 1.37 are listed; anything else is taken as served.
pub fn served(rules: &Rules, api_version: &str, kind: &str) -> Served {
    let (on, releases): (bool, &str) = match (api_version, kind) {
        ("batch/v1beta1", "CronJob") => (rules.batch_v1beta1_cronjob, "1.8 to 1.24"),
        ("batch/v1", "CronJob") => (rules.batch_v1_cronjob, "1.21 and later"),
        ("policy/v1beta1", "PodDisruptionBudget" | "PodSecurityPolicy") => (rules.policy_v1beta1, "1.5 to 1.24"),
        ("policy/v1", "PodDisruptionBudget") => (rules.policy_v1_pod_disruption_budget, "1.21 and later"),
        ("extensions/v1beta1", "Ingress") => (rules.networking_v1beta1_ingress, "1.1 to 1.21"),
        ("networking.k8s.io/v1beta1", "Ingress" | "IngressClass") => (rules.networking_v1beta1_ingress, "1.14 to 1.21"),
        ("extensions/v1beta1", _) => (false, "1.2 to 1.15"),
        ("apps/v1beta1", _) => (false, "1.5 to 1.15"),
        ("apps/v1beta2", _) => (false, "1.8 to 1.15"),
        ("autoscaling/v2beta1", _) => (rules.v1beta1_until_1_24, "1.8 to 1.24"),
        ("autoscaling/v2beta2", _) => (rules.autoscaling_v2beta2, "1.12 to 1.25"),
        ("autoscaling/v2", _) => (rules.autoscaling_v2, "1.23 and later"),
        ("discovery.k8s.io/v1beta1", _) | ("events.k8s.io/v1beta1", _) | ("node.k8s.io/v1beta1", _) => (rules.v1beta1_until_1_24, "1.24 at the latest"),
        ("discovery.k8s.io/v1", _) => (rules.discovery_v1_endpoint_slice, "1.21 and later"),
        (
            "rbac.authorization.k8s.io/v1beta1"
            | "scheduling.k8s.io/v1beta1"
            | "coordination.k8s.io/v1beta1"
            | "admissionregistration.k8s.io/v1beta1"
            | "apiextensions.k8s.io/v1beta1"
            | "storage.k8s.io/v1beta1",
            _,
        ) if kind != "CSIStorageCapacity" => (rules.v1beta1_rbac_storage_scheduling, "1.21 at the latest"),
        ("resource.k8s.io/v1", _) => (rules.dra, "1.34 and later"),
        (av, _) if av.starts_with("resource.k8s.io/") => (false, "only with its feature gate and API group version enabled (off by default)"),
        ("storage.k8s.io/v1", "VolumeAttributesClass") => (rules.volume_attributes_class_scope, "1.34 and later"),
        _ => return Served::Yes,
    };
    let current = current_version(api_version, kind);
    if on {
        match current {
            Some(cur) if cur != api_version => {
                Served::Deprecated(format!("{api_version} {kind} is served by Kubernetes {releases}; charged like {cur} (same group and resource)"))
            }
            _ => Served::Yes,
        }
    } else {
        Served::No(format!("{api_version} {kind} is served by Kubernetes {releases}, not by {}", rules.version))
    }
}

/// The current API version of an older one, when the group is the same (so quota's
/// `count/<resource>.<group>` is the same).
fn current_version(api_version: &str, kind: &str) -> Option<&'static str> {
    Some(match (api_version.split('/').next().unwrap_or(""), kind) {
        ("batch", "CronJob") => "batch/v1",
        ("policy", "PodDisruptionBudget") => "policy/v1",
        ("apps", _) => "apps/v1",
        ("networking.k8s.io", _) => "networking.k8s.io/v1",
        ("autoscaling", _) => "autoscaling/v2",
        ("discovery.k8s.io", _) => "discovery.k8s.io/v1",
        ("events.k8s.io", _) => "events.k8s.io/v1",
        ("node.k8s.io", _) => "node.k8s.io/v1",
        _ => return None,
    })
}

/// kubectl's refusal for a kind its server does not serve (`kubectl create -f` prints it and
/// exits 1 before sending anything).
pub fn no_matches_message(api_version: &str, kind: &str) -> String {
    format!("no matches for kind {kind:?} in version {api_version:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_as_servers_and_providers_print_them() {
        let cases = [
            ("1.33", Some((1, 33))),
            ("v1.33.2", Some((1, 33))),
            ("1.33+", Some((1, 33))),
            ("v1.27.3-eks-2d98532", Some((1, 27))),
            ("v1.30.5-gke.1014001", Some((1, 30))),
            (" 1.20 ", Some((1, 20))),
            ("1", None),
            ("one.two", None),
            ("", None),
        ];
        for (s, want) in cases {
            assert_eq!(KubeVersion::parse(s).ok().map(|v| (v.major, v.minor)), want, "{s:?}");
        }
    }

    #[test]
    fn supported_range_and_clamping() {
        assert!(KubeVersion::new(1, 20).supported() && KubeVersion::new(1, 38).supported());
        assert!(!KubeVersion::new(1, 19).supported() && !KubeVersion::new(1, 39).supported());
        assert_eq!(KubeVersion::new(1, 40).nearest_supported(), NEWEST);
        assert_eq!(KubeVersion::new(1, 16).nearest_supported(), OLDEST);
    }

    #[test]
    fn the_release_not_out_yet_is_known_and_reported_with_the_pre_release_its_rules_come_from() {
        assert!(CURRENT < NEWEST && CURRENT.supported());
        assert_eq!(Rules::default().version, CURRENT);
        assert_eq!(prerelease(NEWEST), Some("v1.38.0-beta.0"));
        assert_eq!(prerelease(CURRENT), None);
        let report = VersionReport::new(&Rules::for_version(NEWEST), "flag", None);
        assert_eq!(report.rules_from.as_deref(), Some("v1.38.0-beta.0"));
        assert!(report.prerelease_note().unwrap().contains("read from the code of v1.38.0-beta.0"));
        assert_eq!(VersionReport::new(&Rules::current(), "default", None).prerelease_note(), None);
    }

    #[test]
    fn every_rule_has_a_switch() {
        let names: Vec<&str> = Rules::current().switches().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, RULES.iter().map(|r| r.name).collect::<Vec<_>>());
        assert_eq!(camel("must_specify_names_containers"), "mustSpecifyNamesContainers");
    }
}
