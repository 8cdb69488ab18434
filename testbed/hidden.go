package testbed

import (
	"fmt"
	"time"
)

// VerdictRateLimited: the IP came sooner than the site's hidden gap
// (HiddenGap) after its last request; answered 429 with Retry-After, no
// ban (yet).
const VerdictRateLimited Verdict = "rate_limited"

// VerdictHiddenBan: the IP kept going after the hidden gap's 429s (came
// back within their Retry-After, or was limited Strikes times within
// StrikeWindow); punished, and a ban starts.
const VerdictHiddenBan Verdict = "hidden_ban"

// HiddenGap is a site's pace per IP that crawlq is not told (its
// configuration is written without it): a request sooner than Gap after
// the same IP's last request to the site is answered 429 with a
// Retry-After; an IP that keeps going is banned for the site's BanFor.
// It models a site such as Wildberries, which answers 429 to an IP that
// goes too fast at a pace it does not publish (issue 39). SetHiddenGap
// changes it mid-run; HiddenGaps is the truth a bench reads.
type HiddenGap struct {
	// Gap is the least time between two request starts of one IP.
	Gap time.Duration `json:"gap"`
	// RetryAfter is the Retry-After of a 429 (whole seconds on the
	// wire, at least 1). Default 1s.
	RetryAfter time.Duration `json:"retry_after"`
	// Strikes 429s of one IP within StrikeWindow ban it. Defaults 3 and
	// 1 min.
	Strikes      int           `json:"strikes"`
	StrikeWindow time.Duration `json:"strike_window"`
}

func (h HiddenGap) withDefaults() HiddenGap {
	if h.RetryAfter <= 0 {
		h.RetryAfter = time.Second
	}
	if h.Strikes <= 0 {
		h.Strikes = 3
	}
	if h.StrikeWindow <= 0 {
		h.StrikeWindow = time.Minute
	}
	return h
}

// HiddenChange is one setting of a site's hidden gap: the run's truth.
type HiddenChange struct {
	Site string        `json:"site"`
	At   time.Time     `json:"at"`
	Gap  time.Duration `json:"gap"`
}

// hidden judges a request against the site's hidden gap: "" when it
// passes.
func (g *guard) hidden(h *HiddenGap, st *ipState, now time.Time, r SiteRules) Verdict {
	if h == nil || st.last.IsZero() {
		return ""
	}
	if now.Before(st.limitedUntil) { // back within its Retry-After
		g.ban(st, r, now)
		return VerdictHiddenBan
	}
	if now.Sub(st.last) >= h.Gap {
		return ""
	}
	kept := st.strikes[:0]
	for _, t := range st.strikes {
		if now.Sub(t) < h.StrikeWindow {
			kept = append(kept, t)
		}
	}
	st.strikes = append(kept, now)
	if len(st.strikes) >= h.Strikes {
		g.ban(st, r, now)
		return VerdictHiddenBan
	}
	st.limitedUntil = now.Add(h.RetryAfter)
	return VerdictRateLimited
}

// SetHiddenGap sets (gap > 0) or removes (0) site's hidden gap from now
// on, keeping its other settings.
func (tb *Testbed) SetHiddenGap(site string, gap time.Duration) error {
	g := tb.guard
	g.mu.Lock()
	defer g.mu.Unlock()
	r, ok := g.rules[site]
	if !ok {
		return fmt.Errorf("testbed: no site %q", site)
	}
	if gap <= 0 {
		r.Hidden = nil
	} else {
		h := HiddenGap{}
		if r.Hidden != nil {
			h = *r.Hidden
		}
		h.Gap = gap
		h = h.withDefaults()
		r.Hidden = &h
	}
	g.rules[site] = r
	g.hiddenLog = append(g.hiddenLog, HiddenChange{Site: site, At: tb.now(), Gap: max(gap, 0)})
	return nil
}

// HiddenGaps is every setting of the sites' hidden gaps, in order: the
// ones the testbed started with, then each SetHiddenGap.
func (tb *Testbed) HiddenGaps() []HiddenChange {
	g := tb.guard
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]HiddenChange(nil), g.hiddenLog...)
}

// logHidden records the hidden gaps the sites start with.
func (g *guard) logHidden(now time.Time) {
	for site, r := range g.rules {
		if r.Hidden != nil {
			g.hiddenLog = append(g.hiddenLog, HiddenChange{Site: site, At: now, Gap: r.Hidden.Gap})
		}
	}
}
