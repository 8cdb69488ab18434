package ozon_test

import (
	"testing"

	"crawlq/tasks/site"
	"crawlq/testbed/sitetest"
)

func benchParse(b *testing.B, kind, file string) {
	body := sitetest.Sample(b, "ozon", file)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := site.Parse("ozon", kind, body, "", sitetest.FetchedAt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseSearchState(b *testing.B) {
	benchParse(b, "search", "ozon_searchResultsV2_state_2024-01.json")
}
func BenchmarkParseCategoryHTML(b *testing.B) {
	benchParse(b, "category", "ozon_category_page_2025-04.html")
}
func BenchmarkParseProductHTML(b *testing.B) {
	benchParse(b, "product", "ozon_product_page_2025-05.html")
}
