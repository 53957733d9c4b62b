#!/usr/bin/env bash
# Runs every test of kubectl-quota, the real-cluster ones included:
#   1. builds (once, cached outside the work tree) the control planes of two Kubernetes releases
#      (tests/cluster/lab.sh): 1.20, which the conformance corpus was recorded on, and a modern
#      one (KQ_LAB_MODERN_VERSION, default 1.37, the newest),
#   2. starts two 1.20 control planes on loopback: the default one, and one whose API server runs
#      with the corpus's ResourceQuota admission configuration (limitedResources), and runs
#      `cargo test` with KUBECTL_QUOTA_LAB / KUBECTL_QUOTA_LAB_LIMITED pointing at them,
#   3. stops those, starts the same pair on the modern release, and runs every live test target
#      (tests/live*.rs) again against it, with KUBECTL_QUOTA_LAB_VERSION saying which release,
#      then bench/review-shapes.sh with CHECK=1: a release build of the guard, against it, given
#      the largest reviews of every shape and the hostile ones, each answered within 5 s and
#      200 MB (a failed bound fails the run),
#   4. on 1.37, then restarts the default modern cluster empty, starts a node in it
#      (tests/cluster/node.sh: containerd, kubelet, kube-scheduler, metrics-server, images built
#      here; built once with the servers) and runs tests/live_node.rs, the one target that needs pods to run, with
#      KUBECTL_QUOTA_NODE; the other targets never see a node (their pods must stay Pending),
#   5. on the modern release, before the node, runs tests/live_autoscalers.rs with the real
#      autoscalers beside the default cluster: KEDA's operator and metrics server
#      (tests/cluster/keda.sh) and the VPA admission controller (tests/cluster/vpa.sh), built
#      once from their Go modules (tests/cluster/autoscalers/build.sh) and started only for that
#      target (the VPA webhook sees every pod); on 1.20 that target runs its HPA test alone,
#   6. stops the autoscalers, the node and every cluster, whatever happened, and fails if any run
#      failed.
# Before all of it, `cargo fmt --check` and `cargo clippy --all-targets -- -D warnings`: a
# failure there ends the run at once.
# Where the clusters cannot be provisioned (not root, no apt-get), the live tests say so and
# skip, except under CI=true, where they fail. KQ_LAB_MODERN_VERSION=none skips step 3.
set -euo pipefail
# The whole script is one block, read before it runs: editing this file while a copy runs (a
# build takes many minutes) cannot change what that copy does next.
{
cd "$(dirname "$0")/.."

LAB=${KQ_LAB_DIR:-/tmp/kubectl-quota-lab}
LIMITED=${LAB}-limited
MODERN_VERSION=${KQ_LAB_MODERN_VERSION:-1.37}
MODERN=${LAB}-$MODERN_VERSION
MODERN_LIMITED=${MODERN}-limited
ADMISSION=$PWD/tests/conformance/4000-s-limited-scope-no-quota/admission.yaml
export KQ_LAB_VERSION=1.20
lab() { KQ_LAB_DIR=$LAB tests/cluster/lab.sh "$@"; }
limited() { KQ_LAB_DIR=$LIMITED KQ_LAB_PORT=27443 KQ_LAB_ETCD_PORT=23379 KQ_LAB_ADMISSION_CONFIG=$ADMISSION tests/cluster/lab.sh "$@"; }
mlab() { KQ_LAB_VERSION=$MODERN_VERSION KQ_LAB_DIR=$MODERN KQ_LAB_PORT=26543 KQ_LAB_ETCD_PORT=22479 tests/cluster/lab.sh "$@"; }
mlimited() {
  KQ_LAB_VERSION=$MODERN_VERSION KQ_LAB_DIR=$MODERN_LIMITED KQ_LAB_PORT=27543 KQ_LAB_ETCD_PORT=23479 \
    KQ_LAB_ADMISSION_CONFIG=$ADMISSION tests/cluster/lab.sh "$@"
}
[[ $MODERN_VERSION == none ]] && MODERN_VERSION=
# The node: settable like the labs' ports, for a second run beside this one.
node() {
  KQ_LAB_DIR=$MODERN KQ_NODE_VERSION=$MODERN_VERSION KQ_NODE_DIR=${KQ_NODE_DIR:-$MODERN-node} tests/cluster/node.sh "$@"
}
# Releases the node harness has a kubelet for.
node_release() { [[ $MODERN_VERSION == 1.37 ]]; }
# live_node skips without complaint where the harness runs no node (1.20, other modern releases).
export KUBECTL_QUOTA_NODE=none
# The autoscalers beside the default modern cluster, for live_autoscalers alone (settable like
# the labs' ports, for a second run beside this one). Until they run, that target's KEDA and VPA
# tests skip without complaint (KEDA 2.21 needs autoscaling/v2 HPAs: not on 1.20).
keda() { KQ_LAB_DIR=$MODERN KQ_KEDA_DIR=${KQ_KEDA_DIR:-$MODERN-keda} tests/cluster/keda.sh "$@"; }
vpa() { KQ_LAB_DIR=$MODERN KQ_VPA_DIR=${KQ_VPA_DIR:-$MODERN-vpa} tests/cluster/vpa.sh "$@"; }
autoscalers_built=0
export KUBECTL_QUOTA_KEDA=none KUBECTL_QUOTA_VPA=none
# Kueue beside the modern cluster, for live_kueue alone; until it runs that target skips quietly.
kueue() { KQ_LAB_DIR=$MODERN KQ_KUEUE_DIR=${KQ_KUEUE_DIR:-$MODERN-kueue} tests/cluster/kueue.sh "$@"; }
kueue_built=0
export KUBECTL_QUOTA_KUEUE=none

t_start=$(date +%s)
phase() { echo "run-all: [$(($(date +%s) - t_start))s] $*" >&2; }
# Free disk, said at the start and the end: a full disk fails a build with errors far from it.
free_disk() { df -h --output=avail . 2>/dev/null | tail -1 | tr -d ' '; }
phase "$(free_disk) free on this disk"

provision=0
stop_labs() {
  if [[ $provision == 1 ]]; then
    limited down >/dev/null 2>&1 || true
    lab down >/dev/null 2>&1 || true
    if [[ -n $MODERN_VERSION ]]; then
      keda down >/dev/null 2>&1 || true
      vpa down >/dev/null 2>&1 || true
      kueue down >/dev/null 2>&1 || true
      if node_release; then node down >/dev/null 2>&1 || true; fi
      mlimited down >/dev/null 2>&1 || true
      mlab down >/dev/null 2>&1 || true
    fi
  fi
}
trap 'stop_labs; phase "done ($(free_disk) free on this disk)"' EXIT

# no_lab WHY: a cluster did not come up. Under CI that fails the run.
no_lab() {
  echo "run-all: $1 (see above)" >&2
  [[ ${CI:-} == true ]] && exit 1
  return 0
}

# The Rust habits first: they take a minute or two and fail before the long builds do.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  phase "adding rustfmt and clippy (rustup)"
  rustup component add rustfmt clippy
fi
phase "cargo fmt --check; cargo clippy --all-targets -- -D warnings"
cargo fmt --all --check
cargo clippy --locked --workspace --all-targets -- -D warnings

if [[ ${KUBECTL_QUOTA_SKIP_LAB:-} != 1 ]]; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    provision=1
    # Start from stopped clusters: leftovers from another checkout may run another config.
    stop_labs
    phase "building (or reusing) Kubernetes 1.20${MODERN_VERSION:+ and $MODERN_VERSION}"
    # Both at once: a cold 1.20 build spends minutes in single-threaded steps (fetching and
    # unpacking the source, make's setup) that the other build's compiling fills.
    lab build & build120=$!
    if [[ -n $MODERN_VERSION ]]; then mlab build & build_modern=$!; fi
    wait "$build120" || no_lab "Kubernetes 1.20 could not be built"
    if [[ -n $MODERN_VERSION ]]; then
      wait "$build_modern" || { no_lab "Kubernetes $MODERN_VERSION could not be built"; MODERN_VERSION=; }
    fi
    # The node's kubelet and kube-scheduler after the servers (they share the Go build cache;
    # its apt-get never races the 1.20 build's).
    if [[ -n $MODERN_VERSION ]] && node_release; then
      phase "building (or reusing) the $MODERN_VERSION node"
      node build || no_lab "the $MODERN_VERSION node could not be built"
    fi
    # KEDA and the VPA admission controller, after the servers (they share the Go build cache).
    if [[ -n $MODERN_VERSION ]]; then
      phase "building (or reusing) KEDA and the VPA admission controller"
      # Cold, KEDA's operator compiles every scaler's cloud SDK: about 20 minutes of CPU on 2
      # cores and several GB of Go's work directory (tests/cluster/README.md).
      if tests/cluster/autoscalers/build.sh keda >/dev/null && tests/cluster/autoscalers/build.sh vpa >/dev/null; then
        autoscalers_built=1
      else
        no_lab "KEDA or the VPA admission controller could not be built"
      fi
      phase "building (or reusing) Kueue"
      if tests/cluster/autoscalers/build.sh kueue >/dev/null; then
        kueue_built=1
      else
        no_lab "Kueue could not be built"
      fi
      # The Helm client the guard's chart is tested with (tests/helm.rs): a few minutes cold.
      phase "building (or reusing) helm"
      tests/cluster/autoscalers/build.sh helm >/dev/null || echo "run-all: helm could not be built: tests/helm.rs will say why" >&2
    fi
    phase "starting the 1.20 clusters"
    if lab up && limited up; then
      export KUBECTL_QUOTA_LAB=$LAB KUBECTL_QUOTA_LAB_LIMITED=$LIMITED KUBECTL_QUOTA_LAB_VERSION=1.20
    else
      no_lab "the 1.20 test clusters did not come up"
    fi
  else
    echo "run-all: cannot provision the test clusters here (needs root and apt-get): live tests will skip" >&2
    MODERN_VERSION=
  fi
else
  MODERN_VERSION=
fi

# tests/ci.rs runs the real pre-commit tool and reads JUnit reports with junitparser (validated
# by xmlschema): installed here when missing and this machine can (root); without them those
# tests skip, except under CI=true, where they fail.
if ! command -v pre-commit >/dev/null || ! python3 -c 'import junitparser, xmlschema' 2>/dev/null; then
  if [[ $(id -u) == 0 ]] && command -v pip3 >/dev/null; then
    phase "installing pre-commit, junitparser and xmlschema (pip3)"
    pip3 install --quiet pre-commit junitparser xmlschema || echo "run-all: pip3 could not install the CI tools" >&2
  else
    echo "run-all: pre-commit, junitparser or xmlschema missing and cannot be installed here: tests/ci.rs will skip them" >&2
  fi
fi

status=0
phase "cargo test (every target; live ones against Kubernetes ${KUBECTL_QUOTA_LAB_VERSION:-none})"
# --no-fail-fast: a failing target (a unit test, say) must not hide the live targets' results.
cargo test --locked --no-fail-fast "$@" || status=$?

if [[ -n $MODERN_VERSION ]]; then
  limited down >/dev/null 2>&1 || true
  lab down >/dev/null 2>&1 || true
  unset KUBECTL_QUOTA_LAB KUBECTL_QUOTA_LAB_LIMITED KUBECTL_QUOTA_LAB_VERSION
  phase "starting the $MODERN_VERSION clusters"
  if mlab up && mlimited up; then
    export KUBECTL_QUOTA_LAB=$MODERN KUBECTL_QUOTA_LAB_LIMITED=$MODERN_LIMITED KUBECTL_QUOTA_LAB_VERSION=$MODERN_VERSION
    targets=()
    for f in tests/live*.rs; do
      [[ $f == tests/live_node.rs || $f == tests/live_autoscalers.rs || $f == tests/live_kueue.rs ]] || targets+=(--test "$(basename "$f" .rs)")
    done
    phase "cargo test ${targets[*]} against Kubernetes $MODERN_VERSION"
    cargo test --locked --no-fail-fast "${targets[@]}" "$@" || status=$?
    # The guard's largest reviews of every shape and the hostile ones, through a release build
    # against this lab: each answered within 5 s and 200 MB (the bench's targets are tighter).
    phase "bench/review-shapes.sh: the guard's largest reviews against Kubernetes $MODERN_VERSION, bounds asserted"
    CHECK=1 ONLY=lab KQ_LAB_DIR=$MODERN KQ_LAB_PORT=26543 bench/review-shapes.sh || status=$?
    if [[ $autoscalers_built == 1 ]]; then
      phase "starting KEDA and the VPA admission controller beside the $MODERN_VERSION cluster"
      if keda up >/dev/null && vpa up >/dev/null; then
        export KUBECTL_QUOTA_KEDA=${KQ_KEDA_DIR:-$MODERN-keda} KUBECTL_QUOTA_VPA=${KQ_VPA_DIR:-$MODERN-vpa}
      else
        no_lab "KEDA or the VPA admission controller did not come up beside the $MODERN_VERSION cluster"
      fi
    fi
    phase "cargo test --test live_autoscalers against Kubernetes $MODERN_VERSION"
    cargo test --locked --no-fail-fast --test live_autoscalers "$@" || status=$?
    keda down >/dev/null 2>&1 || true
    vpa down >/dev/null 2>&1 || true
    export KUBECTL_QUOTA_KEDA=none KUBECTL_QUOTA_VPA=none
    if [[ $kueue_built == 1 ]]; then
      phase "starting Kueue beside the $MODERN_VERSION cluster"
      if kueue up >/dev/null; then
        export KUBECTL_QUOTA_KUEUE=${KQ_KUEUE_DIR:-$MODERN-kueue}
      else
        no_lab "Kueue did not come up beside the $MODERN_VERSION cluster"
      fi
    fi
    phase "cargo test --test live_kueue against Kubernetes $MODERN_VERSION"
    cargo test --locked --no-fail-fast --test live_kueue "$@" || status=$?
    kueue down >/dev/null 2>&1 || true
    export KUBECTL_QUOTA_KUEUE=none
    if node_release; then
      # A fresh cluster for the node: the suites above leave Pending pods behind, which a
      # scheduler would now place on the node (and their requests could leave no room).
      phase "restarting the $MODERN_VERSION cluster empty and starting a node in it"
      mlab down >/dev/null 2>&1 || true
      if mlab up >/dev/null && node up; then
        export KUBECTL_QUOTA_NODE=${KQ_NODE_DIR:-$MODERN-node}
        phase "cargo test --test live_node against Kubernetes $MODERN_VERSION with a node"
        cargo test --locked --no-fail-fast --test live_node "$@" || status=$?
        node down || true
      else
        no_lab "the node did not come up in the $MODERN_VERSION cluster"
      fi
    fi
  else
    no_lab "the $MODERN_VERSION test clusters did not come up"
  fi
fi
exit "$status"
exit
}
