package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"crawlq/internal/testpg"
	"crawlq/results/item"
	"crawlq/results/pgsink"
)

// TestPricesFormats: `prices --format csv` prints the dashboard's CSV of
// the history (header, kopecks, oldest first), `--format json` the same
// points as `--json`, the default a table; an unknown format is refused
// naming the flag. The item may be named by its product URL, as enqueue
// takes it; an item never observed exits 1 in every format.
func TestPricesFormats(t *testing.T) {
	pg := testpg.DB(t)
	ctx := context.Background()
	st, err := pgsink.Open(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var obs []pgsink.Observation
	for i, p := range []int64{100000, 90000, 95000} {
		it := item.Item{Site: "ozon", ID: "7", Title: "kettle", Price: p, FetchedAt: at.Add(time.Duration(i) * time.Hour)}
		obs = append(obs, pgsink.Observation{EntryMS: int64(i + 1), Item: it, Task: "t", Schedule: "hourly"})
	}
	if _, err := st.Write(ctx, obs, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()

	out, stderr, err := runMain(t, "prices", "ozon", "7", "--postgres", pg, "--format", "csv")
	want := "site,id,observed_at,price,old_price,in_stock,seller,schedule,task\n" +
		"ozon,7,2026-03-01T10:00:00Z,100000,,,,hourly,t\n" +
		"ozon,7,2026-03-01T11:00:00Z,90000,,,,hourly,t\n" +
		"ozon,7,2026-03-01T12:00:00Z,95000,,,,hourly,t\n"
	if err != nil || out != want {
		t.Errorf("prices --format csv: %v %s\ngot:\n%s\nwant:\n%s", err, stderr, out, want)
	}
	out, _, err = runMain(t, "prices", "ozon", "7", "--postgres", pg, "--format", "json")
	var ps []pgsink.PricePoint
	if err != nil || json.Unmarshal([]byte(out), &ps) != nil || len(ps) != 3 || ps[1].Price != 90000 {
		t.Errorf("prices --format json: %v\n%s", err, out)
	}
	out, _, err = runMain(t, "prices", "ozon", "7", "--postgres", pg)
	if err != nil || !strings.HasPrefix(out, "AT ") || !strings.Contains(out, "900.00") {
		t.Errorf("prices (table): %v\n%s", err, out)
	}
	_, stderr, err = runMain(t, "prices", "ozon", "7", "--postgres", pg, "--format", "xml")
	if err == nil || !strings.Contains(stderr, `--format "xml"`) {
		t.Errorf("prices --format xml: %v %s", err, stderr)
	}
	for _, u := range []string{"https://www.ozon.ru/product/kettle-7/", "https://www.ozon.ru/product/7/?at=x"} {
		out, stderr, err = runMain(t, "prices", "ozon", u, "--postgres", pg)
		if err != nil || strings.Count(out, "\n") != 4 || !strings.Contains(out, "900.00") {
			t.Errorf("prices ozon %s: %v %s\n%s", u, err, stderr, out)
		}
	}
	_, stderr, err = runMain(t, "prices", "ozon", "https://www.ozon.ru/category/kettles/", "--postgres", pg)
	if err == nil || !strings.Contains(stderr, "no product ID") {
		t.Errorf("prices with a category URL: %v %s", err, stderr)
	}
	for _, format := range priceFormats {
		out, stderr, err = runMain(t, "prices", "ozon", "8", "--postgres", pg, "--format", format)
		if err == nil || out != "" || stderr != "crawlq: no observations of ozon 8\n" {
			t.Errorf("prices of an item never seen, --format %s: %v\nstdout %q\nstderr %q", format, err, out, stderr)
		}
	}
}

// TestPricesWithoutTables: `prices` on a database the sink never
// migrated says it has no crawlq tables and how to make them, not
// PostgreSQL's "relation does not exist".
func TestPricesWithoutTables(t *testing.T) {
	pg := testpg.DB(t)
	for _, args := range [][]string{{"ozon", "7"}, {"ozon", "7", "--format", "csv"}} {
		_, stderr, err := runMain(t, append(append([]string{"prices"}, args...), "--postgres", pg)...)
		if err == nil || !strings.Contains(stderr, "has no crawlq tables") || !strings.Contains(stderr, "crawlq sink") {
			t.Errorf("prices %v on an empty database: %v, stderr %q", args, err, stderr)
		}
	}
}

// TestChangesSignAndPrecision: `results changes` prints a rise as +N% and
// a fall as −N% under CHANGE, as the dashboard does, and its JSON's
// change_pct is negative for a fall with two decimals at most; on a
// database without the sink's tables it says to run the sink.
func TestChangesSignAndPrecision(t *testing.T) {
	pg := testpg.DB(t)
	_, stderr, err := runMain(t, "results", "changes", "--postgres", pg)
	if err == nil || !strings.Contains(stderr, "has no crawlq tables: run `crawlq sink --postgres URL`") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("results changes on an empty database: %v, stderr %q", err, stderr)
	}
	ctx := context.Background()
	st, err := pgsink.Open(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	var obs []pgsink.Observation
	for i, o := range []struct {
		id    string
		price int64
	}{{"up", 100000}, {"third", 30000}, {"up", 106800}, {"third", 20000}} {
		it := item.Item{Site: "ozon", ID: o.id, Title: o.id, Price: o.price, FetchedAt: at.Add(time.Duration(i) * time.Minute)}
		obs = append(obs, pgsink.Observation{EntryMS: int64(i + 1), Item: it, Task: "t"})
	}
	if _, err := st.Write(ctx, obs, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out, stderr, err := runMain(t, "results", "changes", "--postgres", pg)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	row := func(i int) string { return strings.Join(strings.Fields(lines[i])[1:], " ") }
	if err != nil || len(lines) != 3 || row(0) != "SITE ID FROM TO CHANGE TITLE" ||
		row(1) != "ozon third 300.00 200.00 −33.33% third" || row(2) != "ozon up 1000.00 1068.00 +6.8% up" {
		t.Errorf("results changes: %v %s\n%s", err, stderr, out)
	}
	out, _, err = runMain(t, "results", "changes", "--postgres", pg, "--json")
	if err != nil || !strings.Contains(out, `"change_pct":-33.33`) || !strings.Contains(out, `"change_pct":6.8`) || strings.Contains(out, "drop") {
		t.Errorf("results changes --json: %v\n%s", err, out)
	}
}
