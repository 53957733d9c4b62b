#!/usr/bin/env bash
# record.sh - record what a real kube-apiserver answers to every case, for tests/recorded/.
#
# Usage: tests/record/record.sh VERSION [CASE...]
#   VERSION  the Kubernetes release to record (1.20, 1.34, 1.35, 1.36, 1.37, 1.38), as
#            tests/cluster/lab.sh's KQ_LAB_VERSION takes it (1.38: the 1.38 release that
#            tests/cluster/modern/build.sh names, v1.38.0-beta.0 until the proxy serves a newer
#            one; the set goes to tests/recorded/<its gitVersion>)
#   CASE     case folder names (or paths) to record again; default: every case of
#            tests/conformance/ and tests/cases-modern/ (those whose `min-version` is newer
#            than the server are skipped)
#
# It starts two control planes of that release with the project's harness (tests/cluster/lab.sh)
# on their own state directories and ports (so several releases can be recorded side by side,
# and the test lab is left alone): one plain, one running the limited cases' admission.yaml.
# Then tests/record/recorder.rs replays the cases on them (see its header for how) and writes
# tests/recorded/<gitVersion>/: per case the inputs, state.yaml and expected.json as the server
# answered, plus VERSION (the server's gitVersion) and metadata.json. A full run replaces the
# whole set; a run naming cases replaces only those. The servers are stopped at the end
# (KQ_REC_KEEP=1 keeps them up).
#
# Environment:
#   KQ_REC_DIR   state directories of the two servers   [/tmp/kq-rec-VERSION]
#   KQ_REC_PORT  the plain server's port; etcd gets PORT-1000, the limited server PORT+5 and
#                etcd PORT-995                         [29000 + 10 * minor]
#   KQ_REC_ETCD_PORT  the plain server's etcd port (the limited server's etcd gets this + 5),
#                for port ranges that PORT-1000 leaves  [PORT - 1000]
#   KQ_REC_JOBS  cases recorded at once                 [4]
#   KQ_REC_OUT   where the set goes                     [tests/recorded/<gitVersion>]
set -euo pipefail

[[ $# -ge 1 ]] || { sed -n '2,14p' "$0" >&2; exit 2; }
VERSION=${1#v}; shift
[[ $VERSION =~ ^1\.([0-9]+)$ ]] || { echo "record.sh: VERSION is MAJOR.MINOR, e.g. 1.37 (got $VERSION)" >&2; exit 2; }
MINOR=${BASH_REMATCH[1]}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
DIR=${KQ_REC_DIR:-/tmp/kq-rec-$VERSION}
PORT=${KQ_REC_PORT:-$((29000 + 10 * MINOR))}
ETCD=${KQ_REC_ETCD_PORT:-$((PORT - 1000))}
JOBS=${KQ_REC_JOBS:-4}
LAB=$ROOT/tests/cluster/lab.sh
log() { printf '[record %s] %s\n' "$VERSION" "$*" >&2; }

# The cases.
cases=()
if [[ $# -gt 0 ]]; then
  for c in "$@"; do
    c=${c%/}
    if [[ -d $c ]]; then cases+=("$(cd "$c" && pwd)")
    elif [[ -d tests/conformance/$c ]]; then cases+=("$ROOT/tests/conformance/$c")
    elif [[ -d tests/cases-modern/$c ]]; then cases+=("$ROOT/tests/cases-modern/$c")
    else echo "record.sh: no case $c" >&2; exit 2; fi
  done
else
  for c in tests/conformance/*/ tests/cases-modern/*/; do
    [[ -f $c/candidate.yaml ]] && cases+=("$ROOT/${c%/}")
  done
fi
admission=
for c in "${cases[@]}"; do
  if [[ -f $c/admission.yaml ]]; then admission=$c/admission.yaml; break; fi
done

export GOMODCACHE=${GOMODCACHE:-/var/cache/kubectl-quota-go/mod} GOCACHE=${GOCACHE:-/var/cache/kubectl-quota-go/build}
t0=$(date +%s)

lab() { # lab NAME PORT ETCD_PORT [ADMISSION] COMMAND
  local name=$1 port=$2 etcd=$3 adm=$4; shift 4
  env KQ_LAB_VERSION="$VERSION" KQ_LAB_DIR="$DIR/$name" KQ_LAB_PORT="$port" KQ_LAB_ETCD_PORT="$etcd" \
    ${adm:+KQ_LAB_ADMISSION_CONFIG="$adm"} "$LAB" "$@"
}

# The servers' binaries first (a no-op when cached): a release that cannot be built (1.38 while
# the module proxy lacks modules it imports) stops here, in seconds, with the harness's list of
# what is refused, before the recorder is compiled.
log "building (or reusing) the Kubernetes $VERSION binaries"
lab main "$PORT" "$ETCD" "" build >/dev/null || { log "Kubernetes $VERSION cannot be built (see above): nothing recorded"; exit 1; }
log "building the recorder"
RECORDER=${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples/record
if ! nice -n 10 cargo build -q --example record; then
  # The recorder uses the engine only to read YAML: a half-edited engine in a shared work tree
  # need not stop a recording when an earlier build is there.
  [[ -x $RECORDER ]] || exit 1
  log "the build failed; using the recorder built before ($RECORDER)"
fi

stop() {
  [[ -n ${KQ_REC_KEEP:-} ]] && { log "servers kept up in $DIR (KQ_REC_KEEP)"; return; }
  lab main "$PORT" "$ETCD" "" down >/dev/null 2>&1 || true
  [[ -n $admission ]] && { lab limited $((PORT + 5)) $((ETCD + 5)) "$admission" down >/dev/null 2>&1 || true; }
  return 0   # the script's status is its own, not this cleanup's
}
trap stop EXIT

log "starting the servers ($DIR, ports $PORT${admission:+ and $((PORT + 5))})"
lab main "$PORT" "$ETCD" "" up >/dev/null &
up_main=$!
if [[ -n $admission ]]; then
  lab limited $((PORT + 5)) $((ETCD + 5)) "$admission" up >/dev/null &
  up_limited=$!
  wait "$up_limited" || { log "the limited server did not come up"; exit 1; }
fi
wait "$up_main" || { log "the server did not come up"; exit 1; }
t_up=$(date +%s)

git_version=$(curl -sf --cacert "$DIR/main/ca.crt" -H "Authorization: Bearer $(<"$DIR/main/admin.token")" \
  "https://127.0.0.1:$PORT/version" | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p')
[[ $git_version == v$VERSION.* ]] || { log "the server says $git_version, not $VERSION"; exit 1; }
OUT=${KQ_REC_OUT:-$ROOT/tests/recorded/$git_version}
prev_meta=
if [[ $# -eq 0 ]]; then
  rm -rf "$OUT"
elif [[ -f $OUT/metadata.json ]]; then
  prev_meta=$(<"$OUT/metadata.json")
fi
log "recording ${#cases[@]} cases on $git_version into ${OUT#"$ROOT"/}"
args=(--kubeconfig "$DIR/main/kubeconfig" --cluster-scoped "$ROOT/tests/conformance/cluster-scoped.yaml" --out "$OUT" --jobs "$JOBS")
[[ -n $admission ]] && args+=(--limited-kubeconfig "$DIR/limited/kubeconfig" --admission "$admission")
"$RECORDER" "${args[@]}" "${cases[@]}"
if [[ -n $prev_meta ]]; then
  # Some cases recorded again: the set's metadata stays the full run's, and says which cases
  # were recorded later, and when.
  now=$(jq -c '{recordedAt, cases: [.recorded // empty]}' "$OUT/metadata.json")
  names=$(for c in "${cases[@]}"; do basename "$c"; done | jq -R . | jq -sc .)
  jq --indent 1 --argjson now "$now" --argjson names "$names" --argjson total "$(find "$OUT" -mindepth 2 -name expected.json | wc -l)" \
    '.cases = $total | .rerecorded = ((.rerecorded // []) + [{at: $now.recordedAt, cases: $names}])' <<<"$prev_meta" >"$OUT/metadata.json"
fi
t1=$(date +%s)
log "done: servers up in $((t_up - t0))s, cases recorded in $((t1 - t_up))s"
