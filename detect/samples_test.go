package detect_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"crawlq/detect"
	"crawlq/internal/samples"
)

// samplesDir is the folder of the real samples carried in the repository.
func samplesDir(t testing.TB) string {
	t.Helper()
	return samples.Dir()
}

func must[T any](v T, _ error) T { return v }

// sampleCase is how a sample file must be judged.
type sampleCase struct {
	site, kind string
	want       detect.Kind
}

// sampleCases names every file of the real samples; a file not listed here
// fails TestSamples, so new samples cannot be skipped silently.
var sampleCases = map[string]sampleCase{
	"avito/avito_block_firewall_captcha_desktop.html":   {"avito", "search", detect.Blocked},
	"avito/avito_block_ip_mobile_nocaptcha.html":        {"avito", "item", detect.Blocked},
	"avito/avito_item_buyerItem_extracted.json":         {"avito", "item", detect.OK},
	"avito/avito_item_page_2024.html":                   {"avito", "item", detect.OK},
	"avito/avito_pow_challenge_439_2026-08.html":        {"avito", "search", detect.Challenge},
	"avito/avito_search_serp_2024.html.gz":              {"avito", "search", detect.OK},
	"ozon/ozon_block_antibot_challenge_2025-06.html":    {"ozon", "product", detect.Challenge},
	"ozon/ozon_block_no_connection_2026-06.html":        {"ozon", "search", detect.Challenge}, // first: Blocked if the browser's visit ends on it
	"ozon/ozon_category_page_2025-04.html":              {"ozon", "search", detect.OK},
	"ozon/ozon_product_page_2025-05.html":               {"ozon", "product", detect.OK},
	"ozon/ozon_searchResultsV2_state_2024-01.json":      {"ozon", "search", detect.OK},
	"ozon/ozon_seller_products_page_2025-07.html":       {"ozon", "search", detect.OK},
	"wildberries/wb_basket_card_json_2025-07.json":      {"wildberries", "product", detect.OK},
	"wildberries/wb_card_v4_detail_2025-07.json":        {"wildberries", "product", detect.OK},
	"wildberries/wb_catalog_v2_legacy_priceU.json":      {"wildberries", "search", detect.OK},
	"wildberries/wb_product_page_rendered_2025-04.html": {"wildberries", "product", detect.OK},
	"wildberries/wb_search_page_rendered_2025-04.html":  {"wildberries", "search", detect.OK},
}

// TestSamples judges every real saved page: block pages Blocked, normal
// pages OK. Block pages are also judged under every kind of their site.
func TestSamples(t *testing.T) {
	root := samplesDir(t)
	d := detect.New(detect.Builtin())
	seen := 0
	err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || strings.EqualFold(e.Name(), "README.md") {
			return err
		}
		rel := filepath.ToSlash(must(filepath.Rel(root, path)))
		c, ok := sampleCases[rel]
		if !ok {
			t.Errorf("%s: sample not listed in sampleCases", rel)
			return nil
		}
		seen++
		body, err := detect.ReadSaved(path)
		if err != nil {
			t.Fatal(err)
		}
		kinds := []string{c.kind}
		if c.want == detect.Blocked || c.want == detect.Challenge {
			kinds = []string{"search", "product", "item", "default"}
		}
		for _, kind := range kinds {
			v := d.Judge(c.site, kind, &detect.Response{Status: 200, Body: body})
			if v.Kind != c.want {
				t.Errorf("%s as %s/%s: got %v, want %v", rel, c.site, kind, v, c.want)
			} else {
				t.Logf("%s as %s/%s: %v", rel, c.site, kind, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(sampleCases) {
		t.Errorf("judged %d samples, sampleCases lists %d", seen, len(sampleCases))
	}
}
