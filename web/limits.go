package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"crawlq/proxies"
)

// limitRow is one learned limit on the dashboard: its value, bounds, last
// change and a small chart of it.
type limitRow struct {
	proxies.LearnedLimit
	Text, Bounds, Changed string
	Chart                 limitChart
}

// limitChart is a learned limit's value over its logged changes, a step
// line, with its slow-downs (a rate limit or ban) marked.
type limitChart struct {
	Width, Height int
	ViewBox       string
	Points        string
	Marks         []mark
	Span          string
}

// mark is one marked point of a chart.
type mark struct{ X, Y float64 }

// limitRows are the dashboard's rows of the learned limits at now.
func limitRows(ls []proxies.LearnedLimit, now time.Time) []limitRow {
	out := make([]limitRow, len(ls))
	for i, l := range ls {
		out[i] = limitRow{LearnedLimit: l, Text: LimitText(l.Unit, l.Value),
			Bounds:  LimitText(l.Unit, l.Min) + ".." + LimitText(l.Unit, l.Max),
			Changed: now.Sub(l.Changed).Round(time.Second).String() + " ago",
			Chart:   newLimitChart(l.Changes, l.Max, now)}
	}
	return out
}

// newLimitChart draws changes (newest first) from the oldest to now, 0
// at the bottom and top at the limit's max.
func newLimitChart(changes []proxies.LimitChange, top int64, now time.Time) limitChart {
	c := limitChart{Width: sparkWidth, Height: sparkHeight, ViewBox: fmt.Sprintf("0 0 %d %d", sparkWidth, sparkHeight)}
	if len(changes) == 0 || top <= 0 {
		return c
	}
	first := changes[len(changes)-1].At
	span := now.Sub(first)
	c.Span = span.Round(time.Second).String()
	y := func(v int64) float64 { return float64(sparkHeight) * (1 - float64(min(v, top))/float64(top)) }
	var xy []string
	prev := -1.0
	for i := len(changes) - 1; i >= 0; i-- {
		ch := changes[i]
		x := xPos(ch.At.Sub(first), span, sparkWidth)
		if prev >= 0 {
			xy = append(xy, fmt.Sprintf("%.1f,%.1f", x, prev))
		}
		prev = y(ch.Value)
		xy = append(xy, fmt.Sprintf("%.1f,%.1f", x, prev))
		if proxies.ChangeKind(ch.Reason) == proxies.ChangeSlower {
			c.Marks = append(c.Marks, mark{X: x, Y: prev})
		}
	}
	c.Points = strings.Join(append(xy, fmt.Sprintf("%d,%.1f", sparkWidth, prev)), " ")
	return c
}

// LimitText prints a learned limit's value in its unit: a duration for
// ms, else the number and the unit.
func LimitText(unit string, v int64) string {
	if unit == "ms" {
		return (time.Duration(v) * time.Millisecond).String()
	}
	return strconv.FormatInt(v, 10) + " " + unit
}

// LimitLine is one learned limit in a line of text, as status prints it.
func LimitLine(l proxies.LearnedLimit) string {
	s := fmt.Sprintf("%s %s (%s..%s)", l.Name, LimitText(l.Unit, l.Value), LimitText(l.Unit, l.Min), LimitText(l.Unit, l.Max))
	if l.Pinned {
		s += " pinned"
	}
	return s + fmt.Sprintf(", last change %s: %s", l.Changed.UTC().Format("15:04:05"), l.Reason)
}

// Descriptors of the learned limits (crawlq limits).
var (
	limitValueDesc = prometheus.NewDesc("crawlq_learned_limit",
		"A learned limit's value now, in its unit (a pace in ms: min_interval auto).", []string{"limit", "unit"}, nil)
	limitBoundsDesc = prometheus.NewDesc("crawlq_learned_limit_bound",
		"A learned limit's bounds (bound: min or max), in its unit.", []string{"limit", "unit", "bound"}, nil)
	limitPinnedDesc = prometheus.NewDesc("crawlq_learned_limit_pinned",
		"1 if a user pinned the learned limit, else 0.", []string{"limit"}, nil)
	limitChangedDesc = prometheus.NewDesc("crawlq_learned_limit_changed_timestamp_seconds",
		"When a learned limit last changed, by the kind of its reason (start, faster, slower, pinned, unpinned, bounds, learned).",
		[]string{"limit", "kind"}, nil)
)

// limitDescs are the learned limits' descriptors.
var limitDescs = []*prometheus.Desc{limitValueDesc, limitBoundsDesc, limitPinnedDesc, limitChangedDesc}

// collectLimits sends the learned limits' series.
func collectLimits(ch chan<- prometheus.Metric, ls []proxies.LearnedLimit) {
	for _, l := range ls {
		ch <- gauge(limitValueDesc, float64(l.Value), l.Name, l.Unit)
		ch <- gauge(limitBoundsDesc, float64(l.Min), l.Name, l.Unit, "min")
		ch <- gauge(limitBoundsDesc, float64(l.Max), l.Name, l.Unit, "max")
		pinned := 0.0
		if l.Pinned {
			pinned = 1
		}
		ch <- gauge(limitPinnedDesc, pinned, l.Name)
		ch <- gauge(limitChangedDesc, float64(l.Changed.UnixMilli())/1000, l.Name, proxies.ChangeKind(l.Reason))
	}
}
