package ozon_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/results/item"
	"crawlq/tasks/site"
	"crawlq/testbed"
	"crawlq/testbed/sitetest"
)

// TestTestbedSearchAndCards walks every search page the testbed serves for
// a query, until Next is false, and parses the followed product pages of
// the first product and of the first one out of stock: the items are
// exactly the catalog's matches, InStock included on product pages.
func TestTestbedSearchAndCards(t *testing.T) {
	tb := sitetest.Testbed(t)
	s := sitetest.SiteOn(t, tb, "ozon")
	q := sitetest.Query(tb, "ozon")
	got, follow := sitetest.WalkSearch(t, s, site.Request{Query: q})
	matches := tb.Catalog.Matches("ozon", q)
	want := wantItems(s, matches, false)
	if len(want) <= testbed.PageSizes["ozon"] {
		t.Fatalf("query %q has %d matches: not several pages", q, len(want))
	}
	soldOut := sitetest.SoldOut(t, matches)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("search items (-catalog +parsed):\n%s", d)
	}
	for _, p := range []testbed.Product{matches[0], soldOut} {
		i := slices.IndexFunc(follow, func(f site.Target) bool { return f.ID == p.ID })
		if i < 0 {
			t.Fatalf("the search followed no product page of %s", p.ID)
		}
		card, err := s.Parse("product", sitetest.Get(t, follow[i].URL), follow[i].URL, at)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(wantItems(s, []testbed.Product{p}, true), card.Items); d != "" {
			t.Fatalf("product page %s (-catalog +parsed):\n%s", p.ID, d)
		}
	}
}

// wantItems: tiles carry no seller and no stock; product pages do.
func wantItems(s *site.Site, ps []testbed.Product, page bool) []item.Item {
	out := make([]item.Item, 0, len(ps))
	for _, p := range ps {
		it := item.Item{Site: "ozon", ID: p.ID, Title: p.Title, Price: p.Price,
			OldPrice: sitetest.Old(p), Currency: "RUB", Rating: p.Rating,
			Reviews: p.Reviews, URL: s.BaseURL + p.URL, FetchedAt: at}
		if page {
			it.Seller, it.InStock = p.Seller, sitetest.InStock(p)
		}
		out = append(out, it)
	}
	return out
}
