package detect_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"crawlq/detect"
)

// writeRules writes a rules file into a temp dir and returns its path.
func writeRules(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadRulesOverride(t *testing.T) {
	path := writeRules(t, `
default:
  markers: ["Подозрительная активность"]
sites:
  avito:
    default:
      block_status: [418]
    kinds:
      item:
        selectors: ['div.my-item']
  ozon:
    kinds:
      search:
        replace: true
        selectors: ['div.only-this']
  example.org:
    kinds:
      page:
        selectors: ['article.post']
        min_size: 10
`)
	rules, err := detect.LoadRules(path)
	if err != nil {
		t.Fatal(err)
	}
	avito := rules.Effective("avito", "product")
	for _, st := range []int{403, 439, 418} {
		if !slices.Contains(avito.BlockStatus, st) {
			t.Errorf("avito block_status %v lacks %d (extend, not replace)", avito.BlockStatus, st)
		}
	}
	if !slices.Contains(avito.Selectors, "div.my-item") || !slices.Contains(avito.Selectors, `h1[data-marker="item-view/title-info"]`) {
		t.Errorf("avito product selectors not extended: %v", avito.Selectors)
	}
	if !slices.Contains(avito.Markers, "Подозрительная активность") {
		t.Errorf("global marker not inherited: %v", avito.Markers)
	}
	ozon := rules.Effective("ozon", "search")
	if !slices.Equal(ozon.Selectors, []string{"div.only-this"}) || len(ozon.Markers) != 0 || len(ozon.BlockStatus) != 0 {
		t.Errorf("replace did not stand alone: %+v", ozon)
	}
	gen := rules.Effective("example.org", "page")
	if gen.MinSize != 10 || !slices.Contains(gen.Selectors, "article.post") || !slices.Contains(gen.BlockStatus, 403) {
		t.Errorf("generic site: %+v", gen)
	}
	d := detect.New(rules)
	if v := d.Judge("avito", "item", &detect.Response{Status: 418}); v.Kind != detect.Blocked {
		t.Errorf("user block status: got %v", v)
	}
	if v := d.Judge("wildberries", "search", &detect.Response{Status: 200, Body: []byte("<html>Подозрительная активность</html>")}); v.Rule != `marker "Подозрительная активность"` {
		t.Errorf("user global marker: got %v", v)
	}
}

func TestLoadRulesErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string
	}{
		{"unknown rule field", "sites:\n  avito:\n    kinds:\n      search:\n        selector: ['a']\n",
			`rules.yaml:5: unknown field "selector" in sites.avito.kinds.search (did you mean selectors?)`},
		{"unknown rule field, nothing close", "default:\n  wait: 3\n",
			`rules.yaml:2: unknown field "wait" in default (want one of replace, block_status, rate_limit_status, defect_status, challenge_status, url_patterns, markers, challenge_markers, challenge_first_markers, title_markers, selectors, json_paths, empty_json_paths, empty_list_blocked, empty_list_not_found, unknown_json_suspect, page_size, min_size, drop_fraction, baseline_samples, confirm)`},
		{"unknown top field", "defaults:\n  markers: [x]\n",
			`rules.yaml:1: unknown field "defaults" at the top level (did you mean default?)`},
		{"unknown site field", "sites:\n  ozon:\n    kind: {}\n",
			`rules.yaml:3: unknown field "kind" in sites.ozon (did you mean kinds?)`},
		{"bad regexp", "default:\n  url_patterns:\n    - '/ok'\n    - '(captcha'\n",
			"rules.yaml:4: default.url_patterns[1]: invalid regexp \"(captcha\": error parsing regexp: missing closing ): `(captcha`"},
		{"bad selector", "sites:\n  wb:\n    kinds:\n      search:\n        selectors: ['div[data-x']\n",
			"rules.yaml:5: sites.wb.kinds.search.selectors[0]: invalid selector \"div[data-x\": unexpected EOF in attribute selector"},
		{"bad json path", "sites:\n  wb:\n    kinds:\n      search:\n        json_paths: ['a..b']\n",
			"rules.yaml:5: sites.wb.kinds.search.json_paths[0]: invalid json path \"a..b\": bad segment \"\""},
		{"bad empty json path", "sites:\n  shop:\n    default:\n      empty_json_paths: ['w.a*b']\n",
			"rules.yaml:4: sites.shop.default.empty_json_paths[0]: invalid json path \"w.a*b\": bad segment \"a*b\""},
		{"unknown_json_suspect not a bool", "default:\n  unknown_json_suspect: sometimes\n",
			"rules.yaml:2: default.unknown_json_suspect: want true or false, got \"sometimes\""},
		{"status not a number", "default:\n  block_status: [403, forbidden]\n",
			"rules.yaml:2: default.block_status[1]: want an integer, got \"forbidden\""},
		{"status out of range", "default:\n  block_status: [4030]\n",
			"rules.yaml:2: default.block_status[0]: 4030 is not an HTTP status"},
		{"list wanted", "default:\n  markers: captcha\n",
			"rules.yaml:2: default.markers: want a list, got \"captcha\""},
		{"empty marker", "default:\n  markers: ['  ']\n",
			"rules.yaml:2: default.markers[0]: empty marker matches every page"},
		{"fraction out of range", "default:\n  drop_fraction: 1.5\n",
			"rules.yaml:2: default.drop_fraction: 1.5 is not in [0, 1)"},
		{"negative size", "default:\n  min_size: -1\n",
			"rules.yaml:2: default.min_size: -1 is negative"},
		{"syntax error", "default:\n  markers:\n\t- a\n",
			"rules.yaml:3: yaml: found character that cannot start any token"},
		{"duplicate key", "sites:\n  ozon: {}\n  ozon: {}\n",
			"rules.yaml:3: sites.ozon: duplicate key"},
		{"bool wanted", "sites:\n  wb:\n    kinds:\n      search:\n        empty_list_blocked: sometimes\n",
			"rules.yaml:5: sites.wb.kinds.search.empty_list_blocked: want true or false, got \"sometimes\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeRules(t, tt.text)
			_, err := detect.LoadRules(path)
			if err == nil {
				t.Fatal("LoadRules: no error")
			}
			want := filepath.Join(filepath.Dir(path), tt.want)
			if err.Error() != want {
				t.Errorf("error:\n got %s\nwant %s", err, want)
			}
		})
	}
}

func TestBuiltinIsValid(t *testing.T) {
	rules := detect.Builtin()
	if err := rules.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, site := range []string{"wildberries", "ozon", "avito"} {
		for _, kind := range []string{"search", "product"} {
			r := rules.Effective(site, kind)
			if len(r.Selectors) == 0 || len(r.JSONPaths) == 0 || !slices.Contains(r.BlockStatus, 403) || !slices.Contains(r.RateLimitStatus, 429) {
				t.Errorf("%s/%s: incomplete built-in rule %+v", site, kind, r)
			}
		}
	}
	rules.Sites["avito"].Kinds["search"] = detect.Rule{}
	if len(detect.Builtin().Sites["avito"].Kinds["search"].Selectors) == 0 {
		t.Error("Builtin returned shared state: a caller's change leaked")
	}
}

func TestValidateNamesRule(t *testing.T) {
	rules := detect.Builtin().With("shop", "search", detect.Rule{Selectors: []string{"a", "p:nth-child("}})
	err := rules.Validate()
	want := `sites.shop.kinds.search.selectors[1]: invalid selector "p:nth-child(": unexpected EOF while attempting to parse expression of form an+b`
	if err == nil || err.Error() != want {
		t.Errorf("Validate: got %v, want %s", err, want)
	}
}
