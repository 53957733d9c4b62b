#!/usr/bin/env bash
# live-side-by-side.sh - kubectl-quota next to kubectl and a raw LIST, in the same run, on the
# lab cluster (tests/cluster/lab.sh).
#
# What it measures (hyperfine: whole-process wall medians; /usr/bin/time: max RSS):
#   1. NS namespaces with 2 quotas each (default 1,000 x 2 = 2,000 quotas), then
#      `kubectl describe quota -A`, `kubectl-quota describe -A` and the raw LIST of every quota
#      (`curl .../api/v1/resourcequotas`): describe's cost next to reading the data at all;
#   2. PODS pods (default 1,000) in one namespace with a quota:
#      `kubectl create --dry-run=server -f pods.yaml` (the server admits each pod: one request
#      per pod) next to the live `kubectl-quota check -f pods.yaml -q`.
# Each comparison prints the ratio measured in the same run. The namespaces are deleted at
# the end (also on failure or Ctrl-C).
#
# Usage: tests/cluster/lab.sh up && bench/live-side-by-side.sh
# Environment:
#   NS, PODS, RUNS (hyperfine runs per command, default 10), PARALLEL (create requests at once, 16)
#   DRYRUN_RUNS (runs of kubectl's server dry run, about a minute each; default 3)
#   KEEP=1 (leave the namespaces, their quotas and the work directory, for profiling by hand)
#   SYNC_TIMEOUT (seconds to wait for the quota controller to sync every quota, default 600)
#   KQ_LAB_DIR, KQ_LAB_PORT   as for tests/cluster/lab.sh   [/tmp/kubectl-quota-lab, 26443]
#   KUBECTL                   the kubectl to compare with   [kubectl]; skipped when missing
# Exit statuses of the measured commands are ignored (check exits 1 when a pod would be refused).
# Needs: cargo, curl >= 7.66, hyperfine, awk, /usr/bin/time.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NS=${NS:-1000}
PODS=${PODS:-1000}
RUNS=${RUNS:-10}
PARALLEL=${PARALLEL:-16}
SYNC_TIMEOUT=${SYNC_TIMEOUT:-600}
DRYRUN_RUNS=${DRYRUN_RUNS:-3}
LAB_DIR=${KQ_LAB_DIR:-/tmp/kubectl-quota-lab}
SERVER=https://127.0.0.1:${KQ_LAB_PORT:-26443}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
KUBECTL=${KUBECTL:-kubectl}
PREFIX=kq-sbs-$$
export KUBECONFIG=$LAB_DIR/kubeconfig

die() { echo "error: $*" >&2; exit 1; }
command -v hyperfine >/dev/null || die "hyperfine is missing (apt-get install hyperfine)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time)"
[[ -f $LAB_DIR/admin.token ]] || die "no lab cluster in $LAB_DIR: run tests/cluster/lab.sh up first"
TOKEN=$(<"$LAB_DIR/admin.token")
# Per transfer in a curl config: `next` starts a transfer with none of the earlier options.
auth=$(printf 'cacert = "%s"\nheader = "Authorization: Bearer %s"\n' "$LAB_DIR/ca.crt" "$TOKEN")$'\n'
have_kubectl=1
command -v "$KUBECTL" >/dev/null || { have_kubectl=0; echo "note: no $KUBECTL: the kubectl columns are skipped" >&2; }

WORK=$(mktemp -d /tmp/kq-sbs.XXXXXX)
chmod 700 "$WORK"
cleanup() {
  if [[ -n ${KEEP:-} ]]; then
    echo "KEEP is set: namespaces $PREFIX-* are left in the cluster; $WORK/pods.yaml is kept" >&2
    return
  fi
  local cfg=$WORK/delete.cfg
  : >"$cfg"
  for ((i = 0; i < NS; i++)); do
    printf 'url = "%s/api/v1/namespaces/%s-%d"\n%srequest = "DELETE"\noutput = "/dev/null"\nnext\n' "$SERVER" "$PREFIX" "$i" "$auth" >>"$cfg"
  done
  printf 'url = "%s/api/v1/namespaces/%s-pods"\n%srequest = "DELETE"\noutput = "/dev/null"\n' "$SERVER" "$PREFIX" "$auth" >>"$cfg"
  curl -s --no-progress-meter --parallel --parallel-max "$PARALLEL" -K "$cfg" || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "building the release binary ..." >&2
(cd "$ROOT" && cargo build --release --quiet)
cp "$TARGET/release/kubectl-quota" "$WORK/kubectl-quota"
BIN=$WORK/kubectl-quota

# Creating objects: one curl process, PARALLEL transfers at a time. A curl config file needs
# `next` between transfers (without it -d/-H/-X are global: every -d of the file is joined with
# `&` into one body sent by every transfer) and takes no single quotes (they are sent as part
# of the body); either mistake makes the server answer 400 or reset the connection, and `-s`
# hides it. So each transfer names its body file, prints its HTTP status, and what failed is
# retried; 409 (already exists) counts as created.
: >"$WORK/posts"
posts=0
add_post() {   # add_post PATH BODY: queue a POST of BODY to PATH
  posts=$((posts + 1))
  printf '%s\n' "$2" >"$WORK/body-$posts.json"
  printf '%s %s\n' "$posts" "$1" >>"$WORK/posts"
}
run_posts() {   # run_posts WHAT: send what add_post queued, retry failures twice, then fail
  local what=$1 attempt id path sep
  for attempt in 1 2 3; do
    sep=
    : >"$WORK/curl.cfg"
    while read -r id path; do
      printf '%surl = "%s%s"\n%srequest = "POST"\nheader = "Content-Type: application/json"\ndata-binary = "@%s/body-%s.json"\noutput = "/dev/null"\nwrite-out = "%%{http_code} %s\\n"\n' \
        "$sep" "$SERVER" "$path" "$auth" "$WORK" "$id" "$id" >>"$WORK/curl.cfg"
      sep=$'next\n'
    done <"$WORK/posts"
    curl -sS --parallel --parallel-max "$PARALLEL" -K "$WORK/curl.cfg" >"$WORK/codes" 2>"$WORK/curl.err" || true
    awk '$1 == 201 || $1 == 409 { ok[$2] = 1 } FILENAME == ARGV[2] && !($1 in ok)' "$WORK/codes" "$WORK/posts" >"$WORK/failed"
    mv "$WORK/failed" "$WORK/posts"
    [[ -s $WORK/posts ]] || { echo "$what: created" >&2; return 0; }
    echo "$what: attempt $attempt: $(wc -l <"$WORK/posts") failed (HTTP $(awk '$1 != 201 && $1 != 409 { print $1 }' "$WORK/codes" | sort | uniq -c | tr -s ' \n' ' ')$(head -c 200 "$WORK/curl.err" | tr '\n' ' '))" >&2
  done
  die "$what: $(wc -l <"$WORK/posts") creations still failing"
}
api_get() { curl -sS --cacert "$LAB_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" "$SERVER$1"; }

for ((i = 0; i < NS; i++)); do add_post /api/v1/namespaces "{\"metadata\":{\"name\":\"$PREFIX-$i\"}}"; done
add_post /api/v1/namespaces "{\"metadata\":{\"name\":\"$PREFIX-pods\"}}"
run_posts "$((NS + 1)) namespaces"
for ((i = 0; i < NS; i++)); do
  add_post "/api/v1/namespaces/$PREFIX-$i/resourcequotas" '{"metadata":{"name":"compute"},"spec":{"hard":{"requests.cpu":"10","requests.memory":"20Gi","pods":"50"}}}'
  add_post "/api/v1/namespaces/$PREFIX-$i/resourcequotas" '{"metadata":{"name":"objects"},"spec":{"hard":{"configmaps":"100","secrets":"100","services":"10"}}}'
done
add_post "/api/v1/namespaces/$PREFIX-pods/resourcequotas" '{"metadata":{"name":"compute"},"spec":{"hard":{"requests.cpu":"1000","pods":"5000"}}}'
run_posts "$((NS * 2 + 1)) quotas"
rm -f "$WORK"/body-*.json

# Wait until the quota controller has set status.hard on every quota of ours: describe shows
# an unsynced quota differently, and the server refuses pods against a quota without status.
want=$((NS * 2 + 1))
t0=$SECONDS
while :; do
  # (the API server pretty-prints for curl: squeeze the blanks out first)
  api_get /api/v1/resourcequotas | tr -d ' \n' >"$WORK/list.json"
  quotas=$(grep -o '"uid":' "$WORK/list.json" | wc -l || true)
  synced=$(grep -o '"status":{"hard"' "$WORK/list.json" | wc -l || true)
  ((quotas >= want && synced == quotas)) && break
  ((SECONDS - t0 < SYNC_TIMEOUT)) || die "only $synced of $quotas quotas synced after $SYNC_TIMEOUT s"
  sleep 2
done
rm -f "$WORK/list.json"
echo "quotas in the cluster: $quotas ($want of this run), all synced by the quota controller after $((SECONDS - t0)) s" >&2
# Pods need the namespace's default service account (ServiceAccount admission).
for ((t = 0; t < 120; t++)); do
  api_get "/api/v1/namespaces/$PREFIX-pods/serviceaccounts/default" | grep -q '"secrets"' && break
  sleep 1
done

# The pod manifest: PODS small pods.
awk -v n="$PODS" -v ns="$PREFIX-pods" 'BEGIN { for (i = 0; i < n; i++) printf "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-%d, namespace: %s}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}\n", i, ns }' >"$WORK/pods.yaml"
curl_list="curl -s --cacert $LAB_DIR/ca.crt -H 'Authorization: Bearer $TOKEN' $SERVER/api/v1/resourcequotas -o /dev/null"
# hf JSON RUNS WARMUP CMD...: one hyperfine run of the commands (interleaved per command).
hf() {
  local out=$1 runs=$2 warm=$3; shift 3
  hyperfine -N -i --style none --warmup "$warm" --runs "$runs" --export-json "$out" "$@" >/dev/null 2>&1 ||
    hyperfine -i --style none --warmup "$warm" --runs "$runs" --export-json "$out" "$@" >/dev/null
}
field_of() { awk -v i="$2" -v f="\"$3\":" 'BEGIN { RS = "\"command\":" } NR == i + 2 { n = index($0, f); s = substr($0, n + length(f)); sub(/^ */, "", s); split(s, a, /[,\n]/); print a[1] }' "$1"; }
rss() { /usr/bin/time -f '%M' -o "$WORK/rss" "$@" >/dev/null 2>&1 || true; tail -n1 "$WORK/rss"; }
report() {   # report JSON OURS_INDEX NAME...: median, user CPU, ratio to ours
  local json=$1 ours_i=$2 i=0 name; shift 2
  local ours; ours=$(field_of "$json" "$ours_i" median)
  for name in "$@"; do
    awk -v n="$name" -v m="$(field_of "$json" "$i" median)" -v u="$(field_of "$json" "$i" user)" -v s="$(field_of "$json" "$i" system)" -v o="$ours" \
      'BEGIN { printf "%-34s median %7.3f s  user %6.3f s  sys %6.3f s  (ours / this = %.2f)\n", n, m, u, s, o / m }'
    i=$((i + 1))
  done
}

echo "load average before measuring: $(cut -d' ' -f1-3 /proc/loadavg)"
shown=$("$BIN" describe -A | grep -c '^Name:' || true)
((shown == quotas)) || die "kubectl-quota describe -A showed $shown quotas, the LIST has $quotas"
cmds=("$BIN describe -A" "$curl_list")
names=("kubectl-quota describe -A" "raw LIST (curl)")
if ((have_kubectl)); then cmds+=("$KUBECTL describe quota -A"); names+=("kubectl describe quota -A"); fi
hf "$WORK/describe.json" "$RUNS" 1 "${cmds[@]}"
echo
echo "## describe -A, $quotas quotas in $((NS + 1)) namespaces ($RUNS runs each, same run)"
report "$WORK/describe.json" 0 "${names[@]}"
echo "max RSS: kubectl-quota describe -A $(rss "$BIN" describe -A) KB, curl $(rss curl -s --cacert "$LAB_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" "$SERVER/api/v1/resourcequotas" -o /dev/null) KB"
((have_kubectl)) && echo "max RSS: kubectl describe quota -A $(rss "$KUBECTL" describe quota -A) KB"

# The server's dry run takes about a minute per run (one request per pod through kubectl's
# client-side rate limiter): DRYRUN_RUNS runs of it, no warm-up, right after ours.
hf "$WORK/check.json" "$RUNS" 1 "$BIN check -f $WORK/pods.yaml -q"
names=("kubectl-quota check (live)")
echo
echo "## $PODS pods: live check vs the server's dry run (same run)"
echo "kubectl-quota check -q exit status: $("$BIN" check -f "$WORK/pods.yaml" -q >/dev/null 2>&1; echo $?) (0: all $PODS admitted)"
if ((have_kubectl)); then
  hf "$WORK/dryrun.json" "$DRYRUN_RUNS" 0 "$KUBECTL create --dry-run=server -f $WORK/pods.yaml -o name"
  ours=$(field_of "$WORK/check.json" 0 median)
  report "$WORK/check.json" 0 "kubectl-quota check -q ($RUNS runs)"
  theirs=$(field_of "$WORK/dryrun.json" 0 median)
  awk -v m="$theirs" -v u="$(field_of "$WORK/dryrun.json" 0 user)" -v s="$(field_of "$WORK/dryrun.json" 0 system)" -v o="$ours" -v n="kubectl create --dry-run=server ($DRYRUN_RUNS)" \
    'BEGIN { printf "%-34s median %7.3f s  user %6.3f s  sys %6.3f s  (ours / this = %.4f)\n", n, m, u, s, o / m }'
else
  report "$WORK/check.json" 0 "kubectl-quota check -q ($RUNS runs)"
fi
echo "max RSS: kubectl-quota check $(rss "$BIN" check -f "$WORK/pods.yaml" -q) KB"
echo "load average after measuring: $(cut -d' ' -f1-3 /proc/loadavg)"
