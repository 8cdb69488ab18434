package web

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/proxies"
)

// seedLines is the imported pool; alice's proxy carries the planted password.
var seedLines = []struct {
	line  string
	class proxies.Class
}{
	{line: "http://alice:" + plantedPassword + "@127.0.0.2:8001", class: proxies.Datacenter},
	{line: "http://bob:pw-bob@127.0.0.3:8001", class: proxies.Datacenter},
	{line: "socks5://carol:pw-carol@127.0.0.4:1080", class: proxies.Datacenter},
	{line: "127.0.0.5:8001:dave:pw-dave", class: proxies.Residential},
}

// seedPool imports the pool into a real RedisBroker and drives leases so
// that every state shows: on wildberries one proxy cooling after an ok and
// one leased, which holds wildberries' clearance (cleared 1 there, 0 on
// the other sites); on ozon one quarantined after a ban; on avito one
// cooling after a failure. A one-hour min interval keeps the states still.
func seedPool(t *testing.T, rdb *redis.Client) proxies.Broker {
	t.Helper()
	ctx := context.Background()
	b := proxies.NewRedisBroker(rdb, proxies.Config{Default: proxies.SiteConfig{MinInterval: time.Hour}})
	var ps []proxies.Proxy
	for _, s := range seedLines {
		p, err := proxies.ParseLine(s.line)
		if err != nil {
			t.Fatalf("parse %s: %v", s.line, err)
		}
		p.Class = s.class
		ps = append(ps, p)
	}
	if _, err := b.Import(ctx, ps, proxies.ImportOptions{}); err != nil {
		t.Fatalf("import: %v", err)
	}
	leaseAndRelease(t, b, "wildberries", proxies.Datacenter, "server-a", proxies.OK(120*time.Millisecond))
	held := lease(t, b, "wildberries", proxies.Datacenter, "server-b")
	if err := b.MarkCleared(ctx, "wildberries", held.Proxy.ID, time.Hour); err != nil {
		t.Fatalf("mark cleared: %v", err)
	}
	leaseAndRelease(t, b, "ozon", proxies.Datacenter, "server-a", proxies.Banned("captcha page"))
	leaseAndRelease(t, b, "avito", proxies.Residential, "server-b", proxies.Failed("connect timeout"))
	return b
}

func lease(t *testing.T, b proxies.Broker, site string, c proxies.Class, holder string) *proxies.Lease {
	t.Helper()
	l, err := b.Lease(context.Background(), proxies.LeaseRequest{Site: site, Class: c, Holder: holder, Task: "task-" + site, TTL: time.Hour})
	if err != nil {
		t.Fatalf("lease %s %s: %v", site, c, err)
	}
	return l
}

func leaseAndRelease(t *testing.T, b proxies.Broker, site string, c proxies.Class, holder string, o proxies.Outcome) {
	t.Helper()
	if err := b.Release(context.Background(), lease(t, b, site, c, holder), o); err != nil {
		t.Fatalf("release %s: %v", site, err)
	}
}
