package results

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"crawlq/internal/testredis"
	"crawlq/results/item"
)

// TestPageWaitsForTheReplica: on a Sentinel group, a sink with replicas
// counts a page written only once the replica acknowledged it; with the
// replica cut off, WritePage fails with ErrNotReplicated (the page is on
// the master: a retry reads its progress and goes on), while a sink
// without replicas would call it written.
func TestPageWaitsForTheReplica(t *testing.T) {
	ctx := context.Background()
	g, rdb := testredis.SentinelClient(t, 0)
	waited := NewSink(rdb, 0).WithReplicas(1, 300*time.Millisecond)
	plain := NewSink(rdb, 0)
	task := fmt.Sprint("replicated-", time.Now().UnixNano())
	items := []item.Item{{Site: "wildberries", ID: "1", Title: "t"}}
	if err := waited.WritePage(ctx, task, 1, items); err != nil {
		t.Fatalf("page 1 with the replica online: %v", err)
	}
	woke, err := g.CutOffReplica(ctx, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.WritePage(ctx, task+"-plain", 1, items); err != nil {
		t.Errorf("page without replicas, replica cut off: %v, want written", err)
	}
	if err := waited.WritePage(ctx, task, 2, items); !errors.Is(err, ErrNotReplicated) {
		t.Errorf("page 2 with the replica cut off: %v, want ErrNotReplicated", err)
	}
	if p, err := waited.Progress(ctx, task); err != nil || p.Pages != 2 {
		t.Errorf("progress %+v %v: want page 2 on the master, for the retry to see", p, err)
	}
	<-woke
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := g.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
}
