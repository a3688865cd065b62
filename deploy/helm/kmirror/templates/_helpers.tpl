{{/* Chart name, truncated to the 63 characters a label value may have. */}}
{{- define "kmirror.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name: RELEASE-kmirror, or RELEASE alone when it already contains the chart name.
Truncated to 63 characters because some Kubernetes name fields are limited to that (DNS-1123 labels).
*/}}
{{- define "kmirror.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Chart name and version, as used by the helm.sh/chart label. */}}
{{- define "kmirror.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Common labels. */}}
{{- define "kmirror.labels" -}}
helm.sh/chart: {{ include "kmirror.chart" . }}
{{ include "kmirror.selectorLabels" . }}
app.kubernetes.io/version: {{ include "kmirror.imageTag" . | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels: stable for the life of a release (a Deployment's selector is immutable). */}}
{{- define "kmirror.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kmirror.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The image tag: image.tag, or the chart's appVersion. */}}
{{- define "kmirror.imageTag" -}}
{{- .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* Name of the Secret that holds the database URL, and the key in it. */}}
{{- define "kmirror.databaseSecretName" -}}
{{- if .Values.database.existingSecret.name }}
{{- .Values.database.existingSecret.name }}
{{- else }}
{{- printf "%s-database" (include "kmirror.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "kmirror.databaseSecretKey" -}}
{{- if .Values.database.existingSecret.name }}
{{- required "database.existingSecret.key is required with database.existingSecret.name" .Values.database.existingSecret.key }}
{{- else -}}
database-url
{{- end }}
{{- end }}

{{/*
The soft-stop budget in whole seconds, checked: a positive integer. It is the single source of both
KMIRROR_STOP_TIMEOUT and terminationGracePeriodSeconds.
*/}}
{{- define "kmirror.stopTimeoutSeconds" -}}
{{- $v := .Values.stopTimeoutSeconds }}
{{- if not (or (kindIs "float64" $v) (kindIs "int64" $v) (kindIs "int" $v)) }}
{{- fail (printf "stopTimeoutSeconds must be a number of seconds such as 30, not %q" (toString $v)) }}
{{- end }}
{{- if or (le (float64 $v) 0.0) (ne (float64 $v) (float64 (int64 $v))) }}
{{- fail (printf "stopTimeoutSeconds must be a positive whole number of seconds, not %v" $v) }}
{{- end }}
{{- int64 $v }}
{{- end }}

{{/* terminationGracePeriodSeconds: the soft-stop budget plus the margin. */}}
{{- define "kmirror.terminationGracePeriodSeconds" -}}
{{- $margin := .Values.terminationGraceMarginSeconds }}
{{- if not (or (kindIs "float64" $margin) (kindIs "int64" $margin) (kindIs "int" $margin)) }}
{{- fail (printf "terminationGraceMarginSeconds must be a number of seconds such as 15, not %q" (toString $margin)) }}
{{- end }}
{{- if lt (int64 $margin) 0 }}
{{- fail "terminationGraceMarginSeconds must not be negative" }}
{{- end }}
{{- add (include "kmirror.stopTimeoutSeconds" . | int64) (int64 $margin) }}
{{- end }}

{{/*
The REST API's scheme as a probe names it: HTTPS when tls.secretName is set. A client certificate
requirement without a certificate to serve is refused.
*/}}
{{- define "kmirror.scheme" -}}
{{- if and .Values.tls.requireClientCert (not .Values.tls.secretName) -}}
{{- fail "tls.requireClientCert needs tls.secretName: client certificates are asked for over HTTPS only" -}}
{{- end -}}
{{- if .Values.tls.secretName }}HTTPS{{ else }}HTTP{{ end -}}
{{- end }}

{{/* Non-empty when the pod has volumes: the chart's own or extraVolumes. */}}
{{- define "kmirror.hasVolumes" -}}
{{- if or .Values.tls.secretName .Values.auth.usersSecret .Values.secretsKey.secretName .Values.mm2Properties .Values.extraVolumes .Values.extraVolumeMounts -}}
true
{{- end }}
{{- end }}

{{/* KMIRROR_SECRETS_KEY_PREVIOUS: the files of secretsKey.previousKeys in the mounted Secret, comma-separated. */}}
{{- define "kmirror.previousKeyFiles" -}}
{{- $files := list }}
{{- range .Values.secretsKey.previousKeys }}
{{- $files = append $files (printf "/etc/kmirror/secrets-key/%s" .) }}
{{- end }}
{{- join "," $files }}
{{- end }}

{{/* The job label Prometheus gives the workers' scrapes, for KmirrorWorkerDown. */}}
{{- define "kmirror.scrapeJob" -}}
{{- if .Values.prometheusRule.workerJob }}
{{- .Values.prometheusRule.workerJob }}
{{- else if .Values.metrics.podMonitor.enabled }}
{{- printf "%s/%s" .Release.Namespace (include "kmirror.fullname" .) }}
{{- else if .Values.metrics.serviceMonitor.enabled }}
{{- include "kmirror.fullname" . }}
{{- else -}}
kmirror
{{- end }}
{{- end }}

{{/*
The scrape endpoint of the PodMonitor or the ServiceMonitor (dict "root" $ "monitor" ITS-VALUES): the port, TLS,
the token.
*/}}
{{- define "kmirror.scrapeEndpoint" -}}
{{- $root := .root }}
{{- $m := $root.Values.metrics -}}
port: http
path: /metrics
scheme: {{ include "kmirror.scheme" $root | lower }}
{{- with .monitor.interval }}
interval: {{ . }}
{{- end }}
{{- with .monitor.scrapeTimeout }}
scrapeTimeout: {{ . }}
{{- end }}
{{- if $m.tlsConfig }}
tlsConfig:
  {{- toYaml $m.tlsConfig | nindent 2 }}
{{- else if $root.Values.tls.secretName }}
{{- if $root.Values.tls.requireClientCert }}
{{- fail "with tls.requireClientCert, Prometheus needs a client certificate to scrape: set metrics.tlsConfig (cert and keySecret)" }}
{{- end }}
tlsConfig:
  # The workers' certificate names the Service, not the pod IPs Prometheus scrapes.
  insecureSkipVerify: true
{{- end }}
{{- if and $root.Values.auth.usersSecret (not $m.open) }}
{{- if not $m.tokenSecret.name }}
{{- fail "with auth.usersSecret, /metrics needs credentials: set metrics.tokenSecret.name (a read-only token, docs/security.md) or metrics.open=true" }}
{{- end }}
authorization:
  type: Bearer
  credentials:
    name: {{ $m.tokenSecret.name }}
    key: {{ $m.tokenSecret.key }}
{{- end }}
{{- end }}

{{/* Strimzi's PodMonitor relabelings for a KafkaMirrorMaker2, so that its dashboard works unchanged. */}}
{{- define "kmirror.strimziRelabelings" -}}
- targetLabel: strimzi_io_kind
  replacement: KafkaMirrorMaker2
- sourceLabels: [__meta_kubernetes_pod_label_app_kubernetes_io_instance]
  targetLabel: strimzi_io_cluster
- sourceLabels: [__meta_kubernetes_namespace]
  targetLabel: namespace
- sourceLabels: [__meta_kubernetes_pod_name]
  targetLabel: kubernetes_pod_name
- sourceLabels: [__meta_kubernetes_pod_node_name]
  targetLabel: node_name
{{- end }}
