package demo

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"crawlq/fetcher/browser"
	"crawlq/tasks"
	"crawlq/testbed"
)

// ChallengeSummary is what the demo's JavaScript challenges cost; all
// zero when the demo ran without challenge mode (no Chromium).
type ChallengeSummary struct {
	// ChallengeMode says the sites challenged new visitors.
	ChallengeMode bool `json:"challenge_mode"`
	// Challenges are the challenges the workers sent the browser to
	// clear; ChallengesSolved those it cleared. Goal: equal, > 0.
	Challenges       int `json:"challenges"`
	ChallengesSolved int `json:"challenges_solved"`
	// BrowserProxyFailures are browser visits whose proxy dropped the
	// connection before the page loaded (flaky proxies): counted as proxy
	// failures, not as challenges.
	BrowserProxyFailures int `json:"browser_proxy_failures"`
	// ClearancesReused are challenges met with a clearance another session
	// of the same proxy got (no browser visit).
	ClearancesReused int `json:"clearances_reused"`
	// ChallengePages are the challenge answers the sites served (pages and
	// WB's 498s); SiteSolves the clearance cookies the sites accepted for
	// the first time; CookiesMisused the requests refused for a clearance
	// of another IP or User-Agent (goal: 0). From the testbed's log.
	ChallengePages int `json:"challenge_pages"`
	SiteSolves     int `json:"site_solves"`
	CookiesMisused int `json:"cookies_misused"`
	// BrowserRequests are the requests the browsers sent (paced like the
	// HTTP client's); HTTPShare is the share of all site requests that
	// went over HTTP. Goal: ≥ 0.95.
	BrowserRequests int     `json:"browser_requests"`
	HTTPShare       float64 `json:"http_share"`
	// BrowserRSSMB is the largest browser memory (PSS, MB) of one worker,
	// sampled during the run.
	BrowserRSSMB float64 `json:"browser_rss_mb"`
	// PerVisit are the requests one browser visit let through on average
	// (to the site and its CDN hosts), by kind: document, script, xhr, …
	PerVisit map[string]float64 `json:"per_visit,omitempty"`
	// PoWSolved and PoWFailed count the proofs of work (Avito's 439) the
	// workers solved over HTTP, no browser; PoWMeanMS is their mean time.
	PoWSolved int     `json:"pow_solved"`
	PoWFailed int     `json:"pow_failed"`
	PoWMeanMS float64 `json:"pow_mean_ms"`
	// AvitoQuarantines are the quarantines the workers' ban verdicts put
	// on proxies for Avito; Quarantines439 the proxies whose last ban
	// names status 439. Goal: 0 (a proof of work is no ban).
	AvitoQuarantines int64 `json:"avito_quarantines"`
	Quarantines439   int64 `json:"quarantines_439"`
}

// challengeCounter sums the workers' browser visits. Safe for concurrent
// use.
type challengeCounter struct {
	mu                                       sync.Mutex
	visits, solved, reused, browser, dropped int
	peakRSS                                  int64
	loaded                                   map[string]int
	pows, powsFailed                         int
	powTime                                  time.Duration
}

// addPoW counts one proof of work (tasks.WorkerConfig.OnPoW).
func (c *challengeCounter) addPoW(s tasks.PoWStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.Solved {
		c.powsFailed++
		return
	}
	c.pows++
	c.powTime += s.Took
}

// add counts one browser visit or reuse (tasks.WorkerConfig.OnChallenge).
func (c *challengeCounter) add(s tasks.ChallengeStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.Reused {
		c.reused++
		return
	}
	c.browser += s.Requests
	if c.loaded == nil {
		c.loaded = map[string]int{}
	}
	for kind, n := range s.Loaded {
		c.loaded[kind] += n
	}
	if s.ProxyFailed {
		c.dropped++
		return
	}
	c.visits++
	if s.Solved {
		c.solved++
	}
}

// sample keeps the largest browser memory seen.
func (c *challengeCounter) sample(bs []*browser.Browser) {
	for _, b := range bs {
		rss := b.RSS()
		c.mu.Lock()
		c.peakRSS = max(c.peakRSS, rss)
		c.mu.Unlock()
	}
}

// fill writes the counts into sum.
func (c *challengeCounter) fill(sum *ChallengeSummary, log *testbed.Log, requests int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sum.Challenges, sum.ChallengesSolved, sum.ClearancesReused = c.visits, c.solved, c.reused
	sum.BrowserRequests, sum.BrowserProxyFailures = c.browser, c.dropped
	sum.BrowserRSSMB = float64(c.peakRSS>>10) / 1024
	cc := log.Challenges()
	sum.ChallengePages, sum.SiteSolves, sum.CookiesMisused = cc.Served, cc.Solved, cc.Misused
	sum.PoWSolved, sum.PoWFailed = c.pows, c.powsFailed
	if c.pows > 0 {
		sum.PoWMeanMS = float64(c.powTime.Microseconds()) / 1000 / float64(c.pows)
	}
	if visits := c.visits + c.dropped; visits > 0 && len(c.loaded) > 0 {
		sum.PerVisit = map[string]float64{}
		for kind, n := range c.loaded {
			sum.PerVisit[kind] = float64(n) / float64(visits)
		}
	}
	if requests > 0 {
		sum.HTTPShare = float64(requests-c.browser) / float64(requests)
	}
}

// quarantines fills the quarantines the workers put on proxies for
// Avito, and those whose last ban names status 439.
func quarantines(ctx context.Context, sum *ChallengeSummary, c *cluster, log *zap.Logger) {
	st, err := c.broker.Stats(ctx)
	if err != nil {
		log.Warn("demo: pool stats", zap.Error(err))
		return
	}
	for _, p := range st.Proxies {
		sum.AvitoQuarantines += p.Sites[testbed.SiteAvito].Banned
		for _, ps := range p.Sites {
			if strings.Contains(ps.LastBan, "439") {
				sum.Quarantines439++
				break
			}
		}
	}
}

// findBrowser says whether the demo can run in challenge mode.
func findBrowser(cfg Config) (string, bool) {
	if cfg.NoChallenge {
		return "", false
	}
	p, err := browser.Find(cfg.Chrome)
	if err != nil {
		cfg.Logger.Info("demo without challenge mode", zap.Error(err))
		return "", false
	}
	return p, true
}
