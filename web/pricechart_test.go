package web

import (
	"strings"
	"testing"
	"time"

	"crawlq/results/pgsink"
)

// TestThinKeepsExtremes: a history with more steps than the chart draws
// is thinned to at most n points, oldest first, keeping the first and
// last observations and the lowest and highest prices; one that fits is
// kept whole.
func TestThinKeepsExtremes(t *testing.T) {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	ps := make([]pgsink.PricePoint, 5000)
	for i := range ps {
		ps[i] = pgsink.PricePoint{At: at.Add(time.Duration(i) * time.Minute), Price: int64(1000 + (i*7919)%977)}
	}
	ps[1234].Price, ps[4321].Price = 1, 99999
	got := thin(ps, maxChartPoints)
	if len(got) > maxChartPoints || got[0].At != ps[0].At || got[len(got)-1].At != ps[len(ps)-1].At {
		t.Fatalf("thin: %d points from %v to %v, want at most %d from the first to the last", len(got), got[0].At, got[len(got)-1].At, maxChartPoints)
	}
	var lo, hi bool
	for i, p := range got {
		lo, hi = lo || p.Price == 1, hi || p.Price == 99999
		if i > 0 && !p.At.After(got[i-1].At) {
			t.Fatalf("thin: point %d at %v not after %v", i, p.At, got[i-1].At)
		}
	}
	if !lo || !hi {
		t.Errorf("thin dropped the lowest (%v) or highest (%v) price", lo, hi)
	}
	if n := len(thin(ps[:maxChartPoints], maxChartPoints)); n != maxChartPoints {
		t.Errorf("thin of %d points kept %d", maxChartPoints, n)
	}
}

// TestPriceChartSteps: the price line holds each price until the next
// observation, breaks where the price is unknown, and its ticks are round
// prices within the chart.
func TestPriceChartSteps(t *testing.T) {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	c := newPriceChart([]pgsink.PricePoint{{At: at, Price: 100000}, {At: at.Add(time.Hour), Price: 90000},
		{At: at.Add(2 * time.Hour)}, {At: at.Add(3 * time.Hour), Price: 95000}, {At: at.Add(4 * time.Hour), Price: 95000}})
	if c.Empty || c.Points != 4 || c.Steps != 1 {
		t.Fatalf("chart: empty %v, %d points, %d steps; want 4 points, 1 step (the gap breaks the line)", c.Empty, c.Points, c.Steps)
	}
	if want := "M0.0 "; c.Price[:len(want)] != want || strings.Count(c.Price, "M") != 2 {
		t.Errorf("price path %q: want two runs, the first from x=0", c.Price)
	}
	for _, tk := range c.YTicks {
		if tk.Pos < 0 || tk.Pos > priceChartHeight {
			t.Errorf("y tick %q at %.1f outside the chart", tk.Label, tk.Pos)
		}
	}
	if len(c.YTicks) < 3 || len(c.XTicks) != 5 || c.XTicks[0].Label != "03-01 00:00" || c.XTicks[4].Label != "03-01 04:00" {
		t.Errorf("ticks: y %v, x %v", c.YTicks, c.XTicks)
	}
	if one := newPriceChart([]pgsink.PricePoint{{At: at, Price: 1}}); !one.Empty {
		t.Errorf("a chart of one observation is not empty")
	}
}
