package demo

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"crawlq/fetcher"
	"crawlq/fetcher/browser"
	"crawlq/sessions"
	"crawlq/tasks"
)

// Worker settings of the demo: short, so a stop is quick.
const (
	leaseTTL        = 10 * time.Second
	shutdownTimeout = 3 * time.Second
	// pollInterval: the demo's workers look at empty queues ten times a
	// second, so a job the demo queues starts at once (the run lasts a
	// minute; the idle cost of a worker does not matter here).
	pollInterval = 100 * time.Millisecond
)

// workers are the demo's in-process crawlq workers, named demo-1, demo-2…
type workers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	list   []*tasks.Worker
	mu     sync.Mutex
	errs   []error
}

// startWorkers runs cfg.Workers workers on the cluster until stop. They do
// not follow the caller's context: stop ends them after the last count.
func startWorkers(c *cluster, cfg Config) *workers {
	ctx, cancel := context.WithCancel(context.Background())
	ws := &workers{cancel: cancel}
	for i := 1; i <= cfg.Workers; i++ {
		solver := c.newBrowser(cfg)
		w := tasks.NewWorker(tasks.WorkerConfig{
			Browser: solver, OnChallenge: c.challenges.add, OnPoW: c.challenges.addPoW,
			Redis: c.conn.Asynq, RDB: c.conn.Client, ServerID: fmt.Sprintf("demo-%d", i),
			Concurrency: cfg.Concurrency, Sites: c.reg, LeaseTTL: leaseTTL,
			ShutdownTimeout: shutdownTimeout, Logger: cfg.Logger, OnConfirm: c.confirms.add, PollInterval: pollInterval,
			Fetcher:   fetcher.Config{TLS: &tls.Config{RootCAs: c.tb.CA.Pool()}}, // trust the testbed's CA
			ExitProbe: fetcher.ExitProbe{URL: c.tb.EchoURL()},                    // learns the gateway sessions' exits
		})
		ws.list = append(ws.list, w)
		ws.wg.Add(1)
		go ws.run(ctx, w)
	}
	return ws
}

func (ws *workers) run(ctx context.Context, w *tasks.Worker) {
	defer ws.wg.Done()
	if err := w.Run(ctx); err != nil {
		ws.mu.Lock()
		ws.errs = append(ws.errs, err)
		ws.mu.Unlock()
	}
}

// stop makes every worker stop taking work, waits for in-flight jobs (up
// to the shutdown timeout; the rest go back to their queue) and returns
// the workers' errors.
func (ws *workers) stop() error {
	ws.cancel()
	ws.wg.Wait()
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return errors.Join(ws.errs...)
}

// exitCounts sums the workers' exit figures; call it after stop.
func (ws *workers) exitCounts() sessions.ExitCounts {
	var sum sessions.ExitCounts
	for _, w := range ws.list {
		c := w.Sessions().ExitCounts()
		sum.Probes, sum.Rerolls, sum.Waits, sum.Changes = sum.Probes+c.Probes, sum.Rerolls+c.Rerolls, sum.Waits+c.Waits, sum.Changes+c.Changes
	}
	return sum
}

// modemCounts sums the workers' rotation figures; call it after stop.
func (ws *workers) modemCounts() sessions.ModemCounts {
	var sum sessions.ModemCounts
	for _, w := range ws.list {
		c := w.Sessions().ModemCounts()
		sum.Rotations, sum.Failed, sum.Refused, sum.Ended = sum.Rotations+c.Rotations, sum.Failed+c.Failed, sum.Refused+c.Refused, sum.Ended+c.Ended
	}
	return sum
}

// newBrowser gives a worker its own browser in challenge mode (nil
// otherwise), one context per job it runs at once, trusting the
// testbed's CA.
func (c *cluster) newBrowser(cfg Config) tasks.Solver {
	if c.chrome == "" {
		return nil
	}
	b, err := browser.New(browser.Config{Path: c.chrome, Contexts: cfg.Concurrency, CAFiles: []string{c.tb.CAFile}, Logger: cfg.Logger})
	if err != nil {
		cfg.Logger.Warn("demo: browser", zap.Error(err))
		return nil
	}
	c.browsers = append(c.browsers, b)
	return b
}
