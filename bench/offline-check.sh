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

# shellcheck source=bench/gen.sh
source "$ROOT/bench/gen.sh"

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
