package avito_test

import (
	"testing"

	"crawlq/tasks/site"
	"crawlq/testbed/sitetest"
)

func benchParse(b *testing.B, kind, file string) {
	body := sitetest.Sample(b, "avito", file)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := site.Parse("avito", kind, body, "", sitetest.FetchedAt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseSERP(b *testing.B)     { benchParse(b, "search", "avito_search_serp_2024.html.gz") }
func BenchmarkParseItemHTML(b *testing.B) { benchParse(b, "item", "avito_item_page_2024.html") }
