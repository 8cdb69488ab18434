package schedule

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
)

// loop is one scheduler: the active schedules it knows and when each
// fires next.
type loop struct {
	cfg   Config
	store *Store
	tk    *Ticker
	// next holds the active schedules by name.
	next map[string]entry
	// refused holds the specs refused (name → spec), each logged once.
	refused map[string]string
	firing  sync.WaitGroup
}

// entry is an active schedule and its next firing.
type entry struct {
	cron string
	spec Spec
	at   time.Time
}

// run fires the schedules at their ticks until ctx ends, reading them
// again every SyncInterval, then waits for the firings still going.
func (l *loop) run(ctx context.Context) {
	var syncAt time.Time
	for ctx.Err() == nil {
		now := l.cfg.Clock.Now()
		if !now.Before(syncAt) {
			l.sync(ctx, now)
			syncAt = now.Add(l.cfg.SyncInterval)
		}
		l.fireDue(ctx, now)
		l.wait(ctx, l.earliest(syncAt))
	}
	l.firing.Wait()
}

// sync reads the schedules: an added or resumed one fires at its Next
// tick, a removed or paused one no more, a known one keeps its next
// firing unless its spec changed. When Redis does not answer, the
// schedules known go on.
func (l *loop) sync(ctx context.Context, now time.Time) {
	all, err := l.store.List(ctx)
	if err != nil {
		if ctx.Err() == nil {
			l.cfg.Logger.Warn("schedules not read; the ones known go on", zap.Error(err))
		}
		return
	}
	next := make(map[string]entry, len(all))
	for _, s := range all {
		if s.Paused || !l.cfg.wants(s.Name) {
			continue
		}
		if e, ok := l.next[s.Name]; ok && e.cron == s.Cron {
			next[s.Name] = e
			continue
		}
		spec, err := s.Spec()
		if err != nil {
			l.refuse(s, err)
			continue
		}
		next[s.Name] = entry{cron: s.Cron, spec: spec, at: spec.Next(now)}
	}
	l.next = next
}

// refuse logs, once per spec, a schedule whose spec this crawlq refuses
// (added by another version, or edited by hand): it is not run.
func (l *loop) refuse(s Schedule, err error) {
	if l.refused == nil {
		l.refused = map[string]string{}
	}
	if l.refused[s.Name] != s.Cron {
		l.refused[s.Name] = s.Cron
		l.cfg.Logger.Error("schedule not run: its spec is refused", zap.String("schedule", s.Name), zap.Error(err))
	}
}

// fireDue fires, each in its own goroutine, the schedules whose next
// firing is at or before now, and sets their next one.
func (l *loop) fireDue(ctx context.Context, now time.Time) {
	for name, e := range l.next {
		if e.at.IsZero() || e.at.After(now) {
			continue // zero: a spec with no activation ahead (30 February)
		}
		l.firing.Add(1)
		go func() {
			defer l.firing.Done()
			l.cfg.fire(ctx, l.tk, name)
		}()
		e.at = e.spec.Next(now)
		l.next[name] = e
	}
}

// earliest is the first of the next firings and the next sync.
func (l *loop) earliest(syncAt time.Time) time.Time {
	t := syncAt
	for _, e := range l.next {
		if !e.at.IsZero() && e.at.Before(t) {
			t = e.at
		}
	}
	return t
}

// wait returns once the clock reached until or ctx ended.
func (l *loop) wait(ctx context.Context, until time.Time) {
	d := until.Sub(l.cfg.Clock.Now())
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-l.cfg.Clock.After(d):
	}
}
