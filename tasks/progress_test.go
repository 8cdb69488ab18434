package tasks

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/testredis"
)

// TestProgressTakesInFollowUps: a run is over only when its jobs and the
// follow-up jobs they queued are completed or archived: what a schedule
// asks before its next tick.
func TestProgressTakesInFollowUps(t *testing.T) {
	ctx := context.Background()
	rdb := testredis.Client(t, testredis.DBTasks)
	client := asynq.NewClientFromRedisClient(rdb)
	insp := asynq.NewInspectorFromRedisClient(rdb)
	for _, q := range []struct{ id, queue string }{{"parent", "listing"}, {"child", "product"}} {
		if _, err := client.Enqueue(asynq.NewTask("x", nil), asynq.TaskID(q.id), asynq.Queue(q.queue), asynq.Retention(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		followsIn(ctx, p, "parent", []Queued{{ID: "child", Queue: "product"}})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	srv := asynq.NewServer(asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBTasks}, asynq.Config{
		Queues: map[string]int{"listing": 1}, TaskCheckInterval: 20 * time.Millisecond, LogLevel: asynq.ErrorLevel})
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	run := []Queued{{ID: "parent", Queue: "listing"}}
	deadline := time.Now().Add(10 * time.Second)
	var c Counts
	for c.Completed == 0 {
		var err error
		if c, err = Progress(ctx, insp, rdb, run); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("parent not completed within 10s: %+v", c)
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := Counts{Total: 2, Completed: 1, Pending: 1, FollowUps: 1}
	if c != want || c.Done() {
		t.Fatalf("parent done, child pending: %+v, want %+v (not done)", c, want)
	}
	if err := insp.ArchiveTask("product", "child"); err != nil {
		t.Fatal(err)
	}
	c, err := Progress(ctx, insp, rdb, run)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Done() || c.Failed != 1 {
		t.Fatalf("child archived: %+v, want done with 1 failed", c)
	}
}
