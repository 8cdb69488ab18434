package tasks

import (
	"context"
	"errors"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/proxies"
	"crawlq/sessions"
)

// A job that cannot lease a proxy soon hands its worker slot back: the
// attempt ends without failing (no retry used, not counted failed: the
// worker's IsFailure) and the job is due again when a proxy is expected
// (RetryDelay): its turn in the site's wait line, the ready time of the
// proxy its kept session resumes, or soon after a session that ended for
// its modem's rotation. A worker wakes the jobs it handed back at their
// turn (waker), sooner than Asynq's look at its retry sets.

// HandBackError is a job handing its slot back for After: a deferred
// confirmation waiting for a second proxy.
type HandBackError struct {
	After time.Duration
	Err   error
}

func (e *HandBackError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *HandBackError) Unwrap() error { return e.Err }

func handBack(d time.Duration, err error) error { return &HandBackError{After: d, Err: err} }

// minHandBack is the least time a handed-back job waits: Asynq moves it
// out of its active list first.
const minHandBack = 100 * time.Millisecond

// HandedBack says err is a job handing its slot back, and for how long:
// a *sessions.WaitError (no proxy soon), a *proxies.NotReadyError (the
// session's own proxy cools, or every proxy of the class is quarantined),
// a *sessions.EndedError (its modem rotates) or a *HandBackError.
func HandedBack(err error) (time.Duration, bool) {
	var (
		w  *sessions.WaitError
		nr *proxies.NotReadyError
		e  *sessions.EndedError
		hb *HandBackError
	)
	switch {
	case errors.As(err, &hb):
		return max(hb.After, minHandBack), true
	case errors.As(err, &w):
		return max(w.Wait, minHandBack), true
	case errors.As(err, &nr):
		return max(nr.Wait, minHandBack), true
	case errors.As(err, &e):
		return max(e.RetryAfter(), minHandBack), true
	}
	return 0, false
}

// IsFailure is the worker's asynq.Config.IsFailure: every error but a
// hand back (HandedBack).
func IsFailure(err error) bool {
	_, waiting := HandedBack(err)
	return !waiting
}

// HandBackStats is one attempt that handed its slot back, for
// HandlerConfig.OnHandBack.
type HandBackStats struct {
	Site string
	// Reason is "proxy" (no proxy soon), "resume" (the session's own
	// proxy cools), "exhausted" (every proxy quarantined), "modem" (its
	// modem rotates) or "confirm" (a second proxy for a confirmation).
	Reason string
	// After is how long until the job's turn.
	After time.Duration
}

// handBackReason is HandBackStats.Reason of err.
func handBackReason(err error) string {
	var (
		nr *proxies.NotReadyError
		hb *HandBackError
		w  *sessions.WaitError
	)
	switch {
	case errors.As(err, &hb):
		return "confirm"
	case errors.As(err, &w):
		return "proxy"
	case errors.As(err, &nr) && nr.Exhausted:
		return "exhausted"
	case errors.As(err, &nr):
		return "resume"
	}
	return "modem"
}

// handedBack tells OnHandBack, counts the attempt and has the waker bring
// the job back at its turn.
func (h *Handler) handedBack(ctx context.Context, siteName string, d time.Duration, err error) {
	h.handBacks.Add(1)
	if h.cfg.OnHandBack != nil {
		h.cfg.OnHandBack(HandBackStats{Site: siteName, Reason: handBackReason(err), After: d})
	}
	if h.cfg.Waker != nil {
		q, _ := asynq.GetQueueName(ctx)
		id, _ := asynq.GetTaskID(ctx)
		h.cfg.Waker.After(d, q, id)
	}
}
