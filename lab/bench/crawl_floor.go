package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
)

// The floor's queue and task type.
const (
	noopQueue = "bench-noop"
	noopType  = "bench:noop"
	// minFloorTasks keeps the floor off a sub-second burst when the crawl
	// phase queued few jobs.
	minFloorTasks = 5000
)

// floor queues n no-op tasks, then runs K Asynq servers with the workers'
// settings (concurrency, task check interval) until all n are done or the
// window ends. It returns the tasks done per second since the servers
// started, the CPU a task cost over its whole life (its enqueue, as the
// crawl phase's per-page figure holds its jobs' enqueues, plus its dequeue
// and done) and the enqueue's share of it.
func (r *crawlRun) floor(ctx context.Context, n int) (float64, *CPUCost, *CPUCost, error) {
	queued := markCPU(ctx, r.t.Client)
	if err := r.queueNoops(ctx, n); err != nil {
		return 0, nil, nil, err
	}
	enqueue := queued.cost(ctx, r.t.Client, n)
	defer r.dropQueue(noopQueue)
	c := &noopCounter{want: int64(n), done: make(chan struct{})}
	srvs := make([]*asynq.Server, r.o.Workers)
	start := time.Now()
	mark := markCPU(ctx, r.t.Client)
	for i := range srvs {
		srvs[i] = asynq.NewServer(r.t.Asynq, r.noopConfig())
		if err := srvs[i].Start(c); err != nil {
			return 0, nil, nil, fmt.Errorf("start noop server: %w", err)
		}
	}
	done, elapsed, err := c.wait(ctx, start, r.o.Duration)
	cpu := mark.cost(ctx, r.t.Client, int(done))
	for _, s := range srvs {
		s.Shutdown()
	}
	r.log.Sugar().Infof("floor: %d no-op tasks in %s", done, elapsed)
	return float64(done) / elapsed.Seconds(), cpu.plus(enqueue), enqueue, err
}

// noopConfig is tasks.Worker's Asynq configuration without the handler's
// hooks.
func (r *crawlRun) noopConfig() asynq.Config {
	return asynq.Config{
		Concurrency: r.o.Concurrency, Queues: map[string]int{noopQueue: 1},
		TaskCheckInterval: 100 * time.Millisecond, DelayedTaskCheckInterval: time.Second,
		ShutdownTimeout: 2 * time.Second, LogLevel: asynq.WarnLevel, Logger: r.log.Sugar(),
	}
}

func (r *crawlRun) queueNoops(ctx context.Context, n int) error {
	client := asynq.NewClient(r.t.Asynq)
	defer client.Close()
	var next atomic.Int64
	errs := make([]error, enqueueWorkers)
	var wg sync.WaitGroup
	for w := range enqueueWorkers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) && errs[w] == nil {
				_, errs[w] = client.EnqueueContext(ctx, asynq.NewTask(noopType, nil,
					asynq.Queue(noopQueue), asynq.Retention(0), asynq.MaxRetry(0)))
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// noopCounter is the floor's handler: it counts and returns at once.
type noopCounter struct {
	n    atomic.Int64
	want int64
	last atomic.Int64 // unix ns of the want-th task
	done chan struct{}
}

// ProcessTask counts the task; the want-th closes done.
func (c *noopCounter) ProcessTask(context.Context, *asynq.Task) error {
	if c.n.Add(1) == c.want {
		c.last.Store(time.Now().UnixNano())
		close(c.done)
	}
	return nil
}

// wait returns the tasks done and the time from start until every task
// was done, or until window if that comes first.
func (c *noopCounter) wait(ctx context.Context, start time.Time, window time.Duration) (int64, time.Duration, error) {
	t := time.NewTimer(window)
	defer t.Stop()
	select {
	case <-c.done:
		return c.want, time.Unix(0, c.last.Load()).Sub(start), nil
	case <-t.C:
		return c.n.Load(), time.Since(start), nil
	case <-ctx.Done():
		return c.n.Load(), time.Since(start), ctx.Err()
	}
}
