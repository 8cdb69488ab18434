package testbed

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"testing"
)

// TestStockLeavesCatalogAsItWas: giving products a stock changed no other
// field of a seed's catalog (the demo and other tests depend on them).
// The fingerprints were taken before products had a stock.
func TestStockLeavesCatalogAsItWas(t *testing.T) {
	for seed, want := range map[int64]string{1: "739165b4f2fcbcd4", 7: "8004ca694cb4ee75"} {
		if got := fingerprint(NewCatalog(seed, 0)); got != want {
			t.Errorf("seed %d: catalog fingerprint %s, want %s", seed, got, want)
		}
	}
}

// fingerprint hashes every field of every product but Stock.
func fingerprint(c *Catalog) string {
	h := sha256.New()
	for _, site := range SiteNames {
		for _, p := range c.Products(site) {
			fmt.Fprintf(h, "%s|%s|%s|%s|%d|%d|%s|%d|%.1f|%d|%s|%s|%s|%s\n", p.Site, p.ID, p.Title, p.Brand,
				p.Price, p.OldPrice, p.Seller, p.SellerID, p.Rating, p.Reviews, p.URL, p.Slug, p.Category, p.Location)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16]
}

// TestCatalogStock: about one product in OutOfStockEvery is out of stock
// on every site, the others have a positive stock; the seed decides
// which.
func TestCatalogStock(t *testing.T) {
	c := NewCatalog(7, 0)
	for _, site := range SiteNames {
		out := 0
		for _, p := range c.Products(site) {
			if p.Stock < 0 || p.InStock() != (p.Stock > 0) {
				t.Fatalf("%s product %s: stock %d, InStock %v", site, p.ID, p.Stock, p.InStock())
			}
			if !p.InStock() {
				out++
			}
		}
		n := len(c.Products(site))
		if lo, hi := n/OutOfStockEvery/2, n/OutOfStockEvery*3/2; out < lo || out > hi {
			t.Errorf("%s: %d of %d products out of stock, want %d–%d", site, out, n, lo, hi)
		}
	}
	if stocks(c) == stocks(NewCatalog(8, 0)) {
		t.Error("seeds 7 and 8 gave the same stocks")
	}
}

func stocks(c *Catalog) string {
	var b bytes.Buffer
	for _, p := range c.Products(SiteWildberries) {
		b.WriteString(strconv.Itoa(p.Stock) + ",")
	}
	return b.String()
}

// wbStockJSON is the stock part of a WB product: pointers tell an absent
// field from a zero one.
type wbStockJSON struct {
	ID            int64 `json:"id"`
	TotalQuantity *int  `json:"totalQuantity"`
	Sizes         []struct {
		Stocks *[]struct {
			Qty int `json:"qty"`
		} `json:"stocks"`
	} `json:"sizes"`
}

func wbStockOf(t *testing.T, body []byte) []wbStockJSON {
	t.Helper()
	var v struct {
		Products []wbStockJSON `json:"products"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return v.Products
}

// TestWBServesStock: the card detail answer gives totalQuantity and
// sizes[].stocks[].qty as the real v4 sample does ([] when sold out); the
// search answer gives totalQuantity only (real search and catalog answers
// carry no stocks); both equal the catalog's stock.
func TestWBServesStock(t *testing.T) {
	tb := startTB(t, Config{Sites: map[string]SiteRules{SiteWildberries: {}}})
	c := clientFrom(t, "127.0.0.1", false)
	sample := wbStockOf(t, readSample(t, "wildberries/wb_card_v4_detail_2025-07.json"))[0]
	if sample.TotalQuantity == nil || sample.Sizes[0].Stocks == nil {
		t.Fatalf("the real card v4 sample has no totalQuantity or stocks: %+v", sample)
	}
	for _, p := range []Product{firstStock(t, tb.Catalog, SiteWildberries, true), firstStock(t, tb.Catalog, SiteWildberries, false)} {
		a := get(t, c, tb.SiteURL(SiteWildberries)+WBDetailPath+"?appType=1&curr=rub&nm="+p.ID)
		got := wbStockOf(t, a.body)
		if len(got) != 1 || got[0].TotalQuantity == nil || *got[0].TotalQuantity != p.Stock {
			t.Fatalf("card %s: %+v, want totalQuantity %d", p.ID, got, p.Stock)
		}
		sum := 0
		for _, sz := range got[0].Sizes {
			if sz.Stocks == nil {
				t.Fatalf("card %s: a size without stocks", p.ID)
			}
			for _, st := range *sz.Stocks {
				sum += st.Qty
			}
		}
		if sum != p.Stock {
			t.Errorf("card %s: stocks sum to %d, catalog stock %d", p.ID, sum, p.Stock)
		}
	}
	q := "кофе"
	a := get(t, c, tb.SiteURL(SiteWildberries)+WBSearchPath+"?query="+url.QueryEscape(q)+"&page=1")
	got, want := wbStockOf(t, a.body), tb.Catalog.Search(SiteWildberries, q, 1)
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("search: %d products, want %d (and some)", len(got), len(want))
	}
	for i, p := range want {
		if got[i].TotalQuantity == nil || *got[i].TotalQuantity != p.Stock || got[i].Sizes[0].Stocks != nil {
			t.Errorf("search product %s: %+v, want totalQuantity %d and no stocks", p.ID, got[i], p.Stock)
		}
	}
}

// TestOzonServesAvailability: the product page's JSON-LD offer says
// InStock or OutOfStock, as the real page's does, and webPrice's
// isAvailable agrees.
func TestOzonServesAvailability(t *testing.T) {
	tb := startTB(t, Config{Sites: map[string]SiteRules{SiteOzon: {}}})
	c := clientFrom(t, "127.0.0.1", false)
	if got := ozonOffer(t, readSample(t, "ozon/ozon_product_page_2025-05.html")); got != "http://schema.org/InStock" {
		t.Fatalf("the real product page's availability is %q", got)
	}
	for _, p := range []Product{firstStock(t, tb.Catalog, SiteOzon, true), firstStock(t, tb.Catalog, SiteOzon, false)} {
		body := get(t, c, tb.SiteURL(SiteOzon)+p.URL).body
		want := map[bool]string{true: "http://schema.org/InStock", false: "http://schema.org/OutOfStock"}[p.InStock()]
		if got := ozonOffer(t, body); got != want {
			t.Errorf("product %s (stock %d): availability %q, want %q", p.ID, p.Stock, got, want)
		}
		var price struct{ IsAvailable bool }
		ozonState(t, doc(t, bytes.NewReader(body)), "webPrice", &price)
		if price.IsAvailable != p.InStock() {
			t.Errorf("product %s (stock %d): webPrice isAvailable %v", p.ID, p.Stock, price.IsAvailable)
		}
	}
}

// ozonOffer is the availability of the page's JSON-LD offer.
func ozonOffer(t *testing.T, body []byte) string {
	t.Helper()
	var ld struct {
		Offers struct {
			Availability string `json:"availability"`
		} `json:"offers"`
	}
	if err := json.Unmarshal([]byte(doc(t, bytes.NewReader(body)).Find(`script[type="application/ld+json"]`).First().Text()), &ld); err != nil {
		t.Fatalf("json-ld: %v", err)
	}
	return ld.Offers.Availability
}

// firstStock is the first product of site that is in stock, or out of
// stock.
func firstStock(t *testing.T, c *Catalog, site string, in bool) Product {
	t.Helper()
	for _, p := range c.Products(site) {
		if p.InStock() == in {
			return p
		}
	}
	t.Fatalf("no %s product with InStock %v", site, in)
	return Product{}
}
