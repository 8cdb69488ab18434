package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/results/item"
)

// Keys of the results store. They carry the job-side hash tag {jobs}
// (JobsTag), with the session records and follow-up sets, so a page's
// transaction touches one Redis Cluster slot.
const (
	// JobsTag is the key prefix with the hash tag of every job-side key:
	// the stream, progress, session records, follow-up sets.
	JobsTag = "crawlq:{jobs}:"
	// StreamKey is the Redis stream of items.
	StreamKey = JobsTag + "results"
	// progressPrefix + task ID is a HASH: pages -> pages done, items -> count.
	progressPrefix = JobsTag + "progress:"
)

// DefaultMaxLen bounds the stream (approximately, with MAXLEN ~).
const DefaultMaxLen = 1_000_000

// Sink writes items to the stream.
type Sink struct {
	rdb    redis.UniversalClient
	maxLen int64
	// replicas, replicaTimeout: WithReplicas (replicated.go).
	replicas       int
	replicaTimeout time.Duration
}

// NewSink builds a Sink; maxLen <= 0 means DefaultMaxLen.
func NewSink(rdb redis.UniversalClient, maxLen int64) *Sink {
	if maxLen <= 0 {
		maxLen = DefaultMaxLen
	}
	return &Sink{rdb: rdb, maxLen: maxLen}
}

// Progress is how far a job got: pages done and items written.
type Progress struct {
	Pages int
	Items int
}

// Progress reads a task's progress (zero when it has none).
func (s *Sink) Progress(ctx context.Context, task string) (Progress, error) {
	return progressOf(task, s.rdb.HGetAll(ctx, progressPrefix+task))
}

// Redis is the client the sink writes with.
func (s *Sink) Redis() redis.UniversalClient { return s.rdb }

// ProgressIn queues the read of a task's progress in p, to share the round
// trip with the caller's other reads; the returned func gives the result
// after p ran.
func (s *Sink) ProgressIn(ctx context.Context, p redis.Pipeliner, task string) func() (Progress, error) {
	cmd := p.HGetAll(ctx, progressPrefix+task)
	return func() (Progress, error) { return progressOf(task, cmd) }
}

func progressOf(task string, cmd *redis.MapStringStringCmd) (Progress, error) {
	m, err := cmd.Result()
	if err != nil {
		return Progress{}, fmt.Errorf("read progress of %s: %w", task, err)
	}
	p, _ := strconv.Atoi(m["pages"])
	n, _ := strconv.Atoi(m["items"])
	return Progress{Pages: p, Items: n}, nil
}

// Origin is what saw a page's items: the job's task ID and the schedule
// that enqueued it (empty for a job enqueued by hand). Every stream entry
// carries both, and the sink stores them with each observation.
//
// Run, when set, is the job's run (tasks.Job.Run): the page's progress is
// the run's (RunID), not every run's of the task.
type Origin struct {
	Task     string
	Schedule string
	Run      string
}

// RunID names one run's progress: the task ID, and "@run" when the job
// has a run ID (jobs queued before run IDs existed have none).
func RunID(task, run string) string {
	if run == "" {
		return task
	}
	return task + "@" + run
}

// WritePage is WritePageOf for a job without a schedule.
func (s *Sink) WritePage(ctx context.Context, task string, page int, items []item.Item, also ...func(redis.Pipeliner) error) error {
	return s.WritePageOf(ctx, Origin{Task: task}, page, items, also...)
}

// WritePageOf appends one page's items and marks page done for the task, in
// one MULTI/EXEC, so a retry after a crash resumes at the next page with
// no item written twice or lost. also, if given, adds the caller's writes
// to the same transaction (the session record that goes with the page);
// the caller reads their answers itself: WritePageOf fails only when the
// transaction or one of its own writes did. The items are appended by one
// script (appendScript, lua/append.lua) that trims the stream by MAXLEN
// only while no durable sink has marked it (trim.go).
func (s *Sink) WritePageOf(ctx context.Context, o Origin, page int, items []item.Item, also ...func(redis.Pipeliner) error) error {
	var own []redis.Cmder
	var built error // the transaction was not sent
	_, err := s.txPipelined(ctx, func(p redis.Pipeliner) error {
		for _, f := range also {
			if built = f(p); built != nil {
				return built
			}
		}
		if len(items) > 0 {
			args, err := appendArgs(s.maxLen, o, items)
			if err != nil {
				built = err
				return err
			}
			own = append(own, p.Eval(ctx, appendScript, []string{StreamKey, SinkMarkerKey}, args...))
		}
		key := progressPrefix + RunID(o.Task, o.Run)
		own = append(own, p.HSet(ctx, key, "pages", page), p.HIncrBy(ctx, key, "items", int64(len(items))),
			p.Expire(ctx, key, progressTTL))
		return nil
	})
	if built != nil || (err != nil && !allDone(own)) || errors.Is(err, ErrNotReplicated) {
		return fmt.Errorf("write page %d of %s: %w", page, o.Task, err)
	}
	return nil
}

// appendArgs is appendScript's ARGV: the bound, the origin, then a site and
// an item's JSON per item.
func appendArgs(maxLen int64, o Origin, items []item.Item) ([]any, error) {
	args := make([]any, 0, 3+2*len(items))
	args = append(args, maxLen, o.Task, o.Schedule)
	for _, it := range items {
		raw, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		args = append(args, it.Site, raw)
	}
	return args, nil
}

// allDone says whether every cmd of a transaction that was sent ran
// without an error (a failed transaction sets its error on every cmd).
func allDone(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		if c.Err() != nil {
			return false
		}
	}
	return true
}

// progressTTL keeps a job's progress long enough for every retry.
const progressTTL = 7 * 24 * time.Hour
