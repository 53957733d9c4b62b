#!/usr/bin/env bash
# vpa.sh - the VerticalPodAutoscaler's admission controller (VPA v1.8.1, built from its Go module
# by autoscalers/build.sh) beside a running lab (lab.sh up), as a local process.
#
# Usage: tests/cluster/vpa.sh up|down|status|env|build
#   build   build (or reuse) the admission controller and take the CRDs from its module
#   up      build if needed; apply the module's VPA CRDs (deploy/vpa-v1-crd-gen.yaml); make a CA
#           and a serving certificate for 127.0.0.1; start vpa-admission-controller with the lab's
#           admin kubeconfig: it registers itself (MutatingWebhookConfiguration vpa-webhook-config,
#           pods CREATE and VPAs, failurePolicy Ignore) by URL https://127.0.0.1:KQ_VPA_PORT, so the
#           lab's API server calls it on loopback; wait until a dry-run pod goes through it
#   down    stop it and delete its webhook registration (the CRDs stay: the lab's etcd is
#           thrown away at its next `up`)
#   status  exit 0 if it runs and is registered
#   env     print `export KUBECTL_QUOTA_VPA=...`
#
# Environment:
#   KQ_LAB_DIR            the lab                                          [/tmp/kubectl-quota-lab]
#   KQ_VPA_DIR            state: certificates, logs, pid                   [$KQ_LAB_DIR-vpa]
#   KQ_VPA_PORT           the webhook's HTTPS port (all addresses)          [28310]
#   KQ_VPA_METRICS_PORT   its Prometheus/health port (127.0.0.1)           [28311]
#   KQ_LAB_CACHE          where the build is cached                         [/var/cache/kubectl-quota-lab]
#
# The admission controller alone: no recommender (a test writes status.recommendation through
# the status subresource, as the recommender would) and no updater (nothing is evicted; modes
# Initial and Recreate act the same at pod creation). It needs Kubernetes 1.21+ (batch/v1
# CronJobs, which it watches): `up` refuses the 1.20 lab.
set -euo pipefail
{
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NAME_TAG=vpa
LAB_DIR=${KQ_LAB_DIR:-/tmp/kubectl-quota-lab}
STATE=${KQ_VPA_DIR:-$LAB_DIR-vpa}
PORT=${KQ_VPA_PORT:-28310}
METRICS_PORT=${KQ_VPA_METRICS_PORT:-28311}
COMPONENTS=(vpa-admission-controller)
# shellcheck source=autoscalers/lib.sh
source "$HERE/autoscalers/lib.sh"

build() { "$HERE/autoscalers/build.sh" vpa; }

registered() {
  kc get mutatingwebhookconfiguration vpa-webhook-config -o jsonpath='{.webhooks[0].clientConfig.url}' 2>/dev/null |
    grep -qx "https://127.0.0.1:$PORT"
}

# A dry-run pod in kube-system passes through the webhook once it serves: its log (-v=4) then
# shows it admitted (no VPA targets it: no patch).
probe() {
  kc create --dry-run=server -n kube-system -o name -f - >/dev/null <<'P' || return 1
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"vpa-probe"},"spec":{"containers":[{"name":"c","image":"none"}]}}
P
  grep -q 'Admitting pod.*vpa-probe' "$STATE/vpa-admission-controller.log"
}

cmd_up() {
  local t0 bin; t0=$(now)
  lab_up || die "the lab in $LAB_DIR is not up (tests/cluster/lab.sh up)"
  # Its controller fetcher watches batch/v1 CronJobs: on a server without them (1.20) its
  # informers never sync and it never registers.
  local batch; batch=$(kc get --raw /apis/batch/v1 || true)   # all read first: no SIGPIPE under pipefail
  [[ $batch == *'"name":"cronjobs"'* ]] ||
    die "the lab serves no batch/v1 CronJobs, which VPA 1.8.1's admission controller watches (Kubernetes 1.21+)"
  bin=$(build)
  mkdir -p "$STATE"
  exec 9>"$STATE/.lock"; flock 9
  stop_all
  log "applying the VPA CRDs from the module ($bin/crds)"
  apply_crds "$bin/crds/"
  # Retried: a CRD just applied may have no status yet (kubectl wait then fails at once).
  wait_for "the VPA CRD established" 60 kc wait --for condition=established --timeout=5s crd/verticalpodautoscalers.autoscaling.k8s.io
  make_ca "$STATE"
  make_leaf "$STATE" webhook vpa-webhook "IP:127.0.0.1,DNS:localhost"
  # A registration left by an earlier run (another port) would send pods elsewhere.
  kc delete mutatingwebhookconfiguration vpa-webhook-config --ignore-not-found >/dev/null
  log "starting vpa-admission-controller (webhook https://127.0.0.1:$PORT)"
  start vpa-admission-controller "$bin/vpa-admission-controller" \
    --kubeconfig="$LAB_DIR/kubeconfig" \
    --client-ca-file="$STATE/ca.crt" --tls-cert-file="$STATE/webhook.crt" --tls-private-key="$STATE/webhook.key" \
    --port="$PORT" --address="127.0.0.1:$METRICS_PORT" \
    --register-by-url --webhook-address=https://127.0.0.1 --webhook-port="$PORT" \
    --webhook-timeout-seconds=10 --status-lease-namespace=kube-system --v=4
  # It registers itself 10 s after start (upstream's fixed delay).
  wait_for "the webhook's registration" 120 registered
  wait_for "a dry-run pod through the webhook" 60 probe
  log "up in $(since "$t0")s: vpa-admission-controller on https://127.0.0.1:$PORT"
  echo "export KUBECTL_QUOTA_VPA=$STATE"
}

unregister() { if lab_up; then kc delete mutatingwebhookconfiguration vpa-webhook-config --ignore-not-found >/dev/null || true; fi; }
cmd_down() { locked_down stop_all unregister; }

cmd_status() { pid_of vpa-admission-controller >/dev/null && registered; }

dispatch "${BASH_SOURCE[0]}" KUBECTL_QUOTA_VPA "${1:-}"
exit
}
