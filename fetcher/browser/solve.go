package browser

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"go.uber.org/zap"

	"crawlq/fetcher"
)

// Solve opens job.URL in a new browser context through job.Proxy and
// waits until the challenge has cleared (bounded by Config.Timeout),
// then returns the context's cookies and closes it. A solve that times
// out closes its page; if the browser then does not answer, it is
// killed and the next Solve starts a new one.
func (b *Browser) Solve(ctx context.Context, job fetcher.BrowserJob) (fetcher.BrowserResult, error) {
	select {
	case b.slots <- struct{}{}:
		defer func() { <-b.slots }()
	case <-ctx.Done():
		return fetcher.BrowserResult{}, ctx.Err()
	}
	ctx, end := context.WithCancel(ctx)
	defer end()
	defer b.track(end)()
	if err := ctx.Err(); err != nil {
		return fetcher.BrowserResult{}, err
	}
	root, err := b.running()
	if err != nil {
		return fetcher.BrowserResult{}, err
	}
	b.addLive(1)
	defer b.addLive(-1)
	start := time.Now()
	res, err := b.solve(ctx, root, job)
	if job.Settled != nil {
		job.Settled()
	}
	res.Took = time.Since(start)
	if err != nil && ctx.Err() == nil {
		b.checkAlive(root)
	}
	return res, err
}

// solve runs one browser context to its end.
//
// The end is where a request can slip out unpaced: Chromium lets every
// request still paused at the interception go on, unmodified and without
// the session's User-Agent override, when the DevTools session detaches or
// the target closes; and a CDP call made with a cancelled context may never
// be sent. So the answers to paused requests go over a context the job's
// end does not cancel (loop), the gate closes when the wait ends (every
// request paused after it is answered here, locally), the page is brought
// to rest (scripts off, about:blank committed, nothing paused) and only
// then is the context closed, the interception still on. A page that
// cannot be brought to rest has its browser killed: a dead process sends
// nothing.
func (b *Browser) solve(ctx context.Context, root context.Context, job fetcher.BrowserJob) (fetcher.BrowserResult, error) {
	proxy := *job.Proxy
	proxy.User = nil
	cctx, closeCtx := chromedp.NewContext(root, chromedp.WithNewBrowserContext(func(p *target.CreateBrowserContextParams) {
		p.ProxyServer, p.ProxyBypassList = proxy.String(), "<-loopback>"
	}))
	defer closeCtx()
	if err := chromedp.Do(cctx); err != nil {
		return fetcher.BrowserResult{}, fmt.Errorf("open browser context: %w", err)
	}
	loop, stopLoop := context.WithCancel(context.WithoutCancel(cctx))
	defer stopLoop()
	stopDead := context.AfterFunc(root, stopLoop) // a dead browser answers nothing
	defer stopDead()
	// The wait, and the gate with it, ends at the timeout or with the job.
	tctx, cancel := context.WithTimeout(cctx, b.cfg.Timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	p := b.newPage(job, chromedp.FromContext(cctx), tctx, cancel)
	err := p.run(loop, tctx, job.Render)
	cancel() // the gate is closed: a request paused from now on is answered here
	if err == nil {
		err = p.readCookies(loop)
	}
	if rerr := p.rest(loop); rerr != nil {
		b.kill(root, "its page could not be brought to rest before its context closed", zap.Error(rerr))
	}
	closeCtx()
	if f := p.failure(); f != nil {
		err = f
	}
	if ctx.Err() != nil && err != nil {
		err = fmt.Errorf("%w (%w)", err, ctx.Err())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.res, err
}

// run starts the page (its loop on loop), waits for it to be solved and,
// with render, renders it; gate bounds the wait.
func (p *pageRun) run(loop, gate context.Context, render bool) error {
	err := p.start(loop, gate)
	if err == nil {
		err = p.wait(gate)
	}
	if err == nil && render {
		err = p.render(gate)
	}
	return err
}

// readCookies reads the page's cookies into its result, within 5 s.
func (p *pageRun) readCookies(loop context.Context) error {
	rctx, rcancel := context.WithTimeout(loop, 5*time.Second)
	defer rcancel()
	var err error
	p.res.Cookies, err = p.cookies(rctx)
	return err
}

// newPage is the run of job's page in c (its target wrapped by b.wrap
// when set); end ends its wait.
func (b *Browser) newPage(job fetcher.BrowserJob, c *chromedp.Context, gate context.Context, end context.CancelFunc) *pageRun {
	var t cdp.Session = c.Target
	if b.wrap != nil {
		t = b.wrap(t)
	}
	p := &pageRun{job: job, c: c, t: t, gate: gate, end: end, failures: &b.interceptErrs,
		skip: b.cfg.Skip, hosts: job.SiteHosts, loaded: b.countKind}
	if job.Skip != nil {
		p.skip = job.Skip
	}
	if u, err := url.Parse(job.URL); err == nil && len(p.hosts) == 0 {
		p.hosts = []string{u.Host}
	}
	for _, ck := range job.Cookies {
		if ck.Name == job.Clearance {
			p.had = ck.Value
		}
	}
	return p
}

// restTimeout bounds bringing a page to rest.
const restTimeout = 30 * time.Second

// rest stops the page before its context closes: scripts off, every
// navigation stopped, about:blank committed, and no request paused at the
// interception (each is answered locally now that the gate is closed). A
// request of the old document cannot start once about:blank has
// committed. It says why the page did not come to rest within
// restTimeout, or that it never can (a request that could not be answered
// may still be paused); nil once it has.
func (p *pageRun) rest(loop context.Context) error {
	ctx, cancel := context.WithTimeout(loop, restTimeout)
	defer cancel()
	_, last := cdp.Call(ctx, p.t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
	quiet := 0
	for ctx.Err() == nil {
		if p.isStuck() {
			return fmt.Errorf("a request may still be paused: %w", p.failure())
		}
		if p.held() == 0 && p.atBlank(ctx) {
			quiet++
			if quiet == 2 {
				return nil
			}
		} else {
			quiet = 0
			last = p.toBlank(ctx)
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("not at rest within %v: %w", restTimeout, cmp.Or(last, ctx.Err()))
}

// toBlank stops the page's loading and navigates it to about:blank; it
// returns the first call's error (the next round of rest tries again).
func (p *pageRun) toBlank(ctx context.Context) error {
	_, err := cdp.Call(ctx, p.t, page.StopLoading, cdp.Empty{})
	nav, nerr := cdp.Call(ctx, p.t, page.Navigate, page.NavigateParams{URL: "about:blank"})
	if nerr == nil && nav.ErrorText != "" {
		nerr = errors.New(nav.ErrorText)
	}
	return cmp.Or(err, nerr)
}

// atBlank says whether the page's main frame shows about:blank.
func (p *pageRun) atBlank(ctx context.Context) bool {
	res, err := cdp.Call(ctx, p.t, page.GetFrameTree, cdp.Empty{})
	return err == nil && res.FrameTree != nil && res.FrameTree.Frame != nil && res.FrameTree.Frame.URL == "about:blank"
}

// held is the number of requests paused at the interception and not
// answered yet.
func (p *pageRun) held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// isStuck says whether a request that could not be answered may still be
// paused.
func (p *pageRun) isStuck() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stuck
}

// kill ends the browser root belongs to at once (SIGKILL), if it is still
// the running one; the next Solve starts a new one.
func (b *Browser) kill(root context.Context, why string, fields ...zap.Field) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.root != root {
		return
	}
	b.cfg.Logger.Warn("killing the browser: "+why, append(fields, zap.Int("pid", b.pid))...)
	if b.pid > 0 {
		_ = syscall.Kill(b.pid, syscall.SIGKILL)
	}
	b.stopLocked()
}

// pageRun is one solve's page and what it saw.
type pageRun struct {
	job fetcher.BrowserJob
	c   *chromedp.Context
	t   cdp.Session // the page's target

	// gate ends when the wait does: no request passes the gate after.
	gate context.Context
	// end ends the wait (an interception failure ends the visit).
	end context.CancelFunc
	// failures counts the interception calls that failed (the Browser's).
	failures *atomic.Int64
	// skip are the kinds refused; hosts the site's (see fetcher.BrowserJob).
	skip, hosts []string
	// loaded counts a request let through in the Browser's counter.
	loaded func(kind string)
	// gating lets one request at a time wait at the gate.
	gating sync.Mutex

	mu      sync.Mutex
	res     fetcher.BrowserResult
	paused  int       // requests paused at the interception, not answered yet
	active  time.Time // the last request paused or answered
	pages   int       // page answers seen
	cleared bool      // the last page answer was not the challenge
	failed  error     // the first interception failure: the visit's end
	stuck   bool      // a request that could not be answered may be paused
	// had is the Clearance cookie's value among the job's cookies ("" for
	// none): CookieSuffices waits for another one.
	had string
}

// start subscribes to the interception events, answered over loop (not
// cancelled by the solve's end), sets the identity and cookies, and opens
// the page.
func (p *pageRun) start(loop, ctx context.Context) error {
	paused := cdp.Events(loop, p.t, fetch.RequestPaused)
	auth := cdp.Events(loop, p.t, fetch.AuthRequired)
	go p.intercept(loop, paused)
	go p.answerAuth(loop, auth)
	t := p.t
	lang := p.job.AcceptLanguage
	if lang == fetcher.DefaultAcceptLanguage {
		lang = "" // the browser's own (--accept-lang), sent in its place
	}
	if _, err := cdp.Call(ctx, t, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
		UserAgent: p.job.UserAgent, AcceptLanguage: lang, UserAgentMetadata: uaMetadata(p.job.UserAgent)}); err != nil {
		return fmt.Errorf("set user agent: %w", err)
	}
	if err := p.setCookies(ctx); err != nil {
		return err
	}
	patterns := []*fetch.RequestPattern{{URLPattern: "*"}, {URLPattern: "*", RequestStage: fetch.RequestStageResponse}}
	yes := true
	if _, err := cdp.Call(ctx, t, fetch.Enable, fetch.EnableParams{Patterns: patterns, HandleAuthRequests: &yes}); err != nil {
		return fmt.Errorf("intercept requests: %w", err)
	}
	nav, err := cdp.Call(ctx, t, page.Navigate, page.NavigateParams{URL: p.job.URL})
	if err == nil && nav.ErrorText != "" {
		err = errors.New(nav.ErrorText)
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", p.job.URL, err)
	}
	return nil
}

// setCookies loads the session's cookies into the browser context, one
// by one: a cookie the browser refuses (a __Secure- cookie on an http
// page) is left out, as the browser would have refused it from the site.
func (p *pageRun) setCookies(ctx context.Context) error {
	u, err := url.Parse(p.job.URL)
	if err != nil {
		return fmt.Errorf("load cookies: %w", err)
	}
	origin := u.Scheme + "://" + u.Host + "/"
	for _, c := range p.job.Cookies {
		secure := strings.HasPrefix(c.Name, "__Secure-") || strings.HasPrefix(c.Name, "__Host-")
		_, err := cdp.Call(ctx, p.t, network.SetCookies, network.SetCookiesParams{Cookies: []*network.CookieParam{
			{Name: c.Name, Value: c.Value, URL: origin, Secure: secure}}})
		var refused *cdproto.Error // the browser's answer: it refused the cookie
		if err != nil && !errors.As(err, &refused) {
			return fmt.Errorf("load cookie %s: %w", c.Name, err)
		}
	}
	return nil
}

// wait polls until the challenge has cleared: the clearance cookie is
// there (if named) and the last page answer was not the challenge.
func (p *pageRun) wait(ctx context.Context) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			p.mu.Lock()
			st := p.res.Status
			p.mu.Unlock()
			return fmt.Errorf("%w: %s within the timeout (last page status %d): %w", fetcher.ErrNotCleared, p.job.URL, st, ctx.Err())
		case <-tick.C:
		}
		if p.clearedNow(ctx) {
			return nil
		}
	}
}

// clearedNow checks the page's state and the clearance cookie once: the
// cookie is there and the last page answer was not the challenge, or,
// with CookieSuffices, a new cookie is there after the first page answer.
func (p *pageRun) clearedNow(ctx context.Context) bool {
	p.mu.Lock()
	pages, cleared := p.pages, p.cleared
	p.mu.Unlock()
	suffices := p.job.CookieSuffices && p.job.Clearance != ""
	if pages == 0 || !cleared && !suffices {
		return false
	}
	if p.job.Clearance == "" {
		return true
	}
	cookies, err := p.cookies(ctx)
	if err != nil {
		return false
	}
	for _, c := range cookies {
		if c.Name == p.job.Clearance && (cleared || c.Value != p.had) {
			return true
		}
	}
	return false
}

// cookies reads every cookie of the browser context.
func (p *pageRun) cookies(ctx context.Context) ([]*http.Cookie, error) {
	res, err := cdp.Call(ctx, p.c.Browser, storage.GetCookies, storage.GetCookiesParams{BrowserContextID: p.c.BrowserContextID})
	if err != nil {
		return nil, fmt.Errorf("read cookies: %w", err)
	}
	out := make([]*http.Cookie, 0, len(res.Cookies))
	for _, c := range res.Cookies {
		hc := &http.Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Secure: c.Secure, HttpOnly: c.HTTPOnly}
		if !c.Session && c.Expires > 0 {
			hc.Expires = time.Unix(int64(c.Expires), 0)
		}
		out = append(out, hc)
	}
	return out, nil
}

// checkAlive kills a browser that does not answer after a failed solve,
// so the next Solve starts a new one.
func (b *Browser) checkAlive(root context.Context) {
	ctx, cancel := context.WithTimeout(root, 5*time.Second)
	defer cancel()
	if _, err := cdp.Call(ctx, chromedp.FromContext(root).Browser, target.GetTargets, target.GetTargetsParams{}); err == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.root == root {
		b.cfg.Logger.Warn("browser does not answer; killing it", zap.Int("pid", b.pid))
		b.stopLocked()
	}
}
