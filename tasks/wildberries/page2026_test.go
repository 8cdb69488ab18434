package wildberries_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/results/item"
	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
)

// TestParseProductPage2026 parses the 2026 rendered product page (markup
// of generated class names, built from public clients' code:
// testdata/2026/README.md) into its item: the nm ID from the Артикул
// row, the title without the brand, the final price (not the wallet's,
// not a recommendation's), the old price, the seller and the rating and
// its count; from the URL or the <title> when the row is missing.
func TestParseProductPage2026(t *testing.T) {
	body := sample2026(t, "built_from_public_code_product_page_rendered.html")
	want := wb("949425394", "Вентилятор регулируемый канальный вытяжной для трубы 120мм", 106000, 149000, "ТопФлюид", 4.8, 1234)
	for _, tc := range []struct{ name, url string }{
		{"article row", "https://www.wildberries.ru/catalog/949425394/detail.aspx"},
		{"no page URL", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := site.Parse(wildberries.Name, "product", body, tc.url, at)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]item.Item{want}, page.Items); d != "" {
				t.Errorf("items (-want +got):\n%s", d)
			}
		})
	}
}

// TestProductPage2026WithoutProductIsUnrecognized: the product page's
// frame with the storefront's title and no product (public clients meet
// it and refuse to take the slogan for a name) gives the parser no item:
// it is not of a shape the parser knows, never a page without items.
func TestProductPage2026WithoutProductIsUnrecognized(t *testing.T) {
	body := sample2026(t, "built_from_public_code_product_page_shell.html")
	page, err := site.Parse(wildberries.Name, "product", body, "https://www.wildberries.ru/catalog/949425394/detail.aspx", at)
	if !errors.Is(err, site.ErrUnrecognized) || len(page.Items) != 0 {
		t.Fatalf("items %v, error %v: want no item and ErrUnrecognized", page.Items, err)
	}
}
