package tasks

import (
	"context"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// Waker moves jobs handed back from their queue's retry set to its
// pending list at their turn (lua/wake.lua), so they come back when a
// proxy is expected rather than at Asynq's next look at its retry sets
// (WorkerConfig.PollInterval × 5). A wake moves the job only while it
// still waits in the retry set for a turn due by then: a job handed back
// several times has a wake per hand-back, and the earlier ones must not
// run it again once it has completed, nor pull its later turn forward. A
// job it does not wake (the worker stopped) comes back at Asynq's look.
type Waker struct {
	rdb redis.UniversalClient
	log *zap.Logger
	mu  sync.Mutex
	// wakes are the wakes to come; nil once stopped.
	wakes map[*wake]struct{}
}

// wake is one job's wake to come.
type wake struct{ t *time.Timer }

// NewWaker builds a Waker on the queues' Redis.
func NewWaker(r asynq.RedisConnOpt, log *zap.Logger) *Waker {
	rdb, _ := r.MakeRedisClient().(redis.UniversalClient)
	return &Waker{rdb: rdb, log: log, wakes: map[*wake]struct{}{}}
}

// After wakes task id of queue in d.
func (w *Waker) After(d time.Duration, queue, id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wakes == nil || w.rdb == nil || queue == "" || id == "" {
		return
	}
	k := &wake{}
	due := time.Now().Add(d)
	k.t = time.AfterFunc(d, func() { w.wake(k, queue, id, due) })
	w.wakes[k] = struct{}{}
}

// wake moves the job due at due, if it still waits for that turn.
// Asynq keeps due times in whole seconds, rounded down from the time the
// job handed its slot back, a moment after due was taken: a second's
// margin.
func (w *Waker) wake(k *wake, queue, id string, due time.Time) {
	w.mu.Lock()
	_, live := w.wakes[k]
	delete(w.wakes, k)
	w.mu.Unlock()
	if !live {
		return
	}
	if _, err := w.move(context.Background(), queue, id, due); err != nil {
		w.log.Debug("handed-back job not woken", zap.String("task", id), zap.Error(err))
	}
}

// move moves task id of queue from the retry set to the pending list if
// it waits there for a turn due by due (lua/wake.lua); moved says it did.
func (w *Waker) move(ctx context.Context, queue, id string, due time.Time) (moved bool, err error) {
	prefix := "asynq:{" + queue + "}:"
	n, err := wakeScript.Run(ctx, w.rdb, []string{prefix + "t:" + id, prefix + "retry", prefix + "pending"},
		id, due.Unix()+1).Int()
	return n == 1, err
}

// Stop cancels the wakes to come and closes its Redis client.
func (w *Waker) Stop() {
	w.mu.Lock()
	for k := range w.wakes {
		k.t.Stop()
	}
	w.wakes = nil
	w.mu.Unlock()
	if w.rdb != nil {
		_ = w.rdb.Close()
	}
}
