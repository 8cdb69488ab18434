package web

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"crawlq/proxies"
)

// Summary is what the pool page refreshes in place every Refresh, served
// at /api/summary: a few kilobytes whatever the pool size.
type Summary struct {
	// Status holds the queues, the pool per site (counted now) and the
	// live servers.
	Status *Status `json:"status"`
	// Classes are the counters and latency per site and class, from the
	// latest full read of the pool (TableAt).
	Classes []ClassCounters `json:"classes"`
	// TableAt is when the pool was last read in full (the proxy table and
	// Classes); zero before the first read ends.
	TableAt time.Time `json:"table_at"`
	// Holders are the servers/workers that took the most leases, at most
	// topHolders.
	Holders []HolderCount `json:"requests_per_server"`
	// Values are the page's numbers by the data-k attribute of the
	// element that shows them, as the page prints them.
	Values map[string]string `json:"values"`
	// Charts are the page's chart lines by the data-chart attribute of
	// their polyline: SVG points attributes.
	Charts map[string]string `json:"charts"`
}

// topHolders is how many lease holders the page lists.
const topHolders = 20

// summary collects the page's numbers: queues and pool counts now, the
// counters from the latest view (v may be nil before the first read).
func (s *Server) summary(ctx context.Context, v *poolView) (*Summary, error) {
	st, err := s.collect(ctx)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Status: st, Classes: []ClassCounters{}, Holders: []HolderCount{}}
	if v != nil {
		sum.Classes, sum.TableAt, sum.Holders = v.Classes, v.At, v.Holders[:min(len(v.Holders), topHolders)]
	}
	sum.Values = pageValues(sum)
	sum.Charts = s.charts(st)
	return sum, nil
}

// collect is Collect on the server's inspector and broker, with the
// worker heartbeats joined.
func (s *Server) collect(ctx context.Context) (*Status, error) {
	st, err := Collect(ctx, s.insp, s.cfg.Broker)
	if err != nil {
		return nil, err
	}
	if err := JoinHeartbeats(ctx, s.rdb, st); err != nil {
		s.log.Debug("web: servers", zap.Error(err))
	}
	return st, nil
}

// pageValues are the page's in-place numbers by key: "total", "pool/SITE/STATE",
// "pool/SITE/cleared", "class/SITE/CLASS/FIELD" and "queue/QUEUE/FIELD".
func pageValues(sum *Summary) map[string]string {
	v := map[string]string{"total": fmt.Sprint(sum.Status.Pool.Total),
		"at": sum.Status.At.Format("15:04:05"), "table_at": clock(sum.TableAt)}
	for site, st := range sum.Status.Pool.Sites {
		states(v, "pool/"+site, proxies.StateCounts{Ready: st.Ready, Leased: st.Leased, Cooling: st.Cooling, Quarantined: st.Quarantined})
		v["pool/"+site+"/cleared"] = fmt.Sprint(st.Cleared)
		for class, sc := range st.ByClass {
			states(v, "class/"+site+"/"+string(class), sc)
		}
	}
	for _, c := range sum.Classes {
		k := "class/" + c.Site + "/" + string(c.Class) + "/"
		v[k+"ok"], v[k+"failed"], v[k+"banned"] = fmt.Sprint(c.OK), fmt.Sprint(c.Failed), fmt.Sprint(c.Banned)
		v[k+"success"] = orDash(c.OK+c.Failed+c.Banned > 0, percent(c.SuccessRate))
		v[k+"p50"], v[k+"p90"], v[k+"p99"] = latencyText(c.P50), latencyText(c.P90), latencyText(c.P99)
	}
	for _, q := range sum.Status.Queues {
		k := "queue/" + q.Queue + "/"
		for f, n := range map[string]int{"pending": q.Pending, "active": q.Active, "scheduled": q.Scheduled,
			"retry": q.Retry, "archived": q.Archived, "completed": q.Completed, "processed": q.Processed, "failed": q.Failed} {
			v[k+f] = fmt.Sprint(n)
		}
	}
	return v
}

func states(v map[string]string, prefix string, c proxies.StateCounts) {
	v[prefix+"/ready"], v[prefix+"/leased"] = fmt.Sprint(c.Ready), fmt.Sprint(c.Leased)
	v[prefix+"/cooling"], v[prefix+"/quarantined"] = fmt.Sprint(c.Cooling), fmt.Sprint(c.Quarantined)
}

// latencyText is a latency as the page shows it, "–" for none.
func latencyText(d time.Duration) string { return orDash(d > 0, roundLatency(d)) }

func orDash(ok bool, s string) string {
	if !ok {
		return "–"
	}
	return s
}

func clock(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.Local().Format("15:04:05")
}

// charts are the chart lines: "success" for the pool, "success/SITE",
// "bans/SITE" and "p90/SITE" per site.
func (s *Server) charts(st *Status) map[string]string {
	out := map[string]string{"success": newChart(s.hist.rates("")).Points}
	for site := range st.Pool.Sites {
		pts := s.hist.rates(site)
		out["success/"+site], out["bans/"+site] = successSpark(pts).Points, bansSpark(pts).Points
		out["p90/"+site] = latencySpark(pts).Points
	}
	return out
}
