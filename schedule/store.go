package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/numstr"
	"crawlq/tasks"
)

// Store keeps the schedules and their run state in Redis.
type Store struct {
	rdb redis.UniversalClient
}

// NewStore returns a store on rdb (the queue's Redis).
func NewStore(rdb redis.UniversalClient) *Store { return &Store{rdb: rdb} }

// Add stores s; with replace it overwrites a schedule of the same name
// (keeping its run state), else that is ErrExists.
func (st *Store) Add(ctx context.Context, s Schedule, replace bool) error {
	s.Paused = false // kept in keyPaused
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if replace {
		return st.rdb.HSet(ctx, keyDefs, s.Name, b).Err()
	}
	ok, err := st.rdb.HSetNX(ctx, keyDefs, s.Name, b).Result()
	if err != nil {
		return fmt.Errorf("add schedule %s: %w", s.Name, err)
	}
	if !ok {
		return fmt.Errorf("%w: %s", ErrExists, s.Name)
	}
	return nil
}

// Get reads one schedule.
func (st *Store) Get(ctx context.Context, name string) (Schedule, error) {
	raw, err := st.rdb.HGet(ctx, keyDefs, name).Result()
	if errors.Is(err, redis.Nil) {
		return Schedule{}, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err != nil {
		return Schedule{}, fmt.Errorf("read schedule %s: %w", name, err)
	}
	s, err := decode(name, raw)
	if err != nil {
		return s, err
	}
	s.Paused, err = st.rdb.SIsMember(ctx, keyPaused, name).Result()
	return s, err
}

func decode(name, raw string) (Schedule, error) {
	var s Schedule
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return s, fmt.Errorf("schedule %s: bad record: %w", name, err)
	}
	return s, nil
}

// List reads every schedule, sorted by name.
func (st *Store) List(ctx context.Context) ([]Schedule, error) {
	var defs *redis.MapStringStringCmd
	var ps *redis.StringSliceCmd
	_, err := st.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		defs, ps = p.HGetAll(ctx, keyDefs), p.SMembers(ctx, keyPaused)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	all, paused := defs.Val(), ps.Val()
	isPaused := map[string]bool{}
	for _, n := range paused {
		isPaused[n] = true
	}
	out := make([]Schedule, 0, len(all))
	for name, raw := range all {
		s, err := decode(name, raw)
		if err != nil {
			return nil, err
		}
		s.Paused = isPaused[name]
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Remove deletes a schedule and its run state (one slot, one transaction).
// Jobs it queued stay queued.
func (st *Store) Remove(ctx context.Context, name string) error {
	var n *redis.IntCmd
	_, err := st.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		n = p.HDel(ctx, keyDefs, name)
		p.SRem(ctx, keyPaused, name)
		p.Del(ctx, keyState(name))
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove schedule %s: %w", name, err)
	}
	if n.Val() == 0 {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return nil
}

// SetPaused pauses or resumes a schedule: a paused one queues nothing.
// (A script: the schedule must exist, checked in the same step.)
func (st *Store) SetPaused(ctx context.Context, name string, paused bool) error {
	n, err := setPausedScript.Run(ctx, st.rdb, []string{keyDefs, keyPaused}, name, btoa(paused)).Int()
	if err != nil {
		return fmt.Errorf("pause schedule %s: %w", name, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return nil
}

func btoa(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// State is what a schedule's ticks did.
type State struct {
	// Tick is the last tick decided, Decision what: DecisionRun or
	// DecisionSkip.
	Tick     time.Time `json:"tick,omitzero"`
	Decision string    `json:"decision,omitempty"`
	// RunTick is the last tick run; RunJobs the jobs it queued (their
	// follow-ups are found through them).
	RunTick time.Time      `json:"run_tick,omitzero"`
	RunJobs []tasks.Queued `json:"run_jobs,omitempty"`
	// Runs and Skipped count the ticks run and skipped; SkipTick is the
	// last skipped.
	Runs     int64     `json:"runs"`
	Skipped  int64     `json:"skipped"`
	SkipTick time.Time `json:"skip_tick,omitzero"`
	// Enqueued counts the jobs queued by all runs; Refused the enqueues
	// Asynq refused as already queued (the same tick fired by a second
	// scheduler).
	Enqueued int64 `json:"enqueued"`
	Refused  int64 `json:"refused"`
}

// Decisions for a tick.
const (
	DecisionRun  = "run"
	DecisionSkip = "skip"
)

// State reads a schedule's run state (zero before its first tick).
func (st *Store) State(ctx context.Context, name string) (State, error) {
	m, err := st.rdb.HGetAll(ctx, keyState(name)).Result()
	if err != nil {
		return State{}, fmt.Errorf("schedule %s: read state: %w", name, err)
	}
	return parseState(m)
}

func parseState(m map[string]string) (State, error) {
	s := State{Tick: unix(m[stateTick]), Decision: m[stateDecision], RunTick: unix(m[stateRunTick]),
		Runs: numstr.Int64(m[stateRuns]), Skipped: numstr.Int64(m[stateSkipped]), SkipTick: unix(m[stateSkipTick]),
		Enqueued: numstr.Int64(m[stateEnqueued]), Refused: numstr.Int64(m[stateRefused])}
	if raw := m[stateRunJobs]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &s.RunJobs); err != nil {
			return s, fmt.Errorf("bad run jobs in state: %w", err)
		}
	}
	return s, nil
}

func unix(s string) time.Time {
	if n := numstr.Int64(s); n > 0 {
		return time.Unix(n, 0).UTC()
	}
	return time.Time{}
}

// decided is decide's answer.
type decided struct {
	// Fresh says this call decided; Stale that a later tick was decided.
	Fresh, Stale bool
	Decision     string
	// Queued says the tick's jobs were all queued already.
	Queued bool
}

// decide records decision for tick unless one was recorded for it (or a
// later tick) already: the first scheduler to decide wins, the others
// follow it (lua/decide.lua).
func (st *Store) decide(ctx context.Context, name string, tick time.Time, decision string, jobs []tasks.Queued) (decided, error) {
	b, err := json.Marshal(jobs)
	if err != nil {
		return decided{}, err
	}
	res, err := decideScript.Run(ctx, st.rdb, []string{keyState(name)}, tick.Unix(), decision, b).StringSlice()
	if err != nil || len(res) != 3 {
		return decided{}, fmt.Errorf("schedule %s: decide tick %s: %v", name, tick.Format(time.RFC3339), err)
	}
	return decided{Fresh: res[0] == "new", Stale: res[0] == "old", Decision: res[1], Queued: res[2] == "1"}, nil
}

// count adds a run's enqueue outcome to the schedule's state and, when
// all went in, marks the tick's jobs queued.
func (st *Store) count(ctx context.Context, name string, tick time.Time, enqueued, refused int, all bool) error {
	_, err := st.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if all {
			p.HSet(ctx, keyState(name), stateQueued, tick.Unix())
		}
		p.HIncrBy(ctx, keyState(name), stateEnqueued, int64(enqueued))
		p.HIncrBy(ctx, keyState(name), stateRefused, int64(refused))
		return nil
	})
	return err
}
