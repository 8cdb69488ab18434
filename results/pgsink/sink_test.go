package pgsink_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/testpg"
	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/results/item"
	"crawlq/results/pgsink"
)

// writePages writes pages of n items each, as jobs do, and returns the
// (site, id) keys written, in order.
func writePages(t *testing.T, rdb redis.UniversalClient, task, schedule string, pages, n int, price int64) []string {
	t.Helper()
	sink := results.NewSink(rdb, 0)
	var keys []string
	at := time.Now().UTC().Truncate(time.Millisecond)
	for p := 1; p <= pages; p++ {
		items := make([]item.Item, n)
		for i := range items {
			id := fmt.Sprintf("%s-%d-%d", task, p, i)
			items[i] = item.Item{Site: "ozon", ID: id, Title: "t " + id, Price: price, Currency: "RUB", FetchedAt: at}
			keys = append(keys, id)
		}
		if err := sink.WritePageOf(context.Background(), results.Origin{Task: task, Schedule: schedule}, p, items); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// runSink starts a sink; the returned func stops it and returns Run's error.
func runSink(t *testing.T, cfg pgsink.Config) (*pgsink.Sink, func() error) {
	t.Helper()
	s := pgsink.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	var err error
	stop := func() error { once.Do(func() { cancel(); err = <-done }); return err }
	t.Cleanup(func() { _ = stop() })
	return s, stop
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// waitRows waits (bounded) until observations holds want rows.
func waitRows(t *testing.T, c *pgx.Conn, want int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var n int
	for time.Now().Before(deadline) {
		if err := c.QueryRow(context.Background(), "SELECT count(*) FROM observations").Scan(&n); err == nil && n >= want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("observations: %d rows after 60s, want %d", n, want)
}

// exactlyOnce checks every key has one observation and nothing else is there.
func exactlyOnce(t *testing.T, c *pgx.Conn, keys []string) {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT id, count(*) FROM observations GROUP BY id")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		got[id] = n
	}
	missing, dup := 0, 0
	for _, k := range keys {
		switch got[k] {
		case 0:
			missing++
		case 1:
		default:
			dup++
		}
		delete(got, k)
	}
	if missing != 0 || dup != 0 || len(got) != 0 {
		t.Fatalf("%d observations missing, %d duplicated, %d unexpected (of %d)", missing, dup, len(got), len(keys))
	}
}

// TestSinkStoresEveryEntryOnce: entries written by pages reach
// observations once each with their job and schedule, items hold the
// latest state, the group acknowledged everything, and writing the same
// entries again adds no row.
func TestSinkStoresEveryEntryOnce(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBSink)
	url := testpg.DB(t)
	keys := writePages(t, rdb, "job-1", "hourly", 5, 200, 1000)
	keys = append(keys, writePages(t, rdb, "job-2", "", 1, 10, 2000)...)
	_, stop := runSink(t, pgsink.Config{Redis: rdb, Postgres: url, Batch: 300})
	c := connect(t, url)
	waitRows(t, c, len(keys))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, c, keys)
	var sched, task string
	if err := c.QueryRow(context.Background(), "SELECT coalesce(schedule, ''), task FROM observations WHERE id = 'job-1-3-7'").Scan(&sched, &task); err != nil {
		t.Fatal(err)
	}
	if sched != "hourly" || task != "job-1" {
		t.Fatalf("observation's job and schedule: %q %q, want job-1 hourly", task, sched)
	}
	var items int
	_ = c.QueryRow(context.Background(), "SELECT count(*) FROM items").Scan(&items)
	if items != len(keys) {
		t.Fatalf("items: %d, want %d", items, len(keys))
	}
	b, err := results.ReadBacklog(context.Background(), rdb, 0)
	if err != nil || !b.Sink || b.Unacked != 0 {
		t.Fatalf("backlog after the sink drained: %+v, %v; want marked, 0 unacked", b, err)
	}
	// A redelivery: the same entries written again add nothing.
	msgs, err := rdb.XRange(context.Background(), results.StreamKey, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	st, err := pgsink.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	obs := make([]pgsink.Observation, 0)
	for _, m := range msgs {
		if o, err := pgsink.Decode(m); err == nil {
			obs = append(obs, o)
		}
	}
	if n, err := st.Write(context.Background(), obs, nil); err != nil || n != 0 {
		t.Fatalf("rewriting %d delivered entries added %d rows (%v), want 0", len(obs), n, err)
	}
	exactlyOnce(t, c, keys)
}

// TestSinkItemsKeepLatestPrice: a later observation's price becomes the
// item's, first_seen stays the first, and the history has both.
func TestSinkItemsKeepLatestPrice(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBSink)
	url := testpg.DB(t)
	sink := results.NewSink(rdb, 0)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, price := range []int64{1000, 800, 900} {
		it := item.Item{Site: "wildberries", ID: "42", Title: "kettle", Price: price, Seller: "s", FetchedAt: t0.Add(time.Duration(i) * time.Hour)}
		if err := sink.WritePage(context.Background(), fmt.Sprint("task-", i), 1, []item.Item{it}); err != nil {
			t.Fatal(err)
		}
	}
	_, stop := runSink(t, pgsink.Config{Redis: rdb, Postgres: url})
	c := connect(t, url)
	waitRows(t, c, 3)
	_ = stop()
	var price int64
	var first, last time.Time
	if err := c.QueryRow(context.Background(), "SELECT price, first_seen, last_seen FROM items WHERE site='wildberries' AND id='42'").Scan(&price, &first, &last); err != nil {
		t.Fatal(err)
	}
	if price != 900 || !first.Equal(t0) || !last.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("item: price %d first %v last %v; want 900, %v, %v", price, first, last, t0, t0.Add(2*time.Hour))
	}
	ps, err := pgsink.Prices(context.Background(), c, "wildberries", "42")
	if err != nil || len(ps) != 3 || ps[0].Price != 1000 || ps[1].Price != 800 || ps[2].Price != 900 {
		t.Fatalf("prices: %+v %v", ps, err)
	}
	ch, err := pgsink.Changes(context.Background(), c, t0, 10, 0)
	if err != nil || len(ch) != 1 || ch[0].From != 1000 || ch[0].To != 800 || ch[0].ChangePct != -20 {
		t.Fatalf("changes with a 10%% drop: %+v %v; want the one fall 1000 -> 800", ch, err)
	}
	ch, _ = pgsink.Changes(context.Background(), c, t0, 0, 0)
	if len(ch) != 2 || ch[0].To != 900 || ch[0].ChangePct != 12.5 {
		t.Fatalf("all changes: %+v; want the rise to 900 then the fall", ch)
	}
}

// TestNewerSchemaRefused: a database migrated by a newer crawlq is refused
// with a message that says so, and the sink does not start.
func TestNewerSchemaRefused(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBSink)
	url := testpg.DB(t)
	st, err := pgsink.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	c := connect(t, url)
	newer := pgsink.SchemaVersion() + 1
	if _, err := c.Exec(context.Background(), "INSERT INTO crawlq_schema_migrations (version, name) VALUES ($1, 'future')", newer); err != nil {
		t.Fatal(err)
	}
	_, err = pgsink.Open(context.Background(), url)
	if !errors.Is(err, pgsink.ErrNewerSchema) || !strings.Contains(err.Error(), fmt.Sprintf("version %d", newer)) {
		t.Fatalf("open a newer schema: %v; want ErrNewerSchema naming version %d", err, newer)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pgsink.New(pgsink.Config{Redis: rdb, Postgres: url}).Run(ctx); !errors.Is(err, pgsink.ErrNewerSchema) {
		t.Fatalf("sink on a newer schema: %v; want ErrNewerSchema", err)
	}
}

// TestMinIDTrimKeepsUnacked: with a sink group, a page never trims by
// MAXLEN, and TrimAcked removes what the group acknowledged but not an
// entry it has not: delivered and pending, or not yet delivered.
func TestMinIDTrimKeepsUnacked(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBSink)
	ctx := context.Background()
	if err := results.MarkSink(ctx, rdb); err != nil {
		t.Fatal(err)
	}
	tiny := results.NewSink(rdb, 10) // MAXLEN 10 would cut most of it
	for p := 1; p <= 30; p++ {
		its := make([]item.Item, 100)
		for i := range its {
			its[i] = item.Item{Site: "ozon", ID: fmt.Sprint(p*1000 + i)}
		}
		if err := tiny.WritePage(ctx, "t", p, its); err != nil {
			t.Fatal(err)
		}
	}
	if n := rdb.XLen(ctx, results.StreamKey).Val(); n != 3000 {
		t.Fatalf("stream length %d with a sink group, want all 3000 (no MAXLEN trim)", n)
	}
	read := func(n int64) []redis.XMessage {
		res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: results.SinkGroup, Consumer: "c",
			Streams: []string{results.StreamKey, ">"}, Count: n}).Result()
		if err != nil {
			t.Fatal(err)
		}
		return res[0].Messages
	}
	first := read(1000)  // 1000 delivered
	second := read(1000) // 1000 more delivered
	var ids []string
	for _, m := range second {
		ids = append(ids, m.ID)
	}
	if err := rdb.XAck(ctx, results.StreamKey, results.SinkGroup, ids...).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := results.TrimAcked(ctx, rdb); err != nil {
		t.Fatal(err)
	}
	if got := rdb.XRange(ctx, results.StreamKey, first[0].ID, first[0].ID).Val(); len(got) != 1 {
		t.Fatal("the oldest pending entry was trimmed")
	}
	var all []string
	for _, m := range first {
		all = append(all, m.ID)
	}
	_ = rdb.XAck(ctx, results.StreamKey, results.SinkGroup, all...).Err()
	if _, err := results.TrimAcked(ctx, rdb); err != nil {
		t.Fatal(err)
	}
	rest := rdb.XRange(ctx, results.StreamKey, "-", "+").Val()
	if len(rest) < 1000 || len(rest) >= 3000 {
		t.Fatalf("after acking 2000: %d entries left; want the 1000 undelivered kept and (most) acked ones gone", len(rest))
	}
	last := second[len(second)-1].ID
	if cmpID(rest[len(rest)-1].ID, last) <= 0 {
		t.Fatal("undelivered entries were trimmed")
	}
	undelivered := 0
	for _, m := range rest {
		if cmpID(m.ID, last) > 0 {
			undelivered++
		}
	}
	if undelivered != 1000 {
		t.Fatalf("%d undelivered entries left, want 1000", undelivered)
	}
	b, err := results.ReadBacklog(ctx, rdb, 0)
	if err != nil || b.Unacked != 1000 {
		t.Fatalf("backlog %+v %v, want 1000 unacked", b, err)
	}
}

// TestNoSinkKeepsMaxLen: without a sink, pages keep trimming by MAXLEN and
// the backlog says the stream is at its bound.
func TestNoSinkKeepsMaxLen(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBSink)
	ctx := context.Background()
	s := results.NewSink(rdb, 100)
	for p := 1; p <= 20; p++ {
		its := make([]item.Item, 100)
		for i := range its {
			its[i] = item.Item{Site: "ozon", ID: fmt.Sprint(p*1000 + i)}
		}
		if err := s.WritePage(ctx, "t", p, its); err != nil {
			t.Fatal(err)
		}
	}
	n := rdb.XLen(ctx, results.StreamKey).Val()
	if n >= 2000 || n < 100 {
		t.Fatalf("stream length %d without a sink, want about the MAXLEN of 100", n)
	}
	b, err := results.ReadBacklog(ctx, rdb, 100)
	if err != nil || b.Sink || !b.AtBound() {
		t.Fatalf("backlog %+v %v: want no sink, at bound", b, err)
	}
}

func cmpID(a, b string) int {
	var am, as, bm, bs int64
	fmt.Sscanf(a, "%d-%d", &am, &as)
	fmt.Sscanf(b, "%d-%d", &bm, &bs)
	switch {
	case am != bm:
		return map[bool]int{true: -1, false: 1}[am < bm]
	case as != bs:
		return map[bool]int{true: -1, false: 1}[as < bs]
	}
	return 0
}

// TestPostgresConnectionsKilled: while pages keep coming, PostgreSQL
// kills the sink's connection (pg_terminate_backend) again and again in
// the middle of a batch: each batch fails on it and is written again on a
// new connection; every entry still arrives exactly once.
func TestPostgresConnectionsKilled(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBSink)
	url := testpg.DB(t)
	c := connect(t, url)
	locker := connect(t, url)
	reg := prometheus.NewRegistry()
	_, stop := runSink(t, pgsink.Config{Redis: rdb, Postgres: url, Batch: 200, Metrics: pgsink.NewMetrics(reg, rdb)})
	keys := writePages(t, rdb, "job-first", "", 2, 100, 1)
	waitRows(t, c, len(keys)) // connected, migrated, writing
	const kills = 5
	for round := 0; round < kills; round++ {
		// the table held locked, the next batch waits inside its
		// transaction: the kill lands mid-batch, never between batches
		ctx := context.Background()
		tx, err := locker.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE observations IN EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, writePages(t, rdb, fmt.Sprint("job-", round), "", 5, 100, int64(round+1))...)
		pid := waitBlockedBatch(t, c)
		if _, err := c.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
	keys = append(keys, writePages(t, rdb, "job-last", "", 1, 100, 99)...)
	waitRows(t, c, len(keys))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, c, keys)
	if failed := counterValue(t, reg, "crawlq_sink_batch_failures_total"); failed < kills {
		t.Fatalf("%v batches failed, want one for each of the %d connections killed mid-batch", failed, kills)
	}
}

// waitBlockedBatch waits (bounded) until a connection of the sink waits
// for a lock inside a batch, and returns its backend pid.
func waitBlockedBatch(t *testing.T, c *pgx.Conn) int32 {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		rows, err := c.Query(context.Background(), `SELECT pid FROM pg_stat_activity
		    WHERE application_name = $1 AND datname = current_database()
		      AND state = 'active' AND wait_event_type = 'Lock'`, pgsink.AppName)
		if err != nil {
			t.Fatal(err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) > 0 {
			return pids[0]
		}
	}
	t.Fatal("no batch of the sink waited for the locked table within 60s")
	return 0
}

// counterValue reads a counter from reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
