package sessions

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.uber.org/zap"

	"crawlq/fetcher"
	"crawlq/internal/backoff"
	"crawlq/proxies"
)

// ExitPolicy says what a new session does when the exit IP it landed on
// is held by another session for its site (or, for ExitWait, pacing).
type ExitPolicy string

// Exit policies.
const (
	// ExitReroll takes a new gateway session id (a new exit IP), up to
	// Config.MaxRerolls, then waits. The default.
	ExitReroll ExitPolicy = "reroll"
	// ExitWait waits for the IP to be free.
	ExitWait ExitPolicy = "wait"
)

// ErrNoExitGate means a proxy that learns its exit IP was leased by a
// manager without Config.Caps.Exits, which could not keep I1, I2 and I5 on
// that IP.
var ErrNoExitGate = errors.New("the proxy learns its exit IP, and no exit gate is configured")

// exitRecord is a session's exit on a proxy that learns its exit IP,
// stored with the session so a retry on any server resumes the same
// gateway session (and so the same exit while the provider keeps it).
type exitRecord struct {
	// ID is the gateway session id ("" for a plain proxy told to probe).
	ID string `json:"id,omitempty"`
	// IP is the exit IP last learned.
	IP string `json:"ip"`
	// Start is when the provider session began (its first request),
	// Last when it last carried a request: with the gateway's TTL and
	// idle time, they say when the exit may have moved.
	Start time.Time `json:"start"`
	Last  time.Time `json:"last"`
}

// ExitCounts are the exit-IP figures of a manager since it was built.
type ExitCounts struct {
	// Probes counts exit IPs learned; Rerolls new session ids taken
	// because the exit was held or quarantined; Waits the waits for a
	// held IP; Changes the exits found moved within a session.
	Probes, Rerolls, Waits, Changes int64
}

// ExitCounts reports the manager's exit-IP figures.
func (m *Manager) ExitCounts() ExitCounts {
	probes := m.exitProbes.Load()
	if m.cfg.Rotator != nil {
		probes += m.cfg.Rotator.probes.Load() // a rotation learns its modem's new IP
	}
	return ExitCounts{Probes: probes, Rerolls: m.rerolls.Load(), Waits: m.exitWaits.Load(), Changes: m.exitChanges.Load()}
}

// claimExit learns the session's exit IP and holds it for the site,
// re-rolling the session id or waiting while another session holds it.
// A proxy that does not learn its exit has nothing to claim.
func (s *Session) claimExit(ctx context.Context) error {
	p := s.Lease().Proxy
	if !p.LearnsExit() {
		return nil
	}
	if s.m.cfg.Caps.Exits == nil {
		return fmt.Errorf("proxy %s: %w", p.ID, ErrNoExitGate)
	}
	s.mu.Lock()
	fresh := s.rec.Exit == nil || p.Gateway == nil && s.rec.Exit.ID != ""
	s.mu.Unlock()
	if fresh {
		e := s.m.slotExit(ctx, p)
		s.mu.Lock()
		s.rec.Exit = e
		s.mu.Unlock()
	}
	// the slot's lease is not kept alive before the exit is held: wait
	// at most half its TTL
	ctx, cancel := context.WithTimeout(ctx, s.m.cfg.LeaseTTL/2)
	defer cancel()
	for try := 0; ; try++ {
		err := s.learnAndHold(ctx)
		var refused *proxies.ExitRefusedError
		if err == nil || !errors.As(err, &refused) {
			return err
		}
		if err := s.onRefused(ctx, refused, try); err != nil {
			if errors.Is(err, proxies.ErrExitBusy) || errors.Is(err, proxies.ErrExitQuarantined) {
				return err
			}
			return fmt.Errorf("%w while waiting: %w", refused, err)
		}
	}
}

// onRefused re-rolls the gateway session or waits for the refused IP.
func (s *Session) onRefused(ctx context.Context, r *proxies.ExitRefusedError, try int) error {
	p := s.Lease().Proxy
	if p.Gateway != nil && (r.Quarantined || s.m.cfg.ExitBusy != ExitWait && try < s.m.cfg.MaxRerolls) {
		if try >= s.m.cfg.MaxRerolls*2 {
			return fmt.Errorf("%d session ids of %s landed on held or quarantined exit IPs: %w", try, p.ID, r)
		}
		s.m.rerolls.Add(1)
		s.forgetURL()
		s.mu.Lock()
		s.rec.Exit = &exitRecord{ID: newGatewaySession(p)}
		s.mu.Unlock()
		return nil
	}
	if r.Quarantined {
		return r
	}
	s.m.exitWaits.Add(1)
	// the holder may release long before its hold would expire: look again soon
	return backoff.Sleep(ctx, min(max(r.Wait, time.Millisecond), exitPoll))
}

// exitPoll is how often a session waiting for a held exit IP asks again.
const exitPoll = 50 * time.Millisecond

// learnAndHold learns the exit IP through the session's gateway session
// and holds it: a new IP drops the cookies, which the site bound to the
// old one.
func (s *Session) learnAndHold(ctx context.Context) error {
	ip, err := s.knownOrLearned(ctx)
	if err != nil {
		return err
	}
	s.noteLearned(ip)
	h, err := s.m.cfg.Caps.Exits.HoldExit(ctx, proxies.ExitRequest{Site: s.rec.Site, IP: ip, Holder: s.rec.Task, TTL: s.m.cfg.LeaseTTL, Slot: gatewaySlot(s.Lease().Proxy)})
	if err != nil {
		return err
	}
	s.setExit(ip, h)
	return nil
}

// gatewaySlot is p's ID when p is a gateway slot, else "".
func gatewaySlot(p proxies.Proxy) string {
	if p.Gateway == nil {
		return ""
	}
	return p.ID
}

// knownOrLearned is the gateway session's exit IP while the provider
// keeps it (learned within its idle time and TTL: no probe), else a
// probe's answer. A plain proxy told to probe is probed at every open.
func (s *Session) knownOrLearned(ctx context.Context) (string, error) {
	s.mu.Lock()
	e := s.rec.Exit
	known := e.IP != "" && s.lease.Proxy.Gateway != nil && !s.exitMayHaveMoved(time.Now())
	s.mu.Unlock()
	if known {
		return e.IP, nil
	}
	return s.learnExit(ctx)
}

// noteLearned keeps a gateway session's exit IP as soon as it is known,
// so a wait for it to come free does not probe again.
func (s *Session) noteLearned(ip string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.rec.Exit; e.IP != ip {
		e.IP, e.Start, e.Last = ip, time.Now(), time.Now()
	}
}

// learnExit probes the exit IP through the session's proxy URL.
func (s *Session) learnExit(ctx context.Context) (string, error) {
	return s.m.probe(ctx, s.Lease().Proxy, s.proxyURL())
}

// probe learns p's exit IP through proxy (p's URL, or a gateway
// session's).
func (m *Manager) probe(ctx context.Context, p proxies.Proxy, proxy *url.URL) (string, error) {
	m.exitProbes.Add(1)
	return learnIP(ctx, m.cfg.ExitProbe, p, proxy)
}

// learnIP asks probe (p's own probe URL, if its line names one) for p's
// exit IP through proxy.
func learnIP(ctx context.Context, probe fetcher.ExitProbe, p proxies.Proxy, proxy *url.URL) (string, error) {
	if p.Exit.ProbeURL != "" {
		probe.URL = p.Exit.ProbeURL
	}
	if probe.URL == "" {
		return "", fmt.Errorf("proxy %s learns its exit IP: no probe URL (set the worker's exit probe URL or exit=probe:URL)", p.ID)
	}
	probe.Header = p.Exit.Header
	return probe.Learn(ctx, proxy)
}

// setExit makes ip, held by h, the session's exit: a moved exit drops
// the cookies; the first request waits for the IP's ready time (I2).
func (s *Session) setExit(ip string, h *proxies.ExitHold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.rec.Exit
	if s.cookieIP != "" && s.cookieIP != ip {
		s.jar = newJar(nil)
		s.m.exitChanges.Add(1)
	}
	s.cookieIP = ip
	now := time.Now()
	if e.Start.IsZero() {
		e.Start = now
	}
	e.IP, e.Last = ip, now
	s.hold = h
	issued := h.Expires.Add(-s.m.cfg.LeaseTTL)
	if nb := now.Add(h.NotBefore.Sub(issued)); nb.After(s.earliest) {
		s.earliest = nb
	}
}

// exitMayHaveMoved says whether the provider may have ended the gateway
// session (its TTL, or its idle time, nearly run out) since its last
// request, so the exit must be learned again before the next one.
func (s *Session) exitMayHaveMoved(now time.Time) bool {
	gw := s.lease.Proxy.Gateway
	if gw == nil || s.rec.Exit == nil {
		return false
	}
	e := s.rec.Exit
	return now.Sub(e.Last) >= gw.Idle-margin(gw.Idle) || now.Sub(e.Start) >= gw.TTL-margin(gw.TTL)
}

// margin is the safety before a provider's deadline: a fifth of it, at
// most 5 s.
func margin(d time.Duration) time.Duration { return min(d/5, 5*time.Second) }

// refreshExit learns the exit again when it may have moved: a new IP is
// held and the old one released (moved: the caller waits for the new
// IP's pacing, I2), and the session's cookies, bound to the old IP, are
// dropped.
func (s *Session) refreshExit(ctx context.Context) (moved bool, err error) {
	s.mu.Lock()
	stale := s.exitMayHaveMoved(time.Now())
	old := s.hold
	s.mu.Unlock()
	if !stale {
		return false, nil
	}
	ip, err := s.learnExit(ctx)
	if err != nil {
		return false, err
	}
	if ip == old.IP {
		s.touchExit()
		return false, nil
	}
	s.releaseExit(ctx, old)
	s.mu.Lock()
	s.rec.Exit.IP, s.rec.Exit.Start, s.rec.Exit.Last = ip, time.Now(), time.Now() // just learned
	s.mu.Unlock()
	return true, s.claimExit(ctx)
}

// touchExit notes a request sent through the gateway session.
func (s *Session) touchExit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec.Exit != nil {
		s.rec.Exit.Last = time.Now()
	}
}

// releaseExit ends hold h; a failure is logged (the hold expires).
func (s *Session) releaseExit(ctx context.Context, h *proxies.ExitHold) {
	if h == nil {
		return
	}
	if err := s.m.cfg.Caps.Exits.ReleaseExit(context.WithoutCancel(ctx), h); err != nil && !errors.Is(err, proxies.ErrStaleLease) {
		s.m.cfg.Logger.Warn("exit release failed", zap.String("task", s.rec.Task), zap.String("exit", h.IP), zap.Error(err))
	}
}

// endExit ends the session's exit hold with the lease's outcome: a ban
// quarantines the exit IP for the site (I5). It returns the outcome for
// the lease: a gateway slot is not what the site banned, so it goes back
// without judgement and its next session takes a new id.
func (s *Session) endExit(ctx context.Context, o proxies.Outcome) proxies.Outcome {
	s.mu.Lock()
	h := s.hold
	s.mu.Unlock()
	if h == nil {
		return o
	}
	if o.Kind == proxies.OutcomeNeutral && o.RetryAfter > 0 {
		return s.restExit(ctx, h, o)
	}
	if o.Kind != proxies.OutcomeBanned {
		s.releaseExit(ctx, h)
		if !s.m.keepSlotExit(ctx, s) {
			s.forgetURL()
		}
		return o
	}
	s.forgetURL()
	s.m.dropSlotExit(ctx, s.Lease().Proxy)
	if _, err := s.m.cfg.Caps.Exits.BanExit(context.WithoutCancel(ctx), h.Site, h.IP, h); err != nil {
		s.m.cfg.Logger.Warn("exit ban failed", zap.String("task", s.rec.Task), zap.String("exit", h.IP), zap.Error(err))
	}
	if s.Lease().Proxy.Gateway == nil {
		return o
	}
	s.mu.Lock()
	s.rec.Exit = nil // the next session of the task takes a new id
	s.mu.Unlock()
	return proxies.Neutral()
}

// extendExit renews the exit hold with the lease; false when it was lost.
func (s *Session) extendExit(ctx context.Context) bool {
	s.mu.Lock()
	h := s.hold
	s.mu.Unlock()
	if h == nil {
		return true
	}
	nh, err := s.m.cfg.Caps.Exits.ExtendExit(ctx, h, s.m.cfg.LeaseTTL)
	if errors.Is(err, proxies.ErrStaleLease) {
		return false
	}
	if err == nil {
		s.mu.Lock()
		s.hold = nh
		s.mu.Unlock()
	}
	return true
}

// proxyURL is the URL the session dials: a gateway's with the session id
// in its username.
func (s *Session) proxyURL() *url.URL {
	l := s.Lease()
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.rec.Exit; e != nil && l.Proxy.Gateway != nil {
		return l.Proxy.WithSession(e.ID)
	}
	return l.Proxy.URL()
}

// forgetURL tells Config.Forget the session's gateway URL is done with.
func (s *Session) forgetURL() {
	if s.m.cfg.Forget != nil && s.Lease().Proxy.Gateway != nil {
		s.m.cfg.Forget(s.proxyURL())
	}
}

// clearanceOwner is whom a site's clearance is bound to: the exit IP a
// session holds, else its proxy.
func (s *Session) clearanceOwner() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		return "exit-" + s.hold.IP
	}
	return s.lease.Proxy.ID
}

// holdsExit says whether the session holds an exit IP.
func (s *Session) holdsExit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hold != nil
}

// exitFailure is the lease's outcome when its exit could not be claimed:
// a probe that failed is the proxy's failure; a refusal or a cancel is
// nobody's.
func exitFailure(err error) proxies.Outcome {
	var refused *proxies.ExitRefusedError
	if errors.As(err, &refused) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return proxies.Neutral()
	}
	return proxies.Failed("exit probe: " + err.Error())
}

// ExitIP is the IP the site sees: the exit the session holds, else its
// proxy's host.
func (s *Session) ExitIP() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		return s.hold.IP
	}
	return s.lease.Proxy.Host
}
