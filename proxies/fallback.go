package proxies

import (
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"
)

// ErrNoSnapshot is returned in fallback when the broker's Redis went down
// before this server ever read the pool.
var ErrNoSnapshot = errors.New("broker redis is down and no pool snapshot was taken")

// NoGrace as FallbackConfig.Grace lets a server lease its shard at once.
const NoGrace time.Duration = -1

// FallbackConfig configures a FallbackBroker. Zero fields take the defaults
// named.
type FallbackConfig struct {
	// ServerID names this server on the ring; it should be the holder name
	// of its leases. Required.
	ServerID string
	// Membership learns the live servers. Default: a RedisMembership on the
	// primary's Redis and pool.
	Membership Membership
	// VNodes is the ring's points per server. Default DefaultVirtualNodes.
	VNodes int
	// Heartbeat is how often the server beats and reads the live servers
	// while the broker answers. Default 2s.
	Heartbeat time.Duration
	// PoolRefresh is how often the pool snapshot (List) is refreshed; the
	// quarantines are read with every heartbeat. Default 10s.
	PoolRefresh time.Duration
	// ProbeInterval is how often Redis is pinged in fallback. Default 1s.
	ProbeInterval time.Duration
	// Grace is how long after the switch a (proxy, site) pair this server
	// did not hold waits before its first local lease, so a broker lease
	// another server held on it has expired and been dropped. Default: the
	// longest lease TTL this broker handed out (30s before any); NoGrace for
	// none.
	Grace time.Duration
	// MaxPending bounds the broker releases kept for replay. Default 10000.
	MaxPending int
	// Logger gets the loud switch lines. Default zap.NewNop().
	Logger *zap.Logger
	// OnFallback, if set, is told every switch: true into fallback, false
	// back to the broker (for metrics). Called without locks held.
	OnFallback func(active bool)
	// Clock is the local time of fallback leases and heartbeats. Default
	// time.Now.
	Clock func() time.Time
}

func (c FallbackConfig) withDefaults() FallbackConfig {
	setDefault(&c.Heartbeat, 2*time.Second)
	setDefault(&c.PoolRefresh, 10*time.Second)
	setDefault(&c.ProbeInterval, time.Second)
	if c.MaxPending <= 0 {
		c.MaxPending = 10000
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// FallbackBroker is the RedisBroker with a local fallback pool. While Redis
// answers every call goes to the broker, and the wrapper keeps the last
// known pool, quarantines and live servers. When a call fails because
// Redis does not answer (a connection error, never a broker error such as
// ErrNoProxy) it switches to fallback: leases come only from the proxies
// whose ring owner over the last live servers is this server, fenced by
// local (negative) tokens and paced per (proxy, site) by the site's
// MinInterval, so servers never share an IP; a (proxy, site) quarantined
// when last read stays out until its quarantine ends. Broker leases this
// server held on its own shard are adopted (Extend and Release act
// locally); Extend of any other broker lease returns ErrStaleLease so its
// session retires. A Release of a broker lease in fallback is queued (up
// to MaxPending) and replayed when Redis answers; stale replays are
// dropped, and a dropped release frees itself by its TTL.
//
// Run pings Redis every ProbeInterval in fallback; when it answers, the
// queued releases are replayed, the local uses of every proxy are
// replayed (LeaseProxy then Release with the local outcome, so the broker
// paces it and counts it), and every open local lease is registered with
// LeaseProxy for the same holder and task (taking over a live broker lease
// of that task). The session's next Extend or Release of the local lease is
// passed to the registered one; a lease that could not be registered is
// ended, and its next Extend returns ErrStaleLease. The return's round
// trips are made without the lock Lease and Release take, so sessions
// keep leasing locally meanwhile (see fallback_return.go).
type FallbackBroker struct {
	primary *RedisBroker
	cfg     FallbackConfig
	log     *zap.Logger

	mu      sync.Mutex
	mode    fallbackMode           // modeFallback while Redis does not answer
	changed chan struct{}          // closed and replaced on every switch
	pool    []Proxy                // last known pool
	quar    map[leaseKey]time.Time // last known quarantines: their ends
	members []string               // last known live servers
	held    map[leaseKey]heldLease
	moved   map[movedKey]*Lease // local or adopted lease -> registered broker lease
	// ended are the local or adopted leases a return could not register,
	// with when: their sessions must not send again (Ended).
	ended    map[movedKey]time.Time
	local    *localPool // non-nil in fallback
	pending  []pendingRelease
	maxTTL   time.Duration
	switches int64
	since    time.Time

	returnShard []Proxy   // the fallback shard, kept during the return window
	returnUntil time.Time // end of the return window (see fallback_return.go)
}

var (
	_ Broker           = (*FallbackBroker)(nil)
	_ PipelineReleaser = (*FallbackBroker)(nil)
)

// leaseKey is one (site, proxy) pair.
type leaseKey struct{ site, id string }

// movedKey names one lease a session may still hold.
type movedKey struct {
	site, id string
	token    int64
}

// heldLease is a broker lease this server holds, with its TTL.
type heldLease struct {
	l   Lease
	ttl time.Duration
}

// pendingRelease is a broker release made while Redis was down.
type pendingRelease struct {
	l Lease
	o Outcome
}

// NewFallbackBroker wraps primary; start its loops with Run.
func NewFallbackBroker(primary *RedisBroker, cfg FallbackConfig) *FallbackBroker {
	cfg = cfg.withDefaults()
	if cfg.Membership == nil {
		cfg.Membership = NewRedisMembership(primary.rdb, primary.Config().Pool, 0, cfg.Clock)
	}
	return &FallbackBroker{primary: primary, cfg: cfg, log: cfg.Logger.With(zap.String("server", cfg.ServerID)),
		changed: make(chan struct{}), held: map[leaseKey]heldLease{}, moved: map[movedKey]*Lease{},
		ended: map[movedKey]time.Time{}}
}

// FallbackStatus is a snapshot of a FallbackBroker's state.
type FallbackStatus struct {
	// Fallback is set while the broker's Redis does not answer.
	Fallback bool `json:"fallback"`
	// Since is when the current mode began (zero before any switch).
	Since time.Time `json:"since"`
	// Switches counts switches into fallback.
	Switches int64 `json:"switches"`
	// Servers is the last known live server list; Pool the snapshot size.
	Servers []string `json:"servers"`
	Pool    int      `json:"pool"`
	// Shard is this server's fallback shard size (0 outside fallback);
	// LocalLeases its open local leases; Pending the queued releases.
	Shard       int `json:"shard"`
	LocalLeases int `json:"local_leases"`
	Pending     int `json:"pending"`
}

// Status reports the current mode and snapshot.
func (f *FallbackBroker) Status() FallbackStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := FallbackStatus{Fallback: f.mode == modeFallback, Since: f.since, Switches: f.switches,
		Servers: append([]string(nil), f.members...), Pool: len(f.pool), Pending: len(f.pending)}
	if f.local != nil {
		st.Shard, st.LocalLeases = len(f.local.order), f.local.open(f.now())
	}
	return st
}

func (f *FallbackBroker) now() time.Time { return f.cfg.Clock() }
