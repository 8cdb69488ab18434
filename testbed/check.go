package testbed

import (
	"fmt"
	"sort"
	"time"
)

// Report is what Check found in a request log.
type Report struct {
	// I1Violations counts requests that started while another request from
	// the same IP to the same site was still in flight.
	I1Violations int `json:"i1_violations"`
	// I2Violations counts request starts closer than the site's min
	// interval to the previous start from the same IP to the same site.
	I2Violations int `json:"i2_violations"`
	// Details describes each violation.
	Details []string `json:"details,omitempty"`
	// BansPerIP counts the bans each IP got (too fast, cross-site or
	// volume), over all sites.
	BansPerIP map[string]int `json:"bans_per_ip"`
	// BlockedPerIP counts each IP's refused requests.
	BlockedPerIP map[string]int `json:"blocked_per_ip"`
	// Requests is the number of entries checked (exempt ones left out).
	Requests int `json:"requests"`
}

// OK reports whether neither invariant was broken.
func (r Report) OK() bool { return r.I1Violations == 0 && r.I2Violations == 0 }

// Check looks for I1 and I2 violations in entries (testbed endpoints such
// as whoami are left out); minInterval gives each site's min_interval.
func Check(entries []Entry, minInterval map[string]time.Duration) Report {
	r := Report{BansPerIP: map[string]int{}, BlockedPerIP: map[string]int{}}
	groups := map[siteIP][]Entry{}
	for _, e := range entries {
		if e.Verdict == VerdictExempt {
			continue
		}
		r.Requests++
		countVerdict(&r, e)
		k := siteIP{e.Site, e.IP}
		groups[k] = append(groups[k], e)
	}
	for k, g := range groups {
		checkGroup(&r, k, g, minInterval[k.site])
	}
	sort.Strings(r.Details)
	return r
}

func countVerdict(r *Report, e Entry) {
	if e.Verdict.StartsBan() {
		r.BansPerIP[e.IP]++
	}
	if e.Verdict.Blocked() {
		r.BlockedPerIP[e.IP]++
	}
}

// checkGroup checks one (site, IP)'s requests in start order.
func checkGroup(r *Report, k siteIP, g []Entry, gap time.Duration) {
	sort.SliceStable(g, func(i, j int) bool { return g[i].Start.Before(g[j].Start) })
	var busyUntil time.Time
	for i, e := range g {
		if i > 0 && e.Start.Before(busyUntil) {
			r.I1Violations++
			r.Details = append(r.Details, fmt.Sprintf("I1 %s %s: %s started at %s while a request ran until %s",
				k.site, k.ip, e.Path, stamp(e.Start), stamp(busyUntil)))
		}
		if i > 0 && gap > 0 && e.Start.Sub(g[i-1].Start) < gap {
			r.I2Violations++
			r.Details = append(r.Details, fmt.Sprintf("I2 %s %s: %s started %s after the previous one, min %s",
				k.site, k.ip, e.Path, e.Start.Sub(g[i-1].Start), gap))
		}
		if e.End.After(busyUntil) {
			busyUntil = e.End
		}
	}
}

func stamp(t time.Time) string { return t.Format("15:04:05.000000") }
