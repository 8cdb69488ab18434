package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/fetcher"
	"crawlq/internal/backoff"
	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// MixOptions configure RunMix. Zero fields take the defaults named.
type MixOptions struct {
	// WBProxies are Wildberries' proxies (class datacenter). Default 8.
	WBProxies int
	// AvitoProxies are Avito's (class residential). Default 1.
	AvitoProxies int
	// AvitoModems, when > 0, gives Avito that many testbed modems (class
	// mobile) instead of its proxies, the site banning an IP past the
	// bench's volume rule and rotate_after 2 below it: the modems rotate
	// again and again while the Avito backlog waits for them.
	AvitoModems int
	// MinInterval is both sites' min_interval (broker and the testbed's
	// strict rule). Default 1.5s.
	MinInterval time.Duration
	// Duration is the measured window. Default 60s.
	Duration time.Duration
	// Workers are the worker servers, Concurrency each one's job slots,
	// serving both queues at weight 1. Default 1 × 8.
	Workers, Concurrency int
	// AvitoJobs is the Avito backlog queued beside Wildberries'. Default 72.
	AvitoJobs int
	// PollInterval is the workers' (tasks.WorkerConfig.PollInterval).
	// Default: a worker's own default, as `crawlq worker` runs.
	PollInterval time.Duration
	// Logger gets progress lines. Default zap.NewNop().
	Logger *zap.Logger
}

func (o MixOptions) withDefaults() MixOptions {
	setInt(&o.WBProxies, 8)
	setInt(&o.AvitoProxies, 1)
	setInt(&o.Workers, 1)
	setInt(&o.Concurrency, 8)
	setInt(&o.AvitoJobs, 72)
	if o.MinInterval <= 0 {
		o.MinInterval = 1500 * time.Millisecond
	}
	if o.Duration <= 0 {
		o.Duration = time.Minute
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return o
}

// MixResult is `crawlq bench mix`: one-page Wildberries jobs beside an
// Avito backlog whose few proxies cannot serve it at once.
type MixResult struct {
	WBProxies    int     `json:"wb_proxies"`
	AvitoProxies int     `json:"avito_proxies"`
	AvitoModems  int     `json:"avito_modems,omitempty"`
	Workers      int     `json:"workers"`
	Concurrency  int     `json:"concurrency"`
	DurationS    float64 `json:"duration_s"`
	MinIntervalS float64 `json:"min_interval_s"`
	AvitoJobs    int     `json:"avito_jobs"`
	// WB and Avito are each site's OK pages (one a job) in the window.
	WB    MixSite `json:"wildberries"`
	Avito MixSite `json:"avito"`
	// FailedAttempts are the attempts Asynq counted as failed (each uses
	// up a retry), Archived the jobs failed for good, over both queues.
	FailedAttempts int `json:"failed_attempts"`
	Archived       int `json:"archived"`
	// HandedBack are the attempts that gave their slot back to wait for
	// a proxy (neither a failure nor a retry).
	HandedBack int64 `json:"handed_back"`
	// AvitoPeakWaiting is the most Avito jobs one worker had waiting in
	// their slots for a proxy at once (sessions.Manager.PeakWaiting).
	AvitoPeakWaiting int `json:"avito_peak_waiting"`
	// Bans, I1 and I2 are from the sites' own request log.
	Bans int `json:"bans"`
	I1   int `json:"i1_violations"`
	I2   int `json:"i2_violations"`
}

// MixSite is one site's figures of the window.
type MixSite struct {
	Jobs      int     `json:"jobs"`
	PerSecond float64 `json:"jobs_per_s"`
	// Limit is the site's proxies (modems) / min_interval; OfLimit the
	// share of it reached.
	Limit   float64 `json:"limit_per_s"`
	OfLimit float64 `json:"of_limit"`
}

// RunMix crawls one-page Wildberries jobs (kept plentiful) and a backlog
// of one-page Avito jobs queued beside them, with o.Workers workers of
// o.Concurrency slots serving both queues, and measures each site's jobs
// per second against its limit. The target DB must be empty; its asynq:*
// and crawlq:* keys are deleted at the end.
func RunMix(ctx context.Context, target CrawlTarget, o MixOptions) (*MixResult, error) {
	o = o.withDefaults()
	if target.split() {
		return nil, fmt.Errorf("bench mix: runs on one Redis, without a broker Redis")
	}
	if err := checkEmpty(ctx, target.Client); err != nil {
		return nil, err
	}
	defer cleanupCrawl(context.WithoutCancel(ctx), target.Client)
	if err := target.defaultNewClient(); err != nil {
		return nil, err
	}
	tb, err := testbed.Start(ctx, mixTestbed(o))
	if err != nil {
		return nil, err
	}
	defer tb.Close()
	m := &mixRun{o: o, t: target, tb: tb}
	if err := m.prepare(ctx); err != nil {
		return nil, err
	}
	return m.run(ctx)
}

// The bench's queues.
const (
	mixWBQueue    = "bench-mix-wildberries"
	mixAvitoQueue = "bench-mix-avito"
)

// mixRun is one RunMix.
type mixRun struct {
	o   MixOptions
	t   CrawlTarget
	tb  *testbed.Testbed
	reg *site.Registry
	// ok counts each site's OK pages in the window.
	wb, avito atomic.Int64
	t0        time.Time
	workers   []*tasks.Worker
}

// mixTestbed is the farm (Wildberries' and Avito's proxies, or
// Wildberries' and a token one beside the modems) with both sites strict
// at the min interval.
func mixTestbed(o MixOptions) testbed.Config {
	rules := testbed.DefaultRules()
	wb, av := rules[testbed.SiteWildberries], rules[testbed.SiteAvito]
	if o.AvitoModems > 0 {
		av = testbed.AvitoVolumeRules(DefaultVolume())
	}
	wb.MinInterval, wb.Strict = o.MinInterval, true
	av.MinInterval, av.Strict = o.MinInterval, true
	cfg := testbed.Config{Proxies: o.WBProxies + o.AvitoProxies, Seed: 1, CatalogSize: 1000,
		Sites: map[string]testbed.SiteRules{testbed.SiteWildberries: wb, testbed.SiteAvito: av}, Fingerprint: true}
	if o.AvitoModems > 0 {
		cfg.Proxies = o.WBProxies
		cfg.Modems = &testbed.ModemConfig{N: o.AvitoModems, Exits: 64 * o.AvitoModems, MinInterval: 3 * time.Second,
			Settle: time.Second, User: modemUser, Password: modemPassword, Seed: 1}
	}
	return cfg
}

// avitoClass is the class Avito's jobs lease.
func (o MixOptions) avitoClass() proxies.Class {
	if o.AvitoModems > 0 {
		return proxies.Mobile
	}
	return proxies.Residential
}

// prepare points both sites at the testbed, imports the pool and
// queues the jobs.
func (m *mixRun) prepare(ctx context.Context) error {
	av := site.SiteConfig{BaseURL: m.tb.HTTPSSiteURL(testbed.SiteAvito), MinInterval: m.o.MinInterval.String(),
		Class: string(m.o.avitoClass()), Queue: mixAvitoQueue}
	if m.o.AvitoModems > 0 {
		av.RotateAfter = site.Budget(max(DefaultVolume().Requests-2, 1))
	}
	m.reg = site.Default().Clone()
	err := m.reg.Apply(site.Config{Sites: map[string]site.SiteConfig{
		testbed.SiteWildberries: {BaseURL: m.tb.HTTPSSiteURL(testbed.SiteWildberries), MinInterval: m.o.MinInterval.String(),
			Class: string(proxies.Datacenter), Queue: mixWBQueue},
		testbed.SiteAvito: av}})
	if err != nil {
		return err
	}
	if err := m.importPool(ctx); err != nil {
		return err
	}
	return m.enqueue(ctx)
}

// importPool imports the first WBProxies of the farm as datacenter and
// the rest (or the modems) in Avito's class.
func (m *mixRun) importPool(ctx context.Context) error {
	farm, err := proxies.ParseFile(m.tb.ProxiesFile)
	if err != nil {
		return err
	}
	b := m.broker(m.t.Client)
	if _, err := b.Import(ctx, farm[:m.o.WBProxies], proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	rest := farm[m.o.WBProxies:]
	if m.o.AvitoModems > 0 {
		if rest, err = proxies.ParseReader(strings.NewReader(strings.Join(m.tb.ModemLines(), "\n")), "modems.txt"); err != nil {
			return err
		}
	}
	_, err = b.Import(ctx, rest, proxies.ImportOptions{Class: m.o.avitoClass()})
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return nil
}

func (m *mixRun) broker(rdb redis.UniversalClient) *proxies.RedisBroker {
	return proxies.NewRedisBroker(rdb, tasks.BrokerConfig(m.reg, m.o.Logger))
}

// mixWBJobs is Wildberries' backlog: its limit over the window and a
// half, so it never runs dry.
func (m *mixRun) mixWBJobs() int {
	return int(float64(m.o.WBProxies)/m.o.MinInterval.Seconds()*m.o.Duration.Seconds()*1.5) + 4*m.o.Concurrency
}

// enqueue queues the Avito backlog, then Wildberries'.
func (m *mixRun) enqueue(ctx context.Context) error {
	av := newFeeder(m.t, m.reg, testbed.SiteAvito, mixAvitoQueue, "mix-avito", productURLs(m.tb.HTTPSSiteURL(testbed.SiteAvito), m.tb, testbed.SiteAvito))
	defer av.close()
	if err := av.enqueue(ctx, m.o.AvitoJobs); err != nil {
		return err
	}
	wb := newFeeder(m.t, m.reg, testbed.SiteWildberries, mixWBQueue, "mix-wb", productURLs(m.tb.HTTPSSiteURL(testbed.SiteWildberries), m.tb, testbed.SiteWildberries))
	defer wb.close()
	return wb.enqueue(ctx, m.mixWBJobs())
}

// observe counts OK pages per site inside the window.
func (m *mixRun) observe(siteName, verdict string, _ time.Duration) {
	if verdict != "ok" || time.Since(m.t0) >= m.o.Duration {
		return
	}
	switch siteName {
	case testbed.SiteWildberries:
		m.wb.Add(1)
	case testbed.SiteAvito:
		m.avito.Add(1)
	}
}

// run serves the queues for the window and reads the figures.
func (m *mixRun) run(ctx context.Context) (*MixResult, error) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	m.t0 = time.Now()
	var wg sync.WaitGroup
	errs := make([]error, m.o.Workers)
	for i := range m.o.Workers {
		rdb := m.t.NewClient()
		w := m.worker(rdb, i)
		m.workers = append(m.workers, w)
		wg.Go(func() { defer rdb.Close(); errs[i] = w.Run(wctx) })
	}
	m.o.Logger.Info("bench mix runs", zap.Duration("window", m.o.Duration))
	sleepErr := backoff.Sleep(ctx, m.o.Duration)
	stop()
	wg.Wait()
	for _, err := range append(errs, sleepErr) {
		if err != nil {
			return nil, err
		}
	}
	return m.figures(ctx)
}

func (m *mixRun) worker(rdb redis.UniversalClient, i int) *tasks.Worker {
	return tasks.NewWorker(tasks.WorkerConfig{
		Redis: m.t.Asynq, RDB: rdb, Broker: m.broker(rdb), BrokerOnRDB: true,
		ServerID: fmt.Sprintf("bench-mix-%d", i+1), Concurrency: m.o.Concurrency,
		Queues: map[string]int{mixWBQueue: 1, mixAvitoQueue: 1}, Sites: m.reg, ShutdownTimeout: 2 * time.Second,
		Observe: m.observe, Fetcher: fetcher.Config{TLS: &tls.Config{RootCAs: m.tb.CA.Pool()}},
		PollInterval: m.o.PollInterval, ExitProbe: fetcher.ExitProbe{URL: m.tb.EchoURL()}, Logger: m.o.Logger,
	})
}

// figures reads the sites' log and the queues.
func (m *mixRun) figures(ctx context.Context) (*MixResult, error) {
	o := m.o
	res := &MixResult{WBProxies: o.WBProxies, AvitoProxies: o.AvitoProxies, AvitoModems: o.AvitoModems, Workers: o.Workers,
		Concurrency: o.Concurrency, DurationS: o.Duration.Seconds(), MinIntervalS: o.MinInterval.Seconds(), AvitoJobs: o.AvitoJobs}
	avitoIPs := o.AvitoProxies
	if o.AvitoModems > 0 {
		res.AvitoProxies, avitoIPs = 0, o.AvitoModems
	}
	res.WB = mixSite(int(m.wb.Load()), o.WBProxies, o)
	res.Avito = mixSite(int(m.avito.Load()), avitoIPs, o)
	rep := testbed.Check(m.tb.Log.Entries(), map[string]time.Duration{testbed.SiteWildberries: o.MinInterval, testbed.SiteAvito: o.MinInterval})
	res.I1, res.I2 = rep.I1Violations, rep.I2Violations
	for _, e := range m.tb.Log.Entries() {
		if e.Verdict.Blocked() {
			res.Bans++
		}
	}
	for _, w := range m.workers {
		res.HandedBack += w.HandedBack()
		res.AvitoPeakWaiting = max(res.AvitoPeakWaiting, w.Sessions().PeakWaiting()[testbed.SiteAvito])
	}
	return res, m.queueFigures(ctx, res)
}

func mixSite(jobs, ips int, o MixOptions) MixSite {
	s := MixSite{Jobs: jobs, PerSecond: round3(float64(jobs) / o.Duration.Seconds()), Limit: round3(float64(ips) / o.MinInterval.Seconds())}
	if s.Limit > 0 {
		s.OfLimit = round3(s.PerSecond / s.Limit)
	}
	return s
}

// queueFigures adds both queues' failed attempts and archived jobs.
func (m *mixRun) queueFigures(_ context.Context, res *MixResult) error {
	insp := asynq.NewInspector(m.t.Asynq)
	defer insp.Close()
	for _, q := range []string{mixWBQueue, mixAvitoQueue} {
		info, err := insp.GetQueueInfo(q)
		if err != nil {
			return fmt.Errorf("queue %s: %w", q, err)
		}
		res.FailedAttempts += info.FailedTotal
		res.Archived += info.Archived
	}
	return nil
}
