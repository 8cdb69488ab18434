package schedule_test

import (
	"sync"
	"time"
)

// fakeClock is a scheduler's clock that moves only when the test sets it.
// Every wait the scheduler begins is told on waits (its deadline).
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
	waits  chan time.Time
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, waits: make(chan time.Time, 64)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := fakeTimer{at: c.now.Add(d), ch: make(chan time.Time, 1)}
	c.timers = append(c.timers, t)
	c.waits <- t.at
	return t.ch
}

// Set moves the clock to now and fires the timers due.
func (c *fakeClock) Set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(now) {
			kept = append(kept, t)
			continue
		}
		t.ch <- now
	}
	c.timers = kept
}
