package testbed

import "time"

// VerdictVolume: the IP sent more requests to the site within the
// volume window than the site allows (VolumeRule); punished, and a ban
// starts.
const VerdictVolume Verdict = "volume"

// VolumeRule bans an IP by the volume of its requests, however politely
// spaced: an IP that sends more than Requests requests to the site
// within Window is punished (the site's Punishment) and banned for the
// site's BanFor. Requests refused because the IP was already banned do
// not count.
//
// It models Avito in 2025–2026 as public scrapers report it: parsing at
// a steady pace works for 10–15 minutes, then the IP is banned (429 with
// the "проблема с IP" page, or status 439) while the session cookie
// stays valid, and what works is a mobile proxy whose IP is changed on
// a block (Duff89/parser_avito docs/ANTIBLOCK.md @43460e7 and
// parser/proxies/proxy.py @1de35bf: MobileProxy.handle_block calls the
// change-IP URL; parser/http/client.py @a3ebe93 treats 403/429/439 as a
// block; read 2026-12-05). The figures are those reports', not a
// measured limit.
type VolumeRule struct {
	// Requests is the most requests one IP may send within Window; the
	// next one is punished. At least 1.
	Requests int `json:"requests"`
	// Window is the sliding window the requests are counted in.
	Window time.Duration `json:"window"`
}

// AvitoVolume is the realistic rule: 600 requests within 15 minutes, so
// an IP at Avito's polite pace of one request a second is banned after
// 10 minutes, and one at a request every 1.5 s after 15 (the reported
// "stable for 10–15 minutes").
func AvitoVolume() VolumeRule { return VolumeRule{Requests: 600, Window: 15 * time.Minute} }

// Scaled divides both the request budget and the window by k (k ≥ 1),
// keeping the sustained rate an IP may go at (Requests / Window) while
// making a ban come k times sooner: AvitoVolume().Scaled(60) allows 10
// requests in 15 s, for tests and benches. The budget stays at least 1.
func (v VolumeRule) Scaled(k int) VolumeRule {
	if k <= 1 {
		return v
	}
	return VolumeRule{Requests: max(v.Requests/k, 1), Window: v.Window / time.Duration(k)}
}

// Rate is the sustained request rate per second the rule allows one IP.
func (v VolumeRule) Rate() float64 {
	if v.Window <= 0 {
		return 0
	}
	return float64(v.Requests) / v.Window.Seconds()
}

// AvitoVolumeRules are Avito's default rules with the volume rule v and
// a ban of four windows (an hour for AvitoVolume; how long Avito's IP
// ban lasts is not published, only that waiting a few minutes does not
// lift it).
func AvitoVolumeRules(v VolumeRule) SiteRules {
	r := DefaultRules()[SiteAvito]
	r.Volume = &v
	r.BanFor = 4 * v.Window
	return r
}

// volumeWindow keeps the start times of one IP's recent requests to one
// site, oldest first, at most Requests+1 of them.
type volumeWindow []time.Time

// add records a request at now and reports whether it exceeds v.
func (w *volumeWindow) add(now time.Time, v VolumeRule) bool {
	kept := (*w)[:0]
	for _, t := range *w {
		if now.Sub(t) < v.Window {
			kept = append(kept, t)
		}
	}
	kept = append(kept, now)
	if len(kept) > v.Requests+1 {
		kept = kept[len(kept)-v.Requests-1:]
	}
	*w = kept
	return len(kept) > v.Requests
}

// VolumeChange is one change of a site's hidden volume rule (SetVolume).
type VolumeChange struct {
	Site string    `json:"site"`
	At   time.Time `json:"at"`
	// Rule is the rule from At on; nil: none.
	Rule *VolumeRule `json:"rule"`
}

// SetVolume changes site's hidden volume rule from now on (nil: none):
// the site tightens or loosens mid-run, as crawlq cannot know. Requests
// already made stay counted in their window; the change is recorded
// for VolumeTruth.
func (tb *Testbed) SetVolume(site string, v *VolumeRule) {
	if v != nil {
		c := *v
		v = &c
	}
	g := tb.guard
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.rules[site]
	r.Volume = v
	g.rules[site] = r
	g.volumeLog = append(g.volumeLog, VolumeChange{Site: site, At: tb.now(), Rule: v})
}

// VolumeTruth is every site's hidden volume rule now (sites without one
// left out) and the changes SetVolume made, in order: what a bench
// compares a learned budget with.
func (tb *Testbed) VolumeTruth() (now map[string]VolumeRule, changes []VolumeChange) {
	g := tb.guard
	g.mu.Lock()
	defer g.mu.Unlock()
	now = map[string]VolumeRule{}
	for site, r := range g.rules {
		if r.Volume != nil {
			now[site] = *r.Volume
		}
	}
	return now, append([]VolumeChange(nil), g.volumeLog...)
}
