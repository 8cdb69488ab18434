package sessions

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"crawlq/proxies"
)

// ReleaseErrors is how many lease releases of the Manager's sessions have
// failed (the broker's Redis refused or did not answer). A release refused
// as stale is no failure: the lease had expired and gone to another
// holder. Each failure is logged once, with its task.
func (m *Manager) ReleaseErrors() int64 { return m.releaseErrs.Load() }

// StoreErrors is how many writes and deletions of session records have
// failed. Each failure is logged once, with its task.
func (m *Manager) StoreErrors() int64 { return m.storeErrs.Load() }

// release gives l, task's lease, back to the broker with outcome o, even
// when ctx is cancelled. A failure is logged, counted and returned; a
// stale lease gives nil.
func (m *Manager) release(ctx context.Context, task string, l *proxies.Lease, o proxies.Outcome) error {
	err := m.cfg.Broker.Release(context.WithoutCancel(ctx), l, o)
	m.noteRelease(task, l, err)
	if errors.Is(err, proxies.ErrStaleLease) {
		return nil
	}
	return err
}

// noteRelease logs and counts err, the answer to the release of task's
// lease l, unless it is nil or proxies.ErrStaleLease.
func (m *Manager) noteRelease(task string, l *proxies.Lease, err error) {
	if err == nil || errors.Is(err, proxies.ErrStaleLease) {
		return
	}
	m.releaseErrs.Add(1)
	m.cfg.Logger.Warn("lease release failed", zap.String("task", task), zap.String("proxy", l.Proxy.ID), zap.Error(err))
}

// save writes rec; a failure is logged, counted and returned.
func (m *Manager) save(ctx context.Context, rec *record) error {
	return m.noteStore(rec.Task, m.store.save(ctx, rec))
}

// drop deletes task's record; a failure is logged, counted and returned.
func (m *Manager) drop(ctx context.Context, task string) error {
	return m.noteStore(task, m.store.drop(ctx, task))
}

// noteStore logs and counts err, a failed write of task's record, and
// returns it.
func (m *Manager) noteStore(task string, err error) error {
	if err != nil {
		m.storeErrs.Add(1)
		m.cfg.Logger.Warn("session store failed", zap.String("task", task), zap.Error(err))
	}
	return err
}
