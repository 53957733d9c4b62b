#!/usr/bin/env bash
# Build the quota oracle (tests/oracle: *.go, go.mod, go.sum) against upstream
# Kubernetes v1.37.2 (k8s.io/kubernetes and its staging modules v0.37.2) from the Go
# module proxy, with Go 1.26. Prints the binary's path as the last line of stdout; all
# else goes to stderr. Cached: a warm run only hashes the sources and checks the binary.
#
#   tests/oracle/build.sh            build (if needed) and print the path
#   tests/oracle/build.sh --smoke    also run smoke.jsonl and diff with smoke.expected.jsonl
#
# Environment: KQ_ORACLE_CACHE (default /var/cache/kubectl-quota-oracle), KQ_ORACLE_GO
# (default /usr/local/go/bin/go), GOMODCACHE (default /var/cache/kubectl-quota-go/mod),
# GOCACHE (default /var/cache/kubectl-quota-go/build), GOPROXY (Go's default).
set -euo pipefail

exec 3>&1 1>&2 # stdout is reserved for the binary's path

die() { echo "oracle build: error: $*" >&2; exit 1; }
log() { echo "oracle build: $*" >&2; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KQ_ORACLE_CACHE:-/var/cache/kubectl-quota-oracle}
GO=${KQ_ORACLE_GO:-/usr/local/go/bin/go}
GO_WANT=go1.26

SMOKE=0
for arg in "$@"; do
  case $arg in
    --smoke) SMOKE=1 ;;
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $arg (only --smoke is accepted)" ;;
  esac
done

# -mod=readonly: go.mod and go.sum are the pins; a build never rewrites them.
BUILD_FLAGS=(-trimpath -buildvcs=false -mod=readonly "-ldflags=-s -w")

# ---- warm path: nothing but hashing --------------------------------------------------
for f in main.go policy.go go.mod go.sum; do
  [ -f "$HERE/$f" ] || die "missing $HERE/$f"
done
KEY=$( { for f in "$HERE"/*.go; do printf '%s\n' "${f##*/}"; cat "$f"; done; cat "$HERE/go.mod" "$HERE/go.sum"; printf '%s\n' "${BUILD_FLAGS[@]}" "$GO_WANT" "CGO_ENABLED=0" "recipe 2"; } | sha256sum | cut -c1-16)
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
mkdir -p "$CACHE/bin" 2>/dev/null || die "cannot create $CACHE/bin (set KQ_ORACLE_CACHE)"
exec 9>"$CACHE/.lock" || die "cannot write $CACHE/.lock"
flock 9 || die "cannot lock $CACHE/.lock"
[ -x "$BIN" ] && finish # another run built it while we waited

[ -x "$GO" ] || die "no Go toolchain at $GO (install Go 1.26 or set KQ_ORACLE_GO)"
have=$(env -u GOFLAGS GOTOOLCHAIN=local "$GO" env GOVERSION) || die "$GO env GOVERSION failed"
case $have in
  "$GO_WANT" | "$GO_WANT".*) ;;
  *) die "$GO is $have; the oracle is built with $GO_WANT (set KQ_ORACLE_GO)" ;;
esac

export GOMODCACHE=${GOMODCACHE:-/var/cache/kubectl-quota-go/mod}
export GOCACHE=${GOCACHE:-/var/cache/kubectl-quota-go/build}
mkdir -p "$GOMODCACHE" "$GOCACHE" 2>/dev/null || die "cannot create $GOMODCACHE or $GOCACHE (set them)"

tmp=$BIN.tmp.$$
log "building $BIN with $have (a cold module and build cache takes minutes on 2 cores)"
start=$SECONDS
# Modules come from the proxy (GOPROXY, Go's default unless set) and are checked against
# go.sum; GOTOOLCHAIN=local keeps the toolchain named above; GOWORK=off ignores any go.work.
if ! (cd "$HERE" && env -u GOFLAGS GOTOOLCHAIN=local GOWORK=off GOTELEMETRY=off CGO_ENABLED=0 \
      nice -n 10 "$GO" build "${BUILD_FLAGS[@]}" -o "$tmp" . >&2); then
  rm -f "$tmp"
  die "go build failed (a 'missing go.sum entry' means go.mod or main.go changed: run 'go mod tidy' in $HERE)"
fi
mv "$tmp" "$BIN"
log "built in $((SECONDS - start))s, $(du -h "$BIN" | cut -f1)"
# Older builds, and what the Debian-package recipe before this one left, are not needed.
find "$CACHE/bin" -maxdepth 1 -name 'quota-oracle-*' ! -name "quota-oracle-$KEY" -delete
rm -rf "$CACHE/root" "$CACHE/debs" "$CACHE/apt" "$CACHE/gocache" "$CACHE/gopath"
finish
