package ozon_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/results/item"
	"crawlq/tasks/site"
	"crawlq/testbed/sitetest"
)

var at = sitetest.FetchedAt

func oz(id, slug, title string, price, old int64, seller string, rating float64, reviews int) item.Item {
	return item.Item{Site: "ozon", ID: id, Title: title, Price: price, OldPrice: old, Currency: "RUB",
		Seller: seller, Rating: rating, Reviews: reviews,
		URL: "https://www.ozon.ru/product/" + slug + "-" + id + "/", FetchedAt: at}
}

// productSample is the item of ozon_product_page_2025-05.html, InStock
// aside.
func productSample() item.Item {
	return oz("747122168", "kofe-v-kapsulah-nescafe-dolce-gusto-flat-white-16-portsiy-dlya-kapsulnoy-kofemashiny-1-upakovka",
		"Кофе в капсулах Nescafe Dolce Gusto FLAT WHITE, 16 порций для капсульной кофемашины, 1 упаковка",
		92400, 209900, "Маркетспейс низких цен", 4.9, 4862)
}

// stocked is it with InStock set.
func stocked(it item.Item, in bool) item.Item {
	it.InStock = &in
	return it
}

// TestParseRealSamples parses every real Ozon sample (block pages aside)
// into the exact items the file holds (values read from the files by hand).
// Only the product page says whether the product is in stock (its
// JSON-LD offer); tiles leave InStock nil.
func TestParseRealSamples(t *testing.T) {
	tests := []struct {
		name, kind  string
		count       int
		next        bool
		first, last item.Item
	}{
		{name: "ozon_searchResultsV2_state_2024-01.json", kind: "search", count: 36,
			first: oz("933449105", "silikonovaya-forma-dlya-myla-babochka-mnogorazovyy-mold-dlya-shokolada-zhele-pudinga-mastiki",
				`Силиконовая форма для мыла "Бабочка", многоразовый молд для шоколада, желе, пудинга, мастики, мыловарения, фиолетовая, 4 ячейки`,
				38500, 99000, "", 4.9, 439),
			last: oz("650256039", "kaff-platan-s-lyubovyu", "Кафф PLATAN С любовью", 21800, 79300, "", 4.8, 484)},
		{name: "ozon_category_page_2025-04.html", kind: "category", count: 12, next: true,
			first: oz("135997666", "suhoy-korm-dlya-koshek-royal-canin-urinary-s-o-dieticheskiy-pri-mochekamennoy-bolezni-1-5-kg",
				"Сухой корм для кошек Royal Canin Urinary S/O диетический при мочекаменной болезни, 1,5 кг", 219300, 0, "", 4.9, 32404),
			last: oz("29983482", "suhoy-korm-dlya-koshek-royal-canin-regular-sensible-33-s-chuvstvitelnoy-pishchevaritelnoy-sistemoy",
				"Сухой корм для кошек Royal Canin Sensible 33 с чувствительным пищеварением, 2 кг", 207000, 231700, "", 4.9, 26482)},
		{name: "ozon_seller_products_page_2025-07.html", kind: "search", count: 12, next: true,
			first: oz("1102860254", "antivozrastnoy-krem-flyuid-dlya-litsa-ot-morshchin-s-gialuronovoy-kislotoy-vitaminami-i-peptidami-50",
				"Антивозрастной крем-флюид для лица от морщин, с гиалуроновой кислотой, витаминами и пептидами, 50 мл лифтинг, увлажнение, упругость, без парабенов, дневной и ночной уход",
				89500, 432400, "", 4.8, 5210),
			last: oz("1755812819", "sprey-dlya-rosta-i-ukrepleniya-volos-c-pertsem-i-nikotinovoy-kislotoy-sredstvo-protiv-vypadeniya",
				"Спрей для роста и укрепления волос c перцем и никотиновой кислотой. Средство против выпадения для женщин, 100 мл",
				96600, 400000, "", 4.8, 638)},
		{name: "ozon_product_page_2025-05.html", kind: "product", count: 1,
			first: stocked(productSample(), true)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := site.Parse("ozon", tt.kind, sitetest.Sample(t, "ozon", tt.name), "", at)
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
				want := site.Target{Site: "ozon", Kind: "product", ID: tt.first.ID, URL: tt.first.URL}
				if len(page.Follow) != tt.count || page.Follow[0] != want {
					t.Errorf("follow: %d targets, first %+v; want %d, %+v", len(page.Follow), page.Follow[0], tt.count, want)
				}
			}
		})
	}
}

// TestParseBlockPagesUnrecognized: the real block pages are not product
// pages; the parser says so instead of returning nothing.
func TestParseBlockPagesUnrecognized(t *testing.T) {
	for _, name := range []string{"ozon_block_antibot_challenge_2025-06.html", "ozon_block_no_connection_2026-06.html"} {
		t.Run(name, func(t *testing.T) {
			for _, kind := range []string{"search", "product"} {
				_, err := site.Parse("ozon", kind, sitetest.Sample(t, "ozon", name), "", at)
				if !errorsIs(err, site.ErrUnrecognized) {
					t.Errorf("%s: got %v, want ErrUnrecognized", kind, err)
				}
			}
		})
	}
}

// TestProductPageStock parses the real product page and copies of it
// edited in memory. InStock is the availability of the page's own
// JSON-LD offer: OutOfStock there gives false; the other places of the
// page that speak of stock (webProductMainWidget's isOutOfStockMode, the
// JSON-LD copy escaped inside a script) do not count; an offer without
// availability, or the JSON-LD of another SKU, says nothing.
func TestProductPageStock(t *testing.T) {
	const (
		ld      = `"availability":"http://schema.org/InStock"`
		mode    = `isOutOfStockMode&quot;:false`
		escaped = `schema.org\\u002FInStock`
		sku     = `"sku":"747122168"}</script>`
	)
	yes, no := true, false
	tests := []struct {
		name      string
		from, to  []string
		wantStock *bool
	}{
		{name: "as saved", wantStock: &yes},
		{name: "json-ld out of stock", from: []string{ld}, to: []string{`"availability":"http://schema.org/OutOfStock"`}, wantStock: &no},
		{name: "json-ld sold out over https", from: []string{ld}, to: []string{`"availability":"https://schema.org/SoldOut"`}, wantStock: &no},
		{name: "other widgets out of stock", from: []string{mode, escaped}, to: []string{`isOutOfStockMode&quot;:true`, `schema.org\\u002FOutOfStock`}, wantStock: &yes},
		{name: "no availability", from: []string{ld}, to: []string{`"availability":""`}, wantStock: nil},
		{name: "json-ld of another sku", from: []string{ld, sku}, to: []string{`"availability":"http://schema.org/OutOfStock"`, `"sku":"1"}</script>`}, wantStock: nil},
	}
	sample := string(sitetest.Sample(t, "ozon", "ozon_product_page_2025-05.html"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := sample
			for i, from := range tt.from {
				if strings.Count(body, from) != 1 {
					t.Fatalf("the sample has %d × %s, want exactly one", strings.Count(body, from), from)
				}
				body = strings.Replace(body, from, tt.to[i], 1)
			}
			page, err := site.Parse("ozon", "product", []byte(body), "", at)
			if err != nil {
				t.Fatal(err)
			}
			want := productSample()
			want.InStock = tt.wantStock
			if d := cmp.Diff([]item.Item{want}, page.Items); d != "" {
				t.Errorf("items (-want +got):\n%s", d)
			}
		})
	}
}
