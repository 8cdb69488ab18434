package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// WorkerMetrics are one worker's request counters, served by
// `crawlq worker --metrics-addr`. A nil *WorkerMetrics ignores observations,
// so a worker without metrics needs no checks.
type WorkerMetrics struct {
	requests *prometheus.CounterVec
	verdicts *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	defects  *prometheus.CounterVec
	pows     *prometheus.CounterVec
	powTime  *prometheus.HistogramVec
}

// NewWorkerMetrics creates the worker's metrics and registers them with reg
// (nil: not registered). It panics if reg already holds them, like
// prometheus.MustRegister.
func NewWorkerMetrics(reg prometheus.Registerer) *WorkerMetrics {
	m := &WorkerMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawlq_worker_requests_total", Help: "Requests sent through leased proxies, per site.",
		}, []string{"site"}),
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawlq_worker_verdicts_total", Help: "Ban-detection verdicts of responses, per site.",
		}, []string{"site", "verdict"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "crawlq_worker_request_duration_seconds", Help: "Request latency through the proxy, per site.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"site"}),
		defects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawlq_worker_request_defects_total",
			Help: "Requests a site refused as sent (its headers), not the proxy, per site, job kind and reason (status 403).",
		}, []string{"site", "kind", "reason"}),
		pows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawlq_worker_pow_solves_total",
			Help: "Proof-of-work challenges (Avito's 439) solved over HTTP in the job's session, no browser, per site and result: solved or failed.",
		}, []string{"site", "result"}),
		powTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "crawlq_worker_pow_solve_seconds",
			Help:    "Time of one proof-of-work solve, per site: its two paced requests and the hashing.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"site"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.verdicts, m.latency, m.defects, m.pows, m.powTime)
	}
	return m
}

// ObserveRequest counts one request to site with its verdict (ok, blocked,
// rate_limited, proxy_failure, not_found…) and latency.
func (m *WorkerMetrics) ObserveRequest(site, verdict string, latency time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(site).Inc()
	m.verdicts.WithLabelValues(site, verdict).Inc()
	m.latency.WithLabelValues(site).Observe(latency.Seconds())
}

// ObserveDefect counts one request defect: site refused a request of a
// job of kind as sent, for reason ("status 403").
func (m *WorkerMetrics) ObserveDefect(site, kind, reason string) {
	if m == nil {
		return
	}
	m.defects.WithLabelValues(site, kind, reason).Inc()
}

// ObservePoW counts one proof-of-work solve on site, solved or failed,
// and its time.
func (m *WorkerMetrics) ObservePoW(site string, solved bool, took time.Duration) {
	if m == nil {
		return
	}
	result := "failed"
	if solved {
		result = "solved"
	}
	m.pows.WithLabelValues(site, result).Inc()
	m.powTime.WithLabelValues(site).Observe(took.Seconds())
}

// SessionErrors is what /metrics reads of a worker's sessions
// (*sessions.Manager).
type SessionErrors interface {
	// ReleaseErrors is how many lease releases failed.
	ReleaseErrors() int64
	// StoreErrors is how many session record writes failed.
	StoreErrors() int64
}

// RegisterSessionErrors registers with reg the counters
// crawlq_worker_session_release_errors_total and
// crawlq_worker_session_store_errors_total, read from s at each scrape.
func RegisterSessionErrors(reg prometheus.Registerer, s SessionErrors) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "crawlq_worker_session_release_errors_total",
		Help: "Lease releases that failed (the broker's Redis refused or did not answer); each logged with its task. The lease frees itself at its TTL."},
		func() float64 { return float64(s.ReleaseErrors()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "crawlq_worker_session_store_errors_total",
			Help: "Session record writes and deletions that failed; each logged with its task."},
			func() float64 { return float64(s.StoreErrors()) }))
}
