package sessions

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"crawlq/proxies"
)

// ErrIPResting means the session's exit IP has sent its site the site's
// volume budget (rotate_after, rotate_every, or the budget learned under
// rotate_after: auto) and cannot change IP as a modem would: the proxy,
// or the gateway's exit, rests until the IP's count starts over, and the
// job goes on through a new session on another.
var ErrIPResting = errors.New("the exit IP has sent the site its volume budget and rests")

// volumeGate counts a request about to be sent through a proxy that is
// not a modem (admit) against its site's volume budget per exit IP
// (Caps.Volume): once the IP has sent the budget, the session ends, its
// proxy or exit resting, and the request is not sent. A budget Redis
// cannot answer for (an outage, with the fallback pool serving) lets the
// request go: the budget guards against a site's volume rule, the pace
// and the bans' quarantine still hold.
func (s *Session) volumeGate(ctx context.Context) error {
	g := s.m.cfg.Caps.Volume
	if g == nil || s.Lease().Proxy.Modem != nil {
		return nil
	}
	rest, err := g.VolumeSend(ctx, s.rec.Site, s.ExitIP())
	if err != nil {
		s.m.cfg.Logger.Warn("volume budget not counted", zap.String("task", s.rec.Task), zap.Error(err))
		return nil
	}
	if rest <= 0 {
		return nil
	}
	s.m.volumeRested.Add(1)
	return &EndedError{Err: errors.Join(ErrIPResting, s.end(ctx, proxies.Rest(rest), true))}
}

// VolumeRested counts the manager's sessions ended because their exit
// IP had sent its site the volume budget (ErrIPResting).
func (m *Manager) VolumeRested() int64 { return m.volumeRested.Load() }

// volumeBanned tells the volume budget (Caps.Volume) that the site banned
// exit ip through a proxy that is not a modem (a modem's ban teaches it
// in its rotation).
func (s *Session) volumeBanned(ctx context.Context, ip string) {
	g := s.m.cfg.Caps.Volume
	if g == nil || s.Lease().Proxy.Modem != nil {
		return
	}
	if err := g.VolumeBanned(ctx, s.rec.Site, ip); err != nil {
		s.m.cfg.Logger.Warn("ban not learned from for the volume budget", zap.String("task", s.rec.Task), zap.Error(err))
	}
}

// restExit rests the session's exit IP for o's rest (a spent volume
// budget) instead of its min_interval, ending hold h. The proxy itself
// rests only when its exit is its own: a gateway's next session lands on
// another exit at once.
func (s *Session) restExit(ctx context.Context, h *proxies.ExitHold, o proxies.Outcome) proxies.Outcome {
	g := s.m.cfg.Caps.Volume
	if g == nil {
		s.releaseExit(ctx, h)
		return o
	}
	if err := g.RestExit(context.WithoutCancel(ctx), h.Site, h.IP, h, o.RetryAfter); err != nil {
		s.m.cfg.Logger.Warn("exit rest failed", zap.String("task", s.rec.Task), zap.String("exit", h.IP), zap.Error(err))
		s.releaseExit(ctx, h)
	}
	s.forgetURL()
	s.m.dropSlotExit(ctx, s.Lease().Proxy)
	if s.Lease().Proxy.Gateway == nil {
		return o
	}
	s.mu.Lock()
	s.rec.Exit = nil // the next session of the task takes a new id
	s.mu.Unlock()
	return proxies.Neutral()
}
