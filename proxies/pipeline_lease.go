package proxies

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// PipelineLeaser is a Broker whose Lease can ride in a caller's pipeline
// on the broker's own Redis client, so a job's first reads and its lease
// take one round trip: RedisBroker (without Config.Replicas, whose WAIT
// needs the broker's own round trips), and FallbackBroker while its Redis
// answers.
type PipelineLeaser interface {
	// Redis is the client whose pipelines LeaseIn can queue in.
	Redis() redis.UniversalClient
	// LeaseIn queues a Lease in p (a pipeline, not a transaction) and
	// returns answer, which reads it once p has run and answers as Lease
	// does; when p failed or never ran, or the broker had to resync, the
	// answer leases with a Lease of its own. ok false: nothing was queued,
	// the caller leases as usual.
	LeaseIn(ctx context.Context, p redis.Pipeliner, r LeaseRequest) (answer func(context.Context) (*Lease, error), ok bool)
}

var (
	_ PipelineLeaser = (*RedisBroker)(nil)
	_ PipelineLeaser = (*FallbackBroker)(nil)
)

// LeaseIn implements PipelineLeaser.
func (b *RedisBroker) LeaseIn(ctx context.Context, p redis.Pipeliner, r LeaseRequest) (func(context.Context) (*Lease, error), bool) {
	if b.cfg.Replicas > 0 || checkLeaseRequest(r) != nil {
		return nil, false
	}
	a, set := b.argsOf(r.Site, r.Class), b.loaded.Load()
	if a.learn != nil && !a.ensured.Load() {
		return nil, false // the first lease of a learned pace ensures its limit
	}
	cmd := evalshaCmd(ctx, leaseScript, a.lease, b.leaseArgs(a, set, r, ""))
	_ = p.Process(ctx, cmd)
	return func(ctx context.Context) (*Lease, error) {
		res, err := cmd.Result()
		if err != nil || len(res) == 0 || num(res[0]) == -2 { // p failed, NOSCRIPT, or out of sync
			return b.Lease(ctx, r)
		}
		return b.leaseResult(ctx, res, set, r, "", a.sc)
	}, true
}

// LeaseIn implements PipelineLeaser while the broker's Redis answers and
// no return window keeps leases to the own shard; otherwise nothing is
// queued (ok false). If the lease cannot reach Redis after all, the answer
// leases as Lease does (switching to fallback).
func (f *FallbackBroker) LeaseIn(ctx context.Context, p redis.Pipeliner, r LeaseRequest) (func(context.Context) (*Lease, error), bool) {
	f.mu.Lock()
	mode := f.mode
	f.mu.Unlock()
	if mode == modeFallback || f.shardOnly() != nil {
		return nil, false
	}
	inner, ok := f.primary.LeaseIn(ctx, p, r)
	if !ok {
		return nil, false
	}
	return func(ctx context.Context) (*Lease, error) {
		l, err := inner(ctx)
		if err != nil && f.unavailable(ctx, err) {
			return f.Lease(ctx, r)
		}
		f.track(l, r.TTL)
		return l, err
	}, true
}
