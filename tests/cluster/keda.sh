#!/usr/bin/env bash
# keda.sh - KEDA v2.21.0 (operator and metrics server, built from its Go module by
# autoscalers/build.sh) beside a running lab (lab.sh up), as local processes.
#
# Usage: tests/cluster/keda.sh up|down|status|env|build
#   build   build (or reuse) keda-operator and keda-metrics-apiserver, CRDs from the module
#   up      build if needed; apply the module's CRDs (config/crd/bases); make a CA and one
#           certificate (the operator's gRPC metrics service on 127.0.0.1, the metrics server's
#           serving name keda-metrics-apiserver.keda.svc; both use it as client and server, as
#           KEDA's own cert rotation does); start the operator and the metrics server with the
#           lab's admin kubeconfig; register the metrics server as the APIService
#           v1beta1.external.metrics.k8s.io (the module's config/metrics-server/api_service.yaml,
#           with our CA) behind a Service without selector whose Endpoints name this machine's
#           address (KQ_KEDA_HOST_IP): the lab's API server (--enable-aggregator-routing, the
#           front-proxy flags) proxies to it there. Endpoints may not name loopback, hence a
#           non-loopback local address. Waits until the APIService is Available.
#   down    stop both, delete the APIService (the lab's etcd is thrown away at its next `up`)
#   status  exit 0 if both run and the APIService is Available
#   env     print `export KUBECTL_QUOTA_KEDA=...`
#
# Environment:
#   KQ_LAB_DIR               the lab                                         [/tmp/kubectl-quota-lab]
#   KQ_KEDA_DIR              state: certificates, logs, pids                 [$KQ_LAB_DIR-keda]
#   KQ_KEDA_PORT_BASE        five ports from here: operator gRPC, operator metrics, operator
#                            health, metrics server HTTPS, metrics server /metrics  [28300]
#   KQ_KEDA_HOST_IP          the address the metrics server listens on and the Endpoints
#                            name                      [the first global IPv4 address of this host]
#   KQ_LAB_CACHE             where the build is cached                       [/var/cache/kubectl-quota-lab]
#
# KEDA 2.21 creates autoscaling/v2 HPAs: it needs Kubernetes 1.23+ (the 1.20 lab serves only
# v1 and v2beta2; `up` refuses it).
set -euo pipefail
{
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NAME_TAG=keda
LAB_DIR=${KQ_LAB_DIR:-/tmp/kubectl-quota-lab}
STATE=${KQ_KEDA_DIR:-$LAB_DIR-keda}
BASE=${KQ_KEDA_PORT_BASE:-28300}
GRPC_PORT=$BASE OP_METRICS_PORT=$((BASE + 1)) OP_HEALTH_PORT=$((BASE + 2)) API_PORT=$((BASE + 3)) API_METRICS_PORT=$((BASE + 4))
COMPONENTS=(keda-operator keda-metrics-apiserver)
# shellcheck source=autoscalers/lib.sh
source "$HERE/autoscalers/lib.sh"

build() { "$HERE/autoscalers/build.sh" keda; }

host_ip() {
  if [[ -n ${KQ_KEDA_HOST_IP:-} ]]; then echo "$KQ_KEDA_HOST_IP"; return; fi
  ip -4 -o addr show scope global | awk '{ sub(/\/.*/, "", $4); print $4; exit }'
}

available() {
  [[ $(kc get apiservice v1beta1.external.metrics.k8s.io -o jsonpath='{.status.conditions[?(@.type=="Available")].status}') == True ]] &&
    kc get --raw /apis/external.metrics.k8s.io/v1beta1 >/dev/null
}

cmd_up() {
  local t0 bin ip; t0=$(now)
  lab_up || die "the lab in $LAB_DIR is not up (tests/cluster/lab.sh up)"
  # Asked by path, not `kc api-versions | grep -q`: grep's early exit SIGPIPEs kubectl (one
  # write per line) and under pipefail the lab then reads as serving no autoscaling/v2; and
  # api-versions fails whole when any aggregated API (a stopped metrics server) is down.
  local i; for ((i = 0; i < 30; i++)); do kc get --raw /apis/autoscaling/v2 >/dev/null 2>&1 && break; sleep 1; done
  kc get --raw /apis/autoscaling/v2 >/dev/null ||
    die "the lab serves no autoscaling/v2 (KEDA 2.21 creates autoscaling/v2 HPAs: Kubernetes 1.23+)"
  ip=$(host_ip)
  [[ -n $ip ]] || die "no global IPv4 address on this host for the metrics server's Endpoints (set KQ_KEDA_HOST_IP)"
  bin=$(build)
  mkdir -p "$STATE/certs"
  exec 9>"$STATE/.lock"; flock 9
  stop_all
  log "applying KEDA's CRDs from the module ($bin/crds)"
  apply_crds "$bin/crds/"
  # Retried: just after the apply a CRD may have no status yet, and kubectl wait then fails
  # at once (".status.conditions accessor error") instead of waiting.
  wait_for "KEDA's CRDs established" 60 kc wait --for condition=established --timeout=5s crd/scaledobjects.keda.sh crd/scaledjobs.keda.sh
  make_ca "$STATE/certs"
  make_leaf "$STATE/certs" tls keda \
    "IP:127.0.0.1,IP:$ip,DNS:localhost,DNS:keda-metrics-apiserver.keda.svc,DNS:keda-operator.keda.svc"
  kc create namespace keda --dry-run=client -o yaml | kc apply -f - >/dev/null
  local env=(env KUBECONFIG="$LAB_DIR/kubeconfig" WATCH_NAMESPACE= POD_NAMESPACE=keda KEDA_CLUSTER_OBJECT_NAMESPACE=keda)
  log "starting keda-operator (gRPC metrics service 127.0.0.1:$GRPC_PORT)"
  start keda-operator "${env[@]}" "$bin/keda-operator" \
    --metrics-bind-address="127.0.0.1:$OP_METRICS_PORT" --health-probe-bind-address="127.0.0.1:$OP_HEALTH_PORT" \
    --metrics-service-bind-address="127.0.0.1:$GRPC_PORT" --cert-dir="$STATE/certs" --ca-dir="$STATE/certs" \
    --enable-cert-rotation=false --leader-elect=false --zap-log-level=info
  wait_for "keda-operator's health" 120 curl -sf --max-time 2 "http://127.0.0.1:$OP_HEALTH_PORT/readyz"
  log "starting keda-metrics-apiserver (https://$ip:$API_PORT)"
  start keda-metrics-apiserver "${env[@]}" "$bin/keda-metrics-apiserver" \
    --secure-port="$API_PORT" --bind-address="$ip" --port="$API_METRICS_PORT" \
    --cert-dir="$STATE/certs" --tls-cert-file="$STATE/certs/tls.crt" --tls-private-key-file="$STATE/certs/tls.key" \
    --client-ca-file="$STATE/certs/ca.crt" \
    --lister-kubeconfig="$LAB_DIR/kubeconfig" --authentication-kubeconfig="$LAB_DIR/kubeconfig" \
    --authorization-kubeconfig="$LAB_DIR/kubeconfig" \
    --metrics-service-address="127.0.0.1:$GRPC_PORT" --zap-log-level=info
  # The Service the APIService names, its Endpoints on this host's address.
  kc apply -f - >/dev/null <<Y
apiVersion: v1
kind: Service
metadata: {name: keda-metrics-apiserver, namespace: keda}
spec:
  ports: [{name: https, port: 443, targetPort: $API_PORT, protocol: TCP}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: keda-metrics-apiserver, namespace: keda}
subsets:
- addresses: [{ip: "$ip"}]
  ports: [{name: https, port: $API_PORT, protocol: TCP}]
Y
  local ca; ca=$(base64 -w0 <"$STATE/certs/ca.crt")
  kc apply -f "$bin/apiservice.yaml" >/dev/null
  kc patch apiservice v1beta1.external.metrics.k8s.io --type=merge \
    -p "{\"spec\":{\"caBundle\":\"$ca\",\"insecureSkipTLSVerify\":false,\"service\":{\"name\":\"keda-metrics-apiserver\",\"namespace\":\"keda\",\"port\":443}}}" >/dev/null
  wait_for "APIService v1beta1.external.metrics.k8s.io Available" 180 available
  log "up in $(since "$t0")s"
  echo "export KUBECTL_QUOTA_KEDA=$STATE"
}

# The APIService first: the lab stops asking a metrics server that is going away.
unregister() { if lab_up; then kc delete apiservice v1beta1.external.metrics.k8s.io --ignore-not-found >/dev/null || true; fi; }
cmd_down() { locked_down unregister stop_all; }

cmd_status() { pid_of keda-operator >/dev/null && pid_of keda-metrics-apiserver >/dev/null && available; }

dispatch "${BASH_SOURCE[0]}" KUBECTL_QUOTA_KEDA "${1:-}"
exit
}
