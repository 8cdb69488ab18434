package pgsink_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/testpg"
	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/results/pgsink"
)

// malformed are stream entries that cannot become an observation, and
// the reason the rejected table must give for each.
var malformed = []struct {
	name   string
	fields map[string]any
	reason string
}{
	{name: "item not JSON", fields: map[string]any{"site": "ozon", "task": "t1", "item": "{not json"}, reason: "item is not JSON"},
	{name: "JSON without id", fields: map[string]any{"site": "ozon", "task": "t2", "item": `{"title":"kettle","price":100}`}, reason: "item has no id"},
	{name: "no item field", fields: map[string]any{"site": "ozon", "task": "t3"}, reason: "no item field"},
	{name: "item not text", fields: map[string]any{"site": "ozon", "task": "t4", "item": "\xff\x00{"}, reason: "item is not JSON"},
}

// addMalformed appends the malformed entries to the stream and returns
// their stream IDs, in order.
func addMalformed(t *testing.T, rdb redis.UniversalClient) []string {
	t.Helper()
	var ids []string
	for _, m := range malformed {
		id, err := rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: results.StreamKey, Values: m.fields}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// rejectedRow is a row of the rejected table.
type rejectedRow struct {
	fields map[string]any
	reason string
}

func readRejected(t *testing.T, c *pgx.Conn) map[string]rejectedRow {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT stream_id, fields::text, reason FROM rejected")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]rejectedRow{}
	for rows.Next() {
		var id, fields string
		var r rejectedRow
		if err := rows.Scan(&id, &fields, &r.reason); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(fields), &r.fields); err != nil {
			t.Fatal(err)
		}
		out[id] = r
	}
	return out
}

// TestMalformedEntriesRejected: entries whose item is not JSON, has no
// id, is missing or is not even text, written among good ones, end in
// the rejected table with their stream ID, raw fields and reason; they are
// acknowledged only once those rows committed (while the table is locked
// they stay pending), then counted in crawlq_sink_rejected_total and in
// the stream's backlog (what `crawlq status` shows).
func TestMalformedEntriesRejected(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBSink)
	url := testpg.DB(t)
	st, err := pgsink.Open(context.Background(), url) // migrated before the lock below
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	c := connect(t, url)
	keys := writePages(t, rdb, "good-1", "", 1, 5, 100)
	ids := addMalformed(t, rdb)
	keys = append(keys, writePages(t, rdb, "good-2", "", 1, 5, 200)...)

	ctx := context.Background()
	locker := connect(t, url)
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE rejected IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	_, stop := runSink(t, pgsink.Config{Redis: rdb, Postgres: url, Metrics: pgsink.NewMetrics(reg, rdb)})
	waitBlockedBatch(t, c)
	if p, err := rdb.XPending(ctx, results.StreamKey, results.SinkGroup).Result(); err != nil || p.Count != int64(len(keys)+len(ids)) {
		t.Fatalf("pending while the batch waits for the rejected table: %+v %v; want all %d entries unacknowledged", p, err, len(keys)+len(ids))
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	waitRows(t, c, len(keys))
	waitFor(t, "every entry acknowledged", func() bool {
		p, err := rdb.XPending(ctx, results.StreamKey, results.SinkGroup).Result()
		return err == nil && p.Count == 0
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, c, keys)
	got := readRejected(t, c)
	if len(got) != len(ids) {
		t.Fatalf("rejected holds %d rows, want %d: %+v", len(got), len(ids), got)
	}
	for i, m := range malformed {
		r, ok := got[ids[i]]
		if !ok || !strings.HasPrefix(r.reason, m.reason) || r.fields["task"] != m.fields["task"] {
			t.Errorf("%s: rejected row %+v (found %t), want reason %q and its raw fields", m.name, r, ok, m.reason)
		}
	}
	if v := got[ids[0]].fields["item"]; v != "{not json" {
		t.Errorf("raw item kept as %v, want the text as written", v)
	}
	if v, _ := got[ids[3]].fields["item"].(map[string]any); v["base64"] != "/wB7" {
		t.Errorf("an item that is not text kept as %v, want its bytes in base64 (/wB7)", got[ids[3]].fields["item"])
	}
	if n := counterValue(t, reg, "crawlq_sink_rejected_total"); n != float64(len(ids)) {
		t.Errorf("crawlq_sink_rejected_total = %v, want %d", n, len(ids))
	}
	if b, err := results.ReadBacklog(ctx, rdb, 0); err != nil || b.Rejected != int64(len(ids)) {
		t.Errorf("backlog %+v %v, want %d rejected", b, err, len(ids))
	}
}

// TestMigrationAddsRejected: a database a crawlq without the rejected
// table migrated (schema version 1) gets it, and the newest version, at the next
// Open; its rows stay.
func TestMigrationAddsRejected(t *testing.T) {
	url := testpg.DB(t)
	st, err := pgsink.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	c := connect(t, url)
	ctx := context.Background()
	for _, q := range []string{"DROP TABLE rejected", "DROP TABLE alert_outbox, alert_rule_items, alert_rules",
		"DELETE FROM crawlq_schema_migrations WHERE version > 1",
		"INSERT INTO items (site, id, first_seen, last_seen) VALUES ('ozon', '1', now(), now())"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	st, err = pgsink.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	var version, items, rejected int
	err = c.QueryRow(ctx, `SELECT (SELECT max(version) FROM crawlq_schema_migrations), (SELECT count(*) FROM items),
	    (SELECT count(*) FROM rejected)`).Scan(&version, &items, &rejected)
	if want := pgsink.SchemaVersion(); err != nil || version != want || items != 1 || rejected != 0 {
		t.Fatalf("after the upgrade: version %d, %d items, %d rejected (%v); want version %d, the 1 item kept, an empty rejected table",
			version, items, rejected, err, want)
	}
}
