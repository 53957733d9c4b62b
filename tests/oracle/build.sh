#!/usr/bin/env bash
# Build the quota oracle (tests/oracle/main.go) against upstream Kubernetes 0.36.4
# libraries taken from Debian's sid/experimental .debs, without installing anything
# system-wide. Prints the binary's path as the last line of stdout; all else goes
# to stderr. Cached: a warm run only hashes main.go and checks the binary exists.
#
#   tests/oracle/build.sh            build (if needed) and print the path
#   tests/oracle/build.sh --smoke    also run smoke.jsonl and diff with smoke.expected.jsonl
#
# Environment: KQ_ORACLE_CACHE (default /var/cache/kubectl-quota-oracle).
# The first (cold) run downloads ~56 MB from deb.debian.org and needs root.
set -euo pipefail

exec 3>&1 1>&2 # stdout is reserved for the binary's path

die() { echo "oracle build: error: $*" >&2; exit 1; }
log() { echo "oracle build: $*" >&2; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KQ_ORACLE_CACHE:-/var/cache/kubectl-quota-oracle}
ARCHIVE=http://deb.debian.org/debian
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

SMOKE=0
for arg in "$@"; do
  case $arg in
    --smoke) SMOKE=1 ;;
    -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $arg (only --smoke is accepted)" ;;
  esac
done

# Exact versions, so that the oracle keeps meaning "Kubernetes 0.36.4" even when sid
# moves on. Found by building main.go and following its missing imports.
# Trap: golang-k8s-sigs-structured-merge-diff-dev (4.x) is too old for apimachinery
# 0.36 ("undefined: value.OmitZeroFunc"); the -v6-dev package is the one that fits.
# If sid drops one of these versions, the download fails: bump the pin to the version
# `apt-cache policy` shows (private config: see apt_opts below), rebuild, run --smoke.
PACKAGES=(
  golang-1.26-go=1.26.10-1
  golang-1.26-src=1.26.10-1
  golang-k8s-api-dev=0.36.4-1
  golang-k8s-apimachinery-dev=0.36.4-3
  golang-k8s-apiserver-dev=0.36.4-2
  golang-k8s-client-go-dev=0.36.4-1
  golang-k8s-component-base-dev=0.36.4-2
  golang-k8s-component-helpers-dev=0.36.4-2
  golang-k8s-klog-dev=2.140.0-5
  golang-k8s-kube-openapi-dev=0.0~git20260721.d427ff9-1
  golang-k8s-sigs-json-dev=0.0~git20260909.11ed52e-1
  golang-k8s-sigs-randfill-dev=1.0.0-2
  golang-k8s-sigs-structured-merge-diff-v6-dev=6.4.2-1
  golang-k8s-sigs-yaml-dev=1.6.0-1
  golang-k8s-utils-dev=0.0~git20260707.cf1189d-1
  golang-github-beorn7-perks-dev=1.0.1-3
  golang-github-blang-semver-dev=4.0.0-2
  golang-github-cespare-xxhash-v2-dev=2.3.0-4
  golang-github-davecgh-go-spew-dev=1.1.1-7
  golang-github-emicklei-go-restful-dev=3.10.2-1
  golang-github-evanphx-json-patch-dev=5.7.0-2
  golang-github-fxamacker-cbor-dev=2.9.6-2
  golang-github-go-logr-logr-dev=1.4.4-1
  golang-github-go-openapi-jsonpointer-dev=1:0.23.1-1
  golang-github-go-openapi-jsonreference-dev=1:0.21.5-1
  golang-github-go-openapi-swag-dev=1:0.26.0-1
  golang-github-google-gnostic-models-dev=0.7.1-1
  golang-github-google-uuid-dev=1.6.0-1
  golang-github-json-iterator-go-dev=1.1.12-3
  golang-github-modern-go-concurrent-dev=1.0.3-1.1
  golang-github-modern-go-reflect2-dev=1.0.2-2
  golang-github-munnerz-goautoneg-dev=0.0~git20191010.a7dc8b6-2
  golang-github-pkg-errors-dev=0.9.1-3
  golang-github-pmezard-go-difflib-dev=1.0.0-4
  golang-github-prometheus-client-golang-dev=1.23.2-5
  golang-github-prometheus-client-model-dev=0.6.2-2
  golang-github-prometheus-common-dev=0.69.0-1
  golang-github-prometheus-procfs-dev=0.21.1-1
  golang-github-spf13-cobra-dev=1.10.2-1
  golang-github-spf13-pflag-dev=1.0.10-1
  golang-github-x448-float16-dev=0.8.4-3
  golang-golang-x-net-dev=1:0.62.0-1
  golang-golang-x-oauth2-dev=0.37.0-1
  golang-golang-x-sync-dev=0.24.0-1
  golang-golang-x-sys-dev=0.49.0+dfsg-1
  golang-golang-x-term-dev=0.47.0-1
  golang-golang-x-text-dev=0.43.0-1
  golang-golang-x-time-dev=0.16.0-1
  golang-google-protobuf-dev=1.36.10-2
  golang-gopkg-inf.v0-dev=0.9.1-2
  golang-gopkg-yaml.v2-dev=2.4.4-1
  golang-gopkg-yaml.v3-dev=3.0.5-1
  golang-opentelemetry-otel-dev=1.46.0-3
)
GO_VERSION_DIR=go-1.26
BUILD_FLAGS=(-trimpath -ldflags=-s\ -w)

# ---- warm path: nothing but hashing --------------------------------------------------
[ -f "$HERE/main.go" ] || die "missing $HERE/main.go"
KEY=$( { cat "$HERE/main.go"; printf '%s\n' "${PACKAGES[@]}" "${BUILD_FLAGS[@]}" "recipe 1"; } | sha256sum | cut -c1-16)
BIN=$CACHE/bin/quota-oracle-$KEY

run_smoke() {
  local got
  got=$(mktemp)
  "$BIN" <"$HERE/smoke.jsonl" >"$got" || { rm -f "$got"; die "smoke: the oracle exited non-zero"; }
  if diff -u "$HERE/smoke.expected.jsonl" "$got" >&2; then
    log "smoke: $(wc -l <"$got") answers match smoke.expected.jsonl"
    rm -f "$got"
  else
    rm -f "$got"
    die "smoke: answers differ from smoke.expected.jsonl (diff above: - expected, + got)"
  fi
}

finish() {
  [ "$SMOKE" = 1 ] && run_smoke
  echo "$BIN" >&3
  exit 0
}

[ -x "$BIN" ] && finish

# ---- cold path ------------------------------------------------------------------------
mkdir -p "$CACHE" 2>/dev/null || die "cannot create $CACHE (set KQ_ORACLE_CACHE or run as root)"
exec 9>"$CACHE/.lock" || die "cannot write $CACHE/.lock"
flock 9 || die "cannot lock $CACHE/.lock"
[ -x "$BIN" ] && finish # another run built it while we waited

ROOT=$CACHE/root
DEBS=$CACHE/debs
APT=$CACHE/apt
STAMP=$ROOT/.packages
WANT=$(printf '%s\n' "${PACKAGES[@]}")

apt_opts() {
  echo -o "Dir::Etc::sourcelist=$APT/sources.list" \
       -o "Dir::Etc::sourceparts=$APT/sources.list.d" \
       -o "Dir::Etc::preferences=$APT/preferences" \
       -o "Dir::Etc::preferencesparts=$APT/preferences.d" \
       -o "Dir::State::Lists=$APT/lists" \
       -o "Dir::State::status=$APT/status" \
       -o "Dir::Cache=$APT/cache" \
       -o "APT::Sandbox::User=root"
}

deb_file() { # name=version -> the file name apt-get download gives it (epoch ':' is %3a)
  local name=${1%%=*} version=${1#*=}
  version=${version//:/%3a}
  compgen -G "$DEBS/${name}_${version}_*.deb" | head -n1 || true
}

fetch_debs() {
  local missing=() p
  mkdir -p "$DEBS"
  for p in "${PACKAGES[@]}"; do
    [ -n "$(deb_file "$p")" ] || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0

  [ "$(id -u)" = 0 ] || die "downloading ${#missing[@]} .debs needs root (run once as root, or point KQ_ORACLE_CACHE at a warm cache)"
  command -v apt-get >/dev/null || die "apt-get not found: this script needs a Debian-like system"
  command -v dpkg-deb >/dev/null || die "dpkg-deb not found"
  [ -r "$KEYRING" ] || die "$KEYRING missing: install debian-archive-keyring"

  mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/sources.list.d" "$APT/preferences.d"
  : >"$APT/status"
  : >"$APT/preferences"
  cat >"$APT/sources.list" <<EOF
deb [signed-by=$KEYRING] $ARCHIVE sid main
deb [signed-by=$KEYRING] $ARCHIVE experimental main
EOF
  # Refresh the private indexes when absent or older than a day (pins may be newer than them).
  if [ -z "$(find "$APT/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | head -n1)" ]; then
    log "apt-get update (private config in $APT; sid + experimental from $ARCHIVE)"
    # shellcheck disable=SC2046
    apt-get $(apt_opts) -q update >&2 || die "apt-get update failed (network to $ARCHIVE? keyring $KEYRING?)"
  fi
  log "downloading ${#missing[@]} .debs into $DEBS"
  # shellcheck disable=SC2046
  if ! (cd "$DEBS" && apt-get $(apt_opts) -q download "${missing[@]}" >&2); then
    log "current candidates of the packages that failed:"
    for p in "${missing[@]}"; do
      # shellcheck disable=SC2046
      apt-cache $(apt_opts) policy "${p%%=*}" 2>/dev/null | sed -n '1,3p' >&2 || true
    done
    die "apt-get download failed; if a pinned version left sid, update PACKAGES in $0"
  fi
  for p in "${missing[@]}"; do
    [ -n "$(deb_file "$p")" ] || die "apt-get download did not produce a .deb for $p"
  done
}

unpack_root() {
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    return 0
  fi
  fetch_debs
  log "unpacking ${#PACKAGES[@]} .debs into $ROOT"
  local tmp=$ROOT.new p
  rm -rf "$tmp"
  mkdir -p "$tmp"
  for p in "${PACKAGES[@]}"; do
    dpkg-deb -x "$(deb_file "$p")" "$tmp" || die "dpkg-deb -x failed for $p"
  done
  printf '%s\n' "$WANT" >"$tmp/.packages"
  rm -rf "$ROOT"
  mv "$tmp" "$ROOT"
  # .debs no longer pinned are dead weight
  local keep f
  keep=$(for p in "${PACKAGES[@]}"; do basename "$(deb_file "$p")"; done)
  for f in "$DEBS"/*.deb; do
    grep -qxF "$(basename "$f")" <<<"$keep" || rm -f "$f"
  done
}

build() {
  local goroot=$ROOT/usr/lib/$GO_VERSION_DIR
  [ -x "$goroot/bin/go" ] || die "no Go toolchain at $goroot/bin/go after unpacking"
  mkdir -p "$CACHE/bin" "$CACHE/gocache" "$CACHE/gopath"
  local tmp=$BIN.tmp.$$
  log "building $BIN (GOPATH mode; a cold Go build cache takes minutes on 2 cores)"
  local start=$SECONDS
  # GOPATH mode: imports resolve from the unpacked /usr/share/gocode; no module proxy, no network.
  if ! (cd "$HERE" && env -u GOFLAGS \
        GOROOT="$goroot" GO111MODULE=off GOPATH="$CACHE/gopath:$ROOT/usr/share/gocode" \
        GOCACHE="$CACHE/gocache" GOENV=off GOTOOLCHAIN=local GOPROXY=off GOTELEMETRY=off \
        CGO_ENABLED=0 "$goroot/bin/go" build "${BUILD_FLAGS[@]}" -o "$tmp" ./main.go >&2); then
    rm -f "$tmp"
    die "go build failed (a 'cannot find package' line names a missing import: add its golang-*-dev package to PACKAGES)"
  fi
  mv "$tmp" "$BIN"
  log "built in $((SECONDS - start))s, $(du -h "$BIN" | cut -f1)"
  # older builds of main.go are not needed any more
  find "$CACHE/bin" -maxdepth 1 -name 'quota-oracle-*' ! -name "quota-oracle-$KEY" -delete
}

unpack_root
build
finish
