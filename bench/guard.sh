#!/usr/bin/env bash
# guard.sh - the guard's admission latency and memory, on the lab cluster (tests/cluster/lab.sh).
#
# What it measures:
#   1. fills the lab: NS namespaces (default 10,000) with 2 quotas each, plus one namespace
#      `kq-bench-guard-web` with 20 quotas (scoped and not, on cpu, memory, pods and counts);
#   2. starts `kubectl-quota guard serve` (release build) on loopback, waits until its caches are
#      listed, and records its memory (VmRSS and VmHWM from /proc);
#   3. at the guard: RATE (1,000) AdmissionReviews a second for SECONDS (60) of a 10-replica
#      Deployment in the 20-quota namespace, open loop over keep-alive HTTPS (bench/guard_load.rs);
#      latency percentiles as the client sees them, and the guard's own histogram (/metrics);
#   4. end to end: server-side dry-run creates of the same Deployment through the API server,
#      at each of E2E_RATES a second for SECONDS, first without the guard registered, then with it
#      (`guard install --url`), so the difference is what the guard adds;
#   5. memory again after the load.
# Everything it made is deleted at the end (also on failure or Ctrl-C).
#
# Usage: tests/cluster/lab.sh up      # first: the lab cluster must be running
#        bench/guard.sh
# Environment:
#   NS         namespaces with 2 quotas each                      [10000]
#   RATE       requests a second at the guard                     [1000]
#   E2E_RATES  requests a second through the API server, each     [50 200]
#   SECONDS_   seconds of each load                               [60]
#   PARALLEL   concurrent create requests while filling           [16]
#   ONLY       `memory`: stop after the guard's memory once listed [unset: everything]
#   KEEP       1: leave what was made (and say its prefix), for another run to reuse
#   PREFIX     the prefix of a KEEP run's objects: reuse them instead of filling again
#   KQ_LAB_DIR, KQ_LAB_PORT   as for tests/cluster/lab.sh         [/tmp/kubectl-quota-lab, 26443]
# Needs: cargo, curl >= 7.66 (--parallel), awk, /usr/bin/time.
set -euo pipefail

NS=${NS:-10000}
RATE=${RATE:-1000}
E2E_RATES=${E2E_RATES:-50 200}
SECS=${SECONDS_:-60}
PARALLEL=${PARALLEL:-16}
P=${PREFIX:-kq-bench-guard-$$}
source "$(dirname "${BASH_SOURCE[0]}")/lab-common.sh"
curl -sf --max-time 5 --cacert "$LAB_DIR/ca.crt" "$SERVER/readyz" >/dev/null || die "the lab API server at $SERVER is not ready"

WORK=$(mktemp -d /tmp/kq-guard-bench.XXXXXX)
chmod 700 "$WORK"
GUARD_PID=

cleanup() {
  [[ -n $GUARD_PID ]] && kill "$GUARD_PID" 2>/dev/null || true
  "$BIN" guard uninstall >/dev/null 2>&1 || true
  if [[ ${KEEP:-} == 1 ]]; then
    echo "kept: PREFIX=$P" >&2
    rm -rf "$WORK"
    return
  fi
  { for ((i = 0; i < NS; i++)); do printf '/api/v1/namespaces/%s-%05d\n' "$P" "$i"; done
    echo "/api/v1/namespaces/$P-web"; } | batch DELETE application/json >/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "building the release binaries ..." >&2
(cd "$ROOT" && cargo build --release --quiet && cargo build --release --quiet --example guard_load)
LOAD=$TARGET/release/examples/guard_load

# --- 1. fill the lab ------------------------------------------------------------------------------
fill() {
t0=$(now)
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s-web"}}' "$P" >"$WORK/web-ns.json"
for ((i = 0; i < NS; i++)); do
  printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s-%05d"}}' "$P" "$i" >"$WORK/ns-$i.json"
done
made=$({ echo "/api/v1/namespaces $WORK/web-ns.json"; for ((i = 0; i < NS; i++)); do echo "/api/v1/namespaces $WORK/ns-$i.json"; done; } | batch POST application/json)
((made == NS + 1)) || die "$made of $((NS + 1)) namespaces created"
printf '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"compute"},"spec":{"hard":{"requests.cpu":"8","requests.memory":"16Gi","limits.cpu":"16","pods":"50"}}}' >"$WORK/q1.json"
printf '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"high"},"spec":{"hard":{"requests.cpu":"2","pods":"5"},"scopeSelector":{"matchExpressions":[{"scopeName":"PriorityClass","operator":"In","values":["high"]}]}}}' >"$WORK/q2.json"
# The 20 quotas the Deployment is checked against: every kind of match and miss.
for ((q = 0; q < 20; q++)); do
  case $((q % 5)) in
    0) spec='{"hard":{"requests.cpu":"'$((4 + q))'","requests.memory":"'$((8 + q))'Gi"}}' ;;
    1) spec='{"hard":{"limits.cpu":"'$((8 + q))'","limits.memory":"'$((16 + q))'Gi"}}' ;;
    2) spec='{"hard":{"pods":"'$((20 + q))'","count/deployments.apps":"'$((5 + q))'"}}' ;;
    3) spec='{"hard":{"pods":"10"},"scopes":["BestEffort"]}' ;;
    4) spec='{"hard":{"requests.cpu":"2"},"scopeSelector":{"matchExpressions":[{"scopeName":"PriorityClass","operator":"In","values":["high"]}]}}' ;;
  esac
  printf '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q%02d"},"spec":%s}' "$q" "$spec" >"$WORK/web-q$q.json"
done
made=$({ for ((q = 0; q < 20; q++)); do echo "/api/v1/namespaces/$P-web/resourcequotas $WORK/web-q$q.json"; done
         for ((i = 0; i < NS; i++)); do
           n=$(printf '%s-%05d' "$P" "$i")
           echo "/api/v1/namespaces/$n/resourcequotas $WORK/q1.json"
           echo "/api/v1/namespaces/$n/resourcequotas $WORK/q2.json"
         done; } | batch POST application/json)
((made == 2 * NS + 20)) || die "$made of $((2 * NS + 20)) quotas created"
echo "made $((NS + 1)) namespaces and $((2 * NS + 20)) quotas in $(since "$t0" 0) s"
# Measured once every quota carries a status, as the quota controller leaves it. The lab's
# controller-manager syncs about 30 a second (its client is rate-limited): the status is set
# here through the status subresource (hard = spec.hard, used = 0), as the controller would.
t0=$(now)
status_patch() {   # status_patch FILE: the status of the quota in FILE
  python3 -c 'import json, sys; h = json.load(open(sys.argv[1]))["spec"]["hard"]; print(json.dumps({"status": {"hard": h, "used": {k: "0" for k in h}}}))' "$1"
}
for f in "$WORK"/q1.json "$WORK"/q2.json "$WORK"/web-q*.json; do status_patch "$f" >"${f%.json}-status.json"; done
made=$({ for ((q = 0; q < 20; q++)); do printf '/api/v1/namespaces/%s-web/resourcequotas/q%02d/status %s\n' "$P" "$q" "$WORK/web-q$q-status.json"; done
         for ((i = 0; i < NS; i++)); do
           n=$(printf '%s-%05d' "$P" "$i")
           echo "/api/v1/namespaces/$n/resourcequotas/compute/status $WORK/q1-status.json"
           echo "/api/v1/namespaces/$n/resourcequotas/high/status $WORK/q2-status.json"
         done; } | batch PATCH application/merge-patch+json)
((made == 2 * NS + 20)) || die "$made of $((2 * NS + 20)) quota statuses set"
echo "set every quota's status in $(since "$t0" 0) s"
}
if [[ -n ${PREFIX:-} ]]; then echo "reusing the objects of an earlier KEEP=1 run: $P-*"; else fill; fi

# --- 2. the guard, listed ----------------------------------------------------------------------------
"$BIN" guard certs --host 127.0.0.1 --dir "$WORK/certs" >/dev/null
PORT=$((20000 + RANDOM % 10000))
"$BIN" guard serve --listen "127.0.0.1:$PORT" --tls-cert-file "$WORK/certs/tls.crt" --tls-private-key-file "$WORK/certs/tls.key" 2>"$WORK/guard.log" &
GUARD_PID=$!
t0=$(now)
until curl -sf --max-time 2 --cacert "$WORK/certs/ca.crt" "https://127.0.0.1:$PORT/readyz" >/dev/null; do
  kill -0 "$GUARD_PID" 2>/dev/null || die "the guard ended: $(cat "$WORK/guard.log")"
  sleep 0.2
done
echo "guard listed every cache in $(since "$t0" 1) s ($(curl -s --cacert "$WORK/certs/ca.crt" "https://127.0.0.1:$PORT/metrics" | awk '/^kubectl_quota_guard_cache_objects\{resource="resourcequotas"\}/ { print $2 }') quotas)"
memory() { awk '/^VmRSS|^VmHWM/ { printf "%s %d MB  ", $1, $2 / 1024 }' "/proc/$GUARD_PID/status"; echo; }
echo "guard memory after listing: $(memory)"
[[ ${ONLY:-} == memory ]] && exit 0

# --- 3. at the guard --------------------------------------------------------------------------------
cat >"$WORK/deploy.json" <<EOF
{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"$P-web"},"spec":{"replicas":10,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"web:1","resources":{"requests":{"cpu":"500m","memory":"1Gi"},"limits":{"cpu":"1","memory":"1Gi"}}}]}}}}
EOF
printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"bench","kind":{"group":"apps","version":"v1","kind":"Deployment"},"resource":{"group":"apps","version":"v1","resource":"deployments"},"name":"web","namespace":"%s-web","operation":"CREATE","userInfo":{"username":"bench"},"object":%s,"dryRun":false}}' "$P" "$(cat "$WORK/deploy.json")" >"$WORK/review.json"
echo "the answer: $(curl -s --cacert "$WORK/certs/ca.crt" -H 'Content-Type: application/json' --data-binary @"$WORK/review.json" "https://127.0.0.1:$PORT/validate")"
echo "at the guard, $RATE/s for $SECS s: $("$LOAD" "https://127.0.0.1:$PORT/validate" "$WORK/review.json" "$WORK/certs/ca.crt" "$RATE" "$SECS") (load average $(cut -d' ' -f1-3 /proc/loadavg))"
curl -s --cacert "$WORK/certs/ca.crt" "https://127.0.0.1:$PORT/metrics" | grep -E '^kubectl_quota_guard_request_duration_seconds_(bucket\{le="0.00(1|25|5)"|bucket\{le="0.005"|count)' | tr '\n' ' '
echo
echo "guard memory after the load: $(memory)"

# --- 4. end to end, through the API server ------------------------------------------------------------
url="$SERVER/apis/apps/v1/namespaces/$P-web/deployments?dryRun=All"
for r in $E2E_RATES; do
  echo "through the API server without the guard, $r/s: $("$LOAD" "$url" "$WORK/deploy.json" "$LAB_DIR/ca.crt" "$r" "$SECS" "$LAB_DIR/admin.token") (load average $(cut -d' ' -f1-3 /proc/loadavg))"
done
"$BIN" guard install --url "https://127.0.0.1:$PORT/validate" --ca-file "$WORK/certs/ca.crt" >/dev/null
until curl -s --cacert "$LAB_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -D - -o /dev/null --data-binary @"$WORK/deploy.json" "$url" | grep -qi '^warning:'; do sleep 0.2; done
echo "with the guard's warning: $(curl -s --cacert "$LAB_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -D - -o /dev/null --data-binary @"$WORK/deploy.json" "$url" | grep -i '^warning:' | head -1 | tr -d '\r')"
for r in $E2E_RATES; do
  echo "through the API server with the guard, $r/s: $("$LOAD" "$url" "$WORK/deploy.json" "$LAB_DIR/ca.crt" "$r" "$SECS" "$LAB_DIR/admin.token") (load average $(cut -d' ' -f1-3 /proc/loadavg))"
done
echo "at the guard, while called by the API server: $(curl -s --cacert "$WORK/certs/ca.crt" "https://127.0.0.1:$PORT/metrics" | grep -E '^kubectl_quota_guard_request_duration_seconds_(bucket\{le="0.00(1|25|5)"|bucket\{le="0.005"|count)' | tr '\n' ' ')"
echo "guard memory at the end: $(memory)"
