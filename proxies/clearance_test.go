package proxies

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/internal/testredis"
)

// TestLeasePrefersClearedProxies: a lease takes a ready proxy that holds
// the site's clearance before any other, waits for one that is ready
// within the site's clearance wait rather than take a proxy without one,
// and goes on as usual when the marked proxies are leased, quarantined,
// forgotten or their marks have ended, or on a site without marks.
func TestLeasePrefersClearedProxies(t *testing.T) {
	ck := &clock{}
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), ck.config(Config{
		Default: SiteConfig{MinInterval: time.Second, ClearanceWait: 2 * time.Second},
		Sites:   map[string]SiteConfig{"av": {ClearanceWait: -1}},
	}))
	ps := importN(t, b, 8, ImportOptions{})
	ctx := context.Background()
	mark := func(site string, i int, ttl time.Duration) {
		t.Helper()
		if err := b.MarkCleared(ctx, site, ps[i].ID, ttl); err != nil {
			t.Fatal(err)
		}
	}
	lease := func(site string) *Lease {
		t.Helper()
		l, err := b.Lease(ctx, LeaseRequest{Site: site, Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
		if err != nil {
			t.Fatalf("lease %s: %v", site, err)
		}
		return l
	}
	release := func(l *Lease, o Outcome) {
		t.Helper()
		if err := b.Release(ctx, l, o); err != nil {
			t.Fatal(err)
		}
	}
	name := map[string]int{}
	for i, p := range ps {
		name[p.ID] = i
	}
	mark("wb", 3, time.Minute)
	mark("wb", 4, time.Minute)
	mark("wb", 5, time.Millisecond)
	ck.advance(10 * time.Millisecond) // 5's mark has ended

	a, c := lease("wb"), lease("wb")
	if got := []int{name[a.Proxy.ID], name[c.Proxy.ID]}; !(got[0] == 3 && got[1] == 4 || got[0] == 4 && got[1] == 3) {
		t.Fatalf("first two leases took proxies %v; want the cleared 3 and 4", got)
	}
	other := lease("wb") // both cleared proxies are leased: any other
	if i := name[other.Proxy.ID]; i == 3 || i == 4 {
		t.Fatalf("third lease took proxy %d, which is leased", i)
	}
	release(other, OK(time.Millisecond))

	// 3 is ready again in 1s (min interval), within the 2s wait: the
	// lease waits for it although other proxies are ready now
	three := a
	if name[a.Proxy.ID] != 3 {
		three, c = c, a
	}
	release(three, OK(time.Millisecond))
	_, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	var nr *NotReadyError
	if !errors.As(err, &nr) || nr.Wait <= 0 || nr.Wait > time.Second+10*time.Millisecond || nr.Exhausted {
		t.Fatalf("lease while cleared proxy 3 cools down: %v; want not ready for at most 1s", err)
	}
	if l := lease("oz"); l == nil { // another site has no marks: no wait
		t.Fatal("no lease on oz")
	} else {
		release(l, OK(time.Millisecond))
	}
	ck.advance(nr.Wait)
	again := lease("wb")
	if name[again.Proxy.ID] != 3 {
		t.Fatalf("after the wait the lease took proxy %d; want the cleared 3", name[again.Proxy.ID])
	}

	// a banned cleared proxy is quarantined: not waited for, not taken
	release(c, Banned("captcha"))
	release(again, OK(time.Millisecond))
	if err := b.ForgetCleared(ctx, "wb", ps[3].ID); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		l := lease("wb")
		if i := name[l.Proxy.ID]; i == 3 || i == 4 {
			t.Fatalf("lease took proxy %d: 3 is forgotten and cooling down, 4 quarantined", i)
		}
		release(l, OK(time.Millisecond))
	}

	// a site whose clearance wait is negative takes a ready proxy now
	mark("av", 6, time.Minute)
	l := lease("av")
	if name[l.Proxy.ID] != 6 {
		t.Fatalf("av lease took proxy %d; want the cleared 6", name[l.Proxy.ID])
	}
	release(l, OK(time.Millisecond))
	if l := lease("av"); name[l.Proxy.ID] == 6 {
		t.Fatal("av lease took 6 while it cools down")
	}
}

// TestClearedCountsLiveMarksOfThePool: Summary, Stats and a
// FallbackBroker's Stats count per site the proxies whose clearance mark
// has not ended, leased ones too and outside the state sums; not a mark
// that ended (still in the set, not yet pruned), nor one of a removed
// proxy, which Remove drops and MarkCleared no longer makes.
func TestClearedCountsLiveMarksOfThePool(t *testing.T) {
	ck := &clock{}
	rdb := testredis.Client(t, testredis.DBProxies)
	b := NewRedisBroker(rdb, ck.config(Config{Sites: map[string]SiteConfig{"av": {}}}))
	ps := importN(t, b, 6, ImportOptions{})
	ctx := context.Background()
	mark := func(site string, i int, ttl time.Duration) {
		t.Helper()
		if err := b.MarkCleared(ctx, site, ps[i].ID, ttl); err != nil {
			t.Fatal(err)
		}
	}
	mark("wb", 4, time.Minute)
	mark("wb", 0, time.Minute)
	mark("wb", 1, time.Minute)
	mark("oz", 3, time.Minute)
	for _, l := range []struct {
		site string
		i    int
	}{{"wb", 0}, {"oz", 3}} { // a cleared proxy leased is counted in both
		if _, err := b.LeaseProxy(ctx, LeaseRequest{Site: l.site, Holder: "h", Task: "t", TTL: time.Minute}, ps[l.i].ID); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := b.Remove(ctx, ps[4].ID); err != nil || n != 1 {
		t.Fatalf("Remove = %d, %v; want 1", n, err)
	}
	mark("wb", 2, time.Millisecond)
	ck.advance(10 * time.Millisecond) // 2's mark has ended
	mark("wb", 4, time.Minute)        // removed: not marked (and nothing pruned)
	if n := rdb.ZCard(ctx, b.k.cleared("wb")).Val(); n != 3 {
		t.Fatalf("wb's cleared set holds %d marks, want 3: 0 and 1, and 2's ended one", n)
	}

	want := map[string]int{"wb": 2, "oz": 1, "av": 0}
	fb := NewFallbackBroker(b, FallbackConfig{ServerID: "a"})
	for i, step := range []string{"out of date", "synced"} {
		st, err := b.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := b.Summary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fst, err := fb.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name  string
			sites map[string]SiteStats
		}{{"Stats", st.Sites}, {"Summary", sum.Sites}, {"FallbackBroker.Stats", fst.Sites}} {
			if d := cmp.Diff(want, cleared(tc.sites)); d != "" {
				t.Errorf("%s: %s cleared per site (-want +got):\n%s", step, tc.name, d)
			}
		}
		if d := cmp.Diff(st.Sites, sum.Sites); d != "" {
			t.Errorf("%s: Summary (-stats +summary):\n%s", step, d)
		}
		if wb := st.Sites["wb"]; wb.Ready+wb.Leased+wb.Cooling+wb.Quarantined != 5 || wb.Leased != 1+i {
			t.Errorf("%s: wb = %+v; want 5 proxies by state, %d leased", step, wb, 1+i)
		}
		for _, site := range []string{"wb", "oz"} { // syncs the sets Remove put out of date
			if _, err := b.Lease(ctx, LeaseRequest{Site: site, Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// cleared is the Cleared count of each site.
func cleared(sites map[string]SiteStats) map[string]int {
	out := map[string]int{}
	for site, st := range sites {
		out[site] = st.Cleared
	}
	return out
}
