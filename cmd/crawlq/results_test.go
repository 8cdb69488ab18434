package main

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/testpg"
	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/results/item"
	"crawlq/results/pgsink"
)

// TestExportSaysRowsAreInPostgres: `results export` of the stream says
// nothing of PostgreSQL without a sink; once a sink's group drained the
// stream (read, acknowledged, trimmed), it says the rows are in
// PostgreSQL and to use --postgres; with the sink removed, no more.
func TestExportSaysRowsAreInPostgres(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBCmd)
	url := testredis.URL(t, testredis.DBCmd)
	ctx := context.Background()
	its := []item.Item{{Site: "ozon", ID: "1", Price: 100}, {Site: "ozon", ID: "2", Price: 200}}
	if err := results.NewSink(rdb, 0).WritePage(ctx, "t", 1, its); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runMain(t, "--redis", url, "results", "export")
	if err != nil || strings.Count(out, "\n") != 2 || stderr != "exported 2 items\n" {
		t.Fatalf("export without a sink: %v\nstdout %q\nstderr %q", err, out, stderr)
	}
	drain(t, rdb)
	out, stderr, err = runMain(t, "--redis", url, "results", "export")
	want := "exported 0 items from the stream, which holds only what the sink has not stored yet: " +
		"the rows are in PostgreSQL, export them with --postgres URL\n"
	if err != nil || out != "" || stderr != want {
		t.Fatalf("export with a sink attached: %v\nstdout %q\nstderr %q\nwant stderr %q", err, out, stderr, want)
	}
	if err := results.UnmarkSink(ctx, rdb); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err = runMain(t, "--redis", url, "results", "export"); err != nil || stderr != "exported 0 items\n" {
		t.Fatalf("export after the sink was removed: %v\nstderr %q", err, stderr)
	}
}

// drain does what `crawlq sink` does to the stream: its group reads every
// entry, acknowledges it and trims it.
func drain(t *testing.T, rdb redis.UniversalClient) {
	t.Helper()
	ctx := context.Background()
	if err := results.MarkSink(ctx, rdb); err != nil {
		t.Fatal(err)
	}
	res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: results.SinkGroup, Consumer: "test",
		Streams: []string{results.StreamKey, ">"}, Count: 100}).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res[0].Messages {
		if err := rdb.XAck(ctx, results.StreamKey, results.SinkGroup, m.ID).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.XTrimMaxLen(ctx, results.StreamKey, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.XLen(ctx, results.StreamKey).Result(); n != 0 {
		t.Fatalf("stream holds %d entries after the drain", n)
	}
}

// TestExportRefusesUnknownSite: `results export --site` of a site that is
// neither built in nor has items (in the stream, or in PostgreSQL) exits 1
// naming the known sites; a built-in site without items exports nothing;
// a database without the sink's tables says to run the sink.
func TestExportRefusesUnknownSite(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	url := testredis.URL(t, testredis.DBCmd)
	want := "crawlq: --site: unknown site \"amazon\" (known: avito, ozon, wildberries)\n"
	out, stderr, err := runMain(t, "--redis", url, "results", "export", "--site", "amazon")
	if err == nil || out != "" || stderr != want {
		t.Errorf("stream export --site amazon: %v\nstdout %q\nstderr %q\nwant %q", err, out, stderr, want)
	}
	if _, stderr, err := runMain(t, "--redis", url, "results", "export", "--site", "ozon"); err != nil || stderr != "exported 0 items\n" {
		t.Errorf("stream export --site ozon: %v %q", err, stderr)
	}
	pg := testpg.DB(t)
	_, stderr, err = runMain(t, "results", "export", "--postgres", pg, "--site", "ozon")
	if err == nil || !strings.Contains(stderr, "has no crawlq tables") {
		t.Errorf("export --postgres of a database without tables: %v %q", err, stderr)
	}
	st, err := pgsink.Open(context.Background(), pg)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	out, stderr, err = runMain(t, "results", "export", "--postgres", pg, "--site", "amazon")
	if err == nil || out != "" || stderr != want {
		t.Errorf("export --postgres --site amazon: %v\nstdout %q\nstderr %q\nwant %q", err, out, stderr, want)
	}
	if _, stderr, err := runMain(t, "results", "export", "--postgres", pg, "--site", "ozon"); err != nil || stderr != "exported 0 items\n" {
		t.Errorf("export --postgres --site ozon: %v %q", err, stderr)
	}
}
