package pgsink

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"crawlq/results"
)

// Metrics are the sink's Prometheus metrics. A nil *Metrics records nothing.
type Metrics struct {
	rows     prometheus.Counter
	entries  prometheus.Counter
	claims   prometheus.Counter
	failures prometheus.Counter
	rejects  prometheus.Counter
	latency  prometheus.Histogram
	rate     prometheus.Gauge
	// alert delivery (Sender)
	alertsSent    prometheus.Counter
	alertsFailed  prometheus.Counter
	alertsGivenUp prometheus.Counter
	alertsPend    prometheus.Gauge
	last          time.Time
	lastRows      float64
	total         float64
}

// NewMetrics registers the sink's metrics with reg, and the stream's
// backlog (crawlq_results_backlog, crawlq_sink_lag) read from rdb at
// every scrape.
func NewMetrics(reg prometheus.Registerer, rdb redis.UniversalClient) *Metrics {
	m := &Metrics{
		rows: prometheus.NewCounter(prometheus.CounterOpts{Name: "crawlq_sink_rows_total",
			Help: "Observations the sink added to PostgreSQL."}),
		entries: prometheus.NewCounter(prometheus.CounterOpts{Name: "crawlq_sink_entries_total",
			Help: "Stream entries the sink committed and acknowledged (a redelivered entry adds no row)."}),
		claims: prometheus.NewCounter(prometheus.CounterOpts{Name: "crawlq_sink_claimed_total",
			Help: "Entries taken over from a sink that stopped acknowledging (XAUTOCLAIM)."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "crawlq_sink_batch_failures_total",
			Help: "Batches PostgreSQL did not commit (retried)."}),
		rejects: prometheus.NewCounter(prometheus.CounterOpts{Name: "crawlq_sink_rejected_total",
			Help: "Stream entries that are not items (not JSON, no id), kept in the rejected table and acknowledged."}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "crawlq_sink_batch_seconds",
			Help: "Time to commit one batch.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 12)}),
		rate: prometheus.NewGauge(prometheus.GaugeOpts{Name: "crawlq_sink_rows_per_second",
			Help: "Observations added per second, over the last batches (at least one second)."}),
	}
	m.alertsSent = prometheus.NewCounter(prometheus.CounterOpts{Name: "crawlq_alerts_sent_total",
		Help: "Alerts a webhook accepted (2xx)."})
	m.alertsFailed = prometheus.NewCounter(prometheus.CounterOpts{Name: "crawlq_alerts_failed_total",
		Help: "Alert posts that failed (no answer or not 2xx); each is retried with backoff."})
	m.alertsGivenUp = prometheus.NewCounter(prometheus.CounterOpts{Name: "crawlq_alerts_given_up_total",
		Help: "Alerts given up after the most attempts."})
	m.alertsPend = prometheus.NewGauge(prometheus.GaugeOpts{Name: "crawlq_alerts_pending",
		Help: "Alerts in the outbox not delivered yet (nor given up)."})
	reg.MustRegister(m.rows, m.entries, m.claims, m.failures, m.rejects, m.latency, m.rate, backlogGauge(rdb),
		m.alertsSent, m.alertsFailed, m.alertsGivenUp, m.alertsPend)
	return m
}

func (m *Metrics) batch(entries, added int, took time.Duration) {
	if m == nil {
		return
	}
	m.rows.Add(float64(added))
	m.entries.Add(float64(entries))
	m.latency.Observe(took.Seconds())
	now := time.Now()
	m.total += float64(added)
	if m.last.IsZero() {
		m.last = now.Add(-took)
	}
	if d := now.Sub(m.last); d >= time.Second {
		m.rate.Set((m.total - m.lastRows) / d.Seconds())
		m.last, m.lastRows = now, m.total
	}
}

func (m *Metrics) failed() {
	if m != nil {
		m.failures.Inc()
	}
}

func (m *Metrics) rejected(n int64) {
	if m != nil {
		m.rejects.Add(float64(n))
	}
}

func (m *Metrics) claimed(n int) {
	if m != nil {
		m.claims.Add(float64(n))
	}
}

func (m *Metrics) alertSent() {
	if m != nil {
		m.alertsSent.Inc()
	}
}

func (m *Metrics) alertFailed(gaveUp bool) {
	if m == nil {
		return
	}
	m.alertsFailed.Inc()
	if gaveUp {
		m.alertsGivenUp.Inc()
	}
}

func (m *Metrics) alertsPending(n int64) {
	if m != nil {
		m.alertsPend.Set(float64(n))
	}
}

// backlogGauge reports the entries the sink group has not acknowledged.
func backlogGauge(rdb redis.UniversalClient) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "crawlq_sink_lag",
		Help: "Results stream entries the sink group has not acknowledged yet."}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		b, err := results.ReadBacklog(ctx, rdb, 0)
		if err != nil {
			return -1
		}
		return float64(b.Unacked)
	})
}
