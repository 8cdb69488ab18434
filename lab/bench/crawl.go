package bench

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"runtime/pprof"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/sessions"
	_ "crawlq/tasks/avito" // the default registry needs every site
	_ "crawlq/tasks/ozon"
	_ "crawlq/tasks/wildberries"
	"crawlq/testbed"
)

// CrawlOptions configure RunCrawl. Zero fields take the defaults named,
// except MinInterval, where 0 means no politeness rule at all.
type CrawlOptions struct {
	// Proxies is P, the farm and pool size. Default 50.
	Proxies int
	// Workers is K, the worker servers of every phase. Default 3.
	Workers int
	// MinInterval is D: the broker's min_interval for the site and the
	// testbed's strict rule (an IP faster than D is banned for the run).
	MinInterval time.Duration
	// Duration is T, the measured window of each crawl phase. Default 20s.
	Duration time.Duration
	// Concurrency is each worker's job slots. Default
	// DefaultConcurrency(Proxies, Workers, MinInterval), with a gateway
	// GatewayConcurrency(Gateway, Workers).
	Concurrency int
	// Site is the crawled site. Default wildberries (JSON, cheapest to parse).
	Site string
	// CatalogSize is the testbed's products per site. Default 1000.
	CatalogSize int
	// Seed makes the testbed repeatable. Default 1.
	Seed int64
	// PlainHTTP crawls the site's plain http:// listener instead of its
	// HTTPS one (which checks fingerprints). Default off: HTTPS.
	PlainHTTP bool
	// PlainTLS sends HTTPS with Go's crypto/tls instead of the profiles'
	// browser fingerprints (fetcher.Config.PlainTLS): what crawlq did
	// before; the checking site refuses every request.
	PlainTLS bool
	// WorkerCommand runs one `crawlq worker` child with args; its RSS at
	// RSSConcurrency is WorkerRSSMB. Nil skips that measurement (0).
	WorkerCommand func(ctx context.Context, args []string) *exec.Cmd
	// RSSConcurrency is the child worker's --concurrency. Default 100.
	RSSConcurrency int
	// RSSDuration is how long the child crawls before its peak RSS is
	// read. Default 5s.
	RSSDuration time.Duration
	// Challenge puts the site's JavaScript challenge in front of it, its
	// clearance cookie living ChallengeTTL, so that clearances expire and
	// the browsers keep solving: each worker gets a browser of Browsers
	// contexts (Chromium at Chrome, or found on PATH). Only the crawlq
	// phase runs (the naive policy cannot clear a challenge), and the
	// worker child runs with one browser (`--browsers 1`).
	Challenge    bool
	ChallengeTTL time.Duration
	Browsers     int
	Chrome       string
	// Gateway, when > 0, crawls through a gateway proxy of that many exit
	// IPs instead of the farm (the testbed's Config.Gateway): the crawlq
	// phase imports its line with GatewaySessions session ids, and the
	// workers learn each session's exit IP by a probe of the testbed's IP
	// echo and hold it for the site; the naive phase imports the gateway
	// as GatewaySessions plain lines, one fixed session id each. The
	// limit is then Gateway/D. Default 0: the farm of Proxies.
	Gateway int
	// GatewaySessions is the session ids the gateway line allows (its
	// slots in the pool). Default 5 × Gateway.
	GatewaySessions int
	// ExitBusy is what a gateway session does when the exit IP it drew
	// is held by another: sessions.ExitReroll (the default) or ExitWait.
	ExitBusy sessions.ExitPolicy
	// Modems, when > 0, runs RunModemCrawl instead: the volume-ban
	// Avito (Volume, default DefaultVolume) crawled through that many
	// testbed modems changed at most every ChangeEvery (default 3s) and
	// settling ChangeSettle (default 1s), from a carrier pool of
	// ModemExits IPs (default 64 a modem), in three phases: quarantine,
	// rotation on ban, rotation before the ban at RotateAfter requests
	// (default the volume threshold less 2).
	Modems       int
	Volume       testbed.VolumeRule
	ChangeEvery  time.Duration
	ChangeSettle time.Duration
	RotateAfter  int
	ModemExits   int
	// ModemPhases are the modem phases run, in order (default all three).
	ModemPhases []string
	// ProviderEvery is the provider's real least interval between two
	// changes (the testbed's), when it differs from the ChangeEvery the
	// modems' lines tell crawlq (default ChangeEvery); WholeSeconds makes
	// the provider keep its changes' times in whole seconds (rounded).
	ProviderEvery time.Duration
	WholeSeconds  bool
	// LearnVolume runs the rotate-before phase with rotate_after auto:
	// the budget per IP learned from the site's bans instead of
	// RotateAfter.
	LearnVolume bool
	// Logger gets progress lines. Default zap.NewNop().
	Logger *zap.Logger
}

// DefaultConcurrency is the job slots per worker that keep P proxies busy
// at one request per D each: a one-page job is busy (not waiting for a
// proxy) for some 10-20ms, so a worker needs its share of limit x 100ms
// slots, at least 4. Without D it is the worker's share of the proxies,
// at most 32. More slots do not crawl faster: every slot waiting for a
// proxy polls the broker, which on a small machine takes CPU from the
// crawl (measured: 4 slots per worker beat 8, 17 and 34 at P=50, D=500ms).
func DefaultConcurrency(proxies, workers int, d time.Duration) int {
	k := float64(max(workers, 1))
	if d <= 0 {
		return max(4, min(32, int(math.Ceil(float64(proxies)/k))))
	}
	limit := float64(proxies) / d.Seconds()
	return max(4, int(math.Ceil(limit*0.1/k)))
}

func (o CrawlOptions) withDefaults() CrawlOptions {
	setInt(&o.Proxies, 50)
	setInt(&o.Workers, 3)
	setInt(&o.CatalogSize, 1000)
	setInt(&o.RSSConcurrency, 100)
	if o.Modems > 0 {
		o.modemDefaults()
	}
	if o.Gateway > 0 {
		setInt(&o.GatewaySessions, 5*o.Gateway)
		setInt(&o.Concurrency, GatewayConcurrency(o.Gateway, o.Workers))
	}
	setInt(&o.Concurrency, DefaultConcurrency(o.Proxies, o.Workers, o.MinInterval))
	if o.ExitBusy == "" {
		o.ExitBusy = sessions.ExitReroll
	}
	if o.Duration <= 0 {
		o.Duration = 20 * time.Second
	}
	if o.RSSDuration <= 0 {
		o.RSSDuration = 5 * time.Second
	}
	if o.Site == "" {
		o.Site = testbed.SiteWildberries
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	setInt(&o.Browsers, 1)
	if o.ChallengeTTL <= 0 {
		o.ChallengeTTL = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return o
}

func setInt(v *int, def int) {
	if *v <= 0 {
		*v = def
	}
}

// CrawlTarget is the Redis every phase runs on: the broker, sessions and
// results client, the Asynq option of the same server and DB, and the URL
// (with credentials: never print it) a worker child connects to.
type CrawlTarget struct {
	Client redis.UniversalClient
	Asynq  asynq.RedisConnOpt
	URL    string
	// NewClient returns one more client of the same Redis, for each worker
	// server. Default: a client with Client's options (Client must then be
	// a *redis.Client).
	NewClient func() redis.UniversalClient
	// Broker, when set, is a Redis of the proxy broker's own, as a worker's
	// --broker-redis: the pool and its scripts live there, the queue, the
	// sessions and the results on Client. BrokerURL is its URL for the RSS
	// child and NewBrokerClient gives each worker server a client of it.
	Broker          redis.UniversalClient
	BrokerURL       string
	NewBrokerClient func() redis.UniversalClient
}

// defaultNewClient sets NewClient, when unset, to a client with Client's
// options; a Client that is not a plain *redis.Client needs its own.
func (t *CrawlTarget) defaultNewClient() error {
	if t.NewClient != nil {
		return nil
	}
	c, ok := t.Client.(*redis.Client)
	if !ok {
		return fmt.Errorf("bench crawl: CrawlTarget.NewClient is required with a %T", t.Client)
	}
	t.NewClient = func() redis.UniversalClient { return redis.NewClient(c.Options()) }
	return nil
}

// split says whether the broker has a Redis of its own.
func (t CrawlTarget) split() bool { return t.Broker != nil }

// brokerClient is the Redis the broker's pool lives on.
func (t CrawlTarget) brokerClient() redis.UniversalClient {
	if t.split() {
		return t.Broker
	}
	return t.Client
}

// CrawlResult is the output of `crawlq bench crawl`.
type CrawlResult struct {
	// Proxies is P, the farm; 0 with a gateway.
	Proxies       int     `json:"proxies"`
	Workers       int     `json:"workers"`
	Concurrency   int     `json:"concurrency"`
	DurationS     float64 `json:"duration_s"`
	MinIntervalMS float64 `json:"min_interval_ms"`
	// GatewayExits and GatewaySessions are the gateway's exit IPs and the
	// session ids imported, ExitBusy the workers' policy for a held exit;
	// absent without a gateway.
	GatewayExits    int    `json:"gateway_exits,omitempty"`
	GatewaySessions int    `json:"gateway_sessions,omitempty"`
	ExitBusy        string `json:"exit_busy,omitempty"`
	// LimitRPS is P/D (exits/D with a gateway), null without a min
	// interval (no limit).
	LimitRPS *float64 `json:"limit_rps"`
	// Scheme is the site's scheme crawled ("https": fingerprints checked);
	// TLS is "impersonated" (the profiles' browsers) or "go" (--plain-tls).
	Scheme string `json:"scheme"`
	TLS    string `json:"tls,omitempty"`
	Crawlq Phase  `json:"crawlq"`
	Naive  Phase  `json:"naive"`
	// NoopTasksPerS is the floor: no-op Asynq tasks per second through the
	// same Redis with the same K servers and concurrency.
	NoopTasksPerS float64 `json:"noop_tasks_per_s"`
	// NoopCPUPerTask is the CPU a no-op task cost over its life (enqueue,
	// dequeue, done), as Phase.CPUPerPage holds its jobs' enqueues;
	// NoopEnqueueCPUPerTask is the enqueue's share of it.
	NoopCPUPerTask        *CPUCost `json:"noop_cpu_per_task,omitempty"`
	NoopEnqueueCPUPerTask *CPUCost `json:"noop_enqueue_cpu_per_task,omitempty"`
	// WorkerRSSMB is the peak RSS (VmHWM) of a `crawlq worker` child at
	// RSSConcurrency after RSSDuration of crawling; 0 when not measured.
	// In challenge mode it includes BrowserRSSMB, the memory (PSS) of the
	// child's browser processes at the end.
	WorkerRSSMB  float64 `json:"worker_rss_mb"`
	BrowserRSSMB float64 `json:"browser_rss_mb,omitempty"`
	// Challenge reports challenge mode: the site's clearance solves
	// (accepted clearance cookies, from its log) per second over the
	// crawlq phase's window, the solves, the browsers' requests and the
	// cookies misused (from another IP or User-Agent).
	Challenge *ChallengeFigures `json:"challenge,omitempty"`
	// CrawlqOfLimit and CrawlqOfNoop are crawlq.rps over limit_rps and
	// over noop_tasks_per_s.
	CrawlqOfLimit float64 `json:"crawlq_of_limit,omitempty"`
	CrawlqOfNoop  float64 `json:"crawlq_of_noop"`
	// RedisPageOfNoop is the Redis CPU of a crawled page over that of a
	// no-op task (both with their enqueue); omitted without INFO cpu.
	RedisPageOfNoop float64 `json:"redis_page_of_noop,omitempty"`
}

// Phase is one crawl phase's figures.
type Phase struct {
	// RPS is successful pages (OK verdicts) per second over the window.
	RPS float64 `json:"rps"`
	// Bans counts the requests the site refused as too fast or from a
	// banned IP (its 429s), over the whole phase.
	Bans int `json:"bans"`
	// BanRate is Bans over Requests.
	BanRate float64 `json:"ban_rate"`
	// I2Violations counts request starts from one IP closer than D to the
	// previous one, I1Violations request starts from an IP while another
	// request of it was in flight, from the site's log.
	I2Violations int `json:"i2_violations"`
	I1Violations int `json:"i1_violations"`
	// BannedIPs is how many IPs the site banned (for the rest of the run).
	BannedIPs int `json:"banned_ips"`
	// FingerprintRefusals counts the requests the HTTPS site refused
	// because their TLS or HTTP/2 fingerprint was not the browser their
	// User-Agent claims.
	FingerprintRefusals int `json:"fingerprint_refusals"`
	// Pages is the OK pages in the window; Requests every request the
	// site saw in the phase; Jobs the jobs enqueued.
	Pages    int `json:"pages"`
	Requests int `json:"requests"`
	Jobs     int `json:"jobs"`
	// CPUPerPage is the CPU an OK page cost over the window, in Redis and
	// in this process (workers, testbed, feeder).
	CPUPerPage *CPUCost `json:"cpu_per_page,omitempty"`
	// BrokerCPUPerPage is the broker's Redis's share of a page when it has
	// a Redis of its own (CPUPerPage's Redis figures are then the queue's
	// Redis only).
	BrokerCPUPerPage *CPUCost `json:"broker_cpu_per_page,omitempty"`
	// FalseQuarantines and MissedSoftBans score the phase's ban handling
	// against the site's truth (see package truth): quarantines of IPs the
	// site never banned, and soft-banned answers taken as true results.
	// Only for the crawlq phase (the naive broker keeps no ban counters).
	FalseQuarantines *int64 `json:"false_quarantines,omitempty"`
	MissedSoftBans   *int   `json:"missed_soft_bans,omitempty"`
	// Gateway is the phase's gateway figures; absent without a gateway.
	Gateway *GatewayPhase `json:"gateway,omitempty"`
	// PerSecond is OK pages in each second of the window, BansPerSecond
	// the refused requests; for the chart.
	PerSecond     []int `json:"-"`
	BansPerSecond []int `json:"-"`
}

// RunCrawl runs the crawl benchmark on target, one phase after the other:
// crawlq's broker, a `crawlq worker` child for its RSS, the article's naive
// policy, and the no-op task floor. The target DB must be empty: the
// benchmark owns it while it runs and deletes its asynq:* and crawlq:*
// keys at the end.
func RunCrawl(ctx context.Context, target CrawlTarget, o CrawlOptions) (*CrawlResult, error) {
	o = o.withDefaults()
	if o.Gateway > 0 && o.Challenge {
		return nil, fmt.Errorf("bench crawl: challenge mode crawls the farm; it does not take a gateway")
	}
	if err := checkEmpty(ctx, target.Client); err != nil {
		return nil, err
	}
	defer cleanupCrawl(context.WithoutCancel(ctx), target.Client)
	if target.split() {
		if target.NewBrokerClient == nil {
			return nil, fmt.Errorf("bench crawl: CrawlTarget.NewBrokerClient is required with a broker Redis")
		}
		if err := checkEmpty(ctx, target.Broker); err != nil {
			return nil, fmt.Errorf("broker Redis: %w", err)
		}
		defer cleanupCrawl(context.WithoutCancel(ctx), target.Broker)
	}
	if err := target.defaultNewClient(); err != nil {
		return nil, err
	}
	r := &crawlRun{o: o, t: target, log: o.Logger}
	return r.run(ctx)
}

// crawlRun is one RunCrawl.
type crawlRun struct {
	o   CrawlOptions
	t   CrawlTarget
	log *zap.Logger
	// jobs is how many jobs the crawlq phase enqueued.
	jobs int
	// challenge and browserRSS are challenge mode's figures.
	challenge  *ChallengeFigures
	browserRSS float64
}

func (r *crawlRun) run(ctx context.Context) (*CrawlResult, error) {
	res := r.header()
	var err error
	// Each phase runs under a pprof label, so a --cpuprofile can be read
	// one phase at a time: go tool pprof -tagfocus phase=crawlq FILE.
	labelled(ctx, "crawlq", func(ctx context.Context) {
		res.Crawlq, err = r.crawlPhase(ctx, crawlqPolicy(r.o), r.measureRSS(&res.WorkerRSSMB))
	})
	if err != nil {
		return nil, fmt.Errorf("crawlq phase: %w", err)
	}
	if r.o.Challenge {
		res.Challenge, res.BrowserRSSMB = r.challenge, r.browserRSS
		return res, nil
	}
	labelled(ctx, "naive", func(ctx context.Context) { res.Naive, err = r.crawlPhase(ctx, naivePolicy(), nil) })
	if err != nil {
		return nil, fmt.Errorf("naive phase: %w", err)
	}
	labelled(ctx, "noop", func(ctx context.Context) {
		res.NoopTasksPerS, res.NoopCPUPerTask, res.NoopEnqueueCPUPerTask, err = r.floor(ctx, max(r.jobs, minFloorTasks))
	})
	if err != nil {
		return nil, fmt.Errorf("floor phase: %w", err)
	}
	res.ratios()
	return res, nil
}

func (r *crawlRun) header() *CrawlResult {
	res := &CrawlResult{Proxies: r.o.Proxies, Workers: r.o.Workers, Concurrency: r.o.Concurrency,
		DurationS: r.o.Duration.Seconds(), MinIntervalMS: float64(r.o.MinInterval) / float64(time.Millisecond)}
	if r.o.Gateway > 0 {
		res.Proxies, res.GatewayExits, res.GatewaySessions, res.ExitBusy = 0, r.o.Gateway, r.o.GatewaySessions, string(r.o.ExitBusy)
	}
	res.Scheme, res.TLS = "https", "impersonated"
	switch {
	case r.o.PlainHTTP:
		res.Scheme, res.TLS = "http", ""
	case r.o.PlainTLS:
		res.TLS = "go"
	}
	if r.o.MinInterval > 0 {
		limit := float64(r.o.ips()) / r.o.MinInterval.Seconds()
		res.LimitRPS = &limit
	}
	return res
}

// labelled runs f with the pprof label phase=name; goroutines f starts
// carry it too.
func labelled(ctx context.Context, name string, f func(context.Context)) {
	pprof.Do(ctx, pprof.Labels("phase", name), f)
}

func (res *CrawlResult) ratios() {
	if res.LimitRPS != nil {
		res.CrawlqOfLimit = round3(res.Crawlq.RPS / *res.LimitRPS)
	}
	if res.NoopTasksPerS > 0 {
		res.CrawlqOfNoop = round3(res.Crawlq.RPS / res.NoopTasksPerS)
	}
	if p, n := res.Crawlq.CPUPerPage, res.NoopCPUPerTask; p != nil && n != nil && p.RedisUS != nil && n.RedisUS != nil && *n.RedisUS > 0 {
		res.RedisPageOfNoop = round3(*p.RedisUS / *n.RedisUS)
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
