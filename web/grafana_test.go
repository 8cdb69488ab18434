package web

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"crawlq/metrics"
)

// TestGrafanaDashboardQueriesExportedMetrics loads the provisioned
// Grafana dashboard and checks every query names at least one metric and
// only metrics crawlq exports: the dashboard's /metrics (scraped from a
// seeded server) and a worker's registry (NewWorkerMetrics).
func TestGrafanaDashboardQueriesExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("grafana", "dashboards", "crawlq.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("parse dashboard: %v", err)
	}
	exported := exportedFamilies(t)
	queries := 0
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			queries++
			names := metricNames(tg.Expr)
			if len(names) == 0 {
				t.Errorf("panel %q: query %q names no metric", p.Title, tg.Expr)
			}
			for _, n := range names {
				if !exported[family(n, exported)] {
					t.Errorf("panel %q: query %q names %s, which crawlq does not export", p.Title, tg.Expr, n)
				}
			}
		}
	}
	if queries < 8 {
		t.Errorf("dashboard has %d queries, want the pool, bans, latency, queues and throughput panels", queries)
	}
}

// exportedFamilies are the metric families of a seeded dashboard's
// /metrics and of a worker that observed one request.
func exportedFamilies(t *testing.T) map[string]bool {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker})
	out := map[string]bool{}
	for name := range scrape(t, base) {
		out[name] = true
	}
	reg := prometheus.NewRegistry()
	metrics.NewWorkerMetrics(reg).ObserveRequest("wildberries", "ok", 100*time.Millisecond)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		out[mf.GetName()] = true
	}
	if _, body := get(t, http.MethodGet, base+"/metrics", ""); !strings.Contains(body, "crawlq_pool_latency_seconds_bucket") {
		t.Fatal("seeded /metrics has no latency histogram")
	}
	return out
}

// family maps a histogram series name (_bucket, _sum, _count) to its family.
func family(name string, exported map[string]bool) string {
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suf); ok && exported[base] {
			return base
		}
	}
	return name
}

var (
	promStrip = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]|\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)|"[^"]*"`)
	promIdent = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*\s*\(?`)
	promWords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "bool": true,
		"and": true, "or": true, "unless": true, "offset": true, "group_left": true, "group_right": true}
)

// metricNames are the metric names a PromQL expression selects: its
// identifiers that are not functions, aggregations, keywords or labels.
func metricNames(expr string) []string {
	seen := map[string]bool{}
	for _, m := range promIdent.FindAllString(promStrip.ReplaceAllString(expr, " "), -1) {
		if strings.HasSuffix(m, "(") {
			continue // a function or aggregation
		}
		if m = strings.TrimSpace(m); !promWords[m] {
			seen[m] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func TestMetricNames(t *testing.T) {
	tests := []struct {
		name, expr string
		want       []string
	}{
		{name: "aggregation", expr: `sum by (site, state) (crawlq_pool_proxies)`, want: []string{"crawlq_pool_proxies"}},
		{name: "quantile of a rate", expr: `histogram_quantile(0.9, sum by (le) (rate(x_bucket{a="b"}[5m])))`, want: []string{"x_bucket"}},
		{name: "ratio", expr: `60 * sum(rate(a_total[1m])) / on(site) b`, want: []string{"a_total", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := metricNames(tt.expr)
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("metricNames(%q) = %v, want %v", tt.expr, got, tt.want)
			}
		})
	}
}
