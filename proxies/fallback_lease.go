package proxies

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The fallback broker's leases: through the primary while its Redis
// answers, from the local pool while it is down (fallback_mode.go).

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
	if f.mode == modeFallback {
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
	if f.mode != modeFallback {
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
		var local bool // in fallback: extended locally
		var pl, nl *Lease
		if local, pl, nl, err = f.extendDown(l, ttl); local {
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
		var local bool // in fallback: released locally
		var pl *Lease
		if local, pl, err = f.releaseOrTarget(l, o); local {
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
	if f.mode != modeFallback {
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

// extendDown extends l locally in fallback, else returns the broker lease
// to extend.
func (f *FallbackBroker) extendDown(l *Lease, ttl time.Duration) (bool, *Lease, *Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mode == modeFallback {
		nl, err := f.local.extend(f.resolve(l), ttl, f.now())
		return true, nil, nl, err
	}
	return false, f.registered(l), nil, nil
}

// releaseOrTarget releases l locally in fallback, else returns the broker
// lease to release.
func (f *FallbackBroker) releaseOrTarget(l *Lease, o Outcome) (bool, *Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mode == modeFallback {
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
