package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"crawlq/internal/testredis"
)

// TestRunCrawlShortRun runs every phase briefly (P=8, D=200ms, 3s
// windows): the result has the published shape, crawlq got no ban and
// broke no min interval, every phase did work, the DB is left empty, and
// the chart is an SVG with both series.
func TestRunCrawlShortRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rdb := testredis.Client(t, testredis.DBBench)
	target := CrawlTarget{Client: rdb, URL: testredis.URL(t, testredis.DBBench),
		Asynq: asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBBench}}
	res, err := RunCrawl(context.Background(), target, CrawlOptions{Proxies: 8, Workers: 3,
		MinInterval: 200 * time.Millisecond, Duration: 3 * time.Second, RSSDuration: 2 * time.Second,
		WorkerCommand: childCommand})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("crawlq %+v", res.Crawlq)
	t.Logf("naive %+v", res.Naive)
	t.Logf("noop %.0f/s, worker rss %.1f MB", res.NoopTasksPerS, res.WorkerRSSMB)
	checkShape(t, res)
	if res.Crawlq.Bans != 0 || res.Crawlq.I2Violations != 0 || res.Crawlq.BannedIPs != 0 {
		t.Errorf("crawlq: %d bans, %d I2 violations, %d banned IPs; want none", res.Crawlq.Bans, res.Crawlq.I2Violations, res.Crawlq.BannedIPs)
	}
	if res.Crawlq.Pages == 0 || res.Naive.Requests == 0 || res.NoopTasksPerS <= 0 || res.WorkerRSSMB <= 0 {
		t.Errorf("a phase did nothing: crawlq pages %d, naive requests %d, noop %.1f/s, rss %.1f MB",
			res.Crawlq.Pages, res.Naive.Requests, res.NoopTasksPerS, res.WorkerRSSMB)
	}
	for name, ph := range map[string]Phase{"crawlq": res.Crawlq, "naive": res.Naive} {
		if ph.Pages > ph.Jobs {
			t.Errorf("%s: %d pages from %d one-page jobs: another phase's jobs were served", name, ph.Pages, ph.Jobs)
		}
		checkCost(t, name+".cpu_per_page", ph.CPUPerPage)
	}
	checkCost(t, "noop_cpu_per_task", res.NoopCPUPerTask)
	checkCost(t, "noop_enqueue_cpu_per_task", res.NoopEnqueueCPUPerTask)
	if all, enq := res.NoopCPUPerTask, res.NoopEnqueueCPUPerTask; all != nil && enq != nil && all.RedisReads != nil && enq.RedisReads != nil {
		// an enqueue is one round trip, and the task's life holds it and
		// its dequeue and done besides
		if *enq.RedisReads < 0.9 || *all.RedisReads < *enq.RedisReads+1 {
			t.Errorf("no-op reads: %.2f in all, %.2f of them the enqueue; want the enqueue's ~1 inside the whole", *all.RedisReads, *enq.RedisReads)
		}
	}
	if res.RedisPageOfNoop <= 0 {
		t.Errorf("redis_page_of_noop %v, want the page's Redis CPU over the task's", res.RedisPageOfNoop)
	}
	if n := rdb.DBSize(context.Background()).Val(); n != 0 {
		t.Errorf("%d keys left behind", n)
	}
	var svg bytes.Buffer
	if err := WriteChart(&svg, res); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg.String(), "series crawlq", "series naive")
}

// checkCost wants both clocks read (the test Redis is a real one) and
// some CPU spent in each.
func checkCost(t *testing.T, name string, c *CPUCost) {
	t.Helper()
	if c == nil || c.RedisUS == nil || *c.RedisUS <= 0 || c.ProcessUS <= 0 {
		t.Errorf("%s: %+v; want redis_us and process_us above 0", name, c)
	}
}

// checkShape decodes the JSON and looks for every published field.
func checkShape(t *testing.T, res *CrawlResult) {
	t.Helper()
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"proxies", "min_interval_ms", "limit_rps", "noop_tasks_per_s", "worker_rss_mb"} {
		if _, ok := m[k].(float64); !ok {
			t.Errorf("%s: got %v (%T), want a number", k, m[k], m[k])
		}
	}
	phaseKeys := map[string][]string{"crawlq": {"rps", "bans", "ban_rate", "i2_violations"}, "naive": {"rps", "bans", "ban_rate"}}
	for phase, keys := range phaseKeys {
		ph, _ := m[phase].(map[string]any)
		for _, k := range keys {
			if _, ok := ph[k].(float64); !ok {
				t.Errorf("%s.%s: got %v, want a number", phase, k, ph[k])
			}
		}
	}
	if m["proxies"] != 8.0 || m["min_interval_ms"] != 200.0 || m["limit_rps"] != 40.0 {
		t.Errorf("header: proxies %v, min_interval_ms %v, limit_rps %v; want 8, 200, 40", m["proxies"], m["min_interval_ms"], m["limit_rps"])
	}
}

// checkSVG parses doc as XML with an <svg> root and looks for each want.
func checkSVG(t *testing.T, doc string, want ...string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("chart is not valid XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" || strings.Contains(doc, "<script") {
		t.Errorf("chart root %q (want svg), script: %v", root, strings.Contains(doc, "<script"))
	}
	for _, w := range want {
		if !strings.Contains(doc, w) {
			t.Errorf("chart has no %q", w)
		}
	}
}

func TestRunCrawlRefusesNonEmptyDB(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBBench)
	rdb.Set(context.Background(), "someone:else", "1", 0)
	_, err := RunCrawl(context.Background(), CrawlTarget{Client: rdb}, CrawlOptions{})
	if !errors.Is(err, ErrDBNotEmpty) {
		t.Fatalf("got %v, want ErrDBNotEmpty", err)
	}
	if rdb.Exists(context.Background(), "someone:else").Val() != 1 {
		t.Fatal("the refused run touched the DB")
	}
}

func TestDefaultConcurrency(t *testing.T) {
	for _, tc := range []struct {
		name string
		p, k int
		d    time.Duration
		want int
	}{
		{"P50 D500ms K3: limit 100/s needs 4", 50, 3, 500 * time.Millisecond, 4},
		{"P200 D500ms K3: limit 400/s needs 14", 200, 3, 500 * time.Millisecond, 14},
		{"no D: the share of the proxies", 60, 3, 0, 20},
		{"no D: at most 32", 200, 3, 0, 32},
		{"tiny pool: at least 4", 2, 3, time.Second, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DefaultConcurrency(tc.p, tc.k, tc.d); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestRedisCPUSumsUserAndSystem(t *testing.T) {
	d, ok := redisCPU("# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:2.500000\r\nused_cpu_sys_children:9.0\r\n")
	if !ok || d != 3750*time.Millisecond {
		t.Fatalf("redisCPU = %v, %v; want 3.75s, true", d, ok)
	}
	if _, ok := redisCPU("# CPU\r\nused_cpu_sys:1.0\r\n"); ok {
		t.Fatal("an answer without used_cpu_user is not a reading")
	}
}

// TestRunCrawlBrokerOnItsOwnRedis: with a broker Redis (here the Sentinel
// group's master, another server), the pool and its scripts run there:
// every page costs that Redis at least its lease's round trip, reported
// apart from the queue's Redis, and both are left empty.
func TestRunCrawlBrokerOnItsOwnRedis(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBBench)
	g, brdb := testredis.SentinelClient(t, testredis.DBBench)
	target := CrawlTarget{Client: rdb, URL: testredis.URL(t, testredis.DBBench),
		Asynq:  asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBBench},
		Broker: brdb, BrokerURL: g.URL(testredis.DBBench),
		NewBrokerClient: func() redis.UniversalClient {
			_, c := testredis.SentinelClient(t, testredis.DBBench)
			return c
		}}
	res, err := RunCrawl(context.Background(), target, CrawlOptions{Proxies: 8, Workers: 2,
		MinInterval: 200 * time.Millisecond, Duration: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Crawlq.Pages == 0 || res.Crawlq.Bans != 0 || res.Crawlq.I2Violations != 0 {
		t.Fatalf("crawlq: %d pages, %d bans, %d I2 violations; want pages and no ban", res.Crawlq.Pages, res.Crawlq.Bans, res.Crawlq.I2Violations)
	}
	b := res.Crawlq.BrokerCPUPerPage
	if b == nil || b.RedisReads == nil || *b.RedisReads < 1 {
		t.Errorf("broker Redis per page %+v: want at least the lease's round trip there", b)
	}
	for name, c := range map[string]redis.UniversalClient{"queue": rdb, "broker": brdb} {
		if n := c.DBSize(context.Background()).Val(); n != 0 {
			t.Errorf("%s Redis: %d keys left behind", name, n)
		}
	}
}
