// Package web is crawlq's dashboard: Asynq's own web UI (asynqmon) mounted
// under /monitoring/, a server-rendered proxy-pool page at /, its proxy
// table as JSON at /api/pool (paged, sorted and filtered; ?all=1 streamed),
// the numbers the page updates in place at /api/summary, Prometheus
// metrics at /metrics, and optional HTTP basic auth in front of all of it.
//
// It is built for pools of 100,000 proxies: counts by state come from the
// broker's Summary (no full read); the proxy table, counters and latency
// come from one full read of the pool made in the background (viewcache.go,
// sampler.go) and shared by every request; /metrics exports aggregates per
// site and class unless Config.MetricsPerProxy.
//
// Collect builds the Status snapshot that `crawlq status` prints and that
// /metrics reports; ServeMetrics serves `crawlq worker` its
// own request, verdict and latency metrics.
//
// No page, JSON answer or metric carries a proxy password: proxies are shown
// by ID and masked spec (scheme://user:***@host:port) only.
package web
