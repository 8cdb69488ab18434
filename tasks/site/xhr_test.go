package site_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/tasks/site"
	_ "crawlq/tasks/wildberries"
)

func TestXHRConfig(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		paths      []string
		headers    []site.Header
		err        string
	}{
		{name: "built in", yaml: "sites: {}", headers: []site.Header{{"deviceid", "site_{deviceid}"}, {"x-queryid", "{queryid}"},
			{"x-requested-with", "XMLHttpRequest"}, {"x-spa-version", "13.15.1"}, {"x-userid", "0"}}},
		{name: "replaced", yaml: "sites:\n  wildberries:\n    xhr_paths: [/api/]\n    xhr_headers: [{name: x-spa-version, value: 14.0.0}]",
			paths: []string{"/api/"}, headers: []site.Header{{"x-spa-version", "14.0.0"}}},
		{name: "none", yaml: "sites:\n  wildberries:\n    xhr_headers: []", headers: []site.Header{}},
		{name: "bad path", yaml: "sites:\n  wildberries:\n    xhr_paths: [api]", err: "sites.wildberries.xhr_paths[0]"},
		{name: "bad name", yaml: "sites:\n  wildberries:\n    xhr_headers: [{name: 'a b', value: x}]", err: "sites.wildberries.xhr_headers[0].name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := site.LoadConfig([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			r := site.Default().Clone()
			err = r.Apply(cfg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one naming %s", err, tc.err)
				}
				return
			}
			s, _ := r.Get("wildberries")
			if d := cmp.Diff(tc.headers, s.XHR.Headers); d != "" || !cmp.Equal(tc.paths, s.XHR.Paths) {
				t.Errorf("headers (-want +got):\n%s\npaths %v, want %v", d, s.XHR.Paths, tc.paths)
			}
			// Headers from YAML go to every endpoint; the built-in ones
			// per endpoint (the basket CDN gets none of them).
			var basket []site.Header
			if tc.name != "built in" {
				basket = tc.headers
			}
			if d := cmp.Diff(basket, s.XHRHeaders("https://basket-01.wbbasket.ru/vol1/part100/100000/info/ru/card.json")); d != "" {
				t.Errorf("basket headers (-want +got):\n%s", d)
			}
		})
	}
}

func TestWildberriesAPICallsComeFromTheirPage(t *testing.T) {
	s, _ := site.Default().Get("wildberries")
	for api, page := range map[string]string{
		s.Endpoint(site.EndpointSearch) + "/exactmatch/ru/common/v18/search?query=%D1%87%D0%B0%D0%B9&page=2": "https://www.wildberries.ru/catalog/0/search.aspx?search=%D1%87%D0%B0%D0%B9",
		s.Endpoint(site.EndpointCard) + "/cards/v4/detail?nm=123":                                            "https://www.wildberries.ru/catalog/123/detail.aspx",
		s.Endpoint(site.EndpointCatalog) + "/catalog/beauty3/v2/catalog?cat=9000":                            "https://www.wildberries.ru/",
	} {
		if !s.IsXHR(api) {
			t.Errorf("%s is not an API call", api)
		}
		if got := s.XHRFrom(api); got != page {
			t.Errorf("%s comes from %s, want %s", api, got, page)
		}
	}
}
