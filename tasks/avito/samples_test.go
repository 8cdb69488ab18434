package avito_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/results/item"
	"crawlq/tasks/site"
	"crawlq/testbed/sitetest"
)

var at = sitetest.FetchedAt

func av(path, id, title string, price int64, seller string, rating float64, reviews int) item.Item {
	return item.Item{Site: "avito", ID: id, Title: title, Price: price, Currency: "RUB",
		Seller: seller, Rating: rating, Reviews: reviews,
		URL: "https://www.avito.ru/" + path + "_" + id, FetchedAt: at}
}

// TestParseRealSamples parses every real Avito sample (block pages aside)
// into the exact items the file holds (values read from the files by hand).
func TestParseRealSamples(t *testing.T) {
	tests := []struct {
		name, kind  string
		count       int
		next        bool
		first, last item.Item
	}{
		{name: "avito_search_serp_2024.html.gz", kind: "search", count: 50, next: true,
			first: av("krasnodar/doma_dachi_kottedzhi/dom_64_m_na_uchastke_1_sot.", "4090229142", "Дом 64 м² на участке 1 сот.", 2700000, "", 0, 0),
			last:  av("krasnodar/doma_dachi_kottedzhi/dom_24_m_na_uchastke_1_sot.", "2962938835", "Дом 24 м² на участке 1 сот.", 1700000, "", 0, 0)},
		{name: "avito_item_page_2024.html", kind: "item", count: 1,
			first: av("krasnodar/kvartiry/kvartira-studiya_24m_1016et.", "3889452914", "Квартира-студия, 24 м², 10/16 эт.", 2600000, "Пользователь", 0, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := site.Parse("avito", tt.kind, sitetest.Sample(t, "avito", tt.name), "", at)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Items) != tt.count || page.Next != tt.next {
				t.Fatalf("got %d items, next %v; want %d, %v", len(page.Items), page.Next, tt.count, tt.next)
			}
			if d := cmp.Diff(tt.first, page.Items[0]); d != "" {
				t.Errorf("first item (-want +got):\n%s", d)
			}
			if tt.count > 1 {
				if d := cmp.Diff(tt.last, page.Items[len(page.Items)-1]); d != "" {
					t.Errorf("last item (-want +got):\n%s", d)
				}
				want := site.Target{Site: "avito", Kind: "item", ID: tt.first.ID, URL: tt.first.URL}
				if len(page.Follow) != tt.count || page.Follow[0] != want {
					t.Errorf("follow: %d targets, first %+v; want %d, %+v", len(page.Follow), page.Follow[0], tt.count, want)
				}
			}
		})
	}
}

// TestParseBlockPagesUnrecognized: the real block pages give
// ErrUnrecognized for every kind; so does the 2024 buyerItem JSON, whose
// path was removed (no 2025-26 client reads a listing from it).
func TestParseBlockPagesUnrecognized(t *testing.T) {
	for _, name := range []string{"avito_block_firewall_captcha_desktop.html", "avito_block_ip_mobile_nocaptcha.html", "avito_item_buyerItem_extracted.json"} {
		t.Run(name, func(t *testing.T) {
			for _, kind := range []string{"search", "search-api", "item"} {
				_, err := site.Parse("avito", kind, sitetest.Sample(t, "avito", name), "", at)
				if !errors.Is(err, site.ErrUnrecognized) {
					t.Errorf("%s: got %v, want ErrUnrecognized", kind, err)
				}
			}
		})
	}
}
