package testbed

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestHiddenGapLimitsThenBans: a request sooner than the hidden gap is
// answered 429 with a Retry-After and no ban; one back within that
// Retry-After is banned; an IP at the gap is never limited; the gap
// changes mid-run, and the truth lists every setting.
func TestHiddenGapLimitsThenBans(t *testing.T) {
	clock := newFakeClock()
	rules := DefaultRules()[SiteWildberries]
	rules.MinInterval = 0
	rules.Hidden = &HiddenGap{Gap: 500 * time.Millisecond, RetryAfter: 2 * time.Second}
	tb := startTB(t, Config{Now: clock.Now, Sites: map[string]SiteRules{SiteWildberries: rules}})
	page := tb.SiteURL(SiteWildberries) + "/__internal/u-search/exactmatch/ru/common/v18/search?query=tea&page=1"
	const fast, calm = "127.0.0.93", "127.0.0.94"
	rude, polite := clientFrom(t, fast, false), clientFrom(t, calm, false)
	get(t, rude, page)
	clock.Advance(100 * time.Millisecond)
	a := get(t, rude, page)
	if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") != "2" {
		t.Fatalf("too soon: status %d Retry-After %q, want 429 and 2", a.status, a.header.Get("Retry-After"))
	}
	if tb.Banned(SiteWildberries, fast) {
		t.Fatal("one 429 banned the IP")
	}
	clock.Advance(time.Second) // back within the Retry-After
	get(t, rude, page)
	if !tb.Banned(SiteWildberries, fast) {
		t.Fatal("an IP back within its Retry-After is not banned")
	}
	for range 5 {
		if a := get(t, polite, page); a.status != http.StatusOK {
			t.Fatalf("at the gap: status %d, want 200", a.status)
		}
		clock.Advance(500 * time.Millisecond)
	}
	if err := tb.SetHiddenGap(SiteWildberries, time.Second); err != nil {
		t.Fatal(err)
	}
	if a := get(t, polite, page); a.status != http.StatusTooManyRequests {
		t.Fatalf("500ms after the gap went to 1s: status %d, want 429", a.status)
	}
	want := []Verdict{VerdictOK, VerdictRateLimited, VerdictHiddenBan}
	if got := verdictsOf(tb, fast); !slices.Equal(got, want) {
		t.Errorf("verdicts of %s = %v, want %v", fast, got, want)
	}
	gaps := tb.HiddenGaps()
	if len(gaps) != 2 || gaps[0].Gap != 500*time.Millisecond || gaps[1].Gap != time.Second {
		t.Fatalf("truth: %+v, want 500ms then 1s", gaps)
	}
	if r := tb.Check(); r.BansPerIP[fast] != 1 || r.BansPerIP[calm] != 0 {
		t.Fatalf("bans per IP %v, want 1 for %s only", r.BansPerIP, fast)
	}
}
