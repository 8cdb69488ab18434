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
// was free in time): the job retries and asks again.
var ErrUnconfirmed = errors.New("suspect answer not confirmed")

// unconfirmedRetry is how soon a job whose Suspect answer stayed
// unconfirmed runs again.
const unconfirmedRetry = 5 * time.Second

// deferredRetry is how soon a job whose confirmation was deferred (no
// second proxy free in time) runs again, handed back (no retry used):
// its next attempt's answer, from another proxy, decides the kept one.
const deferredRetry = time.Second

// ConfirmStats is one confirmation of a Suspect answer, for
// HandlerConfig.OnConfirm.
type ConfirmStats struct {
	Site string
	// Decision compares the two answers; Undecided when Deferred.
	Decision detect.Decision
	// Requests is the extra requests it sent: one, more when second
	// proxies failed in transport, none when it was deferred or decided
	// by an answer an earlier attempt kept.
	Requests int
	// Waited is how long it waited for a second proxy while it held the
	// job's (sessions.Confirmation.Waited).
	Waited time.Duration
	// Deferred: no second proxy was free in time; the answer is kept for
	// the job's next attempt. Kept: decided by such an answer.
	Deferred, Kept bool
	// Controls is how many controls its witnesses asked (one per
	// agreement, on a site with a control); WitnessBans how many came
	// back empty, their witnesses quarantined as soft-banned
	// (sessions.Confirmation).
	Controls, WitnessBans int
	// Corroborated: after a witness ban, a later second proxy answered
	// the same control with items (sessions.Confirmation.Corroborated).
	Corroborated bool
}

// confirm asks a Suspect answer once more from a second proxy (I7) and
// acts on what the two answers say: agreed, the answer is true (no
// results: the page is written with no items and the job ends; a gone
// item: NotFound); contradicted, the first proxy is quarantined and the
// second answer is used; undecided or deferred, the job retries. A
// second proxy that agrees counts only once it has answered the site's
// control with items (control.go, sessions.Control): two IPs soft-banned
// at once agree on the empty shape.
func (r *run) confirm(ctx context.Context, url string, page int, first sessions.Step) (bool, error) {
	ctl, err := r.control(ctx, url)
	if err != nil {
		return false, err
	}
	c, err := r.sess.Confirm(ctx, r.h.cfg.Fetcher, r.det, r.detectKind(), url, page, first, ctl, r.clearWitness)
	if err != nil {
		return false, err
	}
	if err := r.settleControl(ctx, ctl, c); err != nil {
		r.log.Warn("control not kept", zap.Error(err)) // the sessions are settled: the answer stands
	}
	r.noteConfirm(c, first.Verdict)
	if c.Deferred {
		r.sess = nil // released unjudged; the next attempt asks another proxy
		return false, handBack(deferredRetry, fmt.Errorf("%w: %s; no second proxy free within %s: the next attempt's answer decides",
			ErrUnconfirmed, first.Verdict, c.Waited.Round(time.Millisecond)))
	}
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

// clearWitness clears, in the browser (or with the site's own Solve over
// HTTP), the challenge a confirmation's second proxy met
// (sessions.Clearer), when this worker can and the site's policy lets
// it: a second proxy is drawn for its independence, not for a clearance
// (proxies.Independent), so it often has none. Its clearance is kept for the proxy's next sessions. A visit
// that fails leaves the second answer the challenge: undecided.
func (r *run) clearWitness(ctx context.Context, w *sessions.Session, url string) (bool, error) {
	s, err := r.h.cfg.Sites.Get(r.job.Site)
	if err != nil || r.cannotClear(s) != "" {
		return false, nil
	}
	if solvesHere(s) { // over HTTP, in the witness's session
		return r.clearHere(ctx, w, s) == nil, ctx.Err()
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
// follow-ups and no next page). A redirect stub is followed; an answer
// the parser does not recognize (a wall, an unknown JSON) fails the
// job, its copy kept: it is never stored as "no results", however many
// proxies agree.
func (r *run) confirmed(ctx context.Context, page int, first sessions.Step) (bool, error) {
	v := first.Verdict
	if v.IfConfirmed == detect.NotFound {
		first.Verdict = detect.Verdict{Kind: detect.NotFound, Reason: "confirmed " + v.Reason, Rule: v.Rule, Status: v.Status}
		return r.verdict(ctx, page, first)
	}
	p, err := r.parse(first)
	if err != nil {
		return r.unparsed(ctx, page, first, err, true)
	}
	if len(p.Items) == 0 {
		p = site.Page{}
	}
	return r.write(ctx, page, p)
}

// noteConfirm counts a confirmation (and the second answer, if one was
// asked), tells OnConfirm and logs it.
func (r *run) noteConfirm(c sessions.Confirmation, first detect.Verdict) {
	if c.Requests > 0 {
		r.observe(c.Second)
	}
	if c.Deferred {
		r.sum.Deferred++
	} else {
		r.sum.Confirmations++
	}
	if r.h.cfg.OnConfirm != nil {
		r.h.cfg.OnConfirm(ConfirmStats{Site: r.job.Site, Decision: c.Decision, Requests: c.Requests,
			Waited: c.Waited, Deferred: c.Deferred, Kept: c.Kept, Controls: c.Controls, WitnessBans: c.WitnessBans,
			Corroborated: c.Corroborated})
	}
	r.logConfirm(c, first)
}

// logConfirm logs the job's first confirmation at info, later ones (other
// pages, other attempts' are logged by those) at debug.
func (r *run) logConfirm(c sessions.Confirmation, first detect.Verdict) {
	log := r.log.Debug
	if r.sum.Confirmations+r.sum.Deferred == 1 {
		log = r.log.Info
	}
	log("suspect answer asked again from a second proxy",
		zap.String("decision", c.Decision.String()), zap.String("rule", first.Rule),
		zap.String("proxy", r.sum.ProxyID), zap.String("second_proxy", c.SecondProxy.ID),
		zap.Stringer("second_verdict", c.Second.Verdict), zap.Duration("waited", c.Waited),
		zap.Bool("deferred", c.Deferred), zap.Bool("kept", c.Kept),
		zap.Int("controls", c.Controls), zap.Int("witness_bans", c.WitnessBans), zap.Bool("corroborated", c.Corroborated))
}
