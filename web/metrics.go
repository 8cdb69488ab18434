package web

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/hibiken/asynq/x/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/proxies"
	"crawlq/results"
)

// Descriptors of the pool metrics. By default every series is per site
// and class at most, so their count is flat in the pool size; the
// per-proxy ones (crawlq_proxy_*) only with Config.MetricsPerProxy.
// Proxies are labelled by ID only, never by their spec, so no credential
// reaches Prometheus.
var (
	poolUpDesc = prometheus.NewDesc("crawlq_pool_up",
		"1 if the last read of the proxy pool succeeded, else 0.", nil, nil)
	poolTotalDesc = prometheus.NewDesc("crawlq_pool_proxies_total",
		"Number of proxies in the pool.", nil, nil)
	poolSiteDesc = prometheus.NewDesc("crawlq_pool_proxies",
		"Proxies per site by state (ready, leased, cooling, quarantined).", []string{"site", "state"}, nil)
	poolClassDesc = prometheus.NewDesc("crawlq_pool_class_proxies",
		"Proxies per site, class and state.", []string{"site", "class", "state"}, nil)
	poolClearedDesc = prometheus.NewDesc("crawlq_pool_cleared_proxies",
		"Proxies per site holding a live clearance of its JavaScript challenge (also counted in their state).", []string{"site"}, nil)
	poolOKDesc = prometheus.NewDesc("crawlq_pool_ok_total",
		"Leases released as a success, per site and class (as of the last full read of the pool).", []string{"site", "class"}, nil)
	poolFailedDesc = prometheus.NewDesc("crawlq_pool_failed_total",
		"Leases released as a proxy failure, per site and class (as of the last full read of the pool).", []string{"site", "class"}, nil)
	poolBannedDesc = prometheus.NewDesc("crawlq_pool_banned_total",
		"Bans of proxies by a site, per site and class (as of the last full read of the pool).", []string{"site", "class"}, nil)
	poolLatencyDesc = prometheus.NewDesc("crawlq_pool_latency_seconds",
		"Distribution of the proxies' moving-average response latency per site and class, at the last full read of the pool "+
			"(one observation per proxy with a success; use histogram_quantile without rate()).", []string{"site", "class"}, nil)
	poolReadDesc = prometheus.NewDesc("crawlq_pool_read_duration_seconds",
		"How long the last full read of the pool took (proxy table, counters, latency).", nil, nil)
	poolReadAgeDesc = prometheus.NewDesc("crawlq_pool_read_age_seconds",
		"Age of the last full read of the pool.", nil, nil)
	proxyOKDesc = prometheus.NewDesc("crawlq_proxy_ok_total",
		"Leases of a proxy released as a success, per site (--metrics-per-proxy).", []string{"proxy", "class", "site"}, nil)
	proxyFailedDesc = prometheus.NewDesc("crawlq_proxy_failed_total",
		"Leases of a proxy released as a proxy failure, per site (--metrics-per-proxy).", []string{"proxy", "class", "site"}, nil)
	proxyBannedDesc = prometheus.NewDesc("crawlq_proxy_banned_total",
		"Bans of a proxy by a site (--metrics-per-proxy).", []string{"proxy", "class", "site"}, nil)
	proxyLatencyDesc = prometheus.NewDesc("crawlq_proxy_latency_ewma_seconds",
		"Moving average of a proxy's response latency, per site (--metrics-per-proxy).", []string{"proxy", "class", "site"}, nil)
	modemsDesc = prometheus.NewDesc("crawlq_pool_modems",
		"Modems in the pool (proxies with a change-IP link), by state: rotating (changing IP now) or all.", []string{"state"}, nil)
	modemRotationsDesc = prometheus.NewDesc("crawlq_pool_modem_rotations_per_minute",
		"Modem IP rotations ended per minute over the last 10 minutes, by result (done, failed: quarantined instead).", []string{"result"}, nil)
	modemRotationTimeDesc = prometheus.NewDesc("crawlq_pool_modem_rotation_seconds",
		"Time from a modem's ban (or rotate_after) to its new IP, over the last 1000 rotations done, by quantile.", []string{"quantile"}, nil)
	modemCostDesc = prometheus.NewDesc("crawlq_pool_modem_requests_per_modem_hour",
		"Requests sent through modems per modem-hour over the last 10 minutes: what a mobile proxy buys.", nil, nil)
	buildInfoDesc = prometheus.NewDesc("crawlq_build_info",
		"Always 1; labels name the crawlq build.", []string{"version", "revision", "goversion"}, nil)
)

// poolCollector counts the pool once per scrape (proxies.RedisBroker.Summary:
// no full read) and adds the counters of the dashboard's latest full read.
type poolCollector struct {
	s       *Server
	timeout time.Duration
}

// Describe sends the pool descriptors.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolUpDesc, poolTotalDesc, poolSiteDesc, poolClassDesc, poolClearedDesc,
		poolOKDesc, poolFailedDesc, poolBannedDesc, poolLatencyDesc, poolReadDesc, poolReadAgeDesc,
		modemsDesc, modemRotationsDesc, modemRotationTimeDesc, modemCostDesc} {
		ch <- d
	}
	for _, d := range limitDescs {
		ch <- d
	}
	if c.s.cfg.MetricsPerProxy {
		for _, d := range []*prometheus.Desc{proxyOKDesc, proxyFailedDesc, proxyBannedDesc, proxyLatencyDesc} {
			ch <- d
		}
	}
}

// Collect sends the pool gauges and counters; a broker error gives
// crawlq_pool_up 0 and is logged.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	sum, err := poolSummary(ctx, c.s.cfg.Broker)
	if err != nil {
		c.s.log.Warn("metrics: read pool", zap.Error(err))
		ch <- gauge(poolUpDesc, 0)
		return
	}
	ch <- gauge(poolUpDesc, 1)
	ch <- gauge(poolTotalDesc, float64(sum.Total))
	collectSites(ch, sum.Sites)
	collectModems(ch, sum.Modems)
	collectLimits(ch, sum.Limits)
	v, _ := c.s.views.get(ctx, viewWait)
	if v == nil {
		return
	}
	ch <- gauge(poolReadDesc, v.Took.Seconds())
	ch <- gauge(poolReadAgeDesc, time.Since(v.At).Seconds())
	collectClasses(ch, v.Classes)
	if c.s.cfg.MetricsPerProxy && v.stats != nil {
		collectProxies(ch, v.stats.Proxies)
	}
}

func collectSites(ch chan<- prometheus.Metric, sites map[string]proxies.SiteStats) {
	for site, st := range sites {
		sendStates(ch, poolSiteDesc, counts(st), site)
		ch <- gauge(poolClearedDesc, float64(st.Cleared), site)
		for class, sc := range st.ByClass {
			sendStates(ch, poolClassDesc, sc, site, string(class))
		}
	}
}

// collectModems sends the modem figures of a pool that has modems.
func collectModems(ch chan<- prometheus.Metric, m *proxies.ModemStats) {
	if m == nil {
		return
	}
	ch <- gauge(modemsDesc, float64(m.Modems), "all")
	ch <- gauge(modemsDesc, float64(m.Rotating), "rotating")
	perMin := proxies.StatsWindow.Minutes()
	ch <- gauge(modemRotationsDesc, float64(m.Rotations-m.Failed)/perMin, "done")
	ch <- gauge(modemRotationsDesc, float64(m.Failed)/perMin, "failed")
	ch <- gauge(modemRotationTimeDesc, m.P50.Seconds(), "0.5")
	ch <- gauge(modemRotationTimeDesc, m.P90.Seconds(), "0.9")
	ch <- gauge(modemCostDesc, m.PerModemHour)
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

// collectClasses sends the outcome counters and the latency histogram of
// every site and class.
func collectClasses(ch chan<- prometheus.Metric, cs []ClassCounters) {
	for _, c := range cs {
		l := []string{c.Site, string(c.Class)}
		ch <- counter(poolOKDesc, float64(c.OK), l...)
		ch <- counter(poolFailedDesc, float64(c.Failed), l...)
		ch <- counter(poolBannedDesc, float64(c.Banned), l...)
		buckets := make(map[float64]uint64, len(latencyBuckets))
		for i, b := range latencyBuckets {
			buckets[b] = c.Buckets[i]
		}
		ch <- prometheus.MustNewConstHistogram(poolLatencyDesc, c.Measured, c.LatencySum.Seconds(), buckets, l...)
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
func (s *Server) newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		&poolCollector{s: s, timeout: 5 * time.Second},
		metrics.NewQueueMetricsCollector(s.insp),
		buildInfo(s.cfg.Version),
		resultsBacklog(s.rdb),
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

// resultsBacklog is crawlq_results_backlog: the results entries the sink
// has not acknowledged, or, without a sink, the stream's length.
func resultsBacklog(rdb redis.UniversalClient) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "crawlq_results_backlog",
		Help: "Results stream entries a durable sink has not acknowledged yet (without a sink: the stream's length; -1: unread)."},
		func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			b, err := results.ReadBacklog(ctx, rdb, 0)
			switch {
			case err != nil:
				return -1
			case b.Sink:
				return float64(b.Unacked)
			}
			return float64(b.Length)
		})
}
