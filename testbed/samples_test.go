package testbed

import (
	"bytes"
	"compress/gzip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/internal/samples"
)

// samplesDir is the folder of the real samples carried in the repository.
func samplesDir(*testing.T) string { return samples.Dir() }

func readSample(t *testing.T, name string) []byte {
	b, err := os.ReadFile(filepath.Join(samplesDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		out.ReadFrom(zr)
		return out.Bytes()
	}
	return b
}

// want builds what an extractor should find for catalog product p.
func want(p Product, fields string) scraped {
	s := scraped{ID: p.ID, Title: p.Title}
	if strings.Contains(fields, "price") {
		s.Price = p.Price / 100
	}
	if strings.Contains(fields, "old") {
		s.OldPrice = p.OldPrice / 100
	}
	if strings.Contains(fields, "seller") {
		s.Seller = p.Seller
	}
	if strings.Contains(fields, "rating") {
		s.Rating, s.Reviews = p.Rating, p.Reviews
	}
	if strings.Contains(fields, "link") {
		s.Link = p.URL
	}
	return s
}

func complete(t *testing.T, what string, got []scraped, needPrice bool) {
	t.Helper()
	if len(got) == 0 {
		t.Fatalf("%s: nothing extracted", what)
	}
	for _, s := range got {
		if s.ID == "" || s.Title == "" || (needPrice && s.Price == 0) {
			t.Fatalf("%s: incomplete %+v", what, s)
		}
	}
}

// TestPagesParseLikeSamples applies the README selectors and JSON paths to
// the real sample and to the simulated page of each site and page kind.
func TestPagesParseLikeSamples(t *testing.T) {
	tb := startTB(t, Config{Sites: map[string]SiteRules{SiteWildberries: {}, SiteOzon: {}, SiteAvito: {}}})
	const q = "кофе"
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{name: "wildberries search", run: func(t *testing.T) {
			complete(t, "sample", wbProducts(t, readSample(t, "wildberries/wb_catalog_v2_legacy_priceU.json")), false)
			a := get(t, clientFrom(t, "127.0.0.1", false), tb.SiteURL(SiteWildberries)+WBSearchPath+"?query="+url.QueryEscape(q)+"&page=1&resultset=catalog")
			checkList(t, wbProducts(t, a.body), tb.Catalog.Search(SiteWildberries, q, 1), "price old seller rating")
		}},
		{name: "wildberries card detail", run: func(t *testing.T) {
			complete(t, "sample", wbProducts(t, readSample(t, "wildberries/wb_card_v4_detail_2025-07.json")), true)
			p := tb.Catalog.Products(SiteWildberries)[7]
			a := get(t, clientFrom(t, "127.0.0.1", false), tb.SiteURL(SiteWildberries)+WBDetailPath+"?appType=0&curr=rub&nm="+p.ID)
			checkList(t, wbProducts(t, a.body), []Product{p}, "price old seller rating")
		}},
		{name: "ozon search", run: func(t *testing.T) {
			var st ozonItems
			ozonState(t, doc(t, bytes.NewReader(readSample(t, "ozon/ozon_category_page_2025-04.html"))), "searchResultsV2", &st)
			complete(t, "sample", ozonTiles(st), true)
			a := get(t, clientFrom(t, "127.0.0.1", false), tb.SiteURL(SiteOzon)+OzonSearchPath+"?text="+url.QueryEscape(q)+"&page=2")
			st = ozonItems{}
			ozonState(t, doc(t, bytes.NewReader(a.body)), "searchResultsV2", &st)
			checkList(t, ozonTiles(st), tb.Catalog.Search(SiteOzon, q, 2), "price old rating link")
		}},
		{name: "ozon product", run: func(t *testing.T) {
			s, href := ozonProductPage(t, doc(t, bytes.NewReader(readSample(t, "ozon/ozon_product_page_2025-05.html"))))
			complete(t, "sample", []scraped{s}, true)
			if !strings.Contains(href, "/seller/") || s.Seller == "" && href == "" {
				t.Errorf("sample seller link %q", href)
			}
			p := tb.Catalog.Products(SiteOzon)[11]
			a := get(t, clientFrom(t, "127.0.0.1", false), tb.SiteURL(SiteOzon)+p.URL)
			got, _ := ozonProductPage(t, doc(t, bytes.NewReader(a.body)))
			checkList(t, []scraped{got}, []Product{p}, "price old seller rating")
		}},
		{name: "avito search", run: func(t *testing.T) {
			cards, pages := avitoCards(doc(t, bytes.NewReader(readSample(t, "avito/avito_search_serp_2024.html.gz"))))
			complete(t, "sample", cards, true)
			if pages < 2 {
				t.Errorf("sample page count %d", pages)
			}
			a := get(t, clientFrom(t, "127.0.0.1", false), tb.SiteURL(SiteAvito)+"/rossiya?q="+url.QueryEscape(q)+"&p=1")
			cards, pages = avitoCards(doc(t, bytes.NewReader(a.body)))
			checkList(t, cards, tb.Catalog.Search(SiteAvito, q, 1), "price link")
			if want := tb.Catalog.Pages(SiteAvito, q); pages != want {
				t.Errorf("page count %d, want %d", pages, want)
			}
		}},
		{name: "avito item", run: func(t *testing.T) {
			complete(t, "sample", []scraped{avitoItemPage(doc(t, bytes.NewReader(readSample(t, "avito/avito_item_page_2024.html"))))}, true)
			p := tb.Catalog.Products(SiteAvito)[5]
			a := get(t, clientFrom(t, "127.0.0.1", false), tb.SiteURL(SiteAvito)+p.URL)
			checkList(t, []scraped{avitoItemPage(doc(t, bytes.NewReader(a.body)))}, []Product{p}, "price seller")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

func checkList(t *testing.T, got []scraped, products []Product, fields string) {
	t.Helper()
	if len(products) == 0 {
		t.Fatal("catalog gave no products to compare")
	}
	var wantList []scraped
	for _, p := range products {
		wantList = append(wantList, want(p, fields))
	}
	if diff := cmp.Diff(wantList, got); diff != "" {
		t.Errorf("extracted (-want +got):\n%s", diff)
	}
}
