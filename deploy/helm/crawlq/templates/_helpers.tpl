{{/* The release's name for every object, at most 52 characters so suffixes fit. */}}
{{- define "crawlq.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels every object carries. */}}
{{- define "crawlq.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "worker-default"). */}}
{{- define "crawlq.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "crawlq.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The Secret holding the URLs: existingSecret or the chart's own. */}}
{{- define "crawlq.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "crawlq.fullname" .)) -}}
{{- end -}}

{{/* Environment every command gets: the Redis URL and the pod's name. */}}
{{- define "crawlq.env" -}}
- name: CRAWLQ_REDIS
  valueFrom:
    secretKeyRef:
      name: {{ include "crawlq.secretName" . }}
      key: {{ .Values.secrets.keys.redisUrl }}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- end -}}

{{/* --config when a config is given. */}}
{{- define "crawlq.configArg" -}}
{{- if .Values.config }}
- --config=/etc/crawlq/config.yaml
{{- end }}
{{- end -}}

{{- define "crawlq.configVolume" -}}
{{- if .Values.config }}
- name: config
  configMap:
    name: {{ include "crawlq.fullname" . }}-config
{{- end }}
{{- end -}}

{{- define "crawlq.configMount" -}}
{{- if .Values.config }}
- name: config
  mountPath: /etc/crawlq
  readOnly: true
{{- end }}
{{- end -}}

{{/* Probes on a port named metrics or http: /healthz (alive) and /readyz (Redis answers). */}}
{{- define "crawlq.probes" -}}
livenessProbe:
  httpGet:
    path: /healthz
    port: {{ . }}
  periodSeconds: 10
  failureThreshold: 6
readinessProbe:
  httpGet:
    path: /readyz
    port: {{ . }}
  periodSeconds: 10
  timeoutSeconds: 3
{{- end -}}

{{- define "crawlq.pod" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}

{{/* The sites of a worker set: its sites, else its queue names. */}}
{{- define "crawlq.workerSites" -}}
{{- if .sites }}{{ join "," .sites }}{{ else }}{{ join "," (keys .queues | sortAlpha) }}{{ end -}}
{{- end -}}

{{/* KEDA Redis scaler connection metadata for redis.kind. */}}
{{- define "crawlq.redisTrigger" -}}
{{- if eq .Values.redis.kind "redis" -}}
address: {{ first .Values.redis.addresses | quote }}
databaseIndex: {{ .Values.redis.db | quote }}
{{- else if eq .Values.redis.kind "sentinel" -}}
addresses: {{ join "," .Values.redis.addresses | quote }}
sentinelMaster: {{ required "redis.sentinelMaster is required with redis.kind sentinel" .Values.redis.sentinelMaster | quote }}
databaseIndex: {{ .Values.redis.db | quote }}
{{- else -}}
addresses: {{ join "," .Values.redis.addresses | quote }}
{{- end }}
enableTLS: {{ .Values.redis.tls | quote }}
{{- end -}}
