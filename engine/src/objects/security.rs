//! What PodSecurity admission reads of a pod: the host namespaces, the security contexts of
//! the pod and of every container, host ports, probe and lifecycle hosts, volume types and
//! sysctls. Held boxed and only when a pod sets any of it, so the many pods that set none
//! cost one pointer each.

use k8s_openapi::api::core::v1 as core;

/// A `securityContext` field PodSecurity reads that both the pod and a container can set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeLinux {
    pub type_: String,
    pub user: String,
    pub role: String,
}

/// What PodSecurity reads of one container (init, regular or ephemeral).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerSecurity {
    pub privileged: Option<bool>,
    pub allow_privilege_escalation: Option<bool>,
    pub run_as_non_root: Option<bool>,
    pub run_as_user: Option<i64>,
    /// `capabilities` is there at all (restricted asks for `drop: [ALL]` in it).
    pub has_capabilities: bool,
    pub capabilities_add: Vec<String>,
    pub capabilities_drop: Vec<String>,
    pub se_linux: Option<SeLinux>,
    pub proc_mount: Option<String>,
    pub seccomp_type: Option<String>,
    pub app_armor_type: Option<String>,
    pub host_process: Option<bool>,
    /// `ports[*].hostPort` values that are not 0, in order.
    pub host_ports: Vec<i32>,
    /// Hosts named by the probes (liveness, readiness, startup) and the lifecycle hooks
    /// (postStart, preStop), `httpGet` then `tcpSocket` of each, in that order.
    pub probe_hosts: Vec<String>,
    /// `securityContext` is there at all.
    pub has_context: bool,
}

/// What PodSecurity reads of a pod's own fields, and its ephemeral containers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodSecurity {
    pub host_network: bool,
    pub host_pid: bool,
    pub host_ipc: bool,
    pub host_users: Option<bool>,
    /// `spec.os.name` is `windows`.
    pub windows: bool,
    pub run_as_non_root: Option<bool>,
    pub run_as_user: Option<i64>,
    pub se_linux: Option<SeLinux>,
    pub seccomp_type: Option<String>,
    pub app_armor_type: Option<String>,
    pub host_process: Option<bool>,
    pub sysctls: Vec<String>,
    /// Volumes of a type the restricted level does not allow: (name, type as PodSecurity
    /// names it: `hostPath`, `nfs`, ...).
    pub restricted_volumes: Vec<(String, &'static str)>,
    /// `spec.ephemeralContainers`: name, image and what PodSecurity reads of each.
    pub ephemeral: Vec<(String, String, Option<Box<ContainerSecurity>>)>,
}

fn se_linux(o: &Option<core::SELinuxOptions>) -> Option<SeLinux> {
    o.as_ref().map(|o| SeLinux {
        type_: o.type_.clone().unwrap_or_default(),
        user: o.user.clone().unwrap_or_default(),
        role: o.role.clone().unwrap_or_default(),
    })
}

fn probe_hosts(out: &mut Vec<String>, http: Option<&core::HTTPGetAction>, tcp: Option<&core::TCPSocketAction>) {
    out.extend(http.and_then(|h| h.host.clone()).filter(|h| !h.is_empty()));
    out.extend(tcp.and_then(|t| t.host.clone()).filter(|h| !h.is_empty()));
}

/// The parts of a container PodSecurity reads (`None`: it sets none of them).
#[allow(clippy::too_many_arguments)]
fn container_parts(
    sc: &Option<core::SecurityContext>,
    ports: &Option<Vec<core::ContainerPort>>,
    probes: [&Option<core::Probe>; 3],
    lifecycle: &Option<core::Lifecycle>,
) -> Option<Box<ContainerSecurity>> {
    let mut out =
        ContainerSecurity { host_ports: ports.iter().flatten().map(|p| p.host_port.unwrap_or(0)).filter(|p| *p != 0).collect(), ..Default::default() };
    for p in probes.into_iter().flatten() {
        probe_hosts(&mut out.probe_hosts, p.http_get.as_ref(), p.tcp_socket.as_ref());
    }
    if let Some(l) = lifecycle {
        for h in [&l.post_start, &l.pre_stop].into_iter().flatten() {
            probe_hosts(&mut out.probe_hosts, h.http_get.as_ref(), h.tcp_socket.as_ref());
        }
    }
    if let Some(sc) = sc {
        out.has_context = true;
        out.privileged = sc.privileged;
        out.allow_privilege_escalation = sc.allow_privilege_escalation;
        out.run_as_non_root = sc.run_as_non_root;
        out.run_as_user = sc.run_as_user;
        if let Some(c) = &sc.capabilities {
            out.has_capabilities = true;
            out.capabilities_add = c.add.clone().unwrap_or_default();
            out.capabilities_drop = c.drop.clone().unwrap_or_default();
        }
        out.se_linux = se_linux(&sc.se_linux_options);
        out.proc_mount = sc.proc_mount.clone();
        out.seccomp_type = sc.seccomp_profile.as_ref().map(|s| s.type_.clone());
        out.app_armor_type = sc.app_armor_profile.as_ref().map(|a| a.type_.clone());
        out.host_process = sc.windows_options.as_ref().and_then(|w| w.host_process);
    }
    (out != ContainerSecurity::default()).then(|| Box::new(out))
}

/// What PodSecurity reads of a container.
pub fn container(c: &core::Container) -> Option<Box<ContainerSecurity>> {
    container_parts(&c.security_context, &c.ports, [&c.liveness_probe, &c.readiness_probe, &c.startup_probe], &c.lifecycle)
}

/// A pod on the host's network: the API's defaulting gives every port without a `hostPort`
/// its `containerPort` as one (pods only; templates keep theirs unset, but the pods their
/// controllers create get it). `decoded` are the containers as [`container`] read them.
pub fn default_host_network_ports(decoded: &mut [super::Container], spec: &[core::Container]) {
    for (d, c) in decoded.iter_mut().zip(spec) {
        let ports: Vec<i32> = c.ports.iter().flatten().map(|p| p.host_port.filter(|h| *h != 0).unwrap_or(p.container_port)).filter(|p| *p != 0).collect();
        if ports.is_empty() {
            continue;
        }
        d.security.get_or_insert_with(Default::default).host_ports = ports;
    }
}

/// What PodSecurity reads of an ephemeral container.
pub fn ephemeral(c: &core::EphemeralContainer) -> Option<Box<ContainerSecurity>> {
    container_parts(&c.security_context, &c.ports, [&c.liveness_probe, &c.readiness_probe, &c.startup_probe], &c.lifecycle)
}

/// The type PodSecurity's restricted level names for a volume it does not allow, or `None`
/// for an allowed one. A volume with no source is an `emptyDir` (the API's defaulting).
fn restricted_volume_type(v: &core::Volume) -> Option<&'static str> {
    let allowed = v.config_map.is_some()
        || v.csi.is_some()
        || v.downward_api.is_some()
        || v.empty_dir.is_some()
        || v.ephemeral.is_some()
        || v.image.is_some()
        || v.persistent_volume_claim.is_some()
        || v.projected.is_some()
        || v.secret.is_some();
    if allowed {
        return None;
    }
    let named = [
        (v.host_path.is_some(), "hostPath"),
        (v.gce_persistent_disk.is_some(), "gcePersistentDisk"),
        (v.aws_elastic_block_store.is_some(), "awsElasticBlockStore"),
        (v.git_repo.is_some(), "gitRepo"),
        (v.nfs.is_some(), "nfs"),
        (v.iscsi.is_some(), "iscsi"),
        (v.glusterfs.is_some(), "glusterfs"),
        (v.rbd.is_some(), "rbd"),
        (v.flex_volume.is_some(), "flexVolume"),
        (v.cinder.is_some(), "cinder"),
        (v.cephfs.is_some(), "cephfs"),
        (v.flocker.is_some(), "flocker"),
        (v.fc.is_some(), "fc"),
        (v.azure_file.is_some(), "azureFile"),
        (v.vsphere_volume.is_some(), "vsphereVolume"),
        (v.quobyte.is_some(), "quobyte"),
        (v.azure_disk.is_some(), "azureDisk"),
        (v.photon_persistent_disk.is_some(), "photonPersistentDisk"),
        (v.portworx_volume.is_some(), "portworxVolume"),
        (v.scale_io.is_some(), "scaleIO"),
        (v.storageos.is_some(), "storageos"),
    ];
    // No source at all: defaulted to an emptyDir.
    named.iter().find(|(set, _)| *set).map(|(_, name)| *name)
}

/// A volume as PodSecurity keeps it: its name and the restricted type it is of (`None`: of a
/// type every level allows).
pub fn restricted_volume(v: &core::Volume) -> Option<(String, &'static str)> {
    restricted_volume_type(v).map(|t| (v.name.clone(), t))
}

/// What PodSecurity reads of a pod spec's own fields (`None`: it sets none of them).
/// `volumes`, when given, are the spec's volumes as [`restricted_volume`] keeps them, read
/// one at a time from a long list the spec then holds empty.
pub fn pod(spec: &core::PodSpec, volumes: Option<Vec<(String, &'static str)>>) -> Option<Box<PodSecurity>> {
    let mut out = PodSecurity {
        host_network: spec.host_network == Some(true),
        host_pid: spec.host_pid == Some(true),
        host_ipc: spec.host_ipc == Some(true),
        host_users: spec.host_users,
        windows: spec.os.as_ref().is_some_and(|o| o.name == "windows"),
        restricted_volumes: volumes.unwrap_or_else(|| spec.volumes.iter().flatten().filter_map(restricted_volume).collect()),
        ephemeral: spec.ephemeral_containers.iter().flatten().map(|c| (c.name.clone(), c.image.clone().unwrap_or_default(), ephemeral(c))).collect(),
        ..Default::default()
    };
    if let Some(sc) = &spec.security_context {
        out.run_as_non_root = sc.run_as_non_root;
        out.run_as_user = sc.run_as_user;
        out.se_linux = se_linux(&sc.se_linux_options);
        out.seccomp_type = sc.seccomp_profile.as_ref().map(|s| s.type_.clone());
        out.app_armor_type = sc.app_armor_profile.as_ref().map(|a| a.type_.clone());
        out.host_process = sc.windows_options.as_ref().and_then(|w| w.host_process);
        out.sysctls = sc.sysctls.iter().flatten().map(|s| s.name.clone()).collect();
    }
    (out != PodSecurity::default()).then(|| Box::new(out))
}
