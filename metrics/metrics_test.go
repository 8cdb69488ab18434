package metrics

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
)

func TestWorkerMetricsNilIgnores(t *testing.T) {
	var m *WorkerMetrics
	m.ObserveRequest("avito", "ok", time.Second) // must not panic
	m.ObserveDefect("wildberries", "card", "status 403")
	m.ObservePoW("avito", true, time.Second)
}

// TestPoWSolvesCounted: proof-of-work solves are counted per site and
// result, and timed per site (issue 36.1).
func TestPoWSolvesCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewWorkerMetrics(reg)
	m.ObservePoW("avito", true, 100*time.Millisecond)
	m.ObservePoW("avito", true, 300*time.Millisecond)
	m.ObservePoW("avito", false, 2*time.Second)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range mt.GetLabel() {
				key += "," + l.GetValue()
			}
			if h := mt.GetHistogram(); h != nil {
				got[key+",count"], got[key+",sum"] = float64(h.GetSampleCount()), h.GetSampleSum()
				continue
			}
			got[key] = mt.GetCounter().GetValue()
		}
	}
	want := map[string]float64{
		"crawlq_worker_pow_solves_total,failed,avito": 1, "crawlq_worker_pow_solves_total,solved,avito": 2,
		"crawlq_worker_pow_solve_seconds,avito,count": 3, "crawlq_worker_pow_solve_seconds,avito,sum": 2.4,
	}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("metrics (-want +got):\n%s", d)
	}
}

// TestRequestDefectsCounted: request defects are counted per site, job
// kind and reason (issue 36.4).
func TestRequestDefectsCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewWorkerMetrics(reg)
	m.ObserveDefect("wildberries", "card", "status 403")
	m.ObserveDefect("wildberries", "card", "status 403")
	m.ObserveDefect("wildberries", "search", "status 403")
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range mt.GetLabel() {
				key += "," + l.GetValue()
			}
			got[key] = mt.GetCounter().GetValue()
		}
	}
	want := map[string]float64{ // labels sorted by name: kind, reason, site
		"crawlq_worker_request_defects_total,card,status 403,wildberries":   2,
		"crawlq_worker_request_defects_total,search,status 403,wildberries": 1,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("counters (-want +got):\n%s", d)
	}
}

// fakeBrowser stands for a browser tier's gauges.
type fakeBrowser struct{}

func (fakeBrowser) RSS() int64 { return 300 << 20 }
func (fakeBrowser) Live() int  { return 2 }

func (fakeBrowser) InterceptionErrors() int64 { return 3 }

func (fakeBrowser) Loaded() map[string]int64 { return map[string]int64{"document": 2, "script": 1} }

// TestBrowserMetrics: the browser's RSS, live contexts, interception
// errors and requests by kind are read at scrape time, and visits are counted per site and
// result.
func TestBrowserMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewBrowserMetrics(reg, fakeBrowser{})
	m.ObserveChallenge("ozon", "solved")
	m.ObserveChallenge("ozon", "failed")
	var nilM *BrowserMetrics
	nilM.ObserveChallenge("ozon", "solved")
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range mt.GetLabel() {
				key += "," + l.GetValue()
			}
			if mt.GetGauge() != nil {
				got[key] = mt.GetGauge().GetValue()
			} else {
				got[key] = mt.GetCounter().GetValue()
			}
		}
	}
	want := map[string]float64{"crawlq_worker_browser_rss_bytes": 300 << 20, "crawlq_worker_browser_contexts": 2,
		"crawlq_worker_browser_interception_errors_total": 3,
		"crawlq_worker_browser_requests_total,document":   2, "crawlq_worker_browser_requests_total,script": 1,
		"crawlq_worker_challenges_total,solved,ozon": 1, "crawlq_worker_challenges_total,failed,ozon": 1} // labels sorted by name
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}

// fakeSessions stands for a worker's session manager.
type fakeSessions struct{}

func (fakeSessions) ReleaseErrors() int64 { return 2 }
func (fakeSessions) StoreErrors() int64   { return 5 }

// TestSessionErrorsMetrics: the sessions' failed releases and stores are
// read at scrape time.
func TestSessionErrorsMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	RegisterSessionErrors(reg, fakeSessions{})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		got[mf.GetName()] = mf.GetMetric()[0].GetCounter().GetValue()
	}
	want := map[string]float64{"crawlq_worker_session_release_errors_total": 2, "crawlq_worker_session_store_errors_total": 5}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("session error counters (-want +got):\n%s", diff)
	}
}

// TestExitCountersReadAtScrape: the exit counters show what the worker's
// sessions report at the moment of the scrape.
func TestExitCountersReadAtScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	var probes int64 = 3
	RegisterExits(reg, func() (int64, int64, int64, int64) { return probes, 2, 1, 0 })
	probes = 7
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		got[mf.GetName()] = mf.GetMetric()[0].GetCounter().GetValue()
	}
	want := map[string]float64{"crawlq_worker_exit_probes_total": 7, "crawlq_worker_exit_rerolls_total": 2,
		"crawlq_worker_exit_waits_total": 1, "crawlq_worker_exit_changes_total": 0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
