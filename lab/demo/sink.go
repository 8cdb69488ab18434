package demo

import (
	"context"
	"time"

	"go.uber.org/zap"

	"crawlq/results"
	"crawlq/results/pgsink"
)

// demoSink is the durable sink the demo runs with --postgres.
type demoSink struct {
	s      *pgsink.Sink
	cancel context.CancelFunc
	done   chan error
}

// startSink starts a sink on the demo's Redis into cfg.Postgres; nil
// without --postgres.
func startSink(ctx context.Context, c *cluster, cfg Config) *demoSink {
	if cfg.Postgres == "" {
		return nil
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d := &demoSink{s: pgsink.New(pgsink.Config{Redis: c.conn.Client, Postgres: cfg.Postgres, Logger: cfg.Logger,
		Consumer: "demo-sink", Block: 200 * time.Millisecond}), cancel: cancel, done: make(chan error, 1)}
	go func() { d.done <- d.s.Run(sctx) }()
	return d
}

// stop waits (up to 30s) until the sink acknowledged every entry the
// workers wrote, stops it and returns the observations it wrote.
func (d *demoSink) stop(ctx context.Context, c *cluster, log *zap.Logger) (int64, error) {
	if d == nil {
		return 0, nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, err := results.ReadBacklog(ctx, c.conn.Client, 0)
		if err == nil && b.Sink && b.Unacked == 0 {
			break
		}
		select {
		case err := <-d.done: // it stopped by itself: PostgreSQL refused it
			return d.s.Rows(), err
		case <-time.After(100 * time.Millisecond):
		}
	}
	d.cancel()
	err := <-d.done
	if err != nil {
		log.Warn("demo sink", zap.Error(err))
	}
	return d.s.Rows(), err
}
