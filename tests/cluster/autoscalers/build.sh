#!/usr/bin/env bash
# autoscalers/build.sh - builds (or reuses) the autoscaler controllers the live autoscaler tests
# run against the lab: KEDA's operator and metrics server, and the VPA admission controller.
#
# Usage: tests/cluster/autoscalers/build.sh keda|vpa|kueue|helm [--modules-only]
# Prints the directory holding the binaries (and the CRDs taken from the module) on stdout; logs
# go to stderr. With --modules-only it only generates our Go module (if missing).
#
#   keda  github.com/kedacore/keda/v2 v2.21.0: cmd/operator -> keda-operator, cmd/adapter ->
#         keda-metrics-apiserver; CRDs copied from the module's config/crd/bases.
#   vpa   k8s.io/autoscaler/vertical-pod-autoscaler v1.8.1: pkg/admission-controller ->
#         vpa-admission-controller; CRDs copied from the module's deploy/vpa-v1-crd-gen.yaml.
#   kueue sigs.k8s.io/kueue v0.17.0: cmd/kueue -> kueue; CRDs copied from the module's
#         config/components/crd/bases.
#   helm  helm.sh/helm/v3 v3.22.0: cmd/helm -> helm (the client the guard's chart is tested with).
#
# As modern/build.sh does for Kubernetes: one small Go module of ours per component beside this
# script (keda-v2.21.0/, vpa-v1.8.1/), requiring the upstream module, repeating its go.mod's
# replace directives (a dependency's replaces are ignored by Go), listing the commands as `tool`s
# so that `go mod tidy` keeps their imports; committed with its go.sum, built -mod=readonly. The
# result is cached in $KQ_LAB_CACHE/<component>-<version>/ under a per-version lock, built in a
# .tmp directory renamed only when complete. BUILDINFO records versions, Go and seconds.
#
# Environment: KQ_LAB_CACHE, GOMODCACHE, GOCACHE, KQ_GO as modern/build.sh.
set -euo pipefail
{

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KQ_LAB_CACHE:-/var/cache/kubectl-quota-lab}
TAG=build
# shellcheck source=../lib.sh
source "$HERE/../lib.sh"
go_env

case ${1:-} in
  keda)
    UPMOD=github.com/kedacore/keda/v2 VER=v2.21.0
    # package -> binary name
    PKGS=("$UPMOD/cmd/operator=keda-operator" "$UPMOD/cmd/adapter=keda-metrics-apiserver")
    CRDS=(config/crd/bases/keda.sh_scaledobjects.yaml config/crd/bases/keda.sh_scaledjobs.yaml
      config/crd/bases/keda.sh_triggerauthentications.yaml config/crd/bases/keda.sh_clustertriggerauthentications.yaml
      config/crd/bases/eventing.keda.sh_cloudeventsources.yaml config/crd/bases/eventing.keda.sh_clustercloudeventsources.yaml)
    # Other files of the module the scripts use: SOURCE=NAME in the cache directory.
    FILES=(config/metrics-server/api_service.yaml=apiservice.yaml)
    VERSION_X="-X $UPMOD/version.Version=$VER -X $UPMOD/version.GitCommit=module-proxy"
    ;;
  vpa)
    UPMOD=k8s.io/autoscaler/vertical-pod-autoscaler VER=v1.8.1
    PKGS=("$UPMOD/pkg/admission-controller=vpa-admission-controller")
    CRDS=(deploy/vpa-v1-crd-gen.yaml)
    FILES=()
    VERSION_X=
    ;;
  # Not an autoscaler: Kueue's controller manager (the batch admission live tests judge check
  # with), built the same way.
  kueue)
    UPMOD=sigs.k8s.io/kueue VER=v0.17.0
    PKGS=("$UPMOD/cmd/kueue=kueue")
    CRDS=()
    for c in workloads localqueues workloadpriorityclasses cohorts topologies clusterqueues provisioningrequestconfigs \
      admissionchecks resourceflavors multikueueclusters multikueueconfigs; do
      CRDS+=("config/components/crd/bases/kueue.x-k8s.io_$c.yaml")
    done
    FILES=()
    VERSION_X="-X $UPMOD/pkg/version.GitVersion=$VER"
    ;;
  # Not an autoscaler: the Helm client the chart's tests run (deploy/helm), built the same way.
  helm)
    UPMOD=helm.sh/helm/v3 VER=v3.22.0
    PKGS=("$UPMOD/cmd/helm=helm")
    CRDS=()
    FILES=()
    # As helm's Makefile sets them: the Kubernetes version `helm template` and `helm lint`
    # assume without a server is that of its client-go (v0.37: 1.37); unset, it is 1.20.
    VERSION_X="-X $UPMOD/internal/version.version=$VER -X $UPMOD/internal/version.gitTreeState=clean"
    for p in chartutil lint/rules; do VERSION_X+=" -X $UPMOD/pkg/$p.k8sVersionMajor=1 -X $UPMOD/pkg/$p.k8sVersionMinor=37"; done
    ;;
  *) die "usage: $0 keda|vpa|kueue|helm [--modules-only]" ;;
esac
NAME=$1-$VER
BIN=$CACHE/$NAME
MOD=$HERE/$NAME

gomod() { (cd "$1" && GOFLAGS=-mod=mod nice -n 10 "$GO" "${@:2}"); }

gen() {
  log "generating $MOD/go.mod ($UPMOD $VER)"
  local tmp=$MOD.tmp up p tools=()
  rm -rf "$tmp"; mkdir -p "$tmp"
  up=$(cd "$tmp" && "$GO" mod download -json "$UPMOD@$VER" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  [[ -f $up ]] || die "cannot download $UPMOD@$VER"
  (cd "$tmp" && "$GO" mod init "kubectl-quota.test/lab/$NAME" 2>/dev/null)
  gomod "$tmp" mod edit -go="$(awk '$1 == "go" { print $2; exit }' "$up")" -require="$UPMOD@$VER"
  # Upstream's replaces, one line `replace A [vA] => B vB` or inside a replace ( ... ) block.
  local r
  while IFS= read -r r; do
    [[ -n $r ]] || continue
    gomod "$tmp" mod edit -replace="$r"
  done < <(awk '
    /^replace \(/ { inblk = 1; next }
    inblk && /^\)/ { inblk = 0; next }
    { line = $0; sub(/\/\/.*/, "", line) }
    /^replace / { sub(/^replace /, "", line) }
    (inblk || /^replace /) && line ~ /=>/ {
      split(line, s, "=>"); l = s[1]; rr = s[2]
      gsub(/^[ \t]+|[ \t]+$/, "", l); gsub(/^[ \t]+|[ \t]+$/, "", rr)
      n = split(l, a, /[ \t]+/); m = split(rr, b, /[ \t]+/)
      left = (n == 2) ? a[1] "@" a[2] : a[1]
      right = (m == 2) ? b[1] "@" b[2] : b[1]
      print left "=" right
    }' "$up")
  for p in "${PKGS[@]}"; do tools+=("${p%%=*}@$VER"); done
  gomod "$tmp" get -tool "${tools[@]}" >&2
  gomod "$tmp" mod tidy >&2
  rm -rf "$MOD"; mv "$tmp" "$MOD"
}

[[ -f $MOD/go.mod && -f $MOD/go.sum ]] || gen
[[ ${2:-} == --modules-only ]] && exit 0

complete() {
  local p
  for p in "${PKGS[@]}"; do [[ -x $BIN/${p#*=} ]] || return 1; done
  for p in "${FILES[@]}"; do [[ -f $BIN/${p#*=} ]] || return 1; done
  [[ -f $BIN/BUILDINFO && -d $BIN/crds ]]
}
# copy_files DEST: the module's CRDs and other files the scripts use, into DEST.
copy_files() {
  local dir c
  dir=$(cd "$MOD" && "$GO" list -m -f '{{.Dir}}' "$UPMOD")
  mkdir -p "$1/crds"
  for c in "${CRDS[@]}"; do
    [[ -f $dir/$c ]] || die "$UPMOD@$VER has no $c"
    cp "$dir/$c" "$1/crds/"
  done
  for c in "${FILES[@]}"; do
    [[ -f $dir/${c%%=*} ]] || die "$UPMOD@$VER has no ${c%%=*}"
    cp "$dir/${c%%=*}" "$1/${c#*=}"
  done
  chmod -R u+w "$1"
}
if complete; then
  log "reusing cached binaries: $BIN"
  echo "$BIN"; exit 0
fi
mkdir -p "$CACHE"
exec 8>"$CACHE/.build-$NAME.lock"
flock 8
if complete; then
  log "reusing cached binaries: $BIN (built meanwhile by another run)"
  echo "$BIN"; exit 0
fi
# Binaries built by a version of this script that copied fewer of the module's files: copy them.
if [[ -f $BIN/BUILDINFO ]] && ! complete; then
  copy_files "$BIN"
  if complete; then
    log "reusing cached binaries: $BIN (the module's files copied in)"
    echo "$BIN"; exit 0
  fi
fi

TMP=$BIN.tmp
rm -rf "$TMP"; mkdir -p "$TMP/crds"
secs=
for p in "${PKGS[@]}"; do
  t0=$(now)
  log "go build ${p%%=*} (module $NAME)"
  (cd "$MOD" && nice -n 10 "$GO" build -trimpath -ldflags="-s -w $VERSION_X" -o "$TMP/${p#*=}" "${p%%=*}") >&2 ||
    die "go build ${p%%=*} failed"
  secs+=" ${p#*=} $(since "$t0")"
  log "  ${p#*=}: $(since "$t0")s"
done
copy_files "$TMP"
{
  echo "module: $UPMOD $VER (Go module proxy), our module tests/cluster/autoscalers/$NAME"
  echo "go: $("$GO" version)"
  echo "built: $(date -u +%FT%TZ) on $(nproc) CPUs"
  echo "seconds:$secs"
  echo "crds: ${CRDS[*]}"
} >"$TMP/BUILDINFO"
rm -rf "$BIN"; mv "$TMP" "$BIN"
exec 8>&-
log "built $BIN"
echo "$BIN"
exit
}
