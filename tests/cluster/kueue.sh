#!/usr/bin/env bash
# kueue.sh - Kueue's controller manager (Kueue v0.17.0, built from its Go module by
# autoscalers/build.sh) beside a running lab (lab.sh up), as a local process.
#
# Usage: tests/cluster/kueue.sh up|down|status|env|build
#   build   build (or reuse) the kueue binary and take the CRDs from its module
#   up      build if needed; apply the module's CRDs server-side (the Workload CRD is 1.4 MB: too
#           large for client-side apply) and wait until they are established; namespace
#           kueue-system; a Configuration with leader election and internal certificate
#           management off, webhooks, metrics and health on loopback, only the batch/job
#           integration; a serving certificate for its webhook server and its metrics; start
#           kueue against the lab's admin kubeconfig; wait until it reports a ClusterQueue's
#           status (a probe queue, deleted after)
#   down    stop it (the CRDs stay: the lab's etcd is thrown away at its next `up`)
#   status  exit 0 if it runs
#   env     print `export KUBECTL_QUOTA_KUEUE=...`
#
# Environment:
#   KQ_LAB_DIR              the lab                                        [/tmp/kubectl-quota-lab]
#   KQ_KUEUE_DIR            state: configuration, certificates, logs, pid  [$KQ_LAB_DIR-kueue]
#   KQ_KUEUE_PORT           its webhook server's port (127.0.0.1)          [28320]
#   KQ_KUEUE_METRICS_PORT   its metrics port (127.0.0.1)                    [28321]
#   KQ_KUEUE_HEALTH_PORT    its health port (127.0.0.1)                     [28322]
#   KQ_LAB_CACHE            where the build is cached                       [/var/cache/kubectl-quota-lab]
#
# No webhook is registered with the API server: the tests create Jobs suspended themselves, as
# Kueue's Job webhook would make them. Admission is quota only, so no node is needed; the lab's
# Job controller creates the pods of an admitted Job and the API server applies ResourceQuota.
# Kueue's metrics server reads its certificate from /etc/kueue/metrics/certs (fixed upstream):
# `up` writes it there.
set -euo pipefail
{
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NAME_TAG=kueue
LAB_DIR=${KQ_LAB_DIR:-/tmp/kubectl-quota-lab}
STATE=${KQ_KUEUE_DIR:-$LAB_DIR-kueue}
PORT=${KQ_KUEUE_PORT:-28320}
METRICS_PORT=${KQ_KUEUE_METRICS_PORT:-28321}
HEALTH_PORT=${KQ_KUEUE_HEALTH_PORT:-28322}
COMPONENTS=(kueue)
METRICS_CERTS=/etc/kueue/metrics/certs
# shellcheck source=autoscalers/lib.sh
source "$HERE/autoscalers/lib.sh"

build() { "$HERE/autoscalers/build.sh" kueue; }

# A probe ClusterQueue gets a status (its Active condition) once Kueue's controllers run.
probe() {
  [[ $(kc get clusterqueue kq-probe -o jsonpath='{.status.conditions[?(@.type=="Active")].status}' 2>/dev/null) == True ]]
}

cmd_up() {
  local t0 bin; t0=$(now)
  lab_up || die "the lab in $LAB_DIR is not up (tests/cluster/lab.sh up)"
  bin=$(build)
  mkdir -p "$STATE/certs"
  exec 9>"$STATE/.lock"; flock 9
  stop_all
  log "applying Kueue's CRDs from the module ($bin/crds)"
  kc apply --server-side --force-conflicts -f "$bin/crds/" >/dev/null
  local c
  for c in resourceflavors clusterqueues localqueues workloads cohorts; do
    wait_for "the $c CRD established" 60 kc wait --for condition=established --timeout=5s "crd/$c.kueue.x-k8s.io"
  done
  kc get namespace kueue-system >/dev/null 2>&1 || kc create namespace kueue-system >/dev/null
  make_ca "$STATE"
  make_leaf "$STATE" serving kueue "IP:127.0.0.1,DNS:localhost"
  cp "$STATE/serving.crt" "$STATE/certs/tls.crt"; cp "$STATE/serving.key" "$STATE/certs/tls.key"
  mkdir -p "$METRICS_CERTS"
  cp "$STATE/serving.crt" "$METRICS_CERTS/tls.crt"; cp "$STATE/serving.key" "$METRICS_CERTS/tls.key"
  cat >"$STATE/config.yaml" <<EOF
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
manageJobsWithoutQueueName: false
health:
  healthProbeBindAddress: 127.0.0.1:$HEALTH_PORT
metrics:
  bindAddress: 127.0.0.1:$METRICS_PORT
webhook:
  host: 127.0.0.1
  port: $PORT
  certDir: $STATE/certs
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
integrations:
  frameworks: [batch/job]
EOF
  log "starting kueue (webhook server https://127.0.0.1:$PORT, not registered)"
  start kueue "$bin/kueue" --config="$STATE/config.yaml" --kubeconfig="$LAB_DIR/kubeconfig" \
    --feature-gates=VisibilityOnDemand=false --zap-log-level=2
  kc apply -f - >/dev/null <<'P'
{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"kq-probe"},"spec":{"namespaceSelector":{},"resourceGroups":[]}}
P
  wait_for "Kueue's controllers (a probe ClusterQueue Active)" 180 probe
  kc delete clusterqueue kq-probe --ignore-not-found >/dev/null
  log "up in $(since "$t0")s: kueue"
  echo "export KUBECTL_QUOTA_KUEUE=$STATE"
}

cmd_down() { locked_down stop_all; }

cmd_status() { pid_of kueue >/dev/null; }

dispatch "${BASH_SOURCE[0]}" KUBECTL_QUOTA_KUEUE "${1:-}"
exit
}
