package chartest

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
)

// chartDir is the chart under test.
const chartDir = "../crawlq"

// optionalAPIs are the APIs the chart renders objects of only where the
// cluster serves them (.Capabilities.APIVersions.Has).
var optionalAPIs = []string{
	"monitoring.coreos.com/v1", "monitoring.coreos.com/v1/PodMonitor",
	"monitoring.coreos.com/v1/ServiceMonitor", "monitoring.coreos.com/v1/PrometheusRule",
	"keda.sh/v1alpha1", "keda.sh/v1alpha1/ScaledObject", "keda.sh/v1alpha1/TriggerAuthentication",
}

// examples are the chart's example values files.
func examples(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example values files in %s/examples: %v", chartDir, err)
	}
	return files
}

// loadChart loads the chart as `helm install` does.
func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return ch
}

// readValues reads a values file, then sets each "a.b.c" path of over.
func readValues(t *testing.T, file string, over map[string]any) map[string]any {
	t.Helper()
	vals, err := common.ReadValuesFile(file)
	if err != nil {
		t.Fatalf("values %s: %v", file, err)
	}
	for path, v := range over {
		m := map[string]any(vals)
		keys := strings.Split(path, ".")
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[keys[len(keys)-1]] = v
	}
	return vals
}

// render renders the chart with vals as `helm install --dry-run` does on
// a cluster serving apis too: values checked against values.schema.json,
// then Helm's engine. It returns the manifests by template path.
func render(t *testing.T, vals map[string]any, apis ...string) (map[string]string, error) {
	t.Helper()
	caps := common.DefaultCapabilities.Copy()
	caps.APIVersions = append(slices.Clone(caps.APIVersions), apis...)
	ch := loadChart(t)
	rv, err := util.ToRenderValuesWithSchemaValidation(ch, vals,
		common.ReleaseOptions{Name: "crawlq", Namespace: "scrape", IsInstall: true}, caps, false)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, rv)
}

// mustRender is render that fails the test on an error.
func mustRender(t *testing.T, vals map[string]any, apis ...string) map[string]string {
	t.Helper()
	out, err := render(t, vals, apis...)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return out
}

// documents splits rendered manifests into YAML documents, dropping the
// empty ones and NOTES.txt, sorted by template path for stable errors.
func documents(out map[string]string) []doc {
	var docs []doc
	for _, name := range slices.Sorted(maps.Keys(out)) {
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasSuffix(name, ".tpl") {
			continue
		}
		for _, part := range strings.Split("\n"+out[name], "\n---") {
			if strings.TrimSpace(stripComments(part)) != "" {
				docs = append(docs, doc{template: name, yaml: part})
			}
		}
	}
	return docs
}

// doc is one rendered YAML document and the template it came from.
type doc struct{ template, yaml string }

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// exampleName is a values file's base name, for subtests.
func exampleName(file string) string { return strings.TrimSuffix(filepath.Base(file), ".yaml") }
