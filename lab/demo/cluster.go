package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/fetcher/browser"
	"crawlq/internal/redisx"
	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"

	// The demo crawls every built-in site.
	_ "crawlq/tasks/avito"
	_ "crawlq/tasks/ozon"
	_ "crawlq/tasks/wildberries"
)

// politeMargin is how far above the testbed's per-IP limit the demo keeps
// each site's min_interval, at least: request start times seen by a site
// jitter by the proxy hop, so pacing at exactly the limit would be unsafe.
const politeMargin = 1.5

// cluster is the running parts of one demo, all in this process.
type cluster struct {
	conn   *redisx.Conn
	tb     *testbed.Testbed
	reg    *site.Registry
	broker *proxies.RedisBroker
	insp   *asynq.Inspector
	// intervals is each site's min_interval as the broker paces it.
	intervals map[string]time.Duration
	// confirms counts the workers' confirmations of Suspect answers.
	confirms confirmCounter
	// noResultJobs is how many of the planned searches match nothing.
	noResultJobs int
	// chrome is the Chromium of challenge mode; "" when it is off.
	chrome string
	// challenges counts the workers' browser visits; browsers are the
	// workers' browsers (one each), closed with the cluster.
	challenges challengeCounter
	browsers   []*browser.Browser
	// postgres is the demo sink's database ("" without one).
	postgres string
}

// startCluster opens the embedded Redis, starts the testbed with anti-bot
// rules and fingerprint checks on (and a gateway beside the farm), points
// the sites at it and imports the farm and the gateway into the broker.
func startCluster(ctx context.Context, cfg Config) (c *cluster, err error) {
	c = &cluster{}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	if c.conn, err = redisx.Open(ctx, redisx.Embedded); err != nil {
		return nil, err
	}
	var challenge bool
	c.chrome, challenge = findBrowser(cfg)
	c.tb, err = testbed.Start(context.WithoutCancel(ctx), testbed.Config{Proxies: cfg.Proxies, Seed: cfg.Seed,
		Fingerprint: true, Challenge: challenge, Farm: testbed.FarmConfig{Auth: true, Faults: faults(cfg)}, Sites: softBanRules(cfg),
		Gateway: gatewayConfig(cfg), Modems: modemConfig(cfg)})
	if err != nil {
		return nil, fmt.Errorf("start testbed: %w", err)
	}
	if c.reg, c.intervals, err = testbedRegistry(c.tb); err != nil {
		return nil, err
	}
	c.broker = proxies.NewRedisBroker(c.conn.Client, tasks.BrokerConfig(c.reg, cfg.Logger))
	if err = c.importFarm(ctx, cfg); err != nil {
		return nil, err
	}
	c.insp = asynq.NewInspector(c.conn.Asynq)
	return c, nil
}

// faults makes the last Dead proxies of the farm dead and the Flaky ones
// before them flaky.
func faults(cfg Config) map[int]testbed.Fault {
	out := map[int]testbed.Fault{}
	i := cfg.Proxies - 1
	for n := 0; n < cfg.Dead; n, i = n+1, i-1 {
		out[i] = testbed.Fault{Dead: true}
	}
	for n := 0; n < cfg.Flaky; n, i = n+1, i-1 {
		out[i] = testbed.Fault{Flaky: cfg.FlakyRate}
	}
	return out
}

// demoClearanceWait is how long the demo's leases wait for a proxy that
// holds the site's clearance (site.Challenge.Wait): its three browsers on
// two cores are what the demo runs short of, not proxies, so a wait of
// about one visit's cost saves visits without slowing it (65 visits and
// 63 s without the wait, 34-38 visits and 66 s with it).
const demoClearanceWait = 2 * time.Second

// testbedRegistry points every site at the testbed's HTTPS listener (its
// fingerprint checks on) with datacenter proxies
// and a min_interval at least politeMargin times the testbed's limit (the
// site defaults are already slower), so the broker's pacing keeps I2. It
// names each site's clearance cookie as the testbed sets it, as a user
// who knows a site's cookie does (challenge: {cookie: …}).
func testbedRegistry(tb *testbed.Testbed) (*site.Registry, map[string]time.Duration, error) {
	reg := site.Default().Clone()
	cfg := site.Config{Sites: map[string]site.SiteConfig{}}
	limits := tb.MinIntervals()
	for name, u := range tb.HTTPSSites() {
		sc := site.SiteConfig{BaseURL: u, Class: string(proxies.Datacenter),
			Challenge: &site.ChallengeConfig{Wait: demoClearanceWait.String(), Cookie: testbed.ChallengeCookie[name]}}
		s, err := reg.Get(name)
		if err != nil {
			return nil, nil, fmt.Errorf("testbed site %s: %w", name, err)
		}
		if name == testbed.SiteAvito {
			sc.RotateAfter = avitoRotateAfter // only modems rotate
		}
		if floor := time.Duration(float64(limits[name]) * politeMargin); s.MinInterval < floor {
			sc.MinInterval = floor.String()
		}
		cfg.Sites[name] = sc
	}
	if err := reg.Apply(cfg); err != nil {
		return nil, nil, fmt.Errorf("point sites at the testbed: %w", err)
	}
	return reg, siteIntervals(reg), nil
}

func siteIntervals(reg *site.Registry) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, name := range testbed.SiteNames {
		if s, err := reg.Get(name); err == nil {
			out[name] = s.MinInterval
		}
	}
	return out
}

// importFarm puts the farm's proxies (dead and flaky ones too: the broker
// has to find them out), the gateway's slots and the modems into the
// broker's pool.
func (c *cluster) importFarm(ctx context.Context, cfg Config) error {
	ps, err := proxies.ParseFile(c.tb.ProxiesFile)
	if err != nil {
		return fmt.Errorf("read farm proxies: %w", err)
	}
	slots, err := c.gatewayProxies(cfg)
	if err != nil {
		return err
	}
	modems, err := c.modemProxies()
	if err != nil {
		return err
	}
	ps = append(append(ps, slots...), modems...)
	if _, err := c.broker.Import(ctx, ps, proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		return fmt.Errorf("import farm proxies: %w", err)
	}
	return nil
}

// queues maps each testbed site to its Asynq queue.
func (c *cluster) queues() map[string]string {
	out := map[string]string{}
	for _, name := range testbed.SiteNames {
		if s, err := c.reg.Get(name); err == nil {
			out[name] = s.Queue
		}
	}
	return out
}

// close stops what startCluster started, last first. Safe on a partly
// started cluster.
func (c *cluster) close() {
	for _, b := range c.browsers {
		b.Close()
	}
	if c.insp != nil {
		_ = c.insp.Close()
	}
	if c.tb != nil {
		c.tb.Close()
	}
	if c.conn != nil {
		c.conn.Close()
	}
}
