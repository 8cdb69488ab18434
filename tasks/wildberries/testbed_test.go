package wildberries_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/results/item"
	"crawlq/tasks/site"
	"crawlq/testbed"
	"crawlq/testbed/sitetest"
)

// TestTestbedSearchAndCards walks every search page the testbed serves for
// a query, until Next is false, and parses the followed cards of the first
// product and of the first one out of stock: the items are exactly the
// catalog's matches, InStock included (the search answer's totalQuantity,
// the card's stocks).
func TestTestbedSearchAndCards(t *testing.T) {
	tb := sitetest.Testbed(t)
	s := sitetest.SiteOn(t, tb, "wildberries")
	q := sitetest.Query(tb, "wildberries")
	got, follow := sitetest.WalkSearch(t, s, site.Request{Query: q})
	matches := tb.Catalog.Matches("wildberries", q)
	want := wantItems(s, matches)
	if len(want) <= testbed.PageSizes["wildberries"] {
		t.Fatalf("query %q has %d matches: not several pages", q, len(want))
	}
	soldOut := sitetest.SoldOut(t, matches)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("search items (-catalog +parsed):\n%s", d)
	}
	for _, p := range []testbed.Product{matches[0], soldOut} {
		i := slices.IndexFunc(follow, func(f site.Target) bool { return f.ID == p.ID })
		if i < 0 {
			t.Fatalf("the search followed no card of %s", p.ID)
		}
		card, err := s.Parse("product", sitetest.Get(t, follow[i].URL), follow[i].URL, at)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(wantItems(s, []testbed.Product{p}), card.Items); d != "" {
			t.Fatalf("card %s (-catalog +parsed):\n%s", p.ID, d)
		}
	}
}

func wantItems(s *site.Site, ps []testbed.Product) []item.Item {
	out := make([]item.Item, 0, len(ps))
	for _, p := range ps {
		out = append(out, item.Item{Site: "wildberries", ID: p.ID, Title: p.Title, Price: p.Price,
			OldPrice: sitetest.Old(p), Currency: "RUB", Seller: p.Seller, Rating: p.Rating,
			Reviews: p.Reviews, InStock: sitetest.InStock(p), URL: s.BaseURL + p.URL, FetchedAt: at})
	}
	return out
}

// TestTestbedCardJSON: the testbed's card.json of catalog products, at
// the URL the card kind builds, parses to the product's ID and title (no
// price, no InStock: the card.json has no stock); an unknown nm, or a
// vol/part that is not the nm's, is a 404.
func TestTestbedCardJSON(t *testing.T) {
	tb := sitetest.Testbed(t)
	s := sitetest.SiteOn(t, tb, "wildberries")
	ps := tb.Catalog.Products("wildberries")
	for _, p := range []testbed.Product{ps[0], ps[len(ps)/2], ps[len(ps)-1]} {
		u, err := s.URL("card", site.Request{ID: p.ID})
		if err != nil {
			t.Fatal(err)
		}
		page, err := s.Parse("card", sitetest.Get(t, u), u, at)
		if err != nil {
			t.Fatal(err)
		}
		want := []item.Item{{Site: "wildberries", ID: p.ID, Title: p.Title, Currency: "RUB", URL: s.BaseURL + p.URL, FetchedAt: at}}
		if d := cmp.Diff(want, page.Items); d != "" {
			t.Errorf("card %s (-catalog +parsed):\n%s", p.ID, d)
		}
	}
	nm, _ := strconv.ParseInt(ps[0].ID, 10, 64)
	for _, path := range []string{
		testbed.WBCardJSONPath(nm + 1_000_000_000), // not in the catalog
		strings.Replace(testbed.WBCardJSONPath(nm), "/vol", "/vol1", 1),
		strings.Replace(testbed.WBCardJSONPath(nm), "/part", "/part9", 1),
	} {
		resp, err := http.Get(s.BaseURL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, resp.StatusCode)
		}
	}
}
