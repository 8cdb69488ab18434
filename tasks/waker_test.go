package tasks

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"go.uber.org/zap"

	"crawlq/internal/testredis"
)

// TestWakeMovesOnlyAJobWaitingForItsTurn: a job handed back has one wake
// per hand-back. A wake moves the job to its queue only while it waits
// in the retry set for a turn due by then: the wake of an earlier turn
// leaves a later turn where it is, and once the job has completed no
// wake runs it again (Asynq's Inspector.RunTask moves a completed task
// back to pending: with it a listing that had ended asked the site for
// the page past its last).
func TestWakeMovesOnlyAJobWaitingForItsTurn(t *testing.T) {
	ctx := context.Background()
	testredis.Client(t, testredis.DBTasks) // flushed
	opt := asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBTasks}
	var runs atomic.Int32
	srv := asynq.NewServer(opt, asynq.Config{Concurrency: 1, Queues: map[string]int{"q": 1},
		RetryDelayFunc: RetryDelay, IsFailure: IsFailure, TaskCheckInterval: 20 * time.Millisecond,
		DelayedTaskCheckInterval: time.Hour, LogLevel: asynq.FatalLevel})
	err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		if runs.Add(1) == 1 {
			return handBack(time.Hour, errors.New("no proxy for an hour"))
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	c := asynq.NewClient(opt)
	defer c.Close()
	if _, err := c.Enqueue(asynq.NewTask("t", nil), asynq.Queue("q"), asynq.TaskID("job"), asynq.Retention(time.Hour)); err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	w := NewWaker(opt, zap.NewNop())
	defer w.Stop()
	waitState(t, insp, asynq.TaskStateRetry)
	steps := []struct {
		name  string
		due   time.Time
		moved bool
		state asynq.TaskState
	}{
		{name: "an earlier turn's wake", due: time.Now(), state: asynq.TaskStateRetry},
		{name: "its turn's wake", due: time.Now().Add(time.Hour), moved: true, state: asynq.TaskStateCompleted},
		{name: "a wake after it completed", due: time.Now().Add(time.Hour), state: asynq.TaskStateCompleted},
	}
	for _, s := range steps {
		moved, err := w.move(ctx, "q", "job", s.due)
		if err != nil || moved != s.moved {
			t.Fatalf("%s: moved %v (%v), want %v", s.name, moved, err, s.moved)
		}
		waitState(t, insp, s.state)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the job ran %d times, want 2 (handed back, then completed)", n)
	}
}

// waitState waits until task "job" of queue q is in state.
func waitState(t *testing.T, insp *asynq.Inspector, state asynq.TaskState) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if info, err := insp.GetTaskInfo("q", "job"); err == nil && info.State == state {
			return
		}
	}
	t.Fatalf("job never %v", state)
}
