package bench

import (
	"context"
	"crawlq/internal/backoff"
	"sync/atomic"
	"time"
)

// meter counts successful pages per second of a phase's window, told by
// the workers' Observe hook.
type meter struct {
	window  time.Duration
	t0      time.Time
	started atomic.Bool
	ok      []atomic.Int64 // OK pages per second of the window
}

func newMeter(window time.Duration) *meter {
	n := int((window + time.Second - 1) / time.Second)
	return &meter{window: window, ok: make([]atomic.Int64, n)}
}

// start opens the window: it runs from here for window.
func (m *meter) start() {
	m.t0 = time.Now()
	m.started.Store(true)
}

// observe is the workers' Observe: an OK verdict inside the window counts.
func (m *meter) observe(_, verdict string, _ time.Duration) {
	if verdict != "ok" || !m.started.Load() {
		return
	}
	if d := time.Since(m.t0); d < m.window {
		m.ok[d/time.Second].Add(1)
	}
}

// wait returns when the window closes or ctx ends.
func (m *meter) wait(ctx context.Context) error {
	return backoff.Sleep(ctx, time.Until(m.t0.Add(m.window)))
}

// pages is the OK pages of the window.
func (m *meter) pages() int {
	n := 0
	for _, v := range m.perSecond() {
		n += v
	}
	return n
}

// perSecond is the OK pages in each second of the window (the last one may
// be a fraction of a second).
func (m *meter) perSecond() []int {
	out := make([]int, len(m.ok))
	for i := range m.ok {
		out[i] = int(m.ok[i].Load())
	}
	return out
}
