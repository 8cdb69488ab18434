package proxies

import (
	"math/rand/v2"
	"sort"
	"time"

	"go.uber.org/zap"
)

// Mode says how leases of one proxy on different sites relate.
type Mode string

// Broker modes.
const (
	// ModeShared lets a proxy serve different sites at once, one lease per
	// (proxy, site). The default.
	ModeShared Mode = "shared"
	// ModeExclusive allows one lease per proxy across all sites.
	ModeExclusive Mode = "exclusive"
	// ModePartitioned gives each proxy one fixed site: its Sites[0], else
	// the site that site division (AssignSite) over the sorted keys of
	// Config.Sites gives it. Every broker of a cluster must use the same
	// Sites keys.
	ModePartitioned Mode = "partitioned"
)

// ParseMode turns a name into a Mode; empty means ModeShared.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeShared, nil
	case ModeShared, ModeExclusive, ModePartitioned:
		return m, nil
	}
	return "", &ConfigError{Field: "mode", Reason: "want shared, exclusive or partitioned, got " + s}
}

// NoMinInterval as SiteConfig.MinInterval means no gap between requests.
const NoMinInterval time.Duration = -1

// Defaults of SiteConfig fields left zero.
const (
	DefaultMinInterval    = time.Second
	DefaultQuarantineBase = 300 * time.Second
	DefaultQuarantineCap  = 3600 * time.Second
	DefaultFailPenalty    = 30 * time.Second
	DefaultFailPenaltyCap = 600 * time.Second
)

// SiteConfig is the politeness and quarantine policy of one site. A zero
// field inherits Config.Default's, whose zero fields take the package
// defaults.
type SiteConfig struct {
	// MinInterval is the least time between two requests of one proxy to
	// the site, across the cluster (I2). Default 1s; NoMinInterval for none.
	MinInterval time.Duration
	// QuarantineBase is the first ban's quarantine ceiling; it doubles with
	// every ban since the last ok. Default 300s.
	QuarantineBase time.Duration
	// QuarantineCap caps the ceiling. Default 3600s.
	QuarantineCap time.Duration
	// QuarantineFloor is the least quarantine: the time is uniform in
	// [floor, ceiling] (full jitter, kept off zero). Default base/10.
	QuarantineFloor time.Duration
	// FailPenalty is added to MinInterval after a proxy failure; it
	// doubles with every failure on the site since the proxy's last ok, so
	// a dead proxy is tried less and less often and a flaky one soon
	// again. Default 30s.
	FailPenalty time.Duration
	// FailPenaltyCap caps the doubled penalty. Default 600s.
	FailPenaltyCap time.Duration
	// ClearanceWait is how long a lease waits for a proxy that holds the
	// site's clearance (MarkCleared) to be ready again before it takes a
	// ready proxy without one, which costs a browser visit. Default 0: no
	// wait (a ready proxy with a clearance is still taken first). A visit
	// is paid once per proxy and clearance lifetime, a wait on every
	// lease: waiting saves visits but caps a politeness-bound crawl at
	// the cleared proxies' pace; it pays where browsers are scarce.
	ClearanceWait time.Duration
	// RotateAfter and RotateEvery make a modem change its IP before the
	// site bans it by volume: after that many requests from one IP to
	// the site, or that long since the IP's first. 0: only on a ban.
	RotateAfter int
	RotateEvery time.Duration
	// RotateAfterAuto ("rotate_after: auto") makes the budget per exit IP
	// the site's learned volume:<site> (modem_limit.go), learned from
	// where its bans fall, instead of RotateAfter.
	RotateAfterAuto bool
	// Learn, if set, has the broker learn the pace per class instead of
	// keeping MinInterval (min_interval: auto; learn.go). Where the
	// broker has no learned pace to give (exit holds, the fallback pool)
	// it keeps Learn.Max.
	Learn *PaceLearning
}

// Config configures a RedisBroker.
type Config struct {
	// Pool names the key space: keys are crawlq:{Pool}:…. Default "pool".
	Pool string
	// Mode is ModeShared (default), ModeExclusive or ModePartitioned.
	Mode Mode
	// Sites holds per-site policies; in ModePartitioned its keys are the
	// sites proxies are divided over.
	Sites map[string]SiteConfig
	// Default is the policy of sites not in Sites, and the fallback of
	// their zero fields.
	Default SiteConfig
	// Logger gets debug lines on syncs and errors; default zap.NewNop().
	Logger *zap.Logger
	// Clock, if set, returns a skew added to Redis TIME inside every
	// script, so tests advance time without sleeping while the scripts
	// still use Redis's own clock. Default none.
	Clock func() time.Duration
	// LeasePoll caps LeaseWait's sleep while proxies are leased, since a
	// lease may end before it expires (jittered in [LeasePoll/2, LeasePoll]).
	// Default 20ms.
	LeasePoll time.Duration
	// Rand returns a number in [0,1) for the quarantine jitter. Default
	// math/rand/v2.Float64.
	Rand func() float64
	// Pipelines caps the round trips the broker's lease, release and
	// extend scripts have in flight at once: concurrent calls beyond it
	// wait and share the next round trip (one pipeline, each script still
	// alone and atomic in Redis). Default 4; -1 sends each script on its
	// own round trip.
	Pipelines int
	// Replicas, if > 0, ends every round trip of the lease, extend and
	// release scripts with one WAIT for that many replicas (one WAIT per
	// shared round trip), and refuses a lease or extend they did not
	// acknowledge within ReplicaTimeout (ErrNotReplicated): a failover to
	// such a replica keeps every lease handed out (I1). For a Sentinel
	// group's master; not on Redis Cluster (WAIT has no key to route by).
	// Default 0: no WAIT.
	Replicas int
	// ReplicaTimeout bounds each WAIT. Default 250ms.
	ReplicaTimeout time.Duration
	// Epochs makes the lease scripts follow the master's replication ID
	// (failover.go): when it changes (a replica was promoted, or a Redis
	// restarted and may have lost writes) the pool's epoch goes up, fencing
	// tokens jump above every token of the earlier epochs (I3), and, unless
	// Replicas acknowledged every lease, new leases are refused for
	// EpochFence so leases the new master forgot expire first (I1).
	// Default off.
	Epochs bool
	// EpochFence is how long new leases are refused after an epoch change
	// without Replicas; at least the longest lease TTL in use. Default 30s
	// (the worker's default lease TTL).
	EpochFence time.Duration
}

// ConfigError is a bad configuration value.
type ConfigError struct{ Field, Reason string }

func (e *ConfigError) Error() string { return "proxies config " + e.Field + ": " + e.Reason }

func (c Config) withDefaults() Config {
	if c.Pool == "" {
		c.Pool = "pool"
	}
	if c.Mode == "" {
		c.Mode = ModeShared
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.LeasePoll <= 0 {
		c.LeasePoll = 20 * time.Millisecond
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	if c.Pipelines == 0 {
		c.Pipelines = defaultFlights
	}
	if c.ReplicaTimeout <= 0 {
		c.ReplicaTimeout = defaultReplicaTimeout
	}
	if c.EpochFence <= 0 {
		c.EpochFence = defaultEpochFence
	}
	c.Default = c.Default.fill(SiteConfig{
		MinInterval: DefaultMinInterval, QuarantineBase: DefaultQuarantineBase,
		QuarantineCap: DefaultQuarantineCap, FailPenalty: DefaultFailPenalty, FailPenaltyCap: DefaultFailPenaltyCap,
	})
	return c
}

// fill sets zero fields from d.
func (s SiteConfig) fill(d SiteConfig) SiteConfig {
	if s.MinInterval == 0 && s.Learn == nil {
		s.MinInterval, s.Learn = d.MinInterval, d.Learn
	}
	if s.QuarantineBase == 0 {
		s.QuarantineBase = d.QuarantineBase
	}
	if s.QuarantineCap == 0 {
		s.QuarantineCap = d.QuarantineCap
	}
	if s.QuarantineFloor == 0 {
		s.QuarantineFloor = d.QuarantineFloor
	}
	if s.FailPenalty == 0 {
		s.FailPenalty = d.FailPenalty
	}
	if s.FailPenaltyCap == 0 {
		s.FailPenaltyCap = d.FailPenaltyCap
	}
	if s.ClearanceWait == 0 {
		s.ClearanceWait = d.ClearanceWait
	}
	return s
}

// site is the effective policy of site.
func (c Config) site(name string) SiteConfig {
	s := c.Sites[name].fill(c.Default)
	if s.QuarantineFloor == 0 {
		s.QuarantineFloor = s.QuarantineBase / 10
	}
	if s.MinInterval < 0 {
		s.MinInterval = 0
	}
	if s.Learn != nil {
		l := s.Learn.withDefaults()
		s.Learn, s.MinInterval = &l, l.Max
	}
	s.FailPenaltyCap = max(s.FailPenaltyCap, s.FailPenalty)
	s.ClearanceWait = max(s.ClearanceWait, 0)
	return s
}

// partitionSites are the sorted keys of Sites.
func (c Config) partitionSites() []string {
	out := make([]string, 0, len(c.Sites))
	for s := range c.Sites {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// skew is the injected clock offset in ms.
func (c Config) skew() int64 {
	if c.Clock == nil {
		return 0
	}
	return c.Clock().Milliseconds()
}
