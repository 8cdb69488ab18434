package sessions

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/proxies"
)

// Control is a request known to have items on a site: a page of it that
// a recent answer had items on. A confirmation's witness asks it after
// agreeing with an empty answer, to show that its own answer counts: an
// IP the site soft-bans gets the empty shape for it too (issue 36.8).
// The zero Control is none: the agreement counts as it is.
type Control struct {
	// Kind is the page kind the detector judges the answer as.
	Kind string
	// URL and Page are the request.
	URL  string
	Page int
	// Unproven says a witness was quarantined for this control's empty
	// answer and no proxy has answered it with items since: every second
	// proxy of a confirmation asks it (corroborate), whatever its own
	// answer, until one has its items.
	Unproven bool
}

// none says there is no control to ask.
func (c Control) none() bool { return c.URL == "" }

// witnessed asks ctl through this session, a witness whose answer agreed
// with an empty one, and says whether its agreement counts: the control
// had items. It counts the control in c. When it does not count, the
// session is over: quarantined when the control came back empty (a
// soft-banned IP), else ended with the control's outcome. On an error
// (cancelled, Redis) it is released unjudged.
func (s *Session) witnessed(ctx context.Context, c *Confirmation, f *fetcher.Fetcher, d *detect.Detector, ctl Control, clear Clearer) (bool, error) {
	ok, banned, n, err := s.vouch(ctx, f, d, ctl, clear)
	c.Requests += n
	c.Controls++
	if banned {
		c.WitnessBans++
	}
	if ok && (c.WitnessBans > 0 || ctl.Unproven) {
		c.Corroborated = true // the control a witness failed has items
	}
	if err != nil {
		_ = s.release(ctx, proxies.Neutral())
	}
	return ok, err
}

// vouch asks ctl through this session (a witness that agreed with an
// empty answer, or the later attempt agreeing with a kept one) and says
// whether the answer had items (detect.OK): then the session's own empty
// answer counts, and the session goes on. A control that came back with
// the site's empty shape (Suspect) shows the IP soft-banned (banned): the
// session ends quarantined. Any other answer (blocked, rate-limited, a
// transport failure, a challenge not cleared) proves nothing: the
// session ends with that answer's outcome. n is how many requests it
// sent. On an error the session is still open.
func (s *Session) vouch(ctx context.Context, f *fetcher.Fetcher, d *detect.Detector, ctl Control, clear Clearer) (ok, banned bool, n int, err error) {
	step, n, err := s.askClearing(ctx, f, d, ctl.Kind, ctl.URL, ctl.Page, clear)
	if err != nil {
		return false, false, n, err
	}
	v := step.Verdict
	switch v.Kind {
	case detect.OK:
		return true, false, n, nil
	case detect.Suspect:
		return false, true, n, s.end(ctx, proxies.Banned(fmt.Sprintf("soft ban: a control with items came back empty (%s)", v.Rule)), true)
	}
	return false, false, n, s.end(ctx, Outcome(v, latencyOf(step.Response)), true)
}

// corroborate asks ctl through this session, a second proxy asked after
// an earlier one's control came back empty (a witness ban, in this
// confirmation or an earlier one: ctl.Unproven), whatever this one's own
// answer: items corroborate that ban (c.Corroborated). An
// answer without items is logged (the control may have lost its items,
// and the ban with it may have been wrong) and changes nothing: this
// session is settled by its own answer. On an error it is released
// unjudged.
func (s *Session) corroborate(ctx context.Context, c *Confirmation, f *fetcher.Fetcher, d *detect.Detector, ctl Control, clear Clearer) error {
	step, n, err := s.askClearing(ctx, f, d, ctl.Kind, ctl.URL, ctl.Page, clear)
	c.Requests += n
	c.Controls++
	if err != nil {
		_ = s.release(ctx, proxies.Neutral())
		return err
	}
	c.Corroborated = step.Verdict.Kind == detect.OK
	if !c.Corroborated {
		s.m.cfg.Logger.Warn("a control that banned a witness has no items from the next one either",
			zap.String("task", s.rec.Task), zap.String("site", s.rec.Site), zap.String("control", ctl.URL),
			zap.Stringer("verdict", step.Verdict))
	}
	return nil
}
