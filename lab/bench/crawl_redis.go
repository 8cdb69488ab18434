package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ErrDBNotEmpty is returned when the benchmark's Redis DB holds keys.
var ErrDBNotEmpty = errors.New("bench crawl needs an empty Redis DB")

// checkEmpty refuses a DB that holds anything: the benchmark creates and
// deletes queues, a proxy pool, sessions and results in it.
func checkEmpty(ctx context.Context, rdb redis.UniversalClient) error {
	var n int64
	err := eachMaster(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		k, err := c.DBSize(ctx).Result()
		n += k
		return err
	})
	if err != nil {
		return fmt.Errorf("bench crawl: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("%w: it holds %d keys (use --redis embedded or an empty DB such as redis://host:6379/15)",
			ErrDBNotEmpty, n)
	}
	return nil
}

// cleanupCrawl deletes every key the benchmark wrote: Asynq's and crawlq's.
func cleanupCrawl(ctx context.Context, rdb redis.UniversalClient) error {
	for _, pattern := range []string{"asynq:*", "crawlq:*"} {
		if err := unlinkAll(ctx, rdb, pattern); err != nil {
			return err
		}
	}
	return nil
}

// unlinkAll deletes the keys matching pattern on every master, one
// UNLINK per key in pipelines (keys of a Cluster master span slots).
func unlinkAll(ctx context.Context, rdb redis.UniversalClient, pattern string) error {
	return eachMaster(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		pipe := c.Pipeline()
		for iter.Next(ctx) {
			pipe.Unlink(ctx, iter.Val())
			if pipe.Len() == 1000 {
				if _, err := pipe.Exec(ctx); err != nil {
					return err
				}
			}
		}
		if err := iter.Err(); err != nil {
			return err
		}
		if pipe.Len() == 0 {
			return nil
		}
		_, err := pipe.Exec(ctx)
		return err
	})
}

// eachMaster runs f on every master of rdb, one at a time: rdb itself
// unless it is a Cluster client.
func eachMaster(ctx context.Context, rdb redis.UniversalClient, f func(context.Context, *redis.Client) error) error {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		return c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return f(ctx, m)
		})
	case *redis.Client:
		return f(ctx, c)
	}
	return fmt.Errorf("unsupported redis client %T", rdb)
}
