package sessions

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/proxies"
)

// Preloaded is what Preload queued in a caller's pipeline for a task's
// open: two separate reads, its stored record and, maybe, a fresh
// proxy's lease. After the pipeline has run, OpenStored opens from it.
type Preloaded struct {
	// Record is the read of the task's stored session record.
	Record *PreloadedRecord
	// Lease is a fresh proxy's lease for the task, nil when the broker
	// could not queue one; Manager.Discard gives it back when no session
	// took it.
	Lease *PreloadedLease
}

// PreloadedRecord is a task's session record read queued in a caller's
// pipeline, so it shares a round trip with the caller's own reads.
type PreloadedRecord struct {
	task string
	cmd  *redis.StringCmd
}

// PreloadedLease is a fresh proxy's lease queued in a caller's pipeline,
// for one task on one site and class. Its answer is read once: by the
// open that takes it, or by Manager.Discard.
type PreloadedLease struct {
	req    proxies.LeaseRequest
	answer func(context.Context) (*proxies.Lease, error)
}

// Preload queues in p, a pipeline of the caller's on the manager's Redis,
// the read of task's stored session and, when the broker keeps its leases
// there too (Config.BrokerSharesRedis, Caps.PipelineLeases), the
// lease of a fresh proxy of class for site: a task with no stored
// session, the common case (a job's first attempt), then opens with the
// round trip of its first reads.
func (m *Manager) Preload(ctx context.Context, p redis.Pipeliner, task, site string, class proxies.Class) Preloaded {
	pre := Preloaded{Record: &PreloadedRecord{task: task, cmd: p.Get(ctx, sessionKey(task))}}
	pl := m.cfg.Caps.PipelineLeases
	if pl == nil || !m.cfg.BrokerSharesRedis {
		return pre
	}
	req := m.leaseRequest(site, class, task)
	if answer, queued := pl.LeaseIn(ctx, p, req); queued {
		pre.Lease = &PreloadedLease{req: req, answer: answer}
	}
	return pre
}

// Discard gives back a preloaded lease that no session took. Safe on nil
// and on a lease already taken.
func (m *Manager) Discard(ctx context.Context, pl *PreloadedLease) {
	if pl == nil || pl.answer == nil {
		return
	}
	if l, err := pl.take(ctx); err == nil {
		m.giveBack(ctx, pl.req.Task, l)
	}
}

// take answers pl's lease, which is pl's no longer.
func (pl *PreloadedLease) take(ctx context.Context) (*proxies.Lease, error) {
	answer := pl.answer
	pl.answer = nil
	return answer(ctx)
}

// recordOf is task's stored record: pr's read when it is task's, else
// read now. Nil when there is none.
func (m *Manager) recordOf(ctx context.Context, pr *PreloadedRecord, task string) (*record, error) {
	if pr != nil && pr.task == task {
		return decodeRecord(task, pr.cmd)
	}
	return m.store.load(ctx, task)
}

// preleased answers pl when it was queued for task on site and class, and
// gives it back otherwise. Nil when there is none or it leased nothing
// (the open then leases as usual: no proxy ready is no news).
func (m *Manager) preleased(ctx context.Context, pl *PreloadedLease, task, site string, class proxies.Class) *proxies.Lease {
	if pl == nil || pl.answer == nil {
		return nil
	}
	if pl.req.Task != task || pl.req.Site != site || pl.req.Class != class {
		m.Discard(ctx, pl)
		return nil
	}
	l, err := pl.take(ctx)
	if err == nil {
		return l
	}
	var nr *proxies.NotReadyError
	if !errors.As(err, &nr) {
		m.cfg.Logger.Debug("preloaded lease failed, leasing again", zap.String("task", task), zap.Error(err))
	}
	return nil
}

// giveBack releases l, a preloaded lease no session took (nothing was
// sent through it; nil: none); a release that fails is logged and
// counted, and the lease frees itself at its TTL (I4). A lease on the
// stored session's own proxy is not given back but resumed on: given
// back, it would set the proxy's ready-at a min_interval ahead (a release
// cannot tell nothing was sent), and the resume would find it cooling
// down, in a pool of one ready proxy on every attempt of the task.
func (m *Manager) giveBack(ctx context.Context, task string, l *proxies.Lease) {
	if l != nil {
		m.noteRelease(task, l, m.cfg.Broker.Release(context.WithoutCancel(ctx), l, proxies.Neutral()))
	}
}
