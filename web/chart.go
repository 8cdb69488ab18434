package web

import (
	"fmt"
	"strings"
	"time"
)

// Chart sizes in SVG user units: the pool-wide success rate, and the
// small per-site charts.
const (
	chartWidth  = 600
	chartHeight = 120
	sparkWidth  = 160
	sparkHeight = 32
)

// chart is a line ready for the template's inline SVG.
type chart struct {
	Width, Height int
	// ViewBox leaves a margin for the axis labels.
	ViewBox string
	// Points is the SVG polyline points attribute ("x,y x,y …").
	Points string
	// Last is the latest value, e.g. "97.5%".
	Last string
	// Span says how much time the chart covers, e.g. "4m30s".
	Span string
	// Empty is set until two points exist.
	Empty bool
}

// newChart scales success-rate points into the chart box: time left to
// right, 0% at the bottom and 100% at the top.
func newChart(pts []RatePoint) chart {
	c := plot(pts, chartWidth, chartHeight, func(p RatePoint) float64 { return p.Rate })
	c.ViewBox = fmt.Sprintf("-44 -10 %d %d", chartWidth+54, chartHeight+20)
	if len(pts) > 0 {
		c.Last = percent(pts[len(pts)-1].Rate)
	}
	return c
}

// successSpark is a site's small success-rate chart.
func successSpark(pts []RatePoint) chart {
	c := plot(pts, sparkWidth, sparkHeight, func(p RatePoint) float64 { return p.Rate })
	if len(pts) > 0 {
		c.Last = percent(pts[len(pts)-1].Rate)
	}
	return c
}

// bansSpark is a site's small bans-per-minute chart, scaled to its peak.
func bansSpark(pts []RatePoint) chart {
	peak := 0.0
	for _, p := range pts {
		peak = max(peak, p.BansPerMin)
	}
	c := plot(pts, sparkWidth, sparkHeight, func(p RatePoint) float64 {
		if peak == 0 {
			return 0
		}
		return p.BansPerMin / peak
	})
	if len(pts) > 0 {
		c.Last = fmt.Sprintf("%.1f/min", pts[len(pts)-1].BansPerMin)
	}
	return c
}

// latencySpark is a site's small p90-latency chart, scaled to its peak.
func latencySpark(pts []RatePoint) chart {
	var peak time.Duration
	for _, p := range pts {
		peak = max(peak, p.P90)
	}
	c := plot(pts, sparkWidth, sparkHeight, func(p RatePoint) float64 {
		if peak == 0 {
			return 0
		}
		return float64(p.P90) / float64(peak)
	})
	if len(pts) > 0 && pts[len(pts)-1].P90 > 0 {
		c.Last = roundLatency(pts[len(pts)-1].P90)
	}
	return c
}

// plot scales points whose y (from 0 to 1) is given into a w×h box.
func plot(pts []RatePoint, w, h int, y func(RatePoint) float64) chart {
	c := chart{Width: w, Height: h, Empty: len(pts) < 2, ViewBox: fmt.Sprintf("0 0 %d %d", w, h)}
	if len(pts) == 0 {
		return c
	}
	first, last := pts[0].At, pts[len(pts)-1].At
	span := last.Sub(first)
	c.Span = span.Round(time.Second).String()
	xy := make([]string, len(pts))
	for i, p := range pts {
		xy[i] = fmt.Sprintf("%.1f,%.1f", xPos(p.At.Sub(first), span, w), float64(h)*(1-y(p)))
	}
	c.Points = strings.Join(xy, " ")
	return c
}

func xPos(d, span time.Duration, w int) float64 {
	if span <= 0 {
		return float64(w)
	}
	return float64(w) * float64(d) / float64(span)
}

func percent(r float64) string { return fmt.Sprintf("%.1f%%", 100*r) }
