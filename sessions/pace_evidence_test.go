package sessions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/testbed"
)

// TestALeaseOfManyPagesTeachesThePace: on a site whose pace is learned
// (min_interval auto: one canary, three clean answers make its probe the
// pace), a session of the canary that sends four pages at its lease's
// pace teaches the learner four clean answers, the first (sent at once
// after the canary's last answer) and the three after it, so the probe
// becomes the pace at its release. The release carries what the site
// saw (Outcome.Sent, Paced): the release-to-release gap of a lease of
// four pages says nothing.
func TestALeaseOfManyPagesTeachesThePace(t *testing.T) {
	ctx := context.Background()
	tb, err := testbed.Start(ctx, testbed.Config{Proxies: 1, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	rdb := testredis.Client(t, testredis.DBSessions)
	learn := &proxies.PaceLearning{Min: 100 * time.Millisecond, Max: time.Second, Canaries: 1, Clean: 3}
	b := farmBroker(t, ctx, rdb, tb, proxies.Config{Sites: map[string]proxies.SiteConfig{oz: {Learn: learn}},
		Logger: masktest.Logger(t)})
	f, d := fetcher.New(fetcher.Config{Timeout: 5 * time.Second}), detect.New(detect.Builtin())
	m := sessions.NewManager(sessions.Config{Shape: wbShape, Broker: b, Redis: rdb, BrokerSharesRedis: true,
		Holder: "pace", LeaseTTL: 10 * time.Second, MaxLeaseWait: 5 * time.Second, Logger: masktest.Logger(t)})
	crawl := func(task string, pages int) time.Duration {
		s, err := m.Open(ctx, task, oz, proxies.Datacenter)
		if err != nil {
			t.Fatal(err)
		}
		pace := s.Lease().MinInterval
		for page := 1; page <= pages; page++ {
			st, err := s.Get(ctx, f, d, "search", fmt.Sprintf("%s%s?text=&page=%d", tb.SiteURL(oz), testbed.OzonSearchPath, page), page)
			if err != nil || st.Verdict.Kind != detect.OK {
				t.Fatalf("%s page %d: %v %v", task, page, st.Verdict, err)
			}
		}
		if err := s.Finish(ctx, proxies.OK(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		return pace
	}
	name := proxies.PaceName(oz, proxies.Datacenter)
	probe := crawl("task-1", 1) // the canary's first lease: its last answer, nothing counted yet
	if l, err := b.Limit(ctx, name); err != nil || probe.Milliseconds() >= l.Value {
		t.Fatalf("the only proxy leased at %s, want a canary's probe under the pace (%+v, %v)", probe, l, err)
	}
	crawl("task-2", 4)
	l, err := b.Limit(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if l.Value != probe.Milliseconds() || !strings.Contains(l.Reason, "clean answers") {
		t.Fatalf("after four pages at the probe %s: pace %d ms (%q), want the probe made the pace", probe, l.Value, l.Reason)
	}
}
