package truth

import (
	"net/url"
	"time"

	"crawlq/proxies"
	"crawlq/testbed"
)

// Slack is how much earlier than a soft-banned answer a quarantine may be
// stamped and still count as its consequence: the broker stamps bans on
// Redis's clock, the sites their log on theirs.
const Slack = time.Second

// Report is a crawl's ban handling measured against the sites' truth.
type Report struct {
	// FalseQuarantines are quarantines of a proxy on a site that never
	// banned the proxy's IP (hard or soft): an answer judged a ban
	// although the site had not banned anyone.
	FalseQuarantines int64 `json:"false_quarantines"`
	// MissedSoftBans are soft-banned answers (the site hid the items)
	// that the crawl took as true results: no quarantine of the proxy on
	// the site followed them.
	MissedSoftBans int `json:"missed_soft_bans"`
	// NoResultAnswers are listing answers that truly had no items.
	NoResultAnswers int `json:"no_result_answers"`
	// SoftBannedAnswers are answers whose items a soft ban hid.
	SoftBannedAnswers int `json:"soft_banned_answers"`
}

// quarantine is one proxy's quarantines on one site.
type quarantine struct {
	count int64
	last  time.Time
}

// Score compares the log with the pool's ban counters.
func Score(entries []testbed.Entry, st *proxies.PoolStats) Report {
	qs := quarantines(st)
	banned := map[[2]string]bool{}
	var r Report
	for _, e := range entries {
		k := [2]string{e.Site, e.IP}
		if e.Verdict.Blocked() {
			banned[k] = true
		}
		switch e.Meant {
		case testbed.MeantEmpty:
			r.NoResultAnswers++
		case testbed.MeantBanned:
			r.SoftBannedAnswers++
			if q := qs[k]; q.count == 0 || q.last.Before(e.Start.Add(-Slack)) {
				r.MissedSoftBans++
			}
		}
	}
	for k, q := range qs {
		if !banned[k] {
			r.FalseQuarantines += q.count
		}
	}
	return r
}

// quarantines maps (site, proxy IP) to the proxy's ban counters there.
func quarantines(st *proxies.PoolStats) map[[2]string]quarantine {
	out := map[[2]string]quarantine{}
	if st == nil {
		return out
	}
	for _, p := range st.Proxies {
		host := hostOf(p.Masked)
		for site, s := range p.Sites {
			if s.Banned > 0 {
				out[[2]string{site, host}] = quarantine{count: s.Banned, last: s.LastBanAt}
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
