package main

import (
	"fmt"
	"time"

	"crawlq/internal/redisproc"
	"crawlq/internal/redisx"
	"crawlq/proxies"
)

// failoverGuards turns on the broker's failover guards (--broker-failover)
// unless the config set them: wait (WAIT for one replica after every
// round trip, and epochs with no fence), epochs (replication-ID epochs,
// new leases fenced off for one lease TTL after a failover), off, or auto:
// wait on a Sentinel group, epochs on a Cluster (WAIT cannot be routed
// there), off on one server.
func failoverGuards(cfg proxies.Config, mode string, t *redisx.Target, leaseTTL time.Duration) (proxies.Config, error) {
	if mode == "auto" || mode == "" {
		mode = "off"
		switch t.Topology {
		case redisx.Sentinel:
			mode = "wait"
		case redisx.Cluster:
			mode = "epochs"
		}
	}
	if cfg.Epochs || cfg.Replicas > 0 {
		return cfg, nil
	}
	switch mode {
	case "off":
		return cfg, nil
	case "wait":
		cfg.Replicas, cfg.Epochs = 1, true
	case "epochs":
		cfg.Epochs = true
	default:
		return cfg, fmt.Errorf("--broker-failover %q: want auto, wait, epochs or off", mode)
	}
	if cfg.EpochFence <= 0 {
		cfg.EpochFence = leaseTTL
	}
	return cfg, nil
}

// sinkReplicas is how many replicas must acknowledge each page's
// transaction on the queue's Redis: one where --broker-failover resolves
// to wait there (a Sentinel group), else none.
func sinkReplicas(mode string, t *redisx.Target, leaseTTL time.Duration) int {
	cfg, err := failoverGuards(proxies.Config{}, mode, t, leaseTTL)
	if err != nil {
		return 0 // the broker's call of failoverGuards reports the bad mode
	}
	return cfg.Replicas
}

// withTopology runs f on the Redis deployment a bench's --topology names:
// "" or "single" the --redis one; "sentinel" or "cluster" a Sentinel
// group or a Redis Cluster started from redis-server on PATH for the run
// (--redis then points at it) and stopped after it.
func withTopology(a *app, topology string, f func() error) error {
	var url string
	var stop func()
	switch topology {
	case "", "single":
		return f()
	case "sentinel":
		g, err := redisproc.StartSentinel()
		if err != nil {
			return fmt.Errorf("--topology sentinel: %w", err)
		}
		url, stop = g.URL(0), g.Stop
	case "cluster":
		rc, err := redisproc.StartCluster()
		if err != nil {
			return fmt.Errorf("--topology cluster: %w", err)
		}
		url, stop = rc.URL(), rc.Stop
	default:
		return fmt.Errorf("--topology %q: want single, sentinel or cluster", topology)
	}
	defer stop()
	saved := a.redisURL
	a.redisURL = url
	defer func() { a.redisURL = saved }()
	return f()
}
