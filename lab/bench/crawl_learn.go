package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/fetcher"
	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// LearnOptions configure RunLearnCrawl (`crawlq bench crawl --learn`).
type LearnOptions struct {
	// Proxies is each arm's share of the farm. Default 10.
	Proxies int
	// Workers is each arm's worker servers, Concurrency their job slots.
	// Defaults 1 and 2 × Proxies.
	Workers, Concurrency int
	// Gap is the site's hidden gap per IP at the start. Default 500ms.
	Gap time.Duration
	// TightenTo, after TightenAt, is the hidden gap from then on.
	// Defaults 1s after 4 min; TightenAt < 0: never.
	TightenTo, TightenAt time.Duration
	// Duration is the whole run. Default 7 min.
	Duration time.Duration
	// TooFast and Fixed are the fixed arms' min_interval: a guess too
	// fast and a safe one. Defaults 200ms and 2s.
	TooFast, Fixed time.Duration
	// Site is the crawled site. Default wildberries.
	Site        string
	Seed        int64
	CatalogSize int
	Logger      *zap.Logger
}

func (o LearnOptions) withDefaults() LearnOptions {
	setInt(&o.Proxies, 10)
	setInt(&o.Workers, 1)
	setInt(&o.Concurrency, 2*o.Proxies)
	setInt(&o.CatalogSize, 1000)
	setDur(&o.Gap, 500*time.Millisecond)
	setDur(&o.TightenTo, time.Second)
	setDur(&o.Duration, 7*time.Minute)
	setDur(&o.TooFast, 200*time.Millisecond)
	setDur(&o.Fixed, 2*time.Second)
	if o.TightenAt == 0 {
		o.TightenAt = 4 * time.Minute
	}
	if o.Site == "" {
		o.Site = testbed.SiteWildberries
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return o
}

func setDur(v *time.Duration, def time.Duration) {
	if *v <= 0 {
		*v = def
	}
}

// The arms of a learn run.
const (
	ArmAuto    = "auto"
	ArmTooFast = "too-fast"
	ArmFixed   = "fixed"
)

// learnArm is one arm while it runs: its pool, queue, proxies' IPs and
// meter.
type learnArm struct {
	name    string
	sc      proxies.SiteConfig
	minIntv string // the site's min_interval as configured
	pool    string
	ps      []proxies.Proxy
	ips     map[string]bool
	meter   *meter
	feed    *feeder
	reg     *site.Registry
	pace    []PacePoint
}

// RunLearnCrawl crawls the site with a hidden gap per IP from three arms
// side by side, each with a third of the farm, its own pool, queue and
// workers: min_interval auto, a fixed guess too fast, and a fixed safe
// guess. The gap tightens mid-run. The target DB must be empty; its
// asynq:* and crawlq:* keys are deleted at the end.
func RunLearnCrawl(ctx context.Context, target CrawlTarget, o LearnOptions) (*LearnResult, error) {
	o = o.withDefaults()
	if target.split() {
		return nil, fmt.Errorf("bench crawl --learn: runs on one Redis (no --broker-redis)")
	}
	if err := checkEmpty(ctx, target.Client); err != nil {
		return nil, err
	}
	defer cleanupCrawl(context.WithoutCancel(ctx), target.Client)
	if err := target.defaultNewClient(); err != nil {
		return nil, err
	}
	tb, err := testbed.Start(ctx, learnTestbed(o))
	if err != nil {
		return nil, err
	}
	defer tb.Close()
	arms, err := learnArms(ctx, target, tb, o)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, a := range arms {
			a.feed.close()
		}
	}()
	t0, err := runArms(ctx, target, tb, o, arms)
	if err != nil {
		return nil, err
	}
	return learnFigures(tb, o, arms, t0), nil
}

// learnTestbed is a farm of three arms' proxies and the site with only
// the hidden gap (no rule crawlq is told of).
func learnTestbed(o LearnOptions) testbed.Config {
	rules := testbed.DefaultRules()[o.Site]
	rules.MinInterval = 0
	rules.Hidden = &testbed.HiddenGap{Gap: o.Gap}
	return testbed.Config{Proxies: 3 * o.Proxies, Seed: o.Seed, CatalogSize: o.CatalogSize,
		Sites: map[string]testbed.SiteRules{o.Site: rules}, Fingerprint: true}
}

// learnArms splits the farm and loads each arm's pool and first jobs.
func learnArms(ctx context.Context, t CrawlTarget, tb *testbed.Testbed, o LearnOptions) ([]*learnArm, error) {
	ps, err := proxies.ParseFile(tb.ProxiesFile)
	if err != nil {
		return nil, err
	}
	farm := tb.Farm.Proxies()
	arms := []*learnArm{
		{name: ArmAuto, minIntv: "auto", sc: proxies.SiteConfig{Learn: &proxies.PaceLearning{}}},
		{name: ArmTooFast, minIntv: o.TooFast.String(), sc: proxies.SiteConfig{MinInterval: o.TooFast}},
		{name: ArmFixed, minIntv: o.Fixed.String(), sc: proxies.SiteConfig{MinInterval: o.Fixed}},
	}
	for i, a := range arms {
		a.pool, a.ips, a.meter = "bench-learn-"+a.name, map[string]bool{}, newMeter(o.Duration)
		for j := i * o.Proxies; j < (i+1)*o.Proxies; j++ {
			a.ps = append(a.ps, ps[j])
			a.ips[farm[j].IP] = true
		}
		if err := a.prepare(ctx, t, tb, o); err != nil {
			return nil, fmt.Errorf("arm %s: %w", a.name, err)
		}
	}
	return arms, nil
}

// prepare loads the arm's proxies into its pool, and queues its first
// jobs under its own queue.
func (a *learnArm) prepare(ctx context.Context, t CrawlTarget, tb *testbed.Testbed, o LearnOptions) error {
	if _, err := a.broker(t.Client, o).Import(ctx, a.ps, proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		return err
	}
	a.reg = site.Default().Clone()
	queue := "bench-learn-" + a.name
	err := a.reg.Apply(site.Config{Sites: map[string]site.SiteConfig{o.Site: {
		BaseURL: tb.HTTPSSiteURL(o.Site), MinInterval: a.minIntv, Class: string(proxies.Datacenter), Queue: queue}}})
	if err != nil {
		return err
	}
	a.feed = newFeeder(t, a.reg, o.Site, queue, "learn-"+a.name, productURLs(tb.HTTPSSiteURL(o.Site), tb, o.Site))
	return a.feed.enqueue(ctx, a.low(o))
}

// low is the pending jobs below which the arm's feeder tops up.
func (a *learnArm) low(o LearnOptions) int { return 2 * o.Workers * o.Concurrency }

func (a *learnArm) broker(rdb redis.UniversalClient, o LearnOptions) *proxies.RedisBroker {
	return proxies.NewRedisBroker(rdb, proxies.Config{Pool: a.pool, Sites: map[string]proxies.SiteConfig{o.Site: a.sc}})
}

// runArms runs every arm's workers and feeder for the duration, tightens
// the gap on time and samples the learned pace every second. It returns
// the window's start.
func runArms(ctx context.Context, t CrawlTarget, tb *testbed.Testbed, o LearnOptions, arms []*learnArm) (time.Time, error) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		if err != nil && wctx.Err() == nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	t0 := time.Now()
	for _, a := range arms {
		a.meter.start()
		wg.Go(func() { fail(a.feed.keepAbove(wctx, a.low(o))) })
		for i := range o.Workers {
			rdb := t.NewClient()
			w := a.worker(t, rdb, tb, o, i)
			wg.Go(func() { defer rdb.Close(); fail(w.Run(wctx)) })
		}
	}
	wg.Go(func() { samplePace(wctx, t.Client, o, arms[0], t0) })
	if o.TightenAt > 0 && o.TightenAt < o.Duration {
		wg.Go(func() { tighten(wctx, tb, o, t0) })
	}
	err := arms[0].meter.wait(ctx)
	stop()
	wg.Wait()
	return t0, errors.Join(append(errs, err)...)
}

// worker is the arm's worker server i.
func (a *learnArm) worker(t CrawlTarget, rdb redis.UniversalClient, tb *testbed.Testbed, o LearnOptions, i int) *tasks.Worker {
	return tasks.NewWorker(tasks.WorkerConfig{
		Redis: t.Asynq, RDB: rdb, Broker: a.broker(rdb, o), BrokerOnRDB: true,
		ServerID: fmt.Sprintf("bench-learn-%s-%d", a.name, i+1), Concurrency: o.Concurrency,
		Queues: map[string]int{"bench-learn-" + a.name: 1}, Sites: a.reg, ShutdownTimeout: 2 * time.Second,
		Observe: a.meter.observe, Fetcher: fetcher.Config{TLS: &tls.Config{RootCAs: tb.CA.Pool()}},
		PollInterval: benchPollInterval,
	})
}

// tighten sets the hidden gap to TightenTo at TightenAt.
func tighten(ctx context.Context, tb *testbed.Testbed, o LearnOptions, t0 time.Time) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(t0.Add(o.TightenAt))):
		_ = tb.SetHiddenGap(o.Site, o.TightenTo)
	}
}

// samplePace reads the auto arm's learned pace every second.
func samplePace(ctx context.Context, rdb redis.UniversalClient, o LearnOptions, a *learnArm, t0 time.Time) {
	b := a.broker(rdb, o)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		l, err := b.Limit(ctx, proxies.PaceName(o.Site, proxies.Datacenter))
		if err == nil {
			a.pace = append(a.pace, PacePoint{S: round3(time.Since(t0).Seconds()), MS: l.Value, Probe: l.State["probe"]})
		}
	}
}
