package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"crawlq/proxies"
	"crawlq/tasks"
)

// TestDashboardNamesServersByServerID: a running worker appears on the
// pool page and in /api/summary under its --server-id.
func TestDashboardNamesServersByServerID(t *testing.T) {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker})
	w := tasks.NewWorker(tasks.WorkerConfig{Redis: c.opt, RDB: c.rdb, ServerID: "dash-worker-1", Concurrency: 1,
		Queues: map[string]int{"idle": 1}, Broker: proxies.NewRedisBroker(c.rdb, proxies.Config{}), BrokerOnRDB: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := get(t, http.MethodGet, base+"/api/summary", "")
		var sum Summary
		if err := json.Unmarshal([]byte(body), &sum); err != nil {
			t.Fatalf("/api/summary: %v", err)
		}
		if len(sum.Status.Servers) == 1 && sum.Status.Servers[0].ServerID == "dash-worker-1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/api/summary never named the worker: %+v", sum.Status.Servers)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, page := get(t, http.MethodGet, base+"/", ""); !strings.Contains(page, "<td class=\"l\">dash-worker-1</td>") {
		t.Error("pool page does not name the worker by its server id")
	}
}
