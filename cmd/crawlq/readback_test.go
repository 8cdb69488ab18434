package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"crawlq/internal/testpg"
	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/results/item"
	"crawlq/results/pgsink"
)

// TestReadBackFromPostgres: after a sink stored three sightings of one
// item (price 1000, 800, 900) and one of another, `prices` prints the
// history, `results changes --min-drop 10%` the one fall, and `results
// export --postgres` the latest state, in both formats.
func TestReadBackFromPostgres(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBCmd)
	pg := testpg.DB(t)
	ctx := context.Background()
	s := results.NewSink(rdb, 0)
	now := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	for i, p := range []int64{1000, 800, 900} {
		it := item.Item{Site: "ozon", ID: "7", Title: "kettle", Price: p, Currency: "RUB", FetchedAt: now.Add(time.Duration(i) * time.Minute)}
		if err := s.WritePageOf(ctx, results.Origin{Task: "t", Schedule: "hourly"}, i+1, []item.Item{it}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WritePage(ctx, "u", 1, []item.Item{{Site: "avito", ID: "9", Title: "sofa", Price: 5000, FetchedAt: now}}); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	added := make(chan int, 10)
	sink := pgsink.New(pgsink.Config{Redis: rdb, Postgres: pg, OnCommit: func(_, n int) { added <- n }})
	done := make(chan error, 1)
	go func() { done <- sink.Run(sctx) }()
	for got := 0; got < 4; {
		select {
		case n := <-added:
			got += n
		case <-time.After(30 * time.Second):
			t.Fatalf("sink wrote %d of 4 rows in 30s", got)
		}
	}
	cancel()
	<-done

	out, stderr, err := runMain(t, "prices", "ozon", "7", "--postgres", pg, "--json")
	var ps []pgsink.PricePoint
	if err != nil || json.Unmarshal([]byte(out), &ps) != nil || len(ps) != 3 || ps[1].Price != 800 || ps[0].Schedule != "hourly" {
		t.Fatalf("prices --json: %v %s\n%s", err, stderr, out)
	}
	out, _, err = runMain(t, "prices", "ozon", "7", "--postgres", pg)
	if err != nil || !strings.Contains(out, "8.00") || !strings.Contains(out, "hourly") {
		t.Fatalf("prices: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		if f := strings.Fields(line); len(f) < 3 || f[2] != "-" {
			t.Errorf("prices: an unknown old price shows as %q, want -:\n%s", f, out)
		}
	}
	out, stderr, err = runMain(t, "results", "changes", "--postgres", pg, "--since", "2h", "--min-drop", "10%", "--json")
	var cs []pgsink.Change
	if err != nil || json.Unmarshal([]byte(out), &cs) != nil || len(cs) != 1 || cs[0].From != 1000 || cs[0].To != 800 {
		t.Fatalf("results changes --min-drop 10%%: %v %s\n%s", err, stderr, out)
	}
	out, _, err = runMain(t, "results", "export", "--postgres", pg, "--format", "csv")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 3 || !strings.HasPrefix(lines[2], "ozon,7,kettle,900,") {
		t.Fatalf("results export --postgres --format csv: %v\n%s", err, out)
	}
	out, _, err = runMain(t, "results", "export", "--postgres", pg, "--all", "--site", "ozon")
	if err != nil || strings.Count(out, "\n") != 3 {
		t.Fatalf("results export --postgres --all --site ozon: %v\n%s", err, out)
	}
	_, stderr, err = runMain(t, "results", "changes", "--postgres", pg, "--min-drop", "ten")
	if err == nil || !strings.Contains(stderr, "--min-drop") {
		t.Fatalf("a bad --min-drop: %v %s", err, stderr)
	}
	checkPricesSite(t, pg)
}

// checkPricesSite: `prices` of a site neither built in nor in the store
// says the site is unknown and lists the known ones (text and --json); a
// known site without the item says there are no observations.
func checkPricesSite(t *testing.T, pg string) {
	t.Helper()
	for _, args := range [][]string{{"prices", "amazon", "1"}, {"prices", "amazon", "1", "--json"}} {
		out, stderr, err := runMain(t, append(args, "--postgres", pg)...)
		if want := `unknown site "amazon" (known: avito, ozon, wildberries)`; err == nil || !strings.Contains(stderr, want) || out != "" {
			t.Errorf("%v: %v, stdout %q, stderr %q; want an error saying %s", args, err, out, stderr, want)
		}
	}
	_, stderr, err := runMain(t, "prices", "wildberries", "1", "--postgres", pg)
	if err == nil || !strings.Contains(stderr, "no observations of wildberries 1") {
		t.Errorf("prices wildberries 1: %v %s", err, stderr)
	}
}

// TestParseSince reads durations, days and dates, and names the flag on
// bad input.
func TestParseSince(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"24h": now.Add(-24 * time.Hour), "7d": now.Add(-7 * 24 * time.Hour), "90m": now.Add(-90 * time.Minute),
		"2026-03-01": time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), "": {},
	} {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := parseSince("yesterday", now); err == nil || !strings.Contains(err.Error(), "--since") {
		t.Errorf("parseSince(yesterday): %v", err)
	}
}
