package sessions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"crawlq/internal/backoff"
	"crawlq/internal/mask"
	"crawlq/proxies"
)

// ErrModemRotating means the session's modem is changing its exit IP (a
// ban, or the site's rotate_after), so the session ended: its cookies and
// clearance were the old IP's. The job goes on through a new session.
var ErrModemRotating = errors.New("the modem is changing its exit IP")

// ModemCounts are a manager's rotation figures since it was built.
type ModemCounts struct {
	// Rotations counts the rotations this worker ran to a new IP, Failed
	// those that got none (the modem was quarantined instead), Refused
	// the change calls the provider refused (429), Ended the sessions
	// ended because their modem was rotating.
	Rotations, Failed, Refused, Ended int64
}

// ModemCounts reports the manager's rotation figures.
func (m *Manager) ModemCounts() ModemCounts {
	return ModemCounts{Rotations: m.rotations.Load(), Failed: m.rotationFails.Load(),
		Refused: m.changeRefusals.Load(), Ended: m.modemEnded.Load()}
}

// modemGate is asked before each request through a modem: while the
// modem rotates, or when the site's rotate_after or rotate_every says its
// IP has sent enough, the session ends (the latter starting the
// rotation) and the request is not sent.
func (s *Session) modemGate(ctx context.Context) error {
	p := s.Lease().Proxy
	if p.Modem == nil || s.m.cfg.Caps.Rotations == nil {
		return nil
	}
	a, err := s.m.cfg.Caps.Rotations.ModemSend(ctx, p, s.rec.Site, s.ExitIP())
	if err != nil || a == proxies.ModemSendOK {
		return err
	}
	s.m.modemEnded.Add(1)
	if a == proxies.ModemRotateFirst {
		s.mu.Lock()
		s.rotateWhy = "rotate_after"
		s.mu.Unlock()
	}
	return errors.Join(ErrModemRotating, s.end(ctx, proxies.Neutral(), true))
}

// rotates says whether the session's end starts its modem's rotation: a
// ban, or its rotate_after.
func (s *Session) rotates(o proxies.Outcome) (string, bool) {
	if s.Lease().Proxy.Modem == nil || s.m.cfg.Caps.Rotations == nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o.Kind == proxies.OutcomeBanned {
		return "ban", true
	}
	return s.rotateWhy, s.rotateWhy != ""
}

// rotate ends lease l of a modem by starting the modem's rotation (run in
// the background, so the job goes on at once with a new session). A
// rotation already going, or a lease no longer live, needs nothing more;
// a rotation that cannot start releases the lease with o, as before
// modems (a ban quarantines).
func (m *Manager) rotate(ctx context.Context, task string, l *proxies.Lease, o proxies.Outcome, old, why string) error {
	began := time.Now()
	r, err := m.cfg.Caps.Rotations.BeginRotation(ctx, l, m.cfg.LeaseTTL)
	switch {
	case errors.Is(err, proxies.ErrRotationBusy) || errors.Is(err, proxies.ErrStaleLease):
		return nil
	case err != nil:
		m.cfg.Logger.Warn("modem rotation did not start", zap.String("task", task), zap.String("proxy", l.Proxy.ID), zap.Error(err))
		return m.release(ctx, task, l, o)
	}
	m.cfg.Logger.Info("modem rotating", zap.String("proxy", l.Proxy.ID), zap.String("site", l.Site),
		zap.String("old_ip", old), zap.String("why", why))
	m.rotating.Add(1)
	go m.runRotation(r, old, began)
	return nil
}

// runRotation changes the modem's IP and ends the rotation: done with the
// new IP, or failed (quarantined). A worker shutting down leaves it: its
// mark frees the modem within the lease TTL.
func (m *Manager) runRotation(r *proxies.Rotation, old string, began time.Time) {
	defer m.rotating.Done()
	ctx, cancel := context.WithCancel(m.bg)
	defer cancel()
	stop := m.keepRotating(ctx, cancel, r)
	ip, err := m.changeIP(ctx, r, old)
	stop()
	if m.bg.Err() != nil {
		return
	}
	log := m.cfg.Logger.With(zap.String("proxy", r.Proxy.ID), zap.String("site", r.Site))
	res := proxies.RotationResult{IP: ip, Took: time.Since(began)}
	if err != nil {
		res.IP = ""
		m.rotationFails.Add(1)
		log.Warn("modem rotation failed: quarantined", zap.Error(err))
	} else {
		m.rotations.Add(1)
		log.Info("modem rotated", zap.String("old_ip", old), zap.String("ip", ip), zap.Duration("took", res.Took))
	}
	ectx, ecancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer ecancel()
	if err := m.cfg.Caps.Rotations.EndRotation(ectx, r, res); err != nil {
		log.Warn("modem rotation end failed", zap.Error(err))
	}
}

// keepRotating pushes the rotation's mark every third of the lease TTL
// until stopped; a mark lost (the rotation outlived it) cancels.
func (m *Manager) keepRotating(ctx context.Context, cancel context.CancelFunc, r *proxies.Rotation) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(m.cfg.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := m.cfg.Caps.Rotations.ExtendRotation(ctx, r, m.cfg.LeaseTTL); errors.Is(err, proxies.ErrStaleLease) {
					cancel()
					return
				}
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// changeIP waits until the change is allowed, calls the modem's link,
// records when it answered (the provider's interval counts from its
// taking the call, later than the permission), lets the modem settle
// and learns its new IP.
func (m *Manager) changeIP(ctx context.Context, r *proxies.Rotation, old string) (string, error) {
	md := r.Proxy.Modem
	if err := m.awaitChange(ctx, r); err != nil {
		return "", err
	}
	if err := m.callChange(ctx, r.Proxy); err != nil {
		return "", err
	}
	if err := m.cfg.Caps.Rotations.Changed(ctx, r); err != nil {
		m.cfg.Logger.Warn("modem change not recorded: the next may come too soon", zap.String("proxy", r.Proxy.ID), zap.Error(err))
	}
	if m.cfg.Forget != nil {
		m.cfg.Forget(r.Proxy.URL()) // the modem dropped every connection
	}
	ctx, cancel := context.WithTimeout(ctx, md.NewIPTimeout()+time.Second)
	defer cancel()
	if err := backoff.Sleep(ctx, md.Settle+settleMargin); err != nil {
		return "", err
	}
	return m.newIP(ctx, r.Proxy, old)
}

// settleMargin is added to the provider's settle time before the first
// probe of the new IP.
const settleMargin = 100 * time.Millisecond

// awaitChange asks until the change may be made: the provider's interval
// since the modem's last change, and the modem's sessions on other sites
// ended (they end at their next request). It waits at most the interval
// plus two lease TTLs.
func (m *Manager) awaitChange(ctx context.Context, r *proxies.Rotation) error {
	limit := time.Until(r.NotBefore) + 2*m.cfg.LeaseTTL
	ctx, cancel := context.WithTimeout(ctx, max(limit, m.cfg.LeaseTTL))
	defer cancel()
	for {
		wait, err := m.cfg.Caps.Rotations.MayChange(ctx, r)
		if err != nil || wait == 0 {
			return err
		}
		if err := backoff.Sleep(ctx, min(wait, changePoll)); err != nil {
			return fmt.Errorf("the modem's change was not allowed in time: %w", err)
		}
	}
}

// changePoll is how often a rotation asks again whether it may change.
const changePoll = 250 * time.Millisecond

// callChange calls the modem's change link; a 429 waits its Retry-After
// and calls again.
func (m *Manager) callChange(ctx context.Context, p proxies.Proxy) error {
	md := p.Modem
	for try := 1; ; try++ {
		req, err := http.NewRequestWithContext(ctx, md.Method, md.ChangeURL, nil)
		if err != nil {
			return fmt.Errorf("change link %s: %v", md.Masked(), mask.Text(err.Error(), md.ChangeURL))
		}
		resp, err := m.cfg.ChangeClient.Do(req)
		if err != nil {
			if try < 3 && ctx.Err() == nil {
				if err := backoff.Sleep(ctx, time.Duration(try)*time.Second); err != nil {
					return err
				}
				continue
			}
			return fmt.Errorf("change link %s: %v", md.Masked(), mask.Text(err.Error(), md.ChangeURL))
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode/100 == 2:
			return nil
		case resp.StatusCode == http.StatusTooManyRequests:
			m.changeRefusals.Add(1)
			if err := backoff.Sleep(ctx, retryAfter(resp.Header.Get("Retry-After"))); err != nil {
				return err
			}
		default:
			return fmt.Errorf("change link %s answered %s", md.Masked(), resp.Status)
		}
	}
}

// retryAfter reads a Retry-After in seconds (default 5 s).
func retryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	return 5 * time.Second
}

// newIP probes the modem until its exit IP differs from old, backing off
// while it refuses (still settling), until ctx ends.
func (m *Manager) newIP(ctx context.Context, p proxies.Proxy, old string) (string, error) {
	wait := 200 * time.Millisecond
	var last error
	for {
		ip, err := m.probe(ctx, p, p.URL())
		switch {
		case err == nil && ip != old:
			return ip, nil
		case err == nil:
			last = fmt.Errorf("the exit IP is still %s", old)
		default:
			last = err
		}
		if err := backoff.Sleep(ctx, wait); err != nil {
			return "", fmt.Errorf("no new exit IP in %s: %w", p.Modem.NewIPTimeout(), last)
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// startFailed gives back the lease of a session whose exit could not be
// claimed. A modem that came back on an exit IP quarantined for the site
// rotates again (carriers hand IPs out again); anything else is released
// as exitFailure says.
func (m *Manager) startFailed(ctx context.Context, task string, l *proxies.Lease, err error) error {
	var refused *proxies.ExitRefusedError
	if l.Proxy.Modem != nil && m.cfg.Caps.Rotations != nil && errors.As(err, &refused) && refused.Quarantined {
		return m.rotate(ctx, task, l, proxies.Neutral(), refused.IP, "banned IP")
	}
	return m.release(ctx, task, l, exitFailure(err))
}

// StopRotations ends the rotations this manager runs, waiting up to
// timeout for them: one cut short leaves its modem to free itself within
// the lease TTL.
func (m *Manager) StopRotations(timeout time.Duration) {
	done := make(chan struct{})
	go func() { m.rotating.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		m.stopBG()
		<-done
	}
}
