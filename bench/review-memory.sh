#!/usr/bin/env bash
# review-memory.sh - the guard's peak memory for the largest reviews the API server sends, and
# the normal reviews' latency while those are decided (issue 40).
#
# The reviews: a CREATE of a Deployment of 3 MiB (about half of it its last-applied-configuration
# annotation, as `kubectl apply` doubles a manifest), and an UPDATE carrying it with a 1.5 MiB
# old object: the API server takes request bodies of up to 3 MiB, so these are the largest.
# The UPDATE comes in four shapes (SHAPES), by what fills the 3 MiB: `annotated` (the above:
# env vars, and the annotation), `env` (env vars alone: 43,000, as server-side apply leaves
# no annotation), `labels` (the template's labels: 105,000) and `containers` (19,000 small
# containers: no workload has that many, but nothing refuses it).
#
#   1. alone: each review read and decided once, as `guard serve` does (bench/review_memory.rs),
#      under /usr/bin/time -v: the decision's own peak, apart from any server;
#   2. the whole path (with a lab, as 3): a fresh `guard serve` (release build) on loopback,
#      its caches listed from the lab, sent one large UPDATE (HTTP body to answer); then another
#      fresh one sent two at once; the VmHWM of the whole process (/proc/PID/status) after
#      each, REPEAT times. The goals (issue 50): under 100 MB for one, 150 MB for two;
#   3. with a lab (skipped when none runs): `guard serve` (release build) on loopback against the
#      lab, its caches listed, given for SECONDS_ seconds LARGE_RATE large UPDATE reviews a second
#      (open loop: they pile up when slower than that) and RATE normal reviews a second of a
#      10-replica Deployment, both in a namespace with a quota so that every review is decided;
#      the guard runs on GUARD_CPUS only (taskset), as a pod with `limits: cpu` would. Prints the
#      normal reviews' latency (the client's) and the guard's VmHWM (its peak RSS) from /proc.
#
# Usage: bench/review-memory.sh                 # part 1
#        tests/cluster/lab.sh up && bench/review-memory.sh   # all three
#        ONLY=whole bench/review-memory.sh      # part 2 alone
# Environment: RATE [200], LARGE_RATE [4], SECONDS_ [30], GUARD_CPUS [0], REPEAT [3], ONLY,
#              SHAPES [annotated env containers labels], GUARD_BIN (the kubectl-quota binary run as
#              the guard in parts 2 and 3, another build to compare) [$CARGO_TARGET_DIR/release/kubectl-quota],
#              KQ_LAB_DIR, KQ_LAB_PORT as for tests/cluster/lab.sh; KQ_NO_BUILD=1: use the
#              release binaries already built.
# Needs: python3, /usr/bin/time (Debian package `time`), taskset (util-linux), curl.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RATE=${RATE:-200}
LARGE_RATE=${LARGE_RATE:-4}
SECS=${SECONDS_:-30}
GUARD_CPUS=${GUARD_CPUS:-0}
REPEAT=${REPEAT:-3}
SHAPES=${SHAPES:-annotated env containers labels}
[ -n "${KQ_NO_BUILD:-}" ] || (cd "$ROOT" && cargo build --release --quiet --bin kubectl-quota --example review_memory --example guard_load)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
W=$(mktemp -d)
GUARD_PID=
cleanup() {
  [[ -n $GUARD_PID ]] && kill "$GUARD_PID" 2>/dev/null || true
  [[ -n ${TOKEN:-} ]] && curl -s -o /dev/null --cacert "$LAB_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" -X DELETE \
    "$SERVER/api/v1/namespaces/kq-bench-large" || true
  rm -rf "$W"
}
trap cleanup EXIT
cd "$W"

PYTHONPATH=$ROOT/bench python3 - <<'PY'
import json
import sized as bench
def deployment(n, shape="annotated", ns="kq-bench-large"):
    # n entries of what makes the object large: env vars (annotated, env), containers, labels.
    container = {"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}
    labels = {"app": "web"}
    if shape in ("annotated", "env"):
        container["env"] = [{"name": "V%d" % i, "value": "x" * 40} for i in range(n)]
    containers = [container]
    if shape == "containers":
        containers = [{"name": "c%d" % i, "image": "registry.example.com/app:1",
                       "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"cpu": "20m", "memory": "32Mi"}}}
                      for i in range(max(n, 1))]
    if shape == "labels":
        labels.update({"label-%d" % i: "value-%d" % i for i in range(n)})
    d = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": ns},
         "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}}}}
    if shape == "annotated":
        d["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(d)}
    d["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]
    return d
def sized(target, shape="annotated"):
    # The most entries whose Deployment's JSON stays within target.
    return bench.sized(target, lambda n: deployment(n, shape), target // 16)
def review(op, obj, old=None):
    r = {"uid": "u", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"}, "operation": op,
         "namespace": "kq-bench-large", "userInfo": {"username": "me"}, "object": obj}
    if old:
        r["oldObject"] = old
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": r})
for shape in ("annotated", "env", "containers", "labels"):
    new, old = sized(3 << 20, shape), sized(3 << 19, shape)
    old["spec"]["replicas"] = 2
    open("update-%s.json" % shape, "w").write(review("UPDATE", new, old))
    if shape == "annotated":
        open("create.json", "w").write(review("CREATE", new))
        open("update.json", "w").write(review("UPDATE", new, old))
small = deployment(0, "plain")
small["spec"]["replicas"] = 10
del small["metadata"]["managedFields"]
open("normal.json", "w").write(review("CREATE", small))
PY

if [[ ${ONLY:-} != whole ]]; then
echo "1. one review decided alone (bench/review_memory.rs)"
echo
echo "| review | body | wall s | max RSS MB |"
echo "|---|---|---|---|"
for r in create $(for s in $SHAPES; do echo "update-$s"; done); do
  /usr/bin/time -v -o time.txt "$TARGET/release/examples/review_memory" "$r.json" >/dev/null
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s}' time.txt)
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' time.txt)
  size=$(awk -v b="$(stat -c %s "$r.json")" 'BEGIN {printf "%.1f MiB", b / 1048576}')
  echo "| $r | $size | $wall | $rss |"
done
fi

LAB_DIR=${KQ_LAB_DIR:-/tmp/kubectl-quota-lab}
SERVER=https://127.0.0.1:${KQ_LAB_PORT:-26443}
if ! curl -sf --max-time 5 --cacert "$LAB_DIR/ca.crt" "$SERVER/readyz" >/dev/null 2>&1; then
  echo
  echo "2. and 3. skipped: no lab API server at $SERVER (tests/cluster/lab.sh up)"
  exit 0
fi
export KUBECONFIG=$LAB_DIR/kubeconfig
TOKEN=$(<"$LAB_DIR/admin.token")
post() { curl -sf -o /dev/null --cacert "$LAB_DIR/ca.crt" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' --data-binary "$2" "$SERVER$1"; }
post /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kq-bench-large"}}' || true
post /api/v1/namespaces/kq-bench-large/resourcequotas '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"compute"},"spec":{"hard":{"requests.cpu":"64","pods":"100"}}}' || true

BIN=${GUARD_BIN:-$TARGET/release/kubectl-quota}
"$BIN" guard certs --host 127.0.0.1 --dir certs >/dev/null
start_guard() {
  PORT=$((20000 + RANDOM % 10000))
  taskset -c "$GUARD_CPUS" "$BIN" guard serve --listen "127.0.0.1:$PORT" --tls-cert-file certs/tls.crt --tls-private-key-file certs/tls.key 2>guard.log &
  GUARD_PID=$!
  until curl -sf --max-time 2 --cacert certs/ca.crt "https://127.0.0.1:$PORT/readyz" >/dev/null; do
    kill -0 "$GUARD_PID" 2>/dev/null || { cat guard.log >&2; exit 1; }
    sleep 0.2
  done
  URL=https://127.0.0.1:$PORT/validate
}
stop_guard() { kill "$GUARD_PID" 2>/dev/null && wait "$GUARD_PID" 2>/dev/null || true; GUARD_PID=; }
hwm() { awk '/^VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$GUARD_PID/status"; }
# review FILE: one review sent as the API server sends it (no `Expect: 100-continue`); prints
# the HTTP status and the answer's `allowed`.
review() { curl -s -H 'Expect:' -H 'Content-Type: application/json' --cacert certs/ca.crt --data-binary @"$1" -w ' %{http_code}' "$URL" | sed -E 's/.*"allowed":(true|false).* ([0-9]+)$/\2 allowed=\1/'; }

echo
echo "2. the whole path, HTTP body to answer: a fresh guard serve on CPU $GUARD_CPUS, its caches listed, sent one"
echo "   large UPDATE, then (another fresh one) two at once; VmHWM of the whole process, $REPEAT times each"
echo
echo "| UPDATE | run | listed | one | listed | two at once |"
echo "|---|---|---|---|---|---|"
for s in $SHAPES; do
  for ((i = 1; i <= REPEAT; i++)); do
    start_guard
    h0=$(hwm)
    a1=$(review "update-$s.json")
    h1=$(hwm)
    stop_guard
    start_guard
    h2=$(hwm)
    review "update-$s.json" >two-a.txt &
    TWO=$!
    review "update-$s.json" >two-b.txt
    wait "$TWO"
    h3=$(hwm)
    stop_guard
    echo "| $s | $i | $h0 MB | **$h1 MB** ($a1) | $h2 MB | **$h3 MB** ($(cat two-a.txt), $(cat two-b.txt)) |"
  done
done
[[ ${ONLY:-} == whole ]] && exit 0

start_guard
LOAD=$TARGET/release/examples/guard_load
echo
echo "3. guard serve on CPU $GUARD_CPUS, its caches listed: VmHWM $(hwm) MB"
echo "   the answer to a large review: $(curl -s -H 'Expect:' --cacert certs/ca.crt --data-binary @update.json "$URL" | head -c 300)"
echo "   normal reviews alone, $RATE/s for $SECS s: $("$LOAD" "$URL" normal.json certs/ca.crt "$RATE" "$SECS")"
echo "   VmHWM $(hwm) MB"
"$LOAD" "$URL" update.json certs/ca.crt "$LARGE_RATE" "$SECS" >large.txt &
LARGE_PID=$!
echo "   normal reviews, $RATE/s for $SECS s, while $LARGE_RATE large UPDATEs/s are sent: $("$LOAD" "$URL" normal.json certs/ca.crt "$RATE" "$SECS")"
wait "$LARGE_PID"
echo "   the large UPDATEs meanwhile: $(cat large.txt)"
echo "   VmHWM $(hwm) MB"
