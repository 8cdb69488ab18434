package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/results"
	"crawlq/results/item"
	"crawlq/tasks"
)

// queuedJob is one enqueued job: its task, queue and expected items.
type queuedJob struct {
	id, queue string
	items     []string
}

// finished counts jobs in a final state by the queues' totals; ok is false
// when the queue Redis does not answer.
func (c *cluster) finished(queues []string) (n int, ok bool) {
	for _, q := range queues {
		info, err := c.insp.GetQueueInfo(q)
		if err != nil {
			return 0, false
		}
		n += info.Completed + info.Archived
	}
	return n, true
}

// tallyJobs looks every job up by its task ID.
func (c *cluster) tallyJobs(jobs []queuedJob, res *Result, d *Details) (completed map[string]bool, err error) {
	completed = map[string]bool{}
	for _, j := range jobs {
		info, err := c.insp.GetTaskInfo(j.queue, j.id)
		switch {
		case errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound):
			res.Lost++
			continue
		case err != nil:
			return nil, fmt.Errorf("look up task %s: %w", j.id, err)
		}
		c.countState(info, res, d)
		if info.State == asynq.TaskStateCompleted {
			completed[j.id] = true
		}
	}
	return completed, nil
}

func (c *cluster) countState(info *asynq.TaskInfo, res *Result, d *Details) {
	switch info.State {
	case asynq.TaskStateCompleted:
		res.Completed++
		if emptyResult(info.Result) {
			d.EmptyJobs++
		}
	case asynq.TaskStateArchived:
		res.Archived++
		if info.LastErr == "" {
			d.ArchivedWithoutReason++
		}
		if d.ArchivedReasons == nil {
			d.ArchivedReasons = map[string]int{}
		}
		d.ArchivedReasons[info.LastErr]++
	default:
		d.Unfinished++
	}
}

// streamCounts reads the results stream: records per (site, id) item key.
func (c *cluster) streamCounts(ctx context.Context) (map[string]int, int, error) {
	counts, total := map[string]int{}, 0
	start := "-"
	for {
		msgs, err := c.queueRDB.XRangeN(ctx, results.StreamKey, start, "+", 1000).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, 0, fmt.Errorf("read %s: %w", results.StreamKey, err)
		}
		for _, m := range msgs {
			raw, _ := m.Values["item"].(string)
			var it item.Item
			if json.Unmarshal([]byte(raw), &it) == nil {
				counts[itemKey(it.Site, it.ID)]++
				total++
			}
		}
		if len(msgs) < 1000 {
			return counts, total, nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}

// tallyItems counts duplicates, unexpected items and the missing items of
// completed jobs.
func tallyItems(counts map[string]int, jobs []queuedJob, completed map[string]bool, res *Result, d *Details) {
	expected := map[string]bool{}
	for _, j := range jobs {
		for _, k := range j.items {
			expected[k] = true
			if completed[j.id] && counts[k] == 0 {
				d.MissingItems++
			}
		}
	}
	for k, n := range counts {
		res.DuplicateItems += n - 1
		if !expected[k] {
			d.UnexpectedItems++
		}
	}
}

// emptyResult says a task's result (its tasks.Summary) reports no items.
func emptyResult(raw []byte) bool {
	var s tasks.Summary
	return json.Unmarshal(raw, &s) == nil && s.Empty
}
