package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/proxies"
)

// DefaultUnconfirmedHold is how long a proxy whose Suspect answer stayed
// unconfirmed cools down: it is not punished, but neither is it handed
// out at once to confirm somebody else's answer while it may be banned.
const DefaultUnconfirmedHold = 30 * time.Second

// confirmTries is how many second proxies Confirm asks at most while they
// give no answer at all (a transport failure is no second opinion).
const confirmTries = 3

// Confirmation is what asking a Suspect answer once more settled.
type Confirmation struct {
	// Decision compares the two answers (detect.Decide); with no second
	// answer at all it is Undecided.
	Decision detect.Decision
	// Second is the second proxy's step: its response (nil on a transport
	// failure or when no second proxy could be leased) and verdict. Its
	// Action is always Retired: the second lease is over.
	Second Step
	// SecondProxy is the second proxy (zero when none was leased); print
	// it with Masked.
	SecondProxy proxies.Proxy
	// Requests is how many requests the confirmation sent: one, or up to
	// confirmTries when second proxies failed in transport; none when it
	// was deferred before any, or decided by a kept answer.
	Requests int
	// Waited is how long the confirmation waited for second proxies while
	// it held this session's: at most the wait Confirm allows per try.
	Waited time.Duration
	// Deferred is set when no second proxy came free within that wait:
	// the answer is kept for the task's next attempt, whose own answer
	// from another proxy decides it; Decision is Undecided meanwhile.
	Deferred bool
	// Kept is set when the other answer was one an earlier attempt kept
	// (Deferred there): no request was sent now (but the control, if
	// any), and SecondProxy has only the ID of the proxy that gave it.
	Kept bool
	// Controls is how many controls were asked (Control: a request known
	// to have items, asked by a witness that agreed); WitnessBans how
	// many of them came back empty, each quarantining its witness as
	// soft-banned. Their requests count in Requests.
	Controls, WitnessBans int
	// Corroborated is set when, after a witness ban (here, or an earlier
	// confirmation's: Control.Unproven), a later second proxy answered the
	// same control with items: the control had items and the banned
	// witness was the soft-banned one. Unset after a ban, no proxy's
	// control came back with items (it may have lost them: the ban stays,
	// and is logged); the caller keeps the control unproven.
	Corroborated bool
	// Action is what became of this session: Continue when the answers
	// agreed (its proxy stays leased and is cleared with the job);
	// Retired otherwise: contradicted, its proxy is quarantined with the
	// rule that fired; undecided, it cools down unpunished; deferred, it
	// is released at once, unjudged.
	Action Action
}

// Confirm asks url once more, as a page of kind, from a second proxy of
// the session's class, because first (this session's answer to the same
// request) was Suspect (I7). The second proxy gets its own lease, pacing,
// cookies and profile; this session's lease is held meanwhile and counts
// no failure yet. Then both proxies are settled by detect.Decide:
//
//	Agreed       both released OK (this one when the job releases it)
//	Contradicted this proxy quarantined (soft ban), the second released OK
//	Undecided    each by its own verdict: the second by its outcome, this
//	             one neither punished nor cleared: it rests for
//	             UnconfirmedHold (proxies.Rest: nothing learned) and its
//	             stored session is dropped
//
// Confirm waits for a second proxy while it holds this one only as long
// as ConfirmWait (default: two of the site's min_intervals, by which a
// proxy another job releases meanwhile is free again), never for as long
// as other jobs' leases last: in a pool smaller than the jobs, every
// proxy can be held by a job waiting for a second one. With none free in time the confirmation is Deferred:
// first is kept for the task's next attempt and this proxy released at
// once, unjudged; that attempt asks another proxy, like any job, and its
// answer, if it agrees, confirms the kept one without a second lease
// (the first thing Confirm looks at).
//
// A second proxy whose answer agrees is a witness only when it shows it
// is not soft-banned itself (issue 36.8: two IPs soft-banned at once
// agree on an empty answer): with a ctl (a request known to have items on
// the site), it asks ctl through its own lease; items, and the agreement
// counts; the empty shape, and it is quarantined as soft-banned and
// another second proxy is asked; any other answer ends it by that answer
// and another is asked. After such a ban the next second proxy asks ctl
// too, whatever its own answer, to corroborate the ban
// (Confirmation.Corroborated: the control still has items). The same
// holds for this session when it agrees with a kept answer. With no ctl (none known) an agreement counts as it
// is.
//
// A second proxy that fails in transport gave no answer: it is released
// as failed and another one is asked, confirmTries in all (witnesses
// whose control failed count among them). A second proxy
// met by the site's JavaScript challenge is handed to clear (if not nil),
// which clears it in the second proxy's session (a browser through that
// proxy) and reports whether it did; the request is then asked again.
// An error means the request was cancelled or Redis failed; this
// session's lease is still held then.
func (s *Session) Confirm(ctx context.Context, f *fetcher.Fetcher, d *detect.Detector, kind, url string, page int, first Step, ctl Control, clear Clearer) (Confirmation, error) {
	if err := s.usable(); err != nil {
		return Confirmation{}, err
	}
	if c, ok, err := s.agreesWithKept(ctx, f, d, url, page, first, ctl, clear); ok || err != nil {
		return c, err
	}
	var c Confirmation
	for range confirmTries {
		second, waited, err := s.m.second(ctx, s.rec, s.confirmWait())
		c.Waited += waited
		if errors.Is(err, errNoSecond) {
			return s.deferTo(ctx, c, url, page, first)
		}
		if err != nil {
			return c, err
		}
		if _, err := second.LoadClearance(ctx); err != nil { // a site's challenge: its proxy's clearance, if kept
			_ = second.release(ctx, proxies.Neutral())
			return Confirmation{}, err
		}
		step, asked, err := second.askClearing(ctx, f, d, kind, url, page, clear)
		if err != nil {
			_ = second.release(ctx, proxies.Neutral())
			return Confirmation{}, err
		}
		c = Confirmation{Decision: detect.Decide(first.Verdict, step.Verdict), Second: step,
			SecondProxy: second.Lease().Proxy, Requests: c.Requests + asked, Waited: c.Waited,
			Controls: c.Controls, WitnessBans: c.WitnessBans, Corroborated: c.Corroborated}
		switch {
		case c.Decision == detect.Agreed && !ctl.none():
			if ok, err := second.witnessed(ctx, &c, f, d, ctl, clear); err != nil || !ok {
				if err != nil {
					return Confirmation{}, err
				}
				continue // no second opinion: ended by its control's answer; ask another
			}
		case (c.WitnessBans > 0 || ctl.Unproven) && !c.Corroborated && step.Verdict.Kind != detect.ProxyFailure:
			if err := second.corroborate(ctx, &c, f, d, ctl, clear); err != nil {
				return Confirmation{}, err
			}
		}
		if step.Verdict.Kind != detect.ProxyFailure {
			return s.settle(ctx, c, first, second)
		}
		if err := second.release(ctx, Outcome(step.Verdict, 0)); err != nil {
			return c, err
		}
	}
	return s.undecided(ctx, c)
}

// settle releases both proxies as the decision says.
func (s *Session) settle(ctx context.Context, c Confirmation, first Step, second *Session) (Confirmation, error) {
	latency := latencyOf(c.Second.Response)
	switch c.Decision {
	case detect.Agreed:
		c.Action = Continue
		return c, second.release(ctx, proxies.OK(latency))
	case detect.Contradicted:
		c.Action = Retired
		v := first.Verdict
		err := s.end(ctx, proxies.Banned(fmt.Sprintf("soft ban: %s (a second proxy had it)", v.Rule)), true)
		if rerr := second.release(ctx, proxies.OK(latency)); err == nil {
			err = rerr
		}
		return c, err
	}
	if err := second.release(ctx, Outcome(c.Second.Verdict, latency)); err != nil {
		return c, err
	}
	return s.undecided(ctx, c)
}

// undecided ends this session without judgement: its proxy rests for
// UnconfirmedHold (no failure, no ban, and not a 429: the site's learned
// pace takes nothing from it) and the stored session is dropped, so a
// retry asks another proxy.
func (s *Session) undecided(ctx context.Context, c Confirmation) (Confirmation, error) {
	c.Decision, c.Action = detect.Undecided, Retired
	return c, s.end(ctx, proxies.Rest(s.m.cfg.UnconfirmedHold), true)
}

// errNoSecond means no second proxy came free within a confirmation's
// wait.
var errNoSecond = errors.New("no second proxy free")

// confirmWait is how long Confirm waits for a second proxy while it holds
// this session's: Config.ConfirmWait, else two of the site's
// min_intervals (a proxy another job releases within one is free again
// by then).
func (s *Session) confirmWait() time.Duration {
	if w := s.m.cfg.ConfirmWait; w > 0 {
		return w
	}
	return 2 * max(s.Lease().MinInterval, 0)
}

// second leases a second proxy of rec's class for rec's site, for one
// request, waiting at most wait for one to come free (errNoSecond when
// none did), and says how long it waited: this session's own proxy is
// leased, so it is never picked (I1); like any lease of the site it
// takes a proxy holding the site's clearance first. Its session is never
// stored.
func (m *Manager) second(ctx context.Context, rec *record, wait time.Duration) (*Session, time.Duration, error) {
	task := rec.Task + "/confirm"
	start := time.Now()
	l, err := m.leaseWithin(ctx, rec.Site, rec.Class, task, wait)
	waited := time.Since(start)
	if err != nil {
		return nil, waited, err
	}
	s := newSession(m, m.newRecord(task, rec.Site, rec.Class, l), l, false)
	s.callerStores = true // never written: it lives for one request
	if err := s.claimExit(ctx); err != nil {
		return nil, time.Since(start), errors.Join(err, m.startFailed(ctx, task, l, err))
	}
	s.keepAlive()
	return s, waited, nil
}

// leaseWithin leases a proxy of class for site for task, waiting at most
// wait (0: one try) for one to come free; errNoSecond when none did.
func (m *Manager) leaseWithin(ctx context.Context, site string, class proxies.Class, task string, wait time.Duration) (*proxies.Lease, error) {
	var l *proxies.Lease
	var err error
	if wait <= 0 {
		l, err = m.cfg.Broker.Lease(ctx, m.leaseRequest(site, class, task))
	} else {
		wctx, cancel := context.WithTimeout(ctx, wait)
		l, err = m.cfg.Broker.LeaseWait(wctx, m.leaseRequest(site, class, task))
		cancel()
	}
	switch {
	case err == nil:
		return l, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, proxies.ErrNoProxy), errors.Is(err, proxies.ErrPoolExhausted), errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("%w within %s: %w", errNoSecond, wait, err)
	}
	return nil, fmt.Errorf("lease a second %s proxy for %s: %w", class, site, err)
}

// Clearer clears a site's JavaScript challenge that url met in session s
// (a browser through s's proxy, with s's identity; its cookies go into
// s) and reports whether it cleared.
type Clearer func(ctx context.Context, s *Session, url string) (bool, error)

// askClearing asks as ask does and, when the answer is the site's
// challenge and clear clears it, asks once more. It returns the last step
// and how many requests it sent.
func (s *Session) askClearing(ctx context.Context, f *fetcher.Fetcher, d *detect.Detector, kind, url string, page int, clear Clearer) (Step, int, error) {
	step, err := s.ask(ctx, f, d, kind, url, page)
	if err != nil || step.Verdict.Kind != detect.Challenge || clear == nil {
		return step, 1, err
	}
	ok, err := clear(ctx, s, url)
	if err != nil || !ok {
		return step, 1, err
	}
	step, err = s.ask(ctx, f, d, kind, url, page)
	return step, 2, err
}

// ask sends one paced, judged request through a second proxy; it records
// nothing.
func (s *Session) ask(ctx context.Context, f *fetcher.Fetcher, d *detect.Detector, kind, url string, page int) (Step, error) {
	resp, v, err := s.fetch(ctx, f, d, kind, url, page)
	if err != nil {
		return Step{}, err
	}
	s.mu.Lock()
	s.lastDone = time.Now()
	s.mu.Unlock()
	return Step{Response: resp, Verdict: v, Action: Retired}, nil
}

// release ends a lease with o and stores nothing. A failure is logged
// with the task and counted (Manager.ReleaseErrors), so a caller that has
// another error to return may leave it.
func (s *Session) release(ctx context.Context, o proxies.Outcome) error {
	if !s.shut() {
		return nil
	}
	l := s.Lease()
	return s.m.release(ctx, s.rec.Task, &l, o)
}
