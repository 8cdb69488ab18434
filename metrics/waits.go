package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// WaitMetrics count a worker's jobs that handed their slot back to wait
// for a proxy (tasks.HandedBack). A nil *WaitMetrics ignores observations.
type WaitMetrics struct {
	handBacks *prometheus.CounterVec
	turn      *prometheus.HistogramVec
}

// NewWaitMetrics creates the hand-back metrics and registers them with reg
// (nil: not registered).
func NewWaitMetrics(reg prometheus.Registerer) *WaitMetrics {
	m := &WaitMetrics{
		handBacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawlq_worker_handbacks_total",
			Help: "Job attempts that handed their slot back to wait for a proxy, per site and reason: proxy (none soon), resume (the session's own proxy cools), exhausted (every proxy quarantined), modem (its modem rotates), confirm (a second proxy for a confirmation). Neither failures nor retries.",
		}, []string{"site", "reason"}),
		turn: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "crawlq_worker_handback_wait_seconds",
			Help:    "How long a job that handed its slot back waits for its turn, per site.",
			Buckets: []float64{.1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{"site"}),
	}
	if reg != nil {
		reg.MustRegister(m.handBacks, m.turn)
	}
	return m
}

// ObserveHandBack counts one attempt on site that handed its slot back
// for reason, waiting after until its turn.
func (m *WaitMetrics) ObserveHandBack(site, reason string, after time.Duration) {
	if m == nil {
		return
	}
	m.handBacks.WithLabelValues(site, reason).Inc()
	m.turn.WithLabelValues(site).Observe(after.Seconds())
}

// RegisterSlotWaits registers with reg the gauge of the jobs waiting in
// their slots for a proxy, per site, read from waiting at each scrape
// (sessions.Manager.Waiting).
func RegisterSlotWaits(reg prometheus.Registerer, waiting func() map[string]int) {
	reg.MustRegister(slotWaits{waiting})
}

// slotWaits is the gauge of jobs waiting in their slots, per site.
type slotWaits struct{ read func() map[string]int }

var slotWaitsDesc = prometheus.NewDesc("crawlq_worker_slot_waits",
	"Jobs waiting in their worker slots for a proxy of their site (at most the site's proxies; the others hand their slots back).",
	[]string{"site"}, nil)

func (s slotWaits) Describe(ch chan<- *prometheus.Desc) { ch <- slotWaitsDesc }

func (s slotWaits) Collect(ch chan<- prometheus.Metric) {
	for site, n := range s.read() {
		ch <- prometheus.MustNewConstMetric(slotWaitsDesc, prometheus.GaugeValue, float64(n), site)
	}
}
