package avito_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/detect"
	"crawlq/results/item"
	"crawlq/tasks/site"
)

// testdata reads a file of this package's testdata (see its README).
func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := site.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rated is an item with the seller's rating and review count and no
// seller name (js/items answers have none).
func rated(path, id, title string, price int64, rating float64, reviews int) item.Item {
	return av(path, id, title, price, "", rating, reviews)
}

// TestParseJSItemsReal: the real 2026-07-28 js/items answer gives every
// item with id, title, price, URL (its query dropped) and the seller's
// rating and review count; the next page is announced (3 of 51343).
func TestParseJSItemsReal(t *testing.T) {
	const pageURL = "https://www.avito.ru/web/1/js/items?q=%D0%BD%D0%BE%D1%83%D1%82%D0%B1%D1%83%D0%BA&locationId=637640"
	body := testdata(t, "avito_js_items_2026-07.json")
	for _, kind := range []string{"search-api", "search"} {
		page, err := site.Parse("avito", kind, body, pageURL, at)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		want := []item.Item{
			rated("moskva/noutbuki/noutbuki_novye_v_korobkah_pod_lyubye_zadachi", "8056271479", "Ноутбуки новые в коробках под любые задачи", 1550000, 4.8, 647),
			rated("moskva/noutbuki/bolshoy_vybor_noutbukov_pod_vashi_zadachi_garantiya", "8033089127", "Большой выбор ноутбуков под Ваши задачи + гарантия", 1599000, 5, 731),
			rated("voronezh/noutbuki/shustrye_noutbuki_dlya_ucheby_raboty_pvz_na_ssd", "7931870037", "Шустрые ноутбуки для учебы, работы, пвз на SSD", 870000, 5, 73),
		}
		if d := cmp.Diff(want, page.Items); d != "" {
			t.Errorf("%s items (-want +got):\n%s", kind, d)
		}
		if !page.Next || len(page.Follow) != 3 || page.Follow[2].ID != "7931870037" {
			t.Errorf("%s: next %v, follow %+v", kind, page.Next, page.Follow)
		}
	}
}

// TestParseJSItemsShapes: only the site's own well-formed empty answer is
// "no results"; a redirect stub, an answer with no item list, a list with
// no listing in it and a non-JSON body are ErrUnrecognized.
func TestParseJSItemsShapes(t *testing.T) {
	tests := []struct {
		name, body string
		wantErr    error
	}{
		{name: "empty", body: `{"count":0,"totalCount":0,"itemsOnPage":50,"items":[]}`},
		{name: "empty catalog.items", body: `{"catalog":{"items":[]}}`},
		{name: "empty result.catalog.items", body: `{"result":{"catalog":{"items":[]}}}`},
		{name: "redirect stub", body: `{"redirected":true,"url":"/moskva/noutbuki"}`, wantErr: site.ErrUnrecognized},
		{name: "unknown shape", body: `{"status":"ok","result":{"widgets":[]}}`, wantErr: site.ErrUnrecognized},
		{name: "firewall json", body: `{"too-many-requests":{"link":"ru.avito://1/firewall/captcha/show"}}`, wantErr: site.ErrUnrecognized},
		{name: "no listing in list", body: `{"items":[{"type":"banner"}]}`, wantErr: site.ErrUnrecognized},
		{name: "html", body: `<html><title>Авито</title></html>`, wantErr: site.ErrUnrecognized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := site.Parse("avito", "search-api", []byte(tt.body), "", at)
			if !errors.Is(err, tt.wantErr) || err == nil && (len(page.Items) != 0 || page.Next) {
				t.Fatalf("got %+v, %v; want no items, %v", page, err, tt.wantErr)
			}
		})
	}
}

// TestParseCards2025Constructed: seller, seller rating and review count
// are read from 2025 result cards where present, under either marker
// (seller-info/summary, seller-rating/summary: "384 отзыва"). The fixture is
// CONSTRUCTED from avito-library's selectors (no real capture exists).
func TestParseCards2025Constructed(t *testing.T) {
	page, err := site.Parse("avito", "search", testdata(t, "avito_serp_cards_2025_constructed.html"), "https://www.avito.ru/moskva?q=x&p=1", at)
	if err != nil {
		t.Fatal(err)
	}
	want := []item.Item{
		av("moskva/noutbuki/noutbuki_novye_v_korobkah", "8056271479", "Ноутбуки новые в коробках", 1550000, "НоутМаркет", 4.8, 647),
		av("voronezh/noutbuki/shustrye_noutbuki", "7931870037", "Шустрые ноутбуки", 870000, "Иван", 5, 0),
		av("krasnodar/noutbuki/noutbuk", "4090229142", "Ноутбук", 2700000, "", 0, 0),
		av("kazan/noutbuki/noutbuk_lenovo", "7714485148", "Ноутбук Lenovo", 1999000, "ТехноКазань", 4.9, 384),
	}
	if d := cmp.Diff(want, page.Items); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
}

// TestParseRedirectStubConstructed: a results URL answered by a redirect
// stub (data-mfe-state {redirected, url}) is ErrUnrecognized naming the
// target, never an empty page.
func TestParseRedirectStubConstructed(t *testing.T) {
	_, err := site.Parse("avito", "search", testdata(t, "avito_redirect_stub_constructed.html"), "", at)
	if !errors.Is(err, site.ErrUnrecognized) {
		t.Fatalf("got %v, want ErrUnrecognized", err)
	}
	if want := `redirect stub to "/moskva/noutbuki?q=`; !contains(err.Error(), want) {
		t.Errorf("error %q does not name the redirect (%s…)", err, want)
	}
}

// TestRedirectStubReal: the real redirect stub of 2026-07 (a category
// URL answered 200 with loaderData.data {status 301, redirected, url}:
// testdata/README.md) is judged OK, so it reaches the parser, which
// returns the *site.RedirectError naming the canonical URL the job then
// follows (never an empty page, never Blocked).
func TestRedirectStubReal(t *testing.T) {
	body := testdata(t, "avito_redirect_stub_2026-07.html.gz")
	const pageURL = "https://www.avito.ru/nizhniy_novgorod/kvartiry/prodam"
	v := detect.New(detect.Builtin()).Judge("avito", "category", &detect.Response{Status: 200, FinalURL: pageURL, Body: body})
	if v.Kind != detect.OK {
		t.Errorf("verdict %v, want ok (the stub is the site's answer, not a ban)", v)
	}
	_, err := site.Parse("avito", "category", body, pageURL, at)
	var stub *site.RedirectError
	if !errors.As(err, &stub) || !errors.Is(err, site.ErrUnrecognized) {
		t.Fatalf("got %v, want a *site.RedirectError (ErrUnrecognized)", err)
	}
	if want := "/nizhniy_novgorod/kvartiry/prodam-ASgBAgICAUSSA8YQ?localPriority=0"; stub.To != want {
		t.Errorf("stub names %q, want %q", stub.To, want)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
