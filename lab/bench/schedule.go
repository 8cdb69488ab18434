package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/internal/redisx"
	"crawlq/schedule"
	"crawlq/tasks"
	"crawlq/tasks/site"
)

// ScheduleOptions configure RunSchedule.
type ScheduleOptions struct {
	// Every is the schedule's period ("@every Every"). Default 2s.
	Every time.Duration
	// Duration is how long the schedulers run. Default 60s.
	Duration time.Duration
	// Schedulers run side by side, each on its own connections. Default 2.
	Schedulers int
	// Jobs is how many jobs the schedule queues per tick. Default 1.
	Jobs int
}

func (o ScheduleOptions) withDefaults() ScheduleOptions {
	if o.Every <= 0 {
		o.Every = 2 * time.Second
	}
	if o.Duration <= 0 {
		o.Duration = 60 * time.Second
	}
	if o.Schedulers <= 0 {
		o.Schedulers = 2
	}
	if o.Jobs <= 0 {
		o.Jobs = 1
	}
	return o
}

// ScheduleResult is what `crawlq bench schedule` reports.
type ScheduleResult struct {
	Every      string `json:"every"`
	Duration   string `json:"duration"`
	Schedulers int    `json:"schedulers"`
	Jobs       int    `json:"jobs_per_tick"`
	// Ticks counts the distinct ticks run or skipped.
	Ticks int `json:"ticks"`
	// Expected counts the ticks every scheduler had time to fire: from the
	// first after the start to the last a period before the end. Missed
	// counts those neither run nor skipped.
	Expected int `json:"expected"`
	// Enqueued counts the jobs queued (each run once by the bench's
	// worker); Refused the enqueues Asynq refused as already queued (the
	// same tick fired by another scheduler).
	Enqueued int64 `json:"enqueued"`
	Refused  int64 `json:"refused"`
	// Duplicates counts the jobs run more than once for a tick, and the
	// ticks queued under more than one task ID per job. Want 0.
	Duplicates int `json:"duplicates"`
	// Skipped counts the ticks skipped because the previous run was still
	// going (the bench's worker finishes each job at once: want 0).
	Skipped int64 `json:"skipped"`
	// Missed counts the expected ticks neither run nor skipped. Want 0.
	Missed int `json:"missed"`
	// Firings counts the schedulers' firings of the schedule.
	Firings int `json:"firings"`
	// EnqueueLagMs is the worst delay from a tick to its jobs' enqueue by
	// the scheduler that decided it.
	EnqueueLagMs int64 `json:"enqueue_lag_ms"`
}

// benchQueue is the queue of the bench's jobs, consumed by its own worker
// only, so a cluster's workers on the same Redis never see them.
const benchQueue = "bench-schedule"

// RunSchedule runs one schedule "@every Every" on o.Schedulers schedulers
// for o.Duration, with a worker that finishes each job at once, and counts
// how each tick was queued. The schedule and its queue are removed after.
func RunSchedule(ctx context.Context, target *redisx.Target, o ScheduleOptions) (*ScheduleResult, error) {
	o = o.withDefaults()
	reg := site.Default().Clone()
	if err := reg.Apply(site.Config{Sites: map[string]site.SiteConfig{"wildberries": {Queue: benchQueue}}}); err != nil {
		return nil, err
	}
	rdb := target.NewClient()
	defer rdb.Close()
	name := "bench-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	s, err := benchSchedule(reg, name, o)
	if err != nil {
		return nil, err
	}
	store := schedule.NewStore(rdb)
	if err := store.Add(ctx, s, false); err != nil {
		return nil, err
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	defer cleanupSchedule(store, insp, name)
	w, err := startCounter(target)
	if err != nil {
		return nil, err
	}
	defer w.srv.Shutdown()
	start := time.Now()
	fired, err := runSchedulers(ctx, target, reg, name, o)
	end := time.Now()
	if err != nil {
		return nil, err
	}
	st, err := store.State(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := w.waitFor(ctx, st.Enqueued, 30*time.Second); err != nil {
		return nil, err
	}
	return tally(o, start, end, st, fired, w.snapshot()), nil
}

func benchSchedule(reg *site.Registry, name string, o ScheduleOptions) (schedule.Schedule, error) {
	jobs := make([]tasks.Job, o.Jobs)
	for i := range jobs {
		jobs[i] = tasks.Job{Site: "wildberries", Kind: "search", Request: site.Request{Query: "bench " + strconv.Itoa(i)}}
	}
	return schedule.New(reg, name, "@every "+o.Every.String(), jobs, func(i int) string { return "job " + strconv.Itoa(i+1) })
}

func cleanupSchedule(store *schedule.Store, insp *asynq.Inspector, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = store.Remove(ctx, name)
	_ = insp.DeleteQueue(benchQueue, true)
}

// runSchedulers runs the schedulers for o.Duration and returns their
// firings.
func runSchedulers(ctx context.Context, target *redisx.Target, reg *site.Registry, name string, o ScheduleOptions) ([]schedule.Fired, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	var mu sync.Mutex
	var fired []schedule.Fired
	var firstErr error
	onFire := func(f schedule.Fired, err error) {
		mu.Lock()
		defer mu.Unlock()
		fired = append(fired, f)
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	var wg sync.WaitGroup
	for range o.Schedulers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rdb := target.NewClient()
			defer rdb.Close()
			err := schedule.Run(ctx, schedule.Config{RDB: rdb, Sites: reg,
				Names: []string{name}, SyncInterval: time.Second, OnFire: onFire})
			if err != nil {
				onFire(schedule.Fired{}, err)
			}
		}()
	}
	wg.Wait()
	return fired, firstErr
}

// counter is the bench's worker: it runs each job at once and counts it.
type counter struct {
	srv  *asynq.Server
	mu   sync.Mutex
	runs map[string]int
}

func startCounter(target *redisx.Target) (*counter, error) {
	c := &counter{runs: map[string]int{}}
	c.srv = asynq.NewServer(target.AsynqOpt(), asynq.Config{Concurrency: 4, Queues: map[string]int{benchQueue: 1},
		TaskCheckInterval: 20 * time.Millisecond, LogLevel: asynq.ErrorLevel})
	err := c.srv.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		c.mu.Lock()
		c.runs[id]++
		c.mu.Unlock()
		return nil
	}))
	return c, err
}

func (c *counter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.runs))
	for k, v := range c.runs {
		out[k] = v
	}
	return out
}

// waitFor waits until n distinct jobs ran, at most limit.
func (c *counter) waitFor(ctx context.Context, n int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for int64(len(c.snapshot())) < n {
		if time.Now().After(deadline) {
			return fmt.Errorf("bench schedule: %d of %d jobs ran within %s", len(c.snapshot()), n, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// tally counts ticks, duplicates and misses from what ran.
func tally(o ScheduleOptions, start, end time.Time, st schedule.State, fired []schedule.Fired, runs map[string]int) *ScheduleResult {
	r := &ScheduleResult{Every: o.Every.String(), Duration: o.Duration.String(), Schedulers: o.Schedulers, Jobs: o.Jobs,
		Enqueued: st.Enqueued, Refused: st.Refused, Skipped: st.Skipped, Firings: len(fired)}
	perTick, dups := runsPerTick(o.Jobs, runs)
	r.Duplicates += dups
	skipped := map[int64]bool{}
	for _, f := range fired {
		if f.Outcome == schedule.OutcomeSkip {
			skipped[f.Tick.Unix()] = true
		}
		if f.Decided && f.Outcome == schedule.OutcomeRun {
			r.EnqueueLagMs = max(r.EnqueueLagMs, lagMs(f))
		}
	}
	every := o.Every.Nanoseconds()
	first := (start.UnixNano()/every + 1) * every
	r.Ticks = len(perTick)
	for sec := range skipped {
		if perTick[sec] == 0 {
			r.Ticks++
		}
	}
	for t := first; t+every <= end.UnixNano(); t += every {
		r.Expected++
		sec := time.Unix(0, t).Unix()
		if perTick[sec] == 0 && !skipped[sec] {
			r.Missed++
		}
	}
	return r
}

// runsPerTick counts the tasks run per tick (Unix second) and the
// duplicates: a task run more than once, a tick with more than jobs tasks.
func runsPerTick(jobs int, runs map[string]int) (map[int64]int, int) {
	perTick, dups := map[int64]int{}, 0
	for id, n := range runs {
		_, tick, ok := tasks.TickOf(id)
		if !ok {
			continue
		}
		perTick[tick.Unix()]++
		dups += n - 1
	}
	for _, n := range perTick {
		dups += max(0, n-jobs)
	}
	return perTick, dups
}

func lagMs(f schedule.Fired) int64 { return f.At.Sub(f.Tick).Milliseconds() }
