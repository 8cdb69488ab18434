package pgsink_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"crawlq/internal/testpg"
	"crawlq/results/item"
	"crawlq/results/pgsink"
)

// TestSearchItems finds an item by its exact id (on one site or every
// site), by every word of its title in any case, with LIKE's wildcards
// taken literally, the id match first and the answer bounded by limit.
func TestSearchItems(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	st, _ := openStore(t,
		item.Item{Site: "ozon", ID: "7", Title: "Electric Kettle 1.7 l", Price: 100, FetchedAt: at},
		item.Item{Site: "ozon", ID: "8", Title: "kettle descaler 100%", Price: 100, FetchedAt: at},
		item.Item{Site: "avito", ID: "7", Title: "sofa", Price: 100, FetchedAt: at},
		item.Item{Site: "avito", ID: "9", Title: "old kettle, item 7", Price: 100, FetchedAt: at})
	ctx := context.Background()
	for _, tc := range []struct {
		name, site, q string
		limit         int
		want          []string
	}{
		{name: "id on one site", site: "ozon", q: "7", limit: 10, want: []string{"ozon/7"}},
		{name: "id on every site, then titles", q: " 7 ", limit: 10, want: []string{"avito/7", "ozon/7", "avito/9"}},
		{name: "title words in any case", q: "KETTLE electric", limit: 10, want: []string{"ozon/7"}},
		{name: "one word, every site", q: "kettle", limit: 10, want: []string{"avito/9", "ozon/7", "ozon/8"}},
		{name: "percent is literal", q: "100%", limit: 10, want: []string{"ozon/8"}},
		{name: "underscore is literal", q: "k_ttle", limit: 10, want: nil},
		{name: "limit", q: "kettle", limit: 2, want: []string{"avito/9", "ozon/7"}},
		{name: "empty query", q: "  ", limit: 10, want: nil},
		{name: "unknown site", site: "wildberries", q: "kettle", limit: 10, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			its, err := pgsink.SearchItems(ctx, st.Conn(), tc.site, tc.q, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range its {
				got = append(got, it.Site+"/"+it.ID)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("SearchItems(%q, %q) (-want +got):\n%s", tc.site, tc.q, d)
			}
		})
	}
}

// TestItemAndHistory: Item gives the latest state or ErrNoItem;
// RecentPrices the newest observations first with the total; PriceSteps
// the first, every change of price, old price or stock, and the last.
func TestItemAndHistory(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	yes, no := true, false
	prices := []int64{1000, 1000, 900, 900, 900, 950, 950}
	var its []item.Item
	for i, p := range prices {
		stock := &yes
		if i == 4 {
			stock = &no
		}
		its = append(its, item.Item{Site: "ozon", ID: "7", Title: "kettle", Price: p, OldPrice: 1200, InStock: stock,
			Seller: "Shop", Rating: 4.5, Reviews: 10, URL: "https://ozon.example/7", FetchedAt: at.Add(time.Duration(i) * time.Hour)})
	}
	st, _ := openStore(t, its...)
	ctx := context.Background()
	it, err := pgsink.Item(ctx, st.Conn(), "ozon", "7")
	if err != nil || it.Price != 950 || it.URL != "https://ozon.example/7" || it.Reviews != 10 || !it.LastSeen.Equal(at.Add(6*time.Hour)) {
		t.Fatalf("Item: %+v %v", it, err)
	}
	if _, err := pgsink.Item(ctx, st.Conn(), "ozon", "8"); !errors.Is(err, pgsink.ErrNoItem) {
		t.Errorf("Item of an unknown id: %v, want ErrNoItem", err)
	}
	recent, total, err := pgsink.RecentPrices(ctx, st.Conn(), "ozon", "7", 3)
	if err != nil || total != 7 || len(recent) != 3 || recent[0].Price != 950 || !recent[0].At.Equal(at.Add(6*time.Hour)) {
		t.Fatalf("RecentPrices: %d of %d %v: %+v", len(recent), total, err, recent)
	}
	steps, err := pgsink.PriceSteps(ctx, st.Conn(), "ozon", "7", 100)
	var hours []int
	for _, p := range steps {
		hours = append(hours, int(p.At.Sub(at)/time.Hour))
	}
	if d := cmp.Diff([]int{0, 2, 4, 5, 6}, hours); err != nil || d != "" {
		t.Errorf("PriceSteps hours (-want +got):\n%s %v", d, err)
	}
	steps, _ = pgsink.PriceSteps(ctx, st.Conn(), "ozon", "7", 2)
	if len(steps) != 2 || !steps[1].At.Equal(at.Add(6*time.Hour)) {
		t.Errorf("PriceSteps limit 2: %+v, want the newest two", steps)
	}
}

// TestWritePricesCSV: a header, kopecks, empty cells for unknowns.
func TestWritePricesCSV(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	no := false
	var b strings.Builder
	err := pgsink.WritePricesCSV(&b, "ozon", "7", []pgsink.PricePoint{
		{At: at, Price: 100000, Task: "t1"},
		{At: at.Add(time.Hour), Price: 90000, OldPrice: 120000, InStock: &no, Seller: `Shop "A", Ltd`, Schedule: "hourly", Task: "t2"}})
	want := "site,id,observed_at,price,old_price,in_stock,seller,schedule,task\n" +
		"ozon,7,2026-03-01T10:00:00Z,100000,,,,,t1\n" +
		"ozon,7,2026-03-01T11:00:00Z,90000,120000,false,\"Shop \"\"A\"\", Ltd\",hourly,t2\n"
	if d := cmp.Diff(want, b.String()); err != nil || d != "" {
		t.Errorf("CSV (-want +got):\n%s %v", d, err)
	}
}

// TestNoTablesSaysSo: reading a database nothing migrated is ErrNoTables,
// which says how to create them.
func TestNoTablesSaysSo(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testpg.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, err1 := pgsink.SearchItems(ctx, conn, "", "kettle", 10)
	_, err2 := pgsink.Item(ctx, conn, "ozon", "7")
	_, err3 := pgsink.Prices(ctx, conn, "ozon", "7")
	for i, err := range []error{err1, err2, pgsink.SchemaHint(err3)} {
		if !errors.Is(err, pgsink.ErrNoTables) || !strings.Contains(err.Error(), "crawlq sink") {
			t.Errorf("query %d on an empty database: %v, want ErrNoTables", i+1, err)
		}
	}
}
