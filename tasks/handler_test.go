package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"

	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/results"
	"crawlq/sessions"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

func asynqOpt(t *testing.T) asynq.RedisClientOpt {
	return asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBTasks}
}

// runWorker runs an in-process worker on the testbed until the test ends.
func runWorker(t *testing.T, tb *testbed.Testbed, reg *site.Registry) {
	t.Helper()
	rdb := testredis.NewClient(t, testredis.DBTasks)
	serve(t, tasks.WorkerConfig{Redis: asynqOpt(t), RDB: rdb, ServerID: "test-worker",
		Concurrency: 4, Sites: reg, ShutdownTimeout: time.Second})
}

// testPoll is the test workers' poll interval (WorkerConfig.PollInterval,
// the demo's): a job queued to an idle worker starts within a tenth of a
// second, and a retry is due again within a second (SideInterval), where
// the default's two and ten seconds were waited for in every test.
const testPoll = 100 * time.Millisecond

// serve runs a worker of cfg until the test ends, polling every testPoll
// unless cfg says otherwise.
func serve(t *testing.T, cfg tasks.WorkerConfig) {
	t.Helper()
	if cfg.PollInterval == 0 {
		cfg.PollInterval = testPoll
	}
	runUntilEnd(t, tasks.NewWorker(cfg))
}

// runUntilEnd runs w until the test ends.
func runUntilEnd(t *testing.T, w *tasks.Worker) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
}

// runProduct queues a one-page job of the i-th Wildberries product of the
// testbed and waits until it is completed; it returns the task ID.
func runProduct(t *testing.T, tb *testbed.Testbed, reg *site.Registry, i int) string {
	t.Helper()
	c := asynq.NewClient(asynqOpt(t))
	defer c.Close()
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	p := tb.Catalog.Products(testbed.SiteWildberries)[i]
	task, err := tasks.NewTask(reg, tasks.Job{Site: testbed.SiteWildberries, Kind: "product",
		Request: site.Request{URL: tb.SiteURL(testbed.SiteWildberries) + p.URL}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Enqueue(task)
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, insp, info.Queue, info.ID, asynq.TaskStateCompleted)
	return info.ID
}

// waitTask polls a task until it reaches state (a real condition, with a deadline).
func waitTask(t *testing.T, insp *asynq.Inspector, queue, id string, state asynq.TaskState) *asynq.TaskInfo {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		info, err := insp.GetTaskInfo(queue, id)
		if err == nil && info.State == state {
			return info
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("task %s/%s never reached %v", queue, id, state)
	return nil
}

// TestInvalidPayloadIsArchivedAtOnce: a payload that fails validation in
// the worker is archived after one attempt with the reason, not retried.
func TestInvalidPayloadIsArchivedAtOnce(t *testing.T) {
	_, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2})
	runWorker(t, tb, reg)
	c := asynq.NewClient(asynqOpt(t))
	defer c.Close()
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	tests := []struct{ name, payload, reason string }{
		{name: "empty query", payload: `{"site":"wildberries","kind":"search","query":"  "}`, reason: "query"},
		{name: "not json", payload: `{"site":`, reason: "payload"},
		{name: "unknown field", payload: `{"site":"ozon","kind":"product","id":"1","evil":true}`, reason: "evil"},
		{name: "type and payload differ", payload: `{"site":"ozon","kind":"product","id":"1"}`, reason: "does not match"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := c.Enqueue(asynq.NewTask("wildberries:searchX", []byte(tc.payload)), asynq.Queue("wildberries"), asynq.MaxRetry(5))
			if err != nil {
				t.Fatal(err)
			}
			got := waitTask(t, insp, "wildberries", info.ID, asynq.TaskStateArchived)
			if got.Retried != 0 || !strings.Contains(got.LastErr, tc.reason) {
				t.Errorf("archived after %d retries with %q; want 0 retries and a reason naming %q", got.Retried, got.LastErr, tc.reason)
			}
		})
	}
}

// TestDuplicateEnqueueIsRefusedAndCounted: the same job twice is queued once.
func TestDuplicateEnqueueIsRefusedAndCounted(t *testing.T) {
	testredis.Client(t, testredis.DBTasks)
	c := asynq.NewClient(asynqOpt(t))
	defer c.Close()
	e := &tasks.Enqueuer{Client: c, Sites: site.Default()}
	job := tasks.Job{Site: "wildberries", Kind: "search", Request: site.Request{Query: "кроссовки"}, Pages: 2}
	same := job
	same.Query = "  кроссовки "
	ts, err := e.Build([]tasks.Job{job, same}, func(i int) string { return "job" })
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Enqueue(context.Background(), ts)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Enqueued) != 1 || len(b.Duplicates) != 1 || b.Enqueued[0].ID != b.Duplicates[0].ID {
		t.Fatalf("batch %+v: want one enqueued and the same job counted as a duplicate", b)
	}
}

// TestBuildRefusesWholeBatch: one bad job and nothing is built.
func TestBuildRefusesWholeBatch(t *testing.T) {
	tests := []struct {
		name string
		job  tasks.Job
		want string
	}{
		{name: "unknown site", job: tasks.Job{Site: "ebay", Kind: "search", Request: site.Request{Query: "x"}}, want: `site: "ebay" is not a known site`},
		{name: "unknown kind", job: tasks.Job{Site: "ozon", Kind: "reviews"}, want: `kind: "reviews" is not a kind of ozon`},
		{name: "empty query", job: tasks.Job{Site: "avito", Kind: "search"}, want: "query"},
		{name: "pages out of range", job: tasks.Job{Site: "ozon", Kind: "search", Request: site.Request{Query: "x"}, Pages: 1000}, want: "pages: 1000 is out of range"},
		{name: "bad class", job: tasks.Job{Site: "ozon", Kind: "product", Request: site.Request{ID: "1"}, Class: "satellite"}, want: `class: "satellite"`},
		{name: "fetch without fields", job: tasks.Job{Kind: tasks.KindFetch, Fetch: &tasks.PageSpec{URL: "https://example.com/"}}, want: "fetch.fields"},
		{name: "fetch bad selector", job: tasks.Job{Kind: tasks.KindFetch, Fetch: &tasks.PageSpec{URL: "https://example.com/", Fields: map[string]string{"title": "h1[[["}}}, want: "fetch.fields.title"},
	}
	good := tasks.Job{Site: "wildberries", Kind: "product", Request: site.Request{ID: "12345"}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &tasks.Enqueuer{Sites: site.Default()}
			ts, err := e.Build([]tasks.Job{good, tc.job}, func(i int) string { return "jobs.jsonl:" + string(rune('1'+i)) })
			if err == nil || ts != nil || !errors.Is(err, tasks.ErrBadJob) || !strings.Contains(err.Error(), tc.want) ||
				!strings.HasPrefix(err.Error(), "jobs.jsonl:2: ") {
				t.Fatalf("Build = %d tasks, %v; want no tasks and an error at jobs.jsonl:2 naming %q", len(ts), err, tc.want)
			}
		})
	}
}

// TestNormalizeIsStable: a job as stored in a task normalizes to itself,
// so the worker reads exactly what the enqueuer validated.
func TestNormalizeIsStable(t *testing.T) {
	jobs := []tasks.Job{
		{Site: "wildberries", Kind: "search", Request: site.Request{Query: " кофе  "}, Pages: 3, Follow: true},
		{Site: "wildberries", Kind: "product", Request: site.Request{URL: "https://www.wildberries.ru/catalog/164419278/detail.aspx"}},
		{Site: "ozon", Kind: "product", Request: site.Request{URL: "https://www.ozon.ru/product/korm-dlya-koshek-747122168/?from=x"}},
		{Site: "avito", Kind: "search", Request: site.Request{Query: "iphone 15", Location: "moskva"}},
		{Site: "avito", Kind: "item", Request: site.Request{URL: "https://www.avito.ru/krasnodar/kvartiry/kvartira-studiya_24_m_1016_et._3889452914"}},
		{Kind: tasks.KindFetch, Fetch: &tasks.PageSpec{URL: "https://example.com/list", Item: ".card", Fields: map[string]string{"title": "h2"}}},
	}
	for _, j := range jobs {
		task, err := tasks.NewTask(site.Default(), j)
		if err != nil {
			t.Fatalf("%+v: %v", j, err)
		}
		stored, err := tasks.DecodeJob(task.Payload())
		if err != nil {
			t.Fatal(err)
		}
		again, err := stored.Normalize(site.Default())
		if err != nil {
			t.Fatalf("stored job %+v does not validate again: %v", stored, err)
		}
		if diff := cmp.Diff(stored, again); diff != "" {
			t.Errorf("normalize is not stable for %s (-stored +again):\n%s", task.Type(), diff)
		}
	}
}

// TestRetryDelay: a RetryError's delay wins, then the delay an error
// names itself (a session ended before its request); other errors back
// off with a cap.
func TestRetryDelay(t *testing.T) {
	if d := tasks.RetryDelay(3, &tasks.RetryError{After: 42 * time.Second, Err: errors.New("429")}, nil); d != 42*time.Second {
		t.Errorf("rate-limited retry in %s, want its Retry-After 42s", d)
	}
	ended := fmt.Errorf("page 2: %w", &sessions.EndedError{Err: sessions.ErrModemRotating})
	if d := tasks.RetryDelay(5, ended, nil); d != time.Second {
		t.Errorf("a session ended for its modem's rotation: retry in %s, want 1s", d)
	}
	for n := 0; n < 20; n++ {
		if d := tasks.RetryDelay(n, errors.New("boom"), nil); d <= 0 || d > tasks.MaxBackoff {
			t.Errorf("attempt %d: backoff %s outside (0, %s]", n, d, tasks.MaxBackoff)
		}
	}
}

// TestPanicBecomesError: a handler that panics returns an error instead of
// killing the worker.
func TestPanicBecomesError(t *testing.T) {
	h := tasks.NewHandler(tasks.HandlerConfig{Sites: site.Default()}) // no sink: Progress panics on nil
	task, err := tasks.NewTask(site.Default(), tasks.Job{Site: "wildberries", Kind: "product", Request: site.Request{ID: "12345"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ProcessTask(context.Background(), task); err == nil || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("ProcessTask = %v, want an error saying the handler panicked", err)
	}
}

// TestPageFetchJob: a generic page job with user selectors crawls a page
// crawlq has no parser for (the testbed's Avito SERP read as a plain page).
func TestPageFetchJob(t *testing.T) {
	ctx := context.Background()
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 5})
	runWorker(t, tb, reg)
	c := asynq.NewClient(asynqOpt(t))
	defer c.Close()
	spec := tasks.PageSpec{URL: tb.SiteURL(testbed.SiteAvito) + "/rossiya?q=&p=1", Item: `div[data-marker="item"]`,
		Expect: []string{`div[data-marker="item"]`},
		Fields: map[string]string{"id": "@data-item-id", "title": `[itemprop="name"]`, "price": `meta[itemprop="price"]@content`}}
	task, err := tasks.NewPageFetchTask(spec)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Enqueue(task)
	if err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	waitTask(t, insp, tasks.PageQueue, info.ID, asynq.TaskStateCompleted)
	items, err := results.Read(ctx, rdb, "")
	if err != nil {
		t.Fatal(err)
	}
	want := tb.Catalog.Search(testbed.SiteAvito, "", 1)
	if len(items) != len(want) {
		t.Fatalf("got %d items, want %d", len(items), len(want))
	}
	for i, p := range want {
		if items[i].ID != p.ID || items[i].Title != p.Title || items[i].Price != p.Price || items[i].Site != "127.0.0.1" {
			t.Errorf("item %d: %+v, want id %s %q %d on site 127.0.0.1", i, items[i], p.ID, p.Title, p.Price)
		}
	}
}

// TestFinishedJobFeedsProxyLatency: the release that ends a job carries the
// latency of its last response, so the proxy's latency average (dashboard,
// metrics) is not pulled to zero by every finished job.
func TestFinishedJobFeedsProxyLatency(t *testing.T) {
	ctx := context.Background()
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 1, Seed: 9})
	runWorker(t, tb, reg)
	runProduct(t, tb, reg, 0)
	st, err := proxies.NewRedisBroker(rdb, tasks.BrokerConfig(reg, nil)).Stats(ctx)
	if err != nil || len(st.Proxies) != 1 {
		t.Fatalf("stats: %v, %d proxies", err, len(st.Proxies))
	}
	if s := st.Proxies[0].Sites[testbed.SiteWildberries]; s.OK != 1 || s.EWMALatency <= 0 {
		t.Errorf("after one finished job: ok %d, latency average %s; want 1 and above 0", s.OK, s.EWMALatency)
	}
}

// TestSameJobRunsAgainOnceItsTaskIsGone: a job crawled, then queued again
// after Asynq dropped the finished task (its retention ended), is crawled
// again: the earlier run's progress does not make the new run a no-op (a
// product watched every day is observed every day).
func TestSameJobRunsAgainOnceItsTaskIsGone(t *testing.T) {
	ctx := context.Background()
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 11})
	runWorker(t, tb, reg)
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	id := runProduct(t, tb, reg, 0)
	if err := insp.DeleteTask(testbed.SiteWildberries, id); err != nil { // what the end of its retention does
		t.Fatal(err)
	}
	if again := runProduct(t, tb, reg, 0); again != id {
		t.Fatalf("task ID %s, then %s: want the same job", id, again)
	}
	msgs, err := rdb.XRange(ctx, results.StreamKey, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, m := range msgs {
		if m.Values["task"] == id {
			seen++
		}
	}
	if seen != 2 {
		t.Errorf("%d items of %s in the stream after two runs, want 2 (one a run)", seen, id)
	}
}
