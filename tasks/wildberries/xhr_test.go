package wildberries_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
)

// TestHeadersPerEndpoint: each endpoint gets what the site's page sends
// it (issue 36.4): the search its five headers, the card and catalog APIs
// all but the search's x-queryid and x-userid, the basket CDN none (the
// browser adds Origin: it is another site), from the product page.
func TestHeadersPerEndpoint(t *testing.T) {
	s := wildberries.New()
	names := func(u string) []string {
		var out []string
		for _, h := range s.XHRHeaders(u) {
			out = append(out, h.Name)
		}
		return out
	}
	all := []string{"deviceid", "x-queryid", "x-requested-with", "x-spa-version", "x-userid"}
	api := []string{"deviceid", "x-requested-with", "x-spa-version"}
	basket := wildberries.BasketURL(wildberries.BasketPattern, 27, 497398643)
	for _, tc := range []struct {
		name, url string
		want      []string
		from      string
	}{
		{"search", mustURL(t, s, "search", site.Request{Query: "ноутбук", Page: 1}), all,
			"https://www.wildberries.ru/catalog/0/search.aspx?search=%D0%BD%D0%BE%D1%83%D1%82%D0%B1%D1%83%D0%BA"},
		{"legacy search", "https://search.wb.ru/exactmatch/ru/common/v9/search?query=x&page=1", all, ""},
		{"card", mustURL(t, s, "product", site.Request{ID: "1280469586"}), api, "https://www.wildberries.ru/catalog/1280469586/detail.aspx"},
		{"catalog", mustURL(t, s, "category", site.Request{Category: "beauty3?cat=9000", Page: 1}), api, "https://www.wildberries.ru/"},
		{"basket", basket, nil, "https://www.wildberries.ru/catalog/497398643/detail.aspx"},
		{"basket upstream map", "https://cdn.wbbasket.ru/api/v3/upstreams", nil, "https://www.wildberries.ru/"},
	} {
		if d := cmp.Diff(tc.want, names(tc.url)); d != "" {
			t.Errorf("%s %s headers (-want +got):\n%s", tc.name, tc.url, d)
		}
		if got := s.XHRFrom(tc.url); tc.from != "" && got != tc.from {
			t.Errorf("%s called from %s, want %s", tc.name, got, tc.from)
		}
	}
}

func mustURL(t *testing.T, s *site.Site, kind string, r site.Request) string {
	t.Helper()
	u, err := s.URL(kind, r)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
