package chaos

import (
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Options configure Run. Zero fields take the defaults named.
type Options struct {
	// Binary is the crawlq executable the workers run. Required.
	Binary string
	// Jobs is the number of jobs enqueued, at least MinJobs. Default 600.
	Jobs int
	// Workers is the number of `crawlq worker` processes. Default 3.
	Workers int
	// Concurrency is each worker's --concurrency. Default 6.
	Concurrency int
	// Proxies is the farm size. Default 20.
	Proxies int
	// LeaseTTL is the workers' --lease-ttl, and how long Run waits after
	// the last job before it counts stuck leases. Default 5s.
	LeaseTTL time.Duration
	// BrokerOutage is how long the broker's Redis is away. Default 10s.
	BrokerOutage time.Duration
	// BrokerOutageMode is how it goes away: OutageRestart (default) or
	// OutageFreeze.
	BrokerOutageMode string
	// QueueOutage is how long the queue Redis stays down between its
	// SIGTERM and its restart. Default 2s.
	QueueOutage time.Duration
	// RestartAfter is how long the killed worker stays dead. Default 5s.
	RestartAfter time.Duration
	// Timeout bounds the whole run; jobs not finished by then count as
	// unfinished. Default 4m30s (the goal is a run under 5 minutes).
	Timeout time.Duration
	// Seed makes the testbed catalog and the job mix repeatable. Default 1.
	Seed int64
	// NoResultJobs of the Jobs are searches for queries that match
	// nothing, spread over the sites: each must complete empty without a
	// quarantine. Default 12.
	NoResultJobs int
	// SoftBans is how many IPs Wildberries soft-bans during the run (one
	// every third eligible request at most): each banned IP's answers that
	// had items come back as the site's empty shape. Default 12.
	SoftBans int
	// SoftBanPairs makes each of those bans soft-ban a second IP at the
	// same moment: the next other IP asking for what it hid (a second
	// opinion) is banned by that request (testbed.SoftBan.Pair), so a
	// confirmation's witness is soft-banned too (issue 36.8).
	SoftBanPairs bool
	// KeepDir keeps the run directory (worker and Redis logs) and reports
	// its path in Details.Dir.
	KeepDir bool
	// Logger receives the harness's progress and fault events. Default
	// zap.NewNop().
	Logger *zap.Logger
	// Topology is the Redis the run uses: "" (default) a queue Redis and a
	// broker Redis, one server each; TopologySentinel or TopologyCluster one
	// deployment for both, whose master is killed -9 twice (topology.go).
	Topology string
	// Postgres, if set, is a PostgreSQL server (postgres:// URL) on which
	// the run creates its own database, drained into by a `crawlq sink`
	// process that is killed -9 mid-run and whose connections PostgreSQL
	// terminates mid-batch (sink.go). Items are then counted in
	// PostgreSQL, and the result gains observations_missing and
	// observations_duplicated.
	Postgres string
	// Modems is how many testbed modems join the farm, with their change
	// links; every site rotates them after a few requests, and the
	// kill_worker fault kills -9 the worker rotating one (modem.go).
	// Default 0: none (see docs/benchmarks.md, Chaos: with modems the
	// run meets an I2 bug of the fallback's return to the broker).
	Modems int
	// LearnVolume gives every site rotate_after auto instead of 3 (with
	// Modems): the modems' budget per IP learned from the bans.
	LearnVolume bool
	// LearnPace gives every site min_interval auto, learned between the
	// testbed's rule (I2's bound) and twice the pace it is told.
	LearnPace bool
}

// Broker outage modes.
const (
	// OutageRestart stops the broker's Redis with SIGTERM and starts it
	// again from its AOF: clients get connection refused meanwhile.
	OutageRestart = "restart"
	// OutageFreeze stops it with SIGSTOP and resumes it with SIGCONT:
	// clients hang until their timeouts meanwhile.
	OutageFreeze = "freeze"
)

// MinJobs is the least number of jobs a chaos run enqueues.
const MinJobs = 500

func (o Options) withDefaults() Options {
	setInt(&o.Jobs, 600)
	setInt(&o.Workers, 3)
	setInt(&o.Concurrency, 6)
	setInt(&o.Proxies, 20)
	setInt(&o.NoResultJobs, 12)
	setInt(&o.SoftBans, 12)
	setDur(&o.LeaseTTL, 5*time.Second)
	setDur(&o.BrokerOutage, 10*time.Second)
	setDur(&o.QueueOutage, 2*time.Second)
	setDur(&o.RestartAfter, 5*time.Second)
	setDur(&o.Timeout, 4*time.Minute+30*time.Second)
	if o.BrokerOutageMode == "" {
		o.BrokerOutageMode = OutageRestart
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Binary == "":
		return fmt.Errorf("chaos: no crawlq binary given")
	case o.Jobs < MinJobs:
		return fmt.Errorf("chaos: --jobs %d: want at least %d", o.Jobs, MinJobs)
	case o.Workers < 2:
		return fmt.Errorf("chaos: --workers %d: want at least 2 (one is killed)", o.Workers)
	case o.BrokerOutageMode != OutageRestart && o.BrokerOutageMode != OutageFreeze:
		return fmt.Errorf("chaos: --broker-outage %q: want %s or %s", o.BrokerOutageMode, OutageRestart, OutageFreeze)
	case o.Topology != "" && o.Topology != TopologySentinel && o.Topology != TopologyCluster:
		return fmt.Errorf("chaos: --topology %q: want %s or %s", o.Topology, TopologySentinel, TopologyCluster)
	case o.Proxies < 8:
		return fmt.Errorf("chaos: --proxies %d: want at least 8 (a quarter die)", o.Proxies)
	}
	return nil
}

func setInt(v *int, def int) {
	if *v <= 0 {
		*v = def
	}
}

func setDur(v *time.Duration, def time.Duration) {
	if *v <= 0 {
		*v = def
	}
}
