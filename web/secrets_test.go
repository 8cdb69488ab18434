package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestNoProxyPasswordAnywhere plants a proxy password in the pool and
// searches every page, API answer and metric for it.
func TestNoProxyPasswordAnywhere(t *testing.T) {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker, MetricsPerProxy: true})
	paths := []string{"/", "/api/pool", "/api/pool?all=1", "/api/summary", "/metrics", "/monitoring/", "/monitoring/api/queues",
		"/monitoring/api/servers", "/monitoring/api/redis_info", "/monitoring/api/queue_stats",
		"/monitoring/api/queues/wildberries/pending_tasks", "/monitoring/api/queues/avito/archived_tasks"}
	var all strings.Builder
	for _, p := range paths {
		code, body := get(t, http.MethodGet, base+p, "")
		if code != http.StatusOK {
			t.Errorf("GET %s: status %d", p, code)
		}
		if strings.Contains(body, plantedPassword) {
			t.Errorf("GET %s leaks the proxy password", p)
		}
		all.WriteString(body)
	}
	// The proxy must be shown (masked), or the search above proves nothing.
	for _, want := range []string{"alice:***@127.0.0.2", `proxy="` + proxyID(t, c, "alice") + `"`} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no response shows %q: the planted proxy was not rendered", want)
		}
	}
}

// proxyID finds the ID of the seeded proxy of user.
func proxyID(t *testing.T, c *cluster, user string) string {
	t.Helper()
	ps, err := c.broker.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps.Proxies {
		if strings.Contains(p.Masked, "//"+user+":") {
			return p.ID
		}
	}
	t.Fatalf("no proxy of %s in %+v", user, ps.Proxies)
	return ""
}
