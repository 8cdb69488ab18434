package chartest

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/expr-lang/expr"
	appsv1 "k8s.io/api/apps/v1"
)

// asynqStates are the Asynq queue states a worker set's triggers read:
// jobs waiting (pending), running (active), waiting for their retry or
// their time. archived and completed jobs are work no worker will do.
var asynqStates = []string{"pending", "active", "retry", "scheduled"}

// kedaTypes is the KEDA trigger type of each redis.kind.
var kedaTypes = map[string]string{"redis": "redis", "sentinel": "redis-sentinel", "cluster": "redis-cluster"}

// setQueues is the queue names of a worker Deployment's --queues.
func setQueues(d *appsv1.Deployment) []string {
	v, _ := flagValue(d.Spec.Template.Spec.Containers[0].Args, "queues")
	var qs []string
	for _, part := range strings.Split(v, ",") {
		q, _, _ := strings.Cut(part, "=")
		qs = append(qs, q)
	}
	return qs
}

// listKey matches an Asynq queue key: asynq:{QUEUE}:STATE.
var listKey = regexp.MustCompile(`^asynq:\{([^}]+)\}:([a-z]+)$`)

// checkScaledObjects: with KEDA, one ScaledObject per worker set whose
// target is that set's Deployment (which leaves replicas to it), reading
// exactly the four states of each of its queues, with the trigger type of
// the Redis URL's kind and its scaling target the set's concurrency.
func checkScaledObjects(t *testing.T, m *manifests, vals map[string]any) {
	if keda, _ := vals["keda"].(map[string]any); keda != nil && keda["enabled"] == false {
		if len(m.scaled) != 0 {
			t.Errorf("keda.enabled false renders %d ScaledObjects", len(m.scaled))
		}
		return
	}
	if len(m.scaled) != len(workers(m)) {
		t.Fatalf("%d ScaledObjects for %d worker sets", len(m.scaled), len(workers(m)))
	}
	kind := "redis"
	if r, _ := vals["redis"].(map[string]any); r != nil && r["kind"] != nil {
		kind = r["kind"].(string)
	}
	for _, so := range m.scaled {
		i := slices.IndexFunc(workers(m), func(d *appsv1.Deployment) bool { return d.Name == so.Spec.ScaleTargetRef.Name })
		if i < 0 || (so.Spec.ScaleTargetRef.Kind != "" && so.Spec.ScaleTargetRef.Kind != "Deployment") {
			t.Errorf("ScaledObject %s targets %+v: no such worker Deployment", so.Metadata.Name, so.Spec.ScaleTargetRef)
			continue
		}
		checkScaledObject(t, m, so, workers(m)[i], kedaTypes[kind])
	}
}

// checkScaledObject checks one ScaledObject against its worker Deployment d.
func checkScaledObject(t *testing.T, m *manifests, so *scaledObject, d *appsv1.Deployment, kedaType string) {
	if d.Spec.Replicas != nil {
		t.Errorf("%s sets replicas %d: KEDA owns them", d.Name, *d.Spec.Replicas)
	}
	if mn, mx := so.Spec.MinReplicaCount, so.Spec.MaxReplicaCount; mn != nil && mx != nil && *mn > *mx {
		t.Errorf("%s: minReplicaCount %d > maxReplicaCount %d (KEDA's CEL rule)", so.Metadata.Name, *mn, *mx)
	}
	var want, got []string
	for _, q := range setQueues(d) {
		for _, st := range asynqStates {
			want = append(want, "asynq:{"+q+"}:"+st)
		}
	}
	for _, tr := range so.Spec.Triggers {
		if tr.Name != "pool" && tr.Type != kedaType {
			t.Errorf("%s: trigger %s of type %s, want %s for the Redis URL's kind", so.Metadata.Name, tr.Name, tr.Type, kedaType)
		}
		if listKey.MatchString(tr.Metadata["listName"]) {
			got = append(got, tr.Metadata["listName"])
		}
		if ref := tr.AuthenticationRef; ref != nil && !slices.ContainsFunc(m.triggerAuth, func(a *triggerAuthentication) bool { return a.Metadata.Name == ref.Name }) {
			t.Errorf("%s: trigger %s authenticates with %q: no such TriggerAuthentication", so.Metadata.Name, tr.Name, ref.Name)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("%s reads queue keys %v, want %v (the four states of --queues)", so.Metadata.Name, got, want)
	}
	if c, _ := flagValue(d.Spec.Template.Spec.Containers[0].Args, "concurrency"); so.Spec.Advanced.ScalingModifiers.Target != c {
		t.Errorf("%s: scaling target %q, want the set's concurrency %q", so.Metadata.Name, so.Spec.Advanced.ScalingModifiers.Target, c)
	}
}

// desired evaluates a ScaledObject's formula as KEDA v2.21.1 does
// (apis/keda/v1alpha1/scaledobject_webhook.go: the formula wrapped in
// float(), compiled with expr.Env of the trigger names, run on the
// triggers' values; pkg/scaling/modifiers/formula.go: the result must be
// a float64) and returns the metric and the replicas the HPA asks for
// with an AverageValue target: ceil(metric / target).
func desired(t *testing.T, so *scaledObject, values map[string]float64) (float64, int) {
	t.Helper()
	env := map[string]float64{}
	data := map[string]any{}
	for _, tr := range so.Spec.Triggers {
		key := "pool"
		if sub := listKey.FindStringSubmatch(tr.Metadata["listName"]); sub != nil {
			key = sub[1] + ":" + sub[2]
		}
		env[tr.Name] = -1
		data[tr.Name] = values[key]
	}
	prog, err := expr.Compile("float("+so.Spec.Advanced.ScalingModifiers.Formula+")", expr.Env(env))
	if err != nil {
		t.Fatalf("%s: formula: %v", so.Metadata.Name, err)
	}
	if _, err := expr.Run(prog, env); err != nil {
		t.Fatalf("%s: formula on KEDA's dummy values: %v", so.Metadata.Name, err)
	}
	out, err := expr.Run(prog, data)
	v, ok := out.(float64)
	if err != nil || !ok {
		t.Fatalf("%s: formula gives %T %v, %v: KEDA wants a float64", so.Metadata.Name, out, out, err)
	}
	target, err := strconv.ParseFloat(so.Spec.Advanced.ScalingModifiers.Target, 64)
	if err != nil {
		t.Fatalf("%s: target: %v", so.Metadata.Name, err)
	}
	return v, int(math.Ceil(v / target))
}

// TestScalingFormula runs the formula of existing-secret.yaml's
// "marketplaces" set (queues ozon and wildberries, concurrency 20, pool
// cap from Redis: 2 leases per proxy, one per site) on queue states.
func TestScalingFormula(t *testing.T) {
	m := decode(t, mustRender(t, readValues(t, chartDir+"/examples/existing-secret.yaml", nil), optionalAPIs...))
	i := slices.IndexFunc(m.scaled, func(so *scaledObject) bool { return strings.HasSuffix(so.Metadata.Name, "worker-marketplaces") })
	if i < 0 {
		t.Fatal("no ScaledObject of the marketplaces set")
	}
	so := m.scaled[i]
	tests := []struct {
		name     string
		values   map[string]float64
		metric   float64
		replicas int
	}{
		{name: "nothing queued: scale to zero", values: map[string]float64{"pool": 50}, metric: 0, replicas: 0},
		{name: "pending under the pool", values: map[string]float64{"wildberries:pending": 70, "ozon:pending": 30, "pool": 100}, metric: 100, replicas: 5},
		{name: "pending over the pool: capped", values: map[string]float64{"wildberries:pending": 5000, "pool": 100}, metric: 200, replicas: 10},
		{name: "every state counts", values: map[string]float64{"ozon:pending": 1, "ozon:active": 2, "ozon:retry": 3, "ozon:scheduled": 4, "wildberries:active": 10, "pool": 100}, metric: 20, replicas: 1},
		{name: "no proxies: no scale-up", values: map[string]float64{"wildberries:pending": 5000}, metric: 0, replicas: 0},
		{name: "jobs running, pool quarantined: keeps one", values: map[string]float64{"ozon:active": 3}, metric: 1, replicas: 1},
		{name: "a retry waiting: keeps one", values: map[string]float64{"wildberries:retry": 1}, metric: 1, replicas: 1},
		{name: "a scheduled job waiting: keeps one", values: map[string]float64{"ozon:scheduled": 1, "pool": 10}, metric: 1, replicas: 1},
		{name: "archived and completed are not read", values: map[string]float64{"ozon:archived": 100, "ozon:completed": 100, "pool": 10}, metric: 0, replicas: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			metric, replicas := desired(t, so, tt.values)
			if metric != tt.metric || replicas != tt.replicas {
				t.Errorf("metric %v, replicas %d; want %v, %d (formula %s)", metric, replicas, tt.metric, tt.replicas,
					so.Spec.Advanced.ScalingModifiers.Formula)
			}
		})
	}
}
