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
// within MaxLeaseWait while the site can use one more job (enterWait: a
// site short of proxies does not take the worker's slots); otherwise, or
// when none came free in that time, a *WaitError with the job's turn.
func (m *Manager) leaseFresh(ctx context.Context, site string, class proxies.Class, task string) (*proxies.Lease, error) {
	req := m.leaseRequest(site, class, task)
	l, err := m.cfg.Broker.Lease(ctx, req)
	var nr *proxies.NotReadyError
	if !errors.As(err, &nr) {
		return l, err
	}
	if nr.Leased || nr.Wait <= m.cfg.MaxLeaseWait {
		if leave, ok := m.enterWait(ctx, site, class, task); ok {
			l, err = m.waitInSlot(ctx, req)
			leave()
			if !errors.As(err, &nr) {
				return l, err
			}
		}
	}
	return nil, m.waitFor(ctx, nr)
}

// enterWait says whether the job may wait in its slot for a proxy of
// site and class, and gives leave to end its wait. With the broker's
// wait seats (Caps.Seats) the cluster's live leases of the class on the
// site and the jobs waiting in their slots stay within its usable
// proxies; without them (or when the broker does not answer) this
// manager's waiting jobs stay within the proxies the wait line counted.
func (m *Manager) enterWait(ctx context.Context, site string, class proxies.Class, task string) (leave func(), ok bool) {
	seats := m.cfg.Caps.Seats
	if seats == nil {
		return m.waits.enter(site, class, false)
	}
	waiter := m.cfg.Holder + "|" + task
	seat, err := seats.Seat(ctx, site, class, waiter, m.cfg.MaxLeaseWait+time.Second)
	if err != nil {
		m.cfg.Logger.Debug("no wait seat", zap.String("site", site), zap.Error(err))
		return m.waits.enter(site, class, false)
	}
	m.waits.setProxies(site, class, seat.Usable)
	if !seat.Taken {
		return nil, false
	}
	done, _ := m.waits.enter(site, class, true)
	return func() {
		done()
		if err := seats.Unseat(context.WithoutCancel(ctx), site, class, waiter); err != nil {
			m.cfg.Logger.Debug("wait seat not given back", zap.String("site", site), zap.Error(err)) // it expires
		}
	}, true
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

type slotWait struct{ waiting, peak, proxies int }

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
// class has proxies, or always when seated (the broker gave it a wait
// seat); leave ends its wait.
func (s *slotWaits) enter(site string, class proxies.Class, seated bool) (leave func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.get(site, class)
	if !seated && w.waiting >= w.proxies {
		return nil, false
	}
	w.waiting++
	w.peak = max(w.peak, w.waiting)
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

// PeakWaiting is the most of the manager's jobs that waited in their
// slots for a proxy of each site at once (per class, the largest).
func (m *Manager) PeakWaiting() map[string]int {
	m.waits.mu.Lock()
	defer m.waits.mu.Unlock()
	out := map[string]int{}
	for k, w := range m.waits.m {
		out[k.site] = max(out[k.site], w.peak)
	}
	return out
}
