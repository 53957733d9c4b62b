#!/usr/bin/env bash
# views-scale.sh - the cluster views offline at scale (issue 50): `capacity` and `uncovered`
# over a state of 100,000 Nodes and `capacity` over 1,000,000 DRA devices, each state written
# three ways: YAML as bench/state-size.sh writes it (a block List), JSON as
# `kubectl quota snapshot -A -o json` writes it (pretty), and compact JSON as the API server
# answers a LIST (`kind` first) or `kubectl get -o json | jq -c` prints it (`items` first).
# Goals: 100,000 nodes under 1.5 s, 1,000,000 devices under 1.5 s and 150 MB peak RSS.
#
# Each case runs RUNS times under /usr/bin/time -v; with BASE set, BASE's binary runs beside it,
# A B A B ..., so that both see the same load, and both outputs must be the same bytes.
#
# Usage: bench/views-scale.sh [BINARY]   (default: $CARGO_TARGET_DIR/release/kubectl-quota)
#        BASE=/path/to/kubectl-quota.before bench/views-scale.sh
# Environment:
#   RUNS    runs of each case per binary                                     [5]
#   CASES   which cases (a regular expression over the case names)           [.]
#   KEEP    a directory to write the inputs to and keep (default: a temporary one)
# Prints a Markdown table: case, input size, binary, wall median and max (s), user CPU median
# (s), max RSS median and max (MB). Needs: python3 (generates the inputs), /usr/bin/time.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${1:-${CARGO_TARGET_DIR:-$ROOT/target}/release/kubectl-quota}
BASE=${BASE:-}
RUNS=${RUNS:-5}
CASES=${CASES:-.}
[[ -x $BIN ]] || { echo "error: no binary at $BIN (cargo build --release)" >&2; exit 1; }
[[ -z $BASE || -x $BASE ]] || { echo "error: BASE=$BASE is not a binary" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "error: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
if [[ -n ${KEEP:-} ]]; then
  mkdir -p "$KEEP"
  W=$(cd "$KEEP" && pwd)
else
  W=$(mktemp -d)
  trap 'rm -rf "$W"' EXIT
fi
cd "$W"

[[ -f devices-1m-list.json ]] || python3 - <<'PY'
import json

def node(i):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n%d" % i}, "spec": {},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110", "ephemeral-storage": "100Gi"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}

def quota(i):
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q%d" % i, "namespace": "ns%d" % i},
            "spec": {"hard": {"requests.cpu": "100"}}, "status": {"hard": {"requests.cpu": "100"}, "used": {"requests.cpu": "1"}}}

GPU = "gpu.deviceclass.resource.k8s.io/devices"
def device_head():
    return [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
            {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "a"},
             "spec": {"hard": {GPU: "10"}}, "status": {"hard": {GPU: "10"}, "used": {GPU: "0"}}}]

def slice_(s):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s%d" % s},
            "spec": {"driver": "gpu.example.com", "nodeName": "n%d" % s,
                     "pool": {"name": "n%d" % s, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-%d" % d} for d in range(100)]}}

# YAML, exactly as bench/state-size.sh writes it.
node_yaml = ("- apiVersion: v1\n  kind: Node\n  metadata: {name: n%d}\n  spec: {}\n  status:\n"
             "    allocatable: {cpu: '16', memory: 64Gi, pods: '110', ephemeral-storage: 100Gi}\n"
             "    conditions: [{type: Ready, status: 'True'}]\n")
quota_yaml = ("- {apiVersion: v1, kind: ResourceQuota, metadata: {name: q%d, namespace: ns%d}, "
              "spec: {hard: {requests.cpu: '100'}}, status: {hard: {requests.cpu: '100'}, used: {requests.cpu: '1'}}}\n")
with open("nodes-100k.yaml", "w") as f:
    f.write("apiVersion: v1\nkind: List\nitems:\n")
    f.writelines(node_yaml % i for i in range(100_000))
    f.writelines(quota_yaml % (i, i) for i in range(1000))
with open("devices-1m.yaml", "w") as f:
    f.write("apiVersion: v1\nkind: List\nitems:\n")
    f.write("- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu}, "
            "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}}\n")
    f.write("- {apiVersion: v1, kind: ResourceQuota, metadata: {name: q, namespace: a}, "
            "spec: {hard: {%s: '10'}}, status: {hard: {%s: '10'}, used: {%s: '0'}}}\n" % (GPU, GPU, GPU))
    for s in range(10_000):
        f.write("- apiVersion: resource.k8s.io/v1\n  kind: ResourceSlice\n  metadata: {name: s%d}\n  spec:\n"
                "    driver: gpu.example.com\n    nodeName: n%d\n    pool: {name: n%d, generation: 1, resourceSliceCount: 1}\n"
                "    devices:\n" % (s, s, s))
        f.writelines("    - {name: gpu-%d}\n" % d for d in range(100))

nodes = [node(i) for i in range(100_000)] + [quota(i) for i in range(1000)]
devices = device_head() + [slice_(s) for s in range(10_000)]
for name, items in (("nodes-100k", nodes), ("devices-1m", devices)):
    # `snapshot -o json`: apiVersion, kind, items; two-space indent.
    with open(name + ".json", "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f, indent=2)
        f.write("\n")
    # A LIST's answer, compact, kind first; and kubectl's order (keys sorted: items before kind).
    with open(name + "-list.json", "w") as f:
        json.dump({"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": items}, f, separators=(",", ":"))
    with open(name + "-kubectl.json", "w") as f:
        json.dump({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}, f, separators=(",", ":"))
PY

# run BINARY ARGS...: one run; appends "wall user rss_kb" to $W/times.$label
one() {
  local out=$1; shift
  /usr/bin/time -v -o time.txt "$@" >"$out" 2>err.txt || { local c=$?; ((c == 3)) || { echo "error: $* exited $c: $(head -c 300 err.txt)" >&2; exit 1; }; }
  awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; w = s}
              /User time/ {u = $2} /Maximum resident set size/ {r = $2} END {printf "%.2f %.2f %d\n", w, u, r}' time.txt
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
row() { # row CASE INPUT LABEL TIMESFILE
  local f=$4
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" \
    "$(cut -d' ' -f1 "$f" | median)" "$(cut -d' ' -f1 "$f" | sort -g | tail -n1)" "$(cut -d' ' -f2 "$f" | median)" \
    "$(cut -d' ' -f3 "$f" | median | awk '{printf "%.0f", $1 / 1024}')" "$(cut -d' ' -f3 "$f" | sort -g | tail -n1 | awk '{printf "%.0f", $1 / 1024}')"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| case | input | binary | wall median s | wall max s | user median s | max RSS median MB | max RSS max MB |"
echo "|---|---|---|---|---|---|---|---|"
bench() { # bench NAME FILE ARGS...
  local name=$1 file=$2; shift 2
  [[ $name =~ $CASES ]] || return 0
  local size r
  size=$(awk -v b="$(stat -c %s "$file")" 'BEGIN {printf "%.1f MB", b / 1e6}')
  : >times.new
  : >times.base
  for ((r = 0; r < RUNS; r++)); do
    if [[ -n $BASE ]]; then
      one out.base "$BASE" "$@" --state "$file" >>times.base
    fi
    one out.new "$BIN" "$@" --state "$file" >>times.new
    if [[ -n $BASE ]] && ! cmp -s out.base out.new; then
      echo "error: $name: the two binaries' outputs differ" >&2
      exit 1
    fi
  done
  [[ -z $BASE ]] || row "$name" "$size" before times.base
  row "$name" "$size" "$([[ -n $BASE ]] && echo after || echo this)" times.new
}
for f in nodes-100k.yaml nodes-100k.json nodes-100k-list.json nodes-100k-kubectl.json; do
  bench "\`capacity\`, 100,000 nodes, $f" "$f" capacity
  bench "\`uncovered\`, 100,000 nodes, $f" "$f" uncovered
done
for f in devices-1m.yaml devices-1m.json devices-1m-list.json devices-1m-kubectl.json; do
  bench "\`capacity\`, 1,000,000 devices, $f" "$f" capacity
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
