package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testpg"
	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/results/item"
)

// startMain starts crawlq as a process with args; killed after the test.
func startMain(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

func countRows(t *testing.T, c *pgx.Conn) int {
	t.Helper()
	var n int
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM observations").Scan(&n); err != nil &&
		!strings.Contains(err.Error(), "does not exist") {
		t.Fatal(err)
	}
	return n
}

// waitFor polls cond every 10ms for at most d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within %v", what, d)
}

// TestSinkKilledMidBatch: a `crawlq sink` process killed -9 while it holds
// delivered, unacknowledged entries, then a new one started: every
// observation is in PostgreSQL exactly once, and the group has nothing
// pending.
func TestSinkKilledMidBatch(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBCmd)
	pg := testpg.DB(t)
	ctx := context.Background()
	const pages, perPage = 400, 50
	s := results.NewSink(rdb, 0)
	if err := results.MarkSink(ctx, rdb); err != nil {
		t.Fatal(err)
	}
	for p := range pages {
		items := make([]item.Item, perPage)
		for i := range items {
			items[i] = item.Item{Site: "avito", ID: fmt.Sprint(p*perPage + i), Price: 100, FetchedAt: time.Now()}
		}
		if err := s.WritePageOf(ctx, results.Origin{Task: fmt.Sprint("t", p), Schedule: "s"}, 1, items); err != nil {
			t.Fatal(err)
		}
	}
	const total = pages * perPage
	args := []string{"--redis", testredis.URL(t, testredis.DBCmd), "--log-level", "warn", "sink", "--postgres", pg,
		"--batch", "300", "--claim-idle", "1s"}
	first := startMain(t, args...)
	c, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	waitFor(t, 60*time.Second, "the first sink wrote some rows", func() bool { return countRows(t, c) >= 1000 })
	_ = first.Process.Kill()
	_ = first.Wait()
	pending, err := rdb.XPending(ctx, results.StreamKey, results.SinkGroup).Result()
	if err != nil {
		t.Fatal(err)
	}
	at := countRows(t, c)
	if pending.Count == 0 || at >= total {
		t.Fatalf("killed with %d entries pending and %d of %d rows written: not mid-run", pending.Count, at, total)
	}
	t.Logf("killed -9 holding %d unacknowledged entries, %d rows written", pending.Count, at)
	startMain(t, args...)
	waitFor(t, 90*time.Second, "the second sink wrote every row", func() bool { return countRows(t, c) >= total })
	waitFor(t, 30*time.Second, "nothing pending", func() bool {
		p, err := rdb.XPending(ctx, results.StreamKey, results.SinkGroup).Result()
		return err == nil && p.Count == 0
	})
	var rows, distinct int
	if err := c.QueryRow(ctx, "SELECT count(*), count(DISTINCT id) FROM observations").Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != total || distinct != total {
		t.Fatalf("%d rows of %d distinct items, want %d of each (each observation once)", rows, distinct, total)
	}
	if n := rdb.XLen(ctx, results.StreamKey).Val(); n >= total {
		t.Fatalf("stream still holds %d entries after they were acknowledged: not trimmed", n)
	}
}

// TestSinkFlags: without --postgres (and $CRAWLQ_POSTGRES) the sink says
// what it needs; --detach removes the group and its mark, so pages trim by
// MAXLEN again.
func TestSinkFlags(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBCmd)
	url := testredis.URL(t, testredis.DBCmd)
	t.Setenv(postgresEnv, "")
	_, stderr, err := runMain(t, "--redis", url, "sink")
	if err == nil || !strings.Contains(stderr, "--postgres: required") {
		t.Fatalf("sink without --postgres: %v %q", err, stderr)
	}
	ctx := context.Background()
	if err := results.MarkSink(ctx, rdb); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runMain(t, "--redis", url, "sink", "--detach")
	if err != nil || !strings.Contains(out, "sink group removed") {
		t.Fatalf("sink --detach: %v %s %s", err, out, stderr)
	}
	b, err := results.ReadBacklog(ctx, rdb, 0)
	if err != nil || b.Sink {
		t.Fatalf("after --detach: %+v %v; want no sink", b, err)
	}
	if groups, _ := rdb.XInfoGroups(ctx, results.StreamKey).Result(); len(groups) != 0 {
		t.Fatalf("after --detach the stream still has groups %+v", groups)
	}
}

// runMainWithin runs crawlq as a process for at most d (then kills it)
// and returns its stderr and exit error.
func runMainWithin(t *testing.T, d time.Duration, args ...string) (stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	raw, _ := json.Marshal(args)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"="+string(raw))
	var errb strings.Builder
	cmd.Stderr = &errb
	err = cmd.Run()
	masktest.Check(t, "crawlq "+strings.Join(args, " ")+" (stderr)", errb.String())
	if ctx.Err() != nil {
		t.Fatalf("crawlq %s still running after %v; stderr:\n%s", strings.Join(args, " "), d, errb.String())
	}
	return errb.String(), err
}

// TestSinkMissingDatabaseExits: `crawlq sink` on a database that does not
// exist exits non-zero at once with one line naming it, instead of
// retrying.
func TestSinkMissingDatabaseExits(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	pg := testpg.WithDB(testpg.URL(t), "crawlq_no_such_db")
	stderr, err := runMainWithin(t, 60*time.Second, "--redis", testredis.URL(t, testredis.DBCmd), "sink", "--postgres", pg)
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if err == nil || len(lines) != 1 || !strings.HasPrefix(lines[0], "crawlq: postgres at") ||
		!strings.Contains(lines[0], `database "crawlq_no_such_db" does not exist`) {
		t.Fatalf("exit %v, stderr %d lines:\n%s\nwant a non-zero exit and one line naming the missing database", err, len(lines), stderr)
	}
}

// TestStatusCountsRejected: an entry whose item is not JSON, drained by a
// `crawlq sink` process, is counted on a line of `crawlq status`.
func TestStatusCountsRejected(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBCmd)
	pg := testpg.DB(t)
	ctx := context.Background()
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: results.StreamKey, Values: map[string]any{"site": "ozon", "item": "oops"}}).Err(); err != nil {
		t.Fatal(err)
	}
	startMain(t, "--redis", testredis.URL(t, testredis.DBCmd), "--log-level", "error", "sink", "--postgres", pg)
	waitFor(t, 60*time.Second, "the sink counted the entry rejected", func() bool {
		b, err := results.ReadBacklog(ctx, rdb, 0)
		return err == nil && b.Rejected == 1 && b.Unacked == 0
	})
	out, err := run(t, "status")
	if err != nil || !strings.Contains(out, "results: 1 rejected by the sink (not items") {
		t.Fatalf("status (%v) lacks the rejected line:\n%s", err, out)
	}
}
