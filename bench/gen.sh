# gen.sh - deterministic input generators for the offline benchmarks (sourced, not run).
#
#   gen_state PODS DEPLOYMENTS      20 quotas sized so ~97% of gen_manifest's requests fit, a
#                                   LimitRange and three PriorityClasses (namespace bench)
#   gen_manifest PODS DEPLOYMENTS   PODS mixed pods and DEPLOYMENTS Deployments of 1-10 replicas
#   gen_tiny_pods N                 N one-container pods with nothing but a name and an image
#   gen_scoped_state QUOTAS         QUOTAS quotas, each with a PriorityClass scope selector over
#                                   30 classes (pc-0 .. pc-29), pods and requests.cpu limited
#   gen_scoped_pods N               N pods spread over the 30 priority classes, 100m cpu each
#   gen_replicas_deployment N       one Deployment of N replicas (no pod quota caps it)
# Needs: awk.

# gen_state PODS DEPLOYMENTS > state.yaml
gen_state() {
  awk -v pods="$1" -v deps="$2" '
  function quota(name, extra, hard, used) {
    printf "- apiVersion: v1\n  kind: ResourceQuota\n  metadata: {name: %s, namespace: bench}\n  spec:\n    hard: {%s}\n%s  status:\n    hard: {%s}\n    used: {%s}\n", name, hard, extra, hard, used
  }
  BEGIN {
    # Requests of the generated input (measured with quotas out of the way): 839m cpu and
    # 659Mi per pod, 250m and 128Mi per Deployment replica. The tightest compute quota allows
    # 97% of that: the last documents are refused.
    cpu = int((pods * 839 + deps * 5.5 * 250) * 0.97)
    mem = int((pods * 659 + deps * 5.5 * 128) * 0.97)
    print "apiVersion: v1\nkind: List\nitems:"
    for (i = 0; i < 4; i++) {
      f = 2 ^ i
      quota("compute-" i, "", sprintf("requests.cpu: %dm, requests.memory: %dMi, limits.cpu: %dm, limits.memory: %dMi, pods: \"%d\"", cpu * f, mem * f, cpu * 4 * f, mem * 4 * f, (pods + deps * 10) * f),
            "requests.cpu: \"0\", requests.memory: \"0\", limits.cpu: \"0\", limits.memory: \"0\", pods: \"0\"")
    }
    big = "pods: \"1000000\", requests.cpu: \"1000000\""
    zero = "pods: \"0\", requests.cpu: \"0\""
    quota("scope-terminating", "    scopes: [Terminating]\n", big, zero)
    quota("scope-notterminating", "    scopes: [NotTerminating]\n", big, zero)
    quota("scope-notbesteffort", "    scopes: [NotBestEffort]\n", big, zero)
    quota("scope-besteffort", "    scopes: [BestEffort]\n", "pods: \"1000000\"", "pods: \"0\"")
    quota("scope-terminating-besteffort", "    scopes: [Terminating, BestEffort]\n", "pods: \"1000000\"", "pods: \"0\"")
    n = split("In [high]|In [low, medium]|In [medium]|NotIn [high]|Exists", sel, "|")
    split("high|low-medium|medium|not-high|exists", sname, "|")
    for (i = 1; i <= n; i++) {
      split(sel[i], op, " ")
      values = substr(sel[i], length(op[1]) + 2)
      expr = "{scopeName: PriorityClass, operator: " op[1] (values == "" ? "" : ", values: " values) "}"
      quota("pc-" sname[i], "    scopeSelector: {matchExpressions: [" expr "]}\n", big ", limits.memory: 100Ti", zero ", limits.memory: \"0\"")
    }
    quota("pc-high-notterminating", "    scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}, {scopeName: NotTerminating, operator: Exists}]}\n", big, zero)
    quota("counts", "", "count/pods: \"1000000\", count/deployments.apps: \"100000\", count/replicasets.apps: \"100000\", services: \"10\"",
          "count/pods: \"0\", count/deployments.apps: \"0\", count/replicasets.apps: \"0\", services: \"0\"")
    quota("storage", "", "requests.storage: 10Ti, persistentvolumeclaims: \"100\"", "requests.storage: \"0\", persistentvolumeclaims: \"0\"")
    quota("ephemeral", "", "requests.ephemeral-storage: 100Ti, limits.ephemeral-storage: 200Ti", "requests.ephemeral-storage: \"0\", limits.ephemeral-storage: \"0\"")
    quota("gpu", "", "requests.nvidia.com/gpu: \"64\"", "requests.nvidia.com/gpu: \"0\"")
    quota("objects", "", "configmaps: \"1000\", secrets: \"1000\"", "configmaps: \"0\", secrets: \"0\"")
    print "- apiVersion: v1\n  kind: LimitRange\n  metadata: {name: defaults, namespace: bench}\n  spec:\n    limits:\n    - type: Container\n      default: {cpu: 500m, memory: 512Mi}\n      defaultRequest: {cpu: 250m, memory: 256Mi}"
    print "- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 100000}"
    print "- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: medium}, value: 1000}"
    print "- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: low}, value: 100, globalDefault: true}"
  }'
}

# gen_manifest PODS DEPLOYMENTS > manifest.yaml
gen_manifest() {
  awk -v pods="$1" -v deps="$2" '
  function res(k,   cpu, mem) {
    cpu = 100 * (1 + k % 8) "m"; mem = 64 * (1 + (k * 7) % 8) "Mi"
    if (k % 5 == 0) return "{limits: {cpu: " cpu ", memory: " mem "}}"
    # Requests only: the LimitRange adds limits 500m/512Mi, so stay below them.
    if (k % 5 == 1) return "{requests: {cpu: " 100 * (1 + k % 5) "m, memory: " mem "}}"
    if (k % 5 == 2) return "{requests: {cpu: " cpu ", memory: " mem "}, limits: {cpu: \"2\", memory: 1Gi, ephemeral-storage: 1Gi}}"
    if (k % 5 == 3) return "{requests: {cpu: " cpu ", memory: " mem ", ephemeral-storage: 500Mi}, limits: {cpu: \"2\", memory: 1Gi}}"
    return "{}"
  }
  BEGIN {
    split("|high|medium|low", pc, "|")
    for (i = 0; i < pods; i++) {
      printf "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-%d, labels: {app: a%d}}\nspec:\n", i, i % 17
      p = pc[1 + i % 4]
      if (p != "") printf "  priorityClassName: %s\n", p
      if (i % 5 == 0) print "  activeDeadlineSeconds: 3600"
      inits = i % 3
      if (inits > 0) {
        print "  initContainers:"
        for (j = 0; j < inits; j++)
          printf "  - {name: init-%d, image: busybox%s, resources: %s}\n", j, ((i + j) % 3 == 0 ? ", restartPolicy: Always" : ""), res(i * 3 + j + 1)
      }
      print "  containers:"
      for (j = 0; j <= (i * 7) % 3; j++)
        printf "  - {name: c%d, image: registry.example.com/app:%d, resources: %s}\n", j, i % 7, res(i * 11 + j)
    }
    for (d = 0; d < deps; d++) {
      printf "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web-%d}\nspec:\n  replicas: %d\n  selector: {matchLabels: {app: web-%d}}\n  template:\n    metadata: {labels: {app: web-%d}}\n    spec:\n", d, 1 + d % 10, d, d
      if (d % 3 == 0) print "      priorityClassName: high"
      print "      containers:\n      - {name: app, image: web:1, resources: {requests: {cpu: 250m, memory: 128Mi}, limits: {cpu: \"1\", memory: 512Mi}}}"
    }
  }'
}

# gen_tiny_pods N > manifest.yaml
gen_tiny_pods() {
  awk -v n="$1" 'BEGIN {
    for (i = 0; i < n; i++) printf "---\napiVersion: v1\nkind: Pod\nmetadata: {name: tiny-%d}\nspec: {containers: [{name: c, image: x}]}\n", i
  }'
}

# gen_scoped_state QUOTAS > state.yaml
gen_scoped_state() {
  awk -v n="$1" 'BEGIN {
    print "apiVersion: v1\nkind: List\nitems:"
    for (i = 0; i < n; i++)
      printf "- apiVersion: v1\n  kind: ResourceQuota\n  metadata: {name: scoped-%05d, namespace: bench}\n  spec:\n    hard: {pods: \"100000\", requests.cpu: \"1000\"}\n    scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [pc-%d]}]}\n  status:\n    hard: {pods: \"100000\", requests.cpu: \"1000\"}\n    used: {pods: \"0\", requests.cpu: \"0\"}\n", i, i % 30
    for (c = 0; c < 30; c++) printf "- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: pc-%d}, value: %d}\n", c, 1000 + c
  }'
}

# gen_scoped_pods N > manifest.yaml
gen_scoped_pods() {
  awk -v n="$1" 'BEGIN {
    for (i = 0; i < n; i++)
      printf "---\napiVersion: v1\nkind: Pod\nmetadata: {name: sp-%d}\nspec:\n  priorityClassName: pc-%d\n  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}, limits: {cpu: 100m}}}]\n", i, i % 30
  }'
}

# gen_replicas_deployment N > manifest.yaml
gen_replicas_deployment() {
  printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: huge}\nspec:\n  replicas: %s\n  selector: {matchLabels: {app: huge}}\n  template:\n    metadata: {labels: {app: huge}}\n    spec:\n      containers: [{name: c, image: x, resources: {requests: {cpu: 1m}}}]\n' "$1"
}
