package tasks

import (
	"context"
	"errors"
	"time"

	"github.com/hibiken/asynq"
)

// Counts are the states of a batch's tasks.
type Counts struct {
	Total     int `json:"total"`
	Completed int `json:"completed"`
	// Failed are archived: out of retries, or permanently bad.
	Failed   int `json:"failed"`
	Retrying int `json:"retrying"`
	Active   int `json:"active"`
	Pending  int `json:"pending"`
}

// Done says every task of the batch has finished, well or not.
func (c Counts) Done() bool { return c.Completed+c.Failed == c.Total }

// Count reads the state of every task of qs.
func Count(ctx context.Context, insp *asynq.Inspector, qs []Queued) (Counts, error) {
	c := Counts{Total: len(qs)}
	for _, q := range qs {
		info, err := insp.GetTaskInfo(q.Queue, q.ID)
		if errors.Is(err, asynq.ErrTaskNotFound) {
			c.Completed++ // finished and past its retention
			continue
		}
		if err != nil {
			return c, err
		}
		c.add(info.State)
	}
	return c, ctx.Err()
}

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
// every task is done or ctx ends.
func Wait(ctx context.Context, insp *asynq.Inspector, qs []Queued, every time.Duration, progress func(Counts)) (Counts, error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		c, err := Count(ctx, insp, qs)
		if err != nil {
			return c, err
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
