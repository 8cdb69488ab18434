package avito_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/results/item"
	"crawlq/tasks/site"
	"crawlq/testbed"
	"crawlq/testbed/sitetest"
)

// TestTestbedSearchAndItem walks every search page the testbed serves for
// a query, until Next is false, and parses the first followed item page:
// the items are exactly the catalog's, seller, rating and reviews
// included (the 2025 cards carry them). No Avito item has InStock,
// out-of-stock catalog products included: a listing has no stock.
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
	if d := cmp.Diff(wantItems(s, matches, true), got); d != "" {
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

// TestTestbedSearchAPI walks the testbed's js/items JSON search page by
// page until Next is false: the items are exactly the catalog's, with the
// seller's rating and reviews and no seller name (the answer has none);
// a query matching nothing is the site's empty answer, no error.
func TestTestbedSearchAPI(t *testing.T) {
	tb := sitetest.Testbed(t)
	s := sitetest.SiteOn(t, tb, "avito")
	q := sitetest.Query(tb, "avito")
	var got []item.Item
	req := site.Request{Query: q}
	for req.Page = 1; ; req.Page++ {
		page := apiPage(t, s, req)
		got = append(got, page.Items...)
		if !page.Next {
			break
		}
	}
	want := wantItems(s, tb.Catalog.Matches("avito", q), true)
	for i := range want {
		want[i].Seller = ""
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("js/items (-catalog +parsed):\n%s", d)
	}
	req.Query, req.Page = "zzzz-nothing-matches", 1
	if page := apiPage(t, s, req); len(page.Items) != 0 || page.Next {
		t.Fatalf("no-match query: %+v", page)
	}
}

func apiPage(t *testing.T, s *site.Site, req site.Request) site.Page {
	t.Helper()
	u, err := s.URL("search-api", req)
	if err != nil {
		t.Fatal(err)
	}
	page, err := s.Parse("search-api", sitetest.Get(t, u), u, at)
	if err != nil {
		t.Fatal(err)
	}
	return page
}
