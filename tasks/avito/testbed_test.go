package avito_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/tasks/item"
	"crawlq/tasks/site"
	"crawlq/tasks/site/sitetest"
	"crawlq/testbed"
)

// TestTestbedSearchAndItem walks every search page the testbed serves for
// a query, until Next is false, and parses the first followed item page:
// the items are exactly the catalog's (cards carry no seller or rating;
// the item page does). No Avito item has InStock, out-of-stock catalog
// products included: a listing has no stock.
func TestTestbedSearchAndItem(t *testing.T) {
	tb := sitetest.Testbed(t)
	s := sitetest.SiteOn(t, tb, "avito")
	q := sitetest.Query(tb, "avito")
	got, follow := sitetest.WalkSearch(t, s, site.Request{Query: q, Location: "moskva"})
	matches := tb.Catalog.Matches("avito", q)
	if len(matches) <= testbed.PageSizes["avito"] {
		t.Fatalf("query %q has %d matches: not several pages", q, len(matches))
	}
	sitetest.SoldOut(t, matches)
	if d := cmp.Diff(wantItems(s, matches, false), got); d != "" {
		t.Fatalf("search items (-catalog +parsed):\n%s", d)
	}
	page, err := s.Parse("item", sitetest.Get(t, follow[0].URL), follow[0].URL, at)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantItems(s, matches[:1], true), page.Items); d != "" {
		t.Fatalf("item page (-catalog +parsed):\n%s", d)
	}
}

func wantItems(s *site.Site, ps []testbed.Product, full bool) []item.Item {
	out := make([]item.Item, 0, len(ps))
	for _, p := range ps {
		it := item.Item{Site: "avito", ID: p.ID, Title: p.Title, Price: p.Price, Currency: "RUB",
			URL: s.BaseURL + p.URL, FetchedAt: at}
		if full {
			it.Seller, it.Rating, it.Reviews = p.Seller, p.Rating, p.Reviews
		}
		out = append(out, it)
	}
	return out
}
