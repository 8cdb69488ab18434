package sessions

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"crawlq/proxies"
)

// ErrModemRotating means the session's modem is changing its exit IP (a
// ban, or the site's rotate_after), so the session ended: its cookies and
// clearance were the old IP's. The job goes on through a new session.
var ErrModemRotating = errors.New("the modem is changing its exit IP")

// EndedError is a session that ended itself before it sent a request
// (Err says why: ErrModemRotating). Nobody is to blame: the job goes on
// through a new session, on another proxy, RetryAfter later.
type EndedError struct{ Err error }

func (e *EndedError) Error() string { return "session ended before its request: " + e.Err.Error() }

// Unwrap returns why the session ended.
func (e *EndedError) Unwrap() error { return e.Err }

// RetryAfter is how soon the job may go on through a new session.
func (e *EndedError) RetryAfter() time.Duration { return time.Second }

// ModemCounts are a manager's rotation figures since it was built.
type ModemCounts struct {
	// Rotations counts the rotations the manager's Rotator ran to a new
	// IP, Failed those that got none (the modem was quarantined instead),
	// Refused the change calls the provider refused (429), Ended the
	// sessions ended because their modem was rotating.
	Rotations, Failed, Refused, Ended int64
}

// ModemCounts reports the manager's rotation figures.
func (m *Manager) ModemCounts() ModemCounts {
	c := ModemCounts{Ended: m.modemEnded.Load()}
	if m.cfg.Rotator != nil {
		c.Rotations, c.Failed, c.Refused = m.cfg.Rotator.Counts()
	}
	return c
}

// modemGate counts a request about to be sent through a modem (admit):
// while the modem rotates, or when the site's rotate_after or
// rotate_every says its IP has sent enough, the session ends (the latter
// starting the rotation) and the request is not sent.
func (s *Session) modemGate(ctx context.Context) error {
	p := s.Lease().Proxy
	if p.Modem == nil || s.m.cfg.Rotator == nil {
		return nil
	}
	a, err := s.m.cfg.Rotator.cfg.Rotations.ModemSend(ctx, p, s.rec.Site, s.ExitIP())
	if err != nil || a == proxies.ModemSendOK {
		return err
	}
	s.m.modemEnded.Add(1)
	if a == proxies.ModemRotateFirst {
		s.mu.Lock()
		s.rotateWhy = "rotate_after"
		s.mu.Unlock()
	}
	return &EndedError{Err: errors.Join(ErrModemRotating, s.end(ctx, proxies.Neutral(), true))}
}

// rotates says whether the session's end starts its modem's rotation: a
// ban, or its rotate_after.
func (s *Session) rotates(o proxies.Outcome) (string, bool) {
	if s.Lease().Proxy.Modem == nil || s.m.cfg.Rotator == nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o.Kind == proxies.OutcomeBanned {
		return "ban", true
	}
	return s.rotateWhy, s.rotateWhy != ""
}

// rotate ends lease l of a modem by starting the modem's rotation
// (Config.Rotator, run in the background, so the job goes on at once with
// a new session). A rotation that cannot start releases the lease with
// o, as before modems (a ban quarantines).
func (m *Manager) rotate(ctx context.Context, task string, l *proxies.Lease, o proxies.Outcome, old, why string) error {
	if why == "ban" {
		if err := m.cfg.Rotator.cfg.Rotations.ModemBanned(ctx, l.Proxy, l.Site, old); err != nil {
			m.cfg.Logger.Warn("modem ban not learned from", zap.String("proxy", l.Proxy.ID), zap.Error(err))
		}
	}
	err := m.cfg.Rotator.Begin(ctx, l, old, why)
	if err == nil {
		return nil
	}
	m.cfg.Logger.Warn("modem rotation did not start", zap.String("task", task), zap.String("proxy", l.Proxy.ID), zap.Error(err))
	return m.release(ctx, task, l, o)
}

// startFailed gives back the lease of a session whose exit could not be
// claimed. A modem that came back on an exit IP quarantined for the site
// rotates again (carriers hand IPs out again); anything else is released
// as exitFailure says.
func (m *Manager) startFailed(ctx context.Context, task string, l *proxies.Lease, err error) error {
	var refused *proxies.ExitRefusedError
	if l.Proxy.Modem != nil && m.cfg.Rotator != nil && errors.As(err, &refused) && refused.Quarantined {
		return m.rotate(ctx, task, l, proxies.Neutral(), refused.IP, "banned IP")
	}
	return m.release(ctx, task, l, exitFailure(err))
}
