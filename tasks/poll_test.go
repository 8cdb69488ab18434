package tasks

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// TestPollIntervalReachesAsynq pins what an idle worker costs Redis: the
// poll interval is Asynq's task check interval (default one second), and
// the forwarder of retried and scheduled jobs and the backlog gate run
// every five of them, never more often than once a second.
func TestPollIntervalReachesAsynq(t *testing.T) {
	tests := []struct {
		name        string
		poll        time.Duration
		wantCheck   time.Duration
		wantSide    time.Duration
		wantJanitor time.Duration
	}{
		{name: "default", poll: 0, wantCheck: 2 * time.Second, wantSide: 10 * time.Second, wantJanitor: time.Minute},
		{name: "slower", poll: 3 * time.Second, wantCheck: 3 * time.Second, wantSide: 15 * time.Second, wantJanitor: time.Minute},
		{name: "fast, as the demo", poll: 100 * time.Millisecond, wantCheck: 100 * time.Millisecond, wantSide: time.Second, wantJanitor: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Nothing here talks to Redis: the address is never dialled.
			rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
			defer rdb.Close()
			w := NewWorker(WorkerConfig{Redis: asynq.RedisClientOpt{Addr: "127.0.0.1:1"}, RDB: rdb, PollInterval: tt.poll})
			defer w.client.Close()
			cfg := w.asynqConfig(context.Background())
			if cfg.TaskCheckInterval != tt.wantCheck {
				t.Errorf("TaskCheckInterval = %s, want %s", cfg.TaskCheckInterval, tt.wantCheck)
			}
			if cfg.DelayedTaskCheckInterval != tt.wantSide {
				t.Errorf("DelayedTaskCheckInterval = %s, want %s", cfg.DelayedTaskCheckInterval, tt.wantSide)
			}
			if cfg.JanitorInterval != tt.wantJanitor {
				t.Errorf("JanitorInterval = %s, want %s", cfg.JanitorInterval, tt.wantJanitor)
			}
			if w.gate.every != tt.wantSide {
				t.Errorf("backlog gate reads every %s, want %s", w.gate.every, tt.wantSide)
			}
		})
	}
}
