package web

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/proxies"
)

// seedPool gives the dashboard a pool to show.
// TODO(web): switch to proxies.NewRedisBroker + Import once it lands.
func seedPool(t *testing.T, _ *redis.Client) proxies.Broker {
	t.Helper()
	return &fixedBroker{stats: fixedStats()}
}

// fixedBroker serves a fixed snapshot; every other call fails.
type fixedBroker struct{ stats *proxies.PoolStats }

var errFixed = errors.New("fixed broker")

func (b *fixedBroker) Stats(context.Context) (*proxies.PoolStats, error) { return b.stats, nil }
func (b *fixedBroker) Lease(context.Context, string, proxies.Class, string, string, time.Duration) (*proxies.Lease, error) {
	return nil, errFixed
}
func (b *fixedBroker) LeaseWait(context.Context, string, proxies.Class, string, string, time.Duration) (*proxies.Lease, error) {
	return nil, errFixed
}
func (b *fixedBroker) LeaseProxy(context.Context, string, string, string, string, time.Duration) (*proxies.Lease, error) {
	return nil, errFixed
}
func (b *fixedBroker) Extend(context.Context, *proxies.Lease, time.Duration) (*proxies.Lease, error) {
	return nil, errFixed
}
func (b *fixedBroker) Release(context.Context, *proxies.Lease, proxies.Outcome) error {
	return errFixed
}

func fixedStats() *proxies.PoolStats {
	site := func(state string, ok, failed, banned int64) proxies.ProxySiteStats {
		return proxies.ProxySiteStats{State: state, OK: ok, Failed: failed, Banned: banned,
			EWMALatency: 120 * time.Millisecond, LeasesByHolder: map[string]int64{"server-a": ok}}
	}
	return &proxies.PoolStats{At: time.Now(), Total: 3,
		Sites: map[string]proxies.SiteStats{
			"wildberries": {Ready: 1, Leased: 1, ByClass: map[proxies.Class]proxies.StateCounts{proxies.Datacenter: {Ready: 1, Leased: 1}}},
			"ozon":        {Ready: 1, Quarantined: 1, ByClass: map[proxies.Class]proxies.StateCounts{proxies.Datacenter: {Ready: 1, Quarantined: 1}}},
			"avito":       {Ready: 1, ByClass: map[proxies.Class]proxies.StateCounts{proxies.Residential: {Ready: 1}}},
		},
		Proxies: []proxies.ProxyStats{
			{ID: "p1", Masked: "http://alice:***@127.0.0.2:8001", Class: proxies.Datacenter,
				Sites: map[string]proxies.ProxySiteStats{"wildberries": site("leased", 5, 1, 0), "ozon": site("ready", 2, 0, 0)}},
			{ID: "p2", Masked: "http://bob:***@127.0.0.3:8001", Class: proxies.Datacenter,
				Sites: map[string]proxies.ProxySiteStats{"wildberries": site("ready", 1, 0, 0), "ozon": site("quarantined", 0, 0, 2)}},
			// A broker bug leaking the password in Masked must not reach a page.
			{ID: "p3", Masked: "http://carol:" + plantedPassword + "@127.0.0.4:8001", Class: proxies.Residential,
				Sites: map[string]proxies.ProxySiteStats{"avito": site("ready", 0, 0, 0)}},
		},
	}
}
