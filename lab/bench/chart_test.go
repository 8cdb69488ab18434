package bench

import (
	"strings"
	"testing"
)

func TestWriteChartMarksBansAndLimit(t *testing.T) {
	limit := 40.0
	res := &CrawlResult{Proxies: 8, Workers: 3, MinIntervalMS: 200, LimitRPS: &limit,
		Crawlq: Phase{PerSecond: []int{30, 38, 39}, BansPerSecond: []int{0, 0, 0}},
		Naive:  Phase{PerSecond: []int{8, 0, 0}, BansPerSecond: []int{9, 0, 0}}}
	var b strings.Builder
	if err := WriteChart(&b, res); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	checkSVG(t, doc, "series crawlq", "series naive", `class="limit"`, "time since the workers started (s)", "successful pages/s")
	if n := strings.Count(doc, `class="ban naive"`); n != 1 {
		t.Errorf("naive ban ticks: %d, want 1 (one second with bans)", n)
	}
	if strings.Contains(doc, `class="ban crawlq"`) {
		t.Error("crawlq has a ban tick but no bans")
	}
}

func TestWriteChartWithoutLimit(t *testing.T) {
	res := &CrawlResult{Proxies: 200, Workers: 3, Crawlq: Phase{PerSecond: []int{100}}, Naive: Phase{}}
	var b strings.Builder
	if err := WriteChart(&b, res); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, b.String(), "series crawlq", "no min interval")
	if strings.Contains(b.String(), `class="limit"`) {
		t.Error("limit line drawn without a limit")
	}
}

func TestChartTitleNamesTheGateway(t *testing.T) {
	limit := 200.0
	res := &CrawlResult{GatewayExits: 40, GatewaySessions: 200, Workers: 3, MinIntervalMS: 200, LimitRPS: &limit}
	want := "crawlq vs naive policy: a gateway of 40 exit IPs (200 session ids), 3 workers, min interval 200ms, limit 200 pages/s"
	if got := chartTitle(res); got != want {
		t.Errorf("title %q, want %q", got, want)
	}
}
