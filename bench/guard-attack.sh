#!/usr/bin/env bash
# guard-attack.sh - normal reviews' latency while the guard is under connection attacks
# (issue 50, item 1), on a lab cluster (tests/cluster/lab.sh).
#
# For each case of CASES, a fresh `kubectl-quota guard serve` (release build) on loopback,
# pinned to GUARD_CPUS (taskset, as a pod with `limits: cpu` would be), its caches listed from
# the lab; beside it, on ATTACK_CPUS, bench/guard_attack.rs runs the attack:
#   none       no attack: the baseline of the same run
#   idle       IDLE_N (1,500) TLS connections that never send a request
#   slowloris  SLOW_N (1,000) TLS connections sending a request head at 1 byte a second
#   tcp        TCP_N (1,000) connections that open TCP and never start TLS
# A connection the guard closes is opened again 1 s later: the attacker keeps its count up.
# WARMUP_ seconds after the attack starts (its connections are open by then), a probe sends
# RATE (50) normal reviews a second for SECONDS_ (30) seconds, each on a fresh connection (TCP,
# TLS handshake, POST, answer) as the API server does when it has no idle connection, open
# loop; it prints their latency percentiles. A normal review is a 10-replica Deployment in a
# namespace with a quota, so every one is decided. Target: p99 under 5 ms in every case.
# Then the attack's own count (connections opened, closed by the guard), and the guard's
# VmHWM and the connection counters of its /metrics.
#
# Usage: tests/cluster/lab.sh up      # first: the lab cluster must be running
#        bench/guard-attack.sh
# Environment:
#   CASES                  [none idle slowloris tcp]
#   IDLE_N, SLOW_N, TCP_N  [1500, 1000, 1000]
#   RATE, SECONDS_, WARMUP_  [50, 30, 5]
#   GUARD_CPUS, ATTACK_CPUS, PROBE_CPUS  taskset CPU lists [0, 1, GUARD_CPUS]: the probe shares
#                          the guard's CPU, not the attacker's, whose own TLS handshakes when
#                          1,000 connections come back at once would stall it (on a machine of
#                          two cores the three cannot each have one)
#   KQ_LAB_DIR, KQ_LAB_PORT  as for tests/cluster/lab.sh  [/tmp/kubectl-quota-lab, 26443]
#   KQ_NO_BUILD=1          use the release binaries already built
#   GUARD_BIN              the kubectl-quota binary to run as the guard (another build, to
#                          compare)                       [$CARGO_TARGET_DIR/release/kubectl-quota]
# Needs: cargo, curl, taskset (util-linux), awk, /usr/bin/time; a file-descriptor limit
# (ulimit -n) above the largest N plus 100, for the attacker.
set -euo pipefail

CASES=${CASES:-none idle slowloris tcp}
IDLE_N=${IDLE_N:-1500}
SLOW_N=${SLOW_N:-1000}
TCP_N=${TCP_N:-1000}
RATE=${RATE:-50}
SECS=${SECONDS_:-30}
WARMUP=${WARMUP_:-5}
GUARD_CPUS=${GUARD_CPUS:-0}
ATTACK_CPUS=${ATTACK_CPUS:-1}
PROBE_CPUS=${PROBE_CPUS:-$GUARD_CPUS}
source "$(dirname "${BASH_SOURCE[0]}")/lab-common.sh"
BIN=${GUARD_BIN:-$BIN}
curl -sf --max-time 5 --cacert "$LAB_DIR/ca.crt" "$SERVER/readyz" >/dev/null || die "the lab API server at $SERVER is not ready"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
(($(ulimit -n) > IDLE_N + 100)) || die "ulimit -n is $(ulimit -n): the attacker needs more than $((IDLE_N + 100))"

WORK=$(mktemp -d /tmp/kq-guard-attack.XXXXXX)
GUARD_PID= ATTACK_PID=
NS=kq-bench-attack
api() { curl -s -o /dev/null --cacert "$LAB_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
stop() {
  [[ -n $ATTACK_PID ]] && kill "$ATTACK_PID" 2>/dev/null && wait "$ATTACK_PID" 2>/dev/null || true
  [[ -n $GUARD_PID ]] && kill "$GUARD_PID" 2>/dev/null && wait "$GUARD_PID" 2>/dev/null || true
  GUARD_PID= ATTACK_PID=
}
cleanup() {
  stop
  api -X DELETE "$SERVER/api/v1/namespaces/$NS" || true
  rm -rf "$WORK"
}
trap cleanup EXIT

if [[ -z ${KQ_NO_BUILD:-} ]]; then
  echo "building the release binaries ..." >&2
  (cd "$ROOT" && cargo build --release --quiet --bin kubectl-quota --example guard_attack)
fi
ATTACK=$TARGET/release/examples/guard_attack

api --data-binary "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$NS\"}}" "$SERVER/api/v1/namespaces"
api --data-binary '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"compute"},"spec":{"hard":{"requests.cpu":"8","requests.memory":"16Gi","pods":"50"}}}' \
  "$SERVER/api/v1/namespaces/$NS/resourcequotas"
deploy="{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"$NS\"},\"spec\":{\"replicas\":10,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"web:1\",\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}}}"
printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"bench","kind":{"group":"apps","version":"v1","kind":"Deployment"},"resource":{"group":"apps","version":"v1","resource":"deployments"},"name":"web","namespace":"%s","operation":"CREATE","userInfo":{"username":"bench"},"object":%s,"dryRun":false}}' \
  "$NS" "$deploy" >"$WORK/review.json"
"$BIN" guard certs --host 127.0.0.1 --dir "$WORK/certs" >/dev/null

start_guard() {
  PORT=$((20000 + RANDOM % 10000))
  taskset -c "$GUARD_CPUS" "$BIN" guard serve --listen "127.0.0.1:$PORT" --tls-cert-file "$WORK/certs/tls.crt" \
    --tls-private-key-file "$WORK/certs/tls.key" 2>"$WORK/guard.log" &
  GUARD_PID=$!
  until curl -sf --max-time 2 --cacert "$WORK/certs/ca.crt" "https://127.0.0.1:$PORT/readyz" >/dev/null; do
    kill -0 "$GUARD_PID" 2>/dev/null || die "the guard ended: $(cat "$WORK/guard.log")"
    sleep 0.2
  done
}
metrics() {
  curl -s --max-time 5 --cacert "$WORK/certs/ca.crt" "https://127.0.0.1:$PORT/metrics" |
    awk '/^kubectl_quota_guard_connections/ { sub(/^kubectl_quota_guard_/, ""); printf "%s %s, ", $1, $2 }'
}

echo "guard on CPU $GUARD_CPUS, attacker on CPU $ATTACK_CPUS, probe on CPU $PROBE_CPUS; $RATE reviews/s for $SECS s on fresh connections, from $WARMUP s into each attack (load average $(cut -d' ' -f1-3 /proc/loadavg))"
for c in $CASES; do
  start_guard
  case $c in
    none) n=0 ;;
    idle) n=$IDLE_N ;;
    slowloris) n=$SLOW_N ;;
    tcp) n=$TCP_N ;;
    *) die "unknown case $c" ;;
  esac
  if ((n > 0)); then
    taskset -c "$ATTACK_CPUS" "$ATTACK" "$c" "127.0.0.1:$PORT" "$WORK/certs/ca.crt" "$n" $((WARMUP + SECS + 2)) >"$WORK/attack.txt" 2>"$WORK/attack.log" &
    ATTACK_PID=$!
    sleep "$WARMUP"
  fi
  probe=$(taskset -c "$PROBE_CPUS" "$ATTACK" probe "127.0.0.1:$PORT" "$WORK/certs/ca.crt" "$RATE" "$SECS" "$WORK/review.json")
  attack=
  if ((n > 0)); then
    wait "$ATTACK_PID" || true
    ATTACK_PID=
    attack=" | attack: $(cat "$WORK/attack.txt")"
  fi
  echo "$c ($n): $probe$attack | guard: $(metrics)VmHWM $(awk '/^VmHWM/ { printf "%d MB", $2 / 1024 }' "/proc/$GUARD_PID/status") (load average $(cut -d' ' -f1 /proc/loadavg))"
  stop
done
