package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/testredis"
	"crawlq/lab/poolseed"
	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/tasks/site"
	_ "crawlq/tasks/wildberries"
)

// seeded is a pool of n proxies under its own key space, driven through
// the broker on the three sites.
func seeded(t *testing.T, ctx context.Context, rdb *redis.Client, pool string, n, cycles int) *proxies.RedisBroker {
	t.Helper()
	// Hour-long intervals and quarantines: nothing changes state by itself
	// while the test watches the page.
	still := proxies.SiteConfig{MinInterval: time.Hour, QuarantineBase: 2 * time.Hour, QuarantineCap: 2 * time.Hour,
		QuarantineFloor: time.Hour, FailPenalty: time.Hour, FailPenaltyCap: time.Hour}
	b := proxies.NewRedisBroker(rdb, proxies.Config{Pool: pool, Default: still})
	if err := poolseed.Seed(ctx, b, b, poolseed.Options{Proxies: n, Cycles: cycles}); err != nil {
		t.Fatalf("seed %d proxies: %v", n, err)
	}
	return b
}

// serveFresh serves cfg on loopback after the first full read of the pool
// is done, and returns the server and its base URL.
func serveFresh(t *testing.T, ctx context.Context, cfg Config) (*Server, string) {
	t.Helper()
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.views.refresh(ctx); err != nil {
		t.Fatalf("first read of the pool: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(sctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, "http://" + l.Addr().String()
}

// seriesCount counts the samples of one /metrics scrape.
func seriesCount(t *testing.T, base string) int {
	t.Helper()
	code, body := get(t, http.MethodGet, base+"/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	n := 0
	for _, l := range strings.Split(body, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			n++
		}
	}
	return n
}

// TestDashboardAtHundredThousandProxies: /metrics has the same number of
// series at 1,000 and 100,000 proxies, and in Chromium the pool page of
// 100,000 proxies renders, filters by state, pages, and changes its
// numbers in place while a worker runs, without navigating.
func TestDashboardAtHundredThousandProxies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	opt := *testredis.Client(t, testredis.DBWeb).Options() // flushes the DB once
	opt.ReadTimeout = time.Minute                          // a 100,000-proxy import is one script
	rdb := redis.NewClient(&opt)
	defer rdb.Close()
	small := seeded(t, ctx, rdb, "small", 1000, 1000)
	big := seeded(t, ctx, rdb, "big", 100000, 3000)
	aopt := asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBWeb}
	_, smallURL := serveFresh(t, ctx, Config{Redis: aopt, Broker: small, Refresh: time.Hour})
	_, bigURL := serveFresh(t, ctx, Config{Redis: aopt, Broker: big, Refresh: time.Second})

	t.Run("metrics series flat in the pool size", func(t *testing.T) {
		n1, n100 := seriesCount(t, smallURL), seriesCount(t, bigURL)
		if n1 != n100 || n100 > 1000 {
			t.Errorf("/metrics series: %d at 1,000 proxies, %d at 100,000; want the same, at most 1,000", n1, n100)
		}
		t.Logf("/metrics: %d series at 1,000 and at 100,000 proxies", n100)
	})
	t.Run("browser", func(t *testing.T) { browseBigPool(t, ctx, bigURL, big) })
}

func browseBigPool(t *testing.T, ctx context.Context, base string, b *proxies.RedisBroker) {
	bctx := newBrowser(t, chromiumPath(t))
	bctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/?state=quarantined"), chromedp.WaitVisible(chromedp.CSS("#proxies"))); err != nil {
		t.Fatalf("load pool page: %v", err)
	}
	states, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#proxies tr.proxy-row [data-f=state]')].map(td => td.textContent)`))
	if err != nil || len(states) != PageSize {
		t.Fatalf("quarantined page: %d rows (%v), want %d", len(states), err, PageSize)
	}
	for _, s := range states {
		if s != proxies.StateQuarantined {
			t.Fatalf("filtered by quarantined, a row is %q", s)
		}
	}
	first := rowIDs(t, bctx)
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#next")), chromedp.WaitVisible(chromedp.CSS("#prev"))); err != nil {
		t.Fatalf("next page: %v", err)
	}
	info, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById('page-info').textContent`))
	if second := rowIDs(t, bctx); !strings.HasPrefix(info, "page 2 of ") || second == first {
		t.Fatalf("after next: %q, rows %v (page 1 %v)", info, second, first)
	}
	liveUpdate(t, ctx, bctx, b)
}

func rowIDs(t *testing.T, ctx context.Context) string {
	t.Helper()
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('#proxies tr.proxy-row')].map(tr => tr.dataset.id + '/' + tr.dataset.site).join(' ')`))
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// liveUpdate runs a real worker on the big pool (wildberries pointed at a
// closed loopback port; the seeded proxies are loopback addresses nobody
// listens on, so every attempt is a proxy failure the broker records) and
// waits for the page's wildberries counts to change, on the same document.
func liveUpdate(t *testing.T, ctx, bctx context.Context, b *proxies.RedisBroker) {
	const cells = `[...document.querySelectorAll('[data-k^="pool/wildberries/"]')].map(td => td.textContent).join(' ')`
	before, err := chromedp.Run(bctx, chromedp.Evaluate[string](`window.__sameDocument = true; `+cells))
	if err != nil {
		t.Fatal(err)
	}
	stop := runWorker(t, ctx, b)
	defer stop()
	changed, err := chromedp.Run(bctx, chromedp.Poll[bool](cells+` !== `+fmt.Sprintf("%q", before)+` && window.__sameDocument === true`,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil || !changed {
		after, _ := chromedp.Run(bctx, chromedp.Evaluate[string](cells))
		t.Fatalf("wildberries counts did not change in place: before %s, now %s (%v)", before, after, err)
	}
}

// runWorker starts a crawlq worker on b serving the wildberries queue with
// a few search jobs queued, and returns its stop function.
func runWorker(t *testing.T, ctx context.Context, b *proxies.RedisBroker) func() {
	t.Helper()
	reg := site.Default().Clone()
	if err := reg.Apply(site.Config{Sites: map[string]site.SiteConfig{"wildberries": {BaseURL: "http://127.0.0.1:9", Class: string(proxies.Datacenter)}}}); err != nil {
		t.Fatal(err)
	}
	aopt := asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBWeb}
	cl := asynq.NewClient(aopt)
	defer cl.Close()
	for i := range 20 {
		task, err := tasks.NewTask(reg, tasks.Job{Site: "wildberries", Kind: "search", Request: site.Request{Query: fmt.Sprint("q", i)}, Pages: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Enqueue(task, asynq.Queue("wildberries")); err != nil {
			t.Fatal(err)
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: testredis.Addr(t), DB: testredis.DBWeb})
	w := tasks.NewWorker(tasks.WorkerConfig{Redis: aopt, RDB: rdb, Broker: b, BrokerOnRDB: true, ServerID: "scale-worker",
		Concurrency: 4, Queues: map[string]int{"wildberries": 1}, Sites: reg, ShutdownTimeout: time.Second})
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
		rdb.Close()
	}
}
