package web

import (
	"fmt"
	"strings"
	"time"
)

// Chart size in SVG user units.
const (
	chartWidth  = 600
	chartHeight = 120
)

// chart is a success-rate line ready for the template's inline SVG.
type chart struct {
	Width, Height int
	// ViewBox leaves a margin for the axis labels.
	ViewBox string
	// Points is the SVG polyline points attribute ("x,y x,y …").
	Points string
	// Last is the latest rate as a percentage, e.g. "97.5%".
	Last string
	// Span says how much time the chart covers, e.g. "4m30s".
	Span string
	// Empty is set until two samples with requests exist.
	Empty bool
}

// newChart scales rate points into the chart box: time left to right,
// 0% at the bottom and 100% at the top.
func newChart(pts []RatePoint) chart {
	c := chart{Width: chartWidth, Height: chartHeight, Empty: len(pts) < 2,
		ViewBox: fmt.Sprintf("-44 -10 %d %d", chartWidth+54, chartHeight+20)}
	if len(pts) == 0 {
		return c
	}
	c.Last = percent(pts[len(pts)-1].Rate)
	first, last := pts[0].At, pts[len(pts)-1].At
	span := last.Sub(first)
	c.Span = span.Round(time.Second).String()
	xy := make([]string, len(pts))
	for i, p := range pts {
		xy[i] = fmt.Sprintf("%.1f,%.1f", xPos(p.At.Sub(first), span), yPos(p.Rate))
	}
	c.Points = strings.Join(xy, " ")
	return c
}

func xPos(d, span time.Duration) float64 {
	if span <= 0 {
		return chartWidth
	}
	return float64(chartWidth) * float64(d) / float64(span)
}

func yPos(rate float64) float64 { return float64(chartHeight) * (1 - rate) }

func percent(r float64) string { return fmt.Sprintf("%.1f%%", 100*r) }
