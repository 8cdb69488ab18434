package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ErrDBNotEmpty is returned when the benchmark's Redis DB holds keys.
var ErrDBNotEmpty = errors.New("bench crawl needs an empty Redis DB")

// checkEmpty refuses a DB that holds anything: the benchmark creates and
// deletes queues, a proxy pool, sessions and results in it.
func checkEmpty(ctx context.Context, rdb *redis.Client) error {
	n, err := rdb.DBSize(ctx).Result()
	if err != nil {
		return fmt.Errorf("bench crawl: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("%w: db %d holds %d keys (use --redis embedded or an empty DB such as redis://host:6379/15)",
			ErrDBNotEmpty, rdb.Options().DB, n)
	}
	return nil
}

// cleanupCrawl deletes every key the benchmark wrote: Asynq's and crawlq's.
func cleanupCrawl(ctx context.Context, rdb *redis.Client) error {
	for _, pattern := range []string{"asynq:*", "crawlq:*"} {
		if err := unlinkAll(ctx, rdb, pattern); err != nil {
			return err
		}
	}
	return nil
}

func unlinkAll(ctx context.Context, rdb *redis.Client, pattern string) error {
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == 1000 {
			if err := rdb.Unlink(ctx, batch...).Err(); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(batch) == 0 {
		return nil
	}
	return rdb.Unlink(ctx, batch...).Err()
}
