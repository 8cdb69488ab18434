package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/tasks"
	"crawlq/tasks/site"
)

// feeder queues one-page jobs (product or item pages) of the site, cycling over the
// catalog, each under a task ID of its own so a product is crawled again
// and again. Jobs are deleted when done (retention 0): the phase only
// counts them.
type feeder struct {
	client *asynq.Client
	rdb    redis.UniversalClient
	reg    *site.Registry
	site   string
	kind   string
	queue  string
	prefix string
	urls   []string
	n      atomic.Int64
}

func newFeeder(t CrawlTarget, reg *site.Registry, siteName, queue, phase string, urls []string) *feeder {
	return &feeder{client: asynq.NewClient(t.Asynq), rdb: t.Client, reg: reg, site: siteName, queue: queue,
		kind: onePageKind(reg, siteName), prefix: "bench:" + phase + ":", urls: urls}
}

// onePageKind is the kind a listing of the site follows (its product or
// item page, one request per job), else its first kind that is not a
// listing. (The first non-listing kind by name is not it: Wildberries'
// "card", the basket CDN's card.json, sorts before "product".)
func onePageKind(reg *site.Registry, siteName string) string {
	s, err := reg.Get(siteName)
	if err != nil {
		return "product"
	}
	for _, name := range s.KindNames() {
		if k, _ := s.Kind(name); k.Listing && k.Follow != "" {
			return k.Follow
		}
	}
	for _, name := range s.KindNames() {
		if k, _ := s.Kind(name); !k.Listing {
			return name
		}
	}
	return "product"
}

// count is how many jobs were queued.
func (f *feeder) count() int { return int(f.n.Load()) }

// close closes the Asynq client.
func (f *feeder) close() error { return f.client.Close() }

// enqueueWorkers is how many goroutines queue jobs at once.
const enqueueWorkers = 4

// enqueue queues n more jobs.
func (f *feeder) enqueue(ctx context.Context, n int) error {
	var next atomic.Int64
	errs := make([]error, enqueueWorkers)
	var wg sync.WaitGroup
	for w := range enqueueWorkers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) && errs[w] == nil {
				errs[w] = f.one(ctx)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// one queues the next job.
func (f *feeder) one(ctx context.Context) error {
	i := f.n.Add(1)
	j := tasks.Job{Site: f.site, Kind: f.kind, Request: site.Request{URL: f.urls[int(i)%len(f.urls)]}}
	t, err := tasks.NewTask(f.reg, j, asynq.TaskID(fmt.Sprintf("%s%d", f.prefix, i)), asynq.Retention(0))
	if err != nil {
		return err
	}
	if _, err := f.client.EnqueueContext(ctx, t); err != nil {
		return fmt.Errorf("queue bench job: %w", err)
	}
	return nil
}

// keepAbove tops the queue up by low jobs whenever fewer than low are
// pending, until ctx ends.
func (f *feeder) keepAbove(ctx context.Context, low int) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		n, err := f.pending(ctx)
		if err == nil && n < low {
			err = f.enqueue(ctx, low)
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
}

// pending is the length of the queue's pending list, read directly (one
// LLEN on Asynq's key asynq:{queue}:pending) because the inspector's
// queue info walks the queue's memory usage.
func (f *feeder) pending(ctx context.Context) (int, error) {
	n, err := f.rdb.LLen(ctx, "asynq:{"+f.queue+"}:pending").Result()
	return int(n), err
}
