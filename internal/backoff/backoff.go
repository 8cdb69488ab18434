package backoff

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends; it returns ctx.Err() when ctx ended
// first, else nil.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Backoff is the waits of one retry loop: first, then twice the previous
// one, up to max. Not safe for concurrent use: one per loop.
type Backoff struct {
	next, max time.Duration
}

// New is a Backoff whose first wait is first and whose waits grow to max.
func New(first, max time.Duration) *Backoff {
	return &Backoff{next: first, max: max}
}

// Next is the wait the next Wait sleeps (to log it before).
func (b *Backoff) Next() time.Duration { return b.next }

// Wait sleeps the next wait (Sleep) and doubles it, up to max, for the
// one after. It returns ctx.Err() when ctx ended first, else nil.
func (b *Backoff) Wait(ctx context.Context) error {
	d := b.next
	b.next = min(2*d, b.max)
	return Sleep(ctx, d)
}

// Delay is the wait before try n+1 of a retry whose state is stored (n
// tries failed so far, n >= 1): first, doubled n-1 times, at most max.
func Delay(first, max time.Duration, n int) time.Duration {
	d := first
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}
