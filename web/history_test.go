package web

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/proxies"
)

// statsAt is a one-proxy snapshot with the given cumulative counters.
func statsAt(at time.Time, ok, failed, banned int64) *proxies.PoolStats {
	return &proxies.PoolStats{At: at, Proxies: []proxies.ProxyStats{{ID: "p", Sites: map[string]proxies.ProxySiteStats{
		"wildberries": {OK: ok, Failed: failed},
		"ozon":        {Banned: banned},
	}}}}
}

// viewAt is a view of statsAt.
func viewAt(at time.Time, ok, failed, banned int64) *poolView {
	return newView(statsAt(at, ok, failed, banned), 0, false)
}

func TestHistoryRates(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	h := newHistory(3)
	h.add(viewAt(t0, 0, 0, 0))
	h.add(viewAt(t0.Add(10*time.Second), 8, 1, 1))  // 10 requests, 8 ok
	h.add(viewAt(t0.Add(20*time.Second), 8, 1, 1))  // idle: no point
	h.add(viewAt(t0.Add(30*time.Second), 11, 2, 3)) // 6 requests, 3 ok, 2 bans; first sample dropped
	want := []RatePoint{{At: t0.Add(30 * time.Second), Rate: 0.5, Requests: 6, BansPerMin: 12}}
	if d := cmp.Diff(want, h.rates("")); d != "" {
		t.Errorf("rates (-want +got):\n%s", d)
	}
	wantOzon := []RatePoint{{At: t0.Add(30 * time.Second), Rate: 0, Requests: 2, BansPerMin: 12}}
	if d := cmp.Diff(wantOzon, h.rates("ozon")); d != "" {
		t.Errorf("ozon rates (-want +got):\n%s", d)
	}
}

func TestChart(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		pts    []RatePoint
		points string
		last   string
		empty  bool
	}{
		{name: "no samples", empty: true},
		{name: "one sample", pts: []RatePoint{{At: t0, Rate: 1}}, points: "600.0,0.0", last: "100.0%", empty: true},
		{name: "line", pts: []RatePoint{{At: t0, Rate: 1}, {At: t0.Add(time.Minute), Rate: 0.5}, {At: t0.Add(2 * time.Minute), Rate: 0}},
			points: "0.0,0.0 300.0,60.0 600.0,120.0", last: "0.0%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChart(tt.pts)
			if c.Points != tt.points || c.Last != tt.last || c.Empty != tt.empty {
				t.Errorf("chart = %+v, want points %q last %q empty %t", c, tt.points, tt.last, tt.empty)
			}
		})
	}
}

// TestDashboardChartFromSamples checks that the sampler's readings reach
// the page as an SVG polyline.
func TestDashboardChartFromSamples(t *testing.T) {
	c := newCluster(t)
	s, err := NewServer(Config{Redis: c.opt, Broker: c.broker})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Now()
	for i, n := range []int64{0, 10, 20, 25} {
		s.hist.add(viewAt(t0.Add(time.Duration(i)*time.Minute), n, n/5, 0))
	}
	base := startHandler(t, s)
	_, body := get(t, "GET", base+"/", "")
	if !strings.Contains(body, `<polyline`) || strings.Contains(body, "collecting samples") {
		t.Errorf("dashboard has no success-rate line:\n%s", body)
	}
	_, js := get(t, "GET", base+"/api/summary", "")
	if want := `"success":"` + newChart(s.hist.rates("")).Points + `"`; !strings.Contains(js, want) {
		t.Errorf("/api/summary lacks the success-rate line %s:\n%s", want, js)
	}
}
