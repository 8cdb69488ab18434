package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/tasks"
	"crawlq/tasks/site"
)

// Ticker does what a schedule's firing asks: find its tick, decide run or
// skip (once for all schedulers), and queue the tick's jobs.
type Ticker struct {
	Store  *Store
	Client *asynq.Client
	Insp   *asynq.Inspector
	// RDB is the Redis the workers write follow-ups to (the queue's).
	RDB   redis.UniversalClient
	Sites *site.Registry
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Fired is what one firing did.
type Fired struct {
	Schedule string `json:"schedule"`
	// At is when the firing came; Tick the scheduled time it belongs to.
	At   time.Time `json:"at"`
	Tick time.Time `json:"tick"`
	// Outcome is OutcomeRun, OutcomeSkip, OutcomePaused, OutcomeGone or
	// OutcomeStale.
	Outcome string `json:"outcome"`
	// Decided says this firing made the tick's decision (false: another
	// scheduler had, and this one followed it).
	Decided  bool `json:"decided"`
	Enqueued int  `json:"enqueued"`
	Refused  int  `json:"refused"`
}

// Outcomes of a firing.
const (
	OutcomeRun    = DecisionRun
	OutcomeSkip   = DecisionSkip
	OutcomePaused = "paused"
	OutcomeGone   = "gone"  // removed since the scheduler registered it
	OutcomeStale  = "stale" // a later tick was decided already
)

// Fire handles a firing of the schedule name at the ticker's now.
func (t *Ticker) Fire(ctx context.Context, name string) (Fired, error) {
	f := Fired{Schedule: name, At: t.now()}
	s, err := t.Store.Get(ctx, name)
	switch {
	case errors.Is(err, ErrNotFound):
		f.Outcome = OutcomeGone
		return f, nil
	case err != nil:
		return f, err
	case s.Paused:
		f.Outcome = OutcomePaused
		return f, nil
	}
	spec, err := s.Spec()
	if err != nil {
		return f, err
	}
	if f.Tick = spec.Tick(f.At); f.Tick.IsZero() {
		f.Outcome = OutcomeStale
		return f, nil
	}
	return t.fire(ctx, s, f)
}

func (t *Ticker) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *Ticker) fire(ctx context.Context, s Schedule, f Fired) (Fired, error) {
	ts, qs, err := t.build(s, f.Tick)
	if err != nil {
		return f, err
	}
	decision, err := t.proposal(ctx, s.Name, f.Tick)
	if err != nil {
		return f, err
	}
	d, err := t.Store.decide(ctx, s.Name, f.Tick, decision, qs)
	if err != nil {
		return f, err
	}
	f.Decided, f.Outcome = d.Fresh, d.Decision
	if d.Stale {
		f.Outcome = OutcomeStale
	}
	if f.Outcome != OutcomeRun || d.Queued {
		return f, nil
	}
	// The decider queues the tick; a follower that comes before it marked
	// the tick queued queues it again, refused job by job, so a decider
	// that died in between loses nothing.
	f.Enqueued, f.Refused, err = t.enqueue(ctx, ts)
	if cerr := t.Store.count(ctx, s.Name, f.Tick, f.Enqueued, f.Refused, err == nil); err == nil {
		err = cerr
	}
	return f, err
}

// proposal is this scheduler's decision for tick: skip while the previous
// run is still going, else run. A tick already decided is not looked at.
func (t *Ticker) proposal(ctx context.Context, name string, tick time.Time) (string, error) {
	st, err := t.Store.State(ctx, name)
	if err != nil {
		return "", err
	}
	if !st.Tick.Before(tick) || len(st.RunJobs) == 0 {
		return DecisionRun, nil
	}
	c, err := tasks.Progress(ctx, t.Insp, t.RDB, st.RunJobs)
	if err != nil {
		return "", fmt.Errorf("schedule %s: last run's progress: %w", name, err)
	}
	if c.Done() {
		return DecisionRun, nil
	}
	return DecisionSkip, nil
}

// build makes the tick's tasks and their names.
func (t *Ticker) build(s Schedule, tick time.Time) ([]*asynq.Task, []tasks.Queued, error) {
	ts := make([]*asynq.Task, len(s.Jobs))
	qs := make([]tasks.Queued, len(s.Jobs))
	for i, j := range s.Jobs {
		task, q, err := tasks.NewTickTask(t.Sites, s.Name, tick, j)
		if err != nil {
			return nil, nil, fmt.Errorf("schedule %s: job %d: %w", s.Name, i+1, err)
		}
		ts[i], qs[i] = task, q
	}
	return ts, qs, nil
}

func (t *Ticker) enqueue(ctx context.Context, ts []*asynq.Task) (enqueued, refused int, err error) {
	b, err := (&tasks.Enqueuer{Client: t.Client, Sites: t.Sites}).Enqueue(ctx, ts)
	if b != nil {
		enqueued, refused = len(b.Enqueued), len(b.Duplicates)
	}
	return enqueued, refused, err
}
