package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/fetcher"
	"crawlq/lab/bench/naivepolicy"
	"crawlq/lab/truth"
	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// policy is what differs between the crawl phases: the broker each worker
// server leases from, and how the farm's proxies get into it.
type policy struct {
	name string
	// gatewayAsLines imports a gateway as plain lines, one per session
	// id: the policy knows no gateways.
	gatewayAsLines bool
	// modems is the modem phase the policy imports the modems for.
	modems    string
	newBroker func(rdb redis.UniversalClient) proxies.Broker
	load      func(ctx context.Context, rdb redis.UniversalClient, ps []proxies.Proxy) error
}

// crawlqPolicy is crawlq's RedisBroker with the site's min_interval = D.
func crawlqPolicy(o CrawlOptions) policy {
	cfg := proxies.Config{Sites: map[string]proxies.SiteConfig{o.Site: {MinInterval: brokerInterval(o.MinInterval)}}}
	return policy{
		name:      "crawlq",
		newBroker: func(rdb redis.UniversalClient) proxies.Broker { return proxies.NewRedisBroker(rdb, cfg) },
		load: func(ctx context.Context, rdb redis.UniversalClient, ps []proxies.Proxy) error {
			_, err := proxies.NewRedisBroker(rdb, cfg).Import(ctx, ps, proxies.ImportOptions{Class: proxies.Datacenter})
			return err
		},
	}
}

// brokerInterval is D as a SiteConfig.MinInterval (0 there means 1s).
func brokerInterval(d time.Duration) time.Duration {
	if d <= 0 {
		return proxies.NoMinInterval
	}
	return d
}

// naivePolicy is the article's broker.
func naivePolicy() policy {
	return policy{
		name:           "naive",
		gatewayAsLines: true,
		newBroker:      func(rdb redis.UniversalClient) proxies.Broker { return naivepolicy.New(rdb, naivepolicy.Config{}) },
		load: func(ctx context.Context, rdb redis.UniversalClient, ps []proxies.Proxy) error {
			return naivepolicy.New(rdb, naivepolicy.Config{}).LoadPool(ctx, ps)
		},
	}
}

// phaseEnv is a started phase: its testbed, registry and the farm loaded
// into the policy's broker. The testbed is fresh per phase, so bans and
// the request log of one phase never leak into another.
type phaseEnv struct {
	tb    *testbed.Testbed
	reg   *site.Registry
	queue string
	feed  *feeder
	// browsers are the worker servers' browsers in challenge mode.
	browsers browsers
	// workers are the phase's worker servers, for their exit figures.
	workers []*tasks.Worker
}

// after runs once a phase's figures are taken, before its testbed stops.
type after func(ctx context.Context, env *phaseEnv) error

// crawlPhase runs K workers on pol for the window and reads the figures.
func (r *crawlRun) crawlPhase(ctx context.Context, pol policy, then after) (Phase, error) {
	env, err := r.startPhase(ctx, pol)
	if err != nil {
		return Phase{}, err
	}
	defer env.tb.Close()
	defer env.feed.close()
	r.log.Info("phase starts", zap.String("phase", pol.name), zap.Int("jobs", env.feed.count()))
	m := newMeter(r.o.Duration)
	cpu, bcpu, err := r.serve(ctx, pol, env, m)
	if err != nil {
		return Phase{}, err
	}
	ph := r.figures(env, m)
	ph.CPUPerPage, ph.BrokerCPUPerPage = cpu, bcpu
	ph.Gateway = gatewayFigures(env, r.o.Site)
	if pol.name == "crawlq" {
		r.jobs = ph.Jobs
		r.challenge = r.challengeFigures(env, r.o.Duration)
		if err := r.scoreBans(ctx, pol, env, &ph); err != nil {
			return Phase{}, err
		}
	}
	r.log.Info("phase done", zap.String("phase", pol.name), zap.Float64("rps", ph.RPS), zap.Int("bans", ph.Bans))
	r.dropQueue(env.queue)
	if then != nil {
		return ph, then(ctx, env)
	}
	return ph, nil
}

// startPhase starts the testbed, points the site at it, loads the farm
// into the broker and queues the first jobs.
func (r *crawlRun) startPhase(ctx context.Context, pol policy) (*phaseEnv, error) {
	var tb *testbed.Testbed
	var err error
	// the testbed's goroutines (its servers, their connections, the
	// proxies' upstream transports) carry part=testbed as well as the
	// phase, so a profile tells the site's cost from crawlq's
	pprof.Do(ctx, pprof.Labels("part", "testbed"), func(ctx context.Context) {
		tb, err = testbed.Start(ctx, r.testbedConfig())
	})
	if err != nil {
		return nil, err
	}
	env, err := r.preparePhase(ctx, pol, tb)
	if err != nil {
		tb.Close()
		return nil, err
	}
	return env, nil
}

func (r *crawlRun) preparePhase(ctx context.Context, pol policy, tb *testbed.Testbed) (*phaseEnv, error) {
	reg, queue, err := r.registry(tb, "bench-"+pol.name)
	if err != nil {
		return nil, err
	}
	ps, err := r.phaseProxies(tb, pol)
	if err != nil {
		return nil, err
	}
	if err := pol.load(ctx, r.t.brokerClient(), ps); err != nil {
		return nil, fmt.Errorf("load the farm: %w", err)
	}
	env := &phaseEnv{tb: tb, reg: reg, queue: queue}
	env.feed = newFeeder(r.t, reg, r.o.Site, queue, pol.name, productURLs(r.siteURL(tb), tb, r.o.Site))
	return env, env.feed.enqueue(ctx, r.initialJobs())
}

// testbedConfig is the farm of P proxies (or the gateway or the modems
// beside a token farm; the volume-ban Avito with modems) and the site in strict mode with min interval D (the other sites
// keep their defaults and get no traffic).
func (r *crawlRun) testbedConfig() testbed.Config {
	rules := testbed.DefaultRules()[r.o.Site]
	if r.o.Modems > 0 {
		rules = testbed.AvitoVolumeRules(r.o.Volume)
	}
	rules.MinInterval, rules.Strict, rules.Challenge = r.o.MinInterval, true, r.challengeRule()
	return testbed.Config{Proxies: r.farmSize(), Seed: r.o.Seed, CatalogSize: r.o.CatalogSize,
		Sites: map[string]testbed.SiteRules{r.o.Site: rules}, Fingerprint: !r.o.PlainHTTP, Gateway: r.gatewayConfig(),
		Modems: r.modemConfig()}
}

// registry points the site at the testbed with min_interval D and gives
// it the phase's own queue, so no job of one phase is served in another.
func (r *crawlRun) registry(tb *testbed.Testbed, queue string) (*site.Registry, string, error) {
	reg := site.Default().Clone()
	err := reg.Apply(site.Config{Sites: map[string]site.SiteConfig{r.o.Site: {
		BaseURL: r.siteURL(tb), MinInterval: r.o.MinInterval.String(),
		Class: string(proxies.Datacenter), Queue: queue}}})
	return reg, queue, err
}

// siteURL is the crawled site's base URL: its HTTPS listener, or the
// plain one with PlainHTTP.
func (r *crawlRun) siteURL(tb *testbed.Testbed) string {
	if r.o.PlainHTTP {
		return tb.SiteURL(r.o.Site)
	}
	return tb.HTTPSSiteURL(r.o.Site)
}

// productURLs are the catalog's product pages on the testbed at base.
func productURLs(base string, tb *testbed.Testbed, siteName string) []string {
	ps := tb.Catalog.Products(siteName)
	urls := make([]string, len(ps))
	for i, p := range ps {
		urls[i] = base + p.URL
	}
	return urls
}

// serve runs K worker servers for the window while the feeder keeps the
// queue full, then stops them; it returns the CPU an OK page cost over the
// window, and the broker's Redis's share when it has its own.
func (r *crawlRun) serve(ctx context.Context, pol policy, env *phaseEnv, m *meter) (*CPUCost, *CPUCost, error) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	errs := make([]error, r.o.Workers+1)
	wg.Go(func() { errs[r.o.Workers] = env.feed.keepAbove(wctx, r.lowWater()) })
	m.start()
	mark := markCPU(ctx, r.t.Client)
	var bmark cpuMark
	if r.t.split() {
		bmark = markCPU(ctx, r.t.Broker)
	}
	for i := range r.o.Workers {
		w, closeClients := r.worker(pol, env, i, m)
		wg.Go(func() {
			defer closeClients()
			errs[i] = w.Run(wctx)
		})
	}
	err := m.wait(ctx)
	cpu := mark.cost(ctx, r.t.Client, m.pages())
	var bcpu *CPUCost
	if r.t.split() {
		bcpu = bmark.cost(ctx, r.t.Broker, m.pages())
	}
	stop()
	wg.Wait()
	env.closeBrowsers()
	return cpu, bcpu, errors.Join(append(errs, err)...)
}

// worker builds server i of the phase, with its own Redis client (and
// broker Redis client) and broker; closeClients closes them.
func (r *crawlRun) worker(pol policy, env *phaseEnv, i int, m *meter) (w *tasks.Worker, closeClients func()) {
	rdb, brdb := r.t.NewClient(), redis.UniversalClient(nil)
	closeClients = func() { rdb.Close() }
	if r.t.split() {
		brdb = r.t.NewBrokerClient()
		closeClients = func() { rdb.Close(); brdb.Close() }
	} else {
		brdb = rdb
	}
	w = tasks.NewWorker(tasks.WorkerConfig{
		Redis: r.t.Asynq, RDB: rdb, Broker: pol.newBroker(brdb), BrokerOnRDB: !r.t.split(),
		ServerID: fmt.Sprintf("bench-%s-%d", pol.name, i+1), Concurrency: r.o.Concurrency,
		Queues: map[string]int{env.queue: 1}, Sites: env.reg, ShutdownTimeout: 2 * time.Second,
		Observe: m.observe, Fetcher: fetcher.Config{TLS: &tls.Config{RootCAs: env.tb.CA.Pool()}, PlainTLS: r.o.PlainTLS},
		Browser: r.newBrowser(env), OnChallenge: env.observeChallenge, PollInterval: benchPollInterval,
		ExitProbe: fetcher.ExitProbe{URL: env.tb.EchoURL()}, ExitBusy: r.o.ExitBusy,
	})
	env.workers = append(env.workers, w)
	return w, closeClients
}

// figures reads the phase's pages from the meter and its bans and
// violations from the site's own request log.
func (r *crawlRun) figures(env *phaseEnv, m *meter) Phase {
	entries := env.tb.Log.Entries()
	rep := testbed.Check(entries, map[string]time.Duration{r.o.Site: r.o.MinInterval})
	ph := Phase{Pages: m.pages(), PerSecond: m.perSecond(), Requests: rep.Requests, I1Violations: rep.I1Violations,
		I2Violations: rep.I2Violations, BannedIPs: len(rep.BansPerIP), Jobs: env.feed.count()}
	for _, d := range rep.Details {
		r.log.Debug("invariant violation", zap.String("detail", d))
	}
	ph.RPS = float64(ph.Pages) / r.o.Duration.Seconds()
	ph.BansPerSecond = make([]int, len(ph.PerSecond))
	for _, e := range entries {
		if e.Site == r.o.Site && e.Verdict == testbed.VerdictFingerprint {
			ph.FingerprintRefusals++
		}
		if e.Site != r.o.Site || !e.Verdict.Blocked() {
			continue
		}
		ph.Bans++
		if s := int(e.Start.Sub(m.t0) / time.Second); s >= 0 && s < len(ph.BansPerSecond) {
			ph.BansPerSecond[s]++
		}
	}
	if ph.Requests > 0 {
		ph.BanRate = float64(ph.Bans) / float64(ph.Requests)
	}
	return ph
}

// scoreBans measures the phase's quarantines against the site's log.
func (r *crawlRun) scoreBans(ctx context.Context, pol policy, env *phaseEnv, ph *Phase) error {
	st, err := pol.newBroker(r.t.brokerClient()).Stats(ctx)
	if err != nil {
		return fmt.Errorf("pool stats: %w", err)
	}
	rep := truth.Score(env.tb.Log.Entries(), st)
	ph.FalseQuarantines, ph.MissedSoftBans = &rep.FalseQuarantines, &rep.MissedSoftBans
	return nil
}

// dropQueue deletes what is left of a phase's queue now, to free memory;
// a queue that still has active tasks (a stopped worker's, until their
// Asynq lease ends) is left to the final cleanup.
func (r *crawlRun) dropQueue(queue string) {
	insp := asynq.NewInspector(r.t.Asynq)
	defer insp.Close()
	if err := insp.DeleteQueue(queue, true); err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
		r.log.Debug("queue left to the final cleanup", zap.String("queue", queue), zap.Error(err))
	}
}

// expectedRate is the jobs per second a crawl phase may take: the limit,
// or a guess without one (the feeder tops up when the guess is low).
func (r *crawlRun) expectedRate() float64 {
	if r.o.MinInterval > 0 {
		return float64(r.o.ips()) / r.o.MinInterval.Seconds()
	}
	return noLimitGuess
}

// benchPollInterval is the crawl workers' poll interval: ten looks a
// second at an empty queue, the pace the published figures were measured
// at (a crawl's queue is seldom empty; the idle cost is `bench idle`'s).
const benchPollInterval = 100 * time.Millisecond

// noLimitGuess is the jobs/s assumed without a min interval.
const noLimitGuess = 300

// initialJobs is queued before a phase: the window's worth at the expected
// rate plus 20%, plus every job slot twice.
func (r *crawlRun) initialJobs() int {
	return int(r.expectedRate()*r.o.Duration.Seconds()*1.2) + r.slots()*2
}

// lowWater is the pending jobs below which the feeder tops up.
func (r *crawlRun) lowWater() int { return max(r.slots()*2, int(r.expectedRate()*2)) }

func (r *crawlRun) slots() int { return r.o.Workers * r.o.Concurrency }
