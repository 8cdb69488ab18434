package detect_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"crawlq/detect"
)

// rulesSeeds are rules files: the built-in one, the documented shape with
// every field, and the mistakes the loader must name.
var rulesSeeds = []string{
	"default:\n  block_status: [403]\n  rate_limit_status: [429, 503]\n  url_patterns: ['(?i)captcha']\n  markers: ['Доступ ограничен']\n  title_markers: ['just a moment']\n  min_size: 1\n  drop_fraction: 0.25\n  baseline_samples: 5\n",
	"sites:\n  avito:\n    default:\n      block_status: [429]\n    kinds:\n      search:\n        replace: true\n        selectors: ['[data-marker=\"item\"]', 'div.catalog-serp']\n        empty_list_blocked: true\n      item:\n        json_paths: ['buyerItem.item.id']\n",
	"sites:\n  wildberries:\n    kinds:\n      search:\n        json_paths: ['data.products[*].id', 'products']\n        empty_list_not_found: true\n",
	"sites:\n  shop.example:\n    default:\n      url_patterns: ['/denied']\n      selectors: ['.product h1']\n",
	"default:\n  url_patterns: ['(?i)captcha(']\n",
	"default:\n  selectors: ['div[']\n",
	"default:\n  json_paths: ['a..b']\n",
	"default:\n  block_status: [99, 1000]\n",
	"default:\n  drop_fraction: 1.5\n",
	"default:\n  min_size: -1\n",
	"default:\n  markers: ['']\n",
	"default:\n  nope: 1\n",
	"sites:\n  ozon:\n    kinds: [search]\n",
	"sites: {ozon: {default: {block_status: '403'}}}\n",
	"default: [\n",
	"---\n",
	"",
}

// FuzzParseRules: ParseRules never panics; an error is a
// *detect.ConfigError with a line, and accepted rules merged over the
// built-ins validate, build a Detector without panicking and judge a page.
func FuzzParseRules(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("builtin.yaml")); err == nil {
		f.Add(b)
	}
	for _, s := range rulesSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := detect.ParseRules("rules.yaml", data)
		if err != nil {
			var ce *detect.ConfigError
			if !errors.As(err, &ce) || ce.File != "rules.yaml" || ce.Line < 1 {
				t.Fatalf("ParseRules(%q) error %v (%T) does not name file and line", data, err, err)
			}
			return
		}
		merged := detect.Builtin().Merge(rs)
		if err := merged.Validate(); err != nil {
			t.Fatalf("ParseRules(%q) accepted rules that do not validate: %v", data, err)
		}
		d := detect.New(merged)
		for _, site := range []string{"wildberries", "ozon", "avito", "shop.example"} {
			_ = d.Judge(site, "search", &detect.Response{Status: http.StatusOK, FinalURL: "http://127.0.0.1/s?page=1",
				Header: http.Header{}, Body: []byte(`<html><title>x</title><div class="product"><h1>x</h1></div></html>`)})
		}
	})
}
