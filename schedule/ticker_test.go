package schedule

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/internal/testredis"
	"crawlq/tasks"
	"crawlq/tasks/site"
	_ "crawlq/tasks/wildberries" // registers wildberries
)

// TestFollowerQueuesForADeadDecider: a scheduler that decided to run a
// tick and died before queueing its jobs loses nothing: the next
// scheduler to fire the tick queues them. Once they are all queued, a
// further firing of the tick queues nothing.
func TestFollowerQueuesForADeadDecider(t *testing.T) {
	ctx := context.Background()
	rdb := testredis.Client(t, testredis.DBSchedule)
	jobs := []tasks.Job{{Site: "wildberries", Kind: "search", Request: site.Request{Query: "кофе"}}}
	s, err := New(site.Default(), "coffee", "@every 10s", jobs, func(int) string { return "job" })
	if err != nil {
		t.Fatal(err)
	}
	store := NewStore(rdb)
	if err := store.Add(ctx, s, false); err != nil {
		t.Fatal(err)
	}
	tick := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	tk := &Ticker{Store: store, Client: asynq.NewClientFromRedisClient(rdb), Insp: asynq.NewInspectorFromRedisClient(rdb),
		RDB: rdb, Sites: site.Default(), Now: func() time.Time { return tick.Add(3 * time.Second) }}
	_, qs, err := tk.build(s, tick)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.decide(ctx, "coffee", tick, DecisionRun, qs); err != nil { // and then it died
		t.Fatal(err)
	}
	f, err := tk.Fire(ctx, "coffee")
	if err != nil {
		t.Fatal(err)
	}
	if f.Outcome != OutcomeRun || f.Decided || f.Enqueued != 1 || !f.Tick.Equal(tick) {
		t.Fatalf("follower's firing: %+v, want the tick's job queued by it", f)
	}
	if _, err := tk.Insp.GetTaskInfo(qs[0].Queue, qs[0].ID); err != nil {
		t.Fatalf("tick's job %s not queued: %v", qs[0].ID, err)
	}
	f, err = tk.Fire(ctx, "coffee")
	if err != nil {
		t.Fatal(err)
	}
	if f.Outcome != OutcomeRun || f.Enqueued != 0 || f.Refused != 0 {
		t.Fatalf("firing after the tick was queued: %+v, want nothing queued or tried", f)
	}
}
