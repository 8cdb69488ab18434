package web

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"time"

	"crawlq/internal/mask"
	"crawlq/proxies"
)

// latencyBuckets are the upper bounds (seconds) of the pool latency
// histogram and of the dashboard's percentiles.
var latencyBuckets = []float64{.05, .1, .25, .5, 1, 2.5, 5, 10}

// poolView is one full read of the pool, indexed for the dashboard: one
// row per (proxy, site), sorted three ways, and the counters summed per
// site and class. It is built in the background and read by every page
// and API call until the next one replaces it; it is never modified.
type poolView struct {
	// At is the broker's clock at the read; Took is how long the read and
	// indexing took.
	At   time.Time
	Took time.Duration
	// Total is the number of proxies in the pool.
	Total int
	// Rows are sorted by proxy ID, then site.
	Rows []ProxyRow
	// worst and bans are the row indexes by worst success first and most
	// bans first.
	worst, bans []int32
	// Classes are the counters per site and class, sorted.
	Classes []ClassCounters
	// Holders counts leases per holder, most first.
	Holders []HolderCount
	// SiteP90 is the 90th percentile of the proxies' latency per site.
	SiteP90 map[string]time.Duration
	// stats is the read the view was built from, kept only for
	// --metrics-per-proxy.
	stats *proxies.PoolStats
}

// ClassCounters are the outcome counters and latency of one site and class,
// summed over its proxies.
type ClassCounters struct {
	Site   string        `json:"site"`
	Class  proxies.Class `json:"class"`
	OK     int64         `json:"ok"`
	Failed int64         `json:"failed"`
	Banned int64         `json:"banned"`
	// SuccessRate is OK over all outcomes, 0 without any.
	SuccessRate float64 `json:"success_rate"`
	// P50, P90 and P99 are percentiles of the proxies' moving-average
	// latency (proxies without a success yet left out).
	P50 time.Duration `json:"p50_latency"`
	P90 time.Duration `json:"p90_latency"`
	P99 time.Duration `json:"p99_latency"`
	// Buckets counts proxies whose latency is at most latencyBuckets[i]
	// (cumulative); Measured counts all with a latency, LatencySum sums them.
	Buckets    []uint64      `json:"-"`
	Measured   uint64        `json:"-"`
	LatencySum time.Duration `json:"-"`
}

// newView indexes one Stats read.
func newView(ps *proxies.PoolStats, took time.Duration, keepStats bool) *poolView {
	v := &poolView{At: ps.At, Took: took, Total: ps.Total, Rows: proxyRows(ps.Proxies), Holders: holderCounts(ps.Proxies)}
	v.worst, v.bans = v.order(worseRow), v.order(moreBans)
	v.Classes, v.SiteP90 = classCounters(ps)
	if keepStats {
		v.stats = ps
	}
	return v
}

// order is the row indexes sorted by less, ties by row order.
func (v *poolView) order(less func(a, b *ProxyRow) int) []int32 {
	idx := make([]int32, len(v.Rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int { return less(&v.Rows[a], &v.Rows[b]) })
	return idx
}

// worseRow puts rows with requests before those without, lowest success
// rate first, then most requests.
func worseRow(a, b *ProxyRow) int {
	if (a.Requests == 0) != (b.Requests == 0) {
		if a.Requests == 0 {
			return 1
		}
		return -1
	}
	if c := cmp.Compare(a.SuccessRate, b.SuccessRate); c != 0 {
		return c
	}
	return cmp.Compare(b.Requests, a.Requests)
}

func moreBans(a, b *ProxyRow) int { return cmp.Compare(b.Banned, a.Banned) }

// proxyRows flattens per-proxy, per-site stats into table rows, sorted by
// proxy then site; a proxy without any site yet gets one row with no site,
// so every imported proxy is listed.
func proxyRows(ps []proxies.ProxyStats) []ProxyRow {
	n := 0
	for _, p := range ps {
		n += max(1, len(p.Sites))
	}
	rows := make([]ProxyRow, 0, n)
	for _, p := range ps {
		masked, allowed := mask.URL(p.Masked), allowedSites(p.Allowed)
		if len(p.Sites) == 0 {
			rows = append(rows, ProxyRow{ID: p.ID, Proxy: masked, Class: p.Class, Allowed: allowed})
		}
		for _, site := range sortedKeys(p.Sites) {
			r := proxyRow(p, masked, site, p.Sites[site])
			r.Allowed = allowed
			rows = append(rows, r)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	return rows
}

// allowedSites shows a proxy's site limit: "*" for every site.
func allowedSites(sites []string) string {
	if len(sites) == 0 {
		return "*"
	}
	return strings.Join(sites, ",")
}

// classCounters sums the counters of every (site, class) of the pool, and
// gives each site's 90th latency percentile.
func classCounters(ps *proxies.PoolStats) ([]ClassCounters, map[string]time.Duration) {
	lat := map[[2]string][]time.Duration{}
	siteLat := map[string][]time.Duration{}
	sums := map[[2]string]*ClassCounters{}
	for site, st := range ps.Sites {
		for class := range st.ByClass {
			sums[[2]string{site, string(class)}] = &ClassCounters{Site: site, Class: class}
		}
	}
	for _, p := range ps.Proxies {
		for site, st := range p.Sites {
			k := [2]string{site, string(p.Class)}
			c := sums[k]
			if c == nil {
				c = &ClassCounters{Site: site, Class: p.Class}
				sums[k] = c
			}
			c.OK, c.Failed, c.Banned = c.OK+st.OK, c.Failed+st.Failed, c.Banned+st.Banned
			if st.EWMALatency > 0 {
				lat[k] = append(lat[k], st.EWMALatency)
				siteLat[site] = append(siteLat[site], st.EWMALatency)
			}
		}
	}
	out := make([]ClassCounters, 0, len(sums))
	for k, c := range sums {
		c.SuccessRate = successRate(c.OK, c.Failed, c.Banned)
		c.latency(lat[k])
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b ClassCounters) int {
		return cmp.Or(cmp.Compare(a.Site, b.Site), cmp.Compare(a.Class, b.Class))
	})
	p90 := make(map[string]time.Duration, len(siteLat))
	for site, ds := range siteLat {
		slices.Sort(ds)
		p90[site] = pct(ds, 90)
	}
	return out, p90
}

// latency fills the percentiles and histogram from the proxies' latencies.
func (c *ClassCounters) latency(ds []time.Duration) {
	c.Buckets = make([]uint64, len(latencyBuckets))
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	c.P50, c.P90, c.P99 = pct(ds, 50), pct(ds, 90), pct(ds, 99)
	c.Measured = uint64(len(ds))
	for _, d := range ds {
		c.LatencySum += d
	}
	for i, b := range latencyBuckets {
		max := time.Duration(b * float64(time.Second))
		c.Buckets[i] = uint64(sort.Search(len(ds), func(j int) bool { return ds[j] > max }))
	}
}

// pct is the p-th percentile of sorted ds (nearest rank).
func pct(ds []time.Duration, p int) time.Duration {
	i := (len(ds)*p + 99) / 100
	return ds[max(0, min(len(ds)-1, i-1))]
}

// sumOutcomes sums the view's counters per site: ok, failed, banned.
func (v *poolView) sumOutcomes() map[string][3]int64 {
	out := map[string][3]int64{}
	for _, c := range v.Classes {
		s := out[c.Site]
		out[c.Site] = [3]int64{s[0] + c.OK, s[1] + c.Failed, s[2] + c.Banned}
	}
	return out
}
