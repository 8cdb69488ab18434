package proxies

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Broker hands out per-task proxy leases for sites across a whole cluster.
// Every state change is atomic; see docs/architecture.md#invariants.
type Broker interface {
	// Lease takes the free proxy of class that has waited longest for site
	// (a ClearanceMarker first takes a free one holding the site's
	// clearance, see MarkCleared). With nothing free it returns *NotReadyError (wraps ErrNoProxy) saying
	// when the earliest one frees up, or ErrPoolExhausted when every proxy of
	// the class is quarantined for the site.
	Lease(ctx context.Context, r LeaseRequest) (*Lease, error)
	// LeaseWait is Lease that waits exactly as long as the broker says until
	// a proxy frees up, until ctx ends.
	LeaseWait(ctx context.Context, r LeaseRequest) (*Lease, error)
	// LeaseProxy leases one named proxy (to resume a sticky session) in the
	// proxy's own class (r.Class is not read). It fails with ErrBusy,
	// ErrQuarantined or ErrUnknownProxy.
	LeaseProxy(ctx context.Context, r LeaseRequest, proxyID string) (*Lease, error)
	// Extend pushes the lease's expiry to now+ttl. ErrStaleLease when the
	// token is no longer the live one.
	Extend(ctx context.Context, l *Lease, ttl time.Duration) (*Lease, error)
	// Release ends the lease with an outcome, which sets when the proxy is
	// ready for the site again. ErrStaleLease when the token is stale.
	Release(ctx context.Context, l *Lease, o Outcome) error
	// Stats reports per-site pool totals and per-proxy counters.
	Stats(ctx context.Context) (*PoolStats, error)
	// Capabilities are what the broker can do beyond these calls (gateways'
	// exit holds, modems' rotations, …), one value each, nil for none.
	Capabilities() Capabilities
}

// LeaseRequest is what Lease, LeaseWait, LeaseProxy and LeaseIn are asked
// for.
type LeaseRequest struct {
	// Site is the site the lease sends to.
	Site string
	// Class is the proxy class to lease from (LeaseProxy takes the named
	// proxy's own).
	Class Class
	// Holder names who holds the lease: the server/worker, counted per
	// proxy in the stats.
	Holder string
	// Task is the task the lease serves: LeaseProxy hands a live lease of
	// the same task over (its holder died and the task runs again).
	Task string
	// TTL is how long the lease lasts unless extended; at least 1ms.
	TTL time.Duration
}

// Lease is one holder's exclusive right to send to Site through Proxy.
type Lease struct {
	Proxy Proxy  `json:"proxy"`
	Site  string `json:"site"`
	// Token fences the lease: operations with an older token are rejected.
	Token  int64  `json:"token"`
	Holder string `json:"holder"`
	Task   string `json:"task"`
	// Expires is when the lease frees itself if not extended (Redis clock).
	Expires time.Time `json:"expires"`
	// NotBefore is the earliest time the holder may send to Site (I2).
	NotBefore time.Time `json:"not_before"`
	// MinInterval is the site's minimum gap between two requests of one
	// proxy, for pacing within the lease.
	MinInterval time.Duration `json:"min_interval"`
}

// OutcomeKind says how a lease ended.
type OutcomeKind string

// Outcome kinds.
const (
	OutcomeOK          OutcomeKind = "ok"           // success, with Latency
	OutcomeFailed      OutcomeKind = "failed"       // proxy failure: penalty
	OutcomeBanned      OutcomeKind = "banned"       // site banned it: quarantine, with Reason
	OutcomeRateLimited OutcomeKind = "rate_limited" // cool down for RetryAfter
	OutcomeNeutral     OutcomeKind = "neutral"      // no judgement (not found, server error, cancelled); a rest for RetryAfter if set
)

// Outcome is what a holder reports when it releases a lease.
type Outcome struct {
	Kind       OutcomeKind
	Latency    time.Duration
	Reason     string
	RetryAfter time.Duration
	// Sent and Paced are an ok lease's evidence for a learned pace
	// (learn.go): Sent is how long before the release the lease's first
	// request went out (0: not known), Paced how many of its later
	// requests went out within PacedSlack of the answer before them. The
	// learner counts a canary's answers only where the site saw the pace
	// it probes, and these let it tell so without the answers' latency
	// and the work done on them, which the site never sees.
	Sent  time.Duration
	Paced int
}

// PacedSlack is the most a request may go out after the answer before it,
// on a lease at pace, and still count as sent at that pace: 10 % and
// 15 ms over it (the learner's own rule, lua/lib/learn.lua learn_clean).
func PacedSlack(pace time.Duration) time.Duration {
	return pace + pace/10 + 15*time.Millisecond
}

// OK, Failed, Banned, RateLimited and Neutral build outcomes.
func OK(latency time.Duration) Outcome { return Outcome{Kind: OutcomeOK, Latency: latency} }
func Failed(reason string) Outcome     { return Outcome{Kind: OutcomeFailed, Reason: reason} }
func Banned(reason string) Outcome     { return Outcome{Kind: OutcomeBanned, Reason: reason} }
func RateLimited(retryAfter time.Duration) Outcome {
	return Outcome{Kind: OutcomeRateLimited, RetryAfter: retryAfter}
}
func Neutral() Outcome { return Outcome{Kind: OutcomeNeutral} }

// Rest is a neutral outcome whose proxy rests d: no judgement of the
// proxy (nothing learned from it, unlike RateLimited's), only time
// kept, as when its exit IP has sent a site its volume budget.
func Rest(d time.Duration) Outcome { return Outcome{Kind: OutcomeNeutral, RetryAfter: d} }

// Errors of the broker; check with errors.Is.
var (
	ErrNoProxy       = errors.New("no proxy ready")
	ErrPoolExhausted = errors.New("every proxy of the class is quarantined")
	ErrPoolEmpty     = errors.New("pool is empty: import proxies")
	ErrStaleLease    = errors.New("stale lease")
	ErrBusy          = errors.New("proxy is leased by another holder")
	ErrQuarantined   = errors.New("proxy is quarantined for the site")
	ErrUnknownProxy  = errors.New("unknown proxy")
)

// NotReadyError says nothing is free now and when the first proxy frees up.
type NotReadyError struct {
	Site  string
	Class Class
	// Until is when the earliest proxy frees up (Redis clock).
	Until time.Time
	// Wait is how long from the broker's now until then.
	Wait time.Duration
	// Exhausted is set when every proxy of the class is quarantined.
	Exhausted bool
	// Leased is set when some proxies of the site are leased or some
	// modems are rotating: they may be released (their rotation may end)
	// before Until, so a waiter should look again sooner.
	Leased bool
}

func (e *NotReadyError) Error() string {
	if e.Exhausted {
		return fmt.Sprintf("site %s class %s: %v, first returns in %s", e.Site, e.Class, ErrPoolExhausted, e.Wait.Round(time.Millisecond))
	}
	return fmt.Sprintf("site %s class %s: %v for %s", e.Site, e.Class, ErrNoProxy, e.Wait.Round(time.Millisecond))
}

// Unwrap lets errors.Is match ErrNoProxy or ErrPoolExhausted.
func (e *NotReadyError) Unwrap() error {
	if e.Exhausted {
		return ErrPoolExhausted
	}
	return ErrNoProxy
}

// PoolStats is a snapshot of the pool for dashboards and `crawlq status`.
type PoolStats struct {
	// At is the Redis clock time of the snapshot.
	At    time.Time            `json:"at"`
	Total int                  `json:"total"`
	Sites map[string]SiteStats `json:"sites"`
	// Proxies, sorted by ID; Proxy specs are masked.
	Proxies []ProxyStats `json:"proxies"`
	// Gateways are the pool's gateways (their slots are among Proxies).
	Gateways []GatewayStats `json:"gateways,omitempty"`
	// Modems are the pool's modem figures, when it has modems.
	Modems *ModemStats `json:"modems,omitempty"`
}

// SiteStats counts the pool's proxies by state for one site, per class too.
type SiteStats struct {
	Ready       int `json:"ready"`
	Leased      int `json:"leased"`
	Cooling     int `json:"cooling"`
	Quarantined int `json:"quarantined"`
	// Cleared counts the proxies of the site holding a live clearance of
	// its JavaScript challenge (MarkCleared). It is not a fifth state: a
	// cleared proxy is also ready, leased, cooling or quarantined and
	// counted there, so Cleared is in no sum of the states nor in
	// StateCounts. Stats counts the proxies that serve the site; Summary
	// counts the site's live marks, which are the same proxies (Remove
	// drops a proxy's marks, MarkCleared marks no proxy outside the pool)
	// except one re-imported without the site, until its mark ends.
	Cleared int `json:"cleared"`
	// Exhausted lists classes whose every proxy is quarantined for the site.
	Exhausted []Class               `json:"exhausted,omitempty"`
	ByClass   map[Class]StateCounts `json:"by_class,omitempty"`
	// Exits are the site's exit-IP figures, when the pool has proxies
	// that learn their exit (gateways).
	Exits *ExitStats `json:"exits,omitempty"`
}

// StateCounts are the four state totals.
type StateCounts struct {
	Ready       int `json:"ready"`
	Leased      int `json:"leased"`
	Cooling     int `json:"cooling"`
	Quarantined int `json:"quarantined"`
}

// ProxyStats are one proxy's counters, overall and per site.
type ProxyStats struct {
	ID     string `json:"id"`
	Masked string `json:"proxy"` // scheme://user:***@host:port
	Class  Class  `json:"class"`
	// Allowed are the sites the proxy may serve; empty means every site.
	Allowed []string `json:"allowed_sites,omitempty"`
	// Sites holds per-site state and counters.
	Sites map[string]ProxySiteStats `json:"sites"`
}

// ProxySiteStats are one proxy's counters and state for one site.
type ProxySiteStats struct {
	State       string        `json:"state"` // ready, leased, cooling, quarantined
	OK          int64         `json:"ok"`
	Failed      int64         `json:"failed"`
	Banned      int64         `json:"banned"`
	EWMALatency time.Duration `json:"ewma_latency"`
	LastBan     string        `json:"last_ban_reason,omitempty"`
	LastBanAt   time.Time     `json:"last_ban_at,omitempty"`
	Holder      string        `json:"holder,omitempty"`
	ReadyAt     time.Time     `json:"ready_at"`
	// LeasesByHolder counts leases per holder (server/worker).
	LeasesByHolder map[string]int64 `json:"leases_by_holder,omitempty"`
}

// PipelineReleaser is a Broker whose release can ride in a caller's
// pipeline or transaction on the broker's own Redis client, so a job's
// last writes and the end of its lease take one round trip: RedisBroker,
// and FallbackBroker while its Redis answers (Capabilities.PipelineReleases).
type PipelineReleaser interface {
	// Redis is the client whose pipelines ReleaseIn can queue in.
	Redis() redis.UniversalClient
	// ReleaseIn queues the release of l with o in p and returns answer,
	// which reads the release's outcome once p has run (nil,
	// ErrStaleLease, or the error of a release made alone when p did not
	// run it). ok false: nothing was queued, the caller calls Release.
	ReleaseIn(ctx context.Context, p redis.Pipeliner, l *Lease, o Outcome) (answer func(context.Context) error, ok bool)
}
