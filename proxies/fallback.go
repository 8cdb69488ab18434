package proxies

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
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

	mu       sync.Mutex
	down     bool                   // in fallback
	changed  chan struct{}          // closed and replaced on every switch
	pool     []Proxy                // last known pool
	quar     map[leaseKey]time.Time // last known quarantines: their ends
	members  []string               // last known live servers
	held     map[leaseKey]heldLease
	moved    map[movedKey]*Lease // local or adopted lease -> registered broker lease
	local    *localPool          // non-nil in fallback
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
		changed: make(chan struct{}), held: map[leaseKey]heldLease{}, moved: map[movedKey]*Lease{}}
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
	st := FallbackStatus{Fallback: f.down, Since: f.since, Switches: f.switches,
		Servers: append([]string(nil), f.members...), Pool: len(f.pool), Pending: len(f.pending)}
	if f.local != nil {
		st.Shard, st.LocalLeases = len(f.local.order), f.local.open(f.now())
	}
	return st
}

func (f *FallbackBroker) now() time.Time { return f.cfg.Clock() }

// Lease implements Broker.
func (f *FallbackBroker) Lease(ctx context.Context, r LeaseRequest) (*Lease, error) {
	return f.leaseCall(ctx, r.Site, r.TTL, func(ctx context.Context) (*Lease, error) {
		return f.primaryLease(ctx, r)
	}, func(p *localPool, now time.Time) (*Lease, error) {
		return p.lease(r, now)
	})
}

// LeaseProxy implements Broker. In fallback a proxy of another server's
// shard is ErrBusy.
func (f *FallbackBroker) LeaseProxy(ctx context.Context, r LeaseRequest, proxyID string) (*Lease, error) {
	return f.leaseCall(ctx, r.Site, r.TTL, func(ctx context.Context) (*Lease, error) {
		return f.primaryLeaseProxy(ctx, r, proxyID)
	}, func(p *localPool, now time.Time) (*Lease, error) {
		return p.leaseProxy(r, proxyID, now)
	})
}

// LeaseWait implements Broker: the broker's LeaseWait while Redis answers;
// in fallback it waits for the local shard, and goes back to the broker as
// soon as Redis answers again.
func (f *FallbackBroker) LeaseWait(ctx context.Context, r LeaseRequest) (*Lease, error) {
	for {
		l, wait, changed, err := f.tryWait(ctx, r)
		if wait < 0 {
			return l, err
		}
		t := time.NewTimer(max(wait, time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("site %s class %s: %w (%v)", r.Site, r.Class, ctx.Err(), err)
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// tryWait is one round of LeaseWait: a result (wait < 0) or how long to
// wait, and the channel closed when the mode changes.
func (f *FallbackBroker) tryWait(ctx context.Context, r LeaseRequest) (*Lease, time.Duration, <-chan struct{}, error) {
	f.mu.Lock()
	changed := f.changed
	if f.down {
		defer f.mu.Unlock()
		l, err := f.localCall(r.Site, func(p *localPool, now time.Time) (*Lease, error) {
			return p.lease(r, now)
		})
		return l, f.localWait(err), changed, err
	}
	f.mu.Unlock()
	if f.shardOnly() != nil { // return window: poll the own shard
		l, err := f.primaryLease(ctx, r)
		var nr *NotReadyError
		if errors.As(err, &nr) {
			return nil, min(nr.Wait, f.cfg.ProbeInterval), changed, err
		}
		if err == nil || !f.unavailable(ctx, err) {
			f.track(l, r.TTL)
			return l, -1, changed, err
		}
		f.enter(err)
		return nil, 0, changed, err
	}
	l, err := f.primary.LeaseWait(ctx, r)
	if err == nil || !f.unavailable(ctx, err) {
		f.track(l, r.TTL)
		return l, -1, changed, err
	}
	f.enter(err)
	return nil, 0, changed, err
}

// localWait is how long LeaseWait sleeps after a local lease error: -1 to
// return it, a long time (until the mode changes) with nothing to wait for.
func (f *FallbackBroker) localWait(err error) time.Duration {
	var nr *NotReadyError
	switch {
	case err == nil:
		return -1
	case errors.As(err, &nr):
		if nr.Leased {
			return min(nr.Wait, f.primary.Config().LeasePoll)
		}
		return nr.Wait
	case errors.Is(err, ErrPoolEmpty), errors.Is(err, ErrNoSnapshot):
		return time.Hour
	}
	return -1
}

// leaseCall runs a lease call on the broker, or locally in fallback.
func (f *FallbackBroker) leaseCall(ctx context.Context, site string, ttl time.Duration,
	remote func(context.Context) (*Lease, error), local func(*localPool, time.Time) (*Lease, error)) (*Lease, error) {
	var err error
	for range 3 {
		if l, ok, err := f.ifDown(site, local); ok {
			return l, err
		}
		var l *Lease
		if l, err = remote(ctx); err == nil || !f.unavailable(ctx, err) {
			f.track(l, ttl)
			return l, err
		}
		f.enter(err)
	}
	return nil, err
}

// ifDown runs local under the lock if in fallback (ok true).
func (f *FallbackBroker) ifDown(site string, local func(*localPool, time.Time) (*Lease, error)) (*Lease, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.down {
		return nil, false, nil
	}
	l, err := f.localCall(site, local)
	return l, true, err
}

// localCall runs a local lease call; f.mu is held.
func (f *FallbackBroker) localCall(site string, local func(*localPool, time.Time) (*Lease, error)) (*Lease, error) {
	if len(f.pool) == 0 {
		return nil, fmt.Errorf("site %s: %w", site, ErrNoSnapshot)
	}
	return local(f.local, f.now())
}

// Extend implements Broker. In fallback it extends a local or adopted lease
// locally; any other broker lease is ErrStaleLease (its proxy may belong
// to another server's shard now).
func (f *FallbackBroker) Extend(ctx context.Context, l *Lease, ttl time.Duration) (*Lease, error) {
	var err error
	for range 3 {
		var down bool
		var pl, nl *Lease
		if down, pl, nl, err = f.extendDown(l, ttl); down {
			return nl, err
		}
		if pl == nil {
			return nil, fmt.Errorf("extend local lease %d of proxy %s on %s: %w", l.Token, l.Proxy.ID, l.Site, ErrStaleLease)
		}
		if nl, err = f.primary.Extend(ctx, pl, ttl); err == nil {
			f.settle(l, nl, ttl)
			return nl, nil
		}
		if !f.unavailable(ctx, err) {
			return nil, err
		}
		f.enter(err)
	}
	return nil, err
}

// Release implements Broker. In fallback a local or adopted lease ends
// locally; a broker lease's release is queued for replay (see the type).
func (f *FallbackBroker) Release(ctx context.Context, l *Lease, o Outcome) error {
	if _, err := readyAfter(o, SiteConfig{}, time.Time{}); err != nil {
		return err
	}
	var err error
	for range 3 {
		var down bool
		var pl *Lease
		if down, pl, err = f.releaseOrTarget(l, o); down {
			return err
		}
		if pl == nil {
			return fmt.Errorf("release local lease %d of proxy %s on %s: %w", l.Token, l.Proxy.ID, l.Site, ErrStaleLease)
		}
		if err = f.primary.Release(ctx, pl, o); !f.unavailable(ctx, err) {
			f.settle(l, nil, 0)
			return err
		}
		f.enter(err)
	}
	return err
}

// Redis implements PipelineReleaser: the broker's Redis.
func (f *FallbackBroker) Redis() redis.UniversalClient { return f.primary.Redis() }

// ReleaseIn implements PipelineReleaser while the broker's Redis answers
// and l is a broker lease; otherwise nothing is queued (ok false). If the
// release cannot reach Redis after all, the answer switches to fallback and
// releases as Release does.
func (f *FallbackBroker) ReleaseIn(ctx context.Context, p redis.Pipeliner, l *Lease, o Outcome) (answer func(context.Context) error, ok bool) {
	f.mu.Lock()
	var pl *Lease
	if !f.down {
		pl = f.registered(l)
	}
	f.mu.Unlock()
	if pl == nil {
		return nil, false
	}
	inner, ok := f.primary.ReleaseIn(ctx, p, pl, o)
	if !ok {
		return nil, false
	}
	return func(ctx context.Context) error {
		err := inner(ctx)
		if f.unavailable(ctx, err) {
			f.enter(err)
			return f.Release(ctx, l, o)
		}
		f.settle(l, nil, 0)
		return err
	}, true
}

// extendDown extends l locally in fallback (down true), else returns the
// broker lease to extend.
func (f *FallbackBroker) extendDown(l *Lease, ttl time.Duration) (bool, *Lease, *Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		nl, err := f.local.extend(f.resolve(l), ttl, f.now())
		return true, nil, nl, err
	}
	return false, f.registered(l), nil, nil
}

// releaseOrTarget releases l locally in fallback (down true), else returns
// the broker lease to release.
func (f *FallbackBroker) releaseOrTarget(l *Lease, o Outcome) (bool, *Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return true, nil, f.releaseDown(f.resolve(l), o)
	}
	return false, f.registered(l), nil
}

// releaseDown ends l in fallback; f.mu is held.
func (f *FallbackBroker) releaseDown(l *Lease, o Outcome) error {
	err := f.local.release(l, o, f.now())
	if l.Token < 0 || (err != nil && !errors.Is(err, ErrStaleLease)) {
		return err
	}
	delete(f.held, leaseKey{l.Site, l.Proxy.ID})
	if len(f.pending) >= f.cfg.MaxPending {
		f.pending = f.pending[1:]
	}
	f.pending = append(f.pending, pendingRelease{l: *l, o: o})
	return nil
}

// Stats implements Broker: the broker's stats (an error in fallback).
func (f *FallbackBroker) Stats(ctx context.Context) (*PoolStats, error) {
	st, err := f.primary.Stats(ctx)
	if err != nil && f.unavailable(ctx, err) {
		f.enter(err)
	}
	return st, err
}

// resolve follows the registrations of l (a local or adopted lease that
// was registered with the broker, maybe more than once across outages) to
// the lease the session should act on; f.mu is held.
func (f *FallbackBroker) resolve(l *Lease) *Lease {
	for range 8 {
		pl, ok := f.moved[movedKey{l.Site, l.Proxy.ID, l.Token}]
		if !ok {
			break
		}
		l = pl
	}
	return l
}

// registered is the broker lease to act on for l, nil for a local lease
// that was never registered (it was ended); f.mu is held.
func (f *FallbackBroker) registered(l *Lease) *Lease {
	if pl := f.resolve(l); pl.Token > 0 {
		return pl
	}
	return nil
}

// track remembers a broker lease this server holds.
func (f *FallbackBroker) track(l *Lease, ttl time.Duration) {
	if l == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held[leaseKey{l.Site, l.Proxy.ID}] = heldLease{l: *l, ttl: ttl}
	f.maxTTL = max(f.maxTTL, ttl)
}

// settle records the end of a broker call on old: nl is its extended
// lease, or nil when it was released.
func (f *FallbackBroker) settle(old, nl *Lease, ttl time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := leaseKey{old.Site, old.Proxy.ID}
	delete(f.moved, movedKey{old.Site, old.Proxy.ID, old.Token})
	if nl != nil {
		f.held[k] = heldLease{l: *nl, ttl: ttl}
	} else if h, ok := f.held[k]; ok && (h.l.Token == old.Token || old.Token < 0) {
		delete(f.held, k)
	}
}

// unavailable reports whether err means the broker's Redis does not answer
// (and not that the caller gave up).
func (f *FallbackBroker) unavailable(ctx context.Context, err error) bool {
	return ctx.Err() == nil && IsUnavailable(err)
}

// IsUnavailable reports whether err says Redis did not answer: a network
// error, a dropped connection, a pool timeout, or a server that is loading
// or has no master. Broker errors (ErrNoProxy, ErrStaleLease…) are not.
func IsUnavailable(err error) bool {
	var ne net.Error
	switch {
	case err == nil:
		return false
	case errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrClosed):
		return true
	}
	msg := err.Error()
	for _, p := range []string{"LOADING ", "MASTERDOWN ", "CLUSTERDOWN ", "TRYAGAIN "} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// enter switches to fallback after cause, once per outage.
func (f *FallbackBroker) enter(cause error) {
	if !f.switchDown(cause) {
		return
	}
	if f.cfg.OnFallback != nil {
		f.cfg.OnFallback(true)
	}
}

func (f *FallbackBroker) switchDown(cause error) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return false
	}
	now := f.now()
	servers := withServer(f.members, f.cfg.ServerID)
	ring := NewRing(servers, f.cfg.VNodes)
	var shard []Proxy
	for _, p := range f.pool {
		if ring.Owner(p.ID) == f.cfg.ServerID {
			shard = append(shard, p)
		}
	}
	f.local = newLocalPool(f.primary, shard, now.Add(f.grace()))
	for k, until := range f.quar {
		f.local.hold(k, until) // a ban seen before the outage still stands (I5)
	}
	adopted := f.adopt()
	f.setMode(true, now)
	f.log.Error("broker redis does not answer: leasing from this server's fallback shard",
		zap.Error(cause), zap.Strings("servers", servers), zap.Int("pool", len(f.pool)),
		zap.Int("shard", len(shard)), zap.Int("adopted_leases", adopted), zap.Int64("switches", f.switches))
	return true
}

// grace is the effective FallbackConfig.Grace; f.mu is held.
func (f *FallbackBroker) grace() time.Duration {
	switch {
	case f.cfg.Grace == NoGrace:
		return 0
	case f.cfg.Grace > 0:
		return f.cfg.Grace
	case f.maxTTL > 0:
		return f.maxTTL
	}
	return 30 * time.Second
}

// adopt moves the broker leases held on this server's shard into the local
// pool; f.mu is held.
func (f *FallbackBroker) adopt() int {
	n := 0
	for k, h := range f.held {
		if f.local.adopt(h.l, h.ttl) {
			n++
		} else {
			delete(f.held, k)
		}
	}
	return n
}

// setMode records a switch; f.mu is held.
func (f *FallbackBroker) setMode(down bool, now time.Time) {
	f.down, f.since = down, now
	if down {
		f.switches++
	} else {
		f.local = nil
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

func withServer(servers []string, id string) []string {
	out := append([]string(nil), servers...)
	if !containsString(out, id) {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Run keeps the snapshot fresh (heartbeat every Heartbeat, pool every
// PoolRefresh) while Redis answers, and probes it every ProbeInterval in
// fallback, until ctx ends. On the way out it leaves the membership. It
// returns nil after ctx ends.
func (f *FallbackBroker) Run(ctx context.Context) error {
	f.refresh(ctx, true)
	beat, probe := time.NewTicker(f.cfg.Heartbeat), time.NewTicker(f.cfg.ProbeInterval)
	defer beat.Stop()
	defer probe.Stop()
	lastPool := time.Now()
	for {
		select {
		case <-ctx.Done():
			f.leave()
			return nil
		case <-beat.C:
			full := time.Since(lastPool) >= f.cfg.PoolRefresh
			if f.refresh(ctx, full) && full {
				lastPool = time.Now()
			}
		case <-probe.C:
			f.probe(ctx)
		}
	}
}

// Refresh reads the live servers and the pool now (Run does it on its
// own); a connection error switches to fallback.
func (f *FallbackBroker) Refresh(ctx context.Context) error {
	if f.Status().Fallback {
		return nil
	}
	_, err := f.snapshot(ctx, true)
	if err != nil && f.unavailable(ctx, err) {
		f.enter(err)
	}
	return err
}

// refresh is one heartbeat (and pool read when full) outside fallback.
func (f *FallbackBroker) refresh(ctx context.Context, full bool) bool {
	if f.Status().Fallback {
		return false
	}
	ok, err := f.snapshot(ctx, full)
	switch {
	case err != nil && f.unavailable(ctx, err):
		f.enter(err)
	case err != nil && ctx.Err() == nil:
		f.log.Warn("fallback snapshot", zap.Error(err))
	}
	return ok
}

// snapshot beats, reads the live servers and the quarantines and, when
// full, the pool.
func (f *FallbackBroker) snapshot(ctx context.Context, full bool) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, max(f.cfg.Heartbeat, time.Second))
	defer cancel()
	members, err := f.cfg.Membership.Beat(cctx, f.cfg.ServerID)
	if err != nil {
		return false, err
	}
	quar, err := f.primary.quarantines(cctx) // O(quarantined): every beat
	if err != nil {
		return false, err
	}
	var pool []Proxy
	if full {
		if pool, err = f.primary.List(cctx); err != nil {
			return false, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.members, f.quar = members, quar
	if full {
		f.pool = pool
	}
	f.pruneMoved()
	return full, nil
}

// pruneMoved forgets registrations whose broker lease ended long ago; f.mu
// is held.
func (f *FallbackBroker) pruneMoved() {
	cut := f.now().Add(-time.Minute)
	for k, l := range f.moved {
		if l.Expires.Before(cut) {
			delete(f.moved, k)
		}
	}
}

func (f *FallbackBroker) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := f.cfg.Membership.Leave(ctx, f.cfg.ServerID); err != nil {
		f.log.Debug("leave membership", zap.Error(err))
	}
}

// probe pings Redis in fallback and returns to the broker when it answers.
func (f *FallbackBroker) probe(ctx context.Context) {
	if !f.Status().Fallback {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, max(f.cfg.ProbeInterval, time.Second))
	defer cancel()
	if err := f.primary.rdb.Ping(pctx).Err(); err != nil {
		return
	}
	members, err := f.cfg.Membership.Beat(pctx, f.cfg.ServerID)
	if err != nil {
		return
	}
	pool, err := f.primary.List(pctx)
	if err != nil {
		return
	}
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	defer rcancel()
	if f.recover(rctx, members, pool) && f.cfg.OnFallback != nil {
		f.cfg.OnFallback(false)
	}
}
