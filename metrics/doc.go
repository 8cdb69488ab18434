// Package metrics holds the Prometheus metrics a `crawlq worker` exports
// about itself: its requests, verdicts and latency (WorkerMetrics), its
// browser tier (BrowserMetrics), its sessions' failed writes, its broker
// fallback and its results backlog gate. Each reads what it measures
// through a small interface, so this package imports none of crawlq's.
// web.ServeMetrics serves the registry.
package metrics
