package tasks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/sessions"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// modemVolume is the test's Avito volume rule: an IP that sends more than
// 8 requests within 20 s is banned.
var modemVolume = testbed.VolumeRule{Requests: 8, Window: 20 * time.Second}

// modemTestbed is two modems (a change a second at most, 300 ms to
// settle) in front of an Avito that bans by volume, paced at 150 ms a
// proxy; rotateAfter is the registry's rotate_after for Avito.
func modemTestbed(t *testing.T, rotateAfter int) (*testbed.Testbed, *site.Registry) {
	t.Helper()
	rules := testbed.AvitoVolumeRules(modemVolume)
	rules.MinInterval = 100 * time.Millisecond
	tb, err := testbed.Start(context.Background(), testbed.Config{Proxies: 1, Seed: 13,
		Sites:  map[string]testbed.SiteRules{testbed.SiteAvito: rules},
		Modems: &testbed.ModemConfig{N: 2, Exits: 16, MinInterval: time.Second, Settle: 300 * time.Millisecond, Seed: 13, Key: masktest.ChangeKey}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	reg, err := testbedRegistry(tb.Sites())
	if err != nil {
		t.Fatal(err)
	}
	err = reg.Apply(site.Config{Sites: map[string]site.SiteConfig{testbed.SiteAvito: {MinInterval: "150ms", RotateAfter: site.Budget(rotateAfter)}}})
	if err != nil {
		t.Fatal(err)
	}
	return tb, reg
}

// modemWorkers runs two in-process workers on the modems; counts sums
// their rotation figures.
func modemWorkers(t *testing.T, tb *testbed.Testbed, reg *site.Registry) (counts func() sessions.ModemCounts) {
	t.Helper()
	ws := probingWorkers(t, tb, tasks.WorkerConfig{Concurrency: 4, Sites: reg, LeaseTTL: 5 * time.Second}, "mob-a", "mob-b")
	return func() sessions.ModemCounts {
		var sum sessions.ModemCounts
		for _, w := range ws {
			c := w.Sessions().ModemCounts()
			sum.Rotations, sum.Failed, sum.Refused, sum.Ended = sum.Rotations+c.Rotations, sum.Failed+c.Failed, sum.Refused+c.Refused, sum.Ended+c.Ended
		}
		return sum
	}
}

// avitoSearches are n two-page Avito searches for the catalog's words.
func avitoSearches(tb *testbed.Testbed, n int) []tasks.Job {
	var jobs []tasks.Job
	for _, p := range tb.Catalog.Products(testbed.SiteAvito)[:n] {
		q := strings.Fields(p.Title)[0]
		jobs = append(jobs, tasks.Job{Site: testbed.SiteAvito, Kind: "search", Request: site.Request{Query: q}, Pages: 2})
	}
	return jobs
}

// TestModemsRotateUnderWorkers: two workers crawl an Avito that bans an
// IP after 8 requests in 20 s through two modems. On a ban a modem
// changes its IP instead of sitting out a quarantine, so every job
// completes; with rotate_after 6 no IP is ever banned. Either way the
// site's log shows no I1 or I2 violation per IP, and the modem node's
// record no request while a modem settled and no change sooner than the
// provider allows.
func TestModemsRotateUnderWorkers(t *testing.T) {
	for _, tc := range []struct {
		name        string
		rotateAfter int
	}{{"on ban", 0}, {"rotate_after 6", 6}} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := testredis.Client(t, testredis.DBTasks)
			tb, reg := modemTestbed(t, tc.rotateAfter)
			importList(t, rdb, reg, strings.Join(tb.ModemLines(), "\n"))
			counts := modemWorkers(t, tb, reg)
			c, _ := enqueueAndWait(t, rdb, reg, avitoSearches(tb, 16))
			r := tb.Check()
			bans := 0
			for _, n := range r.BansPerIP {
				bans += n
			}
			st, mc := tb.Modems.Stats(), counts()
			t.Logf("%d jobs of %d completed; %d bans; modem node: %d rotations, %d refused; crawlq: %+v",
				c.Completed, c.Total, bans, len(st.Rotations), len(st.Refusals), mc)
			if c.Completed != c.Total || c.Total != 16 {
				t.Errorf("counts %+v, want all 16 completed", c)
			}
			if !r.OK() {
				t.Errorf("I1 %d, I2 %d violations: %v", r.I1Violations, r.I2Violations, r.Details)
			}
			if len(st.WhileSettling) != 0 || st.TooSoon != 0 {
				t.Errorf("%d requests through a settling modem, %d changes sooner than the provider allows", len(st.WhileSettling), st.TooSoon)
			}
			if len(st.Rotations) < 2 || mc.Rotations != int64(len(st.Rotations)) {
				t.Errorf("%d rotations on the node, %d by crawlq: want at least 2, the same", len(st.Rotations), mc.Rotations)
			}
			if tc.rotateAfter > 0 && bans != 0 {
				t.Errorf("rotate_after %d below the site's %d: %d bans, want 0\n%s", tc.rotateAfter, modemVolume.Requests, bans, ipHistory(tb, r.BansPerIP, st))
			}
			if tc.rotateAfter == 0 && bans == 0 {
				t.Errorf("no ban at all: %d requests of 2 IPs should pass the site's %d", len(tb.Log.Entries()), modemVolume.Requests)
			}
		})
	}
}

// ipHistory tells, for each banned IP, the modem rotations that gave it
// or took it and its requests to Avito: why it was banned.
func ipHistory(tb *testbed.Testbed, bans map[string]int, st testbed.ModemStats) string {
	var b strings.Builder
	for ip, n := range bans {
		if n == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s banned:\n", ip)
		for _, r := range st.Rotations {
			if r.From == ip || r.To == ip {
				fmt.Fprintf(&b, "  %s %s: %s -> %s (ready %s)\n", r.At.Format("15:04:05.000"), r.Modem, r.From, r.To, r.Ready.Format("15:04:05.000"))
			}
		}
		for _, e := range tb.Log.Entries() {
			if e.IP == ip && e.Site == testbed.SiteAvito {
				fmt.Fprintf(&b, "  %s %s %d %s\n", e.Start.Format("15:04:05.000"), e.Verdict, e.Status, e.Path)
			}
		}
	}
	return b.String()
}
