package main

import (
	"context"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/internal/heartbeat"
)

// keepAlive runs run with rec's heartbeat kept in rdb (so `crawlq status`
// and `schedule list` see the process live) and removed when run returns.
func keepAlive(ctx context.Context, rdb redis.UniversalClient, rec heartbeat.Record, log *zap.Logger,
	run func(context.Context) error) error {
	hctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		heartbeat.Keep(hctx, rdb, rec, 0, func(err error) { log.Debug("heartbeat", zap.Error(err)) })
	}()
	err := run(ctx)
	stop()
	<-done
	return err
}
