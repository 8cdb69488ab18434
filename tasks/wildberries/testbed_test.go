package wildberries_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/tasks/item"
	"crawlq/tasks/site"
	"crawlq/tasks/site/sitetest"
	"crawlq/testbed"
)

// TestTestbedSearchAndCards walks every search page the testbed serves for
// a query, until Next is false, and parses each followed card: the items
// are exactly the catalog's matches.
func TestTestbedSearchAndCards(t *testing.T) {
	tb := sitetest.Testbed(t)
	s := sitetest.SiteOn(t, tb, "wildberries")
	q := sitetest.Query(tb, "wildberries")
	got, follow := sitetest.WalkSearch(t, s, site.Request{Query: q})
	want := wantItems(tb, s, tb.Catalog.Matches("wildberries", q))
	if len(want) <= testbed.PageSizes["wildberries"] {
		t.Fatalf("query %q has %d matches: not several pages", q, len(want))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("search items (-catalog +parsed):\n%s", d)
	}
	card, err := s.Parse("product", sitetest.Get(t, follow[0].URL), follow[0].URL, at)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want[:1], card.Items); d != "" {
		t.Fatalf("card (-catalog +parsed):\n%s", d)
	}
}

func wantItems(tb *testbed.Testbed, s *site.Site, ps []testbed.Product) []item.Item {
	out := make([]item.Item, 0, len(ps))
	for _, p := range ps {
		out = append(out, item.Item{Site: "wildberries", ID: p.ID, Title: p.Title, Price: p.Price,
			OldPrice: sitetest.Old(p), Currency: "RUB", Seller: p.Seller, Rating: p.Rating,
			Reviews: p.Reviews, URL: s.BaseURL + p.URL, FetchedAt: at})
	}
	return out
}
