#!/usr/bin/env bash
# krew/build.sh - builds (or reuses) krew itself and krew-index's manifest validator at the
# release tests/krew/module pins (sigs.k8s.io/krew v0.4.3), for tests/krew_install.rs.
#
# Usage: tests/krew/build.sh        prints the directory holding `krew` and
#                                   `validate-krew-manifest` on stdout; logs go to stderr.
#
# The binaries are cached outside the work tree, keyed by version: $KQ_KREW_CACHE/<version>/
# (built in a .tmp directory, then renamed, under a lock, so concurrent callers build once).
#
# Environment:
#   KQ_KREW_CACHE  binary cache                         [/var/cache/kubectl-quota-krew]
#   GOMODCACHE     Go module cache                      [/var/cache/kubectl-quota-go/mod]
#   GOCACHE        Go build cache                       [/var/cache/kubectl-quota-go/build]
#   KQ_GO          the go command                       [/usr/local/go/bin/go, else go on PATH]
set -euo pipefail
{
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KQ_KREW_CACHE:-/var/cache/kubectl-quota-krew}
export GOMODCACHE=${GOMODCACHE:-/var/cache/kubectl-quota-go/mod}
export GOCACHE=${GOCACHE:-/var/cache/kubectl-quota-go/build}
export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 LC_ALL=C
GO=${KQ_GO:-/usr/local/go/bin/go}
[[ -x $GO ]] || GO=$(command -v go) || { echo "[krew] ERROR: no go command" >&2; exit 1; }

VERSION=$(awk '$1 == "sigs.k8s.io/krew" { print $2; exit } $1 == "require" && $2 == "sigs.k8s.io/krew" { print $3; exit }' "$HERE/module/go.mod")
[[ -n $VERSION ]] || { echo "[krew] ERROR: no sigs.k8s.io/krew in $HERE/module/go.mod" >&2; exit 1; }
OUT=$CACHE/$VERSION
if [[ -x $OUT/krew && -x $OUT/validate-krew-manifest ]]; then
  echo "$OUT"
  exit 0
fi
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock-$VERSION"
flock 9
if [[ ! -x $OUT/krew || ! -x $OUT/validate-krew-manifest ]]; then
  echo "[krew] building krew $VERSION with $("$GO" version)" >&2
  rm -rf "$OUT.tmp"
  mkdir -p "$OUT.tmp"
  start=$(date +%s)
  (cd "$HERE/module" && "$GO" build -trimpath -o "$OUT.tmp/" sigs.k8s.io/krew/cmd/krew sigs.k8s.io/krew/cmd/validate-krew-manifest) >&2
  echo "$VERSION built in $(($(date +%s) - start))s by $("$GO" version)" >"$OUT.tmp/BUILDINFO"
  rm -rf "$OUT"
  mv "$OUT.tmp" "$OUT"
  echo "[krew] built $OUT" >&2
fi
echo "$OUT"
exit 0
}
