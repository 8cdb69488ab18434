// Package web is crawlq's dashboard: Asynq's own web UI (asynqmon) mounted
// under /monitoring/, a server-rendered proxy-pool page at /, the same data
// as JSON at /api/pool, Prometheus metrics at /metrics, and optional HTTP
// basic auth in front of all of it.
//
// Collect builds the Status snapshot that `crawlq status` prints and that
// /metrics reports; WorkerMetrics and ServeMetrics give `crawlq worker` its
// own request, verdict and latency metrics.
//
// No page, JSON answer or metric carries a proxy password: proxies are shown
// by ID and masked spec (scheme://user:***@host:port) only.
package web
