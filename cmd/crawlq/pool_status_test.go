package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/web"
)

// TestProxiesStatsBeforeAnyWorker: right after `proxies import` of two
// proxies, with no worker ever run, `proxies stats` lists both proxies
// with their sites ("*" for all) and a row per configured site.
func TestProxiesStatsBeforeAnyWorker(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	dir := t.TempDir()
	all, ozon := filepath.Join(dir, "all.txt"), filepath.Join(dir, "ozon.txt")
	if err := os.WriteFile(all, []byte("http://u1:"+masktest.ProxyPassword+"@127.0.0.2:8080\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ozon, []byte("http://u2:"+masktest.ProxyPassword+"@127.0.0.3:8080\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "proxies", "import", all); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "proxies", "import", ozon, "--sites", "ozon"); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "proxies", "stats")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 proxies in the pool", "u1:***@127.0.0.2:8080", "u2:***@127.0.0.3:8080"} {
		if !strings.Contains(out, want) {
			t.Errorf("proxies stats lacks %q:\n%s", want, out)
		}
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, want := range []string{
		"SITE CLASS READY LEASED COOLING QUARANTINED CLEARED EXHAUSTED",
		"wildberries * 1 0 0 0 0 -", "ozon * 2 0 0 0 0 -", "avito * 1 0 0 0 0 -", // per configured site
	} {
		if !lines[want] {
			t.Errorf("proxies stats lacks the line %q:\n%s", want, out)
		}
	}
	rows := 0
	for l := range lines {
		f := strings.Fields(l)
		if len(f) >= 6 && strings.Contains(l, "u2:***@") && f[3] == "ozon" && f[4] == "ozon" && f[5] == "ready" {
			rows++
		}
		if len(f) >= 6 && strings.Contains(l, "u1:***@") && f[3] == "*" && f[5] == "ready" {
			rows++
		}
	}
	if rows != 4 { // u1 on three sites, u2 on ozon
		t.Errorf("want 4 ready proxy rows (u1 on every site with sites *, u2 on ozon), got %d:\n%s", rows, out)
	}
	if strings.Contains(out, masktest.ProxyPassword) {
		t.Errorf("proxies stats leaks a password:\n%s", out)
	}
}

// TestProxiesStatsAndStatusShowCleared: a proxy holding ozon's clearance
// is counted in the CLEARED column of `proxies stats` (the site's "*" row;
// its class row leaves it blank) and of `status`, and in `status --json`,
// on ozon only, as well as in its state.
func TestProxiesStatsAndStatusShowCleared(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBCmd)
	file := filepath.Join(t.TempDir(), "pool.txt")
	if err := os.WriteFile(file, []byte("http://u1:"+masktest.ProxyPassword+"@127.0.0.2:8080\nhttp://u2:"+masktest.ProxyPassword+"@127.0.0.3:8080\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "proxies", "import", file); err != nil {
		t.Fatal(err)
	}
	b := proxies.NewRedisBroker(rdb, proxies.Config{})
	ctx := context.Background()
	ps, err := b.List(ctx)
	if err != nil || len(ps) != 2 {
		t.Fatalf("list = %d proxies, %v; want 2", len(ps), err)
	}
	if err := b.MarkCleared(ctx, "ozon", ps[0].ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	stats, err := run(t, "proxies", "stats", "--sites-only")
	if err != nil {
		t.Fatal(err)
	}
	status, err := run(t, "status")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, out string
		lines     []string
	}{
		{name: "proxies stats", out: stats, lines: []string{"SITE CLASS READY LEASED COOLING QUARANTINED CLEARED EXHAUSTED",
			"ozon * 2 0 0 0 1 -", "ozon datacenter 2 0 0 0", "wildberries * 2 0 0 0 0 -"}},
		{name: "status", out: status, lines: []string{"SITE READY LEASED COOLING QUARANTINED CLEARED EXHAUSTED (pool: 2 proxies)",
			"ozon 2 0 0 0 1 -", "wildberries 2 0 0 0 0 -"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lines := map[string]bool{}
			for _, l := range strings.Split(tc.out, "\n") {
				lines[strings.Join(strings.Fields(l), " ")] = true
			}
			for _, want := range tc.lines {
				if !lines[want] {
					t.Errorf("lacks the line %q:\n%s", want, tc.out)
				}
			}
		})
	}
	out, err := run(t, "status", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st web.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if oz, wb := st.Pool.Sites["ozon"], st.Pool.Sites["wildberries"]; oz.Cleared != 1 || oz.Ready != 2 || wb.Cleared != 0 {
		t.Errorf("status --json: ozon %+v, wildberries %+v; want ozon 2 ready of which 1 cleared, wildberries 0 cleared", oz, wb)
	}
}

// TestStatusJSONNamesServers: a running worker's --server-id, version and
// Asynq server ID reach `status --json` through its heartbeat record.
func TestStatusJSONNamesServers(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBCmd)
	opt := asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBCmd}
	w := tasks.NewWorker(tasks.WorkerConfig{Redis: opt, RDB: rdb, ServerID: "crawler-7", Concurrency: 1,
		Broker: proxies.NewRedisBroker(rdb, proxies.Config{}), BrokerOnRDB: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	}()
	var st web.Status
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := run(t, "status", "--json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		if len(st.Servers) == 1 && st.Servers[0].ServerID != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status --json never named the worker: %s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s := st.Servers[0]
	if s.ServerID != "crawler-7" || s.Version == "" || s.ID == "" || s.PID != os.Getpid() {
		t.Errorf("server = %+v, want server_id crawler-7 with a version, an Asynq ID and this pid", s)
	}
	out, err := run(t, "status")
	if err != nil || !strings.Contains(out, "crawler-7") {
		t.Errorf("status table lacks crawler-7 (%v):\n%s", err, out)
	}
}
