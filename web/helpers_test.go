package web

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/proxies"
)

// plantedPassword is the proxy password no response may ever contain.
const plantedPassword = masktest.ProxyPassword

// cluster is a seeded Redis: queues with tasks and an imported pool.
type cluster struct {
	rdb    *redis.Client
	opt    asynq.RedisClientOpt
	broker proxies.Broker
}

// seeded queue contents: pending tasks per queue, and what else was done.
var seedPending = map[string]int{"wildberries": 3, "ozon": 2, "avito": 2}

// newCluster flushes the web test DB and seeds queues and pool.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	rdb := testredis.Client(t, testredis.DBWeb)
	opt := asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBWeb}
	c := &cluster{rdb: rdb, opt: opt}
	c.seedQueues(t)
	c.broker = seedPool(t, rdb)
	return c
}

// seedQueues enqueues pending tasks on the three site queues, one scheduled
// task on wildberries and archives one avito task.
func (c *cluster) seedQueues(t *testing.T) {
	t.Helper()
	cl := asynq.NewClient(c.opt)
	defer cl.Close()
	for q, n := range seedPending {
		for i := 0; i < n; i++ {
			task := asynq.NewTask(q+":search", []byte(`{"query":"q"}`))
			if _, err := cl.Enqueue(task, asynq.Queue(q)); err != nil {
				t.Fatalf("enqueue %s: %v", q, err)
			}
		}
	}
	if _, err := cl.Enqueue(asynq.NewTask("wildberries:product", nil), asynq.Queue("wildberries"), asynq.ProcessIn(time.Hour)); err != nil {
		t.Fatalf("enqueue scheduled: %v", err)
	}
	insp := asynq.NewInspector(c.opt)
	defer insp.Close()
	pending, err := insp.ListPendingTasks("avito")
	if err != nil || len(pending) == 0 {
		t.Fatalf("list avito pending: %v (%d)", err, len(pending))
	}
	if err := insp.ArchiveTask("avito", pending[0].ID); err != nil {
		t.Fatalf("archive: %v", err)
	}
}

// startServer serves a dashboard for cfg on a free loopback port and returns
// its base URL; the server stops and is closed after the test.
func startServer(t *testing.T, cfg Config) string {
	t.Helper()
	return fmt.Sprintf("http://127.0.0.1:%d", serveOn(t, cfg, "127.0.0.1:0"))
}

// startHandler serves an existing Server's handler (no sampler) on a free
// loopback port until the test ends.
func startHandler(t *testing.T, s *Server) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	hs := &http.Server{Handler: s}
	go func() { _ = hs.Serve(l) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + l.Addr().String()
}

// get fetches url with optional basic auth and returns status and body.
func get(t *testing.T, method, url, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user, pass, ok := strings.Cut(auth, ":"); ok {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}
