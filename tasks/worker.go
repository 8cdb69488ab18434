package tasks

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/proxies"
	"crawlq/results"
	"crawlq/sessions"
	"crawlq/tasks/site"
)

// WorkerConfig configures a Worker. Zero fields take the defaults named.
type WorkerConfig struct {
	// Redis is the queues' Redis (Asynq). Required.
	Redis asynq.RedisConnOpt
	// RDB is the Redis of sessions and results (the queue's), and of the
	// broker unless Broker is given. Required.
	RDB redis.UniversalClient
	// Broker leases proxies. Default: a RedisBroker on RDB with the sites'
	// min intervals (BrokerConfig).
	Broker proxies.Broker
	// BrokerOnRDB says Broker keeps its leases on RDB, so a job's first
	// lease rides in its first reads (sessions.Config.BrokerSharesRedis).
	// Set it only when it does. Default: true when Broker is the default.
	BrokerOnRDB bool
	// Caps are Broker's capabilities (sessions.Config.Caps): exit holds
	// for gateways and proxies that probe their exit, modems' rotations,
	// clearance marks, pipelined leases and releases. Default:
	// Broker.Capabilities().
	Caps proxies.Capabilities
	// ExitProbe learns those exit IPs; its URL is the IP-echo URL of
	// proxies whose line names none.
	ExitProbe fetcher.ExitProbe
	// ExitBusy is what a gateway session does when its exit IP is held by
	// another: sessions.ExitReroll (default) or sessions.ExitWait.
	ExitBusy sessions.ExitPolicy
	// ServerID names this worker in leases, logs and metrics. Default
	// hostname-pid.
	ServerID string
	// Concurrency is the number of jobs run at once. Default 10.
	Concurrency int
	// Queues maps queue name to priority weight. Default: every site's
	// queue and the page queue, weight 1.
	Queues map[string]int
	// Sites is the site registry. Default site.Default().
	Sites *site.Registry
	// Rules are the ban detection rules. Default detect.Builtin().
	Rules *detect.Rules
	// Fetcher configures HTTP requests (timeouts, body cap).
	Fetcher fetcher.Config
	// LeaseTTL is the proxy lease TTL, kept alive while a job runs. Default 30s.
	LeaseTTL time.Duration
	// ShutdownTimeout is how long in-flight jobs get to finish on SIGTERM
	// before they are cancelled, their leases released and the jobs handed
	// back to the queue. Default 10s. Run then waits up to as long again
	// for the cancelled jobs to release their leases (Asynq hands a job
	// back at the timeout whether or not its handler has returned).
	ShutdownTimeout time.Duration
	// Logger is the worker's log. Default zap.NewNop().
	Logger *zap.Logger
	// Observe is told every response's site, verdict and latency.
	Observe func(site, verdict string, latency time.Duration)
	// OnConfirm, if set, is told every confirmation: a Suspect answer
	// asked once more from a second proxy, what the two answers decided,
	// how many extra requests it took and how long it waited.
	OnConfirm func(ConfirmStats)
	// Browser clears JavaScript challenges (see HandlerConfig.Browser);
	// nil: no browser tier.
	Browser Solver
	// OnChallenge, if set, is told every browser visit.
	OnChallenge func(ChallengeStats)
	// OnPoW, if set, is told every challenge solved over HTTP by the
	// site's own Solve (Avito's proof of work), solved or not.
	OnPoW func(PoWStats)
	// OnDefect, if set, is told every request defect: a site refusing a
	// request as sent (its headers), not the proxy.
	OnDefect func(DefectStats)
	// Replicas, if > 0, makes every page's transaction wait until that many
	// replicas of RDB acknowledged it (results.Sink.WithReplicas), so a
	// page the job counts done survives a Sentinel failover. Default 0.
	Replicas int
	// ResultsBacklog bounds the results entries a durable sink has not
	// acknowledged: above it the worker takes no new job until the sink
	// catches up. Default DefaultResultsBacklog; < 0: no bound.
	ResultsBacklog int64
	// PollInterval is how long a worker whose queues are empty waits
	// before it looks at them again (Asynq's TaskCheckInterval, jittered
	// by Asynq between half and one and a half of it): each look costs
	// Redis three commands per queue. The worker's other loops follow it
	// (SideInterval): retried and scheduled jobs are moved to their queue
	// and the results backlog is read every five poll intervals, never
	// more often than once a second. Default DefaultPollInterval.
	PollInterval time.Duration
	// SlotWait is how long a job waits for a proxy in its worker slot:
	// when its turn in the site's wait line is further away, or no proxy
	// came free in that time, it hands the slot back (HandedBack) and
	// comes again at its turn (sessions.Config.MaxLeaseWait). Default
	// DefaultSlotWait.
	SlotWait time.Duration
	// OnHandBack, if set, is told every attempt that handed its slot back.
	OnHandBack func(HandBackStats)
	// NoHandBack turns the hand-back off: a job waits for a proxy in its
	// slot, up to the sessions' MaxLeaseWait (30 s), as before issue 40
	// (`crawlq worker --hand-back=false`). Default false: a job that
	// cannot lease within SlotWait hands its slot back (HandedBack).
	NoHandBack bool
}

// DefaultSlotWait is WorkerConfig.SlotWait's default: a job waits in its
// slot only for a proxy due about now (a site's next proxy at a typical
// min_interval), not for a site that is short of proxies.
const DefaultSlotWait = 2 * time.Second

// DefaultPollInterval is WorkerConfig.PollInterval's default: an idle
// worker with the four default queues looks at them every two seconds.
// Each look is Asynq's, three Redis commands per queue, so at one second
// Asynq alone costs 12 commands/s and the worker 20 in all (measured
// with `crawlq bench idle`); at two seconds the worker costs about 11.
const DefaultPollInterval = 2 * time.Second

// SideInterval is how often a worker polling its queues every poll runs
// its loops that need not react at once: five poll intervals, at least a
// second (their pace before the poll interval could be set).
func SideInterval(poll time.Duration) time.Duration { return max(time.Second, 5*poll) }

// janitorInterval is how often Asynq deletes the finished tasks whose
// retention (a day by default) has expired; minutes late is no harm.
const janitorInterval = time.Minute

func (c *WorkerConfig) withDefaults() {
	if c.ServerID == "" {
		c.ServerID = DefaultServerID()
	}
	if c.Concurrency == 0 {
		c.Concurrency = 10
	}
	if c.Sites == nil {
		c.Sites = site.Default()
	}
	if c.Rules == nil {
		r := detect.Builtin()
		c.Rules = &r
	}
	if c.Queues == nil {
		c.Queues = DefaultQueues(c.Sites)
	}
	if c.Broker == nil {
		c.Broker, c.BrokerOnRDB = proxies.NewRedisBroker(c.RDB, BrokerConfig(c.Sites, c.Logger)), true
	}
	if c.Caps == (proxies.Capabilities{}) {
		c.Caps = c.Broker.Capabilities()
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.ResultsBacklog == 0 {
		c.ResultsBacklog = DefaultResultsBacklog
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.SlotWait <= 0 {
		c.SlotWait = DefaultSlotWait
	}
}

// DefaultServerID is WorkerConfig.ServerID's default: hostname-pid.
func DefaultServerID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// DefaultQueues is every site's queue and the page queue, weight 1.
func DefaultQueues(reg *site.Registry) map[string]int {
	q := map[string]int{PageQueue: 1}
	for _, name := range reg.Names() {
		if s, err := reg.Get(name); err == nil {
			q[s.Queue] = 1
		}
	}
	return q
}

// BrokerConfig is the broker policy of the registry's sites: each site's
// min_interval between two requests of one proxy (I2).
func BrokerConfig(reg *site.Registry, log *zap.Logger) proxies.Config {
	sites := map[string]proxies.SiteConfig{}
	for _, name := range reg.Names() {
		if s, err := reg.Get(name); err == nil {
			mi := s.MinInterval
			if mi == 0 {
				mi = proxies.NoMinInterval // a configured 0 means no gap, not the broker's default
			}
			sites[name] = proxies.SiteConfig{MinInterval: mi, ClearanceWait: s.Challenge.Wait,
				RotateAfter: s.RotateAfter, RotateEvery: s.RotateEvery, RotateAfterAuto: s.RotateAfterAuto, Learn: s.Learn}
		}
	}
	return proxies.Config{Sites: sites, Logger: log}
}

// Worker serves the crawl queues.
type Worker struct {
	cfg     WorkerConfig
	client  *asynq.Client
	handler *Handler
	gate    *BacklogGate
	rotator *sessions.Rotator // nil: no modem rotations
	waker   *Waker
}

// NewWorker builds a Worker; Run starts it.
func NewWorker(cfg WorkerConfig) *Worker {
	cfg.withDefaults()
	client := asynq.NewClient(cfg.Redis)
	gate := NewBacklogGate(cfg.RDB, cfg.ResultsBacklog, cfg.Logger)
	gate.every = SideInterval(cfg.PollInterval)
	f := fetcher.New(withLogger(cfg.Fetcher, cfg.Logger))
	rot := newRotator(cfg, f)
	wk := NewWaker(cfg.Redis, cfg.Logger)
	h := NewHandler(HandlerConfig{Gate: gate, Waker: wk, OnHandBack: cfg.OnHandBack,
		Sites: cfg.Sites, Fetcher: f, Rules: *cfg.Rules,
		Sink: results.NewSink(cfg.RDB, 0).WithReplicas(cfg.Replicas, 0), Client: client, Holder: cfg.ServerID, Logger: cfg.Logger,
		Observe: cfg.Observe, OnConfirm: cfg.OnConfirm, Browser: cfg.Browser, OnChallenge: cfg.OnChallenge, OnPoW: cfg.OnPoW, OnDefect: cfg.OnDefect,
		Sessions: sessions.NewManager(sessions.Config{Broker: cfg.Broker, Redis: cfg.RDB,
			SharesRedis: true, BrokerSharesRedis: cfg.BrokerOnRDB, // the sink is on RDB too
			Holder: cfg.ServerID, LeaseTTL: cfg.LeaseTTL, MaxLeaseWait: cfg.maxLeaseWait(), HandBack: !cfg.NoHandBack, Logger: cfg.Logger, Shape: requestShape(cfg.Sites),
			Caps: cfg.Caps, Rotator: rot, ExitProbe: cfg.ExitProbe, ExitBusy: cfg.ExitBusy, Forget: f.Forget}),
	})
	return &Worker{cfg: cfg, client: client, handler: h, gate: gate, rotator: rot, waker: wk}
}

// newRotator is the worker's modem rotator: nil when the broker keeps no
// rotations (a modem is then a plain proxy).
func newRotator(cfg WorkerConfig, f *fetcher.Fetcher) *sessions.Rotator {
	if cfg.Caps.Rotations == nil {
		return nil
	}
	return sessions.NewRotator(sessions.RotatorConfig{Rotations: cfg.Caps.Rotations, LeaseTTL: cfg.LeaseTTL,
		ExitProbe: cfg.ExitProbe, Forget: f.Forget, Logger: cfg.Logger})
}

func withLogger(c fetcher.Config, log *zap.Logger) fetcher.Config {
	if c.Logger == nil {
		c.Logger = log
	}
	return c
}

// ServerID is the worker's name in leases and logs.
func (w *Worker) ServerID() string { return w.cfg.ServerID }

// Gate is the worker's results backlog gate (for its metrics).
func (w *Worker) Gate() *BacklogGate { return w.gate }

// Sessions is the worker's session manager (for its metrics).
func (w *Worker) Sessions() *sessions.Manager { return w.handler.cfg.Sessions }

// Run serves jobs until ctx ends, then stops taking work, gives in-flight
// jobs ShutdownTimeout to finish, cancels the rest (Asynq hands the jobs
// back to the queue), waits for their sessions to release their leases and
// returns.
func (w *Worker) Run(ctx context.Context) error {
	defer w.client.Close()
	defer w.waker.Stop()
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	srv := asynq.NewServer(w.cfg.Redis, w.asynqConfig(base))
	if w.rotator != nil {
		w.rotator.Start()
	}
	started := time.Now()
	if err := srv.Start(NewMux(w.handler)); err != nil {
		return fmt.Errorf("start worker %s: %w", w.cfg.ServerID, err)
	}
	hbCtx, stopHeartbeat := context.WithCancel(base)
	hbDone := make(chan struct{}, 2)
	go func() { defer func() { hbDone <- struct{}{} }(); w.heartbeatLoop(hbCtx, started) }()
	go func() { defer func() { hbDone <- struct{}{} }(); w.gate.Run(hbCtx) }()
	defer func() { stopHeartbeat(); <-hbDone; <-hbDone }()
	w.cfg.Logger.Info("worker started", zap.String("server", w.cfg.ServerID),
		zap.Int("concurrency", w.cfg.Concurrency), zap.Any("queues", w.cfg.Queues))
	<-ctx.Done()
	w.cfg.Logger.Info("worker stopping", zap.String("server", w.cfg.ServerID))
	srv.Stop()
	stop := time.AfterFunc(w.cfg.ShutdownTimeout*3/4, cancel)
	defer stop.Stop()
	srv.Shutdown()
	cancel() // a job Asynq gave up on must stop now, if the timer has not fired
	if !w.handler.Drain(w.cfg.ShutdownTimeout) {
		w.cfg.Logger.Warn("jobs still running after shutdown; their leases free themselves at their TTL",
			zap.String("server", w.cfg.ServerID))
	}
	if w.rotator != nil {
		w.rotator.Shutdown(w.cfg.ShutdownTimeout)
	}
	return nil
}

func (w *Worker) asynqConfig(base context.Context) asynq.Config {
	log := w.cfg.Logger.With(zap.String("server", w.cfg.ServerID))
	return asynq.Config{
		Concurrency:              w.cfg.Concurrency,
		Queues:                   w.cfg.Queues,
		BaseContext:              func() context.Context { return base },
		RetryDelayFunc:           RetryDelay,
		IsFailure:                IsFailure,
		ShutdownTimeout:          w.cfg.ShutdownTimeout,
		TaskCheckInterval:        w.cfg.PollInterval,
		DelayedTaskCheckInterval: SideInterval(w.cfg.PollInterval),
		JanitorInterval:          janitorInterval,
		Logger:                   log.WithOptions(zap.IncreaseLevel(zapcore.WarnLevel)).Sugar(),
		LogLevel:                 asynq.WarnLevel,
		ErrorHandler: asynq.ErrorHandlerFunc(func(ctx context.Context, t *asynq.Task, err error) {
			id, _ := asynq.GetTaskID(ctx)
			if !IsFailure(err) {
				log.Debug("job handed its slot back", zap.String("task", id), zap.String("type", t.Type()), zap.Error(err))
				return
			}
			log.Info("job attempt failed", zap.String("task", id), zap.String("type", t.Type()), zap.Error(err))
		}),
	}
}

// HandedBack is how many attempts handed their slot back to wait for a
// proxy (HandedBack).
func (w *Worker) HandedBack() int64 { return w.handler.HandedBack() }

// maxLeaseWait is how long a job waits for a proxy in its slot: SlotWait
// with the hand-back, else the sessions' own default (in-slot waiting,
// as before the hand-back).
func (c WorkerConfig) maxLeaseWait() time.Duration {
	if !c.NoHandBack {
		return c.SlotWait
	}
	return 0
}
