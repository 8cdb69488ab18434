package tasks_test

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/results"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// TestSIGTERMHandsBackJobsAndReleasesLeases: a worker told to stop in the
// middle of a long job returns within its shutdown timeout, the job goes
// back to the queue (not lost) and no proxy stays leased.
func TestSIGTERMHandsBackJobsAndReleasesLeases(t *testing.T) {
	ctx := context.Background()
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 9})
	// 20 Avito pages at one request per second per proxy: far longer than
	// the worker's 2 s shutdown timeout.
	q := biggestQuery(tb.Catalog, "avito")
	if pages := tb.Catalog.Pages("avito", q); pages < 8 {
		t.Fatalf("the largest avito query %q has %d pages; want at least 8", q, pages)
	}
	task, err := tasks.NewTask(reg, tasks.Job{Site: "avito", Kind: "search", Request: site.Request{Query: q}, Pages: 20})
	if err != nil {
		t.Fatal(err)
	}
	c := asynq.NewClient(asynqOpt(t))
	defer c.Close()
	info, err := c.Enqueue(task)
	if err != nil {
		t.Fatal(err)
	}
	w := startWorker(t, "server-stop", tb)
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	waitPages(t, rdb, info, 2)
	start := time.Now()
	_ = w.Process.Signal(syscall.SIGTERM)
	if err := w.Wait(); err != nil {
		t.Fatalf("worker exit: %v", err)
	}
	t.Logf("worker stopped %s after SIGTERM", time.Since(start).Round(10*time.Millisecond))
	got, err := insp.GetTaskInfo("avito", info.ID)
	if err != nil || (got.State != asynq.TaskStatePending && got.State != asynq.TaskStateRetry) {
		t.Fatalf("job after shutdown: %+v %v; want it back in the queue", got, err)
	}
	st, err := proxies.NewRedisBroker(rdb, tasks.BrokerConfig(reg, nil)).Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Sites["avito"].Leased; n != 0 {
		t.Fatalf("%d proxies still leased on avito after the worker stopped", n)
	}
}

// slowRelease is a real broker whose Release takes delay before it reaches
// Redis, as on a Redis slowed by load; released closes when it returned.
type slowRelease struct {
	proxies.Broker
	delay    time.Duration
	released chan struct{}
	once     sync.Once
}

func (b *slowRelease) Release(ctx context.Context, l *proxies.Lease, o proxies.Outcome) error {
	time.Sleep(b.delay)
	err := b.Broker.Release(ctx, l, o)
	b.once.Do(func() { close(b.released) })
	return err
}

// TestShutdownWaitsForCancelledJobsToRelease: Asynq hands a job back at the
// shutdown timeout whether or not its handler has returned; Run must not
// return (and a worker process exit) before the cancelled job's session
// released its lease, or the proxy stays leased until the lease TTL.
func TestShutdownWaitsForCancelledJobsToRelease(t *testing.T) {
	ctx := context.Background()
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 9})
	task, err := tasks.NewTask(reg, tasks.Job{Site: "avito", Kind: "search",
		Request: site.Request{Query: biggestQuery(tb.Catalog, "avito")}, Pages: 20})
	if err != nil {
		t.Fatal(err)
	}
	c := asynq.NewClient(asynqOpt(t))
	defer c.Close()
	info, err := c.Enqueue(task)
	if err != nil {
		t.Fatal(err)
	}
	// The job is cancelled at 3/4 of the shutdown timeout; its release
	// then lands half a timeout later: after Asynq's Shutdown returned, but
	// within the time Run waits for it.
	const shutdown = 2 * time.Second
	b := &slowRelease{Broker: proxies.NewRedisBroker(rdb, tasks.BrokerConfig(reg, nil)),
		delay: shutdown / 2, released: make(chan struct{})}
	w := tasks.NewWorker(tasks.WorkerConfig{Redis: asynqOpt(t), RDB: testredis.NewClient(t, testredis.DBTasks),
		Broker: b, ServerID: "slow-release", Concurrency: 2, Sites: reg, ShutdownTimeout: shutdown, PollInterval: testPoll})
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	waitPages(t, rdb, info, 1)
	stop()
	if err := <-done; err != nil {
		t.Fatalf("worker: %v", err)
	}
	select {
	case <-b.released:
	default:
		t.Fatal("Run returned before the cancelled job released its proxy")
	}
	st, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Sites["avito"].Leased; n != 0 {
		t.Fatalf("%d proxies still leased on avito after Run returned", n)
	}
}

// waitPages waits until the queued job has written n pages (a real
// condition), reading its run's progress.
func waitPages(t *testing.T, rdb *redis.Client, info *asynq.TaskInfo, n int) {
	t.Helper()
	j, err := tasks.DecodeJob(info.Payload)
	if err != nil {
		t.Fatal(err)
	}
	sink := results.NewSink(rdb, 0)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if p, err := sink.Progress(context.Background(), results.RunID(info.ID, j.Run)); err == nil && p.Pages >= n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("job %s did not reach page %d", info.ID, n)
}

// biggestQuery is the title word with the most matches on a site.
func biggestQuery(c *testbed.Catalog, siteName string) string {
	best, n, seen := "", 0, map[string]bool{}
	for _, p := range c.Products(siteName) {
		for _, w := range strings.Fields(strings.ToLower(p.Title)) {
			if seen[w] {
				continue
			}
			seen[w] = true
			if m := len(c.Matches(siteName, w)); m > n {
				best, n = w, m
			}
		}
	}
	return best
}
