package tasks

import (
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/tasks/site"
)

// tickIDPrefix starts the task ID of every job a schedule's tick queued.
const tickIDPrefix = "sched:"

// TickTaskID is the task ID of job j queued by schedule's tick at tick:
// "sched:NAME:UNIXSECONDS:site:kind:hash". Every scheduler derives the same
// ID for the same tick, so Asynq queues the job once however many
// schedulers fire it; the next tick's ID differs, so a schedule crawls the
// same target again.
func TickTaskID(schedule string, tick time.Time, j Job) string {
	return tickPrefix(schedule, tick) + j.TaskID()
}

func tickPrefix(schedule string, tick time.Time) string {
	return tickIDPrefix + schedule + ":" + strconv.FormatInt(tick.Unix(), 10) + ":"
}

// TickOf parses a task ID made by TickTaskID: the schedule and the tick.
func TickOf(taskID string) (schedule string, tick time.Time, ok bool) {
	rest, found := strings.CutPrefix(taskID, tickIDPrefix)
	if !found {
		return "", time.Time{}, false
	}
	name, rest, _ := strings.Cut(rest, ":")
	sec, _, _ := strings.Cut(rest, ":")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || name == "" {
		return "", time.Time{}, false
	}
	return name, time.Unix(n, 0).UTC(), true
}

// NewTickTask builds the task of job j for schedule's tick: NewTask with
// the job's Schedule set and the tick's task ID. Its Queued names it.
func NewTickTask(reg *site.Registry, schedule string, tick time.Time, j Job) (*asynq.Task, Queued, error) {
	j.Schedule = schedule
	n, err := j.Normalize(reg)
	if err != nil {
		return nil, Queued{}, err
	}
	id := TickTaskID(schedule, tick, n)
	t, err := NewTask(reg, n, asynq.TaskID(id))
	if err != nil {
		return nil, Queued{}, err
	}
	return t, Queued{ID: id, Queue: queueOf(reg, n), Type: n.Type()}, nil
}

// againIDPrefix starts the task ID of a job queued again by hand
// (`enqueue --again`): "again:RUN:site:kind:hash".
const againIDPrefix = "again:"

// AgainTaskID is the task ID of job j queued again by hand: its run makes
// the ID new, so Asynq queues it even while it keeps the earlier run of the
// same job.
func AgainTaskID(j Job) string { return againIDPrefix + j.Run + ":" + j.TaskID() }

// scopeOf is the part of a task ID before the job's own ID: a schedule's
// tick ("sched:NAME:SECONDS:"), a run queued again ("again:RUN:"), or ""
// for a job queued once by hand.
func scopeOf(taskID string) string {
	if name, tick, ok := TickOf(taskID); ok {
		return tickPrefix(name, tick)
	}
	rest, ok := strings.CutPrefix(taskID, againIDPrefix)
	if !ok {
		return ""
	}
	run, _, ok := strings.Cut(rest, ":")
	if !ok || run == "" {
		return ""
	}
	return againIDPrefix + run + ":"
}

// followUpID is the task ID of a follow-up job queued by the task parent:
// it carries the parent's scope (a schedule's tick or a run queued again),
// so the same product found by two listings of one run is crawled once,
// and again by the next tick or run; a job queued once by hand passes on
// the job's own ID.
func followUpID(parent string, j Job) string {
	return scopeOf(parent) + j.TaskID()
}

// followTask builds the job of a listing's follow-up target: it inherits
// the job's schedule and the proxy class the job names (none: the site's,
// decided by the worker that runs it), and its ID is followUpID's.
func (r *run) followTask(t site.Target) (*asynq.Task, Queued, error) {
	j := Job{Site: t.Site, Kind: t.Kind, Class: r.job.Class, Schedule: r.job.Schedule,
		Request: site.Request{ID: t.ID, URL: t.URL}}
	n, err := j.Normalize(r.h.cfg.Sites)
	if err != nil {
		return nil, Queued{}, err
	}
	id := followUpID(r.task, n)
	task, err := NewTask(r.h.cfg.Sites, n, asynq.TaskID(id))
	return task, Queued{ID: id, Queue: queueOf(r.h.cfg.Sites, n), Type: n.Type()}, err
}
