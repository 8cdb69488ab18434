package avito_test

import (
	"encoding/json"
	"net/url"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/results/item"
	"crawlq/tasks/site"
	"crawlq/testbed/sitetest"
)

// TestParseItemPage2026Real: the real item page of June 2026 (hydration
// state, see testdata/README.md) gives its listing from the state: id,
// title, price, seller and URL, the URL even when the page's own URL is
// not known (the markup has no canonical link; it came out empty before).
func TestParseItemPage2026Real(t *testing.T) {
	page, err := site.Parse("avito", "item", testdata(t, "avito_item_page_2026-06.html.gz"), "", at)
	if err != nil {
		t.Fatal(err)
	}
	want := []item.Item{av("kinel/vakansii/voditel-mehanik_lugansk", "8195307158", "Водитель-механик, Луганск", 1130000, "Отношения СВоИМ", 0, 0)}
	if d := cmp.Diff(want, page.Items); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
}

// buyerItemPages wraps the real buyerItem a public client extracted from
// a 2024 item page (internal/samples, avito_item_buyerItem_extracted.json)
// into the two page states Avito writes, under markup that has the title
// only: the 2025–26 hydration data (a JSON string passed to JSON.parse)
// and the 2024 URL-encoded __initialData__ under its bx-item-view key.
func buyerItemPages(t *testing.T) map[string][]byte {
	t.Helper()
	var extract struct {
		Viewdata json.RawMessage `json:"viewdata"`
	}
	if err := json.Unmarshal(sitetest.Sample(t, "avito", "avito_item_buyerItem_extracted.json"), &extract); err != nil {
		t.Fatal(err)
	}
	const markup = `<html><head><title>Дом</title></head><body><h1 data-marker="item-view/title-info">Дом</h1>`
	hydration, _ := json.Marshal(map[string]any{"loaderData": map[string]any{"catalog-or-main-or-item": map[string]any{"buyerItem": extract.Viewdata}}})
	literal, _ := json.Marshal(string(hydration))
	initial, _ := json.Marshal(map[string]any{"@avito/bx-item-view:3.324.0": map[string]any{"buyerItem": extract.Viewdata}})
	encoded, _ := json.Marshal(url.PathEscape(string(initial)))
	return map[string][]byte{
		"hydration 2025-26": []byte(markup + `<script>window.__staticRouterHydrationData = JSON.parse(` + string(literal) + `);</script></body></html>`),
		"initialData 2024":  []byte(markup + `<script>window.__initialData__ = ` + string(encoded) + ` || {};</script></body></html>`),
	}
}

// TestParseItemStateFirst: the price, the seller, the seller's rating
// and review count and the URL that only the page state carries are
// read from it (before: price 0, no seller, no rating, no URL).
func TestParseItemStateFirst(t *testing.T) {
	want := []item.Item{av("krasnodar/doma_dachi_kottedzhi/dom_60m_na_uchastke_65sot.", "2474889195", "Дом 60 м² на участке 6,5 сот.", 800000, "Виталий", 5, 36)}
	for name, body := range buyerItemPages(t) {
		t.Run(name, func(t *testing.T) {
			page, err := site.Parse("avito", "item", body, "", at)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, page.Items); d != "" {
				t.Errorf("items (-want +got):\n%s", d)
			}
		})
	}
}

// TestParseSERP2026Real: the real results page of June 2026 gives its 50
// listings from the page's catalog state (the js/items listing shape,
// with the seller's name from the card's seller-info step), and the same
// listings from its cards alone when the state is cut out: same ids,
// prices, sellers and URLs (the cards' titles add the town).
func TestParseSERP2026Real(t *testing.T) {
	body := testdata(t, "avito_serp_2026-06.html.gz")
	page, err := site.Parse("avito", "search", body, "", at)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 50 || !page.Next || len(page.Follow) != 50 {
		t.Fatalf("%d items, next %v, %d follow; want 50, true, 50", len(page.Items), page.Next, len(page.Follow))
	}
	first := av("dmitrov/vakansii/sborschik", "8001988373", "Сборщик", 475000, "Партнер Вкусвилл", 0, 0)
	if d := cmp.Diff(first, page.Items[0]); d != "" {
		t.Errorf("first item (-want +got):\n%s", d)
	}
	noState := regexp.MustCompile(`(?s)<script[^>]*data-mfe-state="true"[^>]*>.*?</script>`).ReplaceAll(body, nil)
	cards, err := site.Parse("avito", "search", noState, "", at)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(page.Items, cards.Items, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Title" }, cmp.Ignore())); d != "" {
		t.Errorf("cards alone differ from the state (-state +cards):\n%s", d)
	}
}
