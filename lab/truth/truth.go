package truth

import (
	"net/url"
	"time"

	"crawlq/proxies"
	"crawlq/testbed"
)

// Report is a crawl's ban handling measured against the sites' truth.
type Report struct {
	// FalseQuarantines are quarantines of a proxy on a site that never
	// banned the proxy's IP (hard or soft): an answer judged a ban
	// although the site had not banned anyone.
	FalseQuarantines int64 `json:"false_quarantines"`
	// MissedSoftBans are soft-banned answers (the site hid the items)
	// that the crawl took as true results: no later answer to the same
	// request had the items. A crawl that does not take such an answer
	// asks again and gets them: from the second proxy that contradicts it
	// (and the first is quarantined), or in a retry after a worker died or
	// a confirmation stayed undecided.
	MissedSoftBans int `json:"missed_soft_bans"`
	// NoResultAnswers are listing answers that truly had no items.
	NoResultAnswers int `json:"no_result_answers"`
	// SoftBannedAnswers are answers whose items a soft ban hid.
	SoftBannedAnswers int `json:"soft_banned_answers"`
}

// Score compares the log with the pool's ban counters.
func Score(entries []testbed.Entry, st *proxies.PoolStats) Report {
	qs := quarantines(st)
	banned := map[[2]string]bool{}
	seen := map[string]bool{}
	lastItems := lastItemAnswers(entries)
	var r Report
	for _, e := range entries {
		k := [2]string{e.Site, e.IP}
		seen[e.IP] = true
		if e.Verdict.Blocked() {
			banned[k] = true
		}
		switch e.Meant {
		case testbed.MeantEmpty:
			r.NoResultAnswers++
		case testbed.MeantBanned:
			r.SoftBannedAnswers++
			if !lastItems[[2]string{e.Site, e.Path}].After(e.Start) {
				r.MissedSoftBans++
			}
		}
	}
	for k, q := range qs {
		// a proxy whose IP the sites never saw is one that learns its
		// exit (a modem, a gateway): its bans were on exit IPs the log
		// holds, not on its host, so they cannot be judged here
		if !banned[k] && seen[k[1]] {
			r.FalseQuarantines += q
		}
	}
	return r
}

// lastItemAnswers maps (site, request path) to the start of the last
// answer with items to it.
func lastItemAnswers(entries []testbed.Entry) map[[2]string]time.Time {
	out := map[[2]string]time.Time{}
	for _, e := range entries {
		k := [2]string{e.Site, e.Path}
		if e.Meant == testbed.MeantItems && e.Start.After(out[k]) {
			out[k] = e.Start
		}
	}
	return out
}

// quarantines maps (site, proxy IP) to the proxy's bans there.
func quarantines(st *proxies.PoolStats) map[[2]string]int64 {
	out := map[[2]string]int64{}
	if st == nil {
		return out
	}
	for _, p := range st.Proxies {
		host := hostOf(p.Masked)
		for site, s := range p.Sites {
			if s.Banned > 0 {
				out[[2]string{site, host}] = s.Banned
			}
		}
	}
	return out
}

// hostOf is the host of a masked proxy URL: the IP the sites see.
func hostOf(masked string) string {
	u, err := url.Parse(masked)
	if err != nil {
		return masked
	}
	return u.Hostname()
}
