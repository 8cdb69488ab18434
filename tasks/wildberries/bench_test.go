package wildberries_test

import (
	"testing"

	"crawlq/tasks/site"
	"crawlq/testbed/sitetest"
)

func benchParse(b *testing.B, kind, file string) {
	body := sitetest.Sample(b, "wildberries", file)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := site.Parse("wildberries", kind, body, "", sitetest.FetchedAt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseSearchJSON(b *testing.B) {
	benchParse(b, "search", "wb_catalog_v2_legacy_priceU.json")
}
func BenchmarkParseSearchHTML(b *testing.B) {
	benchParse(b, "search", "wb_search_page_rendered_2025-04.html")
}
func BenchmarkParseCardJSON(b *testing.B) { benchParse(b, "product", "wb_card_v4_detail_2025-07.json") }
func BenchmarkParseProductHTML(b *testing.B) {
	benchParse(b, "product", "wb_product_page_rendered_2025-04.html")
}
