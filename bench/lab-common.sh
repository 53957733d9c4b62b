# lab-common.sh - what the benchmarks against a lab cluster share (sourced, not run): where the
# lab and the release binary are, small timing helpers, and the lab's readiness.
#   KQ_LAB_DIR, KQ_LAB_PORT   as for tests/cluster/lab.sh   [/tmp/kubectl-quota-lab, 26443]
# Sets ROOT, LAB_DIR, SERVER, TARGET, BIN, KUBECONFIG and TOKEN; defines die, now, since,
# median and batch (which needs WORK and PARALLEL set by the script). Needs: curl, awk, /usr/bin/time.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB_DIR=${KQ_LAB_DIR:-/tmp/kubectl-quota-lab}
SERVER=https://127.0.0.1:${KQ_LAB_PORT:-26443}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release/kubectl-quota
export KUBECONFIG=$LAB_DIR/kubeconfig

die() { echo "error: $*" >&2; exit 1; }
now() { date +%s.%N; }
# since START [DECIMALS]: seconds since START (from `now`), with DECIMALS (1) decimals.
since() { awk -v a="$1" -v b="$(now)" -v d="${2:-1}" 'BEGIN { printf "%.*f", d, b - a }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time)"
[[ -f $LAB_DIR/admin.token && -f $LAB_DIR/ca.crt && -f $KUBECONFIG ]] ||
  die "no lab cluster in $LAB_DIR: run tests/cluster/lab.sh up first"
TOKEN=$(<"$LAB_DIR/admin.token")

# batch METHOD CONTENT-TYPE < lines of "PATH FILE": one curl process, PARALLEL at a time;
# prints how many answered 2xx or 409 (already there).
batch() {
  local method=$1 ctype=$2 path file sep=
  : >"$WORK/curl.cfg"
  while read -r path file; do
    {
      printf '%surl = "%s%s"\nrequest = "%s"\ncacert = "%s"\n' "$sep" "$SERVER" "$path" "$method" "$LAB_DIR/ca.crt"
      printf 'header = "Authorization: Bearer %s"\nheader = "Content-Type: %s"\n' "$TOKEN" "$ctype"
      [[ -n $file ]] && printf 'data-binary = "@%s"\n' "$file"
      printf 'output = "/dev/null"\nsilent\nwrite-out = "%%{http_code}\\n"\n'
    } >>"$WORK/curl.cfg"
    sep=$'next\n'
  done
  curl -sS --parallel --parallel-max "$PARALLEL" -K "$WORK/curl.cfg" 2>/dev/null | awk '$1 ~ /^2/ || $1 == 409 { n++ } END { print n + 0 }'
}
