package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"crawlq/detect"
	"crawlq/sessions"
	"crawlq/tasks/site"
)

// ErrUnconfirmed means a Suspect answer could be neither confirmed nor
// contradicted by a second proxy (it failed, was blocked itself, or none
// was free): the job retries and asks again.
var ErrUnconfirmed = errors.New("suspect answer not confirmed")

// unconfirmedRetry is how soon a job whose Suspect answer stayed
// unconfirmed runs again.
const unconfirmedRetry = 5 * time.Second

// confirm asks a Suspect answer once more from a second proxy (I7) and
// acts on what the two answers say: agreed, the answer is true (no
// results: the page is written with no items and the job ends; a gone
// item: NotFound); contradicted, the first proxy is quarantined and the
// second answer is used; undecided, the job retries.
func (r *run) confirm(ctx context.Context, url string, page int, first sessions.Step) (bool, error) {
	c, err := r.sess.Confirm(ctx, r.h.cfg.Fetcher, r.det, r.detectKind(), url, page, first, r.clearWitness)
	if err != nil {
		return false, err
	}
	r.observe(c.Second)
	r.sum.Confirmations++
	if r.h.cfg.OnConfirm != nil && c.Requests > 0 {
		r.h.cfg.OnConfirm(r.job.Site, c.Decision, c.Requests)
	}
	r.logConfirm(c, first.Verdict)
	switch c.Decision {
	case detect.Agreed:
		return r.confirmed(ctx, page, first)
	case detect.Contradicted:
		r.sess = nil // quarantined; a next page opens a new session
		r.sum.SoftBans++
		r.sum.ProxyID, r.sum.Proxy = c.SecondProxy.ID, c.SecondProxy.Masked()
		return r.verdict(ctx, page, c.Second)
	}
	r.sess = nil // cooling unpunished; a retry starts a new session
	return false, retryAfter(unconfirmedRetry, fmt.Errorf("%w: %s; second proxy %s: %s",
		ErrUnconfirmed, first.Verdict, c.SecondProxy.ID, c.Second.Verdict))
}

// clearWitness clears, in the browser, the challenge a confirmation's
// second proxy met (sessions.Clearer), when this worker has a browser and
// the site's policy lets it: a second proxy is drawn for its
// independence, not for a clearance (proxies.Independent), so it often
// has none. Its clearance is kept for the proxy's next sessions. A visit
// that fails leaves the second answer the challenge: undecided.
func (r *run) clearWitness(ctx context.Context, w *sessions.Session, url string) (bool, error) {
	s, err := r.h.cfg.Sites.Get(r.job.Site)
	if err != nil || r.noBrowser(s) != "" {
		return false, nil
	}
	res, err := r.solveIn(ctx, w, s, url, false, true)
	if err != nil {
		return false, ctx.Err()
	}
	r.keepClearance(ctx, w, s, res)
	return true, nil
}

// confirmed takes a Suspect answer two proxies agreed on as the true
// answer: NotFound for a gone item; otherwise the page as it is, when it
// is the site's own (a well-formed page with no results has no items, no
// follow-ups and no next page). An answer the parser does not recognize
// (a wall, a stub, an unknown JSON) fails the job, its copy kept: it is
// never stored as "no results", however many proxies agree.
func (r *run) confirmed(ctx context.Context, page int, first sessions.Step) (bool, error) {
	v := first.Verdict
	if v.IfConfirmed == detect.NotFound {
		first.Verdict = detect.Verdict{Kind: detect.NotFound, Reason: "confirmed " + v.Reason, Rule: v.Rule, Status: v.Status}
		return r.verdict(ctx, page, first)
	}
	p, err := r.parse(first)
	if err != nil {
		return false, r.unknownShape(ctx, first, err, true)
	}
	if len(p.Items) == 0 {
		p = site.Page{}
	}
	return r.write(ctx, page, p)
}

// logConfirm logs the job's first confirmation at info, later ones (other
// pages, other attempts' are logged by those) at debug.
func (r *run) logConfirm(c sessions.Confirmation, first detect.Verdict) {
	log := r.log.Debug
	if r.sum.Confirmations == 1 {
		log = r.log.Info
	}
	log("suspect answer asked again from a second proxy",
		zap.String("decision", c.Decision.String()), zap.String("rule", first.Rule),
		zap.String("proxy", r.sum.ProxyID), zap.String("second_proxy", c.SecondProxy.ID),
		zap.Stringer("second_verdict", c.Second.Verdict))
}
