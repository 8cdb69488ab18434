package web

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"crawlq/results/pgsink"
)

// Price chart sizes in SVG user units, and the most points it draws.
const (
	priceChartWidth  = 760
	priceChartHeight = 240
	// maxChartPoints bounds the points of the price line: a history with
	// more steps keeps, per time bucket, its first, lowest, highest and
	// last point.
	maxChartPoints = 600
	// stockGapPx merges out-of-stock spans closer than this many units.
	stockGapPx = 2
)

// priceChart is an item's price and old price over time, ready for the
// template's inline SVG: step lines (a price holds until the next
// observation), out-of-stock spans shaded, price and date labels.
type priceChart struct {
	Width, Height int
	// TickEnd is where the date ticks below the chart end.
	TickEnd int
	ViewBox string
	// Price and Old are the SVG path data of the price and old price lines.
	Price, Old string
	// Points is how many observations the price line is drawn through;
	// Steps how many times it changes level.
	Points, Steps int
	OutOfStock    []stockSpan
	YTicks        []axisTick
	XTicks        []axisTick
	// Note says when the line was thinned, or why there is none.
	Note  string
	Empty bool
}

// stockSpan is a shaded stretch of the chart where the item was out of stock.
type stockSpan struct {
	X, W  float64
	Title string
}

// axisTick is a label at Pos (x or y) on an axis.
type axisTick struct {
	Pos   float64
	Label string
}

// newPriceChart draws steps (pgsink.PriceSteps: oldest first, every
// change and the last observation).
func newPriceChart(steps []pgsink.PricePoint) priceChart {
	c := priceChart{Width: priceChartWidth, Height: priceChartHeight, TickEnd: priceChartHeight + 4,
		ViewBox: fmt.Sprintf("-74 -8 %d %d", priceChartWidth+114, priceChartHeight+36)}
	if len(steps) < 2 {
		c.Empty, c.Note = true, "A chart needs two observations."
		return c
	}
	pts := thin(steps, maxChartPoints)
	if len(pts) < len(steps) {
		c.Note = fmt.Sprintf("%d steps drawn as %d points (each stretch keeps its first, lowest, highest and last price; the table and the CSV have them all).", len(steps), len(pts))
	}
	sc := newPriceScale(steps)
	c.Price, c.Points, c.Steps = stepPath(pts, sc, func(p pgsink.PricePoint) int64 { return p.Price })
	c.Old, _, _ = stepPath(pts, sc, func(p pgsink.PricePoint) int64 { return p.OldPrice })
	c.OutOfStock = stockSpans(steps, sc)
	c.YTicks, c.XTicks = sc.yTicks(), sc.xTicks()
	return c
}

// priceScale maps time and kopecks into the chart box.
type priceScale struct {
	t0, t1 time.Time
	lo, hi int64
}

// newPriceScale spans the history's time and its known prices and old
// prices, padded so a flat line sits mid-chart.
func newPriceScale(ps []pgsink.PricePoint) priceScale {
	sc := priceScale{t0: ps[0].At, t1: ps[len(ps)-1].At, lo: math.MaxInt64, hi: 0}
	for _, p := range ps {
		for _, v := range []int64{p.Price, p.OldPrice} {
			if v > 0 {
				sc.lo, sc.hi = min(sc.lo, v), max(sc.hi, v)
			}
		}
	}
	if sc.hi == 0 {
		sc.lo, sc.hi = 0, 100
	}
	pad := max((sc.hi-sc.lo)/10, sc.hi/20, 1)
	sc.lo, sc.hi = max(sc.lo-pad, 0), sc.hi+pad
	if !sc.t1.After(sc.t0) {
		sc.t1 = sc.t0.Add(time.Second)
	}
	return sc
}

func (sc priceScale) x(t time.Time) float64 {
	return priceChartWidth * float64(t.Sub(sc.t0)) / float64(sc.t1.Sub(sc.t0))
}

func (sc priceScale) y(k int64) float64 {
	return priceChartHeight * (1 - float64(k-sc.lo)/float64(sc.hi-sc.lo))
}

// stepPath is the path data of one value's step line ("M x y H x V y …"),
// broken where the value is unknown (0), the points it passes through and
// its changes of level.
func stepPath(pts []pgsink.PricePoint, sc priceScale, val func(pgsink.PricePoint) int64) (d string, points, steps int) {
	var b strings.Builder
	var prev int64
	for _, p := range pts {
		v, x := val(p), sc.x(p.At)
		if prev != 0 {
			fmt.Fprintf(&b, "H%.1f", x)
		}
		switch {
		case v == 0:
		case prev == 0:
			fmt.Fprintf(&b, "M%.1f %.1f", x, sc.y(v))
		case v != prev:
			fmt.Fprintf(&b, "V%.1f", sc.y(v))
			steps++
		}
		if v != 0 {
			points++
		}
		prev = v
	}
	return b.String(), points, steps
}

// stockSpans are the stretches from an observation out of stock to the
// next one that is not, those closer than stockGapPx merged.
func stockSpans(ps []pgsink.PricePoint, sc priceScale) []stockSpan {
	var out []stockSpan
	for i := 0; i < len(ps); i++ {
		if ps[i].InStock == nil || *ps[i].InStock {
			continue
		}
		j := i
		for j < len(ps)-1 && ps[j].InStock != nil && !*ps[j].InStock {
			j++
		}
		x0, x1 := sc.x(ps[i].At), sc.x(ps[j].At)
		if n := len(out); n > 0 && x0-(out[n-1].X+out[n-1].W) < stockGapPx {
			out[n-1].W = x1 - out[n-1].X
			out[n-1].Title = "out of stock (several times) until " + stamp(ps[j].At)
		} else {
			out = append(out, stockSpan{X: x0, W: max(x1-x0, 1), Title: "out of stock " + stamp(ps[i].At) + " – " + stamp(ps[j].At)})
		}
		i = j
	}
	return out
}

// yTicks are about five round prices between the scale's bounds.
func (sc priceScale) yTicks() []axisTick {
	step := niceStep(float64(sc.hi-sc.lo) / 4)
	var out []axisTick
	for v := (sc.lo + step - 1) / step * step; v <= sc.hi; v += step {
		out = append(out, axisTick{Pos: sc.y(v), Label: priceLabel(v, step)})
	}
	return out
}

// day is a day of the time axis (UTC days: no daylight saving).
const day = 24 * time.Hour

// tickSteps are the round spacings of the time axis, shortest first;
// beyond the last, multiples of it.
var tickSteps = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second,
	30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, day, 2 * day, 3 * day, 7 * day, 14 * day, 28 * day}

// maxXTicks is the most ticks on the time axis.
const maxXTicks = 6

// xTicks are ticks at round times (every 5 min, every hour, every day…:
// the shortest spacing of tickSteps that gives at most maxXTicks over the
// history), each labelled with its own time (UTC), to the second when
// the spacing is under a minute and to the day from a day up.
func (sc priceScale) xTicks() []axisTick {
	span := sc.t1.Sub(sc.t0)
	step := tickStep(span)
	layout := "01-02 15:04"
	switch {
	case step < time.Minute:
		layout = "01-02 15:04:05"
	case step >= day:
		layout = "2006-01-02"
	}
	var out []axisTick
	for t := sc.t0.UTC().Truncate(step); !t.After(sc.t1); t = t.Add(step) {
		if !t.Before(sc.t0) {
			out = append(out, axisTick{Pos: sc.x(t), Label: t.Format(layout)})
		}
	}
	return out
}

// tickStep is the shortest round spacing that puts at most maxXTicks
// ticks on span.
func tickStep(span time.Duration) time.Duration {
	for _, s := range tickSteps {
		if span/s < maxXTicks {
			return s
		}
	}
	last := tickSteps[len(tickSteps)-1]
	return last * (span/last/(maxXTicks-1) + 1)
}

// niceStep is the smallest 1, 2 or 5 × 10ⁿ kopecks at least raw (≥ 1).
func niceStep(raw float64) int64 {
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if float64(m*p) >= raw {
				return m * p
			}
		}
	}
}

// priceLabel shows kopecks as roubles with their unit ("1200 ₽"),
// without kopecks when the step is whole roubles.
func priceLabel(k, step int64) string {
	if step%100 == 0 {
		return fmt.Sprintf("%d ₽", k/100)
	}
	return fmt.Sprintf("%d.%02d ₽", k/100, k%100)
}

// thin keeps at most n of ps (oldest first): all of them when they fit,
// else per time bucket its first, lowest, highest and last point, the
// very first and last always kept.
func thin(ps []pgsink.PricePoint, n int) []pgsink.PricePoint {
	if len(ps) <= n {
		return ps
	}
	buckets := n / 4
	t0, span := ps[0].At, ps[len(ps)-1].At.Sub(ps[0].At)
	out := make([]pgsink.PricePoint, 0, n)
	for i := 0; i < len(ps); {
		b := bucketOf(ps[i].At.Sub(t0), span, buckets)
		j := i
		for j < len(ps) && bucketOf(ps[j].At.Sub(t0), span, buckets) == b {
			j++
		}
		out = append(out, keyPoints(ps[i:j])...)
		i = j
	}
	return out
}

func bucketOf(d, span time.Duration, buckets int) int {
	if span <= 0 {
		return 0
	}
	return min(int(float64(d)/float64(span)*float64(buckets)), buckets-1)
}

// keyPoints are a bucket's first, lowest, highest and last points, in
// time order, each once.
func keyPoints(ps []pgsink.PricePoint) []pgsink.PricePoint {
	lo, hi := 0, 0
	for i, p := range ps {
		if p.Price > 0 && (ps[lo].Price == 0 || p.Price < ps[lo].Price) {
			lo = i
		}
		if p.Price > ps[hi].Price {
			hi = i
		}
	}
	idx := []int{0, lo, hi, len(ps) - 1}
	slices.Sort(idx)
	out := make([]pgsink.PricePoint, 0, 4)
	for _, i := range slices.Compact(idx) {
		out = append(out, ps[i])
	}
	return out
}

// stamp is a time as the item page shows it.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }
