package ozon_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/results/item"
	"crawlq/tasks/site"
	"crawlq/testbed/sitetest"
)

// composerURL is the page API URL the 2026 capture answered.
const composerURL = "https://www.ozon.ru/api/composer-api.bx/page/json/v2?url=%2Fsearch%2F%3Ftext%3D%D0%BD%D0%BE%D1%83%D1%82%D0%B1%D1%83%D0%BA"

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseComposerAnswer2026 parses the real page API answer of
// 2026-08-07 (widgetStates values are JSON strings; 2026 tiles: the title
// a textDS, rating and reviews a labelListV2): every tile has its ID,
// title, price, old price, rating and reviews as the capture's author
// wrote them down, and the stock line is not taken for the title.
func TestParseComposerAnswer2026(t *testing.T) {
	page, err := site.Parse("ozon", "search", testdata(t, "ozon_composer_search_2026-08.json"), composerURL, at)
	if err != nil {
		t.Fatal(err)
	}
	tile := func(id, slug, title string, price, old int64, rating float64, reviews int) item.Item {
		return item.Item{Site: "ozon", ID: id, Title: title, Price: price, OldPrice: old, Currency: "RUB",
			Rating: rating, Reviews: reviews, URL: "https://www.ozon.ru/product/" + slug + "-" + id + "/", FetchedAt: at}
	}
	want := []item.Item{
		tile("3497076095", "neobihier-noutbuk-15-6-amd-ryzen-9-5900hx-ram-16-gb-ssd-512-gb-amd-radeon-graphics-windows-pro-belyy",
			`Neobihier Ноутбук 15.6", AMD Ryzen 9 5900HX, RAM 16 ГБ, SSD 512 ГБ, AMD Radeon Graphics, Windows Pro, белый, Русская раскладка`,
			3953400, 6688800, 5.0, 339),
		tile("2796072502", "noutbuk-15-6-intel-celeron-n5095a-ram-16-gb-ssd-512-gb-intel-uhd-graphics-750-windows-pro-rozovyy",
			`Ноутбук 15.6", Intel Celeron N5095A, RAM 16 ГБ, SSD 512 ГБ, Intel UHD Graphics 750, Windows Pro, розовый, светло-розовый, Русская раскладка`,
			3229600, 0, 4.7, 472),
		tile("4695873085", "noutbuk-dlya-ucheby-i-raboty-igrovoy-4-yadra-noutbuk-15-6-intel-n95-ram-32-gb-ssd-2048-gb-windows",
			`Ноутбук для учебы и работы игровой 4 ядра Ноутбук 15.6", Intel N95, RAM 32 ГБ, SSD 2048 ГБ, Windows Pro, серебристый, светло-серый, Русская раскладка`,
			2683800, 20350000, 4.9, 1300),
	}
	if d := cmp.Diff(want, page.Items); d != "" {
		t.Fatalf("items (-want +got):\n%s", d)
	}
	if page.Next || page.NextURL != "" || len(page.Follow) != 3 {
		t.Fatalf("next %v %q, %d follows; want no next page (the capture has no nextPage) and 3 follows", page.Next, page.NextURL, len(page.Follow))
	}
}

// TestParseAPINextPage: the next page is the answer's top-level nextPage,
// else the paginator widget's, asked through the page API on the same
// host; a nextPage off the site is not followed.
func TestParseAPINextPage(t *testing.T) {
	tiles := string(apiState(t, "ozon_composer_search_2026-08.json"))
	pager := `{"nextPage":"/category/noutbuki-15692/?layout_page_index=2&page=2&paginator_token=3616"}`
	want := "https://www.ozon.ru/api/entrypoint-api.bx/page/json/v2?url=%2Fcategory%2Fnoutbuki-15692%2F%3Flayout_page_index%3D2%26page%3D2%26paginator_token%3D3616"
	tests := []struct {
		name, top, pager, want string
	}{
		{name: "paginator widget", pager: pager, want: want},
		{name: "top level", top: "/category/noutbuki-15692/?layout_page_index=2&page=2&paginator_token=3616", want: want},
		{name: "last page", pager: `{"nextPage":""}`},
		{name: "another host", top: "https://evil.example/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := map[string]string{"tileGridDesktop-3669724-default-1": tiles}
			if tt.pager != "" {
				ws["infiniteVirtualPaginator-3618992-default-1"] = tt.pager
			}
			body, _ := json.Marshal(map[string]any{"widgetStates": ws, "nextPage": tt.top})
			page, err := site.Parse("ozon", "search", body, composerURL, at)
			if err != nil {
				t.Fatal(err)
			}
			if page.NextURL != tt.want || page.Next != (tt.want != "") || len(page.Items) != 3 {
				t.Fatalf("next %v %q, %d items; want %q, 3 items", page.Next, page.NextURL, len(page.Items), tt.want)
			}
		})
	}
}

// apiState is the state string of the capture's tile widget.
func apiState(t *testing.T, name string) []byte {
	var a struct{ WidgetStates map[string]string }
	if err := json.Unmarshal(testdata(t, name), &a); err != nil {
		t.Fatal(err)
	}
	return []byte(a.WidgetStates["tileGridDesktop-3669724-default-1"])
}

// TestParseUnknownShapes: JSON that is not Ozon's own answer (tiles none
// of which has a product ID among them) fails with the reason
// (ErrUnrecognized), never an empty page; only a tile widget with
// "items":[] or the "nothing found" widget is "no results".
func TestParseUnknownShapes(t *testing.T) {
	bad := map[string]string{
		"json block":         `{"incidentId":"fab_nmk_1","blockURL":"/x","timeoutSec":60}`,
		"no tile widget":     `{"widgetStates":{"webCurrentSeller-1-default-1":"{\"sellerCell\":{}}"}}`,
		"empty widgetStates": `{"widgetStates":{}}`,
		"other api":          `{"products":[]}`,
		"tiles without ids":  `{"widgetStates":{"tileGridDesktop-1":"{\"items\":[{\"mainState\":[]},{\"action\":{\"link\":\"/promo/\"}}]}"}}`,
	}
	for name, body := range bad {
		t.Run(name, func(t *testing.T) {
			for _, kind := range []string{"search", "product"} {
				p, err := site.Parse("ozon", kind, []byte(body), composerURL, at)
				if !errors.Is(err, site.ErrUnrecognized) || !strings.Contains(err.Error(), "ozon") {
					t.Fatalf("%s: got %d items, %v; want ErrUnrecognized", kind, len(p.Items), err)
				}
			}
		})
	}
	for name, empty := range ownEmptyAnswers {
		p, err := site.Parse("ozon", "search", []byte(empty), composerURL, at)
		if err != nil || len(p.Items) != 0 || p.Next {
			t.Errorf("%s: %d items, next %v, %v; want an empty last page", name, len(p.Items), p.Next, err)
		}
	}
}

// ownEmptyAnswers are Ozon's own "no results" in the page API: a tile
// widget with "items":[], or the searchResultsError widget in place of
// the tiles (its state as public clients read it: "{}" in
// pricewatch-style tests, a message "По вашим параметрам ничего не
// нашлось." in a parser's code, both seen 2026-12).
var ownEmptyAnswers = map[string]string{
	"empty tile list":         `{"widgetStates":{"tileGridDesktop-3669724-default-1":"{\"items\":[]}"}}`,
	"searchResultsError {}":   `{"widgetStates":{"searchResultsError-1":"{}"}}`,
	"searchResultsError text": `{"widgetStates":{"searchResultsError-3547911-default-1":"{\"message\":\"По вашим параметрам ничего не нашлось.\"}"}}`,
}

// TestProductAPIAnswerSeller: the product's page API answer gives the
// seller from webCurrentSeller (sellerCell.centerBlock.title.text), the
// rest from the same widgets as the HTML page.
func TestProductAPIAnswerSeller(t *testing.T) {
	ws := map[string]string{
		"webProductHeading-3385933-default-1":     `{"title":"Кофе в капсулах"}`,
		"webPrice-3121879-default-1":              `{"price":"924 ₽","originalPrice":"2 099 ₽"}`,
		"webReviewProductScore-3132021-default-1": `{"itemId":747122168,"totalScore":4.9,"reviewsCount":4862}`,
		"webCurrentSeller-3250339-default-1": `{"sellerCell":{"centerBlock":{"title":{"text":"Маркетспейс низких цен"}},` +
			`"common":{"action":{"link":"https://www.ozon.ru/seller/marketspeys-nizkih-tsen-93295/"}}}}`,
	}
	body, _ := json.Marshal(map[string]any{"widgetStates": ws})
	p, err := site.Parse("ozon", "product", body, "https://www.ozon.ru/product/747122168/", at)
	if err != nil {
		t.Fatal(err)
	}
	want := item.Item{Site: "ozon", ID: "747122168", Title: "Кофе в капсулах", Price: 92400, OldPrice: 209900,
		Currency: "RUB", Seller: "Маркетспейс низких цен", Rating: 4.9, Reviews: 4862,
		URL: "https://www.ozon.ru/product/747122168/", FetchedAt: at}
	if d := cmp.Diff([]item.Item{want}, p.Items); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}

// TestVerdicts2026: the real 2026 challenge page (403, script on
// st.ozone.ru) is a Challenge; the real "нет соединения" incident page
// (fab_chlg_ id, 96 KB inline script, noscript "не робот"), at 200 and
// 403, is a Challenge first, Blocked if unsolved (issue 36.7: the
// browser gets one visit through the same IP); the 307 __rr redirect
// left unfollowed is Blocked; the page API answer is OK; the JSON block
// and challenge answers public clients describe are Blocked and a
// Challenge (never Blocked when unsolved).
func TestVerdicts2026(t *testing.T) {
	d := detect.New(detect.Builtin())
	noConn := sitetest.Sample(t, "ozon", "ozon_block_no_connection_2026-06.html")
	tests := []struct {
		name string
		r    detect.Response
		want detect.Kind
	}{
		{"challenge 2026", detect.Response{Status: 403, Body: testdata(t, "ozon_challenge_page_2026-10.html")}, detect.Challenge},
		{"no connection", detect.Response{Status: 200, Body: noConn}, detect.Challenge},
		{"no connection 403", detect.Response{Status: 403, Body: noConn}, detect.Challenge},
		{"__rr 307", detect.Response{Status: 307, FinalURL: "https://www.ozon.ru/?__rr=1",
			Header: http.Header{"Location": {"/?__rr=2"}}}, detect.Blocked},
		{"page api", detect.Response{Status: 200, Body: testdata(t, "ozon_composer_search_2026-08.json")}, detect.OK},
		{"json hard block", detect.Response{Status: 200, Body: []byte(`{"incidentId":"fab_nmk_20260601","blockURL":"/x","timeoutSec":60}`)}, detect.Blocked},
		{"json challenge", detect.Response{Status: 403, Body: []byte(`{"incidentId":"fab_chlg_20260601","challengeURL":"/x"}`)}, detect.Challenge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.r.FinalURL == "" {
				tt.r.FinalURL = "https://www.ozon.ru/"
			}
			v := d.Judge("ozon", "search", &tt.r)
			if v.Kind != tt.want {
				t.Fatalf("got %v; want %v", v, tt.want)
			}
			if first := strings.HasPrefix(tt.name, "no connection"); first != (v.IfUnsolved == detect.Blocked) {
				t.Errorf("%v: if unsolved %v; want blocked only for the incident page", v, v.IfUnsolved)
			}
		})
	}
}

// TestRRLoopBlocked: a site that answers every request with a 307 to
// ?__rr=N+1 (what datacenter IPs get from Ozon) makes the fetcher stop
// after its redirect limit, and the verdict on that is Blocked by the URL
// pattern, not a proxy failure.
func TestRRLoopBlocked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("__rr"))
		http.Redirect(w, r, "/?__rr="+strconv.Itoa(n+1), http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	f := fetcher.New(fetcher.Config{PlainTLS: true})
	_, err := f.Do(context.Background(), fetcher.Request{URL: srv.URL + "/"})
	if err == nil {
		t.Fatal("the loop was followed to an end")
	}
	v := detect.New(detect.Builtin()).Judge("ozon", "search", &detect.Response{Err: err})
	if v.Kind != detect.Blocked || !strings.Contains(v.Rule, "__rr=") {
		t.Fatalf("got %v (%v); want Blocked by the __rr pattern", v, err)
	}
}

// TestPageAPIVerdicts: the real page API answer of 2026-08-07 is OK for
// a search and a category; the same answer with its tile list emptied,
// and Ozon's "nothing found" answers, are Suspect on page 1 and on a
// later page (a soft ban looks the same), the same shape from every IP,
// contradicted by the real answer, "no results" once a second IP agrees;
// JSON of no shape Ozon has is Suspect (never Blocked by itself, never an
// empty result: the parser refuses it once confirmed).
func TestPageAPIVerdicts(t *testing.T) {
	d := detect.New(detect.Builtin())
	captured := testdata(t, "ozon_composer_search_2026-08.json")
	judge := func(kind string, body []byte, page int) detect.Verdict {
		return d.Judge("ozon", kind, &detect.Response{Status: 200, Body: body, Page: page, FinalURL: composerURL})
	}
	emptied := emptiedTiles(t, captured)
	for _, kind := range []string{"search", "category"} {
		full := judge(kind, captured, 1)
		if full.Kind != detect.OK {
			t.Errorf("%s: the real answer is %v; want ok", kind, full)
		}
		empties := map[string][]byte{"real answer, tiles emptied": emptied}
		for name, body := range ownEmptyAnswers {
			empties[name] = []byte(body)
		}
		for name, body := range empties {
			for _, page := range []int{1, 2} {
				v := judge(kind, body, page)
				if v.Kind != detect.Suspect || v.IfConfirmed != detect.OK || !strings.HasPrefix(v.Rule, "empty list widgetStates.") {
					t.Errorf("%s %s page %d: got %v; want suspect, ok once confirmed", kind, name, page, v)
				}
				if detect.Decide(v, judge(kind, body, page)) != detect.Agreed || detect.Decide(v, full) != detect.Contradicted {
					t.Errorf("%s %s page %d: a second IP's same answer must agree, the real one contradict", kind, name, page)
				}
			}
		}
		for _, body := range []string{`{"widgetStates":{}}`, `{"products":[]}`, `{"widgetStates":{"webCurrentSeller-1-default-1":"{}"}}`} {
			if v := judge(kind, []byte(body), 1); v.Kind != detect.Suspect || !strings.Contains(v.Rule, "missing json path") {
				t.Errorf("%s %s: got %v; want suspect (expected content missing)", kind, body, v)
			}
		}
	}
}

// emptiedTiles is the real answer with its tile widget's items list
// emptied, everything else as captured.
func emptiedTiles(t *testing.T, captured []byte) []byte {
	t.Helper()
	var a map[string]map[string]string
	if err := json.Unmarshal(captured, &a); err != nil {
		t.Fatal(err)
	}
	const grid = "tileGridDesktop-3669724-default-1"
	var state map[string]any
	if err := json.Unmarshal([]byte(a["widgetStates"][grid]), &state); err != nil {
		t.Fatal(err)
	}
	state["items"] = []any{}
	b, _ := json.Marshal(state)
	a["widgetStates"][grid] = string(b)
	out, _ := json.Marshal(a)
	return out
}
