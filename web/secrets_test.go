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

func TestMaskSpec(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "already masked", in: "http://u:***@h:1", want: "http://u:***@h:1"},
		{name: "password", in: "socks5://u:" + plantedPassword + "@h:1", want: "socks5://u:***@h:1"},
		{name: "escaped password", in: "http://u:p%40ss@h:1", want: "http://u:***@h:1"},
		{name: "no credentials", in: "http://h:1", want: "http://h:1"},
		{name: "user only", in: "http://u@h:1", want: "http://u@h:1"},
		{name: "unparseable", in: "h:1:u:" + plantedPassword, want: "<unparseable proxy spec>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := maskSpec(tt.in); got != tt.want {
				t.Errorf("maskSpec(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
