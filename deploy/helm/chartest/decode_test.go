package chartest

import (
	"fmt"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// manifests is one rendering decoded: every object in its Kubernetes type.
type manifests struct {
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	secrets     []*corev1.Secret
	configMaps  []*corev1.ConfigMap
	jobs        []*batchv1.Job
	pdbs        []*policyv1.PodDisruptionBudget
	podMons     []*monitoringv1.PodMonitor
	svcMons     []*monitoringv1.ServiceMonitor
	rules       []*monitoringv1.PrometheusRule
	scaled      []*scaledObject
	triggerAuth []*triggerAuthentication
	kinds       map[string]int
}

// decode decodes every document strictly: a field the type does not have,
// a duplicate key or a wrong type fails. Built-in kinds decode into
// k8s.io/api types, monitoring.coreos.com into prometheus-operator's,
// KEDA's are validated against KEDA's CRD schema (kedaschema_test.go).
func decode(t *testing.T, out map[string]string) *manifests {
	t.Helper()
	m := &manifests{kinds: map[string]int{}}
	for _, d := range documents(out) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(d.yaml), &tm); err != nil {
			t.Fatalf("%s: %v\n%s", d.template, err, d.yaml)
		}
		m.kinds[tm.APIVersion+"/"+tm.Kind]++
		if err := m.add(t, tm, []byte(d.yaml)); err != nil {
			t.Errorf("%s: %s %s: %v\n%s", d.template, tm.APIVersion, tm.Kind, err, d.yaml)
		}
	}
	return m
}

// add decodes one document by its kind into m.
func (m *manifests) add(t *testing.T, tm metav1.TypeMeta, y []byte) error {
	switch tm.APIVersion + "/" + tm.Kind {
	case "apps/v1/Deployment":
		return strict(y, &m.deployments)
	case "v1/Service":
		return strict(y, &m.services)
	case "v1/Secret":
		return strict(y, &m.secrets)
	case "v1/ConfigMap":
		return strict(y, &m.configMaps)
	case "batch/v1/Job":
		return strict(y, &m.jobs)
	case "policy/v1/PodDisruptionBudget":
		return strict(y, &m.pdbs)
	case "monitoring.coreos.com/v1/PodMonitor":
		return strict(y, &m.podMons)
	case "monitoring.coreos.com/v1/ServiceMonitor":
		return strict(y, &m.svcMons)
	case "monitoring.coreos.com/v1/PrometheusRule":
		return strict(y, &m.rules)
	case "keda.sh/v1alpha1/ScaledObject":
		return keda(t, "ScaledObject", y, &m.scaled)
	case "keda.sh/v1alpha1/TriggerAuthentication":
		return keda(t, "TriggerAuthentication", y, &m.triggerAuth)
	}
	return fmt.Errorf("a kind this test does not know: add it to manifests")
}

// strict decodes y into a new T, refusing unknown and duplicate fields,
// and appends it to list.
func strict[T any](y []byte, list *[]*T) error {
	v := new(T)
	if err := yaml.UnmarshalStrict(y, v); err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}
