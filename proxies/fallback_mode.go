package proxies

import (
	"context"
	"errors"
	"io"
	"net"
	"sort"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// The fallback broker's mode: noticing the Redis is down, switching to
// the local pool and back, and the snapshot it falls back on.

// fallbackMode is which pool a FallbackBroker leases from.
type fallbackMode int

const (
	// modeBroker: the broker's Redis answers and leases (the zero mode).
	modeBroker fallbackMode = iota
	// modeFallback: the broker's Redis does not answer; this server
	// leases from its fallback shard (FallbackBroker.local).
	modeFallback
)

// unavailable reports whether err means the broker's Redis does not answer
// (and not that the caller gave up).
func (f *FallbackBroker) unavailable(ctx context.Context, err error) bool {
	return ctx.Err() == nil && IsUnavailable(err)
}

// IsUnavailable reports whether err says Redis did not answer: a network
// error, a dropped connection, a pool timeout, or a server that is loading
// or has no master (go-redis's typed LOADING, MASTERDOWN, CLUSTERDOWN and
// TRYAGAIN replies). Broker errors (ErrNoProxy, ErrStaleLease…) are not.
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
	return redis.IsLoadingError(err) || redis.IsMasterDownError(err) ||
		redis.IsClusterDownError(err) || redis.IsTryAgainError(err)
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
	if f.mode == modeFallback {
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
	f.setMode(modeFallback, now)
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

// setMode records a switch to m; f.mu is held.
func (f *FallbackBroker) setMode(m fallbackMode, now time.Time) {
	f.mode, f.since = m, now
	if m == modeFallback {
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
	for k, at := range f.ended {
		if at.Add(f.maxTTL).Before(cut) {
			delete(f.ended, k)
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
