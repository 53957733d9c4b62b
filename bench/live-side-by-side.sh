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
have_kubectl=1
command -v "$KUBECTL" >/dev/null || { have_kubectl=0; echo "note: no $KUBECTL: the kubectl columns are skipped" >&2; }

WORK=$(mktemp -d /tmp/kq-sbs.XXXXXX)
chmod 700 "$WORK"
cleanup() {
  local cfg=$WORK/delete.cfg
  : >"$cfg"
  for ((i = 0; i < NS; i++)); do
    printf 'url = "%s/api/v1/namespaces/%s-%d"\n-X DELETE\n-o /dev/null\n' "$SERVER" "$PREFIX" "$i" >>"$cfg"
  done
  printf 'url = "%s/api/v1/namespaces/%s-pods"\n-X DELETE\n-o /dev/null\n' "$SERVER" "$PREFIX" >>"$cfg"
  curl -s --no-progress-meter --cacert "$LAB_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" --parallel --parallel-max "$PARALLEL" -K "$cfg" || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "building the release binary ..." >&2
(cd "$ROOT" && cargo build --release --quiet)
cp "$TARGET/release/kubectl-quota" "$WORK/kubectl-quota"
BIN=$WORK/kubectl-quota

# post PATH BODY... as one curl --parallel run.
cfg=$WORK/create.cfg
: >"$cfg"
add_post() { printf 'url = "%s%s"\n-X POST\n-H "Content-Type: application/json"\n-d %s\n-o /dev/null\n' "$SERVER" "$1" "'$2'" >>"$cfg"; }
run_posts() {
  curl -s --no-progress-meter --cacert "$LAB_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" --parallel --parallel-max "$PARALLEL" -K "$cfg" || echo "note: some create requests failed (curl exit $?)" >&2
  : >"$cfg"
}
for ((i = 0; i < NS; i++)); do add_post /api/v1/namespaces "{\"metadata\":{\"name\":\"$PREFIX-$i\"}}"; done
add_post /api/v1/namespaces "{\"metadata\":{\"name\":\"$PREFIX-pods\"}}"
run_posts
for ((i = 0; i < NS; i++)); do
  add_post "/api/v1/namespaces/$PREFIX-$i/resourcequotas" '{"metadata":{"name":"compute"},"spec":{"hard":{"requests.cpu":"10","requests.memory":"20Gi","pods":"50"}}}'
  add_post "/api/v1/namespaces/$PREFIX-$i/resourcequotas" '{"metadata":{"name":"objects"},"spec":{"hard":{"configmaps":"100","secrets":"100","services":"10"}}}'
done
add_post "/api/v1/namespaces/$PREFIX-pods/resourcequotas" '{"metadata":{"name":"compute"},"spec":{"hard":{"requests.cpu":"1000","pods":"5000"}}}'
run_posts
quotas=$(curl -s --cacert "$LAB_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" "$SERVER/api/v1/resourcequotas" | grep -o '"uid":' | wc -l || true)
echo "quotas in the cluster: $quotas (asked for $NS x 2 + 1; a failed create is reported above)" >&2

# The pod manifest: PODS small pods.
awk -v n="$PODS" -v ns="$PREFIX-pods" 'BEGIN { for (i = 0; i < n; i++) printf "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-%d, namespace: %s}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}\n", i, ns }' >"$WORK/pods.yaml"
# Wait until the quota controller has set status.hard on the pods namespace's quota (the
# server refuses pods against a quota without status).
for ((t = 0; t < 120; t++)); do
  curl -s --cacert "$LAB_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" "$SERVER/api/v1/namespaces/$PREFIX-pods/resourcequotas/compute" | grep -q '"status": {' && break
  sleep 1
done

curl_list="curl -s --cacert $LAB_DIR/ca.crt -H 'Authorization: Bearer $TOKEN' $SERVER/api/v1/resourcequotas -o /dev/null"
hf() { hyperfine -N -i --style none --warmup 1 --runs "$RUNS" --export-json "$1" "${@:2}" >/dev/null 2>&1 || hyperfine -i --style none --warmup 1 --runs "$RUNS" --export-json "$1" "${@:2}" >/dev/null; }
median_of() { awk -v i="$2" 'BEGIN { RS = "\"median\":" } NR == i + 2 { split($0, a, ","); print a[1] }' "$1"; }
rss() { /usr/bin/time -f '%M' -o "$WORK/rss" "$@" >/dev/null 2>&1 || true; tail -n1 "$WORK/rss"; }

cmds=("$BIN describe -A" "$curl_list")
names=("kubectl-quota describe -A" "raw LIST (curl)")
if ((have_kubectl)); then cmds+=("$KUBECTL describe quota -A"); names+=("kubectl describe quota -A"); fi
hf "$WORK/describe.json" "${cmds[@]}"
echo
echo "## describe -A, $((NS * 2)) quotas in $NS namespaces ($RUNS runs each, same run)"
ours=$(median_of "$WORK/describe.json" 0)
for i in "${!cmds[@]}"; do
  m=$(median_of "$WORK/describe.json" "$i")
  awk -v n="${names[$i]}" -v m="$m" -v o="$ours" 'BEGIN { printf "%-28s median %.3f s  (ours / this = %.2f)\n", n, m, o / m }'
done
echo "max RSS: kubectl-quota describe -A $(rss "$BIN" describe -A) KB"
((have_kubectl)) && echo "max RSS: kubectl describe quota -A $(rss "$KUBECTL" describe quota -A) KB"

cmds=("$BIN check -f $WORK/pods.yaml -q")
names=("kubectl-quota check (live)")
if ((have_kubectl)); then cmds+=("$KUBECTL create --dry-run=server -f $WORK/pods.yaml -o name"); names+=("kubectl create --dry-run=server"); fi
hf "$WORK/check.json" "${cmds[@]}"
echo
echo "## $PODS pods: live check vs the server's dry run ($RUNS runs each, same run)"
ours=$(median_of "$WORK/check.json" 0)
for i in "${!cmds[@]}"; do
  m=$(median_of "$WORK/check.json" "$i")
  awk -v n="${names[$i]}" -v m="$m" -v o="$ours" 'BEGIN { printf "%-32s median %.3f s  (ours / this = %.2f)\n", n, m, o / m }'
done
echo "max RSS: kubectl-quota check $(rss "$BIN" check -f "$WORK/pods.yaml" -q) KB"
