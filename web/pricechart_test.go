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
	for _, tk := range c.YTicks {
		if !strings.HasSuffix(tk.Label, " ₽") {
			t.Errorf("y tick %q has no unit", tk.Label)
		}
	}
	if one := newPriceChart([]pgsink.PricePoint{{At: at, Price: 1}}); !one.Empty {
		t.Errorf("a chart of one observation is not empty")
	}
}

// TestTimeTicksAtRoundTimes: the time axis has at most six ticks, at
// round times of one spacing, each labelled with the time it stands at
// (its position is that time's, not a fifth of the span).
func TestTimeTicksAtRoundTimes(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 7, 13, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		span   time.Duration
		layout string
		want   []string
	}{
		{"hours", 4*time.Hour + 45*time.Minute, "01-02 15:04", []string{"03-01 11:00", "03-01 12:00", "03-01 13:00", "03-01 14:00"}},
		{"minutes", 23 * time.Minute, "01-02 15:04", []string{"03-01 10:10", "03-01 10:15", "03-01 10:20", "03-01 10:25", "03-01 10:30"}},
		{"seconds", 40 * time.Second, "01-02 15:04:05", []string{"03-01 10:07:20", "03-01 10:07:30", "03-01 10:07:40", "03-01 10:07:50"}},
		{"days", 13 * 24 * time.Hour, "2006-01-02", nil},
		{"a year", 365 * 24 * time.Hour, "2006-01-02", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := priceScale{t0: at, t1: at.Add(tc.span), lo: 0, hi: 100}
			ticks := sc.xTicks()
			if len(ticks) < 2 || len(ticks) > maxXTicks {
				t.Fatalf("%d ticks over %v, want 2 to %d: %v", len(ticks), tc.span, maxXTicks, ticks)
			}
			var labels []string
			for i, tk := range ticks {
				labels = append(labels, tk.Label)
				tt, err := time.Parse(tc.layout, tk.Label)
				if err != nil {
					t.Fatalf("label %q: %v", tk.Label, err)
				}
				if tc.layout != "2006-01-02" {
					tt = tt.AddDate(at.Year(), 0, 0)
				}
				if x := sc.x(tt); x < tk.Pos-0.01 || x > tk.Pos+0.01 {
					t.Errorf("tick %d labelled %q sits at %.2f, where %q is at %.2f", i, tk.Label, tk.Pos, tk.Label, x)
				}
				if i > 0 && tk.Pos <= ticks[i-1].Pos {
					t.Errorf("tick %d not after the one before: %v", i, ticks)
				}
			}
			if tc.want != nil && strings.Join(labels, ",") != strings.Join(tc.want, ",") {
				t.Errorf("labels %v, want %v", labels, tc.want)
			}
		})
	}
}
