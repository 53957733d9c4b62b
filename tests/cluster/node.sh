#!/usr/bin/env bash
# node.sh - a real node for a running lab (tests/cluster/lab.sh): pods are scheduled and run.
#
# For the lab at KQ_LAB_DIR it starts, all under KQ_NODE_DIR:
#   containerd  Debian's (1.6), its own config, root, state and socket; CRI with runc (crun
#               refuses this VM's hybrid cgroups), the overlayfs snapshotter, and
#               restrict_oom_score_adj (no CAP_SYS_RESOURCE here: the pause container's
#               oom_score_adj of -998 cannot be written, and runc then fails with only "can't get
#               final child's PID from pipe: EOF"); sandbox_image = our pause image
#   CNI         Debian's bridge + host-local plugins: a bridge KQ_NODE_BRIDGE with the first
#               address of KQ_NODE_POD_CIDR, pods on it; no masquerade, no port maps
#   kubelet     of the lab's release (same build as the server), registering node KQ_NODE_NAME
#   kube-scheduler  of the same release, so that the pods of Deployments land on the node
#   metrics-server  v0.8.0 from the Go module proxy (modern/metrics-server-v0.8.0), registered as
#               the APIService v1beta1.metrics.k8s.io, reading the kubelet: `kubectl top` and the
#               HPA controller's resource metrics work (the lab's API server is its front proxy)
# and images built here (no registry is reachable), imported into the node's containerd:
#   pause, workload   one static Go program of ours (tests/cluster/node/workload: pause, sleep,
#                     burn CPU), each image that file alone on an empty root
#   kubectl-quota     `image-quota BIN`: the plugin's binary (the Dockerfile's equivalent, built
#                     without pulling: the binary, the glibc libraries it links, CA certificates,
#                     user 65532), named after the binary's sha256
# Pods reach the API server as in a cluster: the `kubernetes` Service's ClusterIP:443 is
# routed to the lab's loopback API server by one DNAT rule on the bridge (route_localnet), not
# by kube-proxy; no other ClusterIP is routed. The API server reaches Services (webhooks, the
# service proxy) through their endpoints: the lab runs it with --enable-aggregator-routing.
#
# Usage: tests/cluster/node.sh COMMAND
#   build        install Debian's packages, build (or reuse) kubelet, kube-scheduler and images
#   up           build if needed, start the node for the running lab, wait until it is Ready,
#                print `export KUBECTL_QUOTA_NODE=...`
#   down         delete the node's pods, stop everything, unmount and remove what `up` made
#   status       exit 0 if the node is up and Ready, 3 if not
#   env          print `export KUBECTL_QUOTA_NODE=...`
#   image-quota [BIN]  build (cached by sha256) and import kubectl-quota's image from BIN
#                [target/debug/kubectl-quota]; print its name
#   start-extra NAME CMD...  run CMD beside the node (its log NAME.log, pid file extra-NAME.pid
#                in KQ_NODE_DIR), stopped by `down`: the hook for metrics-server and the like,
#                which get the lab's kubeconfig ($KQ_LAB_DIR/kubeconfig) and reach the kubelet
#                at 127.0.0.1:KQ_NODE_KUBELET_PORT (anonymous, AlwaysAllow: a test node)
#   ctr ARGS...  Debian's ctr against the node's containerd, namespace k8s.io
#
# Environment:
#   KQ_LAB_DIR              the lab's state (lab.sh's KQ_LAB_DIR)          [/tmp/kubectl-quota-lab]
#   KQ_NODE_VERSION         the release to build for (`build` before `up`)   [the lab's]
#   KQ_NODE_DIR             the node's state                               [$KQ_LAB_DIR-node]
#   KQ_NODE_NAME            the Node's name                                [lab-node]
#   KQ_NODE_KUBELET_PORT    kubelet's port, on 127.0.0.1                   [28250]
#   KQ_NODE_HEALTHZ_PORT    kubelet's healthz port, on 127.0.0.1           [28248]
#   KQ_NODE_METRICS_PORT    metrics-server's port, on the bridge's address [28443]
#   KQ_NODE_BRIDGE          the pods' bridge (at most 15 characters)       [kq-lab0]
#   KQ_NODE_POD_CIDR        the pods' addresses (a /16 to /28)             [10.88.0.0/24]
#   KQ_NODE_CGROUP_ROOT     the kubelet's cgroupRoot                       [/kubectl-quota-lab-node]
#   KQ_NODE_START_TIMEOUT   seconds to wait for each readiness step        [120]
#   KQ_NODE_STOP_TIMEOUT    seconds to wait after TERM before KILL         [15]
#   KQ_LAB_CACHE            where built binaries and images are cached     [/var/cache/kubectl-quota-lab]
# Several nodes (of several labs) may run at once, each with its own KQ_NODE_DIR, ports,
# bridge, pod CIDR and cgroup root.
#
# Releases: 1.37 (kubelet and kube-scheduler from tests/cluster/modern, `build.sh 1.37 --node`).
# Its kubelet needs `failCgroupV1: false` on this cgroup v1 VM. 1.20 is not supported yet.
#
# Needs root: containerd, mounts, the bridge, iptables, cgroups.
set -euo pipefail
# The whole script is one block, read before it runs: editing this file while a copy runs (a
# build takes many minutes) cannot change what that copy does next.
{

LAB_DIR=${KQ_LAB_DIR:-/tmp/kubectl-quota-lab}
NODE_DIR=${KQ_NODE_DIR:-$LAB_DIR-node}
NODE_NAME=${KQ_NODE_NAME:-lab-node}
KUBELET_PORT=${KQ_NODE_KUBELET_PORT:-28250}
HEALTHZ_PORT=${KQ_NODE_HEALTHZ_PORT:-28248}
METRICS_PORT=${KQ_NODE_METRICS_PORT:-28443}
BRIDGE=${KQ_NODE_BRIDGE:-kq-lab0}
POD_CIDR=${KQ_NODE_POD_CIDR:-10.88.0.0/24}
CGROUP_ROOT=${KQ_NODE_CGROUP_ROOT:-/kubectl-quota-lab-node}
START_TIMEOUT=${KQ_NODE_START_TIMEOUT:-120}
STOP_TIMEOUT=${KQ_NODE_STOP_TIMEOUT:-15}
CACHE=${KQ_LAB_CACHE:-/var/cache/kubectl-quota-lab}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SOCK=$NODE_DIR/containerd.sock
GO=${KQ_GO:-/usr/local/go/bin/go}

export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C

TAG=node PROC_DIR=$NODE_DIR
# shellcheck source=lib.sh
source "$HERE/lib.sh"

((${#BRIDGE} <= 15)) || die "KQ_NODE_BRIDGE=$BRIDGE: an interface name has at most 15 characters"
[[ $POD_CIDR =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)/([0-9]+)$ ]] || die "KQ_NODE_POD_CIDR=$POD_CIDR: want A.B.C.D/N"
((BASH_REMATCH[5] >= 16 && BASH_REMATCH[5] <= 28)) || die "KQ_NODE_POD_CIDR=$POD_CIDR: want a /16 to /28"
GATEWAY=${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.${BASH_REMATCH[3]}.$((BASH_REMATCH[4] + 1))
PREFIX=${BASH_REMATCH[5]}

# ---------------------------------------------------------------------------------------------
# the lab
# ---------------------------------------------------------------------------------------------

lab_version() { cat "$LAB_DIR/version" 2>/dev/null || echo 1.20; }
# The release the node is built for: KQ_NODE_VERSION (a `build` before the lab is up), else the
# lab's.
node_version() { echo "${KQ_NODE_VERSION:-$(lab_version)}"; }
lab_server() { sed -n 's/^ *server: *//p' "$LAB_DIR/kubeconfig" | head -1; }

# api METHOD PATH [BODY]: a call to the lab's API server as its admin; body, then the HTTP status.
api() {
  local args=(-sS --cacert "$LAB_DIR/ca.crt" -X "$1" -H "Authorization: Bearer $(<"$LAB_DIR/admin.token")"
              -w '\n%{http_code}' --max-time 20)
  [[ -n ${3:-} ]] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
  curl "${args[@]}" "$(lab_server)$2"
}

lab_up() {
  [[ -f $LAB_DIR/ready && -f $LAB_DIR/kubeconfig ]] &&
    curl -sf --max-time 5 --cacert "$LAB_DIR/ca.crt" "$(lab_server)/readyz" >/dev/null
}

# ---------------------------------------------------------------------------------------------
# build: packages, binaries, images
# ---------------------------------------------------------------------------------------------

apt_install() {
  local missing=() p
  for p in "$@"; do
    [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *'install ok installed'* ]] || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  [[ $(id -u) == 0 ]] || die "need root to install: ${missing[*]}"
  log "apt-get install ${missing[*]}"
  # Another build may hold dpkg's lock for a while: wait for it rather than fail.
  apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null 2>&1 ||
    { apt-get update -q -o DPkg::Lock::Timeout=600 >/dev/null &&
      apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null; } ||
    die "apt-get install ${missing[*]} failed"
}

NODE_BIN=   # set by build: kubelet and kube-scheduler
build_binaries() {
  local v; v=$(node_version)
  case $v in
    1.37) NODE_BIN=$("$HERE/modern/build.sh" "$v" --node) || die "building the node's binaries of Kubernetes $v failed" ;;
    *) die "no node for Kubernetes $v yet: only 1.37 (see tests/cluster/README.md)" ;;
  esac
  [[ -x $NODE_BIN/kubelet && -x $NODE_BIN/kube-scheduler ]] || die "$NODE_BIN lacks kubelet or kube-scheduler"
}

IMAGES=$CACHE/node-images
# oci_image NAME TAG ROOTFS_DIR ENTRYPOINT_JSON CMD_JSON [USER]: an OCI archive of one layer
# (the directory's content) in $IMAGES, built once; prints its path. buildah, with a storage of
# its own that is thrown away: only the archive is kept.
oci_image() {
  local name=$1 tag=$2 root=$3 entry=$4 cmd=$5 user=${6:-} out=$IMAGES/$1-$2.oci.tar
  if [[ -s $out ]]; then echo "$out"; return 0; fi
  mkdir -p "$IMAGES"
  exec 7>"$IMAGES/.build.lock"
  flock 7
  if [[ -s $out ]]; then exec 7>&-; echo "$out"; return 0; fi
  local store; store=$(mktemp -d "$IMAGES/.buildah.XXXXXX")
  local b=(buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs)
  local c
  c=$("${b[@]}" from scratch) || die "buildah from scratch failed"
  "${b[@]}" copy --quiet "$c" "$root/" / >/dev/null || die "buildah copy failed"
  "${b[@]}" config --entrypoint "$entry" --cmd "$cmd" ${user:+--user "$user"} \
    --label org.opencontainers.image.source=kubectl-quota-lab "$c" >/dev/null 2>&1 || die "buildah config failed"
  "${b[@]}" commit --quiet "$c" "kubectl-quota.test/lab/$name:$tag" >/dev/null || die "buildah commit failed"
  "${b[@]}" push --quiet "kubectl-quota.test/lab/$name:$tag" "oci-archive:$out.tmp:kubectl-quota.test/lab/$name:$tag" >&2 ||
    die "buildah push failed"
  "${b[@]}" rm --all >/dev/null 2>&1 || true
  mv "$out.tmp" "$out"
  rm -rf "$store"
  exec 7>&-
  echo "$out"
}

# The pause and workload images: one static Go program, named after its source's hash.
PAUSE= WORKLOAD=
build_images() {
  local src=$HERE/node/workload tag
  tag=$(cat "$src/go.mod" "$src/main.go" | sha256sum | cut -c1-12)
  PAUSE=kubectl-quota.test/lab/pause:$tag
  WORKLOAD=kubectl-quota.test/lab/workload:$tag
  if [[ ! -s $IMAGES/pause-$tag.oci.tar || ! -s $IMAGES/workload-$tag.oci.tar ]]; then
    local t0 root; t0=$(now)
    root=$(mktemp -d)
    CGO_ENABLED=0 GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=readonly \
      GOCACHE=${GOCACHE:-/var/cache/kubectl-quota-go/build} "$GO" -C "$src" build -trimpath -ldflags='-s -w' -o "$root/workload" . ||
      die "go build of $src failed"
    oci_image pause "$tag" "$root" '["/workload"]' '["pause"]' >/dev/null
    oci_image workload "$tag" "$root" '["/workload"]' '["sleep"]' >/dev/null
    rm -rf "$root"
    log "built the pause and workload images ($tag) in $(since "$t0")s"
  fi
}

# metrics-server, from the Go module proxy: our module beside build.sh
# (modern/metrics-server-vX.Y.Z, committed with its go.sum) names it as a tool. Cached in
# $CACHE/metrics-server-vX.Y.Z, built in .tmp and renamed under its own lock, as the servers.
# It serves metrics.k8s.io from the kubelet's /metrics/resource; which Kubernetes release runs
# the lab does not matter to it (it speaks the stable kubelet and aggregation APIs).
METRICS_VERSION=v0.8.0
METRICS_BIN=$CACHE/metrics-server-$METRICS_VERSION
build_metrics_server() {
  [[ -x $METRICS_BIN/metrics-server && -f $METRICS_BIN/BUILDINFO ]] && return 0
  local mod=$HERE/modern/metrics-server-$METRICS_VERSION
  [[ -f $mod/go.mod && -f $mod/go.sum ]] || die "$mod/go.mod or go.sum missing"
  mkdir -p "$CACHE"
  exec 6>"$CACHE/.build-metrics-server-$METRICS_VERSION.lock"
  flock 6
  if [[ -x $METRICS_BIN/metrics-server && -f $METRICS_BIN/BUILDINFO ]]; then exec 6>&-; return 0; fi
  local t0 tmp=$METRICS_BIN.tmp; t0=$(now)
  rm -rf "$tmp"; mkdir -p "$tmp"
  log "building metrics-server $METRICS_VERSION (module $mod; several minutes cold)"
  # Stamped as its Makefile stamps it: the version it reports is the release.
  (cd "$mod" && CGO_ENABLED=0 GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=readonly \
    GOMODCACHE=${GOMODCACHE:-/var/cache/kubectl-quota-go/mod} GOCACHE=${GOCACHE:-/var/cache/kubectl-quota-go/build} \
    nice -n 10 "$GO" build -trimpath \
      -ldflags="-s -w -X k8s.io/client-go/pkg/version.gitVersion=$METRICS_VERSION -X k8s.io/client-go/pkg/version.buildDate=$(date -u +%FT%TZ)" \
      -o "$tmp/metrics-server" sigs.k8s.io/metrics-server/cmd/metrics-server) >&2 ||
    die "go build of metrics-server $METRICS_VERSION failed"
  {
    echo "metrics-server: $METRICS_VERSION (sigs.k8s.io/metrics-server from the Go module proxy)"
    echo "go: $("$GO" version)"
    echo "built: $(date -u +%FT%TZ) on $(nproc) CPUs"
    echo "seconds: metrics-server $(since "$t0")"
  } >"$tmp/BUILDINFO"
  rm -rf "$METRICS_BIN"; mv "$tmp" "$METRICS_BIN"
  exec 6>&-
  log "built metrics-server $METRICS_VERSION in $(since "$t0")s: $METRICS_BIN"
}

cmd_build() {
  [[ $(id -u) == 0 ]] || die "needs root"
  apt_install containerd runc containernetworking-plugins buildah iptables iproute2 curl ca-certificates binutils
  build_binaries
  build_images
  build_metrics_server
}

# ---------------------------------------------------------------------------------------------
# processes (as lab.sh)
# ---------------------------------------------------------------------------------------------

COMPONENTS=(kube-scheduler kubelet containerd)

# start LOGNAME PIDFILE CMD...: lib.sh's start_detached (a pid file of its own, beside others'),
# running as CMD's basename.
start() { start_detached "$1" "$2" "${3##*/}" "${@:3}"; }

# wait_for WHAT CMD...: lib.sh's wait_until, up to START_TIMEOUT seconds.
wait_for() {
  local what=$1; shift
  wait_until "$what" "$START_TIMEOUT" "$@"
}

stop_pid() {   # stop_pid NAME PID: TERM, up to STOP_TIMEOUT seconds, then KILL
  local i
  kill -TERM "$2" 2>/dev/null || return 0
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do alive "$2" || return 0; sleep 0.1; done
  log "$1 ($2) ignored TERM for ${STOP_TIMEOUT}s: KILL"
  kill -KILL "$2" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do alive "$2" || return 0; sleep 0.1; done
}

ctr_() { ctr --address "$SOCK" --namespace k8s.io "$@"; }
# has_image REF. Never `ctr ... | grep -q`: grep's early exit SIGPIPEs ctr, and under pipefail
# the image then reads as missing.
has_image() { local all; all=$(ctr_ images ls -q) && grep -qxF "$1" <<<"$all"; }

node_ready() {
  local out; out=$(api GET "/api/v1/nodes/$NODE_NAME" | tr -d ' \n')
  [[ $out == *'"type":"Ready","status":"True"'* ]]
}

healthy() {
  [[ -f $NODE_DIR/ready ]] && pid_of containerd >/dev/null && pid_of kubelet >/dev/null &&
    pid_of kube-scheduler >/dev/null && lab_up && node_ready
}

# ---------------------------------------------------------------------------------------------
# up
# ---------------------------------------------------------------------------------------------

write_configs() {
  local d=$NODE_DIR
  mkdir -p "$d/containerd" "$d/cni/net.d" "$d/cni/ipam" "$d/kubelet" "$d/pod-logs" "$d/volume-plugins"
  cat >"$d/containerd.toml" <<EOF
version = 2
root = "$d/containerd/root"
state = "$d/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$d/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$d/containerd/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni/net.d"
EOF
  cat >"$d/cni/net.d/10-lab.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "kq-$NODE_NAME",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$GATEWAY"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$d/cni/ipam"
      }
    }
  ]
}
EOF
  # A test node: anonymous requests to the kubelet are allowed (it listens on loopback only);
  # no disk-pressure eviction ("0%" turns a signal off; one left out gets its default): the disk
  # is shared with the builds, and at 98% used the kubelet tainted the node disk-pressure and
  # every new pod stayed Pending.
  cat >"$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $HEALTHZ_PORT
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$SOCK
resolvConf: ""
enforceNodeAllocatable: []
evictionHard: {memory.available: "1Mi", nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%", imagefs.inodesFree: "0%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
imageMinimumGCAge: 87600h
podLogsDir: $d/pod-logs
volumePluginDir: $d/volume-plugins
maxPods: 30
registerNode: true
serializeImagePulls: false
EOF
}

# route_api_service: the `kubernetes` Service's ClusterIP:443, dialled from a pod, reaches the
# lab's API server on 127.0.0.1 (its certificate names that ClusterIP).
route_api_service() {
  local out ip port
  out=$(api GET /api/v1/namespaces/default/services/kubernetes)
  [[ ${out##*$'\n'} == 200 ]] || die "the lab has no default/kubernetes Service: $out"
  ip=$(tr -d ' \n' <<<"$out" | sed -n 's/.*"clusterIP":"\([0-9.]*\)".*/\1/p')
  [[ -n $ip ]] || die "default/kubernetes has no clusterIP"
  port=$(lab_server); port=${port##*:}
  sysctl -qw "net.ipv4.conf.$BRIDGE.route_localnet=1"
  local rule=(PREROUTING -i "$BRIDGE" -d "$ip/32" -p tcp --dport 443 -m comment --comment "kubectl-quota lab node $NODE_DIR"
              -j DNAT --to-destination "127.0.0.1:$port")
  iptables -t nat -C "${rule[@]}" 2>/dev/null || iptables -t nat -A "${rule[@]}"
  printf '%s\n' "${rule[@]}" >"$NODE_DIR/dnat-rule"   # one word a line, for down
}

# route_kubelet_address IP: what dials the node's address IP (its InternalIP, off loopback) at
# the kubelet's port from this machine reaches the kubelet on 127.0.0.1: metrics-server picks a
# node's address from its status, as in a cluster. One DNAT rule on locally made packets, for
# that address and port only.
route_kubelet_address() {
  local rule=(OUTPUT -d "$1/32" -p tcp --dport "$KUBELET_PORT" -m comment --comment "kubectl-quota lab node $NODE_DIR"
              -j DNAT --to-destination "127.0.0.1:$KUBELET_PORT")
  iptables -t nat -C "${rule[@]}" 2>/dev/null || iptables -t nat -A "${rule[@]}"
  printf '%s\n' "${rule[@]}" >"$NODE_DIR/kubelet-dnat-rule"
}

# start_metrics_server IP: metrics-server beside the node (an extra process, stopped by down),
# registered as the v1beta1.metrics.k8s.io APIService the way a cluster registers it: a Service
# kube-system/metrics-server whose endpoint is this machine's bridge address, which the API
# server dials (--enable-aggregator-routing) with its front-proxy client certificate. It scrapes
# the kubelet at the node's InternalIP (routed above) every 10 s, its shortest resolution.
start_metrics_server() {
  local ip=$1 d=$NODE_DIR/metrics-server
  mkdir -p "$d"
  start metrics-server "$NODE_DIR/extra-metrics-server.pid" "$METRICS_BIN/metrics-server" \
    --kubeconfig="$LAB_DIR/kubeconfig" --authentication-kubeconfig="$LAB_DIR/kubeconfig" \
    --authorization-kubeconfig="$LAB_DIR/kubeconfig" \
    --bind-address="$GATEWAY" --secure-port="$METRICS_PORT" --cert-dir="$d" \
    --kubelet-insecure-tls --kubelet-preferred-address-types=InternalIP --kubelet-use-node-status-port \
    --metric-resolution=10s --kubelet-request-timeout=5s --profiling=false
  local svc='{"apiVersion":"v1","kind":"Service","metadata":{"name":"metrics-server","namespace":"kube-system",
      "labels":{"app.kubernetes.io/managed-by":"kubectl-quota-lab-node"}},
      "spec":{"ports":[{"name":"https","port":443,"protocol":"TCP","targetPort":'"$METRICS_PORT"'}]}}'
  local ep='{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"metrics-server","namespace":"kube-system",
      "labels":{"app.kubernetes.io/managed-by":"kubectl-quota-lab-node"}},
      "subsets":[{"addresses":[{"ip":"'"$GATEWAY"'"}],"ports":[{"name":"https","port":'"$METRICS_PORT"',"protocol":"TCP"}]}]}'
  local apisvc='{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1beta1.metrics.k8s.io",
      "labels":{"app.kubernetes.io/managed-by":"kubectl-quota-lab-node"}},
      "spec":{"group":"metrics.k8s.io","version":"v1beta1","insecureSkipTLSVerify":true,
      "groupPriorityMinimum":100,"versionPriority":100,
      "service":{"name":"metrics-server","namespace":"kube-system","port":443}}}'
  local out
  out=$(api POST /api/v1/namespaces/kube-system/services "$svc"); [[ ${out##*$'\n'} == 201 || ${out##*$'\n'} == 409 ]] ||
    die "creating Service kube-system/metrics-server: $out"
  out=$(api POST /api/v1/namespaces/kube-system/endpoints "$ep"); [[ ${out##*$'\n'} == 201 || ${out##*$'\n'} == 409 ]] ||
    die "creating Endpoints kube-system/metrics-server: $out"
  out=$(api POST /apis/apiregistration.k8s.io/v1/apiservices "$apisvc"); [[ ${out##*$'\n'} == 201 || ${out##*$'\n'} == 409 ]] ||
    die "creating APIService v1beta1.metrics.k8s.io: $out"
  wait_for "metrics-server serving (APIService v1beta1.metrics.k8s.io Available)" metrics_available
  # Not waited for: the node's own figures, which arrive after two scrapes (until then
  # `kubectl top node` answers "metrics not available yet"); a test that needs them waits for
  # them while the others run.
}

metrics_available() {
  pid_of metrics-server "$NODE_DIR/extra-metrics-server.pid" >/dev/null || {
    log "metrics-server exited; tail of $NODE_DIR/metrics-server.log:"; tail -n 25 "$NODE_DIR/metrics-server.log" >&2; exit 1; }
  local out; out=$(api GET /apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io | tr -d ' \n')
  [[ $out == *'"type":"Available","status":"True"'* ]]
}

# make_cgroup_root: the kubelet wants its cgroupRoot to exist in every hierarchy (cgroupfs
# driver); a new cpuset cgroup has no CPUs or memory nodes until given its parent's.
make_cgroup_root() {
  local h
  for h in /sys/fs/cgroup/*/; do
    h=${h%/}
    [[ -d $h$CGROUP_ROOT ]] || mkdir "$h$CGROUP_ROOT" 2>/dev/null || continue
    if [[ -f $h$CGROUP_ROOT/cpuset.cpus && -z $(<"$h$CGROUP_ROOT/cpuset.cpus") ]]; then
      cat "$h/cpuset.cpus" >"$h$CGROUP_ROOT/cpuset.cpus"
      cat "$h/cpuset.mems" >"$h$CGROUP_ROOT/cpuset.mems"
    fi
  done
}

make_bridge() {
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge || die "cannot create bridge $BRIDGE"
  fi
  [[ $(ip addr show dev "$BRIDGE") == *"inet $GATEWAY/$PREFIX "* ]] || ip addr add "$GATEWAY/$PREFIX" dev "$BRIDGE"
  ip link set "$BRIDGE" up
}

import_image() {   # import_image ARCHIVE REF
  # The archive names the image in full: --base-name keeps that name (ctr would drop it).
  ctr_ images import --base-name "${2%:*}" "$1" >/dev/null || die "importing $1 failed"
  has_image "$2" || die "$1 imported, but containerd has no image $2"
}

cmd_up() {
  local t0; t0=$(now)
  lab_up || die "no running lab at $LAB_DIR (start it with tests/cluster/lab.sh up, same KQ_LAB_DIR)"
  [[ $(node_version) == "$(lab_version)" ]] || die "KQ_NODE_VERSION=$(node_version), but the lab at $LAB_DIR runs $(lab_version)"
  mkdir -p "$NODE_DIR"
  exec 9>"$NODE_DIR/.lock"
  flock 9
  cmd_build
  if healthy; then
    log "already up: node $NODE_NAME of the lab at $(lab_server)"
    cmd_env; return 0
  fi
  local c
  for c in "${COMPONENTS[@]}"; do
    if pid_of "$c" >/dev/null; then log "found a partial node; stopping it first"; down_all; break; fi
  done
  local p
  for p in "$KUBELET_PORT" "$HEALTHZ_PORT"; do
    port_busy "$p" && die "port 127.0.0.1:$p is already in use (set KQ_NODE_KUBELET_PORT / KQ_NODE_HEALTHZ_PORT)"
  done
  for c in "${COMPONENTS[@]}"; do rm -f "$NODE_DIR/$c.pid"; done   # stale ones would read as crashes
  rm -f "$NODE_DIR/ready"
  write_configs
  printf '%s\n' "$NODE_NAME" >"$NODE_DIR/node-name"
  printf 'pause=%s\nworkload=%s\n' "$PAUSE" "$WORKLOAD" >"$NODE_DIR/images"
  printf '%s\n' "$LAB_DIR" >"$NODE_DIR/lab"
  make_bridge
  route_api_service
  make_cgroup_root

  log "starting containerd ($SOCK)"
  start containerd "$NODE_DIR/containerd.pid" containerd --config "$NODE_DIR/containerd.toml"
  wait_for "containerd" ctr --address "$SOCK" version
  local tag=${PAUSE##*:}
  import_image "$IMAGES/pause-$tag.oci.tar" "$PAUSE"
  import_image "$IMAGES/workload-$tag.oci.tar" "$WORKLOAD"

  local ip; ip=$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
  log "starting kubelet $(lab_version) as node $NODE_NAME${ip:+ ($ip)}, port 127.0.0.1:$KUBELET_PORT"
  start kubelet "$NODE_DIR/kubelet.pid" "$NODE_BIN/kubelet" --config="$NODE_DIR/kubelet.yaml" \
    --kubeconfig="$LAB_DIR/kubeconfig" --hostname-override="$NODE_NAME" ${ip:+--node-ip="$ip"} \
    --root-dir="$NODE_DIR/kubelet" --cert-dir="$NODE_DIR/kubelet/pki"
  wait_for "node $NODE_NAME Ready" node_ready

  log "starting kube-scheduler"
  start kube-scheduler "$NODE_DIR/kube-scheduler.pid" "$NODE_BIN/kube-scheduler" \
    --kubeconfig="$LAB_DIR/kcm.kubeconfig" --leader-elect=false --secure-port=0 --profiling=false
  sleep 1
  pid_of kube-scheduler >/dev/null || { tail -n 25 "$NODE_DIR/kube-scheduler.log" >&2; die "kube-scheduler exited"; }

  if [[ -n $ip ]]; then
    log "starting metrics-server $METRICS_VERSION on $GATEWAY:$METRICS_PORT"
    route_kubelet_address "$ip"
    start_metrics_server "$ip"
  else
    log "no address off loopback: no metrics-server (it reads the kubelet at the node's InternalIP)"
  fi
  touch "$NODE_DIR/ready"
  log "up in $(since "$t0")s: node $NODE_NAME Ready in the lab at $(lab_server)"
  cmd_env
}

cmd_env() { echo "export KUBECTL_QUOTA_NODE=$NODE_DIR"; }

# ---------------------------------------------------------------------------------------------
# down
# ---------------------------------------------------------------------------------------------

# down_all: first the node's pods deleted while the kubelet still runs, so that it stops their
# sandboxes (CNI teardown, network namespaces removed); then the processes; then whatever is
# left: containerd's shims, mounts, the DNAT rule, the bridge, cgroups.
down_all() {
  local pid f
  if [[ -f $NODE_DIR/node-name ]] && pid_of kubelet >/dev/null && lab_up; then
    local name; name=$(<"$NODE_DIR/node-name")
    local pods; pods=$(api GET "/api/v1/pods?fieldSelector=spec.nodeName=$name" |
      tr -d ' \n' | grep -o '"metadata":{"name":"[^"]*","namespace":"[^"]*"' |
      sed 's/"metadata":{"name":"\([^"]*\)","namespace":"\([^"]*\)"/\2\/\1/') || true
    local p n=0
    for p in $pods; do
      api DELETE "/api/v1/namespaces/${p%/*}/pods/${p#*/}?gracePeriodSeconds=0" >/dev/null || true
      n=$((n + 1))
    done
    if ((n)); then
      local i
      for ((i = 0; i < 60; i++)); do
        [[ -n $(ctr_ tasks ls 2>/dev/null | awk 'NR > 1 && $3 == "RUNNING"') ]] || break
        sleep 0.5
      done
      log "deleted the node's $n pods"
    fi
  fi
  # metrics-server's registration first: an APIService left without its server makes the lab's
  # discovery answer "metrics.k8s.io/v1beta1: the server is currently unable to handle the request".
  if [[ -f $NODE_DIR/extra-metrics-server.pid ]] && lab_up; then
    api DELETE /apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io >/dev/null || true
    api DELETE /api/v1/namespaces/kube-system/services/metrics-server >/dev/null || true
    api DELETE /api/v1/namespaces/kube-system/endpoints/metrics-server >/dev/null || true
  fi
  for f in "$NODE_DIR"/extra-*.pid; do
    [[ -f $f ]] || continue
    pid=$(<"$f")
    [[ $pid =~ ^[0-9]+$ ]] && stop_pid "$(basename "$f" .pid)" "$pid"
    rm -f "$f"
  done
  local c
  for c in kube-scheduler kubelet; do
    if pid=$(pid_of "$c"); then stop_pid "$c" "$pid"; fi
  done
  # The Node object too: a later `up` must wait for its new kubelet to register, not read the
  # old one's Ready.
  if [[ -f $NODE_DIR/node-name ]] && lab_up; then
    api DELETE "/api/v1/nodes/$(<"$NODE_DIR/node-name")" >/dev/null || true
  fi
  # What containers are left (pods the kubelet had no time to stop): killed through containerd.
  if pid_of containerd >/dev/null; then
    local id
    for id in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s KILL "$id" >/dev/null 2>&1 || true; done
    sleep 0.5
    for id in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete -f "$id" >/dev/null 2>&1 || true; done
    for id in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers delete "$id" >/dev/null 2>&1 || true; done
    stop_pid containerd "$(pid_of containerd)"
  fi
  # Shims of this containerd that outlived it (they name its socket in their command line).
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $SOCK( |$)" 2>/dev/null); do
    stop_pid containerd-shim "$pid"
  done
  for c in "${COMPONENTS[@]}"; do rm -f "$NODE_DIR/$c.pid"; done
  # Mounts under the node's directory, deepest first.
  local m
  awk -v d="$NODE_DIR/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
  done
  for f in "$NODE_DIR/dnat-rule" "$NODE_DIR/kubelet-dnat-rule"; do
    [[ -f $f ]] || continue
    local rule; mapfile -t rule <"$f"
    while iptables -t nat -D "${rule[@]}" 2>/dev/null; do :; done
    rm -f "$f"
  done
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE" 2>/dev/null || log "cannot remove bridge $BRIDGE"; fi
  # The kubelet's cgroups (cgroupfs driver: one tree per v1 controller, and the unified one).
  local cg
  for cg in /sys/fs/cgroup/*"$CGROUP_ROOT"; do
    [[ -d $cg ]] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  rm -f "$NODE_DIR/ready"
}

cmd_down() {
  [[ -d $NODE_DIR ]] || { log "no node at $NODE_DIR"; return 0; }
  exec 9>"$NODE_DIR/.lock"
  flock 9
  down_all
  log "node at $NODE_DIR stopped"
}

cmd_status() {
  local c
  for c in "${COMPONENTS[@]}"; do
    if pid_of "$c" >/dev/null; then echo "$c: running (pid $(pid_of "$c"))"; else echo "$c: stopped"; fi
  done
  if healthy; then echo "node $NODE_NAME is UP and Ready in the lab at $(lab_server)"; cmd_env; return 0; fi
  echo "node is DOWN"; return 3
}

# ---------------------------------------------------------------------------------------------
# kubectl-quota's image
# ---------------------------------------------------------------------------------------------

# The Dockerfile's image without pulling its bases: the binary (stripped), the shared libraries
# it links (distroless/cc's part: glibc, libgcc), CA certificates, user nonroot 65532.
cmd_image_quota() {
  local bin=${1:-$HERE/../../target/debug/kubectl-quota}
  [[ -x $bin ]] || die "no kubectl-quota binary at $bin (cargo build first)"
  [[ -S $SOCK ]] && pid_of containerd >/dev/null || die "no node running at $NODE_DIR (tests/cluster/node.sh up)"
  local tag; tag=$(sha256sum "$bin" | cut -c1-12)
  local ref=kubectl-quota.test/lab/kubectl-quota:$tag
  if [[ ! -s $IMAGES/kubectl-quota-$tag.oci.tar ]]; then
    local root lib; root=$(mktemp -d)
    mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/tmp"
    strip -o "$root/usr/local/bin/kubectl-quota" "$bin" 2>/dev/null || cp "$bin" "$root/usr/local/bin/kubectl-quota"
    for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
      mkdir -p "$root$(dirname "$lib")"
      cp -L "$lib" "$root$lib"
    done
    cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
    printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
    chmod 1777 "$root/tmp"
    oci_image kubectl-quota "$tag" "$root" '["/usr/local/bin/kubectl-quota"]' \
      '["guard","serve","--listen=0.0.0.0:8443","--tls-cert-file=/etc/kubectl-quota-guard/tls/tls.crt","--tls-private-key-file=/etc/kubectl-quota-guard/tls/tls.key"]' \
      65532:65532 >/dev/null
    rm -rf "$root"
  fi
  has_image "$ref" || import_image "$IMAGES/kubectl-quota-$tag.oci.tar" "$ref"
  echo "$ref"
}

cmd_start_extra() {
  local name=${1:-}; shift || true
  [[ $name =~ ^[a-z0-9-]+$ && $# -gt 0 ]] || die "usage: $0 start-extra NAME CMD..."
  [[ -f $NODE_DIR/ready ]] || die "no node running at $NODE_DIR"
  start "$name" "$NODE_DIR/extra-$name.pid" "$@"
  log "$name started (pid $(<"$NODE_DIR/extra-$name.pid"), log $NODE_DIR/$name.log)"
}

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

case ${1:-} in
  build) cmd_build ;;
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  image-quota) shift; cmd_image_quota "$@" ;;
  start-extra) shift; cmd_start_extra "$@" ;;
  ctr) shift; ctr_ "$@" ;;
  -h | --help | help) usage ;;
  *) usage >&2; exit 2 ;;
esac
exit
}
