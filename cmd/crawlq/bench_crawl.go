package main

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"crawlq/internal/redisx"
	"crawlq/lab/bench"
	"crawlq/sessions"
)

type benchCrawlFlags struct {
	o        bench.CrawlOptions
	asJSON   bool
	chart    string
	noRSS    bool
	topology string
	broker   string
	volume   string
	learn    bench.LearnOptions
}

const benchCrawlLong = `Runs, one after the other on this machine, against the testbed with the
site in strict anti-bot mode (an IP that sends faster than --min-interval is
banned for the rest of the run):

  1. crawlq: --workers worker servers (in-process, each with its own Asynq
     server and broker client) crawl one-page product jobs of the site
     through --proxies proxies, the broker's min_interval = --min-interval;
     then a "crawlq worker --concurrency 100" child crawls the same testbed
     for 5s and its peak RSS (VmHWM) is worker_rss_mb;
  2. naive: the same jobs and workers on the article's policy (lock only
     while a request is in flight, release by DEL, no per-site interval,
     ban on a 403/429 status only);
  3. the limit: proxies / min-interval requests per second;
  4. the floor: as many no-op Asynq tasks (at least 5000) through the same
     Redis, servers and concurrency, per second.

The site is crawled over HTTPS with its fingerprint check on (a request
whose TLS/HTTP2 fingerprint is not the browser its User-Agent claims gets
the site's 403): --plain-tls sends Go's own TLS instead of the profiles'
browsers, --plain-http crawls the plain http:// listener.

Figures: rps = successful pages (OK verdicts) per second over the window;
bans = requests the site refused (too fast, or from an IP it banned), over
the whole phase; ban_rate = bans / requests the site saw in the phase;
i2_violations = request starts from one IP closer than --min-interval, from
the site's own log; cpu_per_page and noop_cpu_per_task = CPU per OK page
(per no-op task) over the window, in Redis (INFO cpu of the whole server;
absent on the embedded Redis) and in this process (workers, testbed proxies
and site, feeder). The Redis DB must be empty; the benchmark deletes its
asynq:* and crawlq:* keys at the end. With --cpuprofile each phase's samples
carry the label phase=crawlq|naive|noop (go tool pprof -tagfocus phase=crawlq).`

func newBenchCrawlCmd(a *app) *cobra.Command {
	var f benchCrawlFlags
	cmd := &cobra.Command{
		Use:   "crawl",
		Short: "Ban-free crawl throughput: crawlq vs the naive policy vs the P/D limit vs the no-op task floor",
		Long:  benchCrawlLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if b := f.o.ExitBusy; b != sessions.ExitReroll && b != sessions.ExitWait {
				return fmt.Errorf("--exit-busy %q: want reroll or wait", b)
			}
			if f.o.Modems > 0 {
				return runBenchModems(cmd, a, f)
			}
			if f.o.LearnVolume { // --learn without --modems: the learned pace
				return runBenchLearn(cmd, a, f)
			}
			return withTopology(a, f.topology, func() error { return runBenchCrawl(cmd, a, f) })
		},
	}
	addCrawlFlags(cmd.Flags(), &f)
	addCrawlProxyFlags(cmd.Flags(), &f)
	addCrawlLearnFlags(cmd.Flags(), &f)
	return cmd
}

// addCrawlFlags binds `bench crawl`'s flags of the crawl itself to f.
func addCrawlFlags(fl *pflag.FlagSet, f *benchCrawlFlags) {
	fl.IntVar(&f.o.Proxies, "proxies", 50, "proxies in the farm and the pool (P)")
	fl.IntVar(&f.o.Workers, "workers", 3, "worker servers per phase (K)")
	fl.DurationVar(&f.o.MinInterval, "min-interval", 500*time.Millisecond, "site min interval per IP (D), in the broker and the testbed's strict rule; 0 for none")
	fl.DurationVar(&f.o.Duration, "duration", 20*time.Second, "measured window of each crawl phase (T)")
	fl.IntVar(&f.o.Concurrency, "concurrency", 0, "job slots per worker (default: a worker's share of (P/D) x 100ms, at least 4; without D, P/K up to 32)")
	fl.StringVar(&f.o.Site, "site", "wildberries", "site to crawl: wildberries, ozon or avito")
	fl.IntVar(&f.o.CatalogSize, "catalog", 1000, "testbed products per site")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	fl.StringVar(&f.chart, "chart", "", "write an SVG chart of pages/s over time (crawlq vs naive, bans marked) to FILE")
	fl.BoolVar(&f.noRSS, "no-rss", false, "skip the worker RSS child (worker_rss_mb 0)")
	fl.BoolVar(&f.o.PlainTLS, "plain-tls", false, "send HTTPS with Go's crypto/tls instead of the profiles' browser fingerprints (the site refuses it)")
	fl.BoolVar(&f.o.Challenge, "challenge", false, "challenge mode: the site's JavaScript challenge on, clearances living --challenge-ttl, each worker with a browser of --browsers contexts; only the crawlq phase and the worker child (one browser) run")
	fl.DurationVar(&f.o.ChallengeTTL, "challenge-ttl", 10*time.Second, "challenge mode: the clearance cookie's lifetime (short, so the browsers keep solving)")
	fl.IntVar(&f.o.Browsers, "browsers", 1, "challenge mode: challenges each worker's browser clears at once")
	fl.StringVar(&f.o.Chrome, "chrome", "", "challenge mode: the Chromium binary (default: on PATH)")
}

// addCrawlProxyFlags binds `bench crawl`'s flags of the proxies crawled
// through (gateway, modems, broker Redis, topology) to f.
func addCrawlProxyFlags(fl *pflag.FlagSet, f *benchCrawlFlags) {
	fl.IntVar(&f.o.Gateway, "gateway", 0, "crawl through a gateway proxy of N exit IPs instead of the farm (the limit is then N/D); the naive phase imports its session ids as plain lines")
	fl.IntVar(&f.o.GatewaySessions, "gateway-sessions", 0, "with --gateway: the session ids its line allows (default 5 x exits)")
	fl.StringVar((*string)(&f.o.ExitBusy), "exit-busy", "reroll", "with --gateway: a session landing on a held exit IP rerolls its session id or waits: reroll or wait")
	fl.BoolVar(&f.o.PlainHTTP, "plain-http", false, "crawl the site's plain http:// listener (no TLS, no fingerprint check)")
	fl.StringVar(&f.broker, "broker-redis", "", "run the proxy broker on a Redis of its own, as a worker's --broker-redis (an empty DB); the Redis CPU is then reported for each")
	fl.IntVar(&f.o.Modems, "modems", 0, "crawl the volume-ban Avito through N testbed modems instead, in three phases: quarantine (no change links), rotation on ban, rotation before the ban (rotate_after); --min-interval defaults to Avito's 1s and --duration to 45s (three bans a modem at the default volume)")
	fl.StringVar(&f.volume, "volume", "10/15s", "with --modems: the site bans an IP past REQUESTS/WINDOW (Avito's 600/15m scaled by 60)")
	fl.DurationVar(&f.o.ChangeEvery, "change-every", 3*time.Second, "with --modems: the provider's least time between two IP changes of a modem")
	fl.DurationVar(&f.o.ChangeSettle, "change-settle", time.Second, "with --modems: how long a modem is offline after a change")
	fl.IntVar(&f.o.RotateAfter, "rotate-after", 0, "with --modems: the rotation-before-the-ban phase's rotate_after (default the volume's requests less 2)")
	fl.IntVar(&f.o.ModemExits, "modem-exits", 0, "with --modems: the carrier's pool of exit IPs (default 64 a modem)")
	fl.StringSliceVar(&f.o.ModemPhases, "modem-phases", nil, "with --modems: the phases run, of quarantine, rotate-on-ban and rotate-before (default all three)")
	fl.DurationVar(&f.o.ProviderEvery, "provider-every", 0, "with --modems: the provider's real least time between two changes, when --change-every (what the modems' lines tell crawlq) is not it (default --change-every)")
	fl.BoolVar(&f.o.LearnVolume, "learn", false, "with --modems: the rotate-before phase has rotate_after auto, the budget per IP learned from the site's bans (reports the budget and the bans before and after it); without: the learned pace, the site with a hidden gap per IP (not told to crawlq) crawled by three arms side by side, each with --learn-proxies of the farm: min_interval auto, a fixed guess too fast (--too-fast) and a fixed safe one (--fixed); the gap tightens to --tighten-to at --tighten-at; --duration defaults to 7m")
	fl.BoolVar(&f.o.WholeSeconds, "whole-seconds", false, "with --modems: the provider keeps its changes' times in whole seconds, rounded (a call up to 0.5 s after its interval can be refused)")
	fl.StringVar(&f.topology, "topology", "", "run on a Sentinel group or Redis Cluster started for the run: sentinel or cluster (default: --redis); a Cluster's CPU is reported per master")
}

func runBenchCrawl(cmd *cobra.Command, a *app, f benchCrawlFlags) error {
	if f.o.MinInterval < 0 {
		return fmt.Errorf("--min-interval %s: want 0 or more", f.o.MinInterval)
	}
	var err error
	ctx := cmd.Context()
	if f.o.Logger, err = a.logger(); err != nil {
		return err
	}
	conn, err := a.redis(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if conn.Embedded() {
		fmt.Fprintln(cmd.ErrOrStderr(), "note: on the embedded Redis (Lua in a Go interpreter) the rates measure it more than crawlq; give --redis a real one for figures")
	}
	if f.o.WorkerCommand, err = f.workerCommand(); err != nil {
		return err
	}
	target := bench.CrawlTarget{Client: conn.Client, Asynq: conn.Asynq, URL: childRedisURL(a, conn),
		NewClient: conn.Target.NewClient}
	closeBroker, err := openCrawlBroker(ctx, f.broker, &target)
	if err != nil {
		return err
	}
	defer closeBroker()
	res, err := bench.RunCrawl(ctx, target, f.o)
	if err != nil {
		return err
	}
	return f.report(cmd, res)
}

// report writes --chart and prints the result, as JSON with --json.
func (f benchCrawlFlags) report(cmd *cobra.Command, res *bench.CrawlResult) error {
	if f.chart != "" {
		if err := writeChartFile(f.chart, res); err != nil {
			return err
		}
	}
	if f.asJSON {
		return writeJSONLine(cmd, res)
	}
	printCrawlResult(cmd, res)
	return nil
}

// openCrawlBroker opens --broker-redis, when given, as target's broker;
// the caller calls the returned func to close it.
func openCrawlBroker(ctx context.Context, url string, target *bench.CrawlTarget) (func(), error) {
	if url == "" {
		return func() {}, nil
	}
	bconn, err := openRedis(ctx, "--broker-redis", url)
	if err != nil {
		return nil, err
	}
	target.Broker, target.BrokerURL, target.NewBrokerClient = bconn.Client, url, bconn.Target.NewClient
	return func() { bconn.Close() }, nil
}

// workerCommand runs the worker RSS child: this binary, unless --no-rss.
func (f benchCrawlFlags) workerCommand() (func(context.Context, []string) *exec.Cmd, error) {
	if f.noRSS {
		return nil, nil
	}
	return selfCommand()
}

// selfCommand runs this binary again (as `crawlq worker`).
func selfCommand() (func(context.Context, []string) *exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the crawlq binary for the worker child: %w", err)
	}
	return func(ctx context.Context, args []string) *exec.Cmd { return exec.CommandContext(ctx, exe, args...) }, nil
}

// childRedisURL is --redis for the worker child; the embedded Redis is
// reached over its loopback address.
func childRedisURL(a *app, conn *redisx.Conn) string {
	if !conn.Embedded() {
		return a.redisURL
	}
	u := url.URL{Scheme: "redis", Host: conn.Target.Addrs[0], Path: "/" + strconv.Itoa(conn.Target.DB)}
	return u.String()
}

func writeChartFile(path string, res *bench.CrawlResult) error {
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--chart: %w", err)
	}
	if err := bench.WriteChart(out, res); err != nil {
		out.Close()
		return fmt.Errorf("--chart %s: %w", path, err)
	}
	return out.Close()
}

func printCrawlResult(cmd *cobra.Command, res *bench.CrawlResult) {
	w := cmd.OutOrStdout()
	limit := "none"
	if res.LimitRPS != nil {
		limit = fmt.Sprintf("%.1f pages/s", *res.LimitRPS)
	}
	fmt.Fprintf(w, "proxies %d, workers %d x %d slots, min interval %gms, window %gs, limit %s, %s %s\n",
		res.Proxies, res.Workers, res.Concurrency, res.MinIntervalMS, res.DurationS, limit, res.Scheme, res.TLS)
	phases := []struct {
		name string
		ph   bench.Phase
	}{{"crawlq", res.Crawlq}, {"naive", res.Naive}}
	if res.Challenge != nil {
		phases = phases[:1] // challenge mode runs crawlq alone
	}
	for _, p := range phases {
		fmt.Fprintf(w, "%-7s %8.1f pages/s  bans %d of %d requests (%.1f%%), %d IPs banned, %d fingerprint refusals, I2 violations %d%s\n",
			p.name, p.ph.RPS, p.ph.Bans, p.ph.Requests, 100*p.ph.BanRate, p.ph.BannedIPs, p.ph.FingerprintRefusals,
			p.ph.I2Violations, costText(p.ph.CPUPerPage, "page"))
	}
	if res.Challenge == nil {
		fmt.Fprintf(w, "floor   %8.1f no-op tasks/s (crawlq %.2fx)%s\nworker RSS at concurrency 100: %.1f MB\n",
			res.NoopTasksPerS, res.CrawlqOfNoop, costText(res.NoopCPUPerTask, "task"), res.WorkerRSSMB)
	}
	if b := res.Crawlq.BrokerCPUPerPage; b != nil && b.RedisUS != nil {
		fmt.Fprintf(w, "the broker's own Redis: %.1fµs a page (the figures above are the queue's Redis)\n", *b.RedisUS)
	}
	if res.RedisPageOfNoop > 0 {
		fmt.Fprintf(w, "Redis CPU: a crawled page costs %.2fx a no-op task (enqueue included in both)\n", res.RedisPageOfNoop)
	}
	if c := res.Challenge; c != nil {
		fmt.Fprintf(w, "challenges: %.2f solves/s (%d solves, %d challenge answers, %d browser visits of %d browsers x %d contexts, %d failed), %d cookies misused; worker with one browser %.1f MB (browser %.1f MB)\n",
			c.SolvesPerS, c.Solves, c.ChallengePages, c.BrowserVisits, c.Browsers, c.Contexts, c.BrowserFailures, c.CookiesMisused, res.WorkerRSSMB, res.BrowserRSSMB)
	}
	if q, m := res.Crawlq.FalseQuarantines, res.Crawlq.MissedSoftBans; q != nil && m != nil {
		fmt.Fprintf(w, "crawlq ban handling: false quarantines %d, missed soft bans %d\n", *q, *m)
	}
}

// costText is ", CPU/page: Redis 300µs, this process 900µs" or "" when not
// measured.
func costText(c *bench.CPUCost, unit string) string {
	if c == nil {
		return ""
	}
	redis := "n/a"
	if c.RedisUS != nil {
		redis = fmt.Sprintf("%.0fµs", *c.RedisUS)
	}
	per := ""
	for _, a := range slices.Sorted(maps.Keys(c.RedisByMasterUS)) {
		per += fmt.Sprintf(" %s %.0fµs", a, c.RedisByMasterUS[a])
	}
	if per != "" {
		per = " (by master:" + per + ")"
	}
	return fmt.Sprintf(", CPU/%s: Redis %s%s, this process %.0fµs", unit, redis, per, c.ProcessUS)
}
