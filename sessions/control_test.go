package sessions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"crawlq/detect"
	"crawlq/sessions"
	"crawlq/testbed"
)

// itemSearches returns the URLs of n Wildberries searches with items on
// their first page.
func (w *confirmWorld) itemSearches(t *testing.T, n int) []string {
	t.Helper()
	const wb = testbed.SiteWildberries
	seen := map[string]bool{}
	var out []string
	for _, p := range w.tb.Catalog.Products(wb) {
		for _, q := range strings.Fields(strings.ToLower(p.Title)) {
			if len(out) == n {
				return out
			}
			if len([]rune(q)) < 4 || seen[q] || len(w.tb.Catalog.Search(wb, q, 1)) == 0 {
				continue
			}
			seen[q] = true
			out = append(out, w.tb.SiteURL(wb)+testbed.WBSearchPath+"?query="+q+"&page=1")
		}
	}
	t.Fatalf("the catalog has %d of the %d searches with items asked for", len(out), n)
	return nil
}

// TestWitnessAnswersTheControl (issue 36.8): a second proxy that agrees
// with an empty answer counts only once it answers the site's control (a
// search known to have items) with items.
//
//   - A true "nothing found", two clean proxies: the witness agrees and
//     its control has items: agreed, two requests (the answer, the
//     control), no ban.
//   - Two proxies soft-banned at once (the testbed's soft ban on both
//     IPs), a search with items: the first answer is the empty shape and
//     the witness agrees, but its control comes back empty too, so the
//     witness is quarantined as soft-banned and the agreement does not
//     count; no other proxy is free, so the answer is deferred, never
//     agreed. Without the control it was agreed: a false "not found".
func TestWitnessAnswersTheControl(t *testing.T) {
	ctx := context.Background()
	t.Run("true nothing found", func(t *testing.T) {
		w := newConfirmWorld(t, 2, 0)
		ctl := sessions.Control{Kind: "search", URL: w.itemSearches(t, 1)[0], Page: 1}
		s, first := w.suspect(t, "job")
		c, err := s.Confirm(ctx, w.f, w.d, "search", w.url, 1, first, ctl, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Decision != detect.Agreed || c.Action != sessions.Continue || c.Controls != 1 || c.WitnessBans != 0 || c.Requests != 2 {
			t.Errorf("confirmation %+v: want agreed, the session going on, one control answered with items, 2 requests", c)
		}
		w.noBans(t)
	})
	t.Run("two soft-banned IPs", func(t *testing.T) {
		w := newConfirmWorld(t, 2, 0)
		for _, fp := range w.tb.Farm.Proxies() {
			w.tb.SoftBan(testbed.SiteWildberries, fp.IP, 0)
		}
		urls := w.itemSearches(t, 2)
		s, first := w.suspectAt(t, "job", urls[0])
		c, err := s.Confirm(ctx, w.f, w.d, "search", urls[0], 1, first, sessions.Control{Kind: "search", URL: urls[1], Page: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Decision == detect.Agreed || !c.Deferred || c.Controls != 1 || c.WitnessBans != 1 {
			t.Errorf("confirmation %+v: want no agreement (deferred: no other witness free), one control, its witness quarantined", c)
		}
		st, err := w.b.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		banned := 0
		for _, p := range st.Proxies {
			if ps := p.Sites[testbed.SiteWildberries]; ps.Banned > 0 {
				banned++
				if !strings.Contains(ps.LastBan, "control") {
					t.Errorf("proxy %s banned for %q, want the control's soft ban", p.ID, ps.LastBan)
				}
			}
		}
		if banned != 1 {
			t.Errorf("%d proxies banned, want the witness alone", banned)
		}
	})
}

// TestWitnessBanCorroborated: with three proxies, an automatic soft ban
// of the first answer's IP and its pair (testbed.SoftBan.Pair: the next
// other IP asking for what it hid is banned by that request), the first
// witness agrees, its control comes back empty and it is quarantined; the
// next witness, clean, has the items (contradicted: the first proxy is
// quarantined) and asks the control too, which has items: the witness's
// ban corroborated. Two requests of each witness, three bans in all
// counting nobody clean.
func TestWitnessBanCorroborated(t *testing.T) {
	ctx := context.Background()
	rules := testbed.DefaultRules()[testbed.SiteWildberries]
	rules.SoftBan = &testbed.SoftBan{Every: 1, Gap: time.Second, For: time.Minute, Max: 1, Pair: true}
	w := newConfirmWorldOf(t, testbed.Config{Proxies: 3, Sites: map[string]testbed.SiteRules{testbed.SiteWildberries: rules}}, 0)
	urls := w.itemSearches(t, 2)
	s, first := w.suspectAt(t, "job", urls[0])
	first0 := s.ProxyID()
	ctl := sessions.Control{Kind: "search", URL: urls[1], Page: 1}
	c, err := s.Confirm(ctx, w.f, w.d, "search", urls[0], 1, first, ctl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Decision != detect.Contradicted || c.WitnessBans != 1 || c.Controls != 2 || !c.Corroborated || c.Requests != 4 {
		t.Errorf("confirmation %+v: want contradicted after one witness ban, two controls, the ban corroborated, 4 requests", c)
	}
	st, err := w.b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Proxies {
		ps := p.Sites[testbed.SiteWildberries]
		switch {
		case p.ID == first0 && ps.Banned != 1:
			t.Errorf("the first proxy %s: %d bans, want 1 (contradicted)", p.ID, ps.Banned)
		case p.ID == c.SecondProxy.ID && ps.Banned != 0:
			t.Errorf("the clean witness %s banned (%s)", p.ID, ps.LastBan)
		case p.ID != first0 && p.ID != c.SecondProxy.ID && (ps.Banned != 1 || !strings.Contains(ps.LastBan, "control")):
			t.Errorf("the soft-banned witness %s: %d bans (%s), want the control's", p.ID, ps.Banned, ps.LastBan)
		}
	}
}

// noBans fails the test if any proxy was banned.
func (w *confirmWorld) noBans(t *testing.T) {
	t.Helper()
	st, err := w.b.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Proxies {
		if ps := p.Sites[testbed.SiteWildberries]; ps.Banned != 0 {
			t.Errorf("proxy %s banned (%s), want none", p.ID, ps.LastBan)
		}
	}
}
