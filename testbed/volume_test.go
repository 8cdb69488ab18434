package testbed

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestVolumeRuleBansOnTheRequestPastTheBudget: within the window the
// (Requests+1)th request is punished with the site's punishment and
// starts a ban that Check counts; the same number of requests spread
// over more than the window is never punished, and the default rules
// have no volume rule.
func TestVolumeRuleBansOnTheRequestPastTheBudget(t *testing.T) {
	const requests, window, step = 3, 10 * time.Second, 2 * time.Second
	clock := newFakeClock()
	rules := SiteRules{MinInterval: time.Second, Punishment: Status439, BanFor: time.Minute,
		Volume: &VolumeRule{Requests: requests, Window: window}}
	tb := startTB(t, Config{Now: clock.Now, Sites: map[string]SiteRules{SiteAvito: rules}})
	page := tb.SiteURL(SiteAvito) + "/moskva?q=чай"
	const busy, spread = "127.0.0.91", "127.0.0.92"
	rude, calm := clientFrom(t, busy, false), clientFrom(t, spread, false)
	for i := range requests {
		if a := get(t, rude, page); a.status != http.StatusOK {
			t.Fatalf("request %d of %d within the window: status %d, want 200", i+1, requests, a.status)
		}
		clock.Advance(step)
	}
	if a := get(t, rude, page); a.status != 439 {
		t.Fatalf("request %d within %s: status %d, want 439", requests+1, window, a.status)
	}
	if !tb.Banned(SiteAvito, busy) {
		t.Error("the busy IP is not banned")
	}
	for i := range 4 * requests {
		if a := get(t, calm, page); a.status != http.StatusOK {
			t.Fatalf("spread request %d: status %d, want 200", i+1, a.status)
		}
		clock.Advance(window/requests + time.Millisecond)
	}
	r := tb.Check()
	if r.BansPerIP[busy] != 1 || r.BansPerIP[spread] != 0 {
		t.Errorf("bans per IP = %v, want 1 for %s and none for %s", r.BansPerIP, busy, spread)
	}
	want := []Verdict{VerdictOK, VerdictOK, VerdictOK, VerdictVolume}
	if got := verdictsOf(tb, busy); !slices.Equal(got, want) {
		t.Errorf("verdicts of %s = %v, want %v", busy, got, want)
	}
	for name, r := range DefaultRules() {
		if r.Volume != nil {
			t.Errorf("%s: default rules have a volume rule", name)
		}
	}
}

// verdictsOf are the verdicts of ip's requests, in log order.
func verdictsOf(tb *Testbed, ip string) []Verdict {
	var vs []Verdict
	for _, e := range tb.Log.Entries() {
		if e.IP == ip {
			vs = append(vs, e.Verdict)
		}
	}
	return vs
}

func TestVolumeRulePresets(t *testing.T) {
	real := AvitoVolume()
	small := real.Scaled(60)
	if small != (VolumeRule{Requests: 10, Window: 15 * time.Second}) {
		t.Errorf("AvitoVolume().Scaled(60) = %+v", small)
	}
	if real.Rate() != small.Rate() {
		t.Errorf("scaling changed the rate: %g, %g", real.Rate(), small.Rate())
	}
	if at := time.Duration(real.Requests) * DefaultRules()[SiteAvito].MinInterval; at < 10*time.Minute || at > 15*time.Minute {
		t.Errorf("at Avito's min interval the ban comes after %s, want 10-15 minutes", at)
	}
	r := AvitoVolumeRules(small)
	if r.Volume == nil || *r.Volume != small || r.BanFor != 4*small.Window || r.Punishment != BlockPage429 {
		t.Errorf("AvitoVolumeRules = %+v", r)
	}
}

// TestVolumeRuleChangesMidRun: SetVolume tightens a site's hidden rule
// from now on (an IP that sent 3 of a budget of 5 is banned at its
// next), and VolumeTruth reports the rule now and the change.
func TestVolumeRuleChangesMidRun(t *testing.T) {
	clock := newFakeClock()
	rules := SiteRules{MinInterval: time.Second, Punishment: Status439, BanFor: time.Minute,
		Volume: &VolumeRule{Requests: 5, Window: time.Minute}}
	tb := startTB(t, Config{Now: clock.Now, Sites: map[string]SiteRules{SiteAvito: rules}})
	page := tb.SiteURL(SiteAvito) + "/moskva?q=чай"
	c := clientFrom(t, "127.0.0.93", false)
	for i := range 3 {
		if a := get(t, c, page); a.status != http.StatusOK {
			t.Fatalf("request %d: status %d, want 200", i+1, a.status)
		}
		clock.Advance(2 * time.Second)
	}
	tight := VolumeRule{Requests: 3, Window: time.Minute}
	tb.SetVolume(SiteAvito, &tight)
	if a := get(t, c, page); a.status != 439 {
		t.Fatalf("the 4th request after the budget fell to 3: status %d, want 439", a.status)
	}
	now, changes := tb.VolumeTruth()
	if now[SiteAvito] != tight || len(changes) != 1 || changes[0].Site != SiteAvito || *changes[0].Rule != tight || !changes[0].At.Equal(clock.Now()) {
		t.Fatalf("truth %v, changes %+v; want the tightened rule and its change", now, changes)
	}
}
