package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Chart geometry, in SVG user units.
const (
	chartW, chartH             = 860, 440
	plotL, plotR, plotT, plotB = 70, 830, 50, 360
	banRowY                    = 395 // the row of ban ticks under the plot
)

// chartLine is one series: successful pages per second and refused
// requests per second.
type chartLine struct {
	name, color string
	ok, bans    []int
}

// WriteChart writes an SVG (no script) of successful pages per second over
// the window for crawlq and the naive policy, the limit as a dashed line,
// and every second with bans as red ticks: on the series and in the ban
// row under the plot, with the count.
func WriteChart(w io.Writer, res *CrawlResult) error {
	lines := []chartLine{
		{"crawlq", "#1f77b4", res.Crawlq.PerSecond, res.Crawlq.BansPerSecond},
		{"naive", "#ff7f0e", res.Naive.PerSecond, res.Naive.BansPerSecond},
	}
	c := newCanvas(res, lines)
	c.frame(res)
	for i, l := range lines {
		c.series(l, i)
	}
	c.legend(lines)
	c.b.WriteString("</svg>\n")
	_, err := io.WriteString(w, c.b.String())
	return err
}

// canvas maps seconds and pages/s to plot coordinates.
type canvas struct {
	b     strings.Builder
	secs  int
	ymax  float64
	limit float64
}

func newCanvas(res *CrawlResult, lines []chartLine) *canvas {
	c := &canvas{secs: 1, ymax: 1}
	if res.LimitRPS != nil {
		c.limit = *res.LimitRPS
	}
	for _, l := range lines {
		c.secs = max(c.secs, len(l.ok))
		for _, v := range l.ok {
			c.ymax = math.Max(c.ymax, float64(v))
		}
	}
	c.ymax = niceCeil(math.Max(c.ymax, c.limit) * 1.1)
	return c
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// x is the centre of second s; y the height of v pages/s.
func (c *canvas) x(s float64) float64 { return plotL + (s+0.5)*(plotR-plotL)/float64(c.secs) }
func (c *canvas) y(v float64) float64 { return plotB - v*(plotB-plotT)/c.ymax }

func (c *canvas) printf(format string, a ...any) { fmt.Fprintf(&c.b, format, a...) }

// frame draws the header, axes, grid, labels and the limit line.
func (c *canvas) frame(res *CrawlResult) {
	c.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", chartW, chartH, chartW, chartH)
	c.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	c.printf(`<text x="%d" y="24" font-size="15">%s</text>`+"\n", plotL, html.EscapeString(chartTitle(res)))
	c.grid()
	c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", plotL, plotB, plotR, plotB)
	c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", plotL, plotT, plotL, plotB)
	c.printf(`<text x="%d" y="%d" text-anchor="middle">time since the workers started (s)</text>`+"\n", (plotL+plotR)/2, chartH-8)
	c.printf(`<text transform="translate(18 %d) rotate(-90)" text-anchor="middle">successful pages/s</text>`+"\n", (plotT+plotB)/2)
	c.printf(`<text x="%d" y="%d" text-anchor="end" fill="#d62728">bans</text>`+"\n", plotL-6, banRowY+4)
	if c.limit > 0 {
		c.printf(`<line class="limit" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#555" stroke-dasharray="6 4"/>`+"\n", plotL, c.y(c.limit), plotR, c.y(c.limit))
	}
}

// grid draws five horizontal grid lines and a tick per few seconds.
func (c *canvas) grid() {
	for i := 0; i <= 5; i++ {
		v := c.ymax * float64(i) / 5
		c.printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`+"\n", plotL, c.y(v), plotR, c.y(v))
		c.printf(`<text x="%d" y="%.1f" text-anchor="end">%g</text>`+"\n", plotL-6, c.y(v)+4, v)
	}
	step := max(1, c.secs/10)
	for s := 0; s <= c.secs; s += step {
		px := plotL + float64(s)*(plotR-plotL)/float64(c.secs)
		c.printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", px, plotB, px, plotB+5)
		c.printf(`<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", px, plotB+18, s)
	}
}

// series draws one line and its ban ticks; i offsets the ban row.
func (c *canvas) series(l chartLine, i int) {
	pts := make([]string, len(l.ok))
	for s, v := range l.ok {
		pts[s] = fmt.Sprintf("%.1f,%.1f", c.x(float64(s)), c.y(float64(v)))
	}
	c.printf(`<polyline class="series %s" fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", l.name, l.color, strings.Join(pts, " "))
	for s, n := range l.bans {
		if n == 0 || s >= len(l.ok) {
			continue
		}
		px, py := c.x(float64(s)), c.y(float64(l.ok[s]))
		c.printf(`<line class="ban %s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d62728" stroke-width="2"><title>%s: %d bans in second %d</title></line>`+"\n",
			l.name, px, py-7, px, py+7, l.name, n, s)
		ry := float64(banRowY - 8 + 12*i)
		c.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d62728" stroke-width="2"/><text x="%.1f" y="%.1f" font-size="9" fill="%s">%d</text>`+"\n",
			px, ry-4, px, ry+4, px+3, ry+4, l.color, n)
	}
}

// legend names the series, the limit and the ban ticks.
func (c *canvas) legend(lines []chartLine) {
	x := plotR - 170
	for i, l := range lines {
		y := plotT + 8 + 18*i
		c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d">%s</text>`+"\n", x, y, x+24, y, l.color, x+30, y+4, l.name)
	}
	y := plotT + 8 + 18*len(lines)
	c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#555" stroke-dasharray="6 4"/><text x="%d" y="%d">limit P/D</text>`+"\n", x, y, x+24, y, x+30, y+4)
	y += 18
	c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#d62728" stroke-width="2"/><text x="%d" y="%d">bans (refused requests)</text>`+"\n", x+12, y-7, x+12, y+7, x+30, y+4)
}

func chartTitle(res *CrawlResult) string {
	ips := fmt.Sprintf("%d proxies", res.Proxies)
	if res.GatewayExits > 0 {
		ips = fmt.Sprintf("a gateway of %d exit IPs (%d session ids)", res.GatewayExits, res.GatewaySessions)
	}
	t := fmt.Sprintf("crawlq vs naive policy: %s, %d workers", ips, res.Workers)
	if res.LimitRPS != nil {
		return t + fmt.Sprintf(", min interval %gms, limit %.0f pages/s", res.MinIntervalMS, *res.LimitRPS)
	}
	return t + ", no min interval"
}
