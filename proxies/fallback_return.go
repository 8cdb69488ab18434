package proxies

import (
	"context"
	"math/rand/v2"
	"time"
)

// After a return to the broker, the other servers may still be in fallback
// on their shards until their next probe, and the broker does not know
// what they sent yet (they replay it when they return). For the return
// window a server therefore leases only from the shard it had in
// fallback, which no other server used; a proxy the broker hands out from
// another shard goes back unused. Without this, the first server back
// leased proxies another server was still using: two IPs' requests closer
// than min_interval (I2), seen in the chaos run.

// returnWindow is how long after a return leases keep to the own shard:
// long enough for every server to probe, return and replay its uses.
func (f *FallbackBroker) returnWindow() time.Duration {
	return 3*f.cfg.ProbeInterval + 5*time.Second
}

// keepShard remembers the fallback shard for the return window; f.mu is
// held and f.local is still set.
func (f *FallbackBroker) keepShard(now time.Time) {
	f.returnShard = f.returnShard[:0]
	for _, id := range f.local.order {
		f.returnShard = append(f.returnShard, f.local.proxies[id])
	}
	f.returnUntil = now.Add(f.returnWindow())
}

// shardOnly is the own shard while the return window is open, else nil.
func (f *FallbackBroker) shardOnly() []Proxy {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down || !f.now().Before(f.returnUntil) {
		return nil
	}
	return f.returnShard
}

// primaryLease is the broker's Lease, kept to the own shard during the
// return window.
func (f *FallbackBroker) primaryLease(ctx context.Context, site string, class Class, holder, task string, ttl time.Duration) (*Lease, error) {
	shard := f.shardOnly()
	l, err := f.primary.Lease(ctx, site, class, holder, task, ttl)
	if err != nil || shard == nil || inShard(shard, l.Proxy.ID) {
		return l, err
	}
	if err := f.primary.Release(ctx, l, Neutral()); err != nil { // nothing was sent through it
		return nil, err
	}
	return f.leaseFromShard(ctx, shard, site, class, holder, task, ttl)
}

// leaseFromShard leases the first free proxy of the shard that fits the
// class and site, starting at a random place to spread the load.
func (f *FallbackBroker) leaseFromShard(ctx context.Context, shard []Proxy, site string, class Class, holder, task string, ttl time.Duration) (*Lease, error) {
	start := rand.N(len(shard) + 1)
	for i := range shard {
		p := shard[(start+i)%len(shard)]
		if p.Class != class || !p.AllowedOn(site) {
			continue
		}
		l, err := f.primary.LeaseProxy(ctx, site, p.ID, holder, task, ttl)
		if err == nil || IsUnavailable(err) || ctx.Err() != nil {
			return l, err
		}
	}
	wait := f.cfg.ProbeInterval
	return nil, &NotReadyError{Site: site, Class: class, Until: f.now().Add(wait), Wait: wait, Leased: true}
}

// primaryLeaseProxy is the broker's LeaseProxy; during the return window a
// proxy of another server's shard is ErrBusy (its server may still be
// using it), so a sticky session starts fresh instead.
func (f *FallbackBroker) primaryLeaseProxy(ctx context.Context, site, proxyID, holder, task string, ttl time.Duration) (*Lease, error) {
	if shard := f.shardOnly(); shard != nil && !inShard(shard, proxyID) {
		return nil, ErrBusy
	}
	return f.primary.LeaseProxy(ctx, site, proxyID, holder, task, ttl)
}

func inShard(shard []Proxy, id string) bool {
	for _, p := range shard {
		if p.ID == id {
			return true
		}
	}
	return false
}
