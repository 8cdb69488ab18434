package schedule_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/testredis"
	"crawlq/schedule"
	"crawlq/tasks"
	"crawlq/tasks/site"
	_ "crawlq/tasks/wildberries" // registers wildberries
)

// addSchedule stores a schedule of one wildberries search.
func addSchedule(t *testing.T, rdb redis.UniversalClient, name, cron string) schedule.Schedule {
	t.Helper()
	jobs := []tasks.Job{{Site: "wildberries", Kind: "search", Request: site.Request{Query: "кроссовки"}}}
	s, err := schedule.New(site.Default(), name, cron, jobs, func(int) string { return "job" })
	if err != nil {
		t.Fatal(err)
	}
	if err := schedule.NewStore(rdb).Add(context.Background(), s, false); err != nil {
		t.Fatal(err)
	}
	return s
}

// worker is a real Asynq server on the wildberries queue whose handler
// records each task it runs and finishes it at once.
type worker struct {
	mu   sync.Mutex
	runs map[string]int // task ID → times run
	srv  *asynq.Server
}

func startWorker(t *testing.T, db int) *worker {
	t.Helper()
	w := &worker{runs: map[string]int{}}
	w.srv = asynq.NewServer(asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: db}, asynq.Config{
		Concurrency: 2, Queues: map[string]int{"wildberries": 1}, TaskCheckInterval: 20 * time.Millisecond,
		LogLevel: asynq.ErrorLevel,
	})
	err := w.srv.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		w.mu.Lock()
		w.runs[id]++
		w.mu.Unlock()
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.srv.Shutdown)
	return w
}

func (w *worker) snapshot() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.runs))
	for k, v := range w.runs {
		out[k] = v
	}
	return out
}

// fires collects the firings of the schedulers of a test.
type fires struct {
	mu  sync.Mutex
	all []schedule.Fired
	err error
}

func (f *fires) add(x schedule.Fired, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.all = append(f.all, x)
	if err != nil && f.err == nil {
		f.err = err
	}
}

func (f *fires) snapshot() ([]schedule.Fired, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]schedule.Fired(nil), f.all...), f.err
}

// startSchedulers runs n schedulers, each on its own Redis client as on
// its own server; they stop when stop is called or the test ends.
func startSchedulers(t *testing.T, db, n int, f *fires) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		rdb := testredis.NewClient(t, db)
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := schedule.Run(ctx, schedule.Config{RDB: rdb, SyncInterval: 100 * time.Millisecond, OnFire: f.add})
			if err != nil {
				f.add(schedule.Fired{}, err)
			}
		}()
	}
	stop = func() { cancel(); wg.Wait() }
	t.Cleanup(stop)
	return stop
}

// waitFor polls cond every 20ms until it holds, failing after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTwoSchedulersQueueEachTickOnce: two schedulers run one schedule of
// @every 1s while a worker finishes each job at once: every tick's job is
// queued and run exactly once, consecutive ticks all run (none skipped,
// none missed), and each tick was decided by one scheduler only.
func TestTwoSchedulersQueueEachTickOnce(t *testing.T) {
	db := testredis.DBSchedule
	rdb := testredis.Client(t, db)
	addSchedule(t, rdb, "every-second", "@every 1s")
	w := startWorker(t, db)
	f := &fires{}
	stop := startSchedulers(t, db, 2, f)

	const ticks = 4
	waitFor(t, 15*time.Second, "4 ticks run", func() bool { return len(w.snapshot()) >= ticks })
	stop() // what follows looks at final figures
	st, err := schedule.NewStore(rdb).State(context.Background(), "every-second")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the worker to run every job queued", func() bool { return int64(len(w.snapshot())) == st.Enqueued })
	runs := w.snapshot()
	fired, err := f.snapshot()
	if err != nil {
		t.Fatalf("a firing failed: %v", err)
	}
	seen := map[int64]bool{}
	var first, last int64
	for id, n := range runs {
		name, tick, ok := tasks.TickOf(id)
		if !ok || name != "every-second" {
			t.Fatalf("task %s: not a tick's task ID", id)
		}
		if n != 1 {
			t.Errorf("task %s ran %d times", id, n)
		}
		sec := tick.Unix()
		if seen[sec] {
			t.Errorf("tick %s queued twice (two task IDs)", tick)
		}
		seen[sec] = true
		if first == 0 || sec < first {
			first = sec
		}
		last = max(last, sec)
	}
	for sec := first; sec <= last; sec++ {
		if !seen[sec] {
			t.Errorf("tick %s missed between the first and the last", time.Unix(sec, 0).UTC())
		}
	}
	deciders, followers := map[int64]int{}, 0
	for _, x := range fired {
		if x.Outcome == schedule.OutcomeRun && !x.Decided {
			followers++ // the other scheduler's firing of a decided tick
		}
		if x.Outcome == schedule.OutcomeSkip {
			t.Errorf("tick %s skipped though the worker finishes each job at once", x.Tick)
		}
		if x.Decided {
			deciders[x.Tick.Unix()]++
		}
	}
	for sec, n := range deciders {
		if n != 1 {
			t.Errorf("tick %s decided %d times", time.Unix(sec, 0).UTC(), n)
		}
	}
	if followers == 0 {
		t.Error("no firing followed another scheduler's decision: did both schedulers run?")
	}
	if st.Skipped != 0 || st.Runs != int64(len(seen)) || st.Enqueued != int64(len(seen)) {
		t.Errorf("state: %d runs, %d enqueued, %d skipped; want %d ticks run and queued once, none skipped",
			st.Runs, st.Enqueued, st.Skipped, len(seen))
	}
}

// TestTickSkippedWhilePreviousRunGoing: with no worker, the first tick's
// job stays pending, so the next ticks are skipped and each is counted
// once however many schedulers fire it; once a worker finishes the job,
// the next tick runs again.
func TestTickSkippedWhilePreviousRunGoing(t *testing.T) {
	db := testredis.DBSchedule
	rdb := testredis.Client(t, db)
	addSchedule(t, rdb, "slow", "@every 1s")
	f := &fires{}
	startSchedulers(t, db, 2, f)
	store := schedule.NewStore(rdb)
	state := func() schedule.State {
		st, err := store.State(context.Background(), "slow")
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	waitFor(t, 10*time.Second, "2 ticks skipped", func() bool { return state().Skipped >= 2 })
	st := state()
	if st.Runs != 1 {
		t.Fatalf("%d runs while the first run's job is pending, want 1", st.Runs)
	}
	// Each skipped tick is counted once: the state's count is the number
	// of distinct ticks the firings skipped up to its last skip (waited
	// for, as a firing reports after it recorded its decision).
	distinct := func() int {
		fired, err := f.snapshot()
		if err != nil {
			t.Fatal(err)
		}
		skipped := map[int64]bool{}
		for _, x := range fired {
			if x.Outcome == schedule.OutcomeSkip && !x.Tick.After(st.SkipTick) {
				skipped[x.Tick.Unix()] = true
			}
		}
		return len(skipped)
	}
	waitFor(t, 5*time.Second, "the state's skip count to match the ticks skipped", func() bool { return int64(distinct()) == st.Skipped })
	startWorker(t, db)
	waitFor(t, 10*time.Second, "a second run after the first finished", func() bool { return state().Runs >= 2 })
}

// waitsEnd reads the next n waits schedulers began on clock and checks
// each ends at want.
func waitsEnd(t *testing.T, clock *fakeClock, n int, want time.Time) {
	t.Helper()
	for range n {
		select {
		case at := <-clock.waits:
			if !at.Equal(want) {
				t.Fatalf("a scheduler waits until %s, want %s (the NEXT shown)", at, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no scheduler began to wait within 30s")
		}
	}
}

// TestTickQueuedAtTheNextShown: a schedule @every 15s at 12:00:07 shows
// NEXT 12:00:15 (a multiple of 15s since the epoch); two schedulers on an
// injected clock both wait until exactly then, and when the clock gets
// there each fires the tick 12:00:15 at 12:00:15, which is queued once,
// its task ID carrying that tick. Then both wait for the NEXT shown at
// 12:00:15: 12:00:30.
func TestTickQueuedAtTheNextShown(t *testing.T) {
	db := testredis.DBSchedule
	rdb := testredis.Client(t, db)
	addSchedule(t, rdb, "every-15s", "@every 15s")
	insp := asynq.NewInspectorFromRedisClient(rdb)
	shown := func(now time.Time) time.Time {
		ss, err := schedule.Statuses(context.Background(), insp, rdb, now)
		if err != nil || len(ss) != 1 {
			t.Fatalf("statuses: %+v %v", ss, err)
		}
		return ss[0].Next
	}
	t0 := time.Date(2026, 12, 3, 12, 0, 7, 0, time.UTC)
	next := shown(t0)
	if want := t0.Add(8 * time.Second); !next.Equal(want) {
		t.Fatalf("NEXT at %s: %s, want %s", t0, next, want)
	}
	clock := newFakeClock(t0)
	fired := make(chan schedule.Fired, 4)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for range 2 {
		wg.Go(func() {
			_ = schedule.Run(ctx, schedule.Config{RDB: testredis.NewClient(t, db), Clock: clock, SyncInterval: time.Hour,
				OnFire: func(f schedule.Fired, err error) {
					if err != nil {
						t.Errorf("firing: %v", err)
					}
					fired <- f
				}})
		})
	}
	waitsEnd(t, clock, 2, next)
	clock.Set(next)
	decided := 0
	for range 2 {
		f := <-fired
		if !f.At.Equal(next) || !f.Tick.Equal(next) || f.Outcome != schedule.OutcomeRun {
			t.Fatalf("firing %+v: want the tick %s run at %s", f, next, next)
		}
		if f.Decided {
			decided++
		}
	}
	queued, err := insp.ListPendingTasks("wildberries")
	if err != nil || len(queued) != 1 || decided != 1 {
		t.Fatalf("%d tasks queued (%v), %d deciders; want the tick's one task, decided once", len(queued), err, decided)
	}
	if name, tick, ok := tasks.TickOf(queued[0].ID); !ok || name != "every-15s" || !tick.Equal(next) {
		t.Fatalf("queued task %s: tick %s of %q, want the NEXT shown, %s", queued[0].ID, tick, name, next)
	}
	then := shown(next)
	if !then.Equal(next.Add(15 * time.Second)) {
		t.Fatalf("NEXT at %s: %s, want %s", next, then, next.Add(15*time.Second))
	}
	waitsEnd(t, clock, 2, then)
}
