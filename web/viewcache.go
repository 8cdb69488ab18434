package web

import (
	"context"
	"sync"
	"time"
)

// viewCache holds the latest poolView and builds a new one at most once
// at a time, whoever asks: the sampler loop or a request that finds the
// view older than its period.
type viewCache struct {
	build func(context.Context) (*poolView, error)
	// timeout bounds one build.
	timeout time.Duration
	// every is the refresh period; a view is stale after every, or three
	// times its build's duration if longer (a big pool is read less often).
	every time.Duration

	mu       sync.Mutex
	cur      *poolView
	builtAt  time.Time     // local clock, when cur was built
	building chan struct{} // closed when the build under way ends
	err      error         // of the last build
	wg       sync.WaitGroup
}

// period is how long a view built in took stays fresh.
func (c *viewCache) period(took time.Duration) time.Duration { return max(c.every, 3*took) }

// get returns the latest view at once, starting a new build in the
// background when it is stale. Before the first view it starts a build
// and waits up to wait for it, so a page never hangs on a slow read of a
// big pool; the error is the last build's when there is no view at all.
func (c *viewCache) get(ctx context.Context, wait time.Duration) (*poolView, error) {
	c.mu.Lock()
	if c.cur != nil {
		v := c.cur
		if time.Since(c.builtAt) > c.period(v.Took) {
			c.startLocked()
		}
		c.mu.Unlock()
		return v, nil
	}
	done := c.startLocked()
	c.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
	return c.latest()
}

// refresh builds a new view now (or waits for the build under way) and
// returns it.
func (c *viewCache) refresh(ctx context.Context) (*poolView, error) {
	c.mu.Lock()
	done := c.startLocked()
	c.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur, c.err
}

// latest is the newest view, or the last error when there is none.
func (c *viewCache) latest() (*poolView, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil {
		return nil, c.err
	}
	return c.cur, nil
}

// startLocked starts a build unless one is under way and returns the
// channel closed when it ends. The build does not depend on the caller's
// context: a reader that gives up does not waste the read for the next.
func (c *viewCache) startLocked() <-chan struct{} {
	if c.building != nil {
		return c.building
	}
	done := make(chan struct{})
	c.building = done
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		defer cancel()
		v, err := c.build(ctx)
		c.mu.Lock()
		if err == nil {
			c.cur, c.builtAt = v, time.Now()
		}
		c.err, c.building = err, nil
		c.mu.Unlock()
		close(done)
	}()
	return done
}

// wait waits for the build under way, if any.
func (c *viewCache) wait() { c.wg.Wait() }
