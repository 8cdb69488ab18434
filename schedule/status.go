package schedule

import (
	"context"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/heartbeat"
	"crawlq/tasks"
)

// Status is what `crawlq status` and the dashboard show of a schedule.
type Status struct {
	Name   string `json:"name"`
	Cron   string `json:"cron"`
	Jobs   int    `json:"jobs"`
	Paused bool   `json:"paused"`
	// Next is the next tick (zero while paused).
	Next time.Time `json:"next,omitzero"`
	// NoScheduler says the schedule is active but no `crawlq scheduler`
	// is live (none keeps a heartbeat): its ticks are queued only once
	// one runs.
	NoScheduler bool `json:"no_scheduler,omitempty"`
	State
	// LastRun are the states of the last run's jobs and of the follow-up
	// jobs they queued: Done() says the run is over.
	LastRun *tasks.Counts `json:"last_run,omitempty"`
}

// Running says the last run is still going: the next tick is skipped.
func (s Status) Running() bool { return s.LastRun != nil && !s.LastRun.Done() }

// Statuses reads every schedule with its state and its last run's
// outcome (asking Asynq for each of that run's tasks), and whether a
// scheduler is live to queue its ticks.
func Statuses(ctx context.Context, insp *asynq.Inspector, rdb redis.UniversalClient, now time.Time) ([]Status, error) {
	store := NewStore(rdb)
	all, err := store.List(ctx)
	if err != nil || len(all) == 0 {
		return []Status{}, err
	}
	live, err := heartbeat.ListRole(ctx, rdb, heartbeat.RoleScheduler)
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(all))
	for _, s := range all {
		st, err := statusOf(ctx, store, insp, rdb, s, now)
		if err != nil {
			return nil, err
		}
		st.NoScheduler = !st.Paused && len(live) == 0
		out = append(out, st)
	}
	return out, nil
}

func statusOf(ctx context.Context, store *Store, insp *asynq.Inspector, rdb redis.UniversalClient, s Schedule, now time.Time) (Status, error) {
	st := Status{Name: s.Name, Cron: s.Cron, Jobs: len(s.Jobs), Paused: s.Paused}
	if spec, err := s.Spec(); err == nil && !s.Paused {
		st.Next = spec.Next(now)
	}
	var err error
	if st.State, err = store.State(ctx, s.Name); err != nil {
		return st, err
	}
	if len(st.RunJobs) > 0 {
		c, err := tasks.Progress(ctx, insp, rdb, st.RunJobs)
		if err != nil {
			return st, err
		}
		st.LastRun = &c
	}
	st.RunJobs = nil // the counts say it; the list can be long
	return st, nil
}
