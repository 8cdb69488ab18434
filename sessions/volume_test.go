package sessions_test

import (
	"context"
	"errors"
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

// TestPlainProxyRestsAtTheLearnedVolumeBudget: a site (Ozon) that bans an IP's
// fifth request within a minute (the testbed's hidden volume rule), and
// crawlq told only rotate_after: auto over a one-minute count. Through
// two plain proxies: the first, the canary, sends until the site bans it
// and teaches the budget (90 % of the four before the ban: 3); the
// second sends those three, then its session ends with ErrIPResting
// before a fourth is sent, the site never bans it, and the proxy rests
// (is not leased) until its count starts over. The pace learned nothing:
// a rest is not a rate limit.
func TestPlainProxyRestsAtTheLearnedVolumeBudget(t *testing.T) {
	ctx := context.Background()
	tb, err := testbed.Start(ctx, testbed.Config{Proxies: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	tb.SetVolume(oz, &testbed.VolumeRule{Requests: 4, Window: time.Minute})
	rdb := testredis.Client(t, testredis.DBSessions)
	sites := map[string]proxies.SiteConfig{}
	for site, mi := range tb.MinIntervals() {
		sites[site] = proxies.SiteConfig{MinInterval: mi}
	}
	sites[oz] = proxies.SiteConfig{MinInterval: tb.MinIntervals()[oz], RotateAfterAuto: true, RotateEvery: time.Minute}
	b := farmBroker(t, ctx, rdb, tb, proxies.Config{Sites: sites, Logger: masktest.Logger(t)})
	f, d := fetcher.New(fetcher.Config{Timeout: 5 * time.Second}), detect.New(detect.Builtin())
	m := sessions.NewManager(sessions.Config{Shape: wbShape, Broker: b, Redis: rdb, BrokerSharesRedis: true,
		Holder: "vol", LeaseTTL: 5 * time.Second, MaxLeaseWait: 2 * time.Second, Logger: masktest.Logger(t)})
	base := tb.SiteURL(oz)

	// sendUntil sends pages through task's session until one fails;
	// it returns the session's exit IP, the pages sent and the error.
	sendUntil := func(task string) (string, int, error) {
		s, err := m.Open(ctx, task, oz, proxies.Datacenter)
		if err != nil {
			t.Fatal(err)
		}
		ip := s.ExitIP()
		for page := 1; page <= 20; page++ {
			st, err := s.Get(ctx, f, d, "search", fmt.Sprintf("%s%s?text=&page=%d", base, testbed.OzonSearchPath, page), page)
			if err != nil {
				return ip, page - 1, err
			}
			if st.Action != sessions.Continue {
				return ip, page, nil
			}
		}
		t.Fatalf("%s: 20 pages sent through %s, none refused", task, ip)
		return "", 0, nil
	}
	canary, sent, err := sendUntil("task-1")
	if err != nil || sent != 5 || !tb.Banned(oz, canary) {
		t.Fatalf("the canary %s sent %d (%v), banned %v; want banned at its 5th", canary, sent, err, tb.Banned(oz, canary))
	}
	l, err := b.Limit(ctx, proxies.VolumeLimitName(oz))
	if err != nil || l.Value != 3 {
		t.Fatalf("budget %+v, %v; want 3 learned from the canary's ban", l, err)
	}
	other, sent, err := sendUntil("task-2")
	if other == canary {
		t.Fatalf("task-2 got the quarantined canary %s", canary)
	}
	if !errors.Is(err, sessions.ErrIPResting) || sent != 3 {
		t.Fatalf("%s sent %d then %v; want 3 then ErrIPResting", other, sent, err)
	}
	if tb.Banned(oz, other) || m.VolumeRested() != 1 {
		t.Fatalf("%s banned %v, rested %d; want not banned, one rest", other, tb.Banned(oz, other), m.VolumeRested())
	}
	if s, err := m.Open(ctx, "task-3", oz, proxies.Datacenter); err == nil {
		t.Fatalf("task-3 leased %s while the canary is quarantined and %s rests", s.ExitIP(), other)
	}
	if r := tb.Check(); r.BansPerIP[other] != 0 || r.BansPerIP[canary] != 1 {
		t.Fatalf("bans per IP %v, want one (the canary's)", r.BansPerIP)
	}
}

// TestGatewayExitRestsAtTheVolumeBudget: through a gateway whose every
// session lands on one exit IP, with the site's learned budget 2 (pinned
// under rotate_after auto): the session sends two pages, then ends with ErrIPResting before a third;
// the exit rests (kept from the site like a quarantine, with no ban),
// so the next session, on another slot, is refused it and sends
// nothing.
func TestGatewayExitRestsAtTheVolumeBudget(t *testing.T) {
	ctx := context.Background()
	gw := testbed.GatewayConfig{Exits: 1, User: "customer-u7", Password: masktest.GatewayPassword}
	tb, err := testbed.Start(ctx, testbed.Config{Proxies: 1, Seed: 7, Gateway: &gw})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	rdb := testredis.Client(t, testredis.DBSessions)
	sites := map[string]proxies.SiteConfig{}
	for site, mi := range tb.MinIntervals() {
		sites[site] = proxies.SiteConfig{MinInterval: mi, RotateAfterAuto: true, RotateEvery: time.Minute}
	}
	b := proxies.NewRedisBroker(rdb, proxies.Config{Sites: sites, Logger: masktest.Logger(t)})
	ps, err := proxies.ParseReader(strings.NewReader(tb.GatewayLine(2)), "gateway.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Import(ctx, ps, proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.VolumeSend(ctx, wb, "10.9.9.9"); err != nil { // creates the budget, 10.9.9.9 its canary
		t.Fatal(err)
	}
	if err := b.PinLimit(ctx, proxies.VolumeLimitName(wb), 2); err != nil {
		t.Fatal(err)
	}
	f, d := fetcher.New(fetcher.Config{Timeout: 5 * time.Second}), detect.New(detect.Builtin())
	m := sessions.NewManager(sessions.Config{Shape: wbShape, Broker: b, Redis: rdb, BrokerSharesRedis: true, Holder: "gw",
		LeaseTTL: time.Minute, ExitProbe: fetcher.ExitProbe{URL: tb.EchoURL()}, Logger: masktest.Logger(t)})
	base := tb.SiteURL(wb)
	a, err := m.Open(ctx, "task-a", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	exit := a.ExitIP()
	for page := 1; page <= 2; page++ {
		if _, err := a.Get(ctx, f, d, "search", searchURL(base, page), page); err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
	}
	if _, err := a.Get(ctx, f, d, "search", searchURL(base, 3), 3); !errors.Is(err, sessions.ErrIPResting) {
		t.Fatalf("third page: %v, want ErrIPResting", err)
	}
	if st, err := b.ExitStats(ctx, wb); err != nil || st.Quarantined != 1 || st.Held != 0 {
		t.Fatalf("exit stats %+v, %v; want the exit resting, not held", st, err)
	}
	if _, err := m.Open(ctx, "task-b", wb, proxies.Datacenter); !errors.Is(err, proxies.ErrExitQuarantined) {
		t.Fatalf("a session landing on the resting exit opened: %v", err)
	}
	n := 0
	for _, e := range siteEntries(tb, wb) {
		if e.IP == exit {
			n++
		}
	}
	if n != 2 || tb.Banned(wb, exit) {
		t.Fatalf("the site saw %d requests from %s (banned %v), want 2 and no ban", n, exit, tb.Banned(wb, exit))
	}
}
