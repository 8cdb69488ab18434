package tasks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/results/item"
	"crawlq/tasks"
)

// TestBacklogGatePausesAndResumes: with a sink group and a small bound,
// more unacknowledged entries than the bound pause jobs (Wait holds them,
// Reason says why); once the sink acknowledges them, jobs go again.
func TestBacklogGatePausesAndResumes(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBTasks)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := results.NewSink(rdb, 0)
	for p := 1; p <= 3; p++ {
		its := make([]item.Item, 10)
		for i := range its {
			its[i] = item.Item{Site: "ozon", ID: fmt.Sprint(p, "-", i)}
		}
		if err := s.WritePage(ctx, "t", p, its); err != nil {
			t.Fatal(err)
		}
	}
	g := tasks.NewBacklogGate(rdb, 20, zap.NewNop())
	done := make(chan struct{})
	go func() { defer close(done); g.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := results.MarkSink(ctx, rdb); err != nil { // 30 entries now wait for a sink
		t.Fatal(err)
	}
	waitCond(t, "the gate paused", func() bool { return g.Reason() != "" })
	if r := g.Reason(); !strings.Contains(r, "results backlog 30 > 20") {
		t.Fatalf("reason %q, want the backlog and its bound", r)
	}
	held, stop := context.WithCancel(ctx)
	stop()
	if err := g.Wait(held); err == nil {
		t.Fatal("Wait let a job start while paused")
	}
	res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: results.SinkGroup, Consumer: "c",
		Streams: []string{results.StreamKey, ">"}, Count: 100}).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res[0].Messages {
		rdb.XAck(ctx, results.StreamKey, results.SinkGroup, m.ID)
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := g.Wait(wctx); err != nil {
		t.Fatalf("the gate did not resume once the sink caught up: %v", err)
	}
	if g.Reason() != "" || g.Backlog() != 0 {
		t.Fatalf("after resuming: reason %q, backlog %d", g.Reason(), g.Backlog())
	}
}

func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 10s", what)
}
