package tasks_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/detect"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed/sitetest"
)

// hostilePage is a body no site parser should accept.
type hostilePage struct {
	name string
	body []byte
}

// hostilePages builds the bodies: huge, deeply nested, in the wrong
// encoding, compressed, truncated JSON of every site's real samples and
// JSON nested far past any decoder's depth.
func hostilePages(t *testing.T) []hostilePage {
	t.Helper()
	ru := "<html><head><title>Кофе в зёрнах</title></head><body><div data-marker=\"item\">Кофе 1 кг, 1 630 ₽</div></body></html>"
	ps := []hostilePage{
		{"huge 40 MB", bytes.Repeat([]byte("<div class=\"tile\">Кофе</div>\n"), 40<<20/32)},
		{"big 2 MB text", append(append([]byte("<html><body><p>"), bytes.Repeat([]byte("кофе "), 2<<20/9)...), "</p></body></html>"...)},
		{"nested 100k divs", []byte("<html><body>" + strings.Repeat("<div>", 100_000) + "x" + strings.Repeat("</div>", 100_000) + "</body></html>")},
		{"nested 100k unclosed spans", []byte(strings.Repeat("<span><b>", 50_000))},
		{"windows-1251 html", cp1251(ru)},
		{"windows-1251 json", cp1251(`{"data":{"products":[{"id":164419278,"name":"Кофе в зёрнах","salePriceU":163000}]}}`)},
		{"utf-16le with bom", utf16le(ru, true)},
		{"utf-16le without bom", utf16le(ru, false)},
		{"gzip", gzipped(t, []byte(ru))},
		{"json nested 100k arrays", []byte(strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000))},
		{"json nested 100k objects", []byte(strings.Repeat(`{"data":`, 100_000) + "1" + strings.Repeat("}", 100_000))},
		{"json nested 100k unclosed", []byte(`{"data":{"products":` + strings.Repeat(`[{"id":`, 100_000))},
		{"nul bytes", make([]byte, 4096)},
		{"empty", nil},
	}
	for _, s := range []struct{ site, file string }{
		{"wildberries", "wb_card_v4_detail_2025-07.json"},
		{"wildberries", "wb_catalog_v2_legacy_priceU.json"},
		{"ozon", "ozon_searchResultsV2_state_2024-01.json"},
		{"avito", "avito_item_buyerItem_extracted.json"},
	} {
		b := bytes.TrimSpace(sitetest.Sample(t, s.site, s.file))
		for _, cut := range []int{len(b) / 4, len(b) / 2, len(b) - 1} {
			ps = append(ps, hostilePage{fmt.Sprintf("truncated %s at %d of %d", s.file, cut, len(b)), b[:cut]})
		}
	}
	return ps
}

// cp1251 encodes the Cyrillic of s in windows-1251 (other runes as '?'
// unless ASCII), as a misconfigured server would send it.
func cp1251(s string) []byte {
	var b []byte
	for _, r := range s {
		switch {
		case r < 0x80:
			b = append(b, byte(r))
		case r >= 'А' && r <= 'я':
			b = append(b, byte(r-'А'+0xC0))
		case r == 'ё':
			b = append(b, 0xB8)
		default:
			b = append(b, '?')
		}
	}
	return b
}

func utf16le(s string, bom bool) []byte {
	var b []byte
	if bom {
		b = append(b, 0xFF, 0xFE)
	}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHostilePagesParseToErrors: every hostile body gives every site and
// kind a *site.ParseError (never a panic, recovered or not), and the
// built-in ban detection judges it without panicking (bodies up to
// site.MaxBody: a larger one is refused by Parse before any work). Memory is bounded:
// one parse allocates at most a fixed multiple of the body.
func TestHostilePagesParseToErrors(t *testing.T) {
	det := detect.New(detect.Builtin())
	for _, hp := range hostilePages(t) {
		t.Run(hp.name, func(t *testing.T) {
			for _, name := range site.Names() {
				s, err := site.Get(name)
				if err != nil {
					t.Fatal(err)
				}
				for _, kind := range s.KindNames() {
					checkHostile(t, s, kind, hp.body)
					if len(hp.body) <= site.MaxBody {
						_ = det.Judge(name, kind, &detect.Response{Status: 200, FinalURL: "https://example.test/p", Body: hp.body})
					}
				}
			}
		})
	}
}

// maxAllocFactor bounds the bytes one parse may allocate per body byte
// (plus a fixed 64 MiB): far above a real page's cost, far below a leak.
const maxAllocFactor = 40

func checkHostile(t *testing.T, s *site.Site, kind string, body []byte) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	page, err := s.Parse(kind, body, "https://example.test/p?page=1", sitetest.FetchedAt)
	runtime.ReadMemStats(&after)
	var pe *site.ParseError
	switch {
	case err == nil:
		t.Errorf("%s %s: parsed %d items from a hostile page, want an error", s.Name, kind, len(page.Items))
	case !errors.As(err, &pe):
		t.Errorf("%s %s: error %v is %T, want *site.ParseError", s.Name, kind, err, err)
	case strings.Contains(err.Error(), "parser panicked"):
		t.Errorf("%s %s: %v", s.Name, kind, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(maxAllocFactor*len(body)+64<<20) {
		t.Errorf("%s %s: parsing %d bytes allocated %d bytes", s.Name, kind, len(body), alloc)
	}
}

// hostileWorker runs a real worker on the hostile tests' DB until the
// test ends.
func hostileWorker(t *testing.T, rdb *redis.Client) asynq.RedisConnOpt {
	t.Helper()
	opt := asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBHostile}
	w := tasks.NewWorker(tasks.WorkerConfig{Redis: opt, RDB: rdb, ServerID: "hostile-1", Concurrency: 2,
		ShutdownTimeout: time.Second, PollInterval: testPoll})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	return opt
}

// TestBadTasksArchivedAtOnce: a corrupt payload and an unknown task type
// put straight into a queue end archived after one attempt, each with a
// reason naming the problem, although they allow retries.
func TestBadTasksArchivedAtOnce(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBHostile)
	opt := hostileWorker(t, rdb)
	client := asynq.NewClient(opt)
	defer client.Close()
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	tests := []struct {
		name, typ, payload, want string
	}{
		{name: "corrupt payload", typ: "wildberries:search", payload: "{bad", want: "payload"},
		{name: "payload of the wrong shape", typ: "ozon:search", payload: `{"site":"ozon","kind":"search","pages":"two"}`, want: "pages"},
		{name: "unknown type", typ: "nosuch:kind", payload: `{}`, want: "nosuch:kind"},
	}
	ids := map[string]string{}
	for _, tt := range tests {
		info, err := client.Enqueue(asynq.NewTask(tt.typ, []byte(tt.payload)), asynq.Queue("wildberries"), asynq.MaxRetry(5))
		if err != nil {
			t.Fatal(err)
		}
		ids[tt.name] = info.ID
	}
	archived := waitArchived(t, insp, "wildberries", len(tests))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := archived[ids[tt.name]]
			switch {
			case !ok:
				t.Fatalf("task %s not archived", ids[tt.name])
			case a.Retried != 0:
				t.Errorf("retried %d times before archiving (%s), want 0", a.Retried, a.LastErr)
			case !strings.Contains(a.LastErr, tt.want):
				t.Errorf("LastErr %q does not name %q", a.LastErr, tt.want)
			}
		})
	}
}

// waitArchived polls until n tasks of queue are archived (or fails after
// 30 s), and returns them by ID.
func waitArchived(t *testing.T, insp *asynq.Inspector, queue string, n int) map[string]*asynq.TaskInfo {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := insp.ListArchivedTasks(queue)
		if err == nil && len(got) >= n {
			out := map[string]*asynq.TaskInfo{}
			for _, a := range got {
				out[a.ID] = a
			}
			return out
		}
		if time.Now().After(deadline) {
			info, _ := insp.GetQueueInfo(queue)
			t.Fatalf("after 30s %d of %d tasks archived (%v); queue %+v", len(got), n, err, info)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPoolGoneAfterRedisDataLoss: after a Redis restart that lost its data
// (FLUSHDB), Lease says "pool is empty: import proxies", and a job waits in
// the retry set with that reason instead of failing for good.
func TestPoolGoneAfterRedisDataLoss(t *testing.T) {
	ctx := context.Background()
	rdb := testredis.Client(t, testredis.DBHostile)
	b := proxies.NewRedisBroker(rdb, tasks.BrokerConfig(site.Default(), nil))
	ps, err := proxies.ParseReader(strings.NewReader("127.0.0.2:3128\nhttp://u:pw@127.0.0.3:3128\n"), "pool.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Import(ctx, ps, proxies.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := b.Lease(ctx, proxies.LeaseRequest{Site: "wildberries", Class: proxies.Datacenter, Holder: "s1", Task: "t1", TTL: time.Minute})
	if err != nil {
		t.Fatalf("lease before the data loss: %v", err)
	}
	if err := b.Release(ctx, l, proxies.Neutral()); err != nil {
		t.Fatal(err)
	}
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = b.Lease(ctx, proxies.LeaseRequest{Site: "wildberries", Class: proxies.Datacenter, Holder: "s1", Task: "t2", TTL: time.Minute})
	if !errors.Is(err, proxies.ErrPoolEmpty) || !strings.Contains(err.Error(), "pool is empty: import proxies") {
		t.Fatalf("lease after the data loss: err = %v, want ErrPoolEmpty saying \"pool is empty: import proxies\"", err)
	}
	opt := hostileWorker(t, rdb)
	client := asynq.NewClient(opt)
	defer client.Close()
	task, err := tasks.NewTask(site.Default(), tasks.Job{Site: "wildberries", Kind: "search", Request: site.Request{Query: "кофе"}, Pages: 1})
	if err != nil {
		t.Fatal(err)
	}
	info, err := client.Enqueue(task)
	if err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	got := waitRetry(t, insp, info.Queue, info.ID)
	if !strings.Contains(got.LastErr, "pool is empty: import proxies") {
		t.Errorf("retrying job's LastErr = %q, want the empty-pool reason", got.LastErr)
	}
}

// waitRetry polls until the task is in the retry set (or fails after 30 s).
func waitRetry(t *testing.T, insp *asynq.Inspector, queue, id string) *asynq.TaskInfo {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := insp.GetTaskInfo(queue, id)
		if err == nil && info.State == asynq.TaskStateRetry {
			return info
		}
		if err == nil && info.State == asynq.TaskStateArchived {
			t.Fatalf("job archived (%s), want it waiting to retry", info.LastErr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("job not in the retry set after 30s: %+v, %v", info, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
