package proxies

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Membership tells a FallbackBroker which servers are alive, so every server
// computes the same consistent-hash ring when the broker's Redis is down.
type Membership interface {
	// Beat records server as alive now and returns the live servers, sorted.
	Beat(ctx context.Context, server string) ([]string, error)
	// Leave removes server at once (on a clean shutdown).
	Leave(ctx context.Context, server string) error
}

// DefaultMemberTTL is how long a server counts as alive after its last beat.
const DefaultMemberTTL = 15 * time.Second

// RedisMembership keeps a heartbeat per server in the broker's Redis: the
// ZSET crawlq:{pool}:servers maps server -> last beat (ms).
type RedisMembership struct {
	rdb   redis.UniversalClient
	key   string
	ttl   time.Duration
	clock func() time.Time
}

var _ Membership = (*RedisMembership)(nil)

// NewRedisMembership keeps the heartbeats of pool on rdb. A server is alive
// for ttl after its last beat (<= 0: DefaultMemberTTL); clock gives the beat
// times (nil: time.Now). Servers' clocks should agree within a few seconds.
func NewRedisMembership(rdb redis.UniversalClient, pool string, ttl time.Duration, clock func() time.Time) *RedisMembership {
	if ttl <= 0 {
		ttl = DefaultMemberTTL
	}
	if clock == nil {
		clock = time.Now
	}
	if pool == "" {
		pool = "pool"
	}
	return &RedisMembership{rdb: rdb, key: serversKey(pool), ttl: ttl, clock: clock}
}

// serversKey is the heartbeat ZSET of pool; it shares the broker's hash tag.
func serversKey(pool string) string { return "crawlq:{" + pool + "}:servers" }

// Beat implements Membership in one transaction: record the beat, forget
// servers silent for ten TTLs, read the live ones.
func (m *RedisMembership) Beat(ctx context.Context, server string) ([]string, error) {
	now := m.clock().UnixMilli()
	pipe := m.rdb.TxPipeline()
	pipe.ZAdd(ctx, m.key, redis.Z{Score: float64(now), Member: server})
	pipe.ZRemRangeByScore(ctx, m.key, "-inf", "("+strconv.FormatInt(now-10*m.ttl.Milliseconds(), 10))
	live := pipe.ZRangeByScore(ctx, m.key, &redis.ZRangeBy{
		Min: strconv.FormatInt(now-m.ttl.Milliseconds(), 10), Max: "+inf"})
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("server heartbeat: %w", err)
	}
	out := live.Val()
	slices.Sort(out)
	return out, nil
}

// Leave implements Membership.
func (m *RedisMembership) Leave(ctx context.Context, server string) error {
	if err := m.rdb.ZRem(ctx, m.key, server).Err(); err != nil {
		return fmt.Errorf("server leave: %w", err)
	}
	return nil
}

// StaticMembership is a fixed server list, for shared-nothing runs where
// every server is configured with the same list.
type StaticMembership []string

var _ Membership = StaticMembership(nil)

// Beat implements Membership: the list, sorted.
func (s StaticMembership) Beat(context.Context, string) ([]string, error) {
	out := slices.Clone(s)
	slices.Sort(out)
	return out, nil
}

// Leave implements Membership: nothing to do.
func (s StaticMembership) Leave(context.Context, string) error { return nil }
