package web

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynq/x/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.uber.org/zap"

	"crawlq/proxies"
)

// Descriptors of the pool metrics. Proxies are labelled by ID only, never by
// their spec, so no credential reaches Prometheus.
var (
	poolUpDesc = prometheus.NewDesc("crawlq_pool_up",
		"1 if the last read of the proxy pool succeeded, else 0.", nil, nil)
	poolTotalDesc = prometheus.NewDesc("crawlq_pool_proxies_total",
		"Number of proxies in the pool.", nil, nil)
	poolSiteDesc = prometheus.NewDesc("crawlq_pool_proxies",
		"Proxies per site by state (ready, leased, cooling, quarantined).", []string{"site", "state"}, nil)
	poolClassDesc = prometheus.NewDesc("crawlq_pool_class_proxies",
		"Proxies per site, class and state.", []string{"site", "class", "state"}, nil)
	proxyOKDesc = prometheus.NewDesc("crawlq_proxy_ok_total",
		"Leases of a proxy released as a success, per site.", []string{"proxy", "class", "site"}, nil)
	proxyFailedDesc = prometheus.NewDesc("crawlq_proxy_failed_total",
		"Leases of a proxy released as a proxy failure, per site.", []string{"proxy", "class", "site"}, nil)
	proxyBannedDesc = prometheus.NewDesc("crawlq_proxy_banned_total",
		"Bans of a proxy by a site.", []string{"proxy", "class", "site"}, nil)
	proxyLatencyDesc = prometheus.NewDesc("crawlq_proxy_latency_ewma_seconds",
		"Moving average of a proxy's response latency, per site.", []string{"proxy", "class", "site"}, nil)
	buildInfoDesc = prometheus.NewDesc("crawlq_build_info",
		"Always 1; labels name the crawlq build.", []string{"version", "revision", "goversion"}, nil)
)

// poolCollector reads the broker's stats once per scrape.
type poolCollector struct {
	broker  proxies.Broker
	timeout time.Duration
	log     *zap.Logger
}

// Describe sends the pool descriptors.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolUpDesc, poolTotalDesc, poolSiteDesc, poolClassDesc,
		proxyOKDesc, proxyFailedDesc, proxyBannedDesc, proxyLatencyDesc} {
		ch <- d
	}
}

// Collect sends the pool gauges and per-proxy counters; a broker error
// gives crawlq_pool_up 0 and is logged.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	ps, err := poolStats(ctx, c.broker)
	if err != nil {
		c.log.Warn("metrics: read pool", zap.Error(err))
		ch <- gauge(poolUpDesc, 0)
		return
	}
	ch <- gauge(poolUpDesc, 1)
	ch <- gauge(poolTotalDesc, float64(ps.Total))
	collectSites(ch, ps.Sites)
	collectProxies(ch, ps.Proxies)
}

func collectSites(ch chan<- prometheus.Metric, sites map[string]proxies.SiteStats) {
	for site, st := range sites {
		sendStates(ch, poolSiteDesc, counts(st), site)
		for class, sc := range st.ByClass {
			sendStates(ch, poolClassDesc, sc, site, string(class))
		}
	}
}

func counts(st proxies.SiteStats) proxies.StateCounts {
	return proxies.StateCounts{Ready: st.Ready, Leased: st.Leased, Cooling: st.Cooling, Quarantined: st.Quarantined}
}

// sendStates sends one gauge per state; labels get the state appended.
func sendStates(ch chan<- prometheus.Metric, d *prometheus.Desc, sc proxies.StateCounts, labels ...string) {
	for state, n := range map[string]int{"ready": sc.Ready, "leased": sc.Leased,
		"cooling": sc.Cooling, "quarantined": sc.Quarantined} {
		ch <- gauge(d, float64(n), append(append([]string(nil), labels...), state)...)
	}
}

func collectProxies(ch chan<- prometheus.Metric, ps []proxies.ProxyStats) {
	for _, p := range ps {
		for site, st := range p.Sites {
			l := []string{p.ID, string(p.Class), site}
			ch <- counter(proxyOKDesc, float64(st.OK), l...)
			ch <- counter(proxyFailedDesc, float64(st.Failed), l...)
			ch <- counter(proxyBannedDesc, float64(st.Banned), l...)
			ch <- gauge(proxyLatencyDesc, st.EWMALatency.Seconds(), l...)
		}
	}
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func counter(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

// newRegistry builds the dashboard's registry: pool, Asynq queues, build
// info, Go runtime and process metrics.
func newRegistry(insp *asynq.Inspector, b proxies.Broker, version string, log *zap.Logger) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		&poolCollector{broker: b, timeout: 5 * time.Second, log: log},
		metrics.NewQueueMetricsCollector(insp),
		buildInfo(version),
		collectors.NewBuildInfoCollector(),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// buildInfo is the constant crawlq_build_info gauge.
func buildInfo(version string) prometheus.Collector {
	rev := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
		if version == "" {
			version = bi.Main.Version
		}
	}
	return constCollector{gauge(buildInfoDesc, 1, dash(version), rev, runtime.Version())}
}

// constCollector serves fixed metrics.
type constCollector []prometheus.Metric

// Describe sends each metric's descriptor.
func (c constCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c {
		ch <- m.Desc()
	}
}

// Collect sends the metrics.
func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}
