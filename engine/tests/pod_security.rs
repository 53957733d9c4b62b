//! Rule tables, step `admission/pod_security`: PodSecurity admission, the fourth plugin.
//!
//! One test per behaviour; each row is (what, input, expected). Expected messages come from
//! k8s.io/pod-security-admission v0.37.2 (`policy/check_*.go`: each check's reason and detail;
//! `policy/registry.go`: the order, baseline checks by ID then restricted ones;
//! `admission/admission.go`: `violates PodSecurity %q: %s`, exemptions, updates), never from
//! what the tool prints. `tests/oracle.rs` compares the same with the library on generated pods.

mod support;

use support::*;

/// A namespace `ns` with `labels` (a flow map's inside), and the cluster's shared objects.
fn ns(labels: &str) -> String {
    cluster(&[format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: ns, labels: {{{labels}}}}}\n")])
}

/// A pod named `p` with `spec` (YAML, at the spec's indentation: two spaces).
fn pod_spec(spec: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n{spec}")
}

/// A pod passing the restricted level: every container `c` sets what restricted asks.
const GOOD: &str = "  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\n  containers:\n  - name: c\n    image: x\n    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}\n";

fn restricted(detail: &str) -> String {
    format!("violates PodSecurity \"restricted:latest\": {detail}")
}

fn baseline(detail: &str) -> String {
    format!("violates PodSecurity \"baseline:latest\": {detail}")
}

#[test]
fn enforced_level_comes_from_the_namespace_labels() {
    let bare = "  containers: [{name: c, image: x}]\n";
    let all_restricted = restricted(
        "allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), \
         unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), \
         runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), \
         seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")",
    );
    let rows = [
        ("no label: upstream's default, privileged", ns(""), bare, OK.to_string()),
        (
            "privileged admits anything",
            ns("pod-security.kubernetes.io/enforce: privileged"),
            "  hostNetwork: true\n  containers: [{name: c, image: x}]\n",
            OK.into(),
        ),
        ("baseline admits a plain pod", ns("pod-security.kubernetes.io/enforce: baseline"), bare, OK.into()),
        ("restricted names every check a plain pod breaks, in order", ns("pod-security.kubernetes.io/enforce: restricted"), bare, all_restricted.clone()),
        ("a restricted pod passes", ns("pod-security.kubernetes.io/enforce: restricted"), GOOD, OK.into()),
        ("an unknown level is enforced as restricted", ns("pod-security.kubernetes.io/enforce: strict"), bare, all_restricted.clone()),
        (
            "a pinned version is printed as written",
            ns("pod-security.kubernetes.io/enforce: baseline, pod-security.kubernetes.io/enforce-version: v1.30"),
            "  hostPID: true\n  containers: [{name: c, image: x}]\n",
            "violates PodSecurity \"baseline:v1.30\": host namespaces (hostPID=true)".into(),
        ),
        (
            "an unknown version is latest",
            ns("pod-security.kubernetes.io/enforce: baseline, pod-security.kubernetes.io/enforce-version: v2.0"),
            "  hostIPC: true\n  containers: [{name: c, image: x}]\n",
            baseline("host namespaces (hostIPC=true)"),
        ),
        (
            "warn and audit labels refuse nothing",
            ns("pod-security.kubernetes.io/warn: restricted, pod-security.kubernetes.io/audit: restricted"),
            bare,
            OK.into(),
        ),
    ];
    let mut t = Table::default();
    for (what, state, spec, want) in rows {
        t.row(what, summary(&check_one(&state, &pod_spec(spec))), want);
    }
    t.done();
}

#[test]
fn baseline_checks_name_what_breaks_them() {
    let label = ns("pod-security.kubernetes.io/enforce: baseline");
    let rows = [
        ("host namespaces, in the order network, PID, IPC", "  hostIPC: true\n  hostNetwork: true\n  containers: [{name: c, image: x}]\n", "host namespaces (hostNetwork=true, hostIPC=true)"),
        (
            "privileged containers, init first",
            "  initContainers: [{name: i, image: x, securityContext: {privileged: true}}]\n  containers: [{name: c, image: x, securityContext: {privileged: true}}]\n",
            "privileged (containers \"i\", \"c\" must not set securityContext.privileged=true)",
        ),
        (
            "capabilities beyond the default set, sorted and unique",
            "  containers:\n  - {name: a, image: x, securityContext: {capabilities: {add: [SYS_ADMIN, CHOWN, NET_ADMIN]}}}\n  - {name: b, image: x, securityContext: {capabilities: {add: [SYS_ADMIN]}}}\n",
            "non-default capabilities (containers \"a\", \"b\" must not include \"NET_ADMIN\", \"SYS_ADMIN\" in securityContext.capabilities.add)",
        ),
        (
            "host ports, sorted as text",
            "  containers:\n  - {name: a, image: x, ports: [{containerPort: 1, hostPort: 8080}, {containerPort: 2, hostPort: 80}]}\n",
            "hostPort (container \"a\" uses hostPorts 80, 8080)",
        ),
        ("hostPath volumes", "  volumes: [{name: h, hostPath: {path: /}}, {name: e, emptyDir: {}}]\n  containers: [{name: c, image: x}]\n", "hostPath volumes (volume \"h\")"),
        (
            "probe and lifecycle hosts (1.34)",
            "  containers:\n  - name: c\n    image: x\n    livenessProbe: {httpGet: {host: evil.example, port: 80}}\n    lifecycle: {preStop: {tcpSocket: {host: 10.0.0.1, port: 1}}}\n",
            "probe or lifecycle host (container \"c\" uses probe or lifecycle hosts \"10.0.0.1\", \"evil.example\")",
        ),
        ("procMount", "  containers: [{name: c, image: x, securityContext: {procMount: Unmasked}}]\n", "procMount (container \"c\" must not set securityContext.procMount to \"Unmasked\")"),
        (
            "SELinux: type, user and role",
            "  securityContext: {seLinuxOptions: {type: spc_t}}\n  containers: [{name: c, image: x, securityContext: {seLinuxOptions: {user: u, role: r}}}]\n",
            "seLinuxOptions (pod and container \"c\" set forbidden securityContext.seLinuxOptions: type \"spc_t\"; user may not be set; role may not be set)",
        ),
        ("container_engine_t is allowed (1.31)", "  securityContext: {seLinuxOptions: {type: container_engine_t}}\n  containers: [{name: c, image: x}]\n", OK),
        (
            "seccomp Unconfined",
            "  securityContext: {seccompProfile: {type: Unconfined}}\n  containers: [{name: c, image: x, securityContext: {seccompProfile: {type: Unconfined}}}]\n",
            "seccompProfile (pod and container \"c\" must not set securityContext.seccompProfile.type to \"Unconfined\")",
        ),
        (
            "sysctls outside the safe set, in the pod's order",
            "  securityContext: {sysctls: [{name: kernel.msgmax, value: '1'}, {name: net.ipv4.tcp_notsent_lowat, value: '1'}, {name: a.b, value: '1'}]}\n  containers: [{name: c, image: x}]\n",
            "forbidden sysctls (kernel.msgmax, a.b)",
        ),
        (
            "AppArmor fields and annotations",
            "  securityContext: {appArmorProfile: {type: Unconfined}}\n  containers: [{name: c, image: x}]\n",
            "forbidden AppArmor profile (pod must not set AppArmor profile type to \"Unconfined\")",
        ),
        (
            "windows hostProcess",
            "  securityContext: {windowsOptions: {hostProcess: true}}\n  hostNetwork: true\n  containers: [{name: c, image: x, securityContext: {windowsOptions: {hostProcess: true}}}]\n",
            "host namespaces (hostNetwork=true), hostProcess (pod and container \"c\" must not set securityContext.windowsOptions.hostProcess=true)",
        ),
    ];
    let mut t = Table::default();
    for (what, spec, want) in rows {
        let want = if want == OK { OK.to_string() } else { baseline(want) };
        t.row(what, summary(&check_one(&label, &pod_spec(spec))), want);
    }
    t.done();
    // Ephemeral containers: on create the object's validation refuses them before PodSecurity
    // is asked (recorded case 2831); PodSecurity sees them only on pods/ephemeralcontainers.
    let spec = "  containers: [{name: c, image: x, securityContext: {privileged: true}}]\n  ephemeralContainers: [{name: e, image: x, securityContext: {privileged: true}}]\n";
    assert_eq!(summary(&check_one(&label, &pod_spec(spec))), "Pod \"p\" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create");
}

#[test]
fn app_armor_annotations_are_copied_into_unset_fields() {
    // registry/core/pod/strategy.go applyAppArmorVersionSkew (1.30+): the annotation becomes the
    // container's field before PodSecurity sees the pod, so both are named.
    let label = ns("pod-security.kubernetes.io/enforce: baseline");
    let input = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {container.apparmor.security.beta.kubernetes.io/c: unconfined}\nspec:\n  containers: [{name: c, image: x}]\n";
    let want = "forbidden AppArmor profiles (container \"c\" and annotation must not set AppArmor profile type to \"Unconfined\", \"container.apparmor.security.beta.kubernetes.io/c=\"unconfined\"\")";
    let mut t = Table::default();
    t.row("1.37: the field and the annotation", summary(&only(check_version("1.37", &label, input))), baseline(want));
    let old =
        "forbidden AppArmor profile (annotation must not set AppArmor profile type to \"container.apparmor.security.beta.kubernetes.io/c=\"unconfined\"\")";
    t.row("1.29: the annotation only", summary(&only(check_version("1.29", &label, input))), baseline(old));
    t.done();
}

#[test]
fn restricted_checks_follow_baseline_ones_and_override_some() {
    let label = ns("pod-security.kubernetes.io/enforce: restricted");
    let good_container = "allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}";
    let rows = [
        (
            "restricted volume types replace hostPath volumes",
            format!("  securityContext: {{runAsNonRoot: true, seccompProfile: {{type: RuntimeDefault}}}}\n  volumes: [{{name: h, hostPath: {{path: /}}}}, {{name: share, nfs: {{server: s, path: /}}}}, {{name: s, secret: {{secretName: s}}}}]\n  containers: [{{name: c, image: x, securityContext: {{{good_container}}}}}]\n"),
            "restricted volume types (volumes \"h\", \"share\" use restricted volume types \"hostPath\", \"nfs\")",
        ),
        (
            "capabilities: restricted's check replaces baseline's",
            "  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\n  containers: [{name: c, image: x, securityContext: {allowPrivilegeEscalation: false, capabilities: {add: [NET_BIND_SERVICE, SYS_TIME, CHOWN]}}}]\n".to_string(),
            "unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]; container \"c\" must not include \"CHOWN\", \"SYS_TIME\" in securityContext.capabilities.add)",
        ),
        (
            "runAsNonRoot false, runAsUser 0",
            format!("  securityContext: {{runAsNonRoot: false, runAsUser: 0, seccompProfile: {{type: RuntimeDefault}}}}\n  containers: [{{name: c, image: x, securityContext: {{{good_container}, runAsNonRoot: false}}}}]\n"),
            "runAsNonRoot != true (pod and container \"c\" must not set securityContext.runAsNonRoot=false), runAsUser=0 (pod must not set runAsUser=0)",
        ),
        (
            "a user namespace relaxes runAsNonRoot and runAsUser (1.35)",
            format!("  hostUsers: false\n  securityContext: {{runAsUser: 0, seccompProfile: {{type: RuntimeDefault}}}}\n  containers: [{{name: c, image: x, securityContext: {{{good_container}}}}}]\n"),
            "",
        ),
        (
            "a Windows pod is not asked for escalation, capabilities or seccomp (1.25)",
            "  os: {name: windows}\n  securityContext: {runAsNonRoot: true}\n  containers: [{name: c, image: x}]\n".to_string(),
            "",
        ),
        (
            "seccomp at the container level only",
            "  securityContext: {runAsNonRoot: true}\n  containers:\n  - {name: a, image: x, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, seccompProfile: {type: Localhost, localhostProfile: p.json}}}\n  - {name: b, image: x, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}\n".to_string(),
            "seccompProfile (pod or container \"b\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")",
        ),
    ];
    let mut t = Table::default();
    for (what, spec, want) in rows {
        let want = if want.is_empty() { OK.to_string() } else { restricted(want) };
        t.row(what, summary(&check_one(&label, &pod_spec(&spec))), want);
    }
    t.done();
}

#[test]
fn pinned_versions_and_releases_choose_the_checks() {
    let plain =
        "  containers: [{name: c, image: x, securityContext: {allowPrivilegeEscalation: false}}]\n  securityContext: {runAsNonRoot: true, runAsUser: 0}\n";
    let rows = [
        // capabilities_restricted from 1.22, runAsUser from 1.23, seccomp_restricted from 1.19.
        (
            "v1.18: no seccomp, no capabilities, no runAsUser",
            "1.37",
            "v1.18",
            "".to_string(),
        ),
        (
            "v1.22: capabilities and seccomp, not runAsUser",
            "1.37",
            "v1.22",
            "unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")".to_string(),
        ),
        (
            "v1.40 on a 1.34 server is evaluated as 1.34",
            "1.34",
            "v1.40",
            "unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsUser=0 (pod must not set runAsUser=0), seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")".to_string(),
        ),
    ];
    let mut t = Table::default();
    for (what, release, pinned, want) in rows {
        let state = ns(&format!("pod-security.kubernetes.io/enforce: restricted, pod-security.kubernetes.io/enforce-version: {pinned}"));
        let want = if want.is_empty() { OK.to_string() } else { format!("violates PodSecurity \"restricted:{pinned}\": {want}") };
        t.row(what, summary(&only(check_version(release, &state, &pod_spec(plain)))), want);
    }
    // The sysctls allowed grow with the policy version (1.27, 1.29, 1.32, 1.37).
    let sysctl = "  securityContext: {sysctls: [{name: net.ipv4.tcp_rmem, value: '1'}]}\n  containers: [{name: c, image: x}]\n";
    for (pinned, want) in [("v1.31", "violates PodSecurity \"baseline:v1.31\": forbidden sysctls (net.ipv4.tcp_rmem)"), ("v1.32", OK)] {
        let state = ns(&format!("pod-security.kubernetes.io/enforce: baseline, pod-security.kubernetes.io/enforce-version: {pinned}"));
        t.row(&format!("sysctl tcp_rmem at {pinned}"), summary(&only(check_version("1.37", &state, &pod_spec(sysctl)))), want);
    }
    // 1.22 and before: no PodSecurity admission at all.
    let state = ns("pod-security.kubernetes.io/enforce: restricted");
    t.row("1.22 has no PodSecurity", summary(&only(check_version("1.22", &state, &pod_spec(plain)))), OK);
    t.done();
}

#[test]
fn exemptions_and_defaults_come_from_the_admission_configuration() {
    let config = |body: &str| {
        format!("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n{body}")
    };
    let hostnet = "  hostNetwork: true\n  runtimeClassName: kata\n  containers: [{name: c, image: x}]\n";
    let refused = baseline("host namespaces (hostNetwork=true)");
    let rows = [
        ("a default of baseline for unlabelled namespaces", ns(""), config("    defaults: {enforce: baseline}\n"), refused.clone()),
        ("a label wins over the default", ns("pod-security.kubernetes.io/enforce: privileged"), config("    defaults: {enforce: baseline}\n"), OK.into()),
        ("an exempt namespace", ns("pod-security.kubernetes.io/enforce: baseline"), config("    exemptions: {namespaces: [ns]}\n"), OK.into()),
        ("an exempt runtime class", ns("pod-security.kubernetes.io/enforce: baseline"), config("    exemptions: {runtimeClasses: [kata]}\n"), OK.into()),
        (
            "another runtime class is not exempt",
            ns("pod-security.kubernetes.io/enforce: baseline"),
            config("    exemptions: {runtimeClasses: [gvisor]}\n"),
            refused.clone(),
        ),
        (
            "v1beta1 is read too",
            ns(""),
            config("    defaults: {enforce: baseline, enforce-version: v1.30}\n").replace("admission.config.k8s.io/v1", "admission.config.k8s.io/v1beta1"),
            "violates PodSecurity \"baseline:v1.30\": host namespaces (hostNetwork=true)".into(),
        ),
    ];
    let mut t = Table::default();
    for (what, state, config, want) in rows {
        let pod_security = Some(admission_config::parse_pod_security("admission.yaml", &config).unwrap_or_else(|e| panic!("{e}")).expect("a configuration"));
        let opts = CheckOptions { namespace: NS.into(), pod_security, ..CheckOptions::default() };
        t.row(what, summary(&only(check_opts(&state, &pod_spec(hostnet), &opts))), want);
    }
    t.done();
}

#[test]
fn workloads_are_admitted_and_their_pods_refused() {
    let label = ns("pod-security.kubernetes.io/enforce: baseline");
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      hostPID: true\n      containers: [{name: c, image: x}]\n";
    let d = only(check_all(&label, deploy));
    let mut t = Table::default();
    t.row(
        "the Deployment itself is admitted, no pod is created",
        summary(&d),
        "allowed; pods 0/3: violates PodSecurity \"baseline:latest\": host namespaces (hostPID=true)",
    );
    t.done();
}

#[test]
fn updates_that_change_no_image_are_not_evaluated() {
    // admission.go isSignificantPodUpdate: only images, container counts and new ephemeral
    // containers make an update evaluated.
    let existing = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  hostPID: true\n  containers: [{name: c, image: x}]\n";
    let state = docs(&[ns("pod-security.kubernetes.io/enforce: baseline"), existing.to_string()]);
    let same = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  hostPID: true\n  containers: [{name: c, image: x}]\n";
    let mut t = Table::default();
    t.row("the same image: not evaluated", summary(&check_one(&state, same)), OK);
    t.row("a new image: evaluated", summary(&check_one(&state, &same.replace("image: x", "image: x2"))), baseline("host namespaces (hostPID=true)"));
    t.done();
}
