package web

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches /metrics and parses it with Prometheus' text parser.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, http.MethodGet, base+"/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("/metrics: status %d: %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return mf
}

// values maps each series of a family, keyed by its label values in the
// given label order joined by "/", to its value.
func values(mf map[string]*dto.MetricFamily, name string, labels ...string) map[string]float64 {
	out := map[string]float64{}
	f := mf[name]
	if f == nil {
		return out
	}
	for _, m := range f.GetMetric() {
		out[key(m, labels)] = value(m)
	}
	return out
}

func key(m *dto.Metric, labels []string) string {
	parts := make([]string, len(labels))
	for i, l := range labels {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == l {
				parts[i] = lp.GetValue()
			}
		}
	}
	return strings.Join(parts, "/")
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	return -1
}

func TestMetricsMatchStatus(t *testing.T) {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker, Version: "test"})
	mf := scrape(t, base)
	insp := asynq.NewInspector(c.opt)
	defer insp.Close()
	st, err := Collect(context.Background(), insp, c.broker)
	if err != nil {
		t.Fatal(err)
	}
	wantQueues, wantStates, wantPool := expectedFromStatus(st)
	if d := cmp.Diff(wantQueues, values(mf, "asynq_tasks_enqueued_total", "queue", "state")); d != "" {
		t.Errorf("asynq_tasks_enqueued_total (-status +metrics):\n%s", d)
	}
	if d := cmp.Diff(wantStates, values(mf, "asynq_queue_size", "queue")); d != "" {
		t.Errorf("asynq_queue_size (-status +metrics):\n%s", d)
	}
	if d := cmp.Diff(wantPool, values(mf, "crawlq_pool_proxies", "site", "state")); d != "" {
		t.Errorf("crawlq_pool_proxies (-status +metrics):\n%s", d)
	}
	wantCleared := map[string]float64{"wildberries": 1, "ozon": 0, "avito": 0} // seedPool's one mark
	if d := cmp.Diff(wantCleared, values(mf, "crawlq_pool_cleared_proxies", "site")); d != "" {
		t.Errorf("crawlq_pool_cleared_proxies (-want +metrics):\n%s", d)
	}
	if got := mf["crawlq_pool_cleared_proxies"].GetType(); got != dto.MetricType_GAUGE {
		t.Errorf("crawlq_pool_cleared_proxies is a %v, want a gauge", got)
	}
	if got := values(mf, "crawlq_pool_proxies_total")[""]; got != float64(st.Pool.Total) {
		t.Errorf("crawlq_pool_proxies_total = %v, want %d", got, st.Pool.Total)
	}
	if got := values(mf, "crawlq_pool_up")[""]; got != 1 {
		t.Errorf("crawlq_pool_up = %v, want 1", got)
	}
	if got := values(mf, "crawlq_build_info", "version"); got["test"] != 1 {
		t.Errorf("crawlq_build_info = %v, want version test", got)
	}
	if len(st.Pool.Sites) == 0 || len(st.Queues) != 3 {
		t.Fatalf("seed missing: pool %v queues %v", st.Pool.Sites, st.Queues)
	}
}

// expectedFromStatus turns a Status into the series /metrics must carry.
func expectedFromStatus(st *Status) (queues, sizes, pool map[string]float64) {
	queues, sizes, pool = map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, q := range st.Queues {
		for state, n := range map[string]int{"pending": q.Pending, "active": q.Active, "scheduled": q.Scheduled,
			"retry": q.Retry, "archived": q.Archived, "completed": q.Completed} {
			queues[q.Queue+"/"+state] = float64(n)
		}
		sizes[q.Queue] = float64(q.Size)
	}
	for site, s := range st.Pool.Sites {
		for state, n := range map[string]int{"ready": s.Ready, "leased": s.Leased, "cooling": s.Cooling, "quarantined": s.Quarantined} {
			pool[site+"/"+state] = float64(n)
		}
	}
	return queues, sizes, pool
}

func TestMetricsPerClassAndProxy(t *testing.T) {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker, MetricsPerProxy: true})
	mf := scrape(t, base)
	ps, err := c.broker.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantClass, wantOK, wantBanned := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for site, s := range ps.Sites {
		for class, sc := range s.ByClass {
			k := site + "/" + string(class) + "/"
			wantClass[k+"ready"], wantClass[k+"leased"] = float64(sc.Ready), float64(sc.Leased)
			wantClass[k+"cooling"], wantClass[k+"quarantined"] = float64(sc.Cooling), float64(sc.Quarantined)
		}
	}
	for _, p := range ps.Proxies {
		for site, s := range p.Sites {
			wantOK[p.ID+"/"+site], wantBanned[p.ID+"/"+site] = float64(s.OK), float64(s.Banned)
		}
	}
	if d := cmp.Diff(wantClass, values(mf, "crawlq_pool_class_proxies", "site", "class", "state")); d != "" {
		t.Errorf("crawlq_pool_class_proxies (-broker +metrics):\n%s", d)
	}
	if d := cmp.Diff(wantOK, values(mf, "crawlq_proxy_ok_total", "proxy", "site")); d != "" {
		t.Errorf("crawlq_proxy_ok_total (-broker +metrics):\n%s", d)
	}
	if d := cmp.Diff(wantBanned, values(mf, "crawlq_proxy_banned_total", "proxy", "site")); d != "" {
		t.Errorf("crawlq_proxy_banned_total (-broker +metrics):\n%s", d)
	}
	if len(wantOK) == 0 {
		t.Fatal("seeded pool has no proxy counters")
	}
	var names []string
	for n := range mf {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, want := range []string{"go_build_info", "crawlq_proxy_failed_total", "crawlq_proxy_latency_ewma_seconds"} {
		if mf[want] == nil {
			t.Errorf("/metrics lacks %s; has %v", want, names)
		}
	}
}

// TestMetricsAggregatesByDefault: without MetricsPerProxy /metrics carries
// no per-proxy series, and the per (site, class) counters and latency
// histogram sum the proxies' counters.
func TestMetricsAggregatesByDefault(t *testing.T) {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker})
	mf := scrape(t, base)
	for name := range mf {
		if strings.HasPrefix(name, "crawlq_proxy_") {
			t.Errorf("/metrics has per-proxy family %s by default", name)
		}
	}
	ps, err := c.broker.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantOK, wantFailed, wantBanned, wantLat := map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]uint64{}
	for site, s := range ps.Sites {
		for class := range s.ByClass {
			k := site + "/" + string(class)
			wantOK[k], wantFailed[k], wantBanned[k], wantLat[k] = 0, 0, 0, 0
		}
	}
	for _, p := range ps.Proxies {
		for site, s := range p.Sites {
			k := site + "/" + string(p.Class)
			wantOK[k] += float64(s.OK)
			wantFailed[k] += float64(s.Failed)
			wantBanned[k] += float64(s.Banned)
			if s.EWMALatency > 0 {
				wantLat[k]++
			}
		}
	}
	for _, tc := range []struct {
		name string
		want map[string]float64
	}{{"crawlq_pool_ok_total", wantOK}, {"crawlq_pool_failed_total", wantFailed}, {"crawlq_pool_banned_total", wantBanned}} {
		if d := cmp.Diff(tc.want, values(mf, tc.name, "site", "class")); d != "" {
			t.Errorf("%s (-broker +metrics):\n%s", tc.name, d)
		}
	}
	gotLat := map[string]uint64{}
	for _, m := range mf["crawlq_pool_latency_seconds"].GetMetric() {
		gotLat[key(m, []string{"site", "class"})] = m.GetHistogram().GetSampleCount()
	}
	if d := cmp.Diff(wantLat, gotLat); d != "" {
		t.Errorf("crawlq_pool_latency_seconds counts (-broker +metrics):\n%s", d)
	}
	if wantOK["wildberries/datacenter"] != 1 || wantBanned["ozon/datacenter"] != 1 {
		t.Fatalf("seed missing: ok %v banned %v", wantOK, wantBanned)
	}
}
