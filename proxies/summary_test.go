package proxies

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/internal/testredis"
)

// TestStatsBeforeAnyLease: right after an import, with no lease yet (no
// worker ran), Stats lists every imported proxy with the sites it may
// serve, and both Stats and Summary report the configured sites, every
// proxy ready.
func TestStatsBeforeAnyLease(t *testing.T) {
	cfg := Config{Sites: map[string]SiteConfig{"wb": {}, "ozon": {}}}
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), cfg)
	ctx := context.Background()
	ps := testProxies(t, 2)
	ps[1].Sites = []string{"ozon"}
	if _, err := b.Import(ctx, ps, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantSites := map[string]SiteStats{
		"wb":   {Ready: 1, ByClass: map[Class]StateCounts{Datacenter: {Ready: 1}}},
		"ozon": {Ready: 2, ByClass: map[Class]StateCounts{Datacenter: {Ready: 2}}},
	}
	if d := cmp.Diff(wantSites, st.Sites); d != "" {
		t.Errorf("Stats sites (-want +got):\n%s", d)
	}
	got := map[string][]string{}
	for _, p := range st.Proxies {
		got[p.ID] = append([]string{join(p.Allowed)}, sortedSites(p.Sites)...)
	}
	want := map[string][]string{ps[0].ID: {"*", "ozon", "wb"}, ps[1].ID: {"ozon", "ozon"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Stats proxies: allowed then site rows (-want +got):\n%s", d)
	}
	sum, err := b.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantSites, sum.Sites); d != "" {
		t.Errorf("Summary sites (-want +got):\n%s", d)
	}
	if sum.Total != 2 {
		t.Errorf("Summary total = %d, want 2", sum.Total)
	}
}

// TestSummaryMatchesStats drives every state on two sites, one of them
// re-imported since (its sets out of date), and checks Summary counts
// what Stats counts.
func TestSummaryMatchesStats(t *testing.T) {
	ck := &clock{}
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), ck.config(Config{Default: SiteConfig{MinInterval: time.Hour}}))
	ctx := context.Background()
	ps := testProxies(t, 9)
	if _, err := b.Import(ctx, ps[:6], ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Import(ctx, ps[6:8], ImportOptions{Class: Residential}); err != nil {
		t.Fatal(err)
	}
	lease := func(site string, c Class) *Lease {
		t.Helper()
		l, err := b.Lease(ctx, LeaseRequest{Site: site, Class: c, Holder: "srv", Task: "t", TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, o := range []Outcome{OK(time.Millisecond), Banned("captcha"), Failed("timeout")} {
		if err := b.Release(ctx, lease("wb", Datacenter), o); err != nil {
			t.Fatal(err)
		}
	}
	lease("wb", Datacenter)
	lease("wb", Residential)
	if err := b.Release(ctx, lease("ozon", Datacenter), Banned("block page")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Import(ctx, ps[8:], ImportOptions{}); err != nil { // every set out of date
		t.Fatal(err)
	}
	for _, step := range []string{"out of date", "synced"} {
		st, err := b.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := b.Summary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(st.Sites, sum.Sites); d != "" {
			t.Errorf("%s: Summary (-stats +summary):\n%s", step, d)
		}
		if st.Sites["wb"].Quarantined != 1 || st.Sites["wb"].Leased != 2 || st.Sites["wb"].Cooling != 2 {
			t.Errorf("%s: wb = %+v, want 2 leased, 2 cooling, 1 quarantined", step, st.Sites["wb"])
		}
		lease("ozon", Datacenter) // syncs ozon's datacenter set
	}
}

func join(s []string) string {
	if len(s) == 0 {
		return "*"
	}
	return strings.Join(s, ",")
}

func sortedSites(m map[string]ProxySiteStats) []string {
	var out []string
	for s := range m {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
