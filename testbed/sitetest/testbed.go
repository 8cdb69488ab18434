package sitetest

import (
	"context"
	"strings"
	"testing"

	"crawlq/results/item"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// Testbed starts the crawlq testbed with its anti-bot rate rules off (the
// tests fetch directly from one loopback address); it
// stops when the test ends.
func Testbed(t testing.TB) *testbed.Testbed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	rules := map[string]testbed.SiteRules{}
	for _, name := range testbed.SiteNames {
		rules[name] = testbed.SiteRules{}
	}
	tb, err := testbed.Start(ctx, testbed.Config{Seed: 7, Proxies: 1, Sites: rules})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close(); cancel() })
	return tb
}

// SiteOn returns the named site with its base URL at the testbed.
func SiteOn(t testing.TB, tb *testbed.Testbed, name string) *site.Site {
	t.Helper()
	s, err := site.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	s.BaseURL = tb.SiteURL(name)
	return s
}

// Old is the old price a parser reports for a catalog product: only
// when above the price.
func Old(p testbed.Product) int64 {
	if p.OldPrice <= p.Price {
		return 0
	}
	return p.OldPrice
}

// Query is a one-word query matching several pages of the site's catalog:
// the first word of the first product's title.
func Query(tb *testbed.Testbed, site string) string {
	return strings.Fields(tb.Catalog.Products(site)[0].Title)[0]
}

// WalkSearch fetches every search page of req from the testbed, from page
// 1 until a page says there is no next one (asking the NextURL a page
// names, else the next page number), and returns all items and
// follow targets in order. It fails after 100 pages.
func WalkSearch(t testing.TB, s *site.Site, req site.Request) ([]item.Item, []site.Target) {
	t.Helper()
	var items []item.Item
	var follow []site.Target
	next := ""
	for req.Page = 1; req.Page <= 100; req.Page++ {
		u, err := next, error(nil)
		if u == "" {
			u, err = s.URL("search", req)
		}
		if err != nil {
			t.Fatal(err)
		}
		page, err := s.Parse("search", Get(t, u), u, FetchedAt)
		if err != nil {
			t.Fatal(err)
		}
		next = page.NextURL
		items, follow = append(items, page.Items...), append(follow, page.Follow...)
		if !page.Next {
			return items, follow
		}
	}
	t.Fatal("the testbed search never said it had no next page")
	return nil, nil
}

// InStock is the InStock a parser that reads stock reports for catalog
// product p.
func InStock(p testbed.Product) *bool {
	in := p.InStock()
	return &in
}

// SoldOut returns the first product of ps that is out of stock, and fails
// the test unless ps has products both in and out of stock (so a test of
// ps checks both answers).
func SoldOut(t testing.TB, ps []testbed.Product) testbed.Product {
	t.Helper()
	var in, out []testbed.Product
	for _, p := range ps {
		if p.InStock() {
			in = append(in, p)
		} else {
			out = append(out, p)
		}
	}
	if len(in) == 0 || len(out) == 0 {
		t.Fatalf("%d products in stock and %d out of stock: want some of each", len(in), len(out))
	}
	return out[0]
}
