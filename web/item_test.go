package web

import (
	"context"
	"encoding/csv"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgxpool"

	"crawlq/internal/testpg"
	"crawlq/internal/testredis"
	"crawlq/results/item"
	"crawlq/results/pgsink"
)

// historyStart is when the test items are first seen.
var historyStart = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// kettleHistory is n hourly sightings of ozon 7: its price moves every two
// hours, a sale from hour 12 to 14, out of stock from hour 7 to 9 and 20
// to 21, the old price gone for the last two.
func kettleHistory(n int) []item.Item {
	yes, no := true, false
	out := make([]item.Item, n)
	for i := range out {
		p := int64(100000 - (i/2)%4*5000)
		if i >= 12 && i <= 14 {
			p = 60000
		}
		stock := &yes
		if i >= 7 && i <= 9 || i >= 20 && i <= 21 {
			stock = &no
		}
		old := int64(120000)
		if i >= n-2 {
			old = 0
		}
		out[i] = item.Item{Site: "ozon", ID: "7", Title: "Electric kettle 1.7 l", Price: p, OldPrice: old, Currency: "RUB",
			Seller: "Teapot Co", Rating: 4.6, Reviews: 1234, InStock: stock, URL: "https://www.ozon.ru/product/7/",
			FetchedAt: historyStart.Add(time.Duration(i) * time.Hour)}
	}
	return out
}

// wantSteps counts a history's price changes and the points its chart
// passes through (the first, each change of price, old price or stock,
// the last).
func wantSteps(its []item.Item) (steps, points int) {
	for i, it := range its {
		if i > 0 && it.Price != its[i-1].Price {
			steps++
		}
		if i == 0 || i == len(its)-1 || it.Price != its[i-1].Price || it.OldPrice != its[i-1].OldPrice || *it.InStock != *its[i-1].InStock {
			points++
		}
	}
	return steps, points
}

// newItemStore writes its through the sink's own write path
// (pgsink.Store.Write, one stream entry each) into a fresh database and
// returns a pool reading it.
func newItemStore(t *testing.T, its ...item.Item) *pgxpool.Pool {
	t.Helper()
	url := testpg.DB(t)
	ctx := context.Background()
	st, err := pgsink.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	obs := make([]pgsink.Observation, len(its))
	for i, it := range its {
		obs[i] = pgsink.Observation{EntryMS: it.FetchedAt.UnixMilli(), EntrySeq: int64(i), Item: it, Task: "sched:kettles:" + strconv.Itoa(i), Schedule: "kettles"}
	}
	if _, err := st.Write(ctx, obs, nil); err != nil {
		t.Fatal(err)
	}
	pool, err := pgsink.OpenPool(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// itemServer serves a dashboard reading store (no sampler) and returns
// its base URL.
func itemServer(t *testing.T, store pgsink.Querier) string {
	t.Helper()
	s, err := NewServer(Config{Redis: asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBWeb}, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return startHandler(t, s)
}

// TestItemSearch: the search page finds an item by its exact id (on one
// site or all) and by words of its title, links each to its page, and
// says when nothing matches.
func TestItemSearch(t *testing.T) {
	its := append(kettleHistory(3), item.Item{Site: "avito", ID: "9", Title: "Old kettle", Price: 50000, FetchedAt: historyStart})
	base := itemServer(t, newItemStore(t, its...))
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{name: "id", query: "site=ozon&q=7", want: []string{"/item/ozon/7"}},
		{name: "id on every site", query: "q=9", want: []string{"/item/avito/9"}},
		{name: "title words", query: "q=ELECTRIC+kettle", want: []string{"/item/ozon/7"}},
		{name: "one word, two sites", query: "q=kettle", want: []string{"/item/avito/9", "/item/ozon/7"}},
		{name: "nothing", query: "q=sofa", want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, "GET", base+"/items?"+tc.query, "")
			if code != http.StatusOK {
				t.Fatalf("GET /items?%s: %d\n%s", tc.query, code, body)
			}
			if d := cmp.Diff(tc.want, resultLinks(body)); d != "" {
				t.Errorf("links (-want +got):\n%s", d)
			}
			if tc.want == nil && !strings.Contains(body, `id="no-results"`) {
				t.Errorf("no match, but no message saying so:\n%s", body)
			}
		})
	}
}

// resultLinks are the distinct item links of the search results, in order.
func resultLinks(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`href="(/item/[^"]+)"`).FindAllStringSubmatch(body, -1) {
		if len(out) == 0 || out[len(out)-1] != m[1] {
			out = append(out, m[1])
		}
	}
	return out
}

// TestItemPage: the page shows the item's facts, a link to the site, the
// chart with one level change per price change, every observation newest
// first and a link to the CSV; an unknown item is 404.
func TestItemPage(t *testing.T) {
	its := kettleHistory(30)
	base := itemServer(t, newItemStore(t, its...))
	code, body := get(t, "GET", base+"/item/ozon/7", "")
	if code != http.StatusOK {
		t.Fatalf("GET /item/ozon/7: %d\n%s", code, body)
	}
	steps, points := wantSteps(its)
	for _, want := range []string{"Electric kettle 1.7 l", `href="https://www.ozon.ru/product/7/"`, "Teapot Co", "4.6", "1234 reviews",
		"900.00 RUB", `data-steps="` + strconv.Itoa(steps) + `"`, `data-points="` + strconv.Itoa(points) + `"`,
		`class="oos"`, `href="/item/ozon/7.csv"`, "30 observations"} {
		if !strings.Contains(body, want) {
			t.Errorf("item page lacks %q", want)
		}
	}
	if got := strings.Count(pathData(t, body, "price"), "V"); got != steps {
		t.Errorf("price line changes level %d times, want %d", got, steps)
	}
	rows := regexp.MustCompile(`<tr><td>(2026-[^<]+)<td>`).FindAllStringSubmatch(body, -1)
	if len(rows) != 30 || rows[0][1] != "2026-03-02 05:00:00" || rows[29][1] != "2026-03-01 00:00:00" {
		t.Errorf("observation rows: %d, want 30 newest first: %v", len(rows), rows)
	}
	if code, _ := get(t, "GET", base+"/item/ozon/8", ""); code != http.StatusNotFound {
		t.Errorf("GET /item/ozon/8 (never seen): %d, want 404", code)
	}
}

// pathData is the d attribute of the chart's path of class.
func pathData(t *testing.T, body, class string) string {
	t.Helper()
	m := regexp.MustCompile(`<path class="` + class + `" d="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s path in the page", class)
	}
	return m[1]
}

// TestItemCSV: /item/S/ID.csv and ?format=csv give every observation,
// oldest first, as pgsink.WritePricesCSV (the CSV of `crawlq prices`).
func TestItemCSV(t *testing.T) {
	its := kettleHistory(25)
	base := itemServer(t, newItemStore(t, its...))
	for _, path := range []string{"/item/ozon/7.csv", "/item/ozon/7?format=csv"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(resp.Body).ReadAll()
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || len(recs) != 26 {
			t.Fatalf("GET %s: %d, %d records, %v", path, resp.StatusCode, len(recs), err)
		}
		if ct, cd := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"); !strings.HasPrefix(ct, "text/csv") || !strings.Contains(cd, "ozon-7.csv") {
			t.Errorf("GET %s: Content-Type %q, Content-Disposition %q", path, ct, cd)
		}
		if d := cmp.Diff(pgsink.PricesCSVHeader, recs[0]); d != "" {
			t.Errorf("header (-want +got):\n%s", d)
		}
		want := []string{"ozon", "7", "2026-03-01T12:00:00Z", "60000", "120000", "true", "Teapot Co", "kettles", "sched:kettles:12"}
		if d := cmp.Diff(want, recs[13]); d != "" {
			t.Errorf("hour 12 (-want +got):\n%s", d)
		}
		if last := recs[25]; last[4] != "" || last[2] != "2026-03-02T00:00:00Z" {
			t.Errorf("last row %v, want hour 24 with an empty old price", last)
		}
	}
}

// TestItemPageEscapes: a hostile title, seller, id and URL are shown as
// text: no markup of theirs reaches the page, and a javascript: link is
// neutralized; an id with / ? # (a generic page job's URL) has a page.
func TestItemPageEscapes(t *testing.T) {
	evil := item.Item{Site: "ozon", ID: `x"><b>id`, Title: `<script>alert(1)</script>`, Seller: `"><img src=x onerror=alert(2)>`,
		URL: "javascript:alert(3)", Price: 100, FetchedAt: historyStart}
	slashed := item.Item{Site: "page", ID: "https://shop.example/p/1?x=y#z", Title: "slashed", Price: 100, FetchedAt: historyStart}
	base := itemServer(t, newItemStore(t, evil, slashed))
	if code, body := get(t, "GET", base+ItemURL(slashed.Site, slashed.ID), ""); code != http.StatusOK || !strings.Contains(body, "slashed") {
		t.Errorf("GET %s (an id with / ? #): %d", ItemURL(slashed.Site, slashed.ID), code)
	}
	code, body := get(t, "GET", base+ItemURL(evil.Site, evil.ID), "")
	if code != http.StatusOK {
		t.Fatalf("GET the hostile item's page: %d\n%s", code, body)
	}
	for _, bad := range []string{"<script>alert", "<img src=x", `"><b>`, `href="javascript:`} {
		if strings.Contains(body, bad) {
			t.Errorf("item page carries %q unescaped", bad)
		}
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("item page does not show the title as text")
	}
	code, body = get(t, "GET", base+"/items?q=script", "")
	if code != http.StatusOK || strings.Contains(body, "<script>alert") || !strings.Contains(body, `href="/item/ozon/x%22%3E%3Cb%3Eid"`) {
		t.Errorf("search for the hostile item: %d\n%s", code, body)
	}
}

// TestItemPageBounded: an item with 3,000 observations, its price and
// old price moving at each, long seller names, gets a page under 100 KB:
// the chart thinned to at most maxChartPoints points, the table to the
// newest itemTableRows with a note; the CSV still has all of them.
func TestItemPageBounded(t *testing.T) {
	its := make([]item.Item, 3000)
	seller := strings.Repeat("Very Long Seller Name LLC ", 4)
	for i := range its {
		p := int64(100000 + (i*7919)%20000)
		its[i] = item.Item{Site: "ozon", ID: "7", Title: "kettle", Price: p, OldPrice: p + 12345, Seller: seller,
			FetchedAt: historyStart.Add(time.Duration(i) * time.Minute)}
	}
	base := itemServer(t, newItemStore(t, its...))
	code, body := get(t, "GET", base+"/item/ozon/7", "")
	if code != http.StatusOK {
		t.Fatalf("GET /item/ozon/7: %d", code)
	}
	if len(body) >= 100<<10 {
		t.Errorf("item page of 3,000 observations: %d bytes, want < 100 KB", len(body))
	}
	t.Logf("item page of 3,000 observations: %d bytes", len(body))
	m := regexp.MustCompile(`data-points="(\d+)"`).FindStringSubmatch(body)
	if n, _ := strconv.Atoi(m[1]); n > maxChartPoints || n < maxChartPoints/2 {
		t.Errorf("chart points %d, want at most %d and not much fewer", n, maxChartPoints)
	}
	if rows := strings.Count(body, `<tr><td>2026-`); rows != itemTableRows || !strings.Contains(body, "the latest 500 of 3000") {
		t.Errorf("%d observation rows, want %d and a note", rows, itemTableRows)
	}
	_, csvBody := get(t, "GET", base+"/item/ozon/7.csv", "")
	if n := strings.Count(csvBody, "\n"); n != 3001 {
		t.Errorf("CSV has %d lines, want 3,001", n)
	}
}

// TestItemPagesWithoutTables: a store nothing migrated answers 503 with
// what to do, and the search says so.
func TestItemPagesWithoutTables(t *testing.T) {
	pool, err := pgsink.OpenPool(context.Background(), testpg.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	base := itemServer(t, pool)
	code, body := get(t, "GET", base+"/item/ozon/7", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "no crawlq tables") {
		t.Errorf("item page: %d %s", code, body)
	}
	code, body = get(t, "GET", base+"/items?q=7", "")
	if code != http.StatusBadGateway || !strings.Contains(body, "no crawlq tables") {
		t.Errorf("search: %d %s", code, body)
	}
}

// TestNoStoreNoItemPages: without Config.Store there is no search and no
// item page.
func TestNoStoreNoItemPages(t *testing.T) {
	base := itemServer(t, nil)
	for _, path := range []string{"/items?q=7", "/item/ozon/7"} {
		if code, _ := get(t, "GET", base+path, ""); code != http.StatusNotFound {
			t.Errorf("GET %s without a store: %d, want 404", path, code)
		}
	}
}
