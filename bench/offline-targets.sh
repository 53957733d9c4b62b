#!/usr/bin/env bash
# offline-targets.sh - every offline size of the performance goals, and a scaling table.
#
# Runs the release binary (built here) on inputs from bench/gen.sh, each command RUNS times,
# and prints per command: wall median, user-CPU median (less sensitive to other load on a
# shared machine) and max RSS median, from /usr/bin/time.
#
#   targets   10,000 pods + 500 Deployments against 20 quotas: -o json, -o text, --quiet;
#             100,000 tiny pods (--quiet); 3,000 scoped quotas x 3,000 pods (-q and -o json);
#             a Deployment of 2147483647 replicas; a DaemonSet on --nodes 1000000000
#   scaling   documents: 1k / 10k / 100k tiny pods against the 20 quotas (--quiet);
#             quotas: 20 / 200 / 2,000 scoped quotas against 3,000 pods (--quiet)
#
# Usage: bench/offline-targets.sh [targets|scaling|all]       (default all)
# Environment: RUNS (default 3), KEEP=1 keeps the generated inputs.
# Needs: cargo, awk, /usr/bin/time.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-3}
WHAT=${1:-all}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
# shellcheck source=bench/gen.sh
source "$ROOT/bench/gen.sh"

WORK=$(mktemp -d /tmp/kq-offline-targets.XXXXXX)
if [[ -z ${KEEP:-} ]]; then trap 'rm -rf "$WORK"' EXIT; else echo "files kept in $WORK" >&2; fi
echo "building the release binary ..." >&2
(cd "$ROOT" && cargo build --release --quiet)
cp "$TARGET/release/kubectl-quota" "$WORK/kubectl-quota"
BIN=$WORK/kubectl-quota

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure LABEL ARGS...: RUNS runs of kubectl-quota ARGS.
measure() {
  local label=$1
  shift
  : >"$WORK/times"
  for ((r = 0; r < RUNS; r++)); do
    /usr/bin/time -f '%e %U %M' -o "$WORK/t" "$BIN" "$@" >"$WORK/out" 2>"$WORK/err" || true
    tail -n 1 "$WORK/t" >>"$WORK/times"
  done
  printf '%-52s wall %6.2f s   user %6.2f s   RSS %7.1f MB   output %s\n' "$label" \
    "$(cut -d' ' -f1 "$WORK/times" | median)" "$(cut -d' ' -f2 "$WORK/times" | median)" \
    "$(cut -d' ' -f3 "$WORK/times" | median | awk '{ print $1 / 1024 }')" "$(du -h "$WORK/out" | cut -f1)"
}

if [[ $WHAT == targets || $WHAT == all ]]; then
  gen_state 10000 500 >"$WORK/state-10k.yaml"
  gen_manifest 10000 500 >"$WORK/big.yaml"
  for o in json text; do measure "10,000 pods + 500 Deployments, 20 quotas, -o $o" check -f "$WORK/big.yaml" --state "$WORK/state-10k.yaml" -n bench -o "$o"; done
  measure "10,000 pods + 500 Deployments, 20 quotas, --quiet" check -f "$WORK/big.yaml" --state "$WORK/state-10k.yaml" -n bench --quiet
  gen_state 100000 0 >"$WORK/state-100k.yaml"
  gen_tiny_pods 100000 >"$WORK/tiny.yaml"
  measure "100,000 tiny pods, 20 quotas, --quiet" check -f "$WORK/tiny.yaml" --state "$WORK/state-100k.yaml" -n bench --quiet
  gen_scoped_state 3000 >"$WORK/scoped-state.yaml"
  gen_scoped_pods 3000 >"$WORK/scoped-pods.yaml"
  measure "3,000 scoped quotas x 3,000 pods, -q" check -f "$WORK/scoped-pods.yaml" --state "$WORK/scoped-state.yaml" -n bench -q
  measure "3,000 scoped quotas x 3,000 pods, -o json" check -f "$WORK/scoped-pods.yaml" --state "$WORK/scoped-state.yaml" -n bench -o json
  gen_replicas_deployment 2147483647 >"$WORK/huge.yaml"
  measure "Deployment of 2147483647 replicas, 20 quotas" check -f "$WORK/huge.yaml" --state "$WORK/state-10k.yaml" -n bench
  printf 'apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec: {selector: {}, template: {spec: {containers: [{name: c, image: x}]}}}\n' >"$WORK/ds.yaml"
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: bench}\n' >"$WORK/empty.yaml"
  measure "DaemonSet, --nodes 1000000000, no quota" check -f "$WORK/ds.yaml" --state "$WORK/empty.yaml" -n bench --nodes 1000000000
fi

if [[ $WHAT == scaling || $WHAT == all ]]; then
  gen_state 100000 0 >"$WORK/state-100k.yaml"
  for n in 1000 10000 100000; do
    gen_tiny_pods "$n" >"$WORK/tiny-$n.yaml"
    measure "scaling: $n tiny pods, 20 quotas, --quiet" check -f "$WORK/tiny-$n.yaml" --state "$WORK/state-100k.yaml" -n bench --quiet
  done
  gen_scoped_pods 3000 >"$WORK/scoped-pods.yaml"
  for q in 20 200 2000; do
    gen_scoped_state "$q" >"$WORK/scoped-state-$q.yaml"
    measure "scaling: 3,000 pods, $q scoped quotas, --quiet" check -f "$WORK/scoped-pods.yaml" --state "$WORK/scoped-state-$q.yaml" -n bench --quiet
  done
fi
