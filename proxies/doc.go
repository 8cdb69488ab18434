// Package proxies owns crawlq's proxy pool: parsing proxy lists in every
// common provider format, the cluster-wide Redis broker that hands out
// fenced, paced, per-site leases (every state change one Lua script on
// Redis's own clock), quarantine of banned proxies, pool statistics,
// static sharding of proxies over servers and sites (modulo, consistent
// hashing, site division), and the fallback pool (FallbackBroker) that
// keeps a worker leasing from its own consistent-hash shard while the
// broker's Redis does not answer. Its failover guards (failover.go) keep
// one holder per lease and fresh tokens across a Sentinel or Cluster
// failover.
package proxies
