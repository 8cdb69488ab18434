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

// followUpID is the task ID of a follow-up job queued by the task parent:
// within a schedule's tick it carries the tick (the same product found by
// two listings of one tick is crawled once, and again at the next tick);
// otherwise the job's own ID.
func followUpID(parent string, j Job) string {
	if name, tick, ok := TickOf(parent); ok {
		return TickTaskID(name, tick, j)
	}
	return j.TaskID()
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
