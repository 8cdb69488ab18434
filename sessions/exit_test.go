package sessions_test

import (
	"context"
	"errors"
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

// gatewayWorld is a testbed with a gateway of gw's exits (its only
// proxies: the farm is not imported) and a manager that holds exit IPs.
func gatewayWorld(t *testing.T, gw testbed.GatewayConfig, sessionsN int) (*world, *sessions.Manager) {
	t.Helper()
	ctx := context.Background()
	gw.User, gw.Password = "customer-u7", masktest.GatewayPassword
	tb, err := testbed.Start(ctx, testbed.Config{Proxies: 1, Seed: 7, Gateway: &gw})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	rdb := testredis.Client(t, testredis.DBSessions)
	w := &world{tb: tb, rdb: rdb, broker: brokerFor(t, ctx, rdb, tb, false),
		fetcher: fetcher.New(fetcher.Config{Timeout: 5 * time.Second, Logger: masktest.Logger(t)}), detect: detect.New(detect.Builtin())}
	ps, err := proxies.ParseReader(strings.NewReader(tb.GatewayLine(sessionsN)), "gateway.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.broker.Import(ctx, ps, proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		t.Fatal(err)
	}
	m := sessions.NewManager(sessions.Config{Shape: wbShape, Broker: w.broker, Redis: w.rdb, BrokerSharesRedis: true,
		Holder: "gw", LeaseTTL: time.Minute, Caps: w.broker.Capabilities(), ExitProbe: fetcher.ExitProbe{URL: tb.EchoURL()}, Logger: masktest.Logger(t)})
	return w, m
}

// TestExitMovesAtIdleExpiryMidJob: a gateway session left idle past the
// provider's idle time gets a new exit; the session learns it before its
// next request, waits for the new IP's pacing (another session used it
// just before), and sends none of the old IP's cookies or clearance
// from it.
func TestExitMovesAtIdleExpiryMidJob(t *testing.T) {
	ctx := context.Background()
	const idle = 800 * time.Millisecond
	w, m := gatewayWorld(t, testbed.GatewayConfig{Exits: 4, Idle: idle, RoundRobin: true}, 2)
	exits := w.tb.Gateway.ExitIPs()
	base := w.tb.SiteURL(wb)
	s, err := m.Open(ctx, "idle-task", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Finish(ctx, proxies.Neutral())
	if s.ExitIP() != exits[0] {
		t.Fatalf("first exit %s, want the gateway's first %s", s.ExitIP(), exits[0])
	}
	if _, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(base, 1), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveClearance(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	time.Sleep(idle + 100*time.Millisecond) // the provider ends the idle session: a deadline passed, not a guess
	mi := w.broker.SiteConfig(wb).MinInterval
	released := time.Now()
	h, err := w.broker.HoldExit(ctx, proxies.ExitRequest{Site: wb, IP: exits[1], Holder: "other", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.broker.ReleaseExit(ctx, h); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(base, 2), 2); err != nil {
		t.Fatal(err)
	}
	entries := siteEntries(w.tb, wb)
	last := entries[len(entries)-1]
	if s.ExitIP() != exits[1] || last.IP != exits[1] {
		t.Fatalf("after the idle expiry the session holds %s and the site saw %s; the gateway moved it to %s", s.ExitIP(), last.IP, exits[1])
	}
	// Redis's clock is whole milliseconds: the release's time may read up to 1 ms before released
	if earliest := released.Add(mi - time.Millisecond); last.Start.Before(earliest) {
		t.Errorf("the new IP's request came %s after the other session's release, want its min_interval %s", last.Start.Sub(released), mi)
	}
	if !last.Issued {
		t.Errorf("the new IP presented session cookie %q the site issued to the old one", last.Session)
	}
	if ok, err := s.LoadClearance(ctx); err != nil || ok {
		t.Errorf("the old IP's clearance loads on the new one: %v, %v", ok, err)
	}
	if c := m.ExitCounts(); c.Changes != 1 {
		t.Errorf("exit counts %+v, want one change", c)
	}
}

// TestBanThroughOneSessionStopsTheNextOnTheSameExit: a gateway whose
// every session lands on one exit IP; a ban seen by one session stops
// the next one, on another slot and session id, before it sends a
// request.
func TestBanThroughOneSessionStopsTheNextOnTheSameExit(t *testing.T) {
	ctx := context.Background()
	w, m := gatewayWorld(t, testbed.GatewayConfig{Exits: 1}, 2)
	base := w.tb.SiteURL(wb)
	a, err := m.Open(ctx, "task-a", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, w.fetcher, w.detect, "search", searchURL(base, 1), 1); err != nil {
		t.Fatal(err)
	}
	if act, err := a.Record(ctx, detect.Verdict{Kind: detect.Blocked, Reason: "test ban"}, 0); err != nil || act != sessions.Retired {
		t.Fatalf("ban: %v, %v", act, err)
	}
	sent := len(siteEntries(w.tb, wb))
	_, err = m.Open(ctx, "task-b", wb, proxies.Datacenter)
	if !errors.Is(err, proxies.ErrExitQuarantined) {
		t.Fatalf("a session landing on the banned exit opened: %v", err)
	}
	if n := len(siteEntries(w.tb, wb)); n != sent {
		t.Errorf("the site saw %d more requests from the banned exit", n-sent)
	}
	if st, err := w.broker.ExitStats(ctx, wb); err != nil || st.Quarantined != 1 {
		t.Errorf("exit stats %+v, %v; want the exit quarantined", st, err)
	}
	if c := m.ExitCounts(); c.Rerolls == 0 {
		t.Errorf("no new session id was tried: %+v", c)
	}
}

// TestSlotKeepsItsProviderSessionBetweenJobs: the next session of a
// gateway slot takes over the provider session its last one left (same
// session id, same exit, no probe), with none of its cookies.
func TestSlotKeepsItsProviderSessionBetweenJobs(t *testing.T) {
	ctx := context.Background()
	w, m := gatewayWorld(t, testbed.GatewayConfig{Exits: 6}, 1)
	base := w.tb.SiteURL(wb)
	a, err := m.Open(ctx, "job-1", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, w.fetcher, w.detect, "search", searchURL(base, 1), 1); err != nil {
		t.Fatal(err)
	}
	first := a.ExitIP()
	if err := a.Finish(ctx, proxies.OK(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	b, err := m.Open(ctx, "job-2", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finish(ctx, proxies.Neutral())
	if _, err := b.Get(ctx, w.fetcher, w.detect, "search", searchURL(base, 2), 2); err != nil {
		t.Fatal(err)
	}
	entries := siteEntries(w.tb, wb)
	last := entries[len(entries)-1]
	if b.ExitIP() != first || last.IP != first || w.tb.Gateway.Stats().Sessions != 1 || m.ExitCounts().Probes != 1 {
		t.Errorf("second job on %s (site saw %s), first on %s; gateway sessions %d, probes %d: want one provider session, one probe",
			b.ExitIP(), last.IP, first, w.tb.Gateway.Stats().Sessions, m.ExitCounts().Probes)
	}
	if !last.Issued {
		t.Errorf("the second job presented the first job's session cookie %q", last.Session)
	}
}
