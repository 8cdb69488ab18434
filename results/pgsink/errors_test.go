package pgsink_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testpg"
	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/results/pgsink"
)

// waitFor polls cond every 10ms, failing after 30s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 30s: %s", what)
		}
	}
}

// TestPermanentErrorsStopTheSink: a database or a role that does not
// exist is a *PermanentError, told by its SQLSTATE, on one line; Run
// returns it at once instead of retrying.
func TestPermanentErrorsStopTheSink(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBSink)
	admin := testpg.URL(t)
	for _, tc := range []struct{ name, url, code, says string }{
		{name: "no database", url: testpg.WithDB(admin, "crawlq_no_such_db"), code: "3D000", says: `database "crawlq_no_such_db" does not exist`},
		{name: "no role", url: strings.Replace(testpg.WithDB(admin, "postgres"), "postgres@", "crawlq_no_such_role@", 1),
			code: "28000", says: `role "crawlq_no_such_role" does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := pgsink.New(pgsink.Config{Redis: rdb, Postgres: tc.url}).Run(ctx)
			var perm *pgsink.PermanentError
			var pg *pgconn.PgError
			if ctx.Err() != nil || !errors.As(err, &perm) || !errors.As(err, &pg) || pg.Code != tc.code {
				t.Fatalf("Run: %v (ctx %v); want a *PermanentError of SQLSTATE %s at once", err, ctx.Err(), tc.code)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, tc.says) {
				t.Fatalf("message %q: want one line saying %s", msg, tc.says)
			}
		})
	}
}

// TestTransientErrorRetriedOnOneLine: PostgreSQL refusing connections
// (nothing listens; localhost without sslmode, so pgx tries several
// ways) is retried, each retry logged on one line, until ctx ends: then
// Run returns nil.
func TestTransientErrorRetriedOnOneLine(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBSink)
	port, err := testredis.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	url := fmt.Sprintf("postgres://postgres@localhost:%d/crawlq", port)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- pgsink.New(pgsink.Config{Redis: rdb, Postgres: url, Logger: zap.New(zapcore.NewTee(core, masktest.Core(t)))}).Run(ctx)
	}()
	waitFor(t, "two retries logged", func() bool { return logs.FilterMessage("postgres not ready; retrying").Len() >= 2 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after ctx ended: %v, want nil", err)
	}
	for _, e := range logs.All() {
		msg := fmt.Sprint(e.ContextMap()["error"])
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "connection refused") {
			t.Fatalf("retry logged as %q: want one line naming the refusal", msg)
		}
	}
}

// TestIdleConsumersRemovedAtStart: when a sink starts, the group's
// consumers idle for --claim-idle with nothing pending are removed; one
// idle as long that still holds entries is kept (its entries are claimed
// and written).
func TestIdleConsumersRemovedAtStart(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBSink)
	url := testpg.DB(t)
	ctx := context.Background()
	if err := results.MarkSink(ctx, rdb); err != nil {
		t.Fatal(err)
	}
	keys := writePages(t, rdb, "job", "", 1, 10, 100)
	if err := rdb.XGroupCreateConsumer(ctx, results.StreamKey, results.SinkGroup, "stopped-idle").Err(); err != nil {
		t.Fatal(err)
	}
	err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: results.SinkGroup, Consumer: "stopped-holding",
		Streams: []string{results.StreamKey, ">"}, Count: 4}).Err()
	if err != nil {
		t.Fatal(err)
	}
	const claimIdle = 300 * time.Millisecond
	waitFor(t, "both consumers idle for --claim-idle", func() bool {
		cs, err := rdb.XInfoConsumers(ctx, results.StreamKey, results.SinkGroup).Result()
		return err == nil && len(cs) == 2 && cs[0].Idle >= claimIdle && cs[1].Idle >= claimIdle
	})
	_, stop := runSink(t, pgsink.Config{Redis: rdb, Postgres: url, Consumer: "live", ClaimIdle: claimIdle})
	c := connect(t, url)
	waitRows(t, c, len(keys))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, c, keys)
	cs, err := rdb.XInfoConsumers(ctx, results.StreamKey, results.SinkGroup).Result()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"live", "stopped-holding"}) {
		t.Fatalf("consumers after the sink started: %v; want the idle one without entries removed, the one holding entries kept", names)
	}
}
