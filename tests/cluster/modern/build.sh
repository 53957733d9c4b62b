#!/usr/bin/env bash
# modern/build.sh - builds (or reuses) kube-apiserver, kube-controller-manager and etcd of a
# recent Kubernetes release from the Go module proxy, for tests/cluster/lab.sh.
#
# Usage: tests/cluster/modern/build.sh MINOR [--modules-only | --node]   (MINOR: 1.34 | 1.35 | 1.36 | 1.37)
# Prints the directory holding the three binaries on stdout; logs go to stderr. With
# --modules-only it only generates the release's Go modules (if missing) and builds nothing.
# With --node it builds (or reuses) the node's binaries of the same release, kubelet and
# kube-scheduler, for tests/cluster/node.sh, and prints their directory: a separate cached step
# ($KQ_LAB_CACHE/k8s-vX.Y.Z-node, its own lock), taken after the server build so that the two
# share the Go build cache, and never invalidating the server's cache. Only releases whose module
# lists cmd/kubelet and cmd/kube-scheduler as tools can (1.37 today).
#
# Each release has two small Go modules of ours beside this script, committed with their
# go.sum so that a build is reproducible:
#   k8s-vX.Y.Z/go.mod   requires k8s.io/kubernetes vX.Y.Z, replaces every staging module
#                       (k8s.io/api, apiserver, client-go, ...) by its published v0.Y.Z, and
#                       names the commands as `tool`s so `go mod tidy` keeps their imports
#                       (1.37 also kubelet and kube-scheduler, for the lab's node).
#   etcd-vA.B.C/go.mod  requires go.etcd.io/etcd/server/v3 at the etcd release that Kubernetes
#                       release names in its build/dependencies.yaml (its main package is etcd).
# A missing module is generated once (go mod tidy) and should then be committed.
#
# Binaries are cached outside the work tree: $KQ_LAB_CACHE/k8s-vX.Y.Z/{kube-apiserver,
# kube-controller-manager,etcd,BUILDINFO}; the directory appears atomically (built in .tmp, then
# renamed) under a per-release lock, so concurrent callers build once.
#
# Environment:
#   KQ_LAB_CACHE   binary cache                         [/var/cache/kubectl-quota-lab]
#   GOMODCACHE     Go module cache                      [/var/cache/kubectl-quota-go/mod]
#   GOCACHE        Go build cache                       [/var/cache/kubectl-quota-go/build]
#   KQ_GO          the go command                       [/usr/local/go/bin/go, else go on PATH]
set -euo pipefail
# The whole script is one block, read before it runs: editing this file while a copy runs (a
# build takes many minutes) cannot change what that copy does next.
{

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KQ_LAB_CACHE:-/var/cache/kubectl-quota-lab}
TAG=build
# shellcheck source=../lib.sh
source "$HERE/../lib.sh"
go_env

# The release built for each minor, and the etcd its build/dependencies.yaml names.
case ${1:-} in
  1.34) K8S=v1.34.4 ETCD=v3.6.5 ;;
  1.35) K8S=v1.35.4 ETCD=v3.6.6 ;;
  1.36) K8S=v1.36.3 ETCD=v3.6.8 ;;
  1.37) K8S=v1.37.2 ETCD=v3.7.0 ;;
  *) die "usage: $0 1.34|1.35|1.36|1.37" ;;
esac
MINOR=${K8S#v1.}; MINOR=${MINOR%%.*}
STAGING=v0.${K8S#v1.}
BIN=$CACHE/k8s-$K8S
KMOD=$HERE/k8s-$K8S
EMOD=$HERE/etcd-$ETCD

gomod() { (cd "$1" && GOFLAGS=-mod=mod nice -n 10 "$GO" "${@:2}"); }

# gen_k8s: the Kubernetes module, from k8s.io/kubernetes' own go.mod: each `k8s.io/X => ./staging/...`
# replace there becomes `k8s.io/X => k8s.io/X v0.Y.Z` here.
gen_k8s() {
  log "generating $KMOD/go.mod (k8s.io/kubernetes $K8S, staging $STAGING)"
  local tmp=$KMOD.tmp up
  rm -rf "$tmp"; mkdir -p "$tmp"
  up=$(cd "$tmp" && "$GO" mod download -json "k8s.io/kubernetes@$K8S" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  [[ -f $up ]] || die "cannot download k8s.io/kubernetes@$K8S"
  (cd "$tmp" && "$GO" mod init "kubectl-quota.test/lab/k8s-$K8S" 2>/dev/null)
  local gover; gover=$(awk '$1 == "go" { print $2; exit }' "$up")
  gomod "$tmp" mod edit -go="$gover" -require="k8s.io/kubernetes@$K8S"
  local m n=0
  for m in $(awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$up"); do
    gomod "$tmp" mod edit -replace="$m=$m@$STAGING"; n=$((n + 1))
  done
  ((n > 10)) || die "found only $n staging replaces in k8s.io/kubernetes@$K8S's go.mod"
  gomod "$tmp" get -tool "k8s.io/kubernetes/cmd/kube-apiserver@$K8S" "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S" \
    "k8s.io/kubernetes/cmd/kubelet@$K8S" "k8s.io/kubernetes/cmd/kube-scheduler@$K8S" >&2
  gomod "$tmp" mod tidy >&2
  # The etcd this release names, checked against the table above.
  local dir want
  dir=$(cd "$tmp" && "$GO" list -m -f '{{.Dir}}' k8s.io/kubernetes)
  want=$(awk '/name: "etcd"/ { getline; print $2; exit }' "$dir/build/dependencies.yaml")
  [[ v$want == "$ETCD" ]] || die "k8s.io/kubernetes $K8S names etcd $want in build/dependencies.yaml, the table says $ETCD"
  rm -rf "$KMOD"; mv "$tmp" "$KMOD"
}

gen_etcd() {
  log "generating $EMOD/go.mod (go.etcd.io/etcd/server/v3 $ETCD)"
  local tmp=$EMOD.tmp up
  rm -rf "$tmp"; mkdir -p "$tmp"
  up=$(cd "$tmp" && "$GO" mod download -json "go.etcd.io/etcd/server/v3@$ETCD" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  [[ -f $up ]] || die "cannot download go.etcd.io/etcd/server/v3@$ETCD"
  (cd "$tmp" && "$GO" mod init "kubectl-quota.test/lab/etcd-$ETCD" 2>/dev/null)
  gomod "$tmp" mod edit -go="$(awk '$1 == "go" { print $2; exit }' "$up")"
  gomod "$tmp" get -tool "go.etcd.io/etcd/server/v3@$ETCD" >&2
  gomod "$tmp" mod tidy >&2
  rm -rf "$EMOD"; mv "$tmp" "$EMOD"
}

if [[ ${2:-} == --modules-only ]]; then
  [[ -f $KMOD/go.mod && -f $KMOD/go.sum ]] || gen_k8s
  [[ -f $EMOD/go.mod && -f $EMOD/go.sum ]] || gen_etcd
  exit 0
fi

if [[ ${2:-} == --node ]]; then
  grep -q 'k8s.io/kubernetes/cmd/kubelet$' "$KMOD/go.mod" && grep -q 'k8s.io/kubernetes/cmd/kube-scheduler$' "$KMOD/go.mod" ||
    die "$KMOD/go.mod does not list cmd/kubelet and cmd/kube-scheduler as tools: no node for $K8S"
  NODE=$CACHE/k8s-$K8S-node
  node_complete() { [[ -x $NODE/kubelet && -x $NODE/kube-scheduler && -f $NODE/BUILDINFO ]]; }
  if node_complete; then
    log "reusing cached node binaries: $NODE"
    echo "$NODE"; exit 0
  fi
  # The server's build first (or its wait on its lock): the node's binaries share most packages.
  "$0" "$1" >/dev/null
  mkdir -p "$CACHE"
  exec 8>"$CACHE/.build-k8s-$K8S-node.lock"
  flock 8
  if node_complete; then
    log "reusing cached node binaries: $NODE (built meanwhile by another run)"
    echo "$NODE"; exit 0
  fi
fi

complete() { [[ -x $BIN/kube-apiserver && -x $BIN/kube-controller-manager && -x $BIN/etcd && -f $BIN/BUILDINFO ]]; }

if [[ ${2:-} != --node ]]; then
  if complete; then
    log "reusing cached binaries: $BIN"
    echo "$BIN"; exit 0
  fi
  mkdir -p "$CACHE"
  exec 8>"$CACHE/.build-k8s-$K8S.lock"
  flock 8
  if complete; then
    log "reusing cached binaries: $BIN (built meanwhile by another run)"
    echo "$BIN"; exit 0
  fi
fi

[[ -f $KMOD/go.mod && -f $KMOD/go.sum ]] || gen_k8s
[[ -f $EMOD/go.mod && -f $EMOD/go.sum ]] || gen_etcd

TMP=$BIN.tmp
[[ ${2:-} == --node ]] && TMP=$NODE.tmp
rm -rf "$TMP"; mkdir -p "$TMP"
# What `make` would stamp in (hack/lib/version.sh): the server's /version must say the release.
X=
for k in gitVersion=$K8S gitMajor=1 gitMinor=$MINOR gitTreeState=clean buildDate=$(date -u +%FT%TZ); do
  X+=" -X k8s.io/component-base/version.$k -X k8s.io/client-go/pkg/version.$k"
done
declare -A secs
build_one() {   # build_one MODULE_DIR PACKAGE OUTPUT [GO FLAGS...]
  local t0; t0=$(now)
  log "go build $2 (module $(basename "$1"))"
  (cd "$1" && nice -n 10 "$GO" build -trimpath "${@:4}" -o "$TMP/$3" "$2") >&2 ||
    die "go build $2 failed"
  secs[$3]=$(since "$t0")
  log "  $3: ${secs[$3]}s"
}
if [[ ${2:-} == --node ]]; then
  build_one "$KMOD" k8s.io/kubernetes/cmd/kubelet kubelet -ldflags="-s -w$X"
  build_one "$KMOD" k8s.io/kubernetes/cmd/kube-scheduler kube-scheduler -ldflags="-s -w$X"
  {
    echo "kubernetes: $K8S (k8s.io/kubernetes from the Go module proxy, staging $STAGING): the node's binaries"
    echo "go: $("$GO" version)"
    echo "built: $(date -u +%FT%TZ) on $(nproc) CPUs"
    echo "seconds: kubelet ${secs[kubelet]} kube-scheduler ${secs[kube-scheduler]}"
    "$TMP/kubelet" --version
  } >"$TMP/BUILDINFO"
  "$TMP/kubelet" --version | grep -qx "Kubernetes $K8S" || die "kubelet says $("$TMP/kubelet" --version), not $K8S"
  rm -rf "$NODE"; mv "$TMP" "$NODE"
  exec 8>&-
  log "built $NODE"
  echo "$NODE"
  exit 0
fi
build_one "$KMOD" k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver -ldflags="-s -w$X"
build_one "$KMOD" k8s.io/kubernetes/cmd/kube-controller-manager kube-controller-manager -ldflags="-s -w$X"
build_one "$EMOD" go.etcd.io/etcd/server/v3 etcd -ldflags="-s -w"
{
  echo "kubernetes: $K8S (k8s.io/kubernetes from the Go module proxy, staging $STAGING)"
  echo "etcd: $ETCD (go.etcd.io/etcd/server/v3)"
  echo "go: $("$GO" version)"
  echo "built: $(date -u +%FT%TZ) on $(nproc) CPUs"
  echo "seconds: kube-apiserver ${secs[kube-apiserver]} kube-controller-manager ${secs[kube-controller-manager]} etcd ${secs[etcd]}"
  "$TMP/kube-apiserver" --version
  "$TMP/etcd" --version | sed -n 1p    # sed reads it all: no SIGPIPE for pipefail
} >"$TMP/BUILDINFO"
"$TMP/kube-apiserver" --version | grep -qx "Kubernetes $K8S" || die "kube-apiserver says $("$TMP/kube-apiserver" --version), not $K8S"
rm -rf "$BIN"; mv "$TMP" "$BIN"     # appears atomically: a half build is never "cached"
exec 8>&-
log "built $BIN"
echo "$BIN"
exit
}
