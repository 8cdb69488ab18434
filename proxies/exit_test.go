package proxies

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"crawlq/internal/testredis"
)

// exitBroker is a broker on its own pool with min_interval mi and a
// quarantine of 60 to 300 s for site "wb".
func exitBroker(t *testing.T, ck *clock, mi time.Duration) *RedisBroker {
	t.Helper()
	return NewRedisBroker(testredis.Client(t, testredis.DBProxies), ck.config(Config{
		Pool: fmt.Sprintf("exit-%s-%d", t.Name(), time.Now().UnixNano()),
		Sites: map[string]SiteConfig{"wb": {MinInterval: mi, QuarantineBase: 300 * time.Second,
			QuarantineFloor: 60 * time.Second}},
	}))
}

// redisNow is the broker's clock now.
func redisNow(t *testing.T, b *RedisBroker) time.Time {
	t.Helper()
	now, err := b.rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.Add(b.cfg.Clock())
}

// TestExitHoldIsExclusivePerSiteAndPaced: one live hold per (IP, site);
// another site holds the same IP; a released IP may send again only
// min_interval after the release (I1 and I2 on the exit IP).
func TestExitHoldIsExclusivePerSiteAndPaced(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b := exitBroker(t, ck, 400*time.Millisecond)
	h, err := b.HoldExit(ctx, ExitRequest{Site: "wb", IP: "10.0.0.1", Holder: "a", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.HoldExit(ctx, ExitRequest{Site: "wb", IP: "10.0.0.1", Holder: "b", TTL: time.Minute})
	var refused *ExitRefusedError
	if !errors.As(err, &refused) || !errors.Is(err, ErrExitBusy) || !refused.Until.Equal(h.Expires) {
		t.Fatalf("second hold of a held IP: %v, want ErrExitBusy until %s", err, h.Expires)
	}
	if _, err := b.HoldExit(ctx, ExitRequest{Site: "oz", IP: "10.0.0.1", Holder: "b", TTL: time.Minute}); err != nil {
		t.Fatalf("the same IP for another site: %v", err)
	}
	before := redisNow(t, b).Truncate(time.Millisecond) // the scripts' clock is whole milliseconds
	if err := b.ReleaseExit(ctx, h); err != nil {
		t.Fatal(err)
	}
	next, err := b.HoldExit(ctx, ExitRequest{Site: "wb", IP: "10.0.0.1", Holder: "b", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if next.Token <= h.Token || next.NotBefore.Before(before.Add(400*time.Millisecond)) {
		t.Errorf("hold after release: token %d (was %d), not before %s, want ≥ %s", next.Token, h.Token, next.NotBefore, before.Add(400*time.Millisecond))
	}
	if err := b.ReleaseExit(ctx, h); !errors.Is(err, ErrStaleLease) {
		t.Errorf("releasing an ended hold: %v, want ErrStaleLease", err)
	}
	if _, err := b.ExtendExit(ctx, h, time.Minute); !errors.Is(err, ErrStaleLease) {
		t.Errorf("renewing an ended hold: %v, want ErrStaleLease", err)
	}
}

// TestExitHoldOfADeadHolder: a hold that expired frees its IP, which then
// rests min_interval after the expiry; a renewal pushes the expiry.
func TestExitHoldOfADeadHolder(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b := exitBroker(t, ck, time.Second)
	h, err := b.HoldExit(ctx, ExitRequest{Site: "wb", IP: "10.0.0.2", Holder: "a", TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ck.advance(time.Second)
	renewed, err := b.ExtendExit(ctx, h, 2*time.Second)
	if err != nil || !renewed.Expires.After(h.Expires) {
		t.Fatalf("renew: %v, expiry %v (was %v)", err, renewed, h.Expires)
	}
	ck.advance(1500 * time.Millisecond)
	if _, err := b.HoldExit(ctx, ExitRequest{Site: "wb", IP: "10.0.0.2", Holder: "b", TTL: time.Minute}); !errors.Is(err, ErrExitBusy) {
		t.Fatalf("hold of a renewed IP: %v, want ErrExitBusy", err)
	}
	ck.advance(time.Second) // the renewed hold has expired: its holder died
	next, err := b.HoldExit(ctx, ExitRequest{Site: "wb", IP: "10.0.0.2", Holder: "b", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if want := renewed.Expires.Add(time.Second); next.NotBefore.Before(want) {
		t.Errorf("after a dead holder: not before %s, want ≥ %s (its expiry + min_interval)", next.NotBefore, want)
	}
}

// TestExitBanQuarantinesTheIPForEverySession: a ban through one session
// refuses every other session that lands on the IP, for a time between
// the site's quarantine floor and base, and ends the banned hold.
func TestExitBanQuarantinesTheIPForEverySession(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b := exitBroker(t, ck, 0)
	h, err := b.HoldExit(ctx, ExitRequest{Site: "wb", IP: "10.0.0.3", Holder: "a", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	now := redisNow(t, b).Truncate(time.Millisecond) // the scripts' clock is whole milliseconds
	until, err := b.BanExit(ctx, "wb", "10.0.0.3", h)
	if err != nil {
		t.Fatal(err)
	}
	if d := until.Sub(now); d < 60*time.Second || d > 301*time.Second {
		t.Errorf("quarantine of %s, want 60 to 300 s", d)
	}
	_, err = b.HoldExit(ctx, ExitRequest{Site: "wb", IP: "10.0.0.3", Holder: "b", TTL: time.Minute})
	var refused *ExitRefusedError
	if !errors.As(err, &refused) || !errors.Is(err, ErrExitQuarantined) || !refused.Until.Equal(until) {
		t.Fatalf("a session on the banned IP: %v, want ErrExitQuarantined until %s", err, until)
	}
	if err := b.ReleaseExit(ctx, h); !errors.Is(err, ErrStaleLease) {
		t.Errorf("the banned hold still releases: %v", err)
	}
	if st, err := b.ExitStats(ctx, "wb"); err != nil || st.Quarantined != 1 || st.Held != 0 || st.Seen != 1 {
		t.Errorf("stats = %+v, %v; want 1 quarantined, 0 held, 1 seen", st, err)
	}
	ck.advance(until.Sub(now) + time.Millisecond)
	if _, err := b.HoldExit(ctx, ExitRequest{Site: "wb", IP: "10.0.0.3", Holder: "b", TTL: time.Minute}); err != nil {
		t.Errorf("after the quarantine: %v", err)
	}
}

// TestExitHoldsNeverOverlapAcrossServers: two brokers (two Redis clients)
// race for three exit IPs; no IP is ever held twice at once for a site.
func TestExitHoldsNeverOverlapAcrossServers(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	a := exitBroker(t, ck, NoMinInterval)
	bb := NewRedisBroker(testredis.NewClient(t, testredis.DBProxies), a.cfg)
	tr := &tracker{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	refusals := 0
	for i := range 8 {
		b := []*RedisBroker{a, bb}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range 60 {
				ip := fmt.Sprintf("10.0.1.%d", (i+c)%3)
				h, err := b.HoldExit(ctx, ExitRequest{Site: "wb", IP: ip, Holder: fmt.Sprint(i), TTL: 10 * time.Second})
				if errors.Is(err, ErrExitBusy) {
					mu.Lock()
					refusals++
					mu.Unlock()
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				tr.acquire(ip)
				h, err = b.ExtendExit(ctx, h, 10*time.Second) // a round trip while held
				tr.release(ip)
				if err != nil {
					t.Error(err)
					return
				}
				if err := b.ReleaseExit(ctx, h); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if tr.bad != 0 || tr.total == 0 {
		t.Errorf("%d holds, %d overlaps (%d refusals); want holds and no overlap", tr.total, tr.bad, refusals)
	}
}

// TestGatewaySlotIsPacedByItsExit: a gateway slot is leased when the exit
// its last hold was on is free and ready, not as an IP of its own: of two
// slots on one exit, one is leased at a time and the next only once the
// exit has rested its min_interval after the release; a slot on another
// exit is leased meanwhile (issue 40.4).
func TestGatewaySlotIsPacedByItsExit(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b := exitBroker(t, ck, time.Second)
	ps := importList(t, b, "http://u-{session}:pw@gw.example:22225 sessions=3\n", ImportOptions{Class: Residential})
	exitOf := map[string]string{ps[0].ID: "10.0.0.7", ps[1].ID: "10.0.0.7", ps[2].ID: "10.0.0.8"}
	req := LeaseRequest{Site: "wb", Class: Residential, Holder: "h", Task: "t", TTL: time.Minute}
	cycle := func(l *Lease) { // a session on l's slot holds its exit, sends, ends
		t.Helper()
		h, err := b.HoldExit(ctx, ExitRequest{Site: "wb", IP: exitOf[l.Proxy.ID], Holder: "t", TTL: time.Minute, Slot: l.Proxy.ID})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.ReleaseExit(ctx, h); err != nil {
			t.Fatal(err)
		}
		if err := b.Release(ctx, l, OK(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range ps { // the slots learn their exits, one session each
		l, err := b.LeaseProxy(ctx, req, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		cycle(l)
	}
	ck.advance(2 * time.Second)
	first, err := b.Lease(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.Lease(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if exitOf[first.Proxy.ID] == exitOf[second.Proxy.ID] {
		t.Fatalf("slots %s and %s on exit %s leased at once", first.Proxy.ID, second.Proxy.ID, exitOf[first.Proxy.ID])
	}
	var nr *NotReadyError
	if _, err := b.Lease(ctx, req); !errors.As(err, &nr) {
		t.Fatalf("third lease while the third slot's exit is taken: %v, want *NotReadyError", err)
	}
	shared := first
	if exitOf[second.Proxy.ID] == "10.0.0.7" {
		shared = second
	}
	cycle(shared)
	ck.advance(900 * time.Millisecond)
	if l, err := b.Lease(ctx, req); !errors.As(err, &nr) {
		t.Fatalf("lease 0.9 s after the shared exit's release: %v, want *NotReadyError", l)
	}
	ck.advance(200 * time.Millisecond)
	l, err := b.Lease(ctx, req)
	if err != nil {
		t.Fatalf("lease once the shared exit rested: %v", err)
	}
	if l.Proxy.ID == shared.Proxy.ID || exitOf[l.Proxy.ID] != "10.0.0.7" {
		t.Errorf("leased %s, want the other slot on the shared exit", l.Proxy.ID)
	}
}

// TestFreshGatewaySlotIsTakenLast: a gateway slot on no known exit yet
// (its session would draw one at random, a probe) is leased only when no
// slot on a known exit is ready, however long it has waited, and once
// passed over, a pace later; one draws at a time, until its first hold; a
// plain proxy of the pool is leased as before.
func TestFreshGatewaySlotIsTakenLast(t *testing.T) {
	ctx := context.Background()
	ck := &clock{}
	b := exitBroker(t, ck, time.Second)
	ps := importList(t, b, "http://u-{session}:pw@gw.example:22225 sessions=3\nhttp://u:p@10.0.0.9:8080\n", ImportOptions{Class: Residential})
	req := LeaseRequest{Site: "wb", Class: Residential, Holder: "h", Task: "t", TTL: time.Minute}
	known := ps[2] // the last slot: the others have waited longer
	l, err := b.LeaseProxy(ctx, req, known.ID)
	if err != nil {
		t.Fatal(err)
	}
	h, err := b.HoldExit(ctx, ExitRequest{Site: "wb", IP: "10.0.0.7", Holder: "t", TTL: time.Minute, Slot: known.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseExit(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l, OK(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	ck.advance(2 * time.Second)
	got := map[string]bool{}
	for range 2 {
		l, err := b.Lease(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got[l.Proxy.ID] = true
	}
	if !got[known.ID] || !got[ps[3].ID] {
		t.Fatalf("leased %v, want the slot on a known exit and the plain proxy before a fresh slot", got)
	}
	var nr *NotReadyError
	if _, err := b.Lease(ctx, req); !errors.As(err, &nr) || nr.Wait > time.Second {
		t.Fatalf("third lease: %v, want *NotReadyError: the fresh slots passed over come back a pace later", err)
	}
	ck.advance(time.Second)
	l, err = b.Lease(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if l.Proxy.ID != ps[0].ID && l.Proxy.ID != ps[1].ID {
		t.Fatalf("leased %s, want a fresh slot", l.Proxy.ID)
	}
	ck.advance(time.Second)
	if _, err := b.Lease(ctx, req); !errors.As(err, &nr) {
		t.Fatalf("lease while a fresh slot draws its exit: %v, want *NotReadyError (one draw at a time)", err)
	}
	if _, err := b.HoldExit(ctx, ExitRequest{Site: "wb", IP: "10.0.0.8", Holder: "t", TTL: time.Minute, Slot: l.Proxy.ID}); err != nil {
		t.Fatal(err)
	}
	ck.advance(time.Second)
	next, err := b.Lease(ctx, req)
	if err != nil {
		t.Fatalf("lease once the draw held its exit: %v", err)
	}
	if next.Proxy.ID == l.Proxy.ID || next.Proxy.Gateway == nil || next.Proxy.ID == known.ID {
		t.Errorf("leased %s, want the other fresh slot", next.Proxy.ID)
	}
}
