#!/usr/bin/env bash
# state-size.sh - wall time and peak memory of large offline inputs (issue 40), on an
# optimised binary, with /usr/bin/time -v:
#   - `capacity` and `uncovered` on a state of 100,000 Nodes (a List as `snapshot` saves it)
#     and on 1,000,000 devices in 10,000 ResourceSlices (goal: under 2 s and 200 MB each);
#   - `check -o junit` (and, beside it, text) of 3,000 Pods against 40 quotas that all refuse
#     them (goal: JUnit under 60 MB, streamed like the text).
#
# Usage: bench/state-size.sh [BINARY]   (default: $CARGO_TARGET_DIR/release/kubectl-quota,
#        built with `cargo build --release`)
# Prints a Markdown table: case, input size, exit status, wall seconds, max RSS in MB.
# Needs: python3 (generates the inputs), /usr/bin/time (Debian package `time`).
set -euo pipefail

# shellcheck source=offline-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/offline-common.sh"

python3 - <<'PY'
w = lambda n, t: open(n, "w").write(t)
node = ("- apiVersion: v1\n  kind: Node\n  metadata: {name: n%d}\n  spec: {}\n  status:\n"
        "    allocatable: {cpu: '16', memory: 64Gi, pods: '110', ephemeral-storage: 100Gi}\n"
        "    conditions: [{type: Ready, status: 'True'}]\n")
quota = ("- {apiVersion: v1, kind: ResourceQuota, metadata: {name: q%d, namespace: ns%d}, "
         "spec: {hard: {requests.cpu: '100'}}, status: {hard: {requests.cpu: '100'}, used: {requests.cpu: '1'}}}\n")
w("nodes-100k.yaml", "apiVersion: v1\nkind: List\nitems:\n" + "".join(node % i for i in range(100_000))
  + "".join(quota % (i, i) for i in range(1000)))
with open("devices-1m.yaml", "w") as f:
    f.write("apiVersion: v1\nkind: List\nitems:\n")
    f.write("- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu}, "
            "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}}\n")
    f.write("- {apiVersion: v1, kind: ResourceQuota, metadata: {name: q, namespace: a}, "
            "spec: {hard: {gpu.deviceclass.resource.k8s.io/devices: '10'}}, "
            "status: {hard: {gpu.deviceclass.resource.k8s.io/devices: '10'}, used: {gpu.deviceclass.resource.k8s.io/devices: '0'}}}\n")
    for s in range(10_000):
        f.write("- apiVersion: resource.k8s.io/v1\n  kind: ResourceSlice\n  metadata: {name: s%d}\n  spec:\n"
                "    driver: gpu.example.com\n    nodeName: n%d\n    pool: {name: n%d, generation: 1, resourceSliceCount: 1}\n"
                "    devices:\n" % (s, s, s))
        f.write("".join("    - {name: gpu-%d}\n" % d for d in range(100)))
q = ("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q%d, namespace: default}\n"
     "spec: {hard: {pods: '1', requests.cpu: '1'}}\nstatus: {hard: {pods: '1', requests.cpu: '1'}, used: {pods: '1', requests.cpu: '1'}}\n---\n")
w("quotas-40.yaml", "".join(q % i for i in range(40)))
pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p%d}\n"
       "spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 100m}, limits: {cpu: 100m}}}]}\n---\n")
w("pods-3000.yaml", "".join(pod % i for i in range(3000)))
w("pod-200k.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  containers:\n"
  + "".join("  - {name: c%d, image: x, resources: {requests: {cpu: 1m}}}\n" % i for i in range(200_000)))
w("state.yaml", "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: default}\nspec: {hard: {pods: '10'}}\nstatus: {hard: {pods: '10'}, used: {pods: '0'}}\n")
PY

run() { # name, input, then the command
    local name=$1 input=$2
    shift 2
    timed "$@"
    local size
    size=$(awk -v b="$(stat -c %s "$input")" 'BEGIN {printf "%.1f MB", b / 1e6}')
    printf '| %s | %s | %s | %s | %s |\n' "$name" "$size" "$code" "$wall" "$rss"
}

echo "| case | input | exit | wall s | max RSS MB |"
echo "|---|---|---|---|---|"
run "\`capacity\`, 100,000 Nodes, 1,000 quotas" nodes-100k.yaml "$BIN" capacity --state nodes-100k.yaml
run "\`uncovered\`, the same" nodes-100k.yaml "$BIN" uncovered --state nodes-100k.yaml
run "\`capacity\`, 1,000,000 devices in 10,000 ResourceSlices" devices-1m.yaml "$BIN" capacity --state devices-1m.yaml
run "\`uncovered\`, the same" devices-1m.yaml "$BIN" uncovered --state devices-1m.yaml
run "\`check -o junit\`, 3,000 Pods x 40 refusing quotas" pods-3000.yaml "$BIN" check -f pods-3000.yaml --state quotas-40.yaml -o junit
run "\`check\` (text), the same" pods-3000.yaml "$BIN" check -f pods-3000.yaml --state quotas-40.yaml
run "a Pod of 200,000 containers (over the server's 3 MiB)" pod-200k.yaml "$BIN" check -f pod-200k.yaml --state state.yaml
