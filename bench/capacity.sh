#!/usr/bin/env bash
# capacity.sh - `kubectl-quota capacity` / `uncovered` against a real API server holding
# NS namespaces with two quotas each (one for every pod, one scoped) and NODES nodes, side by
# side with the LISTs they need.
#
# What it measures, on the lab cluster (tests/cluster/lab.sh):
#   1. fills the lab: NS namespaces (default 1,000), 2 quotas in each (2,000), NODES nodes
#      (default 100; made through the API, status set through the status subresource);
#   2. the floor: the LISTs `capacity` needs (nodes, namespaces, resourcequotas, pods,
#      resourceslices, deviceclasses), fetched by one curl process all at once, each whole
#      (no pagination);
#   3. `kubectl-quota capacity -o json`, `capacity` (text), `capacity --by namespace` and
#      `uncovered`, RUNS times each, each run right after a run of the LISTs: wall time and
#      max RSS (/usr/bin/time), median and max, and the median of the per-pair ratios
#      (command / LISTs), which the machine's load moves much less than the times.
# Everything it made is deleted at the end (also on failure or Ctrl-C).
#
# Usage: tests/cluster/lab.sh up      # first: the lab cluster must be running
#        bench/capacity.sh             # builds the release binary, then runs
# Environment:
#   NS         namespaces to create (2 quotas each)                 [1000]
#   NODES      nodes to create                                      [100]
#   RUNS       runs of each command                                 [8]
#   PARALLEL   concurrent create requests                           [16]
#   KQ_LAB_DIR, KQ_LAB_PORT   as for tests/cluster/lab.sh           [/tmp/kubectl-quota-lab, 26443]
# Needs: cargo, curl >= 7.66 (--parallel), awk, /usr/bin/time (Debian package `time`).
set -euo pipefail

NS=${NS:-1000}
NODES=${NODES:-100}
RUNS=${RUNS:-8}
PARALLEL=${PARALLEL:-16}
P=kq-bench-cap-$$
source "$(dirname "${BASH_SOURCE[0]}")/lab-common.sh"
curl -sf --max-time 5 --cacert "$LAB_DIR/ca.crt" "$SERVER/readyz" >/dev/null || die "the lab API server at $SERVER is not ready"

WORK=$(mktemp -d /tmp/kq-capacity-bench.XXXXXX)
chmod 700 "$WORK"

cleanup() {
  { for ((i = 0; i < NS; i++)); do printf '/api/v1/namespaces/%s-%04d\n' "$P" "$i"; done
    for ((i = 0; i < NODES; i++)); do printf '/api/v1/nodes/%s-node-%03d\n' "$P" "$i"; done; } | batch DELETE application/json >/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "building the release binary ..." >&2
(cd "$ROOT" && cargo build --release --quiet)

# --- 1. fill the lab ------------------------------------------------------------------------------
t0=$(now)
for ((i = 0; i < NS; i++)); do
  n=$(printf '%s-%04d' "$P" "$i")
  printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s"}}' "$n" >"$WORK/ns-$i.json"
  printf '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"compute"},"spec":{"hard":{"requests.cpu":"%d","requests.memory":"%dGi","limits.cpu":"%d","pods":"%d"}}}' \
    $((1 + i % 16)) $((1 + i % 64)) $((2 + i % 32)) $((10 + i % 90)) >"$WORK/q1-$i.json"
  printf '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"high"},"spec":{"hard":{"requests.cpu":"2","pods":"5"},"scopeSelector":{"matchExpressions":[{"scopeName":"PriorityClass","operator":"In","values":["high"]}]}}}' >"$WORK/q2-$i.json"
done
made=$(for ((i = 0; i < NS; i++)); do echo "/api/v1/namespaces $WORK/ns-$i.json"; done | batch POST application/json)
((made == NS)) || die "$made of $NS namespaces created"
made=$(for ((i = 0; i < NS; i++)); do
  n=$(printf '%s-%04d' "$P" "$i")
  echo "/api/v1/namespaces/$n/resourcequotas $WORK/q1-$i.json"
  echo "/api/v1/namespaces/$n/resourcequotas $WORK/q2-$i.json"
done | batch POST application/json)
((made == 2 * NS)) || die "$made of $((2 * NS)) quotas created"
for ((i = 0; i < NODES; i++)); do
  n=$(printf '%s-node-%03d' "$P" "$i")
  printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s"},"spec":{%s}}' "$n" "$( ((i % 10 == 9)) && echo '"unschedulable":true')" >"$WORK/node-$i.json"
  printf '{"status":{"capacity":{"cpu":"32","memory":"128Gi","pods":"110"},"allocatable":{"cpu":"31500m","memory":"125Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"bench","lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}' >"$WORK/status-$i.json"
done
made=$(for ((i = 0; i < NODES; i++)); do echo "/api/v1/nodes $WORK/node-$i.json"; done | batch POST application/json)
((made == NODES)) || die "$made of $NODES nodes created"
made=$(for ((i = 0; i < NODES; i++)); do printf '/api/v1/nodes/%s-node-%03d/status %s\n' "$P" "$i" "$WORK/status-$i.json"; done | batch PATCH application/merge-patch+json)
((made == NODES)) || die "$made of $NODES node statuses set"
echo "made $NS namespaces, $((2 * NS)) quotas and $NODES nodes in $(since "$t0" 2) s"

# --- 2. the LISTs capacity needs, all at once, each whole -----------------------------------------
lists() {
  local sep= p
  : >"$WORK/lists.cfg"
  for p in /api/v1/nodes /api/v1/namespaces /api/v1/resourcequotas /api/v1/pods /apis/resource.k8s.io/v1/resourceslices /apis/resource.k8s.io/v1/deviceclasses; do
    printf '%surl = "%s%s"\ncacert = "%s"\nheader = "Authorization: Bearer %s"\noutput = "%s/list%s"\nsilent\n' "$sep" "$SERVER" "$p" "$LAB_DIR/ca.crt" "$TOKEN" "$WORK" "${p//\//_}" >>"$WORK/lists.cfg"
    sep=$'next\n'
  done
  curl -sS --parallel --parallel-max 8 -K "$WORK/lists.cfg" 2>/dev/null || true
}
lists
echo "the LISTs capacity needs: $(cat "$WORK"/list_* | wc -c) bytes"

# --- 3. the views, each run paired with a run of the LISTs (the load changes; the ratio of a pair
#        does much less) ------------------------------------------------------------------------
run_series() {   # run_series LABEL ARGS...
  local label=$1; shift
  : >"$WORK/times"
  : >"$WORK/pairs"
  local r code t0 l
  for ((r = 0; r < RUNS; r++)); do
    t0=$(now); lists; l=$(since "$t0" 2)
    code=0
    /usr/bin/time -f '%e %M' -o "$WORK/time1" "$BIN" "$@" >"$WORK/out" 2>"$WORK/err" || code=$?
    ((code == 0 || code == 3)) || die "$label: kubectl-quota exited $code ($(head -c 500 "$WORK/err"))"
    tail -n 1 "$WORK/time1" >>"$WORK/times"
    echo "$l $(tail -n 1 "$WORK/time1" | cut -d' ' -f1)" >>"$WORK/pairs"
  done
  printf '%-28s wall median %s s, max %s s; max RSS median %s KB | LISTs median %s s | ratio per pair: median %s, max %s\n' "$label" \
    "$(cut -d' ' -f1 "$WORK/times" | median)" "$(cut -d' ' -f1 "$WORK/times" | sort -g | tail -n1)" "$(cut -d' ' -f2 "$WORK/times" | median)" \
    "$(cut -d' ' -f1 "$WORK/pairs" | median)" \
    "$(awk '{ printf "%.2f\n", $2 / $1 }' "$WORK/pairs" | median)" "$(awk '{ printf "%.2f\n", $2 / $1 }' "$WORK/pairs" | sort -g | tail -n1)"
}
echo "load average before measuring: $(cut -d' ' -f1-3 /proc/loadavg)"
run_series "capacity -o json" capacity -o json
grep -m1 '"namespaces"' "$WORK/out"
run_series "capacity (text)" capacity
run_series "capacity --by namespace" capacity --by namespace
run_series "uncovered" uncovered
echo "load average after measuring: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN" capacity | head -n 12
