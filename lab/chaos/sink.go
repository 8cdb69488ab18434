package chaos

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"crawlq/internal/backoff"
	"crawlq/results"
	"crawlq/results/pgsink"
)

// Fault names of a run with a sink (Options.Postgres).
const (
	FaultKillSink      = "kill_sink"
	FaultPostgresKills = "postgres_kills"
)

// sinkFaults are the sink's faults: the `crawlq sink` process killed -9
// mid-run (restarted RestartAfter later; the new one claims what the dead
// one held), then PostgreSQL terminating the sink's connections again
// and again for a few seconds, mid-batch.
var sinkFaults = []fault{
	{FaultKillSink, 0.52, killSink},
	{FaultPostgresKills, 0.75, killPostgresConns},
}

// withSinkFaults merges the sink's faults into sched by threshold.
func withSinkFaults(sched []fault) []fault {
	out := append(append([]fault(nil), sched...), sinkFaults...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// sinkClaimIdle is the sink's --claim-idle in a run: the restarted sink
// takes over the killed one's entries this soon.
const sinkClaimIdle = 3 * time.Second

// startSinkDB creates the run's database on Options.Postgres's server and
// the sink process (not started); dropped and killed by close.
func (c *cluster) startSinkDB(ctx context.Context) error {
	if c.o.Postgres == "" {
		return nil
	}
	admin, err := pgsink.Connect(ctx, c.o.Postgres)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("crawlq_chaos_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close(ctx)
		return fmt.Errorf("chaos: create database %s: %w", name, err)
	}
	c.pgAdmin, c.pgName = admin, name
	u, err := url.Parse(c.o.Postgres)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("chaos: --postgres must be a postgres:// URL")
	}
	u.Path = "/" + name
	c.pgURL = u.String()
	c.sink = &worker{id: "sink", spec: workerSpec{binary: c.o.Binary, queueURL: c.queueURL(), dir: c.dir},
		argv: []string{"sink", "--redis", c.queueURL(), "--postgres", c.pgURL, "--batch", "500",
			"--claim-idle", sinkClaimIdle.String(), "--log-level", "info"}}
	return nil
}

// dropSinkDB drops the run's database.
func (c *cluster) dropSinkDB() {
	if c.pgAdmin == nil {
		return
	}
	ctx := context.Background()
	if !c.o.KeepDir {
		_, _ = c.pgAdmin.Exec(ctx, "DROP DATABASE IF EXISTS "+c.pgName+" WITH (FORCE)")
	}
	c.pgAdmin.Close(ctx)
}

// killSink kills the sink -9 mid-batch and starts a new one RestartAfter
// later. To catch it mid-batch, the observations table is locked first:
// the sink's next batch then waits inside its transaction, its entries
// delivered and unacknowledged, and the kill lands there (the lock goes
// right after).
func killSink(ctx context.Context, c *cluster) (string, error) {
	conn, err := pgx.Connect(ctx, c.pgURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
	if _, err := tx.Exec(ctx, "LOCK TABLE observations IN EXCLUSIVE MODE"); err != nil {
		return "", fmt.Errorf("lock observations: %w", err)
	}
	held := waitPending(ctx, c, 30*time.Second)
	c.sink.kill9()
	if err := tx.Rollback(ctx); err != nil {
		return "", err
	}
	if err := backoff.Sleep(ctx, c.o.RestartAfter); err != nil {
		return "sink killed, not restarted", err
	}
	return fmt.Sprintf("sink killed -9 mid-batch with %d entries unacknowledged, restarted after %s", held, c.o.RestartAfter), c.sink.start()
}

// waitPending waits (at most d) until the sink group holds delivered,
// unacknowledged entries, and returns how many.
func waitPending(ctx context.Context, c *cluster, d time.Duration) int64 {
	deadline := time.Now().Add(d)
	for {
		p, err := c.queueRDB.XPending(ctx, results.StreamKey, results.SinkGroup).Result()
		if err == nil && p.Count > 0 || time.Now().After(deadline) || backoff.Sleep(ctx, 50*time.Millisecond) != nil {
			if p == nil {
				return 0
			}
			return p.Count
		}
	}
}

// killPostgresConns terminates the sink's PostgreSQL connections every
// 250ms for 3s (pg_terminate_backend): batches die mid-transaction.
func killPostgresConns(ctx context.Context, c *cluster) (string, error) {
	killed := 0
	for range 12 {
		var n int
		err := c.pgAdmin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		    WHERE application_name = $1 AND datname = $2`, pgsink.AppName, c.pgName).Scan(&n)
		if err != nil {
			return "", err
		}
		killed += n
		if err := backoff.Sleep(ctx, 250*time.Millisecond); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%d sink connections terminated over 3s", killed), nil
}

// drainSink waits (up to a minute) until the sink acknowledged every
// entry, then stops it; an unclean exit is returned.
func (c *cluster) drainSink(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := results.ReadBacklog(ctx, c.queueRDB, 0)
		if err == nil && b.Unacked == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sink: %d entries still unacknowledged a minute after the last job (log %s)",
				b.Unacked, filepath.Join(c.dir, "sink.log"))
		}
		if err := backoff.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return c.sink.stop()
}

// storedCounts reads the observations per (site, id) item key.
func (c *cluster) storedCounts(ctx context.Context) (map[string]int, int, error) {
	conn, err := pgx.Connect(ctx, c.pgURL)
	if err != nil {
		return nil, 0, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT site, id, count(*) FROM observations GROUP BY site, id")
	if err != nil {
		return nil, 0, fmt.Errorf("read observations: %w", err)
	}
	defer rows.Close()
	counts, total := map[string]int{}, 0
	for rows.Next() {
		var s, id string
		var n int
		if err := rows.Scan(&s, &id, &n); err != nil {
			return nil, 0, err
		}
		counts[itemKey(s, id)] = n
		total += n
	}
	return counts, total, rows.Err()
}
