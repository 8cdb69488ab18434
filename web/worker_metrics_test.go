package web

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
)

func TestWorkerMetricsServed(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	reg := prometheus.NewRegistry()
	m := NewWorkerMetrics(reg)
	m.ObserveRequest("wildberries", "ok", 200*time.Millisecond)
	m.ObserveRequest("wildberries", "blocked", 2*time.Second)
	m.ObserveRequest("ozon", "ok", 50*time.Millisecond)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveMetrics(ctx, l, reg) }()
	code, body := get(t, http.MethodGet, "http://"+l.Addr().String()+"/metrics", "")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serveMetrics: %v", err)
	}
	http.DefaultClient.CloseIdleConnections()
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	wantReq := map[string]float64{"wildberries": 2, "ozon": 1}
	if d := cmp.Diff(wantReq, values(mf, "crawlq_worker_requests_total", "site")); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
	wantVerdicts := map[string]float64{"wildberries/ok": 1, "wildberries/blocked": 1, "ozon/ok": 1}
	if d := cmp.Diff(wantVerdicts, values(mf, "crawlq_worker_verdicts_total", "site", "verdict")); d != "" {
		t.Errorf("verdicts (-want +got):\n%s", d)
	}
	h := mf["crawlq_worker_request_duration_seconds"]
	if h == nil || len(h.GetMetric()) != 2 {
		t.Fatalf("latency histogram missing: %v", h)
	}
	for _, s := range h.GetMetric() {
		if key(s, []string{"site"}) == "wildberries" && s.GetHistogram().GetSampleSum() != 2.2 {
			t.Errorf("wildberries latency sum = %v, want 2.2", s.GetHistogram().GetSampleSum())
		}
	}
}

func TestWorkerMetricsNilIgnores(t *testing.T) {
	var m *WorkerMetrics
	m.ObserveRequest("avito", "ok", time.Second) // must not panic
}

func TestServeMetricsBadAddr(t *testing.T) {
	err := ServeMetrics(context.Background(), "127.0.0.1:notaport", prometheus.NewRegistry())
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:notaport") {
		t.Errorf("ServeMetrics error = %v, want one naming the address", err)
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
