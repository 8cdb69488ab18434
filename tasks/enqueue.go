package tasks

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/tasks/site"
)

// Enqueuer puts validated jobs on their queues.
type Enqueuer struct {
	Client *asynq.Client
	Sites  *site.Registry
	// Inspector, when set, tells what a refused duplicate is doing
	// (Queued.State); nil leaves the state empty.
	Inspector *asynq.Inspector
	// Again builds each job as a new run of it (AgainTaskID), queued even
	// when Asynq still keeps the job: `enqueue --again`.
	Again bool
}

// Queued is one task of a batch.
type Queued struct {
	ID    string `json:"id"`
	Queue string `json:"queue"`
	Type  string `json:"type"`
	// State is a refused duplicate's state in Asynq: pending, active,
	// scheduled, retry, archived or completed; empty for a queued task,
	// or when Asynq forgot the duplicate as it was asked.
	State string `json:"state,omitempty"`
	// At is when a completed duplicate completed, an archived one last
	// failed, or a scheduled or retrying one runs next.
	At time.Time `json:"at,omitzero"`
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
// job) without enqueueing it. An AgainTaskID is never a duplicate, so the
// job's own ID is the one Asynq refused.
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
		t, err := e.newTask(j)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", prefix(i), err)
		}
		out = append(out, t)
	}
	return out, nil
}

func (e *Enqueuer) newTask(j Job) (*asynq.Task, error) {
	if !e.Again {
		return NewTask(e.Sites, j)
	}
	n, err := j.Normalize(e.Sites)
	if err != nil {
		return nil, err
	}
	n.Run = newRun()
	return NewTask(e.Sites, n, asynq.TaskID(AgainTaskID(n)))
}

// Enqueue queues built tasks, counting the refused duplicates.
func (e *Enqueuer) Enqueue(ctx context.Context, ts []*asynq.Task) (*Batch, error) {
	b := &Batch{Enqueued: []Queued{}, Duplicates: []Queued{}}
	for _, t := range ts {
		info, err := e.Client.EnqueueContext(ctx, t)
		switch {
		case err == nil:
			b.Enqueued = append(b.Enqueued, Queued{ID: info.ID, Queue: info.Queue, Type: info.Type})
		case errors.Is(err, asynq.ErrTaskIDConflict):
			b.Duplicates = append(b.Duplicates, e.stateOf(queuedOf(e.Sites, t)))
		default:
			return b, fmt.Errorf("enqueue %s: %w", t.Type(), err)
		}
	}
	return b, nil
}

// stateOf fills in what the duplicate q is doing, as Asynq tells it.
func (e *Enqueuer) stateOf(q Queued) Queued {
	if e.Inspector == nil {
		return q
	}
	info, err := e.Inspector.GetTaskInfo(q.Queue, q.ID)
	if err != nil {
		return q // forgotten since it was refused: State stays empty
	}
	q.State = info.State.String()
	switch info.State {
	case asynq.TaskStateCompleted:
		q.At = info.CompletedAt
	case asynq.TaskStateArchived:
		q.At = info.LastFailedAt
	case asynq.TaskStateScheduled, asynq.TaskStateRetry:
		q.At = info.NextProcessAt
	}
	return q
}

// Refusal says, in words, why the duplicate q was not queued, relative to
// now: "completed 5m ago", "running", "queued"…, and whether --again
// would run it.
func (q Queued) Refusal(now time.Time) string {
	switch q.State {
	case "pending":
		return "already queued, not queued twice"
	case "active":
		return "running now, not queued twice"
	case "scheduled":
		return "scheduled to run in " + roughly(q.At.Sub(now)) + ", not queued twice"
	case "retry":
		return "failed, retrying in " + roughly(q.At.Sub(now)) + ", not queued twice"
	case "completed":
		return "completed " + roughly(now.Sub(q.At)) + " ago; --again runs it again"
	case "archived":
		return "failed and archived " + roughly(now.Sub(q.At)) + " ago; --again runs it again"
	}
	return "queued or finished moments ago, not queued twice"
}

// roughly is d for people: seconds under a minute, else whole minutes
// ("42s", "5m", "1h5m").
func roughly(d time.Duration) string {
	if d < time.Minute {
		return max(d, 0).Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
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
