package ozon_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/tasks/item"
	"crawlq/tasks/site"
	"crawlq/tasks/site/sitetest"
	"crawlq/testbed"
)

// TestTestbedSearchAndCards walks every search page the testbed serves for
// a query, until Next is false, and parses the first followed product page: the items
// are exactly the catalog's matches.
func TestTestbedSearchAndCards(t *testing.T) {
	tb := sitetest.Testbed(t)
	s := sitetest.SiteOn(t, tb, "ozon")
	q := sitetest.Query(tb, "ozon")
	got, follow := sitetest.WalkSearch(t, s, site.Request{Query: q})
	want := wantItems(s, tb.Catalog.Matches("ozon", q), false)
	if len(want) <= testbed.PageSizes["ozon"] {
		t.Fatalf("query %q has %d matches: not several pages", q, len(want))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("search items (-catalog +parsed):\n%s", d)
	}
	card, err := s.Parse("product", sitetest.Get(t, follow[0].URL), follow[0].URL, at)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantItems(s, tb.Catalog.Matches("ozon", q)[:1], true), card.Items); d != "" {
		t.Fatalf("card (-catalog +parsed):\n%s", d)
	}
}

// wantItems: tiles carry no seller; product pages do.
func wantItems(s *site.Site, ps []testbed.Product, seller bool) []item.Item {
	out := make([]item.Item, 0, len(ps))
	for _, p := range ps {
		out = append(out, item.Item{Site: "ozon", ID: p.ID, Title: p.Title, Price: p.Price,
			OldPrice: sitetest.Old(p), Currency: "RUB", Rating: p.Rating,
			Reviews: p.Reviews, URL: s.BaseURL + p.URL, FetchedAt: at})
		if seller {
			out[len(out)-1].Seller = p.Seller
		}
	}
	return out
}
