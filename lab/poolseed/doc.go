// Package poolseed fills a broker pool with many fake proxies and drives
// real leases and releases through the broker on a few sites, so the
// dashboard, /metrics and `crawlq bench web` can be measured and tested
// at the pool sizes the broker is built for (10,000–100,000 proxies).
// The proxies are loopback addresses that are never dialled.
package poolseed
