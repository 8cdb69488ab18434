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

	"crawlq/metrics"
)

func TestWorkerMetricsServed(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	reg := prometheus.NewRegistry()
	m := metrics.NewWorkerMetrics(reg)
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

func TestServeMetricsBadAddr(t *testing.T) {
	err := ServeMetrics(context.Background(), "127.0.0.1:notaport", prometheus.NewRegistry())
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:notaport") {
		t.Errorf("ServeMetrics error = %v, want one naming the address", err)
	}
}
