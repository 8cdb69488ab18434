package tasks_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// roundTrips counts, per Asynq task, the round trips the worker's own
// Redis client (broker, sessions, results) makes while running it: a
// command alone or a pipeline (a MULTI transaction included) is one.
type roundTrips struct {
	mu     sync.Mutex
	byTask map[string][]string
}

func (r *roundTrips) add(ctx context.Context, what string) {
	if id, ok := asynq.GetTaskID(ctx); ok {
		r.mu.Lock()
		r.byTask[id] = append(r.byTask[id], what)
		r.mu.Unlock()
	}
}

func (r *roundTrips) of(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.byTask[id]...)
}

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.add(ctx, cmd.Name())
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.add(ctx, "pipeline")
		return next(ctx, cmds)
	}
}

var _ redis.Hook = (*roundTrips)(nil)

// TestOnePageJobRoundTrips: once the broker knows the pool, a one-page
// job costs the worker's client three round trips: the progress read with
// the stored session and a fresh proxy's lease (one pipeline), the page's
// transaction (items, progress, the session record's deletion: one Redis
// Cluster slot) and the proxy's release (the broker's slot).
// (Asynq's dequeue, done and the task result go through Asynq's own
// client.)
func TestOnePageJobRoundTrips(t *testing.T) {
	tests := []struct {
		name   string
		broker func(rdb *redis.Client, reg *site.Registry) proxies.Broker
	}{
		{name: "redis broker", broker: func(rdb *redis.Client, reg *site.Registry) proxies.Broker {
			return proxies.NewRedisBroker(rdb, tasks.BrokerConfig(reg, nil))
		}},
		{name: "fallback broker, as crawlq worker runs", broker: func(rdb *redis.Client, reg *site.Registry) proxies.Broker {
			return proxies.NewFallbackBroker(proxies.NewRedisBroker(rdb, tasks.BrokerConfig(reg, nil)), proxies.FallbackConfig{ServerID: "rt-worker"})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 7})
			rt := &roundTrips{byTask: map[string][]string{}}
			rdb := testredis.NewClient(t, testredis.DBTasks)
			rdb.AddHook(rt)
			serve(t, tasks.WorkerConfig{Redis: asynqOpt(t), RDB: rdb, Broker: tc.broker(rdb, reg), BrokerOnRDB: true, ServerID: "rt-worker",
				Concurrency: 1, Sites: reg, ShutdownTimeout: time.Second})
			last := twoJobs(t, tb, reg, rt)
			want := []string{"pipeline", "pipeline", "evalsha"}
			if diff := cmp.Diff(want, last); diff != "" {
				t.Errorf("a warm one-page job's round trips (progress+session+lease, page transaction, release) (-want +got):\n%s", diff)
			}
		})
	}
}

// twoJobs runs two one-page product jobs, one after the other (the first
// warms the broker's proxy specs and ready set), and returns the round
// trips of the second.
func twoJobs(t *testing.T, tb *testbed.Testbed, reg *site.Registry, rt *roundTrips) []string {
	t.Helper()
	runProduct(t, tb, reg, 0)
	return rt.of(runProduct(t, tb, reg, 1))
}
