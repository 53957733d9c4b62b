#!/usr/bin/env bash
# offline-check.sh - wall time and peak memory of an offline `kubectl-quota check -o json` on a
# large generated input.
#
# What it measures: `kubectl-quota check -f MANIFEST --state STATE -n bench -o json >/dev/null`,
# the whole command (reading and parsing the YAML, decoding, the admission replay of every
# document and every workload replica, JSON rendering), with /usr/bin/time -f '%e s %M KB'
# (wall seconds, max RSS). Each size runs REPS times; the median of each is printed.
#
# The input (deterministic, generated with awk): PODS pods (1-3 containers, some init
# containers and sidecars, requests/limits/none, four priority classes, some with
# activeDeadlineSeconds) and DEPLOYMENTS Deployments of 1-10 replicas (about 5.5 * DEPLOYMENTS
# pods more), in one multi-document YAML file; the state is 20 quotas (plain, Terminating,
# NotTerminating, BestEffort, NotBestEffort, PriorityClass In/NotIn/Exists, count/ quotas) sized
# so that about 95% of it fits, a LimitRange and three PriorityClasses.
#
# Usage: bench/offline-check.sh            (from anywhere; builds the release binary first)
# Environment:
#   SIZES  "PODS:DEPLOYMENTS ..." sizes to run, the last one being the headline   [1000:50 10000:500]
#   REPS   repetitions per size                                                    [5]
#   KEEP=1 keep the generated files (printed) instead of deleting them
# Needs: cargo, awk, /usr/bin/time (Debian package `time`).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZES=${SIZES:-"1000:50 10000:500"}
REPS=${REPS:-5}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release/kubectl-quota

[[ -x /usr/bin/time ]] || { echo "error: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/kq-offline-bench.XXXXXX)
if [[ -z ${KEEP:-} ]]; then trap 'rm -rf "$WORK"' EXIT; else echo "files kept in $WORK" >&2; fi

echo "building the release binary ..." >&2
(cd "$ROOT" && cargo build --release --quiet)

# gen_state PODS DEPLOYMENTS > state.yaml
gen_state() {
  awk -v pods="$1" -v deps="$2" '
  function quota(name, extra, hard, used) {
    printf "- apiVersion: v1\n  kind: ResourceQuota\n  metadata: {name: %s, namespace: bench}\n  spec:\n    hard: {%s}\n%s  status:\n    hard: {%s}\n    used: {%s}\n", name, hard, extra, hard, used
  }
  BEGIN {
    # Requests of the generated input (measured with quotas out of the way): 839m cpu and
    # 659Mi per pod, 250m and 128Mi per Deployment replica. The tightest compute quota allows
    # 97% of that: the last documents are refused.
    cpu = int((pods * 839 + deps * 5.5 * 250) * 0.97)
    mem = int((pods * 659 + deps * 5.5 * 128) * 0.97)
    print "apiVersion: v1\nkind: List\nitems:"
    for (i = 0; i < 4; i++) {
      f = 2 ^ i
      quota("compute-" i, "", sprintf("requests.cpu: %dm, requests.memory: %dMi, limits.cpu: %dm, limits.memory: %dMi, pods: \"%d\"", cpu * f, mem * f, cpu * 4 * f, mem * 4 * f, (pods + deps * 10) * f),
            "requests.cpu: \"0\", requests.memory: \"0\", limits.cpu: \"0\", limits.memory: \"0\", pods: \"0\"")
    }
    big = "pods: \"1000000\", requests.cpu: \"1000000\""
    zero = "pods: \"0\", requests.cpu: \"0\""
    quota("scope-terminating", "    scopes: [Terminating]\n", big, zero)
    quota("scope-notterminating", "    scopes: [NotTerminating]\n", big, zero)
    quota("scope-notbesteffort", "    scopes: [NotBestEffort]\n", big, zero)
    quota("scope-besteffort", "    scopes: [BestEffort]\n", "pods: \"1000000\"", "pods: \"0\"")
    quota("scope-terminating-besteffort", "    scopes: [Terminating, BestEffort]\n", "pods: \"1000000\"", "pods: \"0\"")
    n = split("In [high]|In [low, medium]|In [medium]|NotIn [high]|Exists", sel, "|")
    split("high|low-medium|medium|not-high|exists", sname, "|")
    for (i = 1; i <= n; i++) {
      split(sel[i], op, " ")
      values = substr(sel[i], length(op[1]) + 2)
      expr = "{scopeName: PriorityClass, operator: " op[1] (values == "" ? "" : ", values: " values) "}"
      quota("pc-" sname[i], "    scopeSelector: {matchExpressions: [" expr "]}\n", big ", limits.memory: 100Ti", zero ", limits.memory: \"0\"")
    }
    quota("pc-high-notterminating", "    scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}, {scopeName: NotTerminating, operator: Exists}]}\n", big, zero)
    quota("counts", "", "count/pods: \"1000000\", count/deployments.apps: \"100000\", count/replicasets.apps: \"100000\", services: \"10\"",
          "count/pods: \"0\", count/deployments.apps: \"0\", count/replicasets.apps: \"0\", services: \"0\"")
    quota("storage", "", "requests.storage: 10Ti, persistentvolumeclaims: \"100\"", "requests.storage: \"0\", persistentvolumeclaims: \"0\"")
    quota("ephemeral", "", "requests.ephemeral-storage: 100Ti, limits.ephemeral-storage: 200Ti", "requests.ephemeral-storage: \"0\", limits.ephemeral-storage: \"0\"")
    quota("gpu", "", "requests.nvidia.com/gpu: \"64\"", "requests.nvidia.com/gpu: \"0\"")
    quota("objects", "", "configmaps: \"1000\", secrets: \"1000\"", "configmaps: \"0\", secrets: \"0\"")
    print "- apiVersion: v1\n  kind: LimitRange\n  metadata: {name: defaults, namespace: bench}\n  spec:\n    limits:\n    - type: Container\n      default: {cpu: 500m, memory: 512Mi}\n      defaultRequest: {cpu: 250m, memory: 256Mi}"
    print "- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 100000}"
    print "- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: medium}, value: 1000}"
    print "- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: low}, value: 100, globalDefault: true}"
  }'
}

# gen_manifest PODS DEPLOYMENTS > manifest.yaml
gen_manifest() {
  awk -v pods="$1" -v deps="$2" '
  function res(k,   cpu, mem) {
    cpu = 100 * (1 + k % 8) "m"; mem = 64 * (1 + (k * 7) % 8) "Mi"
    if (k % 5 == 0) return "{limits: {cpu: " cpu ", memory: " mem "}}"
    # Requests only: the LimitRange adds limits 500m/512Mi, so stay below them.
    if (k % 5 == 1) return "{requests: {cpu: " 100 * (1 + k % 5) "m, memory: " mem "}}"
    if (k % 5 == 2) return "{requests: {cpu: " cpu ", memory: " mem "}, limits: {cpu: \"2\", memory: 1Gi, ephemeral-storage: 1Gi}}"
    if (k % 5 == 3) return "{requests: {cpu: " cpu ", memory: " mem ", ephemeral-storage: 500Mi}, limits: {cpu: \"2\", memory: 1Gi}}"
    return "{}"
  }
  BEGIN {
    split("|high|medium|low", pc, "|")
    for (i = 0; i < pods; i++) {
      printf "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-%d, labels: {app: a%d}}\nspec:\n", i, i % 17
      p = pc[1 + i % 4]
      if (p != "") printf "  priorityClassName: %s\n", p
      if (i % 5 == 0) print "  activeDeadlineSeconds: 3600"
      inits = i % 3
      if (inits > 0) {
        print "  initContainers:"
        for (j = 0; j < inits; j++)
          printf "  - {name: init-%d, image: busybox%s, resources: %s}\n", j, ((i + j) % 3 == 0 ? ", restartPolicy: Always" : ""), res(i * 3 + j + 1)
      }
      print "  containers:"
      for (j = 0; j <= (i * 7) % 3; j++)
        printf "  - {name: c%d, image: registry.example.com/app:%d, resources: %s}\n", j, i % 7, res(i * 11 + j)
    }
    for (d = 0; d < deps; d++) {
      printf "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web-%d}\nspec:\n  replicas: %d\n  selector: {matchLabels: {app: web-%d}}\n  template:\n    metadata: {labels: {app: web-%d}}\n    spec:\n", d, 1 + d % 10, d, d
      if (d % 3 == 0) print "      priorityClassName: high"
      print "      containers:\n      - {name: app, image: web:1, resources: {requests: {cpu: 250m, memory: 128Mi}, limits: {cpu: \"1\", memory: 512Mi}}}"
    }
  }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-16s %-10s %-12s %-10s %-12s %s\n' "pods+deploys" "input" "wall (med)" "wall (max)" "RSS (med)" "documents / refused"
for size in $SIZES; do
  pods=${size%%:*}
  deps=${size##*:}
  state=$WORK/state-$pods.yaml
  manifest=$WORK/manifest-$pods-$deps.yaml
  gen_state "$pods" "$deps" >"$state"
  gen_manifest "$pods" "$deps" >"$manifest"
  # One untimed run: a sanity check of the output, and a warm page cache.
  code=0
  "$BIN" check -f "$manifest" --state "$state" -n bench -o json >"$WORK/out.json" || code=$?
  ((code <= 1)) || { echo "error: check exited $code" >&2; head -c 2000 "$WORK/out.json" >&2; exit 1; }
  docs=$(grep -c '^      "kind": ' "$WORK/out.json" || true)
  refused=$(grep -c '^      "allowed": false' "$WORK/out.json" || true)
  replicas_short=$(awk '/^      "replicas": /{w=$2+0} /^      "replicasAdmitted": /{if ($2+0 < w) n++} END {print n+0}' "$WORK/out.json")
  : >"$WORK/times"
  for ((r = 0; r < REPS; r++)); do
    /usr/bin/time -f '%e %M' -o "$WORK/time1" "$BIN" check -f "$manifest" --state "$state" -n bench -o json >/dev/null || true
    tail -n 1 "$WORK/time1" >>"$WORK/times"   # (a non-zero exit adds a line before)
  done
  wall_med=$(cut -d' ' -f1 "$WORK/times" | median)
  wall_max=$(cut -d' ' -f1 "$WORK/times" | sort -g | tail -n1)
  rss_med=$(cut -d' ' -f2 "$WORK/times" | median)
  printf '%-16s %-10s %-12s %-10s %-12s %s\n' "$pods+$deps" "$(du -h "$manifest" | cut -f1)" "${wall_med} s" "${wall_max} s" "${rss_med} KB" \
    "$docs documents, $refused refused, $replicas_short deployments short of replicas; output $(du -h "$WORK/out.json" | cut -f1)"
  echo "  runs (s KB): $(tr '\n' ';' <"$WORK/times" | sed 's/;$//; s/;/; /g')"
done
