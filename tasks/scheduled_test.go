package tasks

import (
	"testing"
	"time"

	"crawlq/tasks/site"
)

// TestTickTaskIDs: a tick's task IDs carry the schedule and the tick, so
// two schedulers derive the same ID for a tick and a new one for the next;
// a follow-up of a tick's job carries that tick, any other follow-up keeps
// the job's own ID.
func TestTickTaskIDs(t *testing.T) {
	j := Job{Site: "wildberries", Kind: "search", Request: site.Request{Query: "кроссовки"}}
	tick := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	id := TickTaskID("sneakers", tick, j)
	if id != TickTaskID("sneakers", tick, j) || id == TickTaskID("sneakers", tick.Add(2*time.Second), j) {
		t.Fatalf("tick IDs not derived from (schedule, tick): %s", id)
	}
	name, got, ok := TickOf(id)
	if !ok || name != "sneakers" || !got.Equal(tick) {
		t.Fatalf("TickOf(%s) = %s, %s, %v", id, name, got, ok)
	}
	product := Job{Site: "wildberries", Kind: "product", Request: site.Request{ID: "12345"}}
	for _, c := range []struct {
		name, parent, want string
	}{
		{"follow-up of a tick's job", id, TickTaskID("sneakers", tick, product)},
		{"follow-up of an enqueued job", j.TaskID(), product.TaskID()},
		{"follow-up of a job queued again", AgainTaskID(Job{Run: "r1"}), "again:r1:" + product.TaskID()},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := followUpID(c.parent, product); got != c.want {
				t.Errorf("followUpID(%s) = %s, want %s", c.parent, got, c.want)
			}
		})
	}
	if _, _, ok := TickOf("wildberries:search:abc"); ok {
		t.Error("TickOf accepted a plain job ID")
	}
}
