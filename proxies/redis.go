package proxies

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/internal/backoff"
)

// RedisBroker is the cluster-wide Broker on Redis: every state change is one
// Lua script on Redis's clock, so any number of servers share one truth.
type RedisBroker struct {
	rdb   redis.UniversalClient
	batch *batcher // nil: every script on its own round trip
	cfg   Config
	k     keys
	log   *zap.Logger
	specs specCache
	// loaded is every spec of the pool at one sync marker; leases of a
	// ready set with that marker skip reading the spec. loading lets one
	// lease at a time reload it.
	loaded  atomic.Pointer[specSet]
	loading sync.Mutex

	mu   sync.RWMutex
	sets map[siteClass]*scArgs // pre-built script keys per (site, class)
}

var (
	_ Broker           = (*RedisBroker)(nil)
	_ PipelineReleaser = (*RedisBroker)(nil)
)

// NewRedisBroker returns a broker on rdb; see Config for the defaults.
func NewRedisBroker(rdb redis.UniversalClient, cfg Config) *RedisBroker {
	cfg = cfg.withDefaults()
	b := &RedisBroker{rdb: rdb, cfg: cfg, k: newKeys(cfg.Pool), log: cfg.Logger,
		specs: specCache{m: map[string]cachedSpec{}}, sets: map[siteClass]*scArgs{}}
	switch {
	case cfg.Pipelines > 0:
		b.batch = newBatcher(rdb, cfg.Pipelines)
	case cfg.Replicas > 0: // every script alone, each with its WAIT
		b.batch = newBatcher(rdb, math.MaxInt32)
	}
	if b.batch != nil {
		b.batch.replicas, b.batch.waitTimeout = cfg.Replicas, cfg.ReplicaTimeout
	}
	return b
}

// Config returns the broker's configuration with defaults filled in.
func (b *RedisBroker) Config() Config { return b.cfg }

// SiteConfig returns the effective policy of site.
func (b *RedisBroker) SiteConfig(site string) SiteConfig { return b.cfg.site(site) }

// Lease takes a free proxy of class that holds the site's clearance
// (MarkCleared), else the one that has waited longest for site.
func (b *RedisBroker) Lease(ctx context.Context, r LeaseRequest) (*Lease, error) {
	return b.lease(ctx, leaseScript, r, "")
}

// LeaseProxy leases the named proxy for site (sticky resume). Besides
// ErrBusy, ErrQuarantined and ErrUnknownProxy it returns *NotReadyError
// while the proxy cools down after its last use on site. The proxy's
// class (which names the script's keys) is the loaded specs' when they
// hold it, so the lease is one round trip; when the script does not find
// it there (a re-import changed its class), it is read from the pool.
func (b *RedisBroker) LeaseProxy(ctx context.Context, r LeaseRequest, proxyID string) (*Lease, error) {
	if p, ok := b.loaded.Load().proxy(proxyID); ok {
		r.Class = p.Class
		l, err := b.lease(ctx, leaseProxyScript, r, proxyID)
		if !errors.Is(err, ErrUnknownProxy) {
			return l, err
		}
	}
	class, err := b.rdb.HGet(ctx, b.k.classes(), proxyID).Result()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("proxy %s: %w", proxyID, ErrUnknownProxy)
	}
	if err != nil {
		return nil, fmt.Errorf("lease proxy %s: %w", proxyID, err)
	}
	r.Class = Class(class)
	return b.lease(ctx, leaseProxyScript, r, proxyID)
}

// LeaseWait is Lease that, while nothing is free, sleeps exactly until the
// broker says the first proxy frees up, then tries again, until ctx ends.
// While proxies of the site are leased (they may be released early) it
// sleeps at most Config.LeasePoll between tries.
func (b *RedisBroker) LeaseWait(ctx context.Context, r LeaseRequest) (*Lease, error) {
	for {
		l, err := b.Lease(ctx, r)
		var nr *NotReadyError
		if !errors.As(err, &nr) {
			return l, err
		}
		if err := backoff.Sleep(ctx, max(b.waitFor(nr), time.Millisecond)); err != nil {
			return nil, fmt.Errorf("site %s class %s: %w (%v)", r.Site, r.Class, err, nr)
		}
	}
}

// waitFor is how long LeaseWait sleeps after nr.
func (b *RedisBroker) waitFor(nr *NotReadyError) time.Duration {
	if !nr.Leased || nr.Wait <= b.cfg.LeasePoll {
		return nr.Wait
	}
	return b.cfg.LeasePoll/2 + time.Duration(b.cfg.Rand()*float64(b.cfg.LeasePoll/2))
}

// lease runs the lease script s for r, and for the proxy id with
// leaseProxyScript, syncing the ready set when it is out of date.
func (b *RedisBroker) lease(ctx context.Context, s *redis.Script, r LeaseRequest, id string) (*Lease, error) {
	if err := checkLeaseRequest(r); err != nil {
		return nil, err
	}
	site, class := r.Site, r.Class
	a, set := b.argsOf(site, class), b.loaded.Load()
	if err := b.ensurePace(ctx, a); err != nil {
		return nil, err
	}
	args := b.leaseArgs(a, set, r, id)
	for range 4 {
		res, acked, err := b.evalAcked(ctx, s, a.lease, args)
		if err != nil {
			return nil, fmt.Errorf("lease %s/%s: %w", site, class, err)
		}
		if st := res[0].(int64); st != -2 {
			l, err := b.leaseResult(ctx, res, set, r, id, a.sc)
			if err == nil && !acked {
				return nil, b.unreplicated(ctx, l)
			}
			return l, err
		}
		if err := b.sync(ctx, site, class); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("lease %s/%s: pool keeps changing, try again", site, class)
}

// leaseArgs are the ARGV of leaseScript, or of leaseProxyScript when id
// is set: the same eleven, then the proxy id as ARGV[12].
func (b *RedisBroker) leaseArgs(a *scArgs, set *specSet, r LeaseRequest, id string) []any {
	args := make([]any, 0, 12)
	args = append(args, b.cfg.skew(), r.TTL.Milliseconds(), a.minInterval,
		holderArg(r.Holder), r.Task, a.field, a.site, b.exclusive(), set.marker(), b.fenceArg(), a.clearanceWait)
	if id != "" {
		args = append(args, id)
	}
	return args
}

// checkLeaseRequest refuses a request no lease script can serve.
func checkLeaseRequest(r LeaseRequest) error {
	switch {
	case r.Site == "" || strings.ContainsAny(r.Site, "\t:{}"):
		return &ConfigError{Field: "site", Reason: fmt.Sprintf("bad site name %q", r.Site)}
	case !r.Class.Valid():
		return &ConfigError{Field: "class", Reason: fmt.Sprintf("unknown class %q", r.Class)}
	case r.TTL < time.Millisecond:
		return &ConfigError{Field: "ttl", Reason: "lease ttl must be at least 1ms"}
	}
	return nil
}

// holderArg is a holder as the lease value stores it ("|" separates its
// fields).
func holderArg(holder string) string { return strings.ReplaceAll(holder, "|", "/") }

// exclusive is ARGV[8] of the lease scripts.
func (b *RedisBroker) exclusive() int64 {
	if b.cfg.Mode == ModeExclusive {
		return max(b.cfg.LeasePoll.Milliseconds(), 1)
	}
	return 0
}

// leaseResult turns a lease script reply into a Lease or an error.
func (b *RedisBroker) leaseResult(ctx context.Context, res []any, set *specSet, r LeaseRequest, id string, sc SiteConfig) (*Lease, error) {
	site, class := r.Site, r.Class
	switch res[0].(int64) {
	case 1:
		return b.newLease(ctx, res, set, r, sc)
	case 0:
		until, now := ms(num(res[1])), ms(num(res[2]))
		return nil, &NotReadyError{Site: site, Class: class, Until: until, Wait: until.Sub(now),
			Exhausted: num(res[3]) == 1, Leased: num(res[4]) > 0}
	case -1:
		return nil, b.noneReady(ctx, site, class)
	case -3:
		return nil, fmt.Errorf("proxy %s not in the %s pool of site %s: %w", id, class, site, ErrUnknownProxy)
	case -4:
		return nil, fmt.Errorf("proxy %s on site %s: %w", id, site, ErrBusy)
	case -5:
		return nil, fmt.Errorf("proxy %s on site %s until %s: %w", id, site, ms(num(res[1])).Format(time.RFC3339), ErrQuarantined)
	}
	return nil, fmt.Errorf("lease %s/%s: unexpected reply %v", site, class, res[0])
}

func (b *RedisBroker) newLease(ctx context.Context, res []any, set *specSet, r LeaseRequest, sc SiteConfig) (*Lease, error) {
	id, _ := res[1].(string)
	p, err := b.leasedProxy(ctx, res, set)
	if err != nil {
		return nil, fmt.Errorf("lease %s: proxy %s: %w", r.Site, id, err)
	}
	now := ms(num(res[3]))
	return &Lease{Proxy: p, Site: r.Site, Token: num(res[2]), Holder: r.Holder, Task: r.Task,
		Expires: ms(num(res[4])), NotBefore: now, MinInterval: time.Duration(num(res[6])) * time.Millisecond}, nil
}

// Extend pushes the lease's expiry to now+ttl (and its proxy's ready-at to
// that plus min_interval). ErrStaleLease when the token is not the live one.
func (b *RedisBroker) Extend(ctx context.Context, l *Lease, ttl time.Duration) (*Lease, error) {
	a := b.argsOf(l.Site, l.Proxy.Class)
	res, acked, err := b.evalAcked(ctx, extendScript, a.extend,
		[]any{b.cfg.skew(), l.Proxy.ID, l.Token, ttl.Milliseconds(), a.paceOf(l), a.site})
	if err != nil {
		return nil, fmt.Errorf("extend lease %d: %w", l.Token, err)
	}
	if num(res[0]) != 1 {
		return nil, fmt.Errorf("extend lease %d of proxy %s on %s: %w", l.Token, l.Proxy.ID, l.Site, ErrStaleLease)
	}
	if !acked { // the lease holds until its old expiry, not the new one
		return nil, fmt.Errorf("extend lease %d of proxy %s on %s: %w", l.Token, l.Proxy.ID, l.Site, ErrNotReplicated)
	}
	n := *l
	n.Expires = ms(num(res[2]))
	return &n, nil
}

// Release ends the lease with an outcome, which sets when the proxy is
// ready for the site again: ok now+min_interval (and the latency EWMA),
// failed +FailPenalty doubled per failure since the last ok (up to
// FailPenaltyCap), banned a jittered quarantine, rate_limited
// now+max(RetryAfter, min_interval), neutral now+min_interval.
// ErrStaleLease when the token is stale; then nothing changes.
func (b *RedisBroker) Release(ctx context.Context, l *Lease, o Outcome) error {
	keys, args, err := b.releaseArgs(l, o)
	if err != nil {
		return err
	}
	res, err := b.eval(ctx, releaseScript, keys, args)
	return b.released(l, o, res, err)
}

// ReleaseIn implements PipelineReleaser: Release queued in p, a pipeline
// or transaction on this broker's Redis, so the lease ends in the same
// round trip as the caller's own writes. The answer is nil or
// ErrStaleLease as from Release; when p failed, or Redis did not know the
// script (after a restart), or p was never run, the answer releases with a
// Release of its own, which a release that did run answers with
// ErrStaleLease. Nothing is queued (ok false) for an outcome Release
// refuses.
func (b *RedisBroker) ReleaseIn(ctx context.Context, p redis.Pipeliner, l *Lease, o Outcome) (answer func(context.Context) error, ok bool) {
	keys, args, err := b.releaseArgs(l, o)
	if err != nil {
		return nil, false
	}
	cmd := evalshaCmd(ctx, releaseScript, keys, args)
	_ = p.Process(ctx, cmd)
	return func(ctx context.Context) error {
		res, err := cmd.Result()
		if err != nil || len(res) == 0 { // p failed, or never ran
			return b.Release(ctx, l, o)
		}
		return b.released(l, o, res, nil)
	}, true
}

// Redis is the client the broker runs its scripts on.
func (b *RedisBroker) Redis() redis.UniversalClient { return b.rdb }

// releaseArgs are the release script's KEYS and ARGV for l and o: each
// value in its own position, sent up to the last one o's kind reads.
func (b *RedisBroker) releaseArgs(l *Lease, o Outcome) (keys, args []any, err error) {
	a := b.argsOf(l.Site, l.Proxy.Class)
	if !o.Kind.known() {
		return nil, nil, &ConfigError{Field: "outcome", Reason: fmt.Sprintf("unknown outcome kind %q", o.Kind)}
	}
	var latency any = int64(0)
	if o.Kind == OutcomeOK { // ms, with microseconds (a loopback or LAN answer takes less than one)
		latency = float64(o.Latency.Microseconds()) / 1000
	}
	args = make([]any, 0, 18)
	args = append(args, b.cfg.skew(), l.Proxy.ID, l.Token, holderArg(l.Holder), string(o.Kind), a.paceOf(l), a.learned, latency)
	switch o.Kind {
	case OutcomeRateLimited:
		args = append(args, o.RetryAfter.Milliseconds())
	case OutcomeNeutral:
		if o.RetryAfter > 0 {
			args = append(args, o.RetryAfter.Milliseconds())
		}
	case OutcomeFailed:
		args = append(append(args, int64(0)), a.failPolicy...)
	case OutcomeBanned:
		args = append(append(args, int64(0)), a.failPolicy...)
		args = append(append(append(args, o.Reason), a.banPolicy...), b.cfg.Rand())
	case OutcomeOK:
		if a.learn != nil && o.Sent > 0 { // the pace's evidence, ARGV[17..18]
			args = append(append(args, int64(0)), a.failPolicy...)
			args = append(append(append(args, ""), a.banPolicy...), 0)
			args = append(args, float64(o.Sent.Microseconds())/1000, o.Paced)
		}
	}
	return a.release, args, nil
}

// known says whether k is one of the outcome kinds the release script
// knows.
func (k OutcomeKind) known() bool {
	switch k {
	case OutcomeOK, OutcomeFailed, OutcomeBanned, OutcomeRateLimited, OutcomeNeutral:
		return true
	}
	return false
}

// released reads the release script's answer.
func (b *RedisBroker) released(l *Lease, o Outcome, res []any, err error) error {
	if err != nil {
		return fmt.Errorf("release lease %d: %w", l.Token, err)
	}
	if num(res[0]) != 1 {
		return fmt.Errorf("release lease %d of proxy %s on %s: %w", l.Token, l.Proxy.ID, l.Site, ErrStaleLease)
	}
	if o.Kind == OutcomeBanned {
		b.log.Info("proxy quarantined", zap.String("proxy", l.Proxy.Masked()), zap.String("site", l.Site),
			zap.String("reason", o.Reason), zap.Time("until", ms(num(res[1]))))
	}
	return nil
}

// ms is a Redis-clock millisecond time.
func ms(v int64) time.Time { return time.UnixMilli(v) }

// num reads an integer script reply (int64, or a string score).
func num(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return int64(f)
	}
	return 0
}
