#!/usr/bin/env bash
# Runs every test of kubectl-quota, the real-cluster ones included:
#   1. builds (once, cached outside the work tree) and starts two real Kubernetes 1.20 control
#      planes on loopback (tests/cluster/lab.sh): the default one, and one whose API server runs
#      with the corpus's ResourceQuota admission configuration (limitedResources),
#   2. runs `cargo test` with KUBECTL_QUOTA_LAB / KUBECTL_QUOTA_LAB_LIMITED pointing at them,
#   3. stops both, whatever happened.
# Where the clusters cannot be provisioned (not root, no apt-get), the live tests say so and
# skip, except under CI=true, where they fail.
set -euo pipefail
cd "$(dirname "$0")/.."

LAB=${KQ_LAB_DIR:-/tmp/kubectl-quota-lab}
LIMITED=${LAB}-limited
ADMISSION=$PWD/tests/conformance/4000-s-limited-scope-no-quota/admission.yaml
lab() { tests/cluster/lab.sh "$@"; }
limited() { KQ_LAB_DIR=$LIMITED KQ_LAB_PORT=27443 KQ_LAB_ETCD_PORT=23379 KQ_LAB_ADMISSION_CONFIG=$ADMISSION tests/cluster/lab.sh "$@"; }

up=0
cleanup() {
  if [[ $up == 1 ]]; then
    limited down >/dev/null 2>&1 || true
    KQ_LAB_DIR=$LAB lab down >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

if [[ ${KUBECTL_QUOTA_SKIP_LAB:-} != 1 ]]; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    up=1
    # Start from stopped clusters: leftovers from another checkout may run another config.
    limited down >/dev/null 2>&1 || true
    KQ_LAB_DIR=$LAB lab down >/dev/null 2>&1 || true
    if KQ_LAB_DIR=$LAB lab up && limited up; then
      export KUBECTL_QUOTA_LAB=$LAB KUBECTL_QUOTA_LAB_LIMITED=$LIMITED
    else
      echo "run-all: the test clusters did not come up (see above)" >&2
      [[ ${CI:-} == true ]] && exit 1
    fi
  else
    echo "run-all: cannot provision the test clusters here (needs root and apt-get): live tests will skip" >&2
  fi
fi

cargo test --locked "$@"
