#!/usr/bin/env bash
# policies.sh - wall time and peak memory of an offline `kubectl-quota check` where admission
# policies run before quota: PODS pods against POLICIES policies (four in five
# ValidatingAdmissionPolicies, one in five MutatingAdmissionPolicies, each with its binding).
#
# What it measures: `kubectl-quota check -f MANIFEST --state STATE -n bench -o json >/dev/null`
# with /usr/bin/time -f '%e s %M KB' (wall seconds, max RSS), REPS times, medians printed;
# and the same manifest against the same state without its policies, for the cost of the
# policies alone. Every policy's expressions are compiled once, when the state is read.
#
# The validating policies (a memory limit on every container, a cpu request at most a bound
# by quantity, a label, a name prefix, a container count), bound Deny or Warn, let every
# generated pod through, so every pod is evaluated by every policy; the mutating ones give a
# cpu request of 100m to containers without one (ApplyConfiguration) or add an annotation
# (JSONPatch).
#
# Usage: bench/policies.sh           (from anywhere; builds the release binary first)
# Environment:
#   PODS      pods in the manifest        [1000]
#   POLICIES  policies in the state       [50]
#   REPS      repetitions                 [5]
#   BIN       the binary to time          [target/release/kubectl-quota]
# Needs: cargo, /usr/bin/time (Debian package `time`).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PODS=${PODS:-1000}
POLICIES=${POLICIES:-50}
REPS=${REPS:-5}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=${BIN:-$TARGET/release/kubectl-quota}

[[ -x /usr/bin/time ]] || { echo "error: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/kq-policies-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

if [[ -z ${BIN_GIVEN:-} && $BIN == "$TARGET/release/kubectl-quota" ]]; then
  echo "building the release binary ..." >&2
  (cd "$ROOT" && cargo build --release --quiet)
fi

plain=$WORK/plain.yaml
state=$WORK/state.yaml
manifest=$WORK/pods.yaml
cat >"$plain" <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: bench, labels: {kubernetes.io/metadata.name: bench, team: bench}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: bench}
spec: {hard: {requests.cpu: '100000', requests.memory: 100000Gi, limits.memory: 100000Gi, pods: '1000000'}}
status:
  hard: {requests.cpu: '100000', requests.memory: 100000Gi, limits.memory: 100000Gi, pods: '1000000'}
  used: {requests.cpu: '0', requests.memory: '0', limits.memory: '0', pods: '0'}
YAML
cp "$plain" "$state"
rule="matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}]}"
for ((i = 0; i < POLICIES; i++)); do
  if ((i % 5 == 4)); then
    if ((i % 10 == 4)); then
      mutation="{patchType: ApplyConfiguration, applyConfiguration: {expression: \"Object{spec: Object.spec{containers: object.spec.containers.filter(c, !has(c.resources.requests) || !('cpu' in c.resources.requests)).map(c, Object.spec.containers{name: c.name, resources: Object.spec.containers.resources{requests: {'cpu': '100m'}}})}}\"}}"
    else
      mutation="{patchType: JSONPatch, jsonPatch: {expression: \"[JSONPatch{op: 'add', path: '/metadata/annotations', value: {'bench/p$i': 'seen'}}]\"}}"
    fi
    cat >>"$state" <<YAML
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: p$i}
spec: {reinvocationPolicy: Never, $rule, mutations: [$mutation]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: p$i}
spec: {policyName: p$i}
YAML
    continue
  fi
  case $((i % 5)) in
    0) expr="object.spec.containers.all(c, has(c.resources.limits) && 'memory' in c.resources.limits)" ;;
    1) expr="object.spec.containers.all(c, !has(c.resources.requests) || !('cpu' in c.resources.requests) || quantity(c.resources.requests.cpu).compareTo(quantity('4')) <= 0)" ;;
    2) expr="has(object.metadata.labels) && 'app' in object.metadata.labels" ;;
    3) expr="object.metadata.name.startsWith('pod-') && size(object.spec.containers) <= 5" ;;
  esac
  action=$([[ $((i % 2)) == 0 ]] && echo Deny || echo Warn)
  cat >>"$state" <<YAML
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p$i}
spec:
  $rule
  validations: [{expression: "$expr", messageExpression: "'policy p$i refuses ' + object.metadata.name"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: p$i}
spec: {policyName: p$i, validationActions: [$action]}
YAML
done
awk -v n="$PODS" 'BEGIN {
  for (i = 0; i < n; i++) {
    cpu = (i % 3 == 0) ? "" : sprintf("cpu: %dm, ", 100 + i % 400)
    printf "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-%d, labels: {app: a%d}}\nspec:\n  containers:\n", i, i % 7
    for (c = 0; c <= i % 3; c++)
      printf "  - {name: c%d, image: nginx, resources: {requests: {%smemory: %dMi}, limits: {memory: %dMi}}}\n", c, cpu, 64 + i % 64, 128 + i % 64
  }
}' >"$manifest"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
run() {
  local st=$1 label=$2 code=0
  "$BIN" check -f "$manifest" --state "$st" -n bench -o json >"$WORK/out.json" || code=$?
  ((code <= 1)) || { echo "error: check exited $code" >&2; head -c 2000 "$WORK/out.json" >&2; exit 1; }
  local refused warned
  refused=$(grep -c '^      "allowed": false' "$WORK/out.json" || true)
  warned=$(grep -c '^      "warnings": ' "$WORK/out.json" || true)
  : >"$WORK/times"
  for ((r = 0; r < REPS; r++)); do
    /usr/bin/time -f '%e %M' -o "$WORK/t" "$BIN" check -f "$manifest" --state "$st" -n bench -o json >/dev/null || true
    cat "$WORK/t" >>"$WORK/times"
  done
  printf '%-34s %-10s %-12s %s\n' "$label" "$(cut -d' ' -f1 "$WORK/times" | median) s" "$(cut -d' ' -f2 "$WORK/times" | median) KB" "refused $refused, warned $warned"
}
printf '%-34s %-10s %-12s %s\n' "input" "wall (med)" "RSS (med)" "answers"
run "$plain" "$PODS pods, no policies"
run "$state" "$PODS pods, $POLICIES policies"
