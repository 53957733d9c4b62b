#!/usr/bin/env bash
# Runs every test of kubectl-quota, the real-cluster ones included:
#   1. builds (once, cached outside the work tree) and starts a real kube-apiserver +
#      kube-controller-manager + etcd on loopback (tests/cluster/lab.sh),
#   2. runs `cargo test` with KUBECTL_QUOTA_LAB pointing at it,
#   3. stops the cluster, whatever happened.
# Where the cluster cannot be provisioned (not root, not Debian), the live tests say so and
# skip, except under CI=true, where they fail.
set -euo pipefail
cd "$(dirname "$0")/.."

lab_up=0
if [[ ${KUBECTL_QUOTA_SKIP_LAB:-} != 1 ]]; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    if tests/cluster/lab.sh up; then
      lab_up=1
      export KUBECTL_QUOTA_LAB=${KQ_LAB_DIR:-/tmp/kubectl-quota-lab}
    else
      echo "run-all: the test cluster did not come up (see above)" >&2
      [[ ${CI:-} == true ]] && exit 1
    fi
  else
    echo "run-all: cannot provision the test cluster here (needs root and apt-get): live tests will skip" >&2
  fi
fi
cleanup() { [[ $lab_up == 1 ]] && tests/cluster/lab.sh down || true; }
trap cleanup EXIT

cargo test --locked "$@"
