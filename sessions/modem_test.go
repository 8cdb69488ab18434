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

const oz = testbed.SiteOzon

// modemWorld is a testbed with one modem (its only proxy: the farm is
// not imported) changed at most every interval and settling for settle,
// and a manager that rotates it; site has rotate_after.
func modemWorld(t *testing.T, interval, settle time.Duration, rotateAfter int) (*world, *sessions.Manager) {
	t.Helper()
	ctx := context.Background()
	tb, err := testbed.Start(ctx, testbed.Config{Proxies: 1, Seed: 7, Modems: &testbed.ModemConfig{N: 1,
		MinInterval: interval, Settle: settle, User: "modem-user", Password: masktest.ProxyPassword, Key: masktest.ChangeKey}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	rdb := testredis.Client(t, testredis.DBSessions)
	sites := map[string]proxies.SiteConfig{}
	for site, mi := range tb.MinIntervals() {
		sites[site] = proxies.SiteConfig{MinInterval: mi, RotateAfter: rotateAfter}
	}
	b := proxies.NewRedisBroker(rdb, proxies.Config{Sites: sites, Logger: masktest.Logger(t)})
	w := &world{tb: tb, rdb: rdb, broker: b,
		fetcher: fetcher.New(fetcher.Config{Timeout: 5 * time.Second, Logger: masktest.Logger(t)}), detect: detect.New(detect.Builtin())}
	ps, err := proxies.ParseReader(strings.NewReader(strings.Join(tb.ModemLines(), "\n")), "modems.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Import(ctx, ps, proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		t.Fatal(err)
	}
	probe := fetcher.ExitProbe{URL: tb.EchoURL()}
	rot := sessions.NewRotator(sessions.RotatorConfig{Rotations: b.Capabilities().Rotations, LeaseTTL: 5 * time.Second,
		ExitProbe: probe, Forget: w.fetcher.Forget, Logger: masktest.Logger(t)})
	rot.Start()
	t.Cleanup(func() { rot.Shutdown(time.Second) })
	w.rotator = rot
	m := sessions.NewManager(sessions.Config{Shape: wbShape, Broker: b, Redis: rdb, BrokerSharesRedis: true,
		Holder: "modem", LeaseTTL: 5 * time.Second, Caps: b.Capabilities(), Rotator: rot, ExitProbe: probe,
		Forget: w.fetcher.Forget, Logger: masktest.Logger(t)})
	return w, m
}

// rotated waits (bounded) until the pool has n rotations done and none
// going: the figures are Redis's, written when a rotation ends.
func rotated(t *testing.T, b *proxies.RedisBroker, n int) proxies.ModemStats {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := b.ModemStats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Rotations >= n && st.Rotating == 0 {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("rotations %+v, want %d done", st, n)
		}
		time.Sleep(20 * time.Millisecond) // polling the pool's record, bounded by the deadline
	}
}

// noSettlingTraffic checks the modem node's record: nothing went through
// a modem while it settled, and no change came sooner than the
// provider's interval.
func noSettlingTraffic(t *testing.T, tb *testbed.Testbed) testbed.ModemStats {
	t.Helper()
	st := tb.Modems.Stats()
	if len(st.WhileSettling) != 0 || st.TooSoon != 0 {
		t.Errorf("modem node: %d requests while settling, %d changes too soon", len(st.WhileSettling), st.TooSoon)
	}
	return st
}

// TestModemRotatesOnBanInsteadOfQuarantine: a ban seen through a modem
// changes its IP; the old IP stays banned for the site; the next session
// gets the modem on its new IP at once, not after a quarantine; a second
// ban soon after waits out the provider's interval before the change,
// counted from when the provider took the first change: its link is
// slow, so that is well after crawlq was allowed to call it.
func TestModemRotatesOnBanInsteadOfQuarantine(t *testing.T) {
	ctx := context.Background()
	const interval = 1500 * time.Millisecond
	w, m := modemWorld(t, interval, 300*time.Millisecond, 0)
	base := w.tb.SiteURL(wb)
	s, err := m.Open(ctx, "task-1", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	first := s.ExitIP()
	if ip, _ := w.tb.Modems.Exit(0); first != ip {
		t.Fatalf("session learned %s, the modem's exit is %s", first, ip)
	}
	if _, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(base, 1), 1); err != nil {
		t.Fatal(err)
	}
	w.tb.Modems.HoldNextChange(300 * time.Millisecond)
	if act, err := s.Record(ctx, detect.Verdict{Kind: detect.Blocked, Reason: "test ban"}, 0); err != nil || act != sessions.Retired {
		t.Fatalf("ban: %v, %v", act, err)
	}
	rotated(t, w.broker, 1)
	_, err = w.broker.HoldExit(ctx, proxies.ExitRequest{Site: wb, IP: first, Holder: "x", TTL: time.Second})
	if !errors.Is(err, proxies.ErrExitQuarantined) {
		t.Fatalf("the banned IP %s on %s: %v, want quarantined", first, wb, err)
	}
	s2, err := m.Open(ctx, "task-2", wb, proxies.Datacenter)
	if err != nil {
		t.Fatalf("the modem after its rotation: %v (quarantined?)", err)
	}
	second := s2.ExitIP()
	if second == first {
		t.Fatalf("still on %s after the rotation", first)
	}
	if _, err := s2.Get(ctx, w.fetcher, w.detect, "search", searchURL(base, 1), 1); err != nil {
		t.Fatal(err)
	}
	if last := siteEntries(w.tb, wb); last[len(last)-1].IP != second {
		t.Fatalf("the site saw %s, want the new IP %s", last[len(last)-1].IP, second)
	}
	if _, err := s2.Record(ctx, detect.Verdict{Kind: detect.Blocked, Reason: "test ban"}, 0); err != nil {
		t.Fatal(err)
	}
	rotated(t, w.broker, 2)
	st := noSettlingTraffic(t, w.tb)
	if len(st.Rotations) != 2 || len(st.Refusals) != 0 {
		t.Fatalf("modem node: %d rotations, %d refused; want 2 and 0\nrotations %+v\nrefusals %+v",
			len(st.Rotations), len(st.Refusals), st.Rotations, st.Refusals)
	}
	if gap := st.Rotations[1].At.Sub(st.Rotations[0].At); gap < interval {
		t.Fatalf("two changes %s apart, the provider allows one per %s", gap, interval)
	}
	if c := m.ModemCounts(); c.Rotations != 2 || c.Failed != 0 {
		t.Fatalf("modem counts %+v", c)
	}
}

// TestModemSessionOnAnotherSiteEndsAtTheRotation: a modem shared by two
// sites; a ban on one starts the rotation, the other site's session ends
// at its next request instead of sending it, and only then is the IP
// changed.
func TestModemSessionOnAnotherSiteEndsAtTheRotation(t *testing.T) {
	ctx := context.Background()
	w, m := modemWorld(t, time.Second, 300*time.Millisecond, 0)
	other, err := m.Open(ctx, "task-oz", oz, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Open(ctx, "task-wb", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, detect.Verdict{Kind: detect.Blocked, Reason: "test ban"}, 0); err != nil {
		t.Fatal(err)
	}
	sentBefore := len(siteEntries(w.tb, oz))
	_, err = other.Get(ctx, w.fetcher, w.detect, "search", w.tb.SiteURL(oz)+"/search/?text=x", 1)
	if !errors.Is(err, sessions.ErrModemRotating) {
		t.Fatalf("the other site's request during the rotation: %v, want ErrModemRotating", err)
	}
	if n := len(siteEntries(w.tb, oz)); n != sentBefore {
		t.Fatalf("%d requests reached %s through the rotating modem", n-sentBefore, oz)
	}
	rotated(t, w.broker, 1)
	noSettlingTraffic(t, w.tb)
	if c := m.ModemCounts(); c.Ended != 1 || c.Rotations != 1 {
		t.Fatalf("modem counts %+v, want one session ended and one rotation", c)
	}
}

// TestRotateAfterChangesTheIPBeforeTheBan: with the site's rotate_after
// at 3, the fourth request is not sent from the same IP: the session
// ends, the modem rotates, and the next session sends from a new IP.
func TestRotateAfterChangesTheIPBeforeTheBan(t *testing.T) {
	ctx := context.Background()
	w, m := modemWorld(t, time.Second, 300*time.Millisecond, 3)
	base := w.tb.SiteURL(wb)
	s, err := m.Open(ctx, "task-1", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	first := s.ExitIP()
	for page := 1; page <= 3; page++ {
		if _, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(base, page), page); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(base, 4), 4); !errors.Is(err, sessions.ErrModemRotating) {
		t.Fatalf("fourth request: %v, want ErrModemRotating", err)
	}
	rotated(t, w.broker, 1)
	s2, err := m.Open(ctx, "task-1", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Finish(ctx, proxies.Neutral())
	if s2.ExitIP() == first {
		t.Fatalf("still on %s after rotate_after", first)
	}
	if _, err := w.broker.HoldExit(ctx, proxies.ExitRequest{Site: wb, IP: first, Holder: "x", TTL: time.Second}); err != nil {
		t.Fatalf("the old IP was not banned, only left: %v", err)
	}
	byIP := map[string]int{}
	for _, e := range siteEntries(w.tb, wb) {
		byIP[e.IP]++
	}
	if byIP[first] != 3 {
		t.Fatalf("requests per IP %v, want 3 from %s", byIP, first)
	}
	noSettlingTraffic(t, w.tb)
}

// TestModemCancelledWaitCountsNothing: a request whose wait for its turn
// is cancelled is not counted against the site's rotate_after: with
// rotate_after 3, five cancelled requests after the first leave the IP
// its second and third, and only the fourth ends the session.
func TestModemCancelledWaitCountsNothing(t *testing.T) {
	ctx := context.Background()
	w, m := modemWorld(t, time.Second, 300*time.Millisecond, 3)
	base := w.tb.SiteURL(wb)
	s, err := m.Open(ctx, "task-1", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	first := s.ExitIP()
	if _, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(base, 1), 1); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel() // the next request waits wb's min_interval: cancelled in its wait
	for range 5 {
		if _, err := s.Get(cancelled, w.fetcher, w.detect, "search", searchURL(base, 2), 2); !errors.Is(err, context.Canceled) {
			t.Fatalf("a request cancelled in its wait: %v, want context.Canceled", err)
		}
	}
	for page := 2; page <= 3; page++ {
		if _, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(base, page), page); err != nil {
			t.Fatalf("page %d after the cancelled waits: %v", page, err)
		}
	}
	_, err = s.Get(ctx, w.fetcher, w.detect, "search", searchURL(base, 4), 4)
	var ended *sessions.EndedError
	if !errors.As(err, &ended) || !errors.Is(err, sessions.ErrModemRotating) {
		t.Fatalf("fourth request: %v, want the session ended for the rotation", err)
	}
	rotated(t, w.broker, 1)
	byIP := map[string]int{}
	for _, e := range siteEntries(w.tb, wb) {
		byIP[e.IP]++
	}
	if byIP[first] != 3 {
		t.Fatalf("requests per IP %v, want 3 from %s", byIP, first)
	}
}

// TestRotatorShutdownLeavesTheModemToItsMark: a rotation waiting for
// its permission (another site's session holds the modem) when the
// worker shuts down is cut short: Shutdown returns, no change is called,
// the rotation is not ended (it would say failed: quarantined) and its
// mark is left to free the modem at its deadline; a ban after the
// shutdown is not a rotation but the quarantine of a plain proxy.
func TestRotatorShutdownLeavesTheModemToItsMark(t *testing.T) {
	ctx := context.Background()
	w, m := modemWorld(t, time.Second, 300*time.Millisecond, 0)
	other, err := m.Open(ctx, "task-oz", oz, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Finish(ctx, proxies.Neutral())
	s, err := m.Open(ctx, "task-wb", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, detect.Verdict{Kind: detect.Blocked, Reason: "test ban"}, 0); err != nil {
		t.Fatal(err)
	}
	w.rotator.Shutdown(0)
	st, err := w.broker.ModemStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rotating != 1 || st.Rotations != 0 {
		t.Fatalf("after the shutdown: %+v, want the mark left (1 rotating) and none ended", st)
	}
	if n := len(w.tb.Modems.Stats().Rotations); n != 0 {
		t.Fatalf("%d changes called", n)
	}
	if c := m.ModemCounts(); c.Rotations != 0 || c.Failed != 0 {
		t.Fatalf("modem counts %+v, want no rotation ended", c)
	}
	if err := w.rotator.Begin(ctx, &proxies.Lease{}, "", "ban"); !errors.Is(err, sessions.ErrRotatorClosed) {
		t.Fatalf("Begin after Shutdown: %v, want ErrRotatorClosed", err)
	}
}

// TestModemBackOnABannedIPRotatesAgain: a modem whose current IP is
// banned for the site (carriers hand IPs out again) is not used there:
// the session that finds it rotates the modem and the next one gets a
// new IP.
func TestModemBackOnABannedIPRotatesAgain(t *testing.T) {
	ctx := context.Background()
	w, m := modemWorld(t, time.Second, 300*time.Millisecond, 0)
	banned, _ := w.tb.Modems.Exit(0)
	if _, err := w.broker.BanExit(ctx, wb, banned, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Open(ctx, "task-1", wb, proxies.Datacenter); !errors.Is(err, proxies.ErrExitQuarantined) {
		t.Fatalf("open on the banned IP: %v, want ErrExitQuarantined", err)
	}
	rotated(t, w.broker, 1)
	s, err := m.Open(ctx, "task-1", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Finish(ctx, proxies.Neutral())
	if s.ExitIP() == banned {
		t.Fatalf("still on the banned IP %s", banned)
	}
	if n := len(siteEntries(w.tb, wb)); n != 0 {
		t.Fatalf("%d requests reached the site", n)
	}
}
