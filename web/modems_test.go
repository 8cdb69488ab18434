package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"crawlq/proxies"
)

// TestDashboardAndMetricsShowModems: a pool with a modem shows a modem
// line on the pool page and in /metrics, without the change link's key.
func TestDashboardAndMetricsShowModems(t *testing.T) {
	c := newCluster(t)
	b := c.broker.(*proxies.RedisBroker)
	ps, err := proxies.ParseReader(strings.NewReader("http://m:"+plantedPassword+"@127.0.0.40:3128 change=http://127.0.0.1:9/changeip/"+plantedPassword+"/m0"), "modems.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Import(context.Background(), ps, proxies.ImportOptions{Class: proxies.Mobile}); err != nil {
		t.Fatal(err)
	}
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker, Refresh: time.Minute, InsecureNoAuth: true})
	_, page := get(t, "GET", base+"/", "")
	_, metrics := get(t, "GET", base+"/metrics", "")
	if !strings.Contains(page, `id="modems"`) || !strings.Contains(page, "1, 0 rotating") {
		t.Errorf("pool page has no modem line")
	}
	if !strings.Contains(metrics, `crawlq_pool_modems{state="all"} 1`) || !strings.Contains(metrics, "crawlq_pool_modem_requests_per_modem_hour 0") {
		t.Errorf("/metrics has no modem figures")
	}
	if strings.Contains(page+metrics, plantedPassword) {
		t.Error("the change link's key or the password leaked")
	}
}
