//! Every check of the baseline and restricted levels on one pod, with the server's reason and
//! detail, and the pod as the checks see it.

use std::collections::BTreeMap;

use super::*;
use crate::objects::security::{ContainerSecurity, PodSecurity, SeLinux};

/// One container as the checks visit it: its name and what it sets.
pub(super) struct Visited<'a> {
    name: &'a str,
    sc: Option<&'a ContainerSecurity>,
    /// An AppArmor type the server's strategy copied from the container's annotation.
    app_armor_from_annotation: Option<&'static str>,
}

impl Visited<'_> {
    fn app_armor(&self) -> Option<&str> {
        self.sc.and_then(|s| s.app_armor_type.as_deref()).or(self.app_armor_from_annotation)
    }
}

/// The pod as the checks see it: containers in the server's visiting order (init, regular,
/// ephemeral), after what the pod strategy changed before validating admission.
pub(super) struct View<'a> {
    pod: &'a PodSecurity,
    annotations: &'a BTreeMap<String, String>,
    containers: Vec<Visited<'a>>,
    proc_mount_kept: bool,
}

pub(super) const APPARMOR_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";
pub(super) const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
pub(super) const SECCOMP_CONTAINER_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";

/// The AppArmor field type the pod strategy makes of an annotation value, if any.
pub(super) fn app_armor_field(annotation: &str) -> Option<&'static str> {
    match annotation {
        "runtime/default" => Some("RuntimeDefault"),
        "unconfined" => Some("Unconfined"),
        v if v.strip_prefix("localhost/").is_some_and(|p| !p.is_empty()) => Some("Localhost"),
        _ => None,
    }
}

pub(super) static NO_POD_SECURITY: std::sync::LazyLock<PodSecurity> = std::sync::LazyLock::new(PodSecurity::default);

impl<'a> View<'a> {
    pub(super) fn new(pod: &'a Pod, annotations: &'a BTreeMap<String, String>, rules: &Rules) -> View<'a> {
        let ps: &PodSecurity = pod.security.as_deref().unwrap_or(&NO_POD_SECURITY);
        let regular = pod.init_containers.iter().chain(pod.containers.iter()).map(|c| (c.name.as_str(), c.security.as_deref()));
        let ephemeral = ps.ephemeral.iter().map(|(n, _, s)| (n.as_str(), s.as_deref()));
        let containers = regular
            .chain(ephemeral)
            .map(|(name, sc)| {
                // The strategy copies a container's AppArmor annotation into its unset field
                // (not on Windows pods, nor when it equals the pod's own profile).
                let app_armor_from_annotation = (rules.app_armor_fields && !ps.windows && sc.is_none_or(|s| s.app_armor_type.is_none()))
                    .then(|| annotations.get(&format!("{APPARMOR_PREFIX}{name}")).and_then(|a| app_armor_field(a)))
                    .flatten()
                    .filter(|t| ps.app_armor_type.as_deref() != Some(*t));
                Visited { name, sc, app_armor_from_annotation }
            })
            .collect();
        View { pod: ps, annotations, containers, proc_mount_kept: rules.proc_mount_type }
    }

    fn names(&self, bad: impl Fn(&Visited) -> bool) -> Vec<&str> {
        self.containers.iter().filter(|c| bad(c)).map(|c| c.name).collect()
    }

    fn user_namespace(&self) -> bool {
        self.pod.host_users == Some(false)
    }
}

pub(super) fn plural<'s>(n: usize, one: &'s str, many: &'s str) -> &'s str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// `"a", "b"` (names are not escaped: the server joins them as they are).
pub(super) fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return String::new();
    }
    format!("\"{}\"", items.iter().map(AsRef::as_ref).collect::<Vec<_>>().join("\", \""))
}

/// `container "a"` / `containers "a", "b"`.
pub(super) fn containers_phrase(names: &[&str]) -> String {
    format!("{} {}", plural(names.len(), "container", "containers"), join_quote(names))
}

pub(super) type Failure = (String, String);

/// The checks of `level` at `checks`' version, in the server's order; the failures.
pub(super) fn evaluate(v: &View, level: Level, checks: &PodSecurityChecks) -> Vec<Failure> {
    let restricted = level == Level::Restricted;
    let mut out = Vec::new();
    let mut run = |r: Option<Failure>| out.extend(r);
    // Baseline's checks, by name (those restricted overrides left out).
    run(app_armor(v));
    if !(restricted && checks.capabilities_restricted) {
        run(capabilities_baseline(v));
    }
    run(host_namespaces(v));
    if !restricted {
        run(host_path_volumes(v));
    }
    run(host_ports(v));
    if checks.probe_hosts {
        run(probe_hosts(v));
    }
    run(privileged(v));
    if !(restricted && checks.user_namespace_relaxed) {
        run(proc_mount(v, checks.user_namespace_relaxed));
    }
    run(se_linux(v, checks));
    if !(restricted && checks.seccomp_fields) {
        run(if checks.seccomp_fields { seccomp_baseline(v) } else { seccomp_annotations(v) });
    }
    run(sysctls(v, checks));
    run(host_process(v));
    if !restricted {
        return out;
    }
    // Restricted's own, by name.
    let windows_relaxed = checks.windows_relaxed && v.pod.windows;
    if checks.allow_privilege_escalation && !windows_relaxed {
        run(allow_privilege_escalation(v));
    }
    if checks.capabilities_restricted && !windows_relaxed {
        run(capabilities_restricted(v));
    }
    if checks.user_namespace_relaxed {
        run(proc_mount(v, false));
    }
    run(restricted_volumes(v));
    let userns_relaxed = checks.user_namespace_relaxed && v.user_namespace();
    if !userns_relaxed {
        run(run_as_non_root(v));
    }
    if checks.run_as_user && !userns_relaxed {
        run(run_as_user(v));
    }
    if checks.seccomp_fields && !windows_relaxed {
        run(seccomp_restricted(v));
    }
    out
}

pub(super) fn fail(reason: &str, detail: String) -> Option<Failure> {
    Some((reason.to_string(), detail))
}

pub(super) fn app_armor(v: &View) -> Option<Failure> {
    let allowed = |t: &str| t == "RuntimeDefault" || t == "Localhost";
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    if let Some(t) = v.pod.app_armor_type.as_deref().filter(|t| !allowed(t)) {
        setters.push("pod".to_string());
        values.insert(t.to_string());
    }
    let bad = v.names(|c| c.app_armor().is_some_and(|t| !allowed(t)));
    for c in &v.containers {
        values.extend(c.app_armor().filter(|t| !allowed(t)).map(str::to_string));
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    let mut values: Vec<String> = values.into_iter().collect();
    let annotation_ok = |a: &str| a.is_empty() || a == "runtime/default" || a.starts_with("localhost/");
    let mut forbidden: Vec<String> =
        v.annotations.iter().filter(|(k, a)| k.starts_with(APPARMOR_PREFIX) && !annotation_ok(a)).map(|(k, a)| format!("{k}={}", go_quote(a))).collect();
    if !forbidden.is_empty() {
        forbidden.sort();
        setters.push(plural(forbidden.len(), "annotation", "annotations").to_string());
        values.extend(forbidden);
    }
    if setters.is_empty() {
        return None;
    }
    fail(
        plural(values.len(), "forbidden AppArmor profile", "forbidden AppArmor profiles"),
        format!("{} must not set AppArmor profile type to {}", setters.join(" and "), join_quote(&values)),
    )
}

/// Capabilities a container may add at the baseline level.
pub(super) const DEFAULT_CAPABILITIES: &[&str] =
    &["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"];

pub(super) fn capabilities_baseline(v: &View) -> Option<Failure> {
    let mut caps = BTreeSet::new();
    let bad = v.names(|c| {
        let extra: Vec<&String> = c.sc.map(|s| s.capabilities_add.iter().filter(|a| !DEFAULT_CAPABILITIES.contains(&a.as_str())).collect()).unwrap_or_default();
        !extra.is_empty()
    });
    for c in &v.containers {
        caps.extend(c.sc.into_iter().flat_map(|s| &s.capabilities_add).filter(|a| !DEFAULT_CAPABILITIES.contains(&a.as_str())).cloned());
    }
    if bad.is_empty() {
        return None;
    }
    let caps: Vec<String> = caps.into_iter().collect();
    fail("non-default capabilities", format!("{} must not include {} in securityContext.capabilities.add", containers_phrase(&bad), join_quote(&caps)))
}

pub(super) fn host_namespaces(v: &View) -> Option<Failure> {
    let set: Vec<&str> = [(v.pod.host_network, "hostNetwork=true"), (v.pod.host_pid, "hostPID=true"), (v.pod.host_ipc, "hostIPC=true")]
        .into_iter()
        .filter_map(|(on, s)| on.then_some(s))
        .collect();
    (!set.is_empty()).then(|| ("host namespaces".to_string(), set.join(", ")))
}

pub(super) fn host_path_volumes(v: &View) -> Option<Failure> {
    let names: Vec<&str> = v.pod.restricted_volumes.iter().filter(|(_, t)| *t == "hostPath").map(|(n, _)| n.as_str()).collect();
    if names.is_empty() {
        return None;
    }
    fail("hostPath volumes", format!("{} {}", plural(names.len(), "volume", "volumes"), join_quote(&names)))
}

pub(super) fn host_ports(v: &View) -> Option<Failure> {
    let bad = v.names(|c| c.sc.is_some_and(|s| !s.host_ports.is_empty()));
    if bad.is_empty() {
        return None;
    }
    let ports: BTreeSet<String> = v.containers.iter().flat_map(|c| c.sc.into_iter().flat_map(|s| &s.host_ports)).map(|p| p.to_string()).collect();
    let ports: Vec<String> = ports.into_iter().collect();
    fail(
        "hostPort",
        format!("{} {} {} {}", containers_phrase(&bad), plural(bad.len(), "uses", "use"), plural(ports.len(), "hostPort", "hostPorts"), ports.join(", ")),
    )
}

pub(super) fn probe_hosts(v: &View) -> Option<Failure> {
    let bad: BTreeSet<&str> = v.containers.iter().filter(|c| c.sc.is_some_and(|s| !s.probe_hosts.is_empty())).map(|c| c.name).collect();
    if bad.is_empty() {
        return None;
    }
    let hosts: BTreeSet<&str> = v.containers.iter().flat_map(|c| c.sc.into_iter().flat_map(|s| &s.probe_hosts)).map(String::as_str).collect();
    let bad: Vec<&str> = bad.into_iter().collect();
    let hosts: Vec<&str> = hosts.into_iter().collect();
    fail(
        "probe or lifecycle host",
        format!(
            "{} {} {} {}",
            containers_phrase(&bad),
            plural(bad.len(), "uses", "use"),
            plural(hosts.len(), "probe or lifecycle host", "probe or lifecycle hosts"),
            join_quote(&hosts)
        ),
    )
}

pub(super) fn privileged(v: &View) -> Option<Failure> {
    let bad = v.names(|c| c.sc.is_some_and(|s| s.privileged == Some(true)));
    if bad.is_empty() {
        return None;
    }
    fail("privileged", format!("{} must not set securityContext.privileged=true", containers_phrase(&bad)))
}

/// `relaxed`: baseline from 1.35, which lets a pod in a user namespace set any procMount.
pub(super) fn proc_mount(v: &View, relaxed: bool) -> Option<Failure> {
    if relaxed && v.user_namespace() {
        return None;
    }
    // Before the ProcMountType gate is on, the strategy resets the field to Default.
    let mount = |c: &Visited| c.sc.and_then(|s| s.proc_mount.as_deref()).filter(|m| v.proc_mount_kept && *m != "Default").map(str::to_string);
    let bad = v.names(|c| mount(c).is_some());
    if bad.is_empty() {
        return None;
    }
    let types: BTreeSet<String> = v.containers.iter().filter_map(mount).collect();
    let types: Vec<String> = types.into_iter().collect();
    fail("procMount", format!("{} must not set securityContext.procMount to {}", containers_phrase(&bad), join_quote(&types)))
}

pub(super) fn se_linux(v: &View, checks: &PodSecurityChecks) -> Option<Failure> {
    let allowed_type =
        |t: &str| matches!(t, "" | "container_t" | "container_init_t" | "container_kvm_t") || (checks.selinux_engine_type && t == "container_engine_t");
    let (mut types, mut user, mut role) = (BTreeSet::new(), false, false);
    let mut valid = |o: &SeLinux| {
        let mut ok = true;
        if !allowed_type(&o.type_) {
            ok = false;
            types.insert(o.type_.clone());
        }
        if !o.user.is_empty() {
            ok = false;
            user = true;
        }
        if !o.role.is_empty() {
            ok = false;
            role = true;
        }
        ok
    };
    let mut setters = Vec::new();
    if v.pod.se_linux.as_ref().is_some_and(|o| !valid(o)) {
        setters.push("pod".to_string());
    }
    let bad: Vec<&str> = v.containers.iter().filter(|c| c.sc.and_then(|s| s.se_linux.as_ref()).is_some_and(|o| !valid(o))).map(|c| c.name).collect();
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    let mut data = Vec::new();
    if !types.is_empty() {
        let types: Vec<String> = types.into_iter().collect();
        data.push(format!("{} {}", plural(types.len(), "type", "types"), join_quote(&types)));
    }
    if user {
        data.push("user may not be set".to_string());
    }
    if role {
        data.push("role may not be set".to_string());
    }
    fail("seLinuxOptions", format!("{} set forbidden securityContext.seLinuxOptions: {}", setters.join(" and "), data.join("; ")))
}

pub(super) fn seccomp_ok(t: &str) -> bool {
    t == "RuntimeDefault" || t == "Localhost"
}

/// Before policy 1.19: the seccomp annotations.
pub(super) fn seccomp_annotations(v: &View) -> Option<Failure> {
    let ok = |a: &str| a == "runtime/default" || a == "docker/default" || a.starts_with("localhost/");
    let mut forbidden = BTreeSet::new();
    if let Some(a) = v.annotations.get(SECCOMP_POD_ANNOTATION).filter(|a| !ok(a)) {
        forbidden.insert(format!("{SECCOMP_POD_ANNOTATION}={}", go_quote(a)));
    }
    for c in &v.containers {
        let key = format!("{SECCOMP_CONTAINER_PREFIX}{}", c.name);
        if let Some(a) = v.annotations.get(&key).filter(|a| !ok(a)) {
            forbidden.insert(format!("{key}={}", go_quote(a)));
        }
    }
    if forbidden.is_empty() {
        return None;
    }
    let forbidden: Vec<String> = forbidden.into_iter().collect();
    fail("seccompProfile", format!("forbidden {} {}", plural(forbidden.len(), "annotation", "annotations"), forbidden.join(", ")))
}

/// The explicitly bad setters of seccomp (pod, containers) and their values.
pub(super) fn seccomp_bad_setters(v: &View) -> (Vec<String>, Vec<String>) {
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    if let Some(t) = v.pod.seccomp_type.as_deref().filter(|t| !seccomp_ok(t)) {
        setters.push("pod".to_string());
        values.insert(t.to_string());
    }
    let bad = v.names(|c| c.sc.and_then(|s| s.seccomp_type.as_deref()).is_some_and(|t| !seccomp_ok(t)));
    values.extend(v.containers.iter().filter_map(|c| c.sc.and_then(|s| s.seccomp_type.clone())).filter(|t| !seccomp_ok(t)));
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    (setters, values.into_iter().collect())
}

pub(super) fn seccomp_baseline(v: &View) -> Option<Failure> {
    let (setters, values) = seccomp_bad_setters(v);
    if setters.is_empty() {
        return None;
    }
    fail("seccompProfile", format!("{} must not set securityContext.seccompProfile.type to {}", setters.join(" and "), join_quote(&values)))
}

pub(super) fn seccomp_restricted(v: &View) -> Option<Failure> {
    if let Some(f) = seccomp_baseline(v) {
        return Some(f);
    }
    let pod_set = v.pod.seccomp_type.as_deref().is_some_and(seccomp_ok);
    let implicit = v.names(|c| c.sc.and_then(|s| s.seccomp_type.as_ref()).is_none() && !pod_set);
    if implicit.is_empty() {
        return None;
    }
    fail(
        "seccompProfile",
        format!("pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"", containers_phrase(&implicit)),
    )
}

pub(super) fn sysctls(v: &View, checks: &PodSecurityChecks) -> Option<Failure> {
    let bad: Vec<&str> = v.pod.sysctls.iter().map(String::as_str).filter(|s| !checks.sysctls.contains(s)).collect();
    (!bad.is_empty()).then(|| ("forbidden sysctls".to_string(), bad.join(", ")))
}

pub(super) fn host_process(v: &View) -> Option<Failure> {
    let bad = v.names(|c| c.sc.is_some_and(|s| s.host_process == Some(true)));
    let mut setters = Vec::new();
    if v.pod.host_process == Some(true) {
        setters.push("pod".to_string());
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    fail("hostProcess", format!("{} must not set securityContext.windowsOptions.hostProcess=true", setters.join(" and ")))
}

pub(super) fn allow_privilege_escalation(v: &View) -> Option<Failure> {
    let bad = v.names(|c| c.sc.is_none_or(|s| s.allow_privilege_escalation != Some(false)));
    if bad.is_empty() {
        return None;
    }
    fail("allowPrivilegeEscalation != false", format!("{} must set securityContext.allowPrivilegeEscalation=false", containers_phrase(&bad)))
}

pub(super) fn capabilities_restricted(v: &View) -> Option<Failure> {
    let missing_drop = v.names(|c| c.sc.is_none_or(|s| !s.has_capabilities || !s.capabilities_drop.iter().any(|d| d == "ALL")));
    let adding = v.names(|c| c.sc.is_some_and(|s| s.has_capabilities && s.capabilities_add.iter().any(|a| a != "NET_BIND_SERVICE")));
    let caps: BTreeSet<&str> = v
        .containers
        .iter()
        .filter_map(|c| c.sc.filter(|s| s.has_capabilities))
        .flat_map(|s| &s.capabilities_add)
        .map(String::as_str)
        .filter(|a| *a != "NET_BIND_SERVICE")
        .collect();
    let mut details = Vec::new();
    if !missing_drop.is_empty() {
        details.push(format!("{} must set securityContext.capabilities.drop=[\"ALL\"]", containers_phrase(&missing_drop)));
    }
    if !adding.is_empty() {
        let caps: Vec<&str> = caps.into_iter().collect();
        details.push(format!("{} must not include {} in securityContext.capabilities.add", containers_phrase(&adding), join_quote(&caps)));
    }
    if details.is_empty() {
        return None;
    }
    fail("unrestricted capabilities", details.join("; "))
}

pub(super) fn restricted_volumes(v: &View) -> Option<Failure> {
    let vols = &v.pod.restricted_volumes;
    if vols.is_empty() {
        return None;
    }
    let names: Vec<&str> = vols.iter().map(|(n, _)| n.as_str()).collect();
    let types: BTreeSet<&str> = vols.iter().map(|(_, t)| *t).collect();
    let types: Vec<&str> = types.into_iter().collect();
    fail(
        "restricted volume types",
        format!(
            "{} {} {} {} {}",
            plural(names.len(), "volume", "volumes"),
            join_quote(&names),
            plural(names.len(), "uses", "use"),
            plural(types.len(), "restricted volume type", "restricted volume types"),
            join_quote(&types)
        ),
    )
}

pub(super) fn run_as_non_root(v: &View) -> Option<Failure> {
    let mut setters = Vec::new();
    let pod_non_root = v.pod.run_as_non_root == Some(true);
    if v.pod.run_as_non_root == Some(false) {
        setters.push("pod".to_string());
    }
    let explicit = v.names(|c| c.sc.and_then(|s| s.run_as_non_root) == Some(false));
    let implicit = v.names(|c| c.sc.and_then(|s| s.run_as_non_root).is_none() && !pod_non_root);
    if !explicit.is_empty() {
        setters.push(containers_phrase(&explicit));
    }
    if !setters.is_empty() {
        return fail("runAsNonRoot != true", format!("{} must not set securityContext.runAsNonRoot=false", setters.join(" and ")));
    }
    if implicit.is_empty() {
        return None;
    }
    fail("runAsNonRoot != true", format!("pod or {} must set securityContext.runAsNonRoot=true", containers_phrase(&implicit)))
}

pub(super) fn run_as_user(v: &View) -> Option<Failure> {
    let mut setters = Vec::new();
    if v.pod.run_as_user == Some(0) {
        setters.push("pod".to_string());
    }
    let bad = v.names(|c| c.sc.and_then(|s| s.run_as_user) == Some(0));
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    fail("runAsUser=0", format!("{} must not set runAsUser=0", setters.join(" and ")))
}
