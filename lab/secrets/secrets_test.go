package secrets_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/results"
	"crawlq/tasks"
	_ "crawlq/tasks/avito"
	_ "crawlq/tasks/ozon"
	"crawlq/tasks/site"
	_ "crawlq/tasks/wildberries"
	"crawlq/testbed"
	"crawlq/web"
)

// The planted secrets, masktest's. The farm's own passwords ("pass<i>-<seed>") are
// planted too: farmSeed makes them distinctive.
const (
	redisPassword = masktest.RedisPassword
	proxyPassword = masktest.ProxyPassword
	farmSeed      = 24263
)

// proxiesKey is the broker's proxy spec hash (default pool): it must hold
// the credentials, since workers dial with them. It is the one value not
// searched, and the test checks it does hold them.
const proxiesKey = "crawlq:{pool}:proxies"

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startRedis runs a redis-server with requirepass on a free loopback
// port in a temp dir, stopped when the test ends.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("the secrets test needs redis-server in PATH: %v", err)
	}
	port, err := testredis.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--requirepass", redisPassword,
		"--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	c := redis.NewClient(&redis.Options{Addr: addr, Password: redisPassword})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); c.Ping(context.Background()).Err() != nil; {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s does not answer", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return addr
}

// cluster is the crawl under test.
type cluster struct {
	addr   string
	rdb    *redis.Client
	opt    asynq.RedisClientOpt
	tb     *testbed.Testbed
	reg    *site.Registry
	broker *proxies.RedisBroker
	logs   *syncBuffer
	log    *zap.Logger
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{addr: startRedis(t), logs: &syncBuffer{}}
	c.opt = asynq.RedisClientOpt{Addr: c.addr, Password: redisPassword}
	c.rdb = redis.NewClient(&redis.Options{Addr: c.addr, Password: redisPassword})
	t.Cleanup(func() { _ = c.rdb.Close() })
	c.log = zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewDevelopmentEncoderConfig()),
		zapcore.AddSync(c.logs), zapcore.DebugLevel))
	tb, err := testbed.Start(context.Background(), testbed.Config{Proxies: 6, Seed: farmSeed, Farm: testbed.FarmConfig{Auth: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	c.tb = tb
	c.reg = testbedRegistry(t, tb)
	c.broker = proxies.NewRedisBroker(c.rdb, tasks.BrokerConfig(c.reg, c.log))
	return c
}

// testbedRegistry points every site at the testbed, datacenter proxies.
func testbedRegistry(t *testing.T, tb *testbed.Testbed) *site.Registry {
	t.Helper()
	cfg := site.Config{Sites: map[string]site.SiteConfig{}}
	for name, u := range tb.Sites() {
		cfg.Sites[name] = site.SiteConfig{BaseURL: u, Class: string(proxies.Datacenter)}
	}
	reg := site.Default().Clone()
	if err := reg.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	return reg
}

// importPool imports the farm (with its passwords) and one planted proxy
// whose port is closed, so its failure path is exercised too.
func (c *cluster) importPool(t *testing.T) {
	t.Helper()
	ps, err := proxies.ParseFile(c.tb.ProxiesFile)
	if err != nil {
		t.Fatal(err)
	}
	port, err := testredis.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dead, err := proxies.ParseLine(fmt.Sprintf("http://planted:%s@127.0.0.250:%d", proxyPassword, port))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.broker.Import(context.Background(), append(ps, dead), proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		t.Fatal(err)
	}
}

// secrets are every password planted: Redis, the planted proxy, the farm.
func (c *cluster) secrets() []string {
	s := []string{redisPassword, proxyPassword}
	for _, p := range c.tb.Farm.Proxies() {
		s = append(s, p.Password)
	}
	return s
}

// TestNoSecretAnywhere runs a crawl of the three sites (searches that
// follow their products, plus a corrupt task) through a real worker on a
// password-protected Redis with farm proxies that need passwords, then
// searches every place a password could leak to.
func TestNoSecretAnywhere(t *testing.T) {
	c := newCluster(t)
	c.importPool(t)
	if err := redis.NewClient(&redis.Options{Addr: c.addr}).Ping(context.Background()).Err(); err == nil {
		t.Fatal("Redis answers without the password: requirepass is not in force")
	}
	stop := c.runWorker(t)
	c.enqueueJobs(t)
	insp := asynq.NewInspector(c.opt)
	defer insp.Close()
	waitIdle(t, insp, tasks.DefaultQueues(c.reg), 2*time.Minute)
	stop()
	c.checkCrawled(t, insp)
	places := map[string]string{"logs": c.logs.String()}
	for k, v := range c.taskTexts(t, insp) {
		places[k] = v
	}
	for k, v := range c.redisTexts(t) {
		places[k] = v
	}
	for k, v := range c.webTexts(t) {
		places[k] = v
	}
	places["crawlq status --json"] = c.statusJSON(t, insp)
	for place, text := range places {
		for _, s := range c.secrets() {
			if strings.Contains(text, s) {
				t.Errorf("%s contains the password %q", place, s)
			}
		}
	}
	t.Logf("searched %d places for %d passwords", len(places), len(c.secrets()))
}

// runWorker starts a worker with a debug logger into c.logs; the returned
// func stops it and waits.
func (c *cluster) runWorker(t *testing.T) func() {
	t.Helper()
	w := tasks.NewWorker(tasks.WorkerConfig{Redis: c.opt, RDB: c.rdb, ServerID: "secrets-1", Concurrency: 6,
		Sites: c.reg, Broker: c.broker, BrokerOnRDB: true, LeaseTTL: 10 * time.Second, ShutdownTimeout: 2 * time.Second, Logger: c.log})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// enqueueJobs enqueues a search with follow on every site (a query with
// two to four matches) and a task with a corrupt payload.
func (c *cluster) enqueueJobs(t *testing.T) {
	t.Helper()
	client := asynq.NewClient(c.opt)
	defer client.Close()
	for _, name := range testbed.SiteNames {
		q := smallQuery(t, c.tb.Catalog, name)
		task, err := tasks.NewTask(c.reg, tasks.Job{Site: name, Kind: "search", Request: site.Request{Query: q, Location: "moskva"}, Follow: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Enqueue(task); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.Enqueue(asynq.NewTask("ozon:search", []byte("{bad")), asynq.Queue("ozon"), asynq.Retention(time.Hour)); err != nil {
		t.Fatal(err)
	}
}

// smallQuery is the title word (of four letters or more) with the fewest
// matches on the site, at least two when there is one, so the crawl
// follows a few products without crawling the catalog.
func smallQuery(t *testing.T, cat *testbed.Catalog, name string) string {
	t.Helper()
	best, bestN := "", 0
	for _, p := range cat.Products(name)[:min(200, len(cat.Products(name)))] {
		for _, w := range strings.Fields(strings.ToLower(p.Title)) {
			n := len(cat.Matches(name, w))
			if len([]rune(w)) >= 4 && n >= 2 && (bestN == 0 || n < bestN) {
				best, bestN = w, n
			}
		}
	}
	if best == "" {
		t.Fatalf("no query with two or more matches on %s", name)
	}
	t.Logf("%s: query %q, %d matches", name, best, bestN)
	return best
}

// waitIdle polls the queues until nothing is pending, active, scheduled
// or retrying.
func waitIdle(t *testing.T, insp *asynq.Inspector, queues map[string]int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		busy := 0
		for q := range queues {
			if info, err := insp.GetQueueInfo(q); err == nil {
				busy += info.Pending + info.Active + info.Scheduled + info.Retry
			}
		}
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queues still busy after %s", limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkCrawled makes the search meaningful: every site's jobs completed
// and stored items, and the planted dead proxy sits in the broker's hash.
func (c *cluster) checkCrawled(t *testing.T, insp *asynq.Inspector) {
	t.Helper()
	ctx := context.Background()
	for _, name := range testbed.SiteNames {
		done, err := insp.ListCompletedTasks(name, asynq.PageSize(1000))
		if err != nil || len(done) < 2 {
			t.Errorf("%s: %d completed tasks (%v), want the search and its products", name, len(done), err)
		}
	}
	n, err := c.rdb.XLen(ctx, results.StreamKey).Result()
	if err != nil || n == 0 {
		t.Fatalf("results stream has %d items (%v): the crawl stored nothing", n, err)
	}
	specs, err := c.rdb.HGetAll(ctx, proxiesKey).Result()
	if err != nil || !strings.Contains(fmt.Sprint(specs), proxyPassword) {
		t.Fatalf("%s does not hold the planted proxy (%v): the excluded key is not the spec hash", proxiesKey, err)
	}
}

// taskTexts dumps every task of every queue in every state: payload,
// result, last error and the whole TaskInfo.
func (c *cluster) taskTexts(t *testing.T, insp *asynq.Inspector) map[string]string {
	t.Helper()
	queues, err := insp.Queues()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, q := range queues {
		lists := map[string]func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){
			"pending": insp.ListPendingTasks, "active": insp.ListActiveTasks, "scheduled": insp.ListScheduledTasks,
			"retry": insp.ListRetryTasks, "archived": insp.ListArchivedTasks, "completed": insp.ListCompletedTasks,
		}
		for state, list := range lists {
			infos, err := list(q, asynq.PageSize(1000))
			if err != nil {
				t.Fatalf("list %s %s: %v", q, state, err)
			}
			var b strings.Builder
			for _, ti := range infos {
				fmt.Fprintf(&b, "%s\n%s\n%s\n%+v\n", ti.Payload, ti.Result, ti.LastErr, *ti)
			}
			out["tasks "+q+" "+state] = b.String()
		}
	}
	return out
}

// redisTexts dumps every key's value but the proxy spec hash.
func (c *cluster) redisTexts(t *testing.T) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := c.rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		if k == proxiesKey {
			continue
		}
		out["redis key "+k] = k + "\n" + dumpKey(t, c.rdb, k)
	}
	return out
}

func dumpKey(t *testing.T, rdb *redis.Client, k string) string {
	t.Helper()
	ctx := context.Background()
	typ, err := rdb.Type(ctx, k).Result()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	switch typ {
	case "string":
		v, err = rdb.Get(ctx, k).Result()
	case "hash":
		v, err = rdb.HGetAll(ctx, k).Result()
	case "list":
		v, err = rdb.LRange(ctx, k, 0, -1).Result()
	case "set":
		v, err = rdb.SMembers(ctx, k).Result()
	case "zset":
		v, err = rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
	case "stream":
		v, err = rdb.XRange(ctx, k, "-", "+").Result()
	case "none":
		return "" // expired meanwhile
	default:
		t.Fatalf("key %s of unexpected type %s", k, typ)
	}
	if err != nil && err != redis.Nil {
		t.Fatalf("read %s %s: %v", typ, k, err)
	}
	return fmt.Sprint(v)
}

// webTexts fetches every dashboard page and API answer.
func (c *cluster) webTexts(t *testing.T) map[string]string {
	t.Helper()
	s, err := web.NewServer(web.Config{Redis: c.opt, Broker: c.broker, Logger: c.log})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s)
	defer hs.Close()
	paths := []string{"/", "/api/pool", "/metrics", "/monitoring/", "/monitoring/api/queues",
		"/monitoring/api/servers", "/monitoring/api/redis_info", "/monitoring/api/queue_stats"}
	for _, q := range []string{"wildberries", "ozon", "avito"} {
		for _, state := range []string{"pending", "active", "scheduled", "retry", "archived", "completed"} {
			paths = append(paths, "/monitoring/api/queues/"+q+"/"+state+"_tasks")
		}
	}
	out := map[string]string{}
	for _, p := range paths {
		resp, err := http.Get(hs.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %v", p, resp.StatusCode, err)
		}
		out["web "+p] = string(b)
	}
	if !strings.Contains(out["web /api/pool"], "planted:***@127.0.0.250") {
		t.Errorf("/api/pool does not show the planted proxy masked: the page search proves nothing\n%s", out["web /api/pool"])
	}
	return out
}

// statusJSON is what `crawlq status --json` prints.
func (c *cluster) statusJSON(t *testing.T, insp *asynq.Inspector) string {
	t.Helper()
	st, err := web.Collect(context.Background(), insp, c.broker)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
