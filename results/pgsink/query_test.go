package pgsink_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"crawlq/internal/testpg"
	"crawlq/results"
	"crawlq/results/item"
	"crawlq/results/pgsink"
)

// openStore opens a migrated store on a new database and writes its
// observations, one stream entry each.
func openStore(t *testing.T, its ...item.Item) (*pgsink.Store, string) {
	t.Helper()
	url := testpg.DB(t)
	st, err := pgsink.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var batch []pgsink.Observation
	for i, it := range its {
		batch = append(batch, pgsink.Observation{EntryMS: int64(i + 1), Item: it, Task: "t"})
	}
	if len(batch) > 0 {
		if _, err := st.Write(context.Background(), batch, nil); err != nil {
			t.Fatal(err)
		}
	}
	return st, url
}

// TestUnknownOldPriceIsNull: an item seen without an old price has NULL
// in the store, an empty CSV cell and no old_price in JSON, in the latest
// state, every observation and the price history; a known one is kept.
func TestUnknownOldPriceIsNull(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	st, _ := openStore(t, item.Item{Site: "ozon", ID: "1", Title: "kettle", Price: 100, Currency: "RUB", FetchedAt: at},
		item.Item{Site: "ozon", ID: "2", Title: "mug", Price: 100, OldPrice: 150, Currency: "RUB", FetchedAt: at})
	ctx := context.Background()
	var nulls int
	if err := st.Conn().QueryRow(ctx, `SELECT (SELECT count(*) FROM items WHERE old_price IS NULL) +
	        (SELECT count(*) FROM observations WHERE old_price IS NULL)`).Scan(&nulls); err != nil || nulls != 2 {
		t.Fatalf("%d NULL old prices (%v), want item 1's in items and observations", nulls, err)
	}
	for _, all := range []bool{false, true} {
		var csv, jl strings.Builder
		o := pgsink.ExportOptions{ExportOptions: results.ExportOptions{Format: results.CSV, All: all}}
		if _, err := pgsink.Export(ctx, st.Conn(), &csv, o); err != nil {
			t.Fatal(err)
		}
		o.Format = results.JSONL
		if _, err := pgsink.Export(ctx, st.Conn(), &jl, o); err != nil {
			t.Fatal(err)
		}
		rows, lines := strings.Split(csv.String(), "\n"), strings.Split(jl.String(), "\n")
		if !strings.HasPrefix(rows[1], "ozon,1,kettle,100,,RUB,") || !strings.HasPrefix(rows[2], "ozon,2,mug,100,150,RUB,") {
			t.Errorf("all=%v csv, want an empty old_price for item 1 and 150 for item 2:\n%s", all, csv.String())
		}
		if strings.Contains(lines[0], "old_price") || !strings.Contains(lines[1], `"old_price":150`) {
			t.Errorf("all=%v jsonl, want no old_price for item 1 and 150 for item 2:\n%s", all, jl.String())
		}
	}
	ps, err := pgsink.Prices(ctx, st.Conn(), "ozon", "1")
	raw, _ := json.Marshal(ps)
	if err != nil || len(ps) != 1 || strings.Contains(string(raw), "old_price") {
		t.Errorf("prices of item 1: %s %v, want one point without old_price", raw, err)
	}
}

// TestSitesListsStoredSites: Sites lists each site with items once,
// sorted, a site no crawler knows by name included; none for an empty
// store.
func TestSitesListsStoredSites(t *testing.T) {
	at := time.Now().UTC()
	var its []item.Item
	for _, s := range []string{"ozon", "shop.example", "avito", "ozon", "shop.example"} {
		its = append(its, item.Item{Site: s, ID: s + time.Duration(len(its)).String(), FetchedAt: at})
	}
	st, _ := openStore(t, its...)
	got, err := pgsink.Sites(context.Background(), st.Conn())
	if d := cmp.Diff([]string{"avito", "ozon", "shop.example"}, got); err != nil || d != "" {
		t.Errorf("Sites: %v (-want +got):\n%s", err, d)
	}
	empty, _ := openStore(t)
	if got, err := pgsink.Sites(context.Background(), empty.Conn()); err != nil || len(got) != 0 {
		t.Errorf("Sites of an empty store: %v %v", got, err)
	}
}

// TestGetAndFindItems: an item's latest state by (site, id), and items
// found by id or by every word of their title, on one site or all.
func TestGetAndFindItems(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	st, _ := openStore(t,
		item.Item{Site: "ozon", ID: "1", Title: "Blue Kettle 2L", Price: 100, FetchedAt: at},
		item.Item{Site: "ozon", ID: "1", Title: "Blue Kettle 2L", Price: 90, FetchedAt: at.Add(time.Minute)},
		item.Item{Site: "avito", ID: "2", Title: "red kettle", Price: 50, FetchedAt: at},
		item.Item{Site: "ozon", ID: "3", Title: "mug", Price: 10, FetchedAt: at})
	ctx := context.Background()
	it, err := pgsink.GetItem(ctx, st.Conn(), "ozon", "1")
	if err != nil || it.Price != 90 || it.Title != "Blue Kettle 2L" || !it.FirstSeen.Equal(at) || !it.LastSeen.Equal(at.Add(time.Minute)) {
		t.Fatalf("GetItem: %+v %v", it, err)
	}
	if _, err := pgsink.GetItem(ctx, st.Conn(), "ozon", "9"); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("GetItem of a missing item: %v, want pgx.ErrNoRows", err)
	}
	ids := func(site, q string) []string {
		its, err := pgsink.FindItems(ctx, st.Conn(), site, q, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range its {
			out = append(out, it.Site+"/"+it.ID)
		}
		return out
	}
	for _, c := range []struct {
		site, q string
		want    []string
	}{
		{"", "kettle", []string{"ozon/1", "avito/2"}},
		{"ozon", "KETTLE blue", []string{"ozon/1"}},
		{"ozon", "3", []string{"ozon/3"}},
		{"avito", "mug", nil},
	} {
		if d := cmp.Diff(c.want, ids(c.site, c.q)); d != "" {
			t.Errorf("FindItems(%q, %q) (-want +got):\n%s", c.site, c.q, d)
		}
	}
}
