package tasks

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/results"
)

// DefaultResultsBacklog is WorkerConfig.ResultsBacklog's default: the
// entries a durable sink may lag behind before workers pause.
const DefaultResultsBacklog = 5_000_000

// backlogEvery is how often a gate reads the results backlog; a Worker's
// gate reads it every SideInterval of its poll interval instead.
const backlogEvery = time.Second

// BacklogGate pauses a worker's jobs while the results stream holds more
// than Bound entries its durable sink has not acknowledged (the stream is
// then never trimmed past them, so without a pause it would grow without
// bound while the sink or PostgreSQL is down). Without a sink it never
// pauses: the stream keeps its MAXLEN bound.
type BacklogGate struct {
	rdb   redis.UniversalClient
	bound int64
	log   *zap.Logger
	every time.Duration

	mu      sync.Mutex
	last    results.Backlog
	paused  bool
	resumed chan struct{} // closed when a pause ends
}

// NewBacklogGate builds a gate on rdb; bound <= 0 means no bound.
func NewBacklogGate(rdb redis.UniversalClient, bound int64, log *zap.Logger) *BacklogGate {
	return &BacklogGate{rdb: rdb, bound: bound, log: log, every: backlogEvery, resumed: make(chan struct{})}
}

// Run reads the backlog every backlogEvery (a Worker's: SideInterval)
// until ctx ends, pausing and resuming.
func (g *BacklogGate) Run(ctx context.Context) {
	if g == nil || g.bound <= 0 {
		return
	}
	t := time.NewTicker(g.every)
	defer t.Stop()
	for {
		g.check(ctx)
		select {
		case <-ctx.Done():
			g.set(results.Backlog{}, false) // let waiting jobs go (their ctx ends too)
			return
		case <-t.C:
		}
	}
}

func (g *BacklogGate) check(ctx context.Context) {
	b, err := results.ReadBacklog(ctx, g.rdb, 0)
	if err != nil {
		if ctx.Err() == nil {
			g.log.Debug("read the results backlog", zap.Error(err))
		}
		return
	}
	g.set(b, b.Sink && b.Unacked > g.bound)
}

func (g *BacklogGate) set(b results.Backlog, pause bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.last = b
	switch {
	case pause && !g.paused:
		g.log.Warn("results backlog over its bound: pausing jobs until the sink catches up",
			zap.Int64("backlog", b.Unacked), zap.Int64("bound", g.bound))
		g.paused = true
	case !pause && g.paused:
		g.log.Info("results backlog back under its bound: resuming jobs", zap.Int64("backlog", b.Unacked), zap.Int64("bound", g.bound))
		g.paused = false
		close(g.resumed)
		g.resumed = make(chan struct{})
	}
}

// Wait returns at once unless the gate is paused; then when it resumes or
// ctx ends (ctx's error).
func (g *BacklogGate) Wait(ctx context.Context) error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	paused, resumed := g.paused, g.resumed
	g.mu.Unlock()
	if !paused {
		return nil
	}
	select {
	case <-resumed:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("paused for the results backlog: %w", ctx.Err())
	}
}

// Reason is why jobs are paused; "" when they are not.
func (g *BacklogGate) Reason() string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.paused {
		return ""
	}
	return fmt.Sprintf("results backlog %d > %d: waiting for the sink", g.last.Unacked, g.bound)
}

// Backlog is the last backlog read (0 entries before the first).
func (g *BacklogGate) Backlog() int64 {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.last.Unacked
}
