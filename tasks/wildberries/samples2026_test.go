package wildberries_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/results/item"
	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
)

// sample2026 reads a real 2026 answer from testdata/2026 (README.md there
// gives each file's source and date).
func sample2026(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "2026", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseSearchV9Live parses the real search.wb.ru v9 answer of
// 2026-08-07 (products at the top level, prices in kopecks in
// sizes[].price): every item has ID, title, price, seller, rating and
// reviews, and the page has a next one (total 60672).
func TestParseSearchV9Live(t *testing.T) {
	page, err := site.Parse(wildberries.Name, "search", sample2026(t, "mcp_search_v9_live.json"), "", at)
	if err != nil {
		t.Fatal(err)
	}
	in := true
	want := []item.Item{
		wb("1280469586", "Ноутбук 16 дюймов Ryzen 5-7535HS 16Гб 1ТБ WUXGA Win11 K16SFA", 5562100, 7446000, "Tech&home", 5, 1),
		wb("824935779", "Ноутбук MateBook D16 (53014MUA)", 6057100, 8108700, "Modern Device", 4.9, 46),
		wb("497398643", `Ноутбук Crosshair A16 D8WGKG 16" Ryzen 7 32Gb SSD1Tb RTX5070`, 14985100, 20060400, "Modern Device", 4.9, 45),
	}
	for i := range want {
		want[i].InStock = &in
	}
	if d := cmp.Diff(want, page.Items); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
	// The capture was trimmed to 3 of its page's products: a page that is
	// not full (PageSize) is the last, whatever the total says.
	if page.Next || len(page.Follow) != len(want) {
		t.Errorf("next %v, %d follow-ups; want false (a short page is the last), %d", page.Next, len(page.Follow), len(want))
	}
}

// TestParseCardV4Live parses the real card.wb.ru v4 detail answer of
// 2026-08-07 for nm 1280469586: the card's own price (54 676 ₽, not the
// search's 55 621 ₽ of the same minute) and its stock.
func TestParseCardV4Live(t *testing.T) {
	page, err := site.Parse(wildberries.Name, "product", sample2026(t, "mcp_card_v4_live.json"), "", at)
	if err != nil {
		t.Fatal(err)
	}
	want := stocked(wb("1280469586", "Ноутбук 16 дюймов Ryzen 5-7535HS 16Гб 1ТБ WUXGA Win11 K16SFA", 5467600, 7082400, "Tech&home", 5, 3), true)
	if d := cmp.Diff([]item.Item{want}, page.Items); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
}
