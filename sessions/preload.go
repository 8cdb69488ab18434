package sessions

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/proxies"
)

// PreloadLease is Preload that also queues in p, when the broker can
// (proxies.PipelineLeaser on the records' Redis client), the lease of a
// fresh proxy of class for site: a task with no stored session, the
// common case (a job's first attempt), then opens with the round trip of
// its first reads. OpenStored uses that lease when it opens a fresh
// session of site and class, and gives it back otherwise; Discard gives
// it back when no session is opened.
func (m *Manager) PreloadLease(ctx context.Context, p redis.Pipeliner, task, site string, class proxies.Class) *Stored {
	st := m.Preload(ctx, p, task)
	pl, ok := m.cfg.Broker.(proxies.PipelineLeaser)
	if !ok || pl.Redis() != m.Redis() {
		return st
	}
	st.m, st.site, st.class = m, site, class
	if answer, queued := pl.LeaseIn(ctx, p, m.leaseRequest(site, class, task)); queued {
		st.lease = answer
	}
	return st
}

// Discard gives back a preloaded lease that no session took. Safe on nil
// and on a Stored without one.
func (st *Stored) Discard(ctx context.Context) {
	if st == nil || st.lease == nil {
		return
	}
	if l, err := st.take(ctx); err == nil {
		st.giveBack(ctx, l)
	}
}

// take answers st's preloaded lease, which is st's no longer.
func (st *Stored) take(ctx context.Context) (*proxies.Lease, error) {
	answer := st.lease
	st.lease = nil
	return answer(ctx)
}

// giveBack releases a preloaded lease no session took (nothing was sent
// through it); a release that fails is logged and counted, and the lease
// frees itself at its TTL (I4).
func (st *Stored) giveBack(ctx context.Context, l *proxies.Lease) {
	st.m.noteRelease(st.task, l, st.m.cfg.Broker.Release(context.WithoutCancel(ctx), l, proxies.Neutral()))
}

// openPreleased opens a fresh session with st's preloaded lease when the
// task has no stored session of site to resume, and resumes the stored
// session on it when the preload took the stored session's own proxy (ok
// true); otherwise it gives the lease back and the caller opens as usual
// (ok false), as it does when the preloaded lease found no proxy ready
// (the usual path then waits for one).
func (m *Manager) openPreleased(ctx context.Context, st *Stored, rec *record, task, site string, class proxies.Class) (s *Session, ok bool, err error) {
	if st == nil || st.lease == nil {
		return nil, false, nil
	}
	if st.task != task || st.site != site || st.class != class {
		st.Discard(ctx)
		return nil, false, nil
	}
	if rec != nil && rec.Site == site {
		return m.resumePreleased(ctx, st, rec)
	}
	l, err := st.take(ctx)
	var nr *proxies.NotReadyError
	if err != nil {
		if !errors.As(err, &nr) {
			m.cfg.Logger.Debug("preloaded lease failed, leasing again", zap.String("task", task), zap.Error(err))
		}
		return nil, false, nil
	}
	s, err = m.freshWith(ctx, l, task, site, class, true)
	if s != nil && rec != nil {
		s.stored = true // a record of another site is still there: Finish drops it
	}
	return s, true, err
}

// resumePreleased resumes rec on st's preloaded lease when that lease is
// on rec's own proxy (a pool with one ready proxy, or the stored proxy
// had waited longest). Given back, the lease would set the proxy's
// ready-at a min_interval ahead (nothing was sent, but a release cannot
// tell), and the resume's LeaseProxy would find it cooling down: in a
// pool of one ready proxy, on every attempt of the task. A lease on
// another proxy goes back (ok false) and the caller resumes as usual.
func (m *Manager) resumePreleased(ctx context.Context, st *Stored, rec *record) (*Session, bool, error) {
	l, err := st.take(ctx)
	if err != nil {
		return nil, false, nil
	}
	if l.Proxy.ID != rec.ProxyID {
		st.giveBack(ctx, l)
		return nil, false, nil
	}
	s, err := m.resumeOn(ctx, rec, l, true)
	return s, true, err
}
