{{/* The release's full name: the release name, or <release>-respawn when it does not say respawn. */}}
{{- define "respawn.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "respawn.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{/* The kustomize base's labels, and Helm's: instance (also a selector label), managed-by, chart. The
     Deployment adds app.kubernetes.io/version, as the base does. */}}
{{- define "respawn.labels" -}}
{{ include "respawn.selectorLabels" . }}
app.kubernetes.io/part-of: respawn
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "respawn.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "respawn.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "respawn.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The namespace of the leader-election Lease (the code's default is the pod's namespace). */}}
{{- define "respawn.leaderNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace -}}
{{- end -}}

{{/* The leader-election Lease: the operator's default, respawn-operator-leader, unless leaderElection.leaseName
     names another (releases whose Leases share a namespace each need one of their own). */}}
{{- define "respawn.leaderLease" -}}
{{- default "respawn-operator-leader" .Values.leaderElection.leaseName -}}
{{- end -}}

{{/* The metrics Service's name, which is also Prometheus' job label. */}}
{{- define "respawn.metricsService" -}}
{{- printf "%s-metrics" (include "respawn.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
