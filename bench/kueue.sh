#!/usr/bin/env bash
# kueue.sh - wall time and peak memory of `check` where Kueue holds a large batch cluster
# (issue 60, item 6), on an optimised binary, with /usr/bin/time -v:
#   - a state of 1,000 ClusterQueues (each 2 resource groups of 3 flavors, its reservation in
#     status), 20 ResourceFlavors, 1,000 LocalQueues in one namespace and a quota, and 10,000
#     Jobs each in one of those queues (`check -o json` and the text);
#   - the same with every ClusterQueue in one cohort, lending half its cpu (each decision
#     counts the cohort);
#   - the same Jobs against the state without Kueue's objects (the cost Kueue adds).
# Kueue's Workloads are not read: a ClusterQueue's status carries what they reserve.
#
# Usage: bench/kueue.sh [BINARY]   (default: $CARGO_TARGET_DIR/release/kubectl-quota, built
#        with `cargo build --release`)
# Prints a Markdown table: case, input size, exit status, wall seconds, max RSS in MB.
# Needs: python3 (generates the inputs), /usr/bin/time (Debian package `time`).
set -euo pipefail

# shellcheck source=offline-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/offline-common.sh"

python3 - <<'PY'
flavors = 20
with open("state.yaml", "w") as f:
    f.write("apiVersion: v1\nkind: List\nitems:\n")
    f.write("- {apiVersion: v1, kind: Namespace, metadata: {name: batch, labels: {team: ml}}}\n")
    f.write("- {apiVersion: v1, kind: ResourceQuota, metadata: {name: compute, namespace: batch}, "
            "spec: {hard: {requests.cpu: '100k', requests.memory: 100Ti}}, "
            "status: {hard: {requests.cpu: '100k', requests.memory: 100Ti}, used: {requests.cpu: '0', requests.memory: '0'}}}\n")
    for i in range(flavors):
        f.write("- {apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: f%d}, "
                "spec: {nodeLabels: {pool: p%d}}}\n" % (i, i))
    for q in range(1000):
        fl = [(q + k) % flavors for k in range(3)]
        group = lambda res: ("{coveredResources: [%s], flavors: [%s]}" % (
            ", ".join(res),
            ", ".join("{name: f%d, resources: [%s]}" % (x, ", ".join("{name: %s, nominalQuota: '%s'}" % (r, "100" if r == "cpu" else "400Gi") for r in res)) for x in fl)))
        status = ", ".join("{name: f%d, resources: [{name: cpu, total: '97', borrowed: '0'}, {name: memory, total: 390Gi, borrowed: '0'}]}" % x for x in fl)
        f.write("- {apiVersion: kueue.x-k8s.io/v1beta2, kind: ClusterQueue, metadata: {name: cq%d}, "
                "spec: {namespaceSelector: {matchLabels: {team: ml}}, resourceGroups: [%s, %s]}, "
                "status: {flavorsReservation: [%s]}}\n" % (q, group(["cpu", "memory"]), group(["nvidia.com/gpu"]), status))
        f.write("- {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: lq%d, namespace: batch}, "
                "spec: {clusterQueue: cq%d}}\n" % (q, q))
# The same ClusterQueues all in one cohort (each lending half its quota): every decision
# reads the whole cohort.
with open("state-cohort.yaml", "w") as f:
    for line in open("state.yaml"):
        line = line.replace("spec: {namespaceSelector:", "spec: {cohortName: all, namespaceSelector:")
        f.write(line.replace("nominalQuota: '100'}", "nominalQuota: '100', lendingLimit: '50'}"))
with open("state-without.yaml", "w") as f:
    for line in open("state.yaml"):
        if "kueue.x-k8s.io" not in line:
            f.write(line)
with open("jobs.yaml", "w") as f:
    for j in range(10_000):
        f.write("---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j%d, labels: {kueue.x-k8s.io/queue-name: lq%d}}\n"
                "spec:\n  parallelism: 2\n  template:\n    spec:\n      restartPolicy: Never\n"
                "      nodeSelector: {pool: p%d}\n"
                "      containers: [{name: main, image: trainer, resources: {requests: {cpu: '1', memory: 4Gi}}}]\n" % (j, j % 1000, j % flavors))
PY

echo "| case | input | exit | wall s | max RSS MB |"
echo "|---|---|---|---|---|"
run() { # name, input size, then the command
  local name=$1 size=$2; shift 2
  timed "$BIN" "$@"
  echo "| $name | $size | $code | $wall | $rss |"
}
mb() { du -m "$1" | cut -f1; }
run "check -o json, 10,000 Jobs, 1,000 ClusterQueues" "$(mb jobs.yaml) + $(mb state.yaml) MB" check -f jobs.yaml --state state.yaml -n batch -o json
run "check (text), the same" "$(mb jobs.yaml) + $(mb state.yaml) MB" check -f jobs.yaml --state state.yaml -n batch
run "check -o json, the same, the ClusterQueues in one cohort" "$(mb jobs.yaml) + $(mb state-cohort.yaml) MB" check -f jobs.yaml --state state-cohort.yaml -n batch -o json
run "check -o json, the same Jobs, no Kueue objects" "$(mb jobs.yaml) + $(mb state-without.yaml) MB" check -f jobs.yaml --state state-without.yaml -n batch -o json
grep -c '"verdict": "admitted"' <("$BIN" check -f jobs.yaml --state state.yaml -n batch -o json 2>/dev/null) | sed 's/^/admitted by Kueue: /' >&2 || true
