#!/usr/bin/env bash
# The action's check step (action.yml): `kubectl quota check` with the action's inputs (KQ_*),
# the exit status as the step's `exit-code` output, a line in the job summary, and the job
# failed on a refusal (on an incomplete answer too, with KQ_FAIL_ON_INCOMPLETE=true).
# With KQ_SNAPSHOT, `kubectl quota snapshot` into that file instead.
set -uo pipefail
connection=()
[[ -n ${KQ_CONTEXT:-} ]] && connection+=(--context "$KQ_CONTEXT")
[[ -n ${KQ_KUBECONFIG:-} ]] && connection+=(--kubeconfig "$KQ_KUBECONFIG")

if [[ -n ${KQ_SNAPSHOT:-} ]]; then
  scope=(-A)
  [[ -n ${KQ_NAMESPACE:-} ]] && scope=(-n "$KQ_NAMESPACE")
  mkdir -p "$(dirname "$KQ_SNAPSHOT")"
  echo "kubectl quota snapshot ${scope[*]} ${connection[*]} > $KQ_SNAPSHOT"
  kubectl-quota snapshot "${scope[@]}" "${connection[@]}" >"$KQ_SNAPSHOT.tmp"
  status=$?
  echo "exit-code=$status" >>"${GITHUB_OUTPUT:-/dev/null}"
  if [[ $status != 0 ]]; then
    rm -f "$KQ_SNAPSHOT.tmp"
    exit "$status"
  fi
  # Replaced whole only once complete: a failed run leaves the last good snapshot.
  mv "$KQ_SNAPSHOT.tmp" "$KQ_SNAPSHOT"
  echo "### kubectl quota snapshot: $(grep -c '^- ' "$KQ_SNAPSHOT" || true) objects saved to $KQ_SNAPSHOT" >>"${GITHUB_STEP_SUMMARY:-/dev/null}"
  exit 0
fi

args=(check)
for f in ${KQ_FILES:-}; do args+=(-f "$f"); done
[[ -n ${KQ_KUSTOMIZE:-} ]] && args+=(-k "$KQ_KUSTOMIZE")
[[ ${KQ_RECURSIVE:-false} == true ]] && args+=(-R)
for s in ${KQ_STATE:-}; do args+=(--state "$s"); done
[[ -n ${KQ_NAMESPACE:-} ]] && args+=(-n "$KQ_NAMESPACE")
args+=("${connection[@]}")
[[ -n ${KQ_KUBERNETES_VERSION:-} ]] && args+=(--kubernetes-version "$KQ_KUBERNETES_VERSION")
if [[ -z ${KQ_FILES:-}${KQ_KUSTOMIZE:-} ]]; then
  echo "::error title=kubectl quota check::give the action files or kustomize"
  exit 2
fi
shown=(-o "${KQ_OUTPUT:-}")
[[ -z ${KQ_OUTPUT:-} ]] && shown=()

report=$(mktemp)
echo "kubectl quota ${args[*]} ${shown[*]}"
kubectl-quota "${args[@]}" "${shown[@]}" | tee "$report"
status=${PIPESTATUS[0]}
if [[ -n ${KQ_JUNIT_FILE:-} ]]; then
  # A second run for the file (a live check reads the cluster again).
  kubectl-quota "${args[@]}" -o junit >"$KQ_JUNIT_FILE" 2>/dev/null
  echo "JUnit report: $KQ_JUNIT_FILE"
fi
echo "exit-code=$status" >>"${GITHUB_OUTPUT:-/dev/null}"
case $status in
  0) verdict="everything fits" ;;
  1) verdict="something would be refused" ;;
  3) verdict="nothing would be refused, but the answer is incomplete (see the log)" ;;
  *) verdict="the check could not run (exit status $status; see the log)" ;;
esac
{
  echo "### kubectl quota check: $verdict"
  counts=$(grep -E '^[0-9]+ document\(s\) checked' "$report" | tail -n1)
  [[ -n $counts ]] && echo "$counts"
} >>"${GITHUB_STEP_SUMMARY:-/dev/null}"
rm -f "$report"
if [[ $status == 3 ]]; then
  echo "::warning title=kubectl quota check::nothing would be refused, but the answer is incomplete: see the warnings in the log"
  [[ ${KQ_FAIL_ON_INCOMPLETE:-false} != true ]] && exit 0
fi
exit "$status"
