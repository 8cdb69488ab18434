package site_test

import (
	"strings"
	"testing"

	"crawlq/tasks/site"
)

// TestItemID: a pasted product or listing URL names the item's ID as
// enqueue reads it; an ID is itself; a URL of another shape is refused
// naming what it wants.
func TestItemID(t *testing.T) {
	for _, tc := range []struct {
		name, site, arg, want, err string
	}{
		{name: "wildberries url", site: "wildberries", arg: "https://www.wildberries.ru/catalog/67086613/detail.aspx?targetUrl=GP", want: "67086613"},
		{name: "wildberries id", site: "wildberries", arg: "67086613", want: "67086613"},
		{name: "ozon url", site: "ozon", arg: "https://www.ozon.ru/product/chaynik-elektricheskiy-1234567/", want: "1234567"},
		{name: "avito url", site: "avito", arg: "https://www.avito.ru/moskva/telefony/iphone_15_4012345678", want: "4012345678"},
		{name: "ozon url of no product", site: "ozon", arg: "https://www.ozon.ru/category/chayniki/", err: "no product ID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := site.Default().Get(tc.site)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.ItemID(tc.arg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ItemID(%q) = %q, %v; want an error with %q", tc.arg, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ItemID(%q) = %q, %v; want %q", tc.arg, got, err, tc.want)
			}
		})
	}
}
