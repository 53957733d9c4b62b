#!/usr/bin/env bash
# describe-live.sh - `kubectl-quota describe` against a real API server holding N quotas.
#
# What it measures, on the lab cluster (tests/cluster/lab.sh):
#   1. creating N ResourceQuotas (default 2,000) in a fresh namespace, straight to the API server
#      (one curl process, PARALLEL transfers at a time), and how long the quota controller takes
#      to sync all of them (status.hard set);
#   2. `kubectl-quota describe -n NS -o json` and `kubectl-quota describe -A` (text), RUNS times
#      each in a row: wall time and max RSS (/usr/bin/time -f '%e s %M KB'), median and max;
#      with the number of quotas each run printed (checked against N);
#   3. that the API server is still healthy afterwards (/readyz), and its RSS before and after.
# The namespace is deleted at the end (also on failure or Ctrl-C).
#
# Usage: tests/cluster/lab.sh up        # first: the lab cluster must be running
#        bench/describe-live.sh          # builds the release binary, then runs
# Environment:
#   N          quotas to create                                  [2000]
#   RUNS       runs of each describe command                     [8]
#   PARALLEL   concurrent create requests                        [16]
#   KQ_LAB_DIR, KQ_LAB_PORT   as for tests/cluster/lab.sh        [/tmp/kubectl-quota-lab, 26443]
# Needs: cargo, curl >= 7.66 (--parallel), awk, /usr/bin/time (Debian package `time`).
set -euo pipefail

N=${N:-2000}
RUNS=${RUNS:-8}
PARALLEL=${PARALLEL:-16}
NS=kq-bench-describe-$$
source "$(dirname "${BASH_SOURCE[0]}")/lab-common.sh"

# api METHOD PATH [BODY]: prints the body; fails on HTTP errors.
api() {
  local args=(-sSf --cacert "$LAB_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" -X "$1" --max-time 60)
  [[ -n ${3:-} ]] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
  curl "${args[@]}" "$SERVER$2"
}
readyz() { curl -sf --max-time 5 --cacert "$LAB_DIR/ca.crt" "$SERVER/readyz" >/dev/null; }
apiserver_rss() {
  local pid; pid=$(cat "$LAB_DIR/kube-apiserver.pid" 2>/dev/null) || { echo "?"; return; }
  awk '/^VmRSS/ { print $2 " KB" }' "/proc/$pid/status" 2>/dev/null || echo "?"
}

readyz || die "the lab API server at $SERVER is not ready: run tests/cluster/lab.sh up first"

WORK=$(mktemp -d /tmp/kq-describe-bench.XXXXXX)
chmod 700 "$WORK"
cleanup() {
  api DELETE "/api/v1/namespaces/$NS" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "building the release binary ..." >&2
(cd "$ROOT" && cargo build --release --quiet)

rss_before=$(apiserver_rss)
api POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$NS\"}}" >/dev/null

# --- 1. N quotas, varied: compute, object counts, scoped, PriorityClass selectors ---------------
awk -v n="$N" -v dir="$WORK" 'BEGIN {
  for (i = 0; i < n; i++) {
    name = sprintf("q-%05d", i)
    k = i % 6
    if (k == 0)      spec = "\"hard\":{\"requests.cpu\":\"" (1 + i % 64) "\",\"requests.memory\":\"" (1 + i % 32) "Gi\",\"limits.cpu\":\"" (2 + i % 64) "\",\"limits.memory\":\"" (2 + i % 32) "Gi\",\"pods\":\"" (10 + i % 90) "\"}"
    else if (k == 1) spec = "\"hard\":{\"count/deployments.apps\":\"" (1 + i % 20) "\",\"services\":\"5\",\"configmaps\":\"50\",\"secrets\":\"50\"}"
    else if (k == 2) spec = "\"hard\":{\"pods\":\"20\",\"requests.cpu\":\"4\"},\"scopes\":[\"NotTerminating\",\"NotBestEffort\"]"
    else if (k == 3) spec = "\"hard\":{\"pods\":\"5\",\"requests.cpu\":\"2\",\"limits.memory\":\"4Gi\"},\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":\"PriorityClass\",\"operator\":\"In\",\"values\":[\"high\",\"critical\"]}]}"
    else if (k == 4) spec = "\"hard\":{\"requests.storage\":\"" (1 + i % 10) "Ti\",\"persistentvolumeclaims\":\"20\",\"gold.storageclass.storage.k8s.io/requests.storage\":\"500Gi\"}"
    else             spec = "\"hard\":{\"pods\":\"3\"},\"scopes\":[\"BestEffort\"]"
    printf "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"%s\"},\"spec\":{%s}}\n", name, spec > (dir "/" name ".json")
    close(dir "/" name ".json")
    print name > (dir "/pending")
  }
}'
# create_pending: one curl process POSTs every quota named in $WORK/pending, PARALLEL at a time,
# and leaves in $WORK/pending those that failed (to be retried); 409 AlreadyExists counts as
# created.
create_pending() {
  local name sep=
  : >"$WORK/curl.cfg"
  while read -r name; do
    # `next` separates transfers; a trailing one would be an empty transfer, an error that
    # aborts the whole parallel batch.
    printf '%surl = "%s/api/v1/namespaces/%s/resourcequotas?fieldManager=%s"\ncacert = "%s"\nheader = "Authorization: Bearer %s"\nheader = "Content-Type: application/json"\ndata-binary = "@%s/%s.json"\noutput = "/dev/null"\nsilent\nshow-error\nwrite-out = "%%{http_code} %s\\n"\n' \
      "$sep" "$SERVER" "$NS" "$name" "$LAB_DIR/ca.crt" "$TOKEN" "$WORK" "$name" "$name" >>"$WORK/curl.cfg"
    sep=$'next\n'
  done <"$WORK/pending"
  curl -sS --parallel --parallel-max "$PARALLEL" -K "$WORK/curl.cfg" 2>"$WORK/curl.err" >"$WORK/codes" || true
  awk '$1 == 201 || $1 == 409 { print $2 }' "$WORK/codes" | sort >"$WORK/done"
  sort "$WORK/pending" | comm -23 - "$WORK/done" >"$WORK/still"
  mv "$WORK/still" "$WORK/pending"
}
t0=$(now)
for attempt in 1 2 3; do
  create_pending
  [[ -s $WORK/pending ]] || break
  echo "attempt $attempt: $(wc -l <"$WORK/pending") creations failed ($(sort -u "$WORK/curl.err" | head -n 3 | tr '\n' ' ')); retrying them" >&2
done
create_s=$(since "$t0")
[[ ! -s $WORK/pending ]] || die "$(wc -l <"$WORK/pending") of $N quotas could not be created"
echo "created $N quotas in namespace $NS in ${create_s} s ($PARALLEL at a time)"

# The quota controller sets status.hard on each; until then describe flags them "not synced".
t0=$(now)
while :; do
  # (the API server pretty-prints for curl: squeeze the blanks out first)
  synced=$(api GET "/api/v1/namespaces/$NS/resourcequotas" | tr -d ' \n' | { grep -o '"status":{"hard"' || true; } | wc -l)
  ((synced >= N)) && break
  awk -v s="$(since "$t0")" 'BEGIN { exit !(s > 300) }' && die "only $synced of $N quotas synced after 300 s"
  sleep 1
done
echo "quota controller synced all $N in $(since "$t0") s"

# --- 2. describe, RUNS times each ---------------------------------------------------------------
run_series() {   # run_series LABEL ARGS... : RUNS timed runs; prints median and max
  local label=$1; shift
  : >"$WORK/times"
  local r count
  for ((r = 0; r < RUNS; r++)); do
    /usr/bin/time -f '%e %M' -o "$WORK/time1" "$BIN" --context lab "$@" >"$WORK/out" ||
      die "$label: kubectl-quota exited $? ($(head -c 500 "$WORK/out"))"
    tail -n 1 "$WORK/time1" >>"$WORK/times"
  done
  case $label in
    *json*) count=$(grep -c '^    "name": ' "$WORK/out" || true) ;;
    *) count=$(grep -c '^Name: ' "$WORK/out" || true) ;;
  esac
  printf '%-34s wall median %s s, max %s s; max RSS median %s KB; %s quotas shown, output %s\n' "$label" \
    "$(cut -d' ' -f1 "$WORK/times" | median)" "$(cut -d' ' -f1 "$WORK/times" | sort -g | tail -n1)" \
    "$(cut -d' ' -f2 "$WORK/times" | median)" "$count" "$(du -h "$WORK/out" | cut -f1)"
  echo "  runs (s KB): $(tr '\n' ';' <"$WORK/times" | sed 's/;$//; s/;/; /g')"
  [[ $label == *-A* ]] || ((count == N)) || die "$label showed $count quotas, expected $N"
  ((count >= N)) || die "$label showed $count quotas, expected at least $N"
}
run_series "describe -n NS -o json ($RUNS runs)" describe -n "$NS" -o json
run_series "describe -A ($RUNS runs)" describe -A

# --- 3. the API server afterwards --------------------------------------------------------------
if readyz; then health=ok; else health=FAILED; fi
echo "apiserver /readyz after: $health; kube-apiserver RSS before $rss_before, after $(apiserver_rss)"
[[ $health == ok ]] || exit 1
