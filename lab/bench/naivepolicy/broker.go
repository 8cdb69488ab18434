package naivepolicy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/proxies"
)

// The article's constants.
const (
	// DefaultLockTTL is LOCK_TTL: how long a pick locks a proxy.
	DefaultLockTTL = 30 * time.Second
	// DefaultBanTTL is BAN_TTL: how long a banned key lives.
	DefaultBanTTL = time.Hour
	// DefaultMaxAttempts is get_free_proxy's max_attempts.
	DefaultMaxAttempts = 20
	// DefaultPoll is how long LeaseWait sleeps after "no free proxy".
	DefaultPoll = 20 * time.Millisecond
	// DefaultPrefix namespaces the keys (the article's "proxy:").
	DefaultPrefix = "crawlq:bench:naivepolicy:"
)

// BlockedStatusReason is the Outcome.Reason crawlq's detector gives a
// Blocked verdict found from the status code (403 and the like), the only
// kind of block the article reacts to.
const BlockedStatusReason = "blocked status"

// Config configures a Broker; zero fields take the article's values.
type Config struct {
	// Prefix of every key: pool, lock:<proxy>, banned:<proxy>. Default
	// DefaultPrefix.
	Prefix string
	// LockTTL default DefaultLockTTL; BanTTL default DefaultBanTTL.
	LockTTL, BanTTL time.Duration
	// MaxAttempts default DefaultMaxAttempts.
	MaxAttempts int
	// Poll is LeaseWait's sleep between tries (the article has no waiting:
	// its caller raises "no free proxies"). Default DefaultPoll.
	Poll time.Duration
}

func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.LockTTL <= 0 {
		c.LockTTL = DefaultLockTTL
	}
	if c.BanTTL <= 0 {
		c.BanTTL = DefaultBanTTL
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	return c
}

// Broker is the article's broker behind the proxies.Broker interface.
type Broker struct {
	rdb     redis.UniversalClient
	cfg     Config
	mu      sync.Mutex
	specs   map[string]proxies.Proxy // pool member (proxy URL) -> its proxy
	members map[string]string        // proxy ID -> pool member
}

var _ proxies.Broker = (*Broker)(nil)

// New returns the article's broker on rdb.
func New(rdb redis.UniversalClient, cfg Config) *Broker {
	return &Broker{rdb: rdb, cfg: cfg.withDefaults(), specs: map[string]proxies.Proxy{}, members: map[string]string{}}
}

// Capabilities: none beyond proxies.Broker (no gateways, no modems).
func (b *Broker) Capabilities() proxies.Capabilities { return proxies.Capabilities{} }

func (b *Broker) pool() string           { return b.cfg.Prefix + "pool" }
func (b *Broker) lock(p string) string   { return b.cfg.Prefix + "lock:" + p }
func (b *Broker) banned(p string) string { return b.cfg.Prefix + "banned:" + p }

// LoadPool is load_pool: SADD every proxy's URL (with its credentials, as
// the article keeps them) to the pool.
func (b *Broker) LoadPool(ctx context.Context, ps []proxies.Proxy) error {
	if len(ps) == 0 {
		return nil
	}
	members := make([]any, len(ps))
	for i, p := range ps {
		members[i] = b.member(p)
	}
	return b.rdb.SAdd(ctx, b.pool(), members...).Err()
}

// member is the pool member of p, remembered both ways.
func (b *Broker) member(p proxies.Proxy) string {
	m := p.URL().String()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.specs[m], b.members[p.ID] = p, m
	return m
}

// GetFreeProxy is get_free_proxy: "" when none of MaxAttempts shuffled
// candidates of the whole pool is unbanned and unlocked.
func (b *Broker) GetFreeProxy(ctx context.Context, server string) (string, error) {
	candidates, err := b.rdb.SMembers(ctx, b.pool()).Result()
	if err != nil {
		return "", err
	}
	rand.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	for _, p := range candidates[:min(b.cfg.MaxAttempts, len(candidates))] {
		n, err := b.rdb.Exists(ctx, b.banned(p)).Result()
		if err != nil {
			return "", err
		}
		if n > 0 {
			continue
		}
		ok, err := b.rdb.SetNX(ctx, b.lock(p), server, b.cfg.LockTTL).Result()
		if err != nil || ok {
			return p, err
		}
	}
	return "", nil
}

// ReleaseProxy is release_proxy: DEL the lock, whoever holds it.
func (b *Broker) ReleaseProxy(ctx context.Context, p string) error {
	return b.rdb.Del(ctx, b.lock(p)).Err()
}

// MarkBanned is mark_banned: a banned key for BanTTL, DEL the lock, and
// SREM from the pool (nothing ever adds it back).
func (b *Broker) MarkBanned(ctx context.Context, p string) error {
	if err := b.rdb.Set(ctx, b.banned(p), 1, b.cfg.BanTTL).Err(); err != nil {
		return err
	}
	if err := b.rdb.Del(ctx, b.lock(p)).Err(); err != nil {
		return err
	}
	return b.rdb.SRem(ctx, b.pool(), p).Err()
}

// Lease picks a proxy with GetFreeProxy. Site, class and ttl are ignored:
// the article has one pool, one lock per proxy and a fixed LOCK_TTL. The
// lease has no fencing token (0) and no min interval.
func (b *Broker) Lease(ctx context.Context, r proxies.LeaseRequest) (*proxies.Lease, error) {
	m, err := b.GetFreeProxy(ctx, r.Holder)
	if err != nil {
		return nil, fmt.Errorf("naive lease for %s: %w", r.Site, err)
	}
	if m == "" {
		return nil, &proxies.NotReadyError{Site: r.Site, Class: r.Class, Wait: b.cfg.Poll, Until: time.Now().Add(b.cfg.Poll)}
	}
	return b.newLease(m, r)
}

func (b *Broker) newLease(m string, r proxies.LeaseRequest) (*proxies.Lease, error) {
	p, err := b.proxy(m)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return &proxies.Lease{Proxy: p, Site: r.Site, Holder: r.Holder, Task: r.Task,
		Expires: now.Add(b.cfg.LockTTL), NotBefore: now}, nil
}

// proxy parses a pool member, cached.
func (b *Broker) proxy(m string) (proxies.Proxy, error) {
	b.mu.Lock()
	p, ok := b.specs[m]
	b.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := proxies.ParseLine(m)
	if err != nil {
		return proxies.Proxy{}, fmt.Errorf("naive pool member: %w", err)
	}
	p.Class = proxies.Datacenter
	b.member(p)
	return p, nil
}

// LeaseWait retries Lease every Poll until it finds a proxy or ctx ends.
func (b *Broker) LeaseWait(ctx context.Context, r proxies.LeaseRequest) (*proxies.Lease, error) {
	for {
		l, err := b.Lease(ctx, r)
		var nr *proxies.NotReadyError
		if !errors.As(err, &nr) {
			return l, err
		}
		t := time.NewTimer(nr.Wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("naive lease for %s: %w", r.Site, ctx.Err())
		case <-t.C:
		}
	}
}

// LeaseProxy is get_sticky_proxy's "return the remembered proxy": it is
// handed out without taking or checking its lock or ban (the article's
// fault 5). ErrUnknownProxy for a proxy this broker never saw.
func (b *Broker) LeaseProxy(_ context.Context, r proxies.LeaseRequest, proxyID string) (*proxies.Lease, error) {
	b.mu.Lock()
	m, ok := b.members[proxyID]
	b.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("naive proxy %s: %w", proxyID, proxies.ErrUnknownProxy)
	}
	return b.newLease(m, r)
}

// Extend does nothing in Redis: the article never extends a lock, which
// just expires LOCK_TTL after the pick.
func (b *Broker) Extend(_ context.Context, l *proxies.Lease, _ time.Duration) (*proxies.Lease, error) {
	n := *l
	return &n, nil
}

// Release is fetch_with_proxy's ending: mark_banned on a 429 (RateLimited),
// a blocked status code (Banned with BlockedStatusReason) or a transport
// error (Failed); release_proxy on anything else, content bans included.
func (b *Broker) Release(ctx context.Context, l *proxies.Lease, o proxies.Outcome) error {
	m := b.member(l.Proxy)
	if bansOn(o) {
		return b.MarkBanned(ctx, m)
	}
	return b.ReleaseProxy(ctx, m)
}

// bansOn says whether the article bans the proxy after outcome o.
func bansOn(o proxies.Outcome) bool {
	switch o.Kind {
	case proxies.OutcomeRateLimited, proxies.OutcomeFailed:
		return true
	case proxies.OutcomeBanned:
		return o.Reason == BlockedStatusReason
	}
	return false
}

// Stats reports only the pool size: the article keeps no counters.
func (b *Broker) Stats(ctx context.Context) (*proxies.PoolStats, error) {
	n, err := b.rdb.SCard(ctx, b.pool()).Result()
	if err != nil {
		return nil, err
	}
	return &proxies.PoolStats{At: time.Now(), Total: int(n), Sites: map[string]proxies.SiteStats{}}, nil
}
