{{/* The objects' name: one guard per cluster, named as `kubectl quota guard install` names it. */}}
{{- define "guard.name" -}}kubectl-quota-guard{{- end }}

{{- define "guard.labels" -}}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/name: kubectl-quota-guard
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{- define "guard.selector" -}}
app.kubernetes.io/name: kubectl-quota-guard
{{- end }}

{{/* The service name the serving certificate is for. */}}
{{- define "guard.host" -}}{{ printf "kubectl-quota-guard.%s.svc" .Release.Namespace }}{{- end }}
