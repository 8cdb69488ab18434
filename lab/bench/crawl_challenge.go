package bench

import (
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"crawlq/fetcher/browser"
	"crawlq/tasks"
	"crawlq/testbed"
)

// ChallengeFigures are challenge mode's results (CrawlResult.Challenge).
type ChallengeFigures struct {
	SolvesPerS      float64 `json:"solves_per_s"`
	Solves          int     `json:"solves"`
	ChallengePages  int     `json:"challenge_pages"`
	CookiesMisused  int     `json:"cookies_misused"`
	BrowserVisits   int     `json:"browser_visits"`
	BrowserFailures int     `json:"browser_failures"`
	// BrowserRequests are the requests the browsers sent to the site;
	// HTTPShare is the share of all the requests the site saw that came
	// over HTTP (the rest are the browsers').
	BrowserRequests int     `json:"browser_requests"`
	HTTPShare       float64 `json:"http_share"`
	// Browsers is the worker servers' browsers (one each) and Contexts
	// the challenges each clears at once.
	Browsers int `json:"browsers"`
	Contexts int `json:"contexts"`
}

// browsers are a phase's browsers, one per worker server.
type browsers struct {
	list                     []*browser.Browser
	visits, failed, requests atomic.Int64
}

// newBrowser gives worker server i its browser in challenge mode.
func (r *crawlRun) newBrowser(env *phaseEnv) tasks.Solver {
	if !r.o.Challenge {
		return nil
	}
	b, err := browser.New(browser.Config{Path: r.o.Chrome, Contexts: r.o.Browsers, CAFiles: []string{env.tb.CAFile}, Logger: r.log})
	if err != nil {
		r.log.Warn("bench crawl: browser", zap.Error(err))
		return nil
	}
	env.browsers.list = append(env.browsers.list, b)
	return b
}

// observeChallenge counts the browsers' visits.
func (env *phaseEnv) observeChallenge(s tasks.ChallengeStats) {
	if s.Reused {
		return
	}
	env.browsers.visits.Add(1)
	env.browsers.requests.Add(int64(s.Requests))
	if !s.Solved {
		env.browsers.failed.Add(1)
	}
}

// challengeFigures reads challenge mode's figures from the site's log.
func (r *crawlRun) challengeFigures(env *phaseEnv, window time.Duration) *ChallengeFigures {
	if !r.o.Challenge {
		return nil
	}
	c := env.tb.Log.Challenges()
	f := &ChallengeFigures{Solves: c.Solved, SolvesPerS: round3(float64(c.Solved) / window.Seconds()),
		ChallengePages: c.Served, CookiesMisused: c.Misused, BrowserVisits: int(env.browsers.visits.Load()),
		BrowserFailures: int(env.browsers.failed.Load()), BrowserRequests: int(env.browsers.requests.Load()),
		Browsers: len(env.browsers.list), Contexts: r.o.Browsers}
	if all := env.tb.Log.Len(); all > 0 {
		f.HTTPShare = round3(float64(all-f.BrowserRequests) / float64(all))
	}
	return f
}

// closeBrowsers stops the phase's browsers.
func (env *phaseEnv) closeBrowsers() {
	for _, b := range env.browsers.list {
		b.Close()
	}
}

// challengeRule is the site's challenge in challenge mode, nil otherwise.
func (r *crawlRun) challengeRule() *testbed.ChallengeRule {
	if !r.o.Challenge {
		return nil
	}
	return &testbed.ChallengeRule{TTL: r.o.ChallengeTTL}
}
