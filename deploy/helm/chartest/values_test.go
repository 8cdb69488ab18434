package chartest

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// planted is in every secret value TestExistingSecretRendersNoSecretValue
// gives the chart besides existingSecret.
const planted = "PL4NTchartSecret"

func TestExistingSecretRendersNoSecretValue(t *testing.T) {
	vals := readValues(t, chartDir+"/examples/existing-secret.yaml", map[string]any{
		"secrets.redisUrl":      "redis-sentinel://:" + planted + "@s1:26379/mymaster/0",
		"secrets.redisPassword": planted,
		"secrets.postgresUrl":   "postgres://crawlq:" + planted + "@pg:5432/crawlq",
		"secrets.webAuth":       "admin:" + planted,
	})
	out := mustRender(t, vals, optionalAPIs...)
	for name, s := range out {
		if strings.Contains(s, planted) {
			t.Errorf("%s holds a secret value although existingSecret is set:\n%s", name, s)
		}
	}
	m := decode(t, out)
	if len(m.secrets) != 0 {
		t.Errorf("existingSecret set, and the chart makes %d Secrets", len(m.secrets))
	}
	refs := 0
	for _, d := range m.deployments {
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
				refs++
				if r.SecretKeyRef.Name != "crawlq-prod" {
					t.Errorf("%s: %s from Secret %q, want the existingSecret crawlq-prod", d.Name, e.Name, r.SecretKeyRef.Name)
				}
			}
		}
	}
	for _, a := range m.triggerAuth {
		for _, r := range a.Spec.SecretTargetRef {
			refs++
			if r.Name != "crawlq-prod" {
				t.Errorf("TriggerAuthentication %s reads Secret %q, want crawlq-prod", a.Metadata.Name, r.Name)
			}
		}
	}
	if refs == 0 {
		t.Error("nothing reads the existingSecret")
	}
}

func TestChartMadeSecretKeepsValuesInside(t *testing.T) {
	m := decode(t, mustRender(t, readValues(t, chartDir+"/examples/minimal.yaml", nil), optionalAPIs...))
	if len(m.secrets) != 1 || m.secrets[0].StringData["redis-url"] != "redis://:changeme@redis-master:6379/0" {
		t.Fatalf("want one Secret with the redis-url, got %+v", m.secrets)
	}
	for _, d := range m.deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			if strings.Contains(strings.Join(c.Args, " ")+envValues(c), "changeme") {
				t.Errorf("%s: a secret value in the pod spec, not from the Secret", d.Name)
			}
		}
	}
}

func envValues(c corev1.Container) string {
	var b strings.Builder
	for _, e := range c.Env {
		b.WriteString(e.Value + " ")
	}
	return b.String()
}

func TestChartRefuses(t *testing.T) {
	tests := []struct {
		name string
		over map[string]any
		want string
	}{
		{name: "grace not past the shutdown timeout", over: map[string]any{"workerDefaults.terminationGracePeriodSeconds": 32},
			want: "terminationGracePeriodSeconds 32 must be at least shutdownTimeoutSeconds 30 + 5"},
		{name: "a value the schema does not know", over: map[string]any{"workerDefaults.concurency": 5},
			want: "concurency"},
		{name: "the dashboard without auth", over: map[string]any{"secrets.webAuth": ""},
			want: "the dashboard manages the queues"},
		{name: "a Redis kind KEDA has no scaler of (values.schema.json)", over: map[string]any{"redis.kind": "memcached"},
			want: "/redis/kind"},
		{name: "a trigger of another kind than the URL's", over: map[string]any{"redis.kind": "sentinel", "redis.sentinelMaster": "m"},
			want: `redis.kind "sentinel", but secrets.redisUrl is a redis URL`},
		{name: "a cluster URL read as one server", over: map[string]any{"secrets.redisUrl": "redis-cluster://:pw@n1:7000,n2:7000"},
			want: `redis.kind "redis", but secrets.redisUrl is a cluster URL`},
		{name: "TLS in the URL, not in KEDA's trigger", over: map[string]any{"secrets.redisUrl": "rediss://:pw@redis:6379/0"},
			want: `redis.tls false, but secrets.redisUrl says "rediss"`},
		{name: "KEDA without the Redis address", over: map[string]any{"redis.addresses": []any{}},
			want: "redis.addresses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(t, readValues(t, chartDir+"/examples/minimal.yaml", tt.over), optionalAPIs...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("render error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

func TestMonitoringOnlyWhereServed(t *testing.T) {
	vals := readValues(t, chartDir+"/examples/minimal.yaml", nil)
	monitoring := []string{"monitoring.coreos.com/v1/PodMonitor", "monitoring.coreos.com/v1/ServiceMonitor", "monitoring.coreos.com/v1/PrometheusRule"}
	without := decode(t, mustRender(t, vals))
	with := decode(t, mustRender(t, vals, optionalAPIs...))
	for _, k := range monitoring {
		if without.kinds[k] != 0 || with.kinds[k] != 1 {
			t.Errorf("%s: %d without the API, %d with it; want 0 and 1", k, without.kinds[k], with.kinds[k])
		}
	}
}
