package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"crawlq/proxies"
)

// TestLearnedLimitsSeen: a learned pace shows in /metrics (value, bounds,
// pinned, last change by kind), in status's text and on the dashboard
// with a chart whose slow-down is marked.
func TestLearnedLimitsSeen(t *testing.T) {
	c := newCluster(t)
	b := c.broker.(*proxies.RedisBroker)
	ctx := context.Background()
	const name = "pace:wildberries:datacenter"
	if err := b.EnsureLimit(ctx, name, proxies.LimitSpec{Start: 5000, Min: 100, Max: 5000, Unit: "ms"}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		v      int64
		reason string
	}{{500, "8 clean answers at 500 ms"}, {1000, "429 at 500 ms: 2.1x slower"}} {
		l, _ := b.Limit(ctx, name)
		if _, err := b.SetLimit(ctx, name, l.Gen, step.v, step.reason); err != nil {
			t.Fatal(err)
		}
	}
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker})
	mf := scrape(t, base)
	if v := values(mf, "crawlq_learned_limit", "limit", "unit")[name+"/ms"]; v != 1000 {
		t.Errorf("crawlq_learned_limit = %v, want 1000", v)
	}
	if v := values(mf, "crawlq_learned_limit_bound", "limit", "bound"); v[name+"/min"] != 100 || v[name+"/max"] != 5000 {
		t.Errorf("crawlq_learned_limit_bound = %v", v)
	}
	if v := values(mf, "crawlq_learned_limit_changed_timestamp_seconds", "limit", "kind"); v[name+"/slower"] == 0 {
		t.Errorf("crawlq_learned_limit_changed_timestamp_seconds = %v, want a slower change", v)
	}
	code, page := get(t, http.MethodGet, base+"/", "")
	if code != http.StatusOK || !strings.Contains(page, `data-limit="`+name+`"`) || !strings.Contains(page, "<circle") ||
		!strings.Contains(page, "429 at 500 ms: 2.1x slower") {
		t.Fatalf("dashboard (%d) lacks the learned pace, its last change or its marked slow-down", code)
	}
	st, err := b.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := (&Status{Pool: PoolStatus{Sites: st.Sites, Limits: st.Limits}}).WriteTable(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "learned "+name+" 1s (100ms..5s), last change") {
		t.Fatalf("status text:\n%s", sb.String())
	}
}
