package sessions

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"crawlq/proxies"
)

// WaitError says no proxy of the job's site and class could be leased
// soon (within Config.MaxLeaseWait): the job is to give its worker slot
// back and come again at its turn in the site's wait line
// (proxies.WaitLine), or when the broker expects a proxy ready. Nobody
// is to blame: it is no failure.
type WaitError struct {
	Site  string
	Class proxies.Class
	// Turn is the job's turn, Wait how long from now until it.
	Turn time.Time
	Wait time.Duration
	// Err is the broker's answer (a *proxies.NotReadyError).
	Err error
}

func (e *WaitError) Error() string {
	return fmt.Sprintf("waiting for a %s proxy for %s, turn in %s: %v", e.Class, e.Site, e.Wait.Round(time.Millisecond), e.Err)
}

// Unwrap returns the broker's answer.
func (e *WaitError) Unwrap() error { return e.Err }

// RetryAfter is how long the job waits before it asks again.
func (e *WaitError) RetryAfter() time.Duration { return e.Wait }

// leaseFresh leases a fresh proxy of class for site: at once, else
// within MaxLeaseWait while this manager has fewer jobs waiting in their
// slots for the site's class than it has proxies (a site short of
// proxies does not take every slot of the worker); otherwise, or when
// none came free in that time, a *WaitError with the job's turn.
func (m *Manager) leaseFresh(ctx context.Context, site string, class proxies.Class, task string) (*proxies.Lease, error) {
	req := m.leaseRequest(site, class, task)
	l, err := m.cfg.Broker.Lease(ctx, req)
	var nr *proxies.NotReadyError
	if !errors.As(err, &nr) {
		return l, err
	}
	if nr.Leased || nr.Wait <= m.cfg.MaxLeaseWait {
		if leave, ok := m.waits.enter(site, class); ok {
			l, err = m.waitInSlot(ctx, req)
			leave()
			if !errors.As(err, &nr) {
				return l, err
			}
		}
	}
	return nil, m.waitFor(ctx, nr)
}

// waitInSlot waits up to MaxLeaseWait for a proxy; when none came free,
// the broker's last answer (a *proxies.NotReadyError).
func (m *Manager) waitInSlot(ctx context.Context, req proxies.LeaseRequest) (*proxies.Lease, error) {
	wctx, cancel := context.WithTimeout(ctx, m.cfg.MaxLeaseWait)
	defer cancel()
	l, err := m.cfg.Broker.LeaseWait(wctx, req)
	if err == nil || ctx.Err() != nil || wctx.Err() == nil {
		return l, err
	}
	return m.cfg.Broker.Lease(ctx, req)
}

// waitFor is the job's turn after nr: from the broker's wait line
// (Caps.Lines), which also says how many proxies the site's class has,
// else the broker's next-ready time (while proxies are leased, at most
// MaxLeaseWait away: they may come free sooner).
func (m *Manager) waitFor(ctx context.Context, nr *proxies.NotReadyError) *WaitError {
	w := &WaitError{Site: nr.Site, Class: nr.Class, Turn: nr.Until, Wait: nr.Wait, Err: nr}
	if m.cfg.Caps.Lines != nil {
		t, err := m.cfg.Caps.Lines.Turn(ctx, nr)
		if err == nil {
			m.waits.setProxies(nr.Site, nr.Class, t.Proxies)
			w.Turn, w.Wait = t.At, t.Wait
			return w
		}
		m.cfg.Logger.Debug("no wait turn", zap.String("site", nr.Site), zap.Error(err))
	}
	if nr.Leased && w.Wait > m.cfg.MaxLeaseWait {
		w.Wait = m.cfg.MaxLeaseWait
		w.Turn = time.Now().Add(w.Wait)
	}
	return w
}

// slotWaits counts a manager's jobs waiting in their slots for a proxy,
// per site and class, against the proxies the class has for the site
// (learned from the wait line's turns; 1 until one is taken).
type slotWaits struct {
	mu sync.Mutex
	m  map[waitKey]*slotWait
}

type waitKey struct {
	site  string
	class proxies.Class
}

type slotWait struct{ waiting, proxies int }

func (s *slotWaits) get(site string, class proxies.Class) *slotWait {
	if s.m == nil {
		s.m = map[waitKey]*slotWait{}
	}
	k := waitKey{site, class}
	w := s.m[k]
	if w == nil {
		w = &slotWait{proxies: 1}
		s.m[k] = w
	}
	return w
}

// enter lets one more job wait in its slot while fewer wait than the
// class has proxies; leave ends its wait.
func (s *slotWaits) enter(site string, class proxies.Class) (leave func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.get(site, class)
	if w.waiting >= w.proxies {
		return nil, false
	}
	w.waiting++
	return func() { s.mu.Lock(); w.waiting--; s.mu.Unlock() }, true
}

func (s *slotWaits) setProxies(site string, class proxies.Class, n int) {
	s.mu.Lock()
	s.get(site, class).proxies = max(n, 1)
	s.mu.Unlock()
}

// Waiting is how many of the manager's jobs wait in their slots for a
// proxy of each site (all classes).
func (m *Manager) Waiting() map[string]int {
	m.waits.mu.Lock()
	defer m.waits.mu.Unlock()
	out := map[string]int{}
	for k, w := range m.waits.m {
		out[k.site] += w.waiting
	}
	return out
}
