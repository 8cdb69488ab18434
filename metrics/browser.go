package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// BrowserGauges is what /metrics reads of a worker's browser tier
// (*browser.Browser).
type BrowserGauges interface {
	// RSS is the browser processes' resident memory in bytes.
	RSS() int64
	// Live is the number of browser contexts open now.
	Live() int
	// InterceptionErrors is how many answers to requests paused at the
	// browser's interception failed (each ended its visit).
	InterceptionErrors() int64
	// Loaded is how many requests the browser's pages let through, by
	// kind (document, script, stylesheet, xhr, ...).
	Loaded() map[string]int64
}

// BrowserMetrics count a worker's browser visits. A nil *BrowserMetrics
// ignores observations.
type BrowserMetrics struct {
	visits *prometheus.CounterVec
}

// NewBrowserMetrics registers with reg the gauges of b
// (crawlq_worker_browser_rss_bytes, crawlq_worker_browser_contexts, read at
// each scrape), the counter crawlq_worker_browser_interception_errors_total
// (read from b too), crawlq_worker_browser_requests_total{kind} (read from
// b) and the counter crawlq_worker_challenges_total{site,result}.
func NewBrowserMetrics(reg prometheus.Registerer, b BrowserGauges) *BrowserMetrics {
	m := &BrowserMetrics{visits: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "crawlq_worker_challenges_total", Help: "JavaScript challenges met, per site and result: solved or failed by the browser, reused (a kept clearance of the proxy).",
	}, []string{"site", "result"})}
	rss := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "crawlq_worker_browser_rss_bytes",
		Help: "Resident memory of the worker's browser processes (PSS, shared pages counted once); 0 while no browser runs."},
		func() float64 { return float64(b.RSS()) })
	live := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "crawlq_worker_browser_contexts",
		Help: "Browser contexts (challenges being cleared) open now."},
		func() float64 { return float64(b.Live()) })
	failed := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "crawlq_worker_browser_interception_errors_total",
		Help: "Answers to requests paused at the browser's interception that failed; each ended its visit (a request that may still be paused has its browser killed)."},
		func() float64 { return float64(b.InterceptionErrors()) })
	reg.MustRegister(m.visits, rss, live, failed, loadedCollector{b})
	return m
}

// loadedDesc describes crawlq_worker_browser_requests_total.
var loadedDesc = prometheus.NewDesc("crawlq_worker_browser_requests_total",
	"Requests the browser's pages let out through the session's proxy, by kind (document, script, stylesheet, xhr, ...): the site's, paced by the session, and its CDNs'.",
	[]string{"kind"}, nil)

// loadedCollector reads the browser's requests by kind at each scrape.
type loadedCollector struct{ b BrowserGauges }

func (c loadedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- loadedDesc }

func (c loadedCollector) Collect(ch chan<- prometheus.Metric) {
	for kind, n := range c.b.Loaded() {
		ch <- prometheus.MustNewConstMetric(loadedDesc, prometheus.CounterValue, float64(n), kind)
	}
}

// ObserveChallenge counts one challenge of site by result: solved or
// failed (a browser visit), reused (a kept clearance, no visit).
func (m *BrowserMetrics) ObserveChallenge(site, result string) {
	if m == nil {
		return
	}
	m.visits.WithLabelValues(site, result).Inc()
}
