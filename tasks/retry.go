package tasks

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hibiken/asynq"
)

// RetryError asks for the next attempt after a set delay: a rate limit's
// Retry-After, or soon on another proxy after a ban.
type RetryError struct {
	After time.Duration
	Err   error
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("%v (retry in %s)", e.Err, e.After.Round(time.Millisecond))
}

// Unwrap returns the cause.
func (e *RetryError) Unwrap() error { return e.Err }

func retryAfter(d time.Duration, err error) error { return &RetryError{After: d, Err: err} }

// permanent marks err as not worth retrying: the task is archived with it.
func permanent(err error) error { return fmt.Errorf("%w: %w", err, asynq.SkipRetry) }

// MaxBackoff caps the delay between attempts of a failing job.
const MaxBackoff = time.Minute

// RetryDelay is the worker's asynq.RetryDelayFunc: a hand back's turn
// (HandedBack), a RetryError's own
// delay, or the delay an error names itself (a RetryAfter method: a
// session that ended before its request, sessions.EndedError), else
// exponential backoff from 1s with jitter, capped at MaxBackoff.
func RetryDelay(n int, err error, _ *asynq.Task) time.Duration {
	if d, ok := HandedBack(err); ok {
		return d
	}
	var re *RetryError
	if errors.As(err, &re) {
		return re.After
	}
	var named interface{ RetryAfter() time.Duration }
	if errors.As(err, &named) {
		return named.RetryAfter()
	}
	d := time.Second << min(n, 6)
	d = min(d, MaxBackoff)
	return d/2 + rand.N(d/2+1)
}
