package main

import (
	"fmt"
	"time"

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
