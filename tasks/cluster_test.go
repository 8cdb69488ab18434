package tasks_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/redisproc"
	"crawlq/internal/redisx"
	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// slotCheck watches every transaction a Cluster client sends to a node:
// each must touch keys of one slot, and the results stream must be
// written in the same transaction as a job's progress (I6 on a Cluster).
type slotCheck struct {
	mu     sync.Mutex
	bad    []string
	pages  int // transactions with items or progress
	broken []string
}

func (s *slotCheck) DialHook(next redis.DialHook) redis.DialHook { return next }
func (s *slotCheck) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}

func (s *slotCheck) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "multi" {
			s.tx(cmds)
		}
		return next(ctx, cmds)
	}
}

// tx checks one MULTI … EXEC.
func (s *slotCheck) tx(cmds []redis.Cmder) {
	slots := map[int]bool{}
	var stream, progress bool
	for _, c := range cmds {
		for _, k := range cmdKeys(c) {
			slots[redisproc.Slot(k)] = true
			stream = stream || k == results.StreamKey
			progress = progress || strings.Contains(k, ":progress:")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(slots) > 1 {
		s.bad = append(s.bad, fmt.Sprint(cmds))
	}
	if stream || progress {
		s.pages++
		if stream && !progress {
			s.broken = append(s.broken, fmt.Sprint(cmds))
		}
	}
}

// cmdKeys are the keys of the commands crawlq sends in transactions: the
// KEYS of a script, else the first argument.
func cmdKeys(c redis.Cmder) []string {
	args := c.Args()
	switch c.Name() {
	case "multi", "exec":
		return nil
	case "evalsha", "eval":
		n, _ := strconv.Atoi(fmt.Sprint(args[2]))
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprint(args[3+i])
		}
		return keys
	}
	if len(args) < 2 {
		return nil
	}
	return []string{fmt.Sprint(args[1])}
}

// TestCrawlOnRedisCluster: a worker on a real three-master Redis Cluster
// (Asynq through RedisClusterClientOpt, crawlq through a cluster client)
// crawls searches with follow-ups on all three testbed sites; every job
// completes, the export equals the catalog, the sites saw no I1/I2
// violation, every transaction sent touched one slot, and each page's
// items were written in the transaction of its progress.
func TestCrawlOnRedisCluster(t *testing.T) {
	ctx := context.Background()
	rc := testredis.Cluster(t)
	target, err := redisx.ParseURL(rc.URL())
	if err != nil {
		t.Fatal(err)
	}
	rdb := target.NewClient().(*redis.ClusterClient)
	defer rdb.Close()
	check := &slotCheck{}
	rdb.OnNewNode(func(c *redis.Client) { c.AddHook(check) })
	tb, err := testbed.Start(ctx, testbed.Config{Proxies: 8, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	reg, err := testbedRegistry(tb.Sites())
	if err != nil {
		t.Fatal(err)
	}
	importFarm(t, rdb, tb, reg)
	serve(t, tasks.WorkerConfig{Redis: target.AsynqOpt(), RDB: rdb, ServerID: "cluster-worker",
		Concurrency: 6, Sites: reg, ShutdownTimeout: time.Second})
	queries := map[string]string{}
	var jobs []tasks.Job
	for _, name := range testbed.SiteNames {
		size := testbed.PageSizes[name]
		q := pickQuery(t, tb.Catalog, name, size/3, size, size/3, size)
		queries[name] = q
		jobs = append(jobs, tasks.Job{Site: name, Kind: "search", Request: site.Request{Query: q}, Pages: 2, Follow: true})
	}
	client := asynq.NewClient(target.AsynqOpt())
	defer client.Close()
	enq := &tasks.Enqueuer{Client: client, Sites: reg}
	ts, err := enq.Build(jobs, func(i int) string { return fmt.Sprint("job ", i) })
	if err != nil {
		t.Fatal(err)
	}
	b, err := enq.Enqueue(ctx, ts)
	if err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(target.AsynqOpt())
	defer insp.Close()
	// A guard against a hang, not a speed goal: the crawl is bound by the
	// sites' min_intervals over 8 proxies (some 15 s on a quiet machine;
	// Ozon's listings page through its API since 2026), and a loaded CI
	// machine may take several times that.
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	c, err := tasks.Wait(wctx, insp, rdb, b.All(), 100*time.Millisecond, func(tasks.Counts) {})
	cancel()
	if err != nil || c.Completed != c.Total || c.FollowUps == 0 {
		for q := range tasks.DefaultQueues(reg) {
			if rs, err := insp.ListRetryTasks(q); err == nil {
				for _, r := range rs {
					t.Logf("retry %s: %s", r.ID, r.LastErr)
				}
			}
		}
		t.Fatalf("wait: %v, counts %+v: want every job and follow-up completed", err, c)
	}
	checkArchived(t, insp, tasks.DefaultQueues(reg))
	for _, name := range testbed.SiteNames {
		checkExport(t, rdb, tb.Catalog, name, queries[name])
	}
	if r := tb.Check(); !r.OK() {
		t.Errorf("testbed saw I1 %d, I2 %d violations: %v", r.I1Violations, r.I2Violations, r.Details)
	}
	check.mu.Lock()
	defer check.mu.Unlock()
	if len(check.bad) > 0 || len(check.broken) > 0 || check.pages < c.Total {
		t.Errorf("%d transactions spanned slots %v; %d wrote items without progress %v; %d page transactions for %d jobs",
			len(check.bad), check.bad, len(check.broken), check.broken, check.pages, c.Total)
	}
}
