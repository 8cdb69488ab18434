package browser

import (
	"context"
	"crawlq/fetcher"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
)

// ErrInterception means a request paused at the page's interception could
// not be answered (let through, answered here, refused, or given the
// proxy's credentials): the visit ends with the reason and its page is
// closed. When the request could not be refused either, and so may still
// be paused, the browser is killed: Chromium would let it go unpaced when
// the page closed.
var ErrInterception = errors.New("browser interception failed")

// answerTimeout bounds one answer to a paused request.
const answerTimeout = 5 * time.Second

// intercept lets each request a page makes go out as a browser's would,
// through the session's proxy: one to the site (fetcher.BrowserJob.SiteHosts) once the
// session's gate opens, one to another host (a CDN) at once; the kinds
// the browser skips (Config.Skip, fetcher.BrowserJob.Skip) are refused without reaching
// the network. It judges page answers and notes the site's answers.
// Every paused request is answered, over loop: one left paused would be
// let go by Chromium when the target closes.
func (p *pageRun) intercept(loop context.Context, events iter.Seq2[fetch.EventRequestPaused, error]) {
	for ev, err := range events {
		if err != nil {
			if loop.Err() == nil { // the requests paused from now on go unanswered
				p.fail(fmt.Errorf("%w: %w", ErrInterception, err))
				p.stick()
			}
			return
		}
		p.hold(1)
		kind := Kind(ev.ResourceType)
		switch {
		case ev.ResponseStatusCode != 0 || ev.ResponseErrorReason != "":
			p.answered(loop, ev)
		case p.skips(kind):
			p.count(func(r *fetcher.BrowserResult) { r.Blocked++; add(&r.Skipped, kind) })
			release(p, loop, ev.RequestID, fetch.FailRequest, refusal(ev.RequestID))
		case !p.onSite(ev.Request):
			p.elsewhere(loop, ev.RequestID, kind)
		default:
			// its own goroutine: the answers the gate waits for come
			// through this loop
			go func() {
				defer p.hold(-1)
				p.pass(loop, ev.RequestID, kind)
			}()
			continue
		}
		p.hold(-1)
	}
}

// pass lets a request to the site through once the session's gate
// opens, one at a time, or answers it here when the gate has closed (the
// wait has ended).
func (p *pageRun) pass(loop context.Context, id fetch.RequestID, kind string) {
	p.gating.Lock()
	defer p.gating.Unlock()
	if p.gate.Err() != nil || p.job.Gate(p.gate) != nil {
		// Answered here, with an empty 204: the request never leaves.
		release(p, loop, id, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: id, ResponseCode: 204})
		return
	}
	p.count(func(r *fetcher.BrowserResult) { r.Requests++; add(&r.Loaded, kind) })
	p.loaded(kind)
	release(p, loop, id, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
}

// elsewhere lets a request to another host than the site's (its CDN)
// out through the proxy without the site's gate: the site's anti-bot
// counts the site's host, and a CDN serves every visitor's page its
// scripts. Once the wait has ended it is answered here.
func (p *pageRun) elsewhere(loop context.Context, id fetch.RequestID, kind string) {
	if p.gate.Err() != nil {
		release(p, loop, id, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: id, ResponseCode: 204})
		return
	}
	p.count(func(r *fetcher.BrowserResult) { r.Elsewhere++; add(&r.Loaded, kind) })
	p.loaded(kind)
	release(p, loop, id, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
}

// Kind is a request's kind as the browser names its resource type, in
// lower case: document, script, stylesheet, xhr, fetch, image, font,
// media, ping, other, ...
func Kind(rt network.ResourceType) string {
	if rt == "" {
		return "other"
	}
	return strings.ToLower(string(rt))
}

// add counts one of kind in *m.
func add(m *map[string]int, kind string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[kind]++
}

// skips says whether requests of kind are refused without reaching the
// network.
func (p *pageRun) skips(kind string) bool {
	return slices.Contains(p.skip, kind)
}

// onSite says whether req goes to the site (one of fetcher.BrowserJob.SiteHosts, by
// default the page's host): those pass the session's gate.
func (p *pageRun) onSite(req *network.Request) bool {
	if req == nil {
		return true
	}
	u, err := url.Parse(req.URL)
	return err != nil || slices.Contains(p.hosts, u.Host)
}

// answered notes an answer at the response stage and lets it on: an
// answer of the site ends its request's turn at the gate (fetcher.BrowserJob.Done).
func (p *pageRun) answered(loop context.Context, ev fetch.EventRequestPaused) {
	if p.job.Done != nil && p.onSite(ev.Request) {
		p.job.Done()
	}
	if ev.ResourceType == network.ResourceTypeDocument && p.onSite(ev.Request) {
		cleared := true
		var body []byte
		if p.job.Cleared != nil {
			ctx, cancel := context.WithTimeout(loop, answerTimeout)
			got, err := cdp.Call(ctx, p.t, fetch.GetResponseBody, fetch.GetResponseBodyParams{RequestID: ev.RequestID})
			cancel()
			body = got.Body
			cleared = err == nil && p.job.Cleared(int(ev.ResponseStatusCode), body) // a body not read is not judged cleared
		}
		p.mu.Lock()
		p.pages++
		p.cleared, p.res.Status, p.res.Body = cleared, int(ev.ResponseStatusCode), body
		if ev.Request != nil {
			p.res.URL = ev.Request.URL
		}
		p.mu.Unlock()
	}
	release(p, loop, ev.RequestID, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
}

// answerAuth gives the proxy its credentials; any other auth is refused.
// A request waiting for them has not passed the proxy: one whose answer
// fails ends the visit, and goes nowhere when the page closes.
func (p *pageRun) answerAuth(loop context.Context, events iter.Seq2[fetch.EventAuthRequired, error]) {
	for ev, err := range events {
		if err != nil {
			if loop.Err() == nil {
				p.fail(fmt.Errorf("%w: %w", ErrInterception, err))
			}
			return
		}
		resp := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}
		if ev.AuthChallenge != nil && ev.AuthChallenge.Source == fetch.AuthChallengeSourceProxy && p.job.Proxy.User != nil {
			pw, _ := p.job.Proxy.User.Password()
			resp = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials,
				Username: p.job.Proxy.User.Username(), Password: pw}
		}
		answer(p, loop, ev.RequestID, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID, AuthChallengeResponse: resp})
	}
}

// release answers the paused request id with c. When that fails the
// visit ends and the request is refused instead; one that cannot be
// refused either may still be paused, and sticks the page (its browser is
// killed before the page closes).
func release[P any](p *pageRun, loop context.Context, id fetch.RequestID, c cdp.Command[P, cdp.Empty], params P) {
	if answer(p, loop, id, c, params) {
		return
	}
	if c.Method == fetch.CommandFailRequest || !answer(p, loop, id, fetch.FailRequest, refusal(id)) {
		p.stick()
	}
}

// refusal refuses request id without it reaching the network.
func refusal(id fetch.RequestID) fetch.FailRequestParams {
	return fetch.FailRequestParams{RequestID: id, ErrorReason: network.ErrorReasonBlockedByClient}
}

// answer sends c to the paused request id (bounded by answerTimeout) and
// reports whether it was answered. A request its page has cancelled
// meanwhile needs no answer; after loop's end (the browser is gone, or
// the solve is over) nothing is sent any more. A failed answer ends the
// visit with the reason.
func answer[P any](p *pageRun, loop context.Context, id fetch.RequestID, c cdp.Command[P, cdp.Empty], params P) bool {
	ctx, cancel := context.WithTimeout(loop, answerTimeout)
	defer cancel()
	_, err := cdp.Call(ctx, p.t, c, params)
	if err == nil || gone(err) || loop.Err() != nil {
		return true
	}
	p.fail(fmt.Errorf("%w: %s for request %s: %w", ErrInterception, c.Method, id, err))
	return false
}

// gone says whether err is Chromium's answer about a request no longer
// paused (its page cancelled it): there is nothing left to answer.
func gone(err error) bool {
	var e *cdproto.Error
	return errors.As(err, &e) && strings.HasPrefix(e.Message, "Invalid InterceptionId")
}

// fail ends the visit with err (the first failure is its reason; the
// caller of Solve logs it) and counts the failure.
func (p *pageRun) fail(err error) {
	p.mu.Lock()
	if p.failed == nil {
		p.failed = err
	}
	p.mu.Unlock()
	p.failures.Add(1)
	p.end()
}

// stick notes a request that may still be paused: the page cannot be
// brought to rest.
func (p *pageRun) stick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stuck = true
}

// count updates the visit's result.
func (p *pageRun) count(f func(*fetcher.BrowserResult)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.res)
}

// hold counts a request paused (+1) or answered (-1).
func (p *pageRun) hold(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused += n
	p.active = time.Now()
}

// failure is the first interception failure of the visit, nil if none.
func (p *pageRun) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}
