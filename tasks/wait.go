package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Counts are the states of a batch's tasks.
type Counts struct {
	Total     int `json:"total"`
	Completed int `json:"completed"`
	// Empty are the completed tasks that found no items: a true "no
	// results" (their Summary says empty).
	Empty int `json:"empty"`
	// Failed are archived: out of retries, or permanently bad.
	Failed   int `json:"failed"`
	Retrying int `json:"retrying"`
	Active   int `json:"active"`
	Pending  int `json:"pending"`
	// FollowUps is how many of Total the batch's jobs queued themselves
	// (product and item jobs of their listing pages), when followed.
	FollowUps int `json:"follow_ups"`
}

// CompletedText says how many completed and how many of them were
// empty: "12 completed, 3 of them empty".
func (c Counts) CompletedText() string {
	if c.Empty == 0 {
		return fmt.Sprintf("%d completed", c.Completed)
	}
	return fmt.Sprintf("%d completed, %d of them empty", c.Completed, c.Empty)
}

// Done says every task of the batch has finished, well or not.
func (c Counts) Done() bool { return c.Completed+c.Failed == c.Total }

func (c *Counts) add(s asynq.TaskState) {
	switch s {
	case asynq.TaskStateCompleted:
		c.Completed++
	case asynq.TaskStateArchived:
		c.Failed++
	case asynq.TaskStateRetry:
		c.Retrying++
	case asynq.TaskStateActive:
		c.Active++
	default:
		c.Pending++
	}
}

// Wait polls the batch every interval, calling progress each time, until
// every task is done or ctx ends. A completed task is not asked again. With
// follow set (the Redis the workers write results to), the batch takes in
// the follow-up jobs of each of its finished jobs, and theirs in turn, so
// it ends when the whole crawl has.
func Wait(ctx context.Context, insp *asynq.Inspector, follow redis.UniversalClient, qs []Queued, every time.Duration, progress func(Counts)) (Counts, error) {
	t := time.NewTicker(every)
	defer t.Stop()
	b := newWaitBatch(qs)
	for {
		c, finished, err := b.count(ctx, insp)
		if err != nil {
			return c, err
		}
		if follow != nil {
			added, err := b.follow(ctx, follow, finished)
			if err != nil {
				return c, err
			}
			if added > 0 {
				continue // count the new ones before reporting
			}
		}
		progress(c)
		if c.Done() {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-t.C:
		}
	}
}

// waitBatch is the growing task list of a Wait.
type waitBatch struct {
	qs []Queued
	in map[string]bool
	// completed are the tasks seen completed: that no longer changes, and
	// their follow-ups were taken in then. (An archived task may be run
	// again from the web UI, so it is asked again.)
	completed map[string]bool
	// empty are the completed tasks whose summary says they found nothing.
	empty     map[string]bool
	followUps int
}

func newWaitBatch(qs []Queued) *waitBatch {
	b := &waitBatch{qs: qs, in: map[string]bool{}, completed: map[string]bool{}, empty: map[string]bool{}}
	for _, q := range qs {
		b.in[q.ID] = true
	}
	return b
}

// count reads the state of every task not seen completed before, and
// returns the IDs of those newly completed and of the archived ones.
func (b *waitBatch) count(ctx context.Context, insp *asynq.Inspector) (Counts, []string, error) {
	c := Counts{Total: len(b.qs), FollowUps: b.followUps}
	var finished []string
	for _, q := range b.qs {
		if b.completed[q.ID] {
			c.Completed++
			c.Empty += btoi(b.empty[q.ID])
			continue
		}
		st := asynq.TaskStateCompleted // not found: finished and past its retention
		info, err := insp.GetTaskInfo(q.Queue, q.ID)
		switch {
		case err == nil:
			st = info.State
		case !errors.Is(err, asynq.ErrTaskNotFound):
			return c, nil, err
		}
		c.add(st)
		switch st {
		case asynq.TaskStateCompleted:
			b.completed[q.ID] = true
			b.empty[q.ID] = info != nil && emptyResult(info.Result)
			c.Empty += btoi(b.empty[q.ID])
			finished = append(finished, q.ID)
		case asynq.TaskStateArchived:
			finished = append(finished, q.ID)
		}
	}
	return c, finished, ctx.Err()
}

// follow takes in the follow-ups of finished tasks and returns how many
// new tasks joined.
func (b *waitBatch) follow(ctx context.Context, rdb redis.UniversalClient, finished []string) (int, error) {
	fs, err := FollowUps(ctx, rdb, finished)
	if err != nil {
		return 0, err
	}
	added := 0
	for _, id := range finished {
		for _, q := range fs[id] {
			if !b.in[q.ID] {
				b.in[q.ID] = true
				b.qs = append(b.qs, q)
				added++
			}
		}
	}
	b.followUps += added
	return added, nil
}

// emptyResult says a task's result (its Summary) reports no items.
func emptyResult(raw []byte) bool {
	var s Summary
	return json.Unmarshal(raw, &s) == nil && s.Empty
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Progress counts the states of qs and of the follow-up jobs their finished
// jobs queued (and theirs in turn) once, without waiting: what a schedule
// asks of its last run. A task no longer found is counted completed.
func Progress(ctx context.Context, insp *asynq.Inspector, follow redis.UniversalClient, qs []Queued) (Counts, error) {
	b := newWaitBatch(qs)
	for {
		c, finished, err := b.count(ctx, insp)
		if err != nil || follow == nil {
			return c, err
		}
		added, err := b.follow(ctx, follow, finished)
		if err != nil || added == 0 {
			return c, err
		}
	}
}
