// Package naive is the widely copied Redis proxy broker of the article in
// shared/background/proxy-pool-article.txt, ported as is for benchmarks
// only: SMEMBERS the whole pool, shuffle, per-candidate EXISTS banned and
// SET NX EX, release by DEL. It has every fault the article's critique
// lists; never use it outside benchmarks.
package naive

import (
	"context"
	"math/rand/v2"

	"github.com/redis/go-redis/v9"
)

// Broker is the article's broker under a key prefix.
type Broker struct {
	rdb    redis.UniversalClient
	prefix string
}

// New returns a naive broker with keys under prefix.
func New(rdb redis.UniversalClient, prefix string) *Broker { return &Broker{rdb: rdb, prefix: prefix} }

func (b *Broker) pool() string           { return b.prefix + "pool" }
func (b *Broker) lock(p string) string   { return b.prefix + "lock:" + p }
func (b *Broker) banned(p string) string { return b.prefix + "banned:" + p }

// Load adds proxies to the pool (load_pool).
func (b *Broker) Load(ctx context.Context, proxies []string) error {
	const chunk = 10000
	for i := 0; i < len(proxies); i += chunk {
		part := proxies[i:min(i+chunk, len(proxies))]
		args := make([]any, len(part))
		for j, p := range part {
			args[j] = p
		}
		if err := b.rdb.SAdd(ctx, b.pool(), args...).Err(); err != nil {
			return err
		}
	}
	return nil
}

// Get is get_free_proxy: "" when none of 20 shuffled candidates is free.
func (b *Broker) Get(ctx context.Context, server string) (string, error) {
	candidates, err := b.rdb.SMembers(ctx, b.pool()).Result()
	if err != nil {
		return "", err
	}
	rand.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	for _, p := range candidates[:min(20, len(candidates))] {
		n, err := b.rdb.Exists(ctx, b.banned(p)).Result()
		if err != nil {
			return "", err
		}
		if n > 0 {
			continue
		}
		ok, err := b.rdb.SetNX(ctx, b.lock(p), server, 30e9).Result()
		if err != nil {
			return "", err
		}
		if ok {
			return p, nil
		}
	}
	return "", nil
}

// Release is release_proxy: DEL without checking the holder.
func (b *Broker) Release(ctx context.Context, p string) error {
	return b.rdb.Del(ctx, b.lock(p)).Err()
}
