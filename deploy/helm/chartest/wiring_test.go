package chartest

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestChartRendersEveryExample(t *testing.T) {
	for _, file := range examples(t) {
		t.Run(exampleName(file), func(t *testing.T) {
			vals := readValues(t, file, nil)
			out := mustRender(t, vals, optionalAPIs...)
			for name, s := range out {
				if strings.Contains(s, "<no value>") {
					t.Errorf("%s renders a missing value:\n%s", name, s)
				}
			}
			m := decode(t, out)
			checkSelectors(t, m)
			checkWorkers(t, m)
			checkProbes(t, m)
			checkFlags(t, m)
			checkPDBs(t, m)
			checkComponents(t, m)
			checkScaledObjects(t, m, vals)
		})
	}
}

// selects reports whether sel selects the labels l.
func selects(t *testing.T, sel *metav1.LabelSelector, l map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("selector %v: %v", sel, err)
	}
	return !s.Empty() && s.Matches(labels.Set(l))
}

// selected is the names of the Deployments whose pods sel selects.
func selected(t *testing.T, m *manifests, sel *metav1.LabelSelector) []string {
	var names []string
	for _, d := range m.deployments {
		if selects(t, sel, d.Spec.Template.Labels) {
			names = append(names, d.Name)
		}
	}
	return names
}

// checkSelectors: each Deployment selects its own pods; each Service and
// PDB the pods of exactly one Deployment; each PodMonitor some pods; each
// ServiceMonitor a Service.
func checkSelectors(t *testing.T, m *manifests) {
	for _, d := range m.deployments {
		if got := selected(t, m, d.Spec.Selector); !slices.Equal(got, []string{d.Name}) {
			t.Errorf("Deployment %s's selector selects the pods of %v, want its own only", d.Name, got)
		}
	}
	for _, s := range m.services {
		if got := selected(t, m, &metav1.LabelSelector{MatchLabels: s.Spec.Selector}); len(got) != 1 {
			t.Errorf("Service %s selects the pods of %v, want one Deployment", s.Name, got)
		}
	}
	for _, p := range m.pdbs {
		if got := selected(t, m, p.Spec.Selector); len(got) != 1 {
			t.Errorf("PDB %s selects the pods of %v, want one Deployment", p.Name, got)
		}
	}
	for _, p := range m.podMons {
		if got := selected(t, m, &p.Spec.Selector); len(got) == 0 {
			t.Errorf("PodMonitor %s selects no pods", p.Name)
		}
	}
	for _, sm := range m.svcMons {
		if !slices.ContainsFunc(m.services, func(s *corev1.Service) bool { return selects(t, &sm.Spec.Selector, s.Labels) }) {
			t.Errorf("ServiceMonitor %s selects no Service", sm.Name)
		}
	}
}

// command is a crawlq container's subcommand ("worker", "proxies import").
func command(c corev1.Container) string {
	var words []string
	for _, a := range c.Args {
		if strings.HasPrefix(a, "-") || strings.Contains(a, "/") {
			break
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// flagValue is the value of --name=value in args, and whether it is there.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// workers are the worker Deployments.
func workers(m *manifests) []*appsv1.Deployment {
	var out []*appsv1.Deployment
	for _, d := range m.deployments {
		if command(d.Spec.Template.Spec.Containers[0]) == "worker" {
			out = append(out, d)
		}
	}
	return out
}

// checkWorkers: the grace period outlasts the shutdown timeout, and the
// server id is the pod's name.
func checkWorkers(t *testing.T, m *manifests) {
	if len(workers(m)) == 0 {
		t.Fatalf("no worker Deployment")
	}
	for _, d := range workers(m) {
		c := d.Spec.Template.Spec.Containers[0]
		v, _ := flagValue(c.Args, "shutdown-timeout")
		shutdown, err := time.ParseDuration(v)
		grace := d.Spec.Template.Spec.TerminationGracePeriodSeconds
		if err != nil || grace == nil || time.Duration(*grace)*time.Second <= shutdown {
			t.Errorf("%s: terminationGracePeriodSeconds %v, --shutdown-timeout %q: want the grace longer", d.Name, grace, v)
		}
		if id, _ := flagValue(c.Args, "server-id"); id != "$(POD_NAME)" || !podNameEnv(c) {
			t.Errorf("%s: --server-id %q, want $(POD_NAME) with POD_NAME from metadata.name", d.Name, id)
		}
	}
}

func podNameEnv(c corev1.Container) bool {
	return slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "POD_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
			e.ValueFrom.FieldRef.FieldPath == "metadata.name"
	})
}

// checkProbes: every long-running container is probed at /healthz and
// /readyz on a port it declares.
func checkProbes(t *testing.T, m *manifests) {
	for _, d := range m.deployments {
		c := d.Spec.Template.Spec.Containers[0]
		for path, p := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path {
				t.Errorf("%s: want an HTTP probe of %s, got %+v", d.Name, path, p)
				continue
			}
			if !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == p.HTTPGet.Port.StrVal }) {
				t.Errorf("%s: probe %s on port %q the container does not declare", d.Name, path, p.HTTPGet.Port.String())
			}
		}
	}
}

// chartFlags reads testdata/flags.txt: command -> the flags the chart may pass.
func chartFlags(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("testdata/flags.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if cmd, flags, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, "#") {
			out[cmd] = strings.Fields(flags)
		}
	}
	return out
}

// checkFlags: every container runs crawlq with a command and flags of
// testdata/flags.txt (which cmd/crawlq checks against the real commands).
func checkFlags(t *testing.T, m *manifests) {
	known := chartFlags(t)
	var cs []corev1.Container
	for _, d := range m.deployments {
		cs = append(cs, d.Spec.Template.Spec.Containers...)
	}
	for _, j := range m.jobs {
		cs = append(cs, j.Spec.Template.Spec.Containers...)
	}
	for _, c := range cs {
		flags, ok := known[command(c)]
		if !slices.Equal(c.Command, []string{"crawlq"}) || !ok {
			t.Errorf("container %s runs %v %v: not a command of testdata/flags.txt", c.Name, c.Command, c.Args)
			continue
		}
		for _, a := range c.Args {
			name, _, _ := strings.Cut(a, "=")
			if strings.HasPrefix(a, "-") && !slices.Contains(flags, name) {
				t.Errorf("container %s: %s is not a flag of `crawlq %s` in testdata/flags.txt", c.Name, name, command(c))
			}
		}
	}
}

// checkPDBs: a budget never blocks a drain: it allows one pod down
// (never a minAvailable that a single replica would block) and always
// lets an unhealthy pod go.
func checkPDBs(t *testing.T, m *manifests) {
	if len(m.pdbs) == 0 {
		t.Errorf("no PodDisruptionBudget")
	}
	for _, p := range m.pdbs {
		mu := p.Spec.MaxUnavailable
		if p.Spec.MinAvailable != nil || mu == nil || mu.IntValue() < 1 {
			t.Errorf("PDB %s: minAvailable %v, maxUnavailable %v: want maxUnavailable >= 1 only", p.Name, p.Spec.MinAvailable, mu)
		}
		if pol := p.Spec.UnhealthyPodEvictionPolicy; pol == nil || *pol != policyv1.AlwaysAllow {
			t.Errorf("PDB %s: unhealthyPodEvictionPolicy %v, want AlwaysAllow", p.Name, pol)
		}
	}
}

// checkComponents: the sink is replaced by Recreate (an older sink
// refuses a newer schema) and schedulers run two.
func checkComponents(t *testing.T, m *manifests) {
	for _, d := range m.deployments {
		switch command(d.Spec.Template.Spec.Containers[0]) {
		case "sink":
			if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
				t.Errorf("sink %s: strategy %q, want Recreate", d.Name, d.Spec.Strategy.Type)
			}
		case "scheduler":
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
				t.Errorf("scheduler %s: replicas %v, want 2", d.Name, d.Spec.Replicas)
			}
		}
	}
}
