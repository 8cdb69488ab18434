package wildberries_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/results/item"
	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
	"crawlq/testbed/sitetest"
)

var at = sitetest.FetchedAt

func wb(id, title string, price, old int64, seller string, rating float64, reviews int) item.Item {
	return item.Item{Site: "wildberries", ID: id, Title: title, Price: price, OldPrice: old, Currency: "RUB",
		Seller: seller, Rating: rating, Reviews: reviews,
		URL: "https://www.wildberries.ru/catalog/" + id + "/detail.aspx", FetchedAt: at}
}

// stocked is it with InStock set.
func stocked(it item.Item, in bool) item.Item {
	it.InStock = &in
	return it
}

// TestParseRealSamples parses every real Wildberries sample into the exact
// items the file holds (values read from the files by hand). Only the
// card v4 detail says whether the product is in stock (totalQuantity
// 2351); the legacy catalog, the card.json and the HTML pages leave
// InStock nil.
func TestParseRealSamples(t *testing.T) {
	tests := []struct {
		name, kind  string
		count       int
		next        bool
		first, last item.Item
	}{
		{name: "wb_catalog_v2_legacy_priceU.json", kind: "search", count: 100, next: true,
			first: wb("103442031", "Сумка ACID PRO XS под седло olive", 143600, 359000, "", 0, 0),
			last:  wb("102092469", "Спортивный крепеж для телефона", 139200, 163800, "", 0, 0)},
		{name: "wb_search_page_rendered_2025-04.html", kind: "search", count: 30, next: true,
			first: wb("162352134", "Цикорий растворимый натуральный без кофеина BIO", 50000, 120400, "", 4.9, 21358),
			last:  wb("188342879", "Натуральный цикорий растворимый 400г", 45300, 86600, "", 4.9, 3424)},
		{name: "wb_card_v4_detail_2025-07.json", kind: "product", count: 1,
			first: stocked(wb("67858518", "Швабра с отжимом и ведром для мытья пола 10 л", 408800, 649000,
				"Zetter - официальный магазин", 4.9, 65754), true)},
		{name: "wb_basket_card_json_2025-07.json", kind: "product", count: 1,
			first: wb("67858518", "Швабра с отжимом и ведром для мытья пола 10 л", 0, 0, "", 0, 0)},
		{name: "wb_basket_card_json_2025-07.json", kind: "card", count: 1,
			first: wb("67858518", "Швабра с отжимом и ведром для мытья пола 10 л", 0, 0, "", 0, 0)},
		{name: "wb_product_page_rendered_2025-04.html", kind: "product", count: 1,
			first: wb("164419278", "Кофе в зернах 1 кг Бразилия Премиум Бленд", 163000, 191800,
				"DON CUP БРАЗИЛЬСКИЙ КОФЕ", 4.8, 29858)},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.name, func(t *testing.T) {
			page, err := site.Parse(wildberries.Name, tt.kind, sitetest.Sample(t, "wildberries", tt.name), "", at)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Items) != tt.count || page.Next != tt.next {
				t.Fatalf("got %d items, next %v; want %d, %v", len(page.Items), page.Next, tt.count, tt.next)
			}
			if d := cmp.Diff(tt.first, page.Items[0]); d != "" {
				t.Errorf("first item (-want +got):\n%s", d)
			}
			if tt.count > 1 {
				if d := cmp.Diff(tt.last, page.Items[len(page.Items)-1]); d != "" {
					t.Errorf("last item (-want +got):\n%s", d)
				}
				checkFollow(t, page)
			}
		})
	}
}

// checkFollow: a listing page follows every item, as card API URLs.
func checkFollow(t *testing.T, page site.Page) {
	t.Helper()
	if len(page.Follow) != len(page.Items) {
		t.Fatalf("follow %d targets for %d items", len(page.Follow), len(page.Items))
	}
	f := page.Follow[0]
	want := site.Target{Site: "wildberries", Kind: "product", ID: page.Items[0].ID,
		URL: "https://www.wildberries.ru/__internal/u-card/cards/v4/detail?nm=" + page.Items[0].ID + "&appType=1&curr=rub&dest=-1257786&spp=30"}
	if d := cmp.Diff(want, f); d != "" {
		t.Errorf("first follow target (-want +got):\n%s", d)
	}
}

// TestCardRejectsOtherAnswers: the card kind takes only a card.json; a
// card v4 detail response or an HTML page is not mistaken for one.
func TestCardRejectsOtherAnswers(t *testing.T) {
	for _, name := range []string{"wb_card_v4_detail_2025-07.json", "wb_product_page_rendered_2025-04.html"} {
		_, err := site.Parse(wildberries.Name, "card", sitetest.Sample(t, "wildberries", name), "", at)
		if !errors.Is(err, site.ErrUnrecognized) {
			t.Errorf("%s as a card: got %v, want an unrecognized-page error", name, err)
		}
	}
}

// TestCardV4Stock parses the real card v4 detail sample and copies of it
// edited in memory: sold out when totalQuantity and every warehouse qty
// are 0 or the stocks are empty; in the search answers' shape (sizes
// without stocks) totalQuantity alone decides; with neither, the answer
// does not say.
func TestCardV4Stock(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name, kind string
		edit       func(p map[string]any)
		want       *bool
	}{
		{name: "as saved", kind: "product", edit: func(map[string]any) {}, want: &yes},
		{name: "zero totalQuantity and qty", kind: "product", want: &no, edit: func(p map[string]any) {
			p["totalQuantity"] = 0
			eachSize(p, func(sz map[string]any) {
				for _, st := range sz["stocks"].([]any) {
					st.(map[string]any)["qty"] = 0
				}
			})
		}},
		{name: "empty stocks", kind: "product", want: &no, edit: func(p map[string]any) {
			p["totalQuantity"] = 0
			eachSize(p, func(sz map[string]any) { sz["stocks"] = []any{} })
		}},
		{name: "stocks left, totalQuantity 0", kind: "product", want: &yes, edit: func(p map[string]any) {
			p["totalQuantity"] = 0
		}},
		{name: "search shape", kind: "search", want: &yes, edit: func(p map[string]any) {
			eachSize(p, func(sz map[string]any) { delete(sz, "stocks") })
		}},
		{name: "search shape sold out", kind: "search", want: &no, edit: func(p map[string]any) {
			p["totalQuantity"] = 0
			eachSize(p, func(sz map[string]any) { delete(sz, "stocks") })
		}},
		{name: "no stock fields", kind: "product", want: nil, edit: func(p map[string]any) {
			delete(p, "totalQuantity")
			eachSize(p, func(sz map[string]any) { delete(sz, "stocks") })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := editCard(t, tt.edit)
			page, err := site.Parse(wildberries.Name, tt.kind, body, "", at)
			if err != nil {
				t.Fatal(err)
			}
			want := wb("67858518", "Швабра с отжимом и ведром для мытья пола 10 л", 408800, 649000,
				"Zetter - официальный магазин", 4.9, 65754)
			want.InStock = tt.want
			if d := cmp.Diff([]item.Item{want}, page.Items); d != "" {
				t.Errorf("items (-want +got):\n%s", d)
			}
		})
	}
}

// editCard is the card v4 detail sample with edit applied to its product.
func editCard(t *testing.T, edit func(p map[string]any)) []byte {
	t.Helper()
	var card map[string]any
	if err := json.Unmarshal(sitetest.Sample(t, "wildberries", "wb_card_v4_detail_2025-07.json"), &card); err != nil {
		t.Fatal(err)
	}
	edit(card["products"].([]any)[0].(map[string]any))
	b, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func eachSize(p map[string]any, f func(sz map[string]any)) {
	for _, sz := range p["sizes"].([]any) {
		f(sz.(map[string]any))
	}
}

// TestLegacyCatalogHasNoStock: the legacy catalog answer has neither
// totalQuantity nor stocks, so none of its 100 items says InStock.
func TestLegacyCatalogHasNoStock(t *testing.T) {
	page, err := site.Parse(wildberries.Name, "search", sitetest.Sample(t, "wildberries", "wb_catalog_v2_legacy_priceU.json"), "", at)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range page.Items {
		if it.InStock != nil {
			t.Errorf("item %s: InStock %v, want nil", it.ID, *it.InStock)
		}
	}
}
