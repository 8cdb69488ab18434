package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"crawlq/fetcher"
	"crawlq/fetcher/browser"
	"crawlq/internal/redisx"
	"crawlq/metrics"
	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/tasks"
	"crawlq/web"
)

type workerFlags struct {
	serverID    string
	concurrency int
	queues      string
	config      string
	metricsAddr string
	brokerRedis string
	shutdown    time.Duration
	leaseTTL    time.Duration
	failover    string
	browsers    int
	chrome      string
	browserWait time.Duration
	backlog     int64
	poll        time.Duration
	exitProbe   string
	exitBusy    string
	handBack    bool
}

func newWorkerCmd(a *app) *cobra.Command {
	var f workerFlags
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run crawl jobs from the queues until SIGTERM/SIGINT",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runWorker(cmd.Context(), a, f) },
	}
	addWorkerFlags(cmd.Flags(), &f)
	return cmd
}

// addWorkerFlags declares the flags of `crawlq worker` into f.
func addWorkerFlags(fl *pflag.FlagSet, f *workerFlags) {
	fl.StringVar(&f.serverID, "server-id", "", "this worker's name in leases, logs and metrics (default host-pid)")
	fl.IntVar(&f.concurrency, "concurrency", 10, "jobs run at once")
	fl.StringVar(&f.queues, "queues", "", "queue weights, e.g. wildberries=3,ozon=2,avito=1 (default: every site, weight 1)")
	fl.StringVar(&f.config, "config", "", "YAML config file (sites, rules, broker)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve this worker's Prometheus metrics, /healthz and /readyz on ADDR (e.g. :9100)")
	fl.StringVar(&f.brokerRedis, "broker-redis", "", "Redis URL of the proxy broker, if not the queue's (any --redis form; sessions and results stay with the queue)")
	fl.DurationVar(&f.shutdown, "shutdown-timeout", 10*time.Second, "on SIGTERM, how long in-flight jobs get before they are handed back")
	fl.DurationVar(&f.leaseTTL, "lease-ttl", 30*time.Second, "proxy lease TTL (kept alive while a job runs)")
	fl.StringVar(&f.failover, "broker-failover", "auto", "the broker's failover guards: wait (WAIT for a replica; none connected: no leases), epochs (new leases fenced off for one lease TTL after a failover), off, or auto (Sentinel: wait, Cluster: epochs, one server: off)")
	fl.IntVar(&f.browsers, "browsers", 1, "JavaScript challenges cleared at once, each in a browser context of the worker's one Chromium (0: no browser; a challenged page fails its attempt)")
	fl.StringVar(&f.chrome, "chrome", "", "the Chromium binary (default: chromium, chromium-browser or google-chrome on PATH)")
	fl.DurationVar(&f.browserWait, "browser-timeout", 30*time.Second, "how long the browser may take to clear one challenge before its page is closed")
	fl.Int64Var(&f.backlog, "results-backlog", tasks.DefaultResultsBacklog, "with a sink, pause taking jobs while this many results entries wait for it (-1: no bound)")
	fl.StringVar(&f.exitProbe, "exit-probe", DefaultExitProbe, "IP-echo URL a gateway session's exit IP is learned from, through the proxy (answering the IP as text or {\"ip\": …}; a proxy line's exit=probe:URL overrides it)")
	fl.BoolVar(&f.handBack, "hand-back", true, "a job that cannot lease a proxy within 2 s hands its slot back and comes again at its turn in the site's wait line (no retry used); --hand-back=false: it waits in its slot up to 30 s (docs/architecture.md, Waiting for a proxy)")
	fl.StringVar(&f.exitBusy, "exit-busy", string(sessions.ExitReroll), "when a new gateway session lands on an exit IP another session holds: reroll (a new session id) or wait")
	fl.DurationVar(&f.poll, "poll-interval", tasks.DefaultPollInterval, "how long a worker with empty queues waits before it looks again (3 Redis commands per queue each look); retries and scheduled jobs are moved to their queue every 5 of them")
}

// DefaultExitProbe is the IP echo gateway sessions ask unless told
// otherwise: a public service answering {"ip": …}.
const DefaultExitProbe = "https://api.ipify.org?format=json"

// checkProbeURL refuses an --exit-probe that is not an http(s) URL.
func checkProbeURL(raw string) error {
	u, err := url.Parse(raw)
	if raw == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--exit-probe %q: want an http(s) URL of an IP echo", raw)
	}
	return nil
}

// taskConfig is the part of the worker's config the flags set.
func (f workerFlags) taskConfig() (tasks.WorkerConfig, error) {
	if f.poll <= 0 {
		return tasks.WorkerConfig{}, fmt.Errorf("--poll-interval %s: want a positive duration", f.poll)
	}
	if f.serverID == "" {
		f.serverID = tasks.DefaultServerID()
	}
	busy := sessions.ExitPolicy(f.exitBusy)
	if busy != sessions.ExitReroll && busy != sessions.ExitWait {
		return tasks.WorkerConfig{}, fmt.Errorf("--exit-busy %q: want reroll or wait", f.exitBusy)
	}
	if err := checkProbeURL(f.exitProbe); err != nil {
		return tasks.WorkerConfig{}, err
	}
	return tasks.WorkerConfig{ServerID: f.serverID, Concurrency: f.concurrency, LeaseTTL: f.leaseTTL,
		ShutdownTimeout: f.shutdown, ResultsBacklog: f.backlog, PollInterval: f.poll,
		ExitProbe: fetcher.ExitProbe{URL: f.exitProbe}, ExitBusy: busy, NoHandBack: !f.handBack}, nil
}

func runWorker(ctx context.Context, a *app, f workerFlags) error {
	wcfg, err := f.taskConfig()
	if err != nil {
		return err
	}
	log, err := a.logger()
	if err != nil {
		return err
	}
	defer log.Sync()
	loaded, err := tasks.LoadConfig(f.config)
	if err != nil {
		return err
	}
	if wcfg.Queues, err = parseQueues(f.queues); err != nil {
		return err
	}
	qconn, err := a.redis(ctx)
	if err != nil {
		return err
	}
	defer qconn.Close()
	bconn, closeBroker, err := brokerConn(ctx, f, qconn)
	if err != nil {
		return err
	}
	defer closeBroker()
	reg := prometheus.NewRegistry()
	broker, err := workerBroker(loaded, f, bconn, wcfg.ServerID, wcfg.PollInterval, log, reg)
	if err != nil {
		return err
	}
	solver, closeBrowser := startBrowser(log, reg, f, loaded.CAFiles)
	defer closeBrowser()
	w := tasks.NewWorker(withWaitMetrics(f.wire(wcfg, loaded, qconn, broker, solver, metrics.NewWorkerMetrics(reg), log), reg))
	registerWorkerMetrics(reg, w)
	return serveWorker(ctx, f.metricsAddr, reg, broker, w, web.RedisCheck(qconn.Client))
}

// brokerConn is the broker's Redis: --broker-redis, else the queue's
// (close then does nothing).
func brokerConn(ctx context.Context, f workerFlags, qconn *redisx.Conn) (*redisx.Conn, func(), error) {
	if f.brokerRedis == "" {
		return qconn, func() {}, nil
	}
	bconn, err := openRedis(ctx, "--broker-redis", f.brokerRedis)
	if err != nil {
		return nil, nil, err
	}
	return bconn, func() { bconn.Close() }, nil
}

// workerBroker is the worker's broker: the Redis broker of the config's
// sites on bconn with the failover guards of --broker-failover, inside
// the fallback broker.
func workerBroker(loaded *tasks.Loaded, f workerFlags, bconn *redisx.Conn, server string, poll time.Duration,
	log *zap.Logger, reg prometheus.Registerer) (*proxies.FallbackBroker, error) {
	bcfg, err := failoverGuards(loaded.BrokerConfig(), f.failover, bconn.Target, f.leaseTTL)
	if err != nil {
		return nil, err
	}
	bcfg.Logger = log
	return proxies.NewFallbackBroker(proxies.NewRedisBroker(bconn.Client, bcfg), proxies.FallbackConfig{
		ServerID: server, Logger: log, OnFallback: metrics.NewFallbackGauge(reg), Heartbeat: fallbackHeartbeat(poll)}), nil
}

// wire completes the worker's config: sessions and results live with the
// queue, and so does the broker unless it has a Redis of its own; the
// broker's capabilities are given with it.
func (f workerFlags) wire(wcfg tasks.WorkerConfig, loaded *tasks.Loaded, qconn *redisx.Conn, broker *proxies.FallbackBroker,
	solver workerBrowser, wm *metrics.WorkerMetrics, log *zap.Logger) tasks.WorkerConfig {
	wcfg.Redis, wcfg.RDB, wcfg.Broker, wcfg.Caps = qconn.Asynq, qconn.Client, broker, broker.Capabilities()
	wcfg.BrokerOnRDB = f.brokerRedis == ""
	wcfg.Sites, wcfg.Rules, wcfg.Fetcher, wcfg.Logger = loaded.Sites, &loaded.Rules, fetcher.Config{TLS: loaded.TLS}, log
	wcfg.Observe, wcfg.Browser, wcfg.OnChallenge = wm.ObserveRequest, solver.tasks, solver.observe
	wcfg.OnDefect = func(d tasks.DefectStats) { wm.ObserveDefect(d.Site, d.Kind, d.Reason) }
	wcfg.OnPoW = func(p tasks.PoWStats) { wm.ObservePoW(p.Site, p.Solved, p.Took) }
	wcfg.Replicas = sinkReplicas(f.failover, qconn.Target, f.leaseTTL)
	return wcfg
}

// withWaitMetrics counts the jobs that hand their slot back in reg.
func withWaitMetrics(wcfg tasks.WorkerConfig, reg prometheus.Registerer) tasks.WorkerConfig {
	wm := metrics.NewWaitMetrics(reg)
	wcfg.OnHandBack = func(h tasks.HandBackStats) { wm.ObserveHandBack(h.Site, h.Reason, h.After) }
	return wcfg
}

// registerWorkerMetrics registers the worker's gauges and counters.
func registerWorkerMetrics(reg *prometheus.Registry, w *tasks.Worker) {
	metrics.RegisterSlotWaits(reg, w.Sessions().Waiting)
	metrics.RegisterBacklogGauges(reg, w.Gate())
	metrics.RegisterSessionErrors(reg, w.Sessions())
	metrics.RegisterExits(reg, func() (int64, int64, int64, int64) {
		c := w.Sessions().ExitCounts()
		return c.Probes, c.Rerolls, c.Waits, c.Changes
	})
	metrics.RegisterModems(reg, func() (int64, int64, int64, int64) {
		c := w.Sessions().ModemCounts()
		return c.Rotations, c.Failed, c.Refused, c.Ended
	})
}

// serveWorker runs the worker, the fallback broker's loops (which outlive
// the jobs' shutdown) and, on metricsAddr, its metrics and health probes
// (/readyz: ready answers), until ctx ends.
func serveWorker(ctx context.Context, metricsAddr string, reg *prometheus.Registry, broker *proxies.FallbackBroker,
	w *tasks.Worker, ready web.Check) error {
	g, gctx := errgroup.WithContext(ctx)
	if metricsAddr != "" {
		g.Go(func() error { return web.ServeMetrics(gctx, metricsAddr, reg, ready) })
	}
	fctx, stopFallback := context.WithCancel(gctx)
	g.Go(func() error { return broker.Run(fctx) })
	g.Go(func() error {
		defer stopFallback()
		return w.Run(gctx)
	})
	return g.Wait()
}

// fallbackHeartbeat is how often the fallback broker beats and reads the
// live servers and the quarantines: with the worker's other side loops
// (tasks.SideInterval), at least as often as its 2 s default and three
// times within a member's TTL, so no live worker ever looks gone.
func fallbackHeartbeat(poll time.Duration) time.Duration {
	return min(max(2*time.Second, tasks.SideInterval(poll)), proxies.DefaultMemberTTL/3)
}

// parseQueues reads "name=weight,…".
func parseQueues(s string) (map[string]int, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]int{}
	for _, part := range strings.Split(s, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(w)
		if !ok || name == "" || err != nil || n < 1 {
			return nil, fmt.Errorf("--queues: %q: want name=weight with weight >= 1", part)
		}
		out[name] = n
	}
	return out, nil
}

// workerBrowser is the worker's browser tier as the worker config wants it.
type workerBrowser struct {
	tasks   tasks.Solver
	metrics *metrics.BrowserMetrics
}

func (b workerBrowser) observe(s tasks.ChallengeStats) {
	switch {
	case s.Reused:
		b.metrics.ObserveChallenge(s.Site, "reused")
	case s.Solved:
		b.metrics.ObserveChallenge(s.Site, "solved")
	default:
		b.metrics.ObserveChallenge(s.Site, "failed")
	}
}

// chromeErr names --chrome in an error of browser.New about the binary:
// none found, or chrome (the flag's value) is not one.
func chromeErr(err error, chrome string) error {
	var ee *exec.Error
	switch {
	case errors.Is(err, browser.ErrNoBrowser):
		return fmt.Errorf("%w (install chromium or give --chrome PATH)", err)
	case chrome != "" && errors.As(err, &ee):
		return fmt.Errorf("--chrome %s: %w", chrome, ee)
	}
	return err
}

// startBrowser sets up the browser tier of --browsers and --chrome; a
// worker without Chromium says so once and runs without it.
func startBrowser(log *zap.Logger, reg prometheus.Registerer, f workerFlags, caFiles []string) (workerBrowser, func()) {
	if f.browsers <= 0 {
		log.Info("browser tier off (--browsers 0): a page behind a JavaScript challenge fails its attempt")
		return workerBrowser{}, func() {}
	}
	b, err := browser.New(browser.Config{Path: f.chrome, Contexts: f.browsers, Timeout: f.browserWait, CAFiles: caFiles, Logger: log})
	if err != nil {
		log.Warn("browser tier off: a page behind a JavaScript challenge fails its attempt", zap.Error(chromeErr(err, f.chrome)))
		return workerBrowser{}, func() {}
	}
	log.Info("browser tier on", zap.String("chrome", b.Path()), zap.Int("contexts", f.browsers))
	return workerBrowser{tasks: b, metrics: metrics.NewBrowserMetrics(reg, b)}, b.Close
}
