package sessions_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/sessions"
)

// TestReleaseAndStoreFailuresAreLoggedAndCounted: a lease release or a
// session store that fails because its Redis is gone is logged once,
// with the task, and counted, including where nothing returns the error
// (a preloaded lease given back by Discard).
func TestReleaseAndStoreFailuresAreLoggedAndCounted(t *testing.T) {
	tests := []struct {
		name string
		// deadBroker, deadRecords: the broker's / the records' Redis is
		// the client closed before the end
		deadBroker, deadRecords bool
		// end ends the session (or gives the preloaded lease back)
		end                     func(ctx context.Context, m *sessions.Manager, dead *redis.Client, task string) error
		wantErr                 bool // the end returns the failure
		wantMsg                 string
		wantReleases, wantStore int64
	}{
		{name: "preloaded lease given back to a dead Redis", deadBroker: true, deadRecords: true,
			end: func(ctx context.Context, m *sessions.Manager, dead *redis.Client, task string) error {
				st := preloadLease(t, ctx, dead, m, task)
				_ = dead.Close()
				m.Discard(ctx, st.Lease)
				return nil
			}, wantMsg: "lease release failed", wantReleases: 1},
		{name: "session closed with its records' Redis gone", deadRecords: true,
			end: func(ctx context.Context, m *sessions.Manager, dead *redis.Client, task string) error {
				return openAndEnd(ctx, m, dead, task, false)
			}, wantErr: true, wantMsg: "session store failed", wantStore: 1},
		{name: "session finished with the broker's Redis gone", deadBroker: true,
			end: func(ctx context.Context, m *sessions.Manager, dead *redis.Client, task string) error {
				return openAndEnd(ctx, m, dead, task, true)
			}, wantErr: true, wantMsg: "lease release failed", wantReleases: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 2)
			ctx := context.Background()
			warmUp(t, ctx, w.broker)
			dead := testredis.NewClient(t, testredis.DBSessions)
			cfg := sessions.Config{Shape: wbShape, Broker: w.broker, Redis: w.rdb, Holder: "server-1", LeaseTTL: 10 * time.Second}
			if tc.deadBroker {
				cfg.Broker = brokerFor(t, ctx, dead, w.tb, false)
			}
			if tc.deadRecords {
				cfg.Redis = dead
			}
			cfg.BrokerSharesRedis = tc.deadBroker == tc.deadRecords // both on one client
			core, logs := observer.New(zapcore.WarnLevel)
			cfg.Logger = zap.New(zapcore.NewTee(core, masktest.Core(t)))
			m := sessions.NewManager(cfg)
			const task = "job-dead-redis"
			err := tc.end(ctx, m, dead, task)
			if tc.wantErr != (err != nil) {
				t.Errorf("the end returned %v; want an error: %v", err, tc.wantErr)
			}
			if m.ReleaseErrors() != tc.wantReleases || m.StoreErrors() != tc.wantStore {
				t.Errorf("counted %d release and %d store errors; want %d and %d", m.ReleaseErrors(), m.StoreErrors(), tc.wantReleases, tc.wantStore)
			}
			got := logs.FilterMessage(tc.wantMsg).FilterField(zap.String("task", task)).Len()
			if got != 1 || logs.Len() != 1 {
				t.Errorf("%d %q lines with the task among %d warnings (%v); want that one line", got, tc.wantMsg, logs.Len(), logs.All())
			}
		})
	}
}

// openAndEnd opens task's session, closes dead and ends the session:
// Finish (the record dropped) when finish, else Close (the record kept).
func openAndEnd(ctx context.Context, m *sessions.Manager, dead *redis.Client, task string, finish bool) error {
	s, err := m.Open(ctx, task, wb, proxies.Datacenter)
	if err != nil {
		return err
	}
	_ = dead.Close()
	if finish {
		return s.Finish(ctx, proxies.Neutral())
	}
	return s.Close(ctx, proxies.Neutral())
}

// warmUp syncs the broker's ready set, as any earlier job does.
func warmUp(t *testing.T, ctx context.Context, b *proxies.RedisBroker) {
	t.Helper()
	l, err := b.Lease(ctx, proxies.LeaseRequest{Site: wb, Class: proxies.Datacenter, Holder: "warm-up", Task: "warm-up", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l, proxies.Neutral()); err != nil {
		t.Fatal(err)
	}
}
