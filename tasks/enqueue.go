package tasks

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hibiken/asynq"

	"crawlq/tasks/site"
)

// Enqueuer puts validated jobs on their queues.
type Enqueuer struct {
	Client *asynq.Client
	Sites  *site.Registry
}

// Queued is one task of a batch.
type Queued struct {
	ID    string `json:"id"`
	Queue string `json:"queue"`
	Type  string `json:"type"`
}

// Batch is what one Enqueue call did.
type Batch struct {
	// Enqueued are the tasks now queued.
	Enqueued []Queued `json:"enqueued"`
	// Duplicates are tasks refused because the same job is already queued
	// (or finished within its retention); they are not run twice.
	Duplicates []Queued `json:"duplicates"`
}

// queuedOf names a task NewTask built (its ID and queue follow from its
// job) without enqueueing it.
func queuedOf(reg *site.Registry, t *asynq.Task) Queued {
	j, _ := DecodeJob(t.Payload())
	return Queued{ID: j.TaskID(), Queue: queueOf(reg, j), Type: t.Type()}
}

// All is every task of the batch, new and duplicate: what --wait watches.
func (b *Batch) All() []Queued { return append(append([]Queued{}, b.Enqueued...), b.Duplicates...) }

// Build validates every job first and builds its task; the first bad job
// is an error naming it (prefix) and its field, and nothing is built.
func (e *Enqueuer) Build(jobs []Job, prefix func(i int) string) ([]*asynq.Task, error) {
	out := make([]*asynq.Task, 0, len(jobs))
	for i, j := range jobs {
		t, err := NewTask(e.Sites, j)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", prefix(i), err)
		}
		out = append(out, t)
	}
	return out, nil
}

// Enqueue queues built tasks, counting the refused duplicates.
func (e *Enqueuer) Enqueue(ctx context.Context, ts []*asynq.Task) (*Batch, error) {
	b := &Batch{}
	for _, t := range ts {
		info, err := e.Client.EnqueueContext(ctx, t)
		switch {
		case err == nil:
			b.Enqueued = append(b.Enqueued, Queued{ID: info.ID, Queue: info.Queue, Type: info.Type})
		case errors.Is(err, asynq.ErrTaskIDConflict):
			b.Duplicates = append(b.Duplicates, queuedOf(e.Sites, t))
		default:
			return b, fmt.Errorf("enqueue %s: %w", t.Type(), err)
		}
	}
	return b, nil
}

// MaxLine is the longest line ReadJobs accepts.
const MaxLine = 1 << 20

// ReadJobs reads one JSON job per line (blank lines and # comments
// skipped). The first malformed line is an error "NAME:LINE: reason".
// It returns the jobs and, per job, its "NAME:LINE" for later errors.
func ReadJobs(r io.Reader, name string) ([]Job, []string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), MaxLine)
	var jobs []Job
	var where []string
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		j, err := DecodeJob([]byte(line))
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		jobs = append(jobs, j)
		where = append(where, fmt.Sprintf("%s:%d", name, n))
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(jobs) == 0 {
		return nil, nil, fmt.Errorf("%s: no jobs in the file", name)
	}
	return jobs, where, nil
}
