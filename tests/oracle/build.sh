#!/usr/bin/env bash
# Build the quota oracle (tests/oracle: *.go, go.mod, go.sum) against upstream
# Kubernetes v1.37.2 (k8s.io/kubernetes and its staging modules v0.37.2) from the Go
# module proxy, with Go 1.26; or, with --release 1.38, against 1.38 (K138 below: go.1.38.mod
# and go.1.38.sum, build tag k138, Go toolchain GO138 fetched by the go command). Prints the
# binary's path as the last line of stdout; all else goes to stderr. Cached per release: a
# warm run only hashes the sources and checks the binary.
#
#   tests/oracle/build.sh [--release 1.37|1.38]           build (if needed) and print the path
#   tests/oracle/build.sh [--release 1.37|1.38] --smoke   also run smoke.jsonl and diff with
#                                   smoke.expected.jsonl (1.37) or smoke.expected.1.38.jsonl
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
# The 1.38 the oracle is built against, and the Go toolchain its modules need. To move to a
# newer 1.38 (an rc, 1.38.0), change K138 and re-run with --release 1.38: go.1.38.mod is
# re-pinned (every staging module and k8s.io/kubernetes) and tidied; commit both files.
K138=1.38.0-beta.0
GO138=go1.27.3

SMOKE=0
RELEASE=1.37
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) SMOKE=1 ;;
    --release) [ $# -ge 2 ] || die "--release needs 1.37 or 1.38"; RELEASE=$2; shift ;;
    --release=*) RELEASE=${1#--release=} ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (--release 1.37|1.38 and --smoke are accepted)" ;;
  esac
  shift
done

# -mod=readonly: go.mod and go.sum are the pins; a build never rewrites them.
BUILD_FLAGS=(-trimpath -buildvcs=false -mod=readonly "-ldflags=-s -w")
case $RELEASE in
  1.37)
    MODFILE=go.mod SUMFILE=go.sum EXPECTED=smoke.expected.jsonl PREFIX=quota-oracle-
    TOOLCHAIN=local EXTRA=() ;;
  1.38)
    # go.1.38.sum is read beside go.1.38.mod; the stand-in for k8s.io/apiextensions-api
    # (stub138/, see README.md) is part of the build.
    MODFILE=go.1.38.mod SUMFILE=go.1.38.sum EXPECTED=smoke.expected.1.38.jsonl PREFIX=quota-oracle-1.38-
    TOOLCHAIN=$GO138 EXTRA=("$HERE"/stub138/apiextensions-api/go.mod "$HERE"/stub138/apiextensions-api/pkg/apis/apiextensions/*/*.go)
    BUILD_FLAGS+=(-modfile=go.1.38.mod -tags=k138) ;;
  *) die "unknown release: $RELEASE (1.37 or 1.38)" ;;
esac

# go.1.38.mod pins K138: re-pin it when K138 was changed (a cold path of its own).
repin_138() {
  local have
  have=$(sed -n 's/^[[:space:]]*k8s\.io\/kubernetes v\(1\.38\.[^[:space:]]*\)$/\1/p' "$HERE/go.1.38.mod" | head -n1)
  [ -n "$have" ] || die "go.1.38.mod requires no k8s.io/kubernetes v1.38.*"
  [ "$have" = "$K138" ] && return 0
  log "re-pinning go.1.38.mod from $have to $K138 (then go mod tidy -e; commit go.1.38.mod and go.1.38.sum)"
  sed -i -e "s/ v${have//./\\.}\$/ v$K138/" -e "s/ v0\.${have#1.}\$/ v0.${K138#1.}/" \
    -e "s/ v${have//./\\.} / v$K138 /" -e "s/ v0\.${have#1.} / v0.${K138#1.} /" "$HERE/go.1.38.mod"
  # -e: test-only imports (k8s.io/ktesting) may be refused by the proxy; the build then says
  # whether anything it needs is missing.
  (cd "$HERE" && env -u GOFLAGS GOTOOLCHAIN=$GO138 GOWORK=off GOTELEMETRY=off \
     "$GO" mod tidy -e -modfile=go.1.38.mod >&2) || die "go mod tidy -modfile=go.1.38.mod failed"
}

# ---- warm path: nothing but hashing --------------------------------------------------
for f in main.go policy.go "$MODFILE" "$SUMFILE"; do
  [ -f "$HERE/$f" ] || die "missing $HERE/$f"
done
if [ "$RELEASE" = 1.38 ]; then
  grep -q "^[[:space:]]*k8s\.io/kubernetes v${K138//./\\.}\$" "$HERE/go.1.38.mod" || {
    [ -x "$GO" ] || die "no Go toolchain at $GO (set KQ_ORACLE_GO)"
    export GOMODCACHE=${GOMODCACHE:-/var/cache/kubectl-quota-go/mod} GOCACHE=${GOCACHE:-/var/cache/kubectl-quota-go/build}
    repin_138
  }
fi
if [ "$RELEASE" = 1.37 ]; then
  # The 1.37 key is the one this script used before --release existed.
  KEY=$( { for f in "$HERE"/*.go; do printf '%s\n' "${f##*/}"; cat "$f"; done; cat "$HERE/go.mod" "$HERE/go.sum"; printf '%s\n' "${BUILD_FLAGS[@]}" "$GO_WANT" "CGO_ENABLED=0" "recipe 2"; } | sha256sum | cut -c1-16)
else
  KEY=$( { for f in "$HERE"/*.go "${EXTRA[@]}"; do printf '%s\n' "${f#"$HERE"/}"; cat "$f"; done; cat "$HERE/$MODFILE" "$HERE/$SUMFILE"; printf '%s\n' "${BUILD_FLAGS[@]}" "$TOOLCHAIN" "CGO_ENABLED=0" "recipe 2"; } | sha256sum | cut -c1-16)
fi
BIN=$CACHE/bin/$PREFIX$KEY

run_smoke() {
  local got
  got=$(mktemp)
  "$BIN" <"$HERE/smoke.jsonl" >"$got" || { rm -f "$got"; die "smoke: the oracle exited non-zero"; }
  if diff -u "$HERE/$EXPECTED" "$got" >&2; then
    log "smoke: $(wc -l <"$got") answers match $EXPECTED"
    rm -f "$got"
  else
    rm -f "$got"
    die "smoke: answers differ from $EXPECTED (diff above: - expected, + got)"
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
if [ "$TOOLCHAIN" != local ]; then
  # 1.38's modules need a newer Go: the go command fetches GO138 through the module proxy
  # (into GOMODCACHE, checked against the checksum database) and runs it.
  have=$(env -u GOFLAGS GOTOOLCHAIN=$TOOLCHAIN "$GO" env GOVERSION) || die "GOTOOLCHAIN=$TOOLCHAIN $GO env GOVERSION failed (is $TOOLCHAIN served?)"
  [ "$have" = "$TOOLCHAIN" ] || die "GOTOOLCHAIN=$TOOLCHAIN runs $have"
fi

tmp=$BIN.tmp.$$
log "building $BIN with $have (a cold module and build cache takes minutes on 2 cores)"
start=$SECONDS
# Modules come from the proxy (GOPROXY, Go's default unless set) and are checked against
# go.sum (go.1.38.sum); GOTOOLCHAIN keeps the toolchain named above (local for 1.37);
# GOWORK=off ignores any go.work.
if ! (cd "$HERE" && env -u GOFLAGS GOTOOLCHAIN=$TOOLCHAIN GOWORK=off GOTELEMETRY=off CGO_ENABLED=0 \
      nice -n 10 "$GO" build "${BUILD_FLAGS[@]}" -o "$tmp" . >&2); then
  rm -f "$tmp"
  die "go build failed (a 'missing go.sum entry' means $MODFILE or main.go changed: run 'go mod tidy' in $HERE, with -modfile=go.1.38.mod -e and GOTOOLCHAIN=$GO138 for 1.38)"
fi
mv "$tmp" "$BIN"
log "built in $((SECONDS - start))s, $(du -h "$BIN" | cut -f1)"
# Older builds of this release, and what the Debian-package recipe before this one left, are
# not needed (the other release's binary is kept).
if [ "$RELEASE" = 1.37 ]; then
  find "$CACHE/bin" -maxdepth 1 -name 'quota-oracle-*' ! -name 'quota-oracle-1.*' ! -name "$PREFIX$KEY" -delete
else
  find "$CACHE/bin" -maxdepth 1 -name "$PREFIX*" ! -name "$PREFIX$KEY" -delete
fi
rm -rf "$CACHE/root" "$CACHE/debs" "$CACHE/apt" "$CACHE/gocache" "$CACHE/gopath"
finish
