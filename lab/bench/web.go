package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/lab/poolseed"
	"crawlq/proxies"
	"crawlq/web"
)

// WebOptions configure RunWeb.
type WebOptions struct {
	// Proxies in the benchmark pool. Default 100000.
	Proxies int
	// Cycles are lease+release cycles per site through the broker before
	// measuring. Default 30000.
	Cycles int
	// Chromium is the browser binary for the first-render figure; empty
	// looks up chromium on PATH. "off" skips it.
	Chromium string
}

// WebResult is the output of `crawlq bench web`: sizes in bytes, times in
// milliseconds.
type WebResult struct {
	Proxies int `json:"proxies"`
	Sites   int `json:"sites"`
	Rows    int `json:"rows"`
	// SeedMS is the import and the cycles; FullReadMS one full read and
	// indexing of the pool (the dashboard does it every --refresh in the
	// background, or less often).
	SeedMS     float64 `json:"seed_ms"`
	FullReadMS float64 `json:"full_read_ms"`
	// PageBytes and PageMS: GET / (median time of 5).
	PageBytes int     `json:"page_bytes"`
	PageMS    float64 `json:"page_ms"`
	// FirstRenderMS is the page's load event in headless Chromium after
	// navigation start (median of 3); ChromiumError says why it is missing.
	FirstRenderMS float64 `json:"first_render_ms,omitempty"`
	ChromiumError string  `json:"chromium_error,omitempty"`
	// SummaryBytes is the in-place update every refresh (/api/summary);
	// RowsBytes the visible rows' update when a new full read exists
	// (/api/pool of the page's query).
	SummaryBytes int `json:"summary_bytes"`
	RowsBytes    int `json:"rows_bytes"`
	// APIPoolBytes is /api/pool's default answer; APIAllBytes and
	// APIAllMS the streamed ?all=1.
	APIPoolBytes int     `json:"api_pool_bytes"`
	APIAllBytes  int     `json:"api_all_bytes"`
	APIAllMS     float64 `json:"api_all_ms"`
	// StallMS is the longest PING round trip of another client while one
	// full read of the pool runs: how long the read keeps Redis from
	// serving the cluster's leases.
	StallMS float64 `json:"redis_stall_ms"`
	// IdleStallMS is the longest PING for as long again without a read.
	IdleStallMS float64 `json:"redis_idle_stall_ms"`
	// MetricsSeries, MetricsBytes and MetricsMS (median of 5) of /metrics.
	MetricsSeries int     `json:"metrics_series"`
	MetricsBytes  int     `json:"metrics_bytes"`
	MetricsMS     float64 `json:"metrics_ms"`
}

const webPool = "benchweb"

// RunWeb seeds a pool of o.Proxies proxies (its own keys, crawlq:{benchweb}:…,
// removed afterwards) on three sites through the broker, serves the
// dashboard on loopback in this process and measures its answers.
func RunWeb(ctx context.Context, rdb *redis.Client, aopt asynq.RedisConnOpt, o WebOptions) (*WebResult, error) {
	if o.Proxies <= 0 {
		o.Proxies = 100000
	}
	if o.Cycles <= 0 {
		o.Cycles = 30000
	}
	opt := *rdb.Options()
	opt.ReadTimeout = time.Minute // a big import is one script
	c := redis.NewClient(&opt)
	defer c.Close()
	defer cleanupPool(context.WithoutCancel(ctx), c, webPool)
	if err := cleanupPool(ctx, c, webPool); err != nil {
		return nil, err
	}
	b := proxies.NewRedisBroker(c, proxies.Config{Pool: webPool, Default: proxies.SiteConfig{MinInterval: time.Minute}})
	res := &WebResult{Proxies: o.Proxies}
	start := time.Now()
	if err := poolseed.Seed(ctx, b, b, poolseed.Options{Proxies: o.Proxies, Cycles: o.Cycles}); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	res.SeedMS = ms(time.Since(start))
	var err error
	if res.StallMS, res.IdleStallMS, err = stall(ctx, c, b); err != nil {
		return nil, err
	}
	base, stop, err := serveDashboard(ctx, aopt, b)
	if err != nil {
		return nil, err
	}
	defer stop()
	return res, measureWeb(ctx, base, o, res)
}

// stall runs one full read of the pool (Stats) while another connection
// PINGs in a loop, and returns the longest PING; then the longest PING of
// the same loop for as long again without a read, the machine's own
// noise.
func stall(ctx context.Context, c *redis.Client, b *proxies.RedisBroker) (during, idle float64, err error) {
	pinger := redis.NewClient(c.Options())
	defer pinger.Close()
	if err := pinger.Ping(ctx).Err(); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	d, err := worstPing(ctx, pinger, func() error { _, err := b.Stats(ctx); return err })
	if err != nil {
		return 0, 0, err
	}
	took := time.Since(start)
	i, err := worstPing(ctx, pinger, func() error {
		select {
		case <-time.After(took):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	return ms(d), ms(i), err
}

// worstPing PINGs in a loop while f runs and returns the longest PING.
func worstPing(ctx context.Context, pinger *redis.Client, f func() error) (time.Duration, error) {
	done := make(chan struct{})
	worst := make(chan time.Duration, 1)
	go func() {
		var w time.Duration
		for {
			select {
			case <-done:
				worst <- w
				return
			default:
			}
			t := time.Now()
			if pinger.Ping(ctx).Err() != nil {
				worst <- w
				return
			}
			w = max(w, time.Since(t))
		}
	}()
	err := f()
	close(done)
	return <-worst, err
}

// serveDashboard serves a dashboard for b on loopback after its first full
// read, returning its base URL and a stop function.
func serveDashboard(ctx context.Context, aopt asynq.RedisConnOpt, b proxies.Broker) (string, func(), error) {
	s, err := web.NewServer(web.Config{Redis: aopt, Broker: b, Refresh: 10 * time.Second})
	if err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		return "", nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Serve(sctx, l) }()
	stop := func() { cancel(); <-done; s.Close() }
	base := "http://" + l.Addr().String()
	for { // the sampler's first full read
		if _, err := fetch(ctx, base+"/api/pool"); err == nil {
			return base, stop, nil
		}
		select {
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func measureWeb(ctx context.Context, base string, o WebOptions, res *WebResult) error {
	page, err := fetch(ctx, base+"/api/pool")
	if err != nil {
		return err
	}
	res.APIPoolBytes, res.RowsBytes = len(page), len(page)
	var total struct{ Total int }
	_ = json.Unmarshal(page, &total)
	res.Rows = total.Total
	steps := []struct {
		url   string
		n     int
		bytes *int
		ms    *float64
	}{{base + "/", 5, &res.PageBytes, &res.PageMS}, {base + "/metrics", 5, &res.MetricsBytes, &res.MetricsMS},
		{base + "/api/pool?all=1", 1, &res.APIAllBytes, &res.APIAllMS}, {base + "/api/summary", 1, &res.SummaryBytes, new(float64)}}
	for _, st := range steps {
		var times []time.Duration
		for range st.n {
			t := time.Now()
			body, err := fetch(ctx, st.url)
			if err != nil {
				return err
			}
			times = append(times, time.Since(t))
			*st.bytes = len(body)
			if strings.HasSuffix(st.url, "/metrics") {
				res.MetricsSeries, res.FullReadMS = series(body), 1000*sampleValue(body, "crawlq_pool_read_duration_seconds")
			}
		}
		slices.Sort(times)
		*st.ms = ms(times[len(times)/2])
	}
	res.Sites = summarySites(ctx, base)
	res.FirstRenderMS, err = firstRender(ctx, base, o.Chromium)
	if err != nil {
		res.ChromiumError = err.Error()
	}
	return nil
}

// summarySites is the number of sites /api/summary shows (0 when it
// cannot be read).
func summarySites(ctx context.Context, base string) int {
	var sum struct {
		Status struct {
			Pool struct{ Sites map[string]any }
		}
	}
	if body, err := fetch(ctx, base+"/api/summary"); err == nil && json.Unmarshal(body, &sum) == nil {
		return len(sum.Status.Pool.Sites)
	}
	return 0
}

// firstRender loads the page three times in headless Chromium and returns
// the median load-event time after navigation start.
func firstRender(ctx context.Context, base, bin string) (float64, error) {
	if bin == "off" {
		return 0, errors.New("skipped (--chromium off)")
	}
	if bin == "" {
		p, err := exec.LookPath("chromium")
		if err != nil {
			return 0, fmt.Errorf("chromium not found (--chromium PATH): %w", err)
		}
		bin = p
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.WindowSize(1280, 900))
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	var times []float64
	for range 3 {
		if err := chromedp.Do(bctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#proxies"))); err != nil {
			return 0, err
		}
		v, err := chromedp.Run(bctx, chromedp.Poll[float64](`(() => { const n = performance.getEntriesByType('navigation')[0]; return n && n.loadEventEnd > 0 ? n.loadEventEnd : 0 })()`,
			chromedp.WithPollingTimeout(30*time.Second)))
		if err != nil {
			return 0, err
		}
		times = append(times, v)
	}
	slices.Sort(times)
	return times[1], nil
}

func fetch(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, err
}

// series counts the samples of a Prometheus text exposition.
func series(body []byte) int {
	n := 0
	for _, l := range strings.Split(string(body), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			n++
		}
	}
	return n
}

// sampleValue is the value of the unlabelled sample name, 0 if absent.
func sampleValue(body []byte, name string) float64 {
	for _, l := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cleanupPool deletes every key of one broker pool.
func cleanupPool(ctx context.Context, c *redis.Client, pool string) error {
	iter := c.Scan(ctx, 0, "crawlq:{"+pool+"}:*", 1000).Iterator()
	for iter.Next(ctx) {
		if err := c.Del(ctx, iter.Val()).Err(); err != nil {
			return err
		}
	}
	return iter.Err()
}
