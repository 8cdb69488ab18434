package tasks

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/tasks/site"
)

// Solver clears JavaScript challenges in a real browser. The browser
// tier (*browser.Browser in fetcher/browser) is one; cmd wires it, so
// tasks does not link Chromium's driver.
type Solver interface {
	Solve(ctx context.Context, job fetcher.BrowserJob) (fetcher.BrowserResult, error)
}

// BrowserProfile is the profile of the browser tier's Chromium (156 on
// Linux): a session that meets a challenge becomes this browser, in the
// browser and over HTTP alike, since the clearance is bound to it (I8).
const BrowserProfile = "chromium-156-linux"

// maxSolves bounds the browser visits of one attempt: a page still
// challenged after them fails the attempt (it is retried, nobody banned).
const maxSolves = 2

// challengeRetry is how soon an attempt that could not clear a challenge
// is retried.
const challengeRetry = 3 * time.Second

// ChallengeStats is one browser visit, for metrics.
type ChallengeStats struct {
	Site   string
	Solved bool
	// Reused: no browser visit; a kept clearance was reused.
	Reused bool
	// ProxyFailed: the visit failed because the proxy dropped the
	// connection (the page never loaded): a proxy failure, not a
	// challenge left unsolved.
	ProxyFailed bool
	Took        time.Duration
	// Requests are the visit's requests to the site; Loaded all it let
	// through (the site's and its CDN hosts'), by kind (document, script, xhr, ...).
	Requests int
	Loaded   map[string]int
}

// challenge clears a Challenge answer, then asks the page again over
// HTTP: with a clearance another session of the proxy (its exit IP) kept,
// else with the site's own Solve over HTTP in the session (Avito's proof
// of work), else in the browser through the session's proxy. A site the
// worker cannot clear (no browser, or fetch: http) fails the attempt with
// the reason, the session kept and the proxy released unpunished. A
// challenge-first page (IfUnsolved Blocked) is a ban when a browser visit
// ends on it, or when there is nothing here to try it.
func (r *run) challenge(ctx context.Context, pageURL string, page int, v detect.Verdict) (bool, error) {
	s, _ := r.h.cfg.Sites.Get(r.job.Site)
	why := r.cannotClear(s)
	if why != "" && v.IfUnsolved == detect.Blocked {
		return r.unsolved(ctx, page, v, "challenge page, no browser to try it", why)
	}
	if why == "" && r.solves >= maxSolves {
		why = fmt.Sprintf("it was still there after %d %s", r.solves, solveNoun(s))
	}
	if why != "" {
		r.pause(ctx)
		return false, retryAfter(challengeRetry, fmt.Errorf("site %s: %s is behind a JavaScript challenge (%s) and %s: %w",
			r.job.Site, pageURL, v.Rule, why, detect.ErrChallenge))
	}
	if r.kept {
		r.dropClearance(ctx)
	}
	if r.reuseClearance(ctx) {
		return r.page(ctx, page)
	}
	if solvesHere(s) {
		r.solves++
		if err := r.clearHere(ctx, r.sess, s); err != nil {
			return false, r.solveFailed(ctx, err)
		}
		return r.page(ctx, page)
	}
	res, err := r.solve(ctx, s, pageURL, false)
	if err != nil && v.IfUnsolved == detect.Blocked && r.endedOn(res) {
		return r.unsolved(ctx, page, v, "challenge page the browser did not pass", "the browser's visit through the same IP ended on it")
	}
	if err != nil {
		return false, r.solveFailed(ctx, err)
	}
	r.keepClearance(ctx, r.sess, s, res)
	return r.page(ctx, page) // over HTTP, with the cookies
}

// endedOn says a browser visit that did not clear ended on a
// challenge-first page again (its last page answer is one).
func (r *run) endedOn(res fetcher.BrowserResult) bool {
	if res.Status == 0 && len(res.Body) == 0 {
		return false // no page answer: the visit never got one
	}
	v := r.det.Judge(r.job.Site, "challenge", &detect.Response{Status: res.Status, FinalURL: res.URL, Body: res.Body})
	return v.Kind == detect.Challenge && v.IfUnsolved == detect.Blocked
}

// unsolved makes a challenge-first page (detect.Verdict.IfUnsolved) the
// ban it is once the browser could not pass it (reason, why): the
// session records it Blocked, which quarantines the proxy on the site
// and ends the session; the job retries on another proxy.
func (r *run) unsolved(ctx context.Context, page int, v detect.Verdict, reason, why string) (bool, error) {
	b := detect.Verdict{Kind: detect.Blocked, Reason: reason, Rule: v.Rule + ": " + why, Status: v.Status}
	step := sessions.Step{Verdict: b}
	act, err := r.sess.Record(ctx, b, r.latency)
	if err != nil {
		return false, err
	}
	r.observe(step)
	if act == sessions.Retired || act == sessions.Paused {
		r.sess = nil
	}
	return r.verdict(ctx, page, step)
}

// noBrowser says why this worker does not clear site s's challenges in
// the browser ("" when it does; s may be nil).
func (r *run) noBrowser(s *site.Site) string {
	switch {
	case r.h.cfg.Browser == nil:
		return "this worker has no browser (--browsers 0, or no chromium found)"
	case s != nil && s.FetchPolicy() == site.FetchHTTP:
		return "the site's fetch policy is http"
	}
	return ""
}

// cannotClear says why this worker does not clear site s's challenges
// ("" when it does): a site that solves its own over HTTP always can.
func (r *run) cannotClear(s *site.Site) string {
	if solvesHere(s) {
		return ""
	}
	return r.noBrowser(s)
}

// solvesHere says site s clears its challenge over HTTP, without the
// browser (site.Challenge.Solve).
func solvesHere(s *site.Site) bool { return s != nil && s.Challenge.Solve != nil }

// solveNoun names what clears site s's challenges, for an error.
func solveNoun(s *site.Site) string {
	if solvesHere(s) {
		return "proofs of work solved over HTTP"
	}
	return "browser visits"
}

// keepClearance keeps the clearance the browser got in session sess for
// its proxy's next sessions (and marks the proxy cleared in the broker).
func (r *run) keepClearance(ctx context.Context, sess *sessions.Session, s *site.Site, res fetcher.BrowserResult) {
	r.saveClearance(ctx, sess, clearanceTTL(s, res))
}

// saveClearance keeps session sess's clearance for its proxy's (exit
// IP's) next sessions for ttl, and marks the proxy cleared in the broker.
func (r *run) saveClearance(ctx context.Context, sess *sessions.Session, ttl time.Duration) {
	if err := sess.SaveClearance(ctx, ttl); err != nil {
		r.log.Warn("keep clearance", zap.Error(err))
	}
}

// solveFailed ends an attempt whose browser visit failed: a connection
// the proxy dropped is the proxy's failure (penalty, a new proxy next
// time), anything else keeps the session for the retry. Never a ban.
func (r *run) solveFailed(ctx context.Context, err error) error {
	if proxyDropped(err) {
		r.close(ctx, proxies.Failed("browser: "+err.Error()))
		return retryAfter(time.Second, err)
	}
	r.pause(ctx)
	return retryAfter(challengeRetry, err)
}

// proxyDropped says a browser visit failed in transport (net::ERR_…).
func proxyDropped(err error) bool { return err != nil && strings.Contains(err.Error(), "net::ERR_") }

// reuseClearance gives the session, once per attempt, the clearance
// another session of its proxy got for the site: the clearance is bound
// to the IP and browser, not to a session.
func (r *run) reuseClearance(ctx context.Context) bool {
	if r.reused {
		return false
	}
	r.reused = true
	ok, err := r.sess.LoadClearance(ctx)
	if err != nil {
		r.log.Warn("load clearance", zap.Error(err))
	}
	if ok {
		r.kept = true
		r.sum.ClearancesReused++
		if f := r.h.cfg.OnChallenge; f != nil {
			f(ChallengeStats{Site: r.job.Site, Reused: true})
		}
	}
	return ok
}

// loadClearance starts a new session with the clearance kept for its
// proxy on the site, if the worker clears challenges and there is one:
// its first request then needs no challenge.
func (r *run) loadClearance(ctx context.Context) {
	if r.sess.Resumed() {
		return
	}
	if s, _ := r.h.cfg.Sites.Get(r.job.Site); r.cannotClear(s) != "" {
		return
	}
	ok, err := r.sess.LoadClearance(ctx)
	if err != nil {
		r.log.Warn("load clearance", zap.Error(err))
	}
	r.kept = ok
}

// dropClearance forgets the clearance kept for the session's proxy on the
// site, and its mark in the broker, once the site has challenged a
// request that carried it (it expired early, or the site revoked it):
// the challenge is cleared anew instead of asked again with the same
// cookie, and the broker no longer leases the proxy first for a
// clearance it lacks.
func (r *run) dropClearance(ctx context.Context) {
	r.kept = false
	r.sum.ClearancesRefused++
	if err := r.sess.DropClearance(ctx); err != nil {
		r.log.Warn("drop a refused clearance", zap.Error(err))
		return
	}
	r.log.Info("the site refused a kept clearance; dropped", zap.String("proxy", r.sess.ProxyID()))
}

// Bounds of a kept clearance's life.
const (
	defaultClearanceTTL = 10 * time.Minute
	maxClearanceTTL     = 24 * time.Hour
)

// clearanceTTL is how long a clearance the browser got is kept: until
// its clearance cookie expires (ttlUntil), else defaultClearanceTTL.
func clearanceTTL(s *site.Site, res fetcher.BrowserResult) time.Duration {
	if s == nil || s.Challenge.Cookie == "" {
		return defaultClearanceTTL
	}
	for _, c := range res.Cookies {
		if c.Name == s.Challenge.Cookie && !c.Expires.IsZero() {
			return ttlUntil(c.Expires)
		}
	}
	return defaultClearanceTTL
}

// ttlUntil is how long a clearance whose cookie expires at expires is
// kept: until a minute before, at most maxClearanceTTL;
// defaultClearanceTTL when the expiry is not known (zero).
func ttlUntil(expires time.Time) time.Duration {
	if expires.IsZero() {
		return defaultClearanceTTL
	}
	return min(max(time.Until(expires)-time.Minute, time.Second), maxClearanceTTL)
}

// solve runs the browser on the session's challenge page (the page
// itself when render is set) and puts its cookies in the session. The
// attempt's first visit ends as soon as the site's clearance cookie is
// set (fetcher.BrowserJob.CookieSuffices): the page is asked over HTTP next
// anyway; a second visit, after the site refused that cookie, waits for
// the page the challenge reloads to.
func (r *run) solve(ctx context.Context, s *site.Site, pageURL string, render bool) (fetcher.BrowserResult, error) {
	r.solves++
	return r.solveIn(ctx, r.sess, s, pageURL, render, r.solves == 1)
}

// solveIn is solve in session sess (the job's, or a confirmation's second
// proxy's); suffices ends the visit once the clearance cookie is set.
func (r *run) solveIn(ctx context.Context, sess *sessions.Session, s *site.Site, pageURL string, render, suffices bool) (fetcher.BrowserResult, error) {
	r.becomeBrowser(sess)
	target, cookie := pageURL, ""
	if s != nil && !render {
		target, cookie = s.ChallengeURL(pageURL), s.Challenge.Cookie
	}
	if cookie != "" {
		// the challenge says the site refused the clearance cookie the
		// session holds, if any: the visit starts without it, so the
		// only one it can see is the one the challenge's script sets (a
		// stale one looks cleared on a page that is not the challenge
		// itself, Wildberries' home page, before the script has run)
		sess.ForgetCookie(cookie)
	}
	p := sess.Profile()
	res, err := r.h.cfg.Browser.Solve(ctx, fetcher.BrowserJob{URL: target, Proxy: sess.Proxy(), UserAgent: p.UserAgent,
		AcceptLanguage: p.AcceptLanguage, Cookies: sess.CookiesFor(target), Gate: sess.Gate, Done: sess.Answered, Settled: sess.Settled,
		Clearance: cookie, Cleared: r.cleared, CookieSuffices: cookie != "" && suffices, Render: render, WaitFor: r.expected(render)})
	r.sum.BrowserRequests += res.Requests
	if !render {
		r.sum.Challenges++
	}
	r.noteSolve(err, res)
	if err != nil {
		r.log.Warn("challenge not cleared", zap.String("proxy", sess.ProxyID()), zap.String("url", target), zap.Error(err))
		return res, fmt.Errorf("site %s: the browser did not clear the challenge at %s through proxy %s: %w", r.job.Site, target, sess.Lease().Proxy.Masked(), err)
	}
	if !render {
		r.sum.ChallengesSolved++
	}
	if u, perr := url.Parse(target); perr == nil {
		sess.AddBrowserCookies(u.Scheme, res.Cookies)
	}
	r.log.Debug("challenge cleared", zap.String("proxy", sess.ProxyID()), zap.Duration("took", res.Took), zap.Int("requests", res.Requests))
	return res, nil
}

// expected are the CSS selectors a rendered page is judged by (none for
// a challenge visit): the browser waits for one of them to show.
func (r *run) expected(render bool) []string {
	if !render {
		return nil
	}
	rules := r.h.cfg.Rules
	if r.job.Kind == KindFetch {
		rules = rules.With(r.job.Site, "page", r.job.Fetch.rule())
	}
	return rules.Effective(r.job.Site, r.detectKind()).Selectors
}

// becomeBrowser gives the session the browser's profile if it claims
// another browser.
func (r *run) becomeBrowser(sess *sessions.Session) {
	p, ok := fetcher.ProfileByName(BrowserProfile)
	if ok && sess.Profile().Name != p.Name {
		sess.AdoptProfile(p)
	}
}

// cleared judges a page the browser got: anything but the challenge.
func (r *run) cleared(status int, body []byte) bool {
	v := r.det.Judge(r.job.Site, "challenge", &detect.Response{Status: status, Body: body})
	return v.Kind != detect.Challenge
}

// noteSolve reports a browser visit to the worker's metrics.
func (r *run) noteSolve(err error, res fetcher.BrowserResult) {
	if f := r.h.cfg.OnChallenge; f != nil {
		f(ChallengeStats{Site: r.job.Site, Solved: err == nil, ProxyFailed: proxyDropped(err), Took: res.Took, Requests: res.Requests, Loaded: res.Loaded})
	}
}

// rendered fetches a page in the browser (fetch: browser): its last
// document is judged and recorded as the session's answer.
func (r *run) rendered(ctx context.Context, s *site.Site, pageURL string, page int) (sessions.Step, error) {
	res, err := r.solve(ctx, s, pageURL, true)
	if err != nil && !errors.Is(err, fetcher.ErrNotCleared) && !errors.Is(err, fetcher.ErrNotRendered) {
		return sessions.Step{}, err
	}
	body := res.Body // a page that never rendered is judged by the server's bytes
	if len(res.DOM) > 0 {
		body = res.DOM
	}
	resp := &fetcher.Response{Status: res.Status, FinalURL: res.URL, Body: body, Latency: res.Took}
	v := r.det.Judge(r.job.Site, r.detectKind(), &detect.Response{Status: res.Status, FinalURL: res.URL, Body: body, Page: page})
	act, err := r.sess.Record(ctx, v, res.Took)
	return sessions.Step{Response: resp, Verdict: v, Action: act}, err
}
