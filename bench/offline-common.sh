# offline-common.sh - what the offline benchmarks share (sourced, not run): the binary, a
# scratch directory they work in (removed at exit), and a timed run.
#   $1 of the script: the binary   [$CARGO_TARGET_DIR/release/kubectl-quota]
# Sets ROOT, BIN, W (the current directory from here on); defines `timed`. Needs /usr/bin/time.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${1:-${CARGO_TARGET_DIR:-$ROOT/target}/release/kubectl-quota}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"

# timed CMD...: runs CMD (stdin from $IN when set, stdout dropped, stderr in err.txt) under
# /usr/bin/time -v; sets `code` (its exit status), `wall` (seconds) and `rss` (peak MB).
timed() {
    /usr/bin/time -v -o time.txt "$@" <"${IN:-/dev/null}" >/dev/null 2>err.txt && code=0 || code=$?
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s}' time.txt)
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' time.txt)
}
