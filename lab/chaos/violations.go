package chaos

import (
	"fmt"
	"sort"
	"time"

	"crawlq/testbed"
)

// violationPairs describes up to limit request pairs from one IP to one
// site that overlap (I1) or start closer than the site's min interval
// (I2), with both requests' wall-clock times, paths and verdicts, so they
// can be matched with the workers' logs.
func violationPairs(entries []testbed.Entry, gaps map[string]time.Duration, limit int) []string {
	groups := map[string][]testbed.Entry{}
	for _, e := range entries {
		if e.Verdict != testbed.VerdictExempt {
			groups[e.Site+" "+e.IP] = append(groups[e.Site+" "+e.IP], e)
		}
	}
	var out []string
	for key, g := range groups {
		sort.SliceStable(g, func(i, j int) bool { return g[i].Start.Before(g[j].Start) })
		for i := 1; i < len(g); i++ {
			a, b := g[i-1], g[i]
			if b.Start.Before(a.End) || b.Start.Sub(a.Start) < gaps[a.Site] {
				out = append(out, fmt.Sprintf("%s: %s %s (%s) then %s %s (%s), %s apart", key,
					clock(a.Start), a.Path, a.Verdict, clock(b.Start), b.Path, b.Verdict, b.Start.Sub(a.Start).Round(time.Millisecond)))
			}
		}
	}
	sort.Strings(out)
	return out[:min(len(out), limit)]
}

func clock(t time.Time) string { return t.Format("15:04:05.000") }
