package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/results"
	"crawlq/results/item"
	"crawlq/tasks"
	_ "crawlq/tasks/avito"
	_ "crawlq/tasks/ozon"
	"crawlq/tasks/site"
	_ "crawlq/tasks/wildberries"
	"crawlq/testbed"
)

// Worker child processes: the test binary re-runs itself as `crawlq
// worker` servers of one cluster.
const childEnv = "CRAWLQ_TASKS_WORKER"

func TestMain(m *testing.M) {
	if cfg := os.Getenv(childEnv); cfg != "" {
		os.Exit(runWorkerChild(cfg))
	}
	os.Exit(masktest.Main(m))
}

// childConfig is what a worker child needs from its parent.
type childConfig struct {
	Redis    string            `json:"redis"`
	DB       int               `json:"db"`
	ServerID string            `json:"server_id"`
	Sites    map[string]string `json:"sites"`
}

func runWorkerChild(raw string) int {
	var c childConfig
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	reg, err := testbedRegistry(c.Sites)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	rdb := redis.NewClient(&redis.Options{Addr: c.Redis, DB: c.DB})
	w := tasks.NewWorker(tasks.WorkerConfig{
		Redis: asynq.RedisClientOpt{Addr: c.Redis, DB: c.DB}, RDB: rdb, ServerID: c.ServerID,
		Concurrency: 8, Sites: reg, ShutdownTimeout: 2 * time.Second, LeaseTTL: 10 * time.Second, PollInterval: testPoll,
	})
	if err := w.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testbedRegistry points every site at the testbed, datacenter proxies.
func testbedRegistry(urls map[string]string) (*site.Registry, error) {
	cfg := site.Config{Sites: map[string]site.SiteConfig{}}
	for name, u := range urls {
		cfg.Sites[name] = site.SiteConfig{BaseURL: u, Class: string(proxies.Datacenter)}
	}
	reg := site.Default().Clone()
	return reg, reg.Apply(cfg)
}

// startWorker runs a worker child; it is stopped with SIGTERM by the test.
func startWorker(t *testing.T, id string, tb *testbed.Testbed) *exec.Cmd {
	t.Helper()
	raw, _ := json.Marshal(childConfig{Redis: testredis.Addr(t), DB: testredis.DBTasks, ServerID: id, Sites: tb.Sites()})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start worker %s: %v", id, err)
	}
	return cmd
}

// pickQuery finds a one-word query with between lo and hi matches on a
// site (two pages), else between lo2 and hi2 (one page), so the test
// crawls real result lists without crawling the whole catalog.
func pickQuery(t *testing.T, c *testbed.Catalog, siteName string, lo, hi, lo2, hi2 int) string {
	t.Helper()
	if q := findQuery(c, siteName, lo, hi); q != "" {
		return q
	}
	if q := findQuery(c, siteName, lo2, hi2); q != "" {
		return q
	}
	t.Fatalf("no query on %s with %d..%d or %d..%d matches", siteName, lo, hi, lo2, hi2)
	return ""
}

func findQuery(c *testbed.Catalog, siteName string, lo, hi int) string {
	seen := map[string]bool{}
	for _, p := range c.Products(siteName) {
		for _, w := range strings.Fields(strings.ToLower(p.Title)) {
			if len([]rune(w)) < 4 || seen[w] {
				continue
			}
			seen[w] = true
			if n := len(c.Matches(siteName, w)); n >= lo && n <= hi {
				return w
			}
		}
	}
	return ""
}

// TestCrawlEndToEnd: two worker processes crawl searches with follow on all
// three sites; Wait (as `enqueue --wait` runs it) returns only when the
// follow-up product jobs are done too, every job ends completed, the
// export equals the catalog, and the sites saw no I1/I2 violation.
func TestCrawlEndToEnd(t *testing.T) {
	ctx := context.Background()
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 12, Seed: 3})
	queries := map[string]string{}
	var jobs []tasks.Job
	for _, name := range testbed.SiteNames {
		size := testbed.PageSizes[name]
		q := pickQuery(t, tb.Catalog, name, size+1, 2*size-1, size/3, size)
		queries[name] = q
		jobs = append(jobs, tasks.Job{Site: name, Kind: "search", Request: site.Request{Query: q}, Pages: 3, Follow: true})
	}
	workers := []*exec.Cmd{startWorker(t, "server-a", tb), startWorker(t, "server-b", tb)}
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBTasks})
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
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBTasks})
	defer insp.Close()
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	c, err := tasks.Wait(wctx, insp, rdb, b.All(), 100*time.Millisecond, func(tasks.Counts) {})
	cancel()
	if err != nil {
		t.Fatalf("wait: %v (counts %+v)", err, c)
	}
	// the crawl is over when Wait says so: nothing left in any queue
	if n := busy(insp, tasks.DefaultQueues(reg)); n != 0 {
		t.Errorf("Wait returned with %d tasks still queued, active or retrying", n)
	}
	follows := 0
	for _, name := range testbed.SiteNames {
		follows += len(tb.Catalog.Matches(name, queries[name]))
	}
	if c.FollowUps != follows || c.Total != len(jobs)+follows || c.Completed != c.Total {
		t.Errorf("counts %+v; want %d follow-ups of %d searches, all completed", c, follows, len(jobs))
	}
	for _, w := range workers {
		_ = w.Process.Signal(syscall.SIGTERM)
		if err := w.Wait(); err != nil {
			t.Errorf("worker exit: %v", err)
		}
	}
	checkArchived(t, insp, tasks.DefaultQueues(reg))
	for _, name := range testbed.SiteNames {
		checkExport(t, rdb, tb.Catalog, name, queries[name])
	}
	if r := tb.Check(); !r.OK() {
		t.Errorf("testbed saw I1 %d, I2 %d violations: %v", r.I1Violations, r.I2Violations, r.Details)
	}
}

// crawlWorld starts a testbed (closed after the test), points a registry
// at it and imports its farm into the broker on the flushed tasks DB.
func crawlWorld(t *testing.T, cfg testbed.Config) (*redis.Client, *testbed.Testbed, *site.Registry) {
	t.Helper()
	rdb := testredis.Client(t, testredis.DBTasks)
	tb, err := testbed.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	reg, err := testbedRegistry(tb.Sites())
	if err != nil {
		t.Fatal(err)
	}
	importFarm(t, rdb, tb, reg)
	return rdb, tb, reg
}

func importFarm(t *testing.T, rdb redis.UniversalClient, tb *testbed.Testbed, reg *site.Registry) {
	t.Helper()
	ps, err := proxies.ParseFile(tb.ProxiesFile)
	if err != nil {
		t.Fatal(err)
	}
	b := proxies.NewRedisBroker(rdb, tasks.BrokerConfig(reg, nil))
	if _, err := b.Import(context.Background(), ps, proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		t.Fatal(err)
	}
}

// busy is the tasks pending, active, scheduled or retrying in queues.
func busy(insp *asynq.Inspector, queues map[string]int) int {
	n := 0
	for q := range queues {
		if info, err := insp.GetQueueInfo(q); err == nil {
			n += info.Pending + info.Active + info.Scheduled + info.Retry
		}
	}
	return n
}

func checkArchived(t *testing.T, insp *asynq.Inspector, queues map[string]int) {
	t.Helper()
	for q := range queues {
		archived, err := insp.ListArchivedTasks(q)
		if err != nil {
			continue // queue never used
		}
		for _, a := range archived {
			if a.LastErr == "" {
				t.Errorf("archived task %s has no reason", a.ID)
			}
			t.Errorf("task %s (%s) archived: %s", a.ID, a.Type, a.LastErr)
		}
	}
}

// checkExport compares the exported items of a site with the catalog's
// matches of the query: same IDs, no duplicates, same fields.
func checkExport(t *testing.T, rdb redis.UniversalClient, c *testbed.Catalog, siteName, query string) {
	t.Helper()
	var sb strings.Builder
	if _, err := results.Export(context.Background(), rdb, &sb, results.ExportOptions{Site: siteName, Format: results.JSONL}); err != nil {
		t.Fatal(err)
	}
	got := map[string]item.Item{}
	for _, line := range strings.Split(strings.TrimSpace(sb.String()), "\n") {
		var it item.Item
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			t.Fatalf("%s export line %q: %v", siteName, line, err)
		}
		if _, dup := got[it.ID]; dup {
			t.Errorf("%s: item %s exported twice", siteName, it.ID)
		}
		got[it.ID] = it
	}
	want := c.Matches(siteName, query)
	var missing []string
	for _, p := range want {
		it, ok := got[p.ID]
		if !ok {
			missing = append(missing, p.ID)
			continue
		}
		if it.Title != p.Title || it.Price != p.Price || it.Seller != p.Seller {
			t.Errorf("%s item %s: got %q %d %q, catalog %q %d %q", siteName, p.ID, it.Title, it.Price, it.Seller, p.Title, p.Price, p.Seller)
		}
		delete(got, p.ID)
	}
	extra := make([]string, 0, len(got))
	for id := range got {
		extra = append(extra, id)
	}
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("%s %q: %d catalog items missing %v, %d extra %v", siteName, query, len(missing), missing, len(extra), extra)
	}
}
