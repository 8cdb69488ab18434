package site_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/proxies"
	_ "crawlq/tasks/avito"
	_ "crawlq/tasks/ozon"
	"crawlq/tasks/site"
	_ "crawlq/tasks/wildberries"
)

func TestRegistryDefaults(t *testing.T) {
	if d := cmp.Diff([]string{"avito", "ozon", "wildberries"}, site.Names()); d != "" {
		t.Fatalf("names (-want +got):\n%s", d)
	}
	tests := []struct {
		name     string
		class    proxies.Class
		interval time.Duration
		kinds    []string
		web      string
	}{
		{"wildberries", proxies.Datacenter, time.Second, []string{"card", "category", "product", "search"}, "https://www.wildberries.ru"},
		{"ozon", proxies.Residential, 2 * time.Second, []string{"category", "product", "search"}, "https://www.ozon.ru"},
		{"avito", proxies.Residential, 3 * time.Second, []string{"category", "item", "search", "search-api"}, "https://www.avito.ru"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := site.Get(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{s.Queue, s.Class, s.MinInterval, s.KindNames(), s.Endpoint(site.EndpointWeb)}
			want := []any{tt.name, tt.class, tt.interval, tt.kinds, tt.web}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("defaults (-want +got):\n%s", d)
			}
		})
	}
}

func TestGetUnknownSite(t *testing.T) {
	_, err := site.Get("amazon")
	if !errors.Is(err, site.ErrUnknownSite) || !strings.Contains(err.Error(), "amazon") {
		t.Fatalf("got %v, want ErrUnknownSite naming amazon", err)
	}
	if _, err := site.URL("amazon", "search", site.Request{Query: "x", Page: 1}); !errors.Is(err, site.ErrUnknownSite) {
		t.Fatalf("URL: got %v", err)
	}
	if _, err := site.Parse("wildberries", "item", []byte("{}"), "", time.Time{}); !errors.Is(err, site.ErrUnknownKind) {
		t.Fatalf("Parse unknown kind: got %v", err)
	}
}

// TestGetReturnsCopy: changing a site got from the registry does not
// change the registry.
func TestGetReturnsCopy(t *testing.T) {
	s, _ := site.Get("ozon")
	s.BaseURL = "http://127.0.0.1:1"
	s.Endpoints[site.EndpointWeb] = "http://127.0.0.1:2"
	again, _ := site.Get("ozon")
	if again.BaseURL != "" || again.Endpoint(site.EndpointWeb) != "https://www.ozon.ru" {
		t.Fatalf("registry changed: %q %q", again.BaseURL, again.Endpoint(site.EndpointWeb))
	}
}

func TestApplyConfig(t *testing.T) {
	r := site.Default().Clone()
	cfg, err := site.LoadConfig([]byte(`
sites:
  wildberries:
    base_url: http://127.0.0.1:8081/
    min_interval: 500ms
    class: mobile
    queue: wb-fast
  avito:
    endpoints: {web: "https://m.avito.ru"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	wb, _ := r.Get("wildberries")
	got := []any{wb.BaseURL, wb.MinInterval, wb.Class, wb.Queue, wb.Endpoint(site.EndpointCard)}
	want := []any{"http://127.0.0.1:8081", 500 * time.Millisecond, proxies.Mobile, "wb-fast", "http://127.0.0.1:8081"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("wildberries (-want +got):\n%s", d)
	}
	u, _ := wb.URL("product", site.Request{ID: "1"})
	if !strings.HasPrefix(u, "http://127.0.0.1:8081/__internal/u-card/cards/v4/detail?nm=1&") {
		t.Fatalf("product URL %q not on the base URL", u)
	}
	av, _ := r.Get("avito")
	if av.Endpoint(site.EndpointWeb) != "https://m.avito.ru" || av.MinInterval != 3*time.Second {
		t.Fatalf("avito: %q %v", av.Endpoint(site.EndpointWeb), av.MinInterval)
	}
	if d, _ := site.Get("wildberries"); d.BaseURL != "" {
		t.Fatal("applying to a clone changed the default registry")
	}
}

// TestMinIntervalAuto: min_interval auto learns the pace within the
// default bounds or the ones given; a duration after auto turns it off.
func TestMinIntervalAuto(t *testing.T) {
	tests := []struct {
		name, value string
		min, max    time.Duration
	}{
		{"no hint", "auto", proxies.DefaultLearnMin, proxies.DefaultLearnMax},
		{"bounds", "auto 250ms..3s", 250 * time.Millisecond, 3 * time.Second},
		{"max only", "auto ..2s", proxies.DefaultLearnMin, 2 * time.Second},
		{"min only", "auto 6s..", 6 * time.Second, 6 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := site.Default().Clone()
			cfg, err := site.LoadConfig([]byte("sites: {ozon: {min_interval: '" + tt.value + "'}}"))
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			oz, _ := r.Get("ozon")
			if oz.Learn == nil || oz.Learn.Min != tt.min || oz.Learn.Max != tt.max || oz.Learn.Start != tt.max {
				t.Fatalf("learn %+v, want bounds %s..%s starting at the max", oz.Learn, tt.min, tt.max)
			}
		})
	}
}

func TestApplyConfigErrors(t *testing.T) {
	tests := []struct {
		name, yaml, field string
	}{
		{"unknown site", "sites: {amazon: {queue: a}}", "sites.amazon"},
		{"bad interval", "sites: {ozon: {min_interval: fast}}", "sites.ozon.min_interval"},
		{"negative interval", "sites: {ozon: {min_interval: -1s}}", "sites.ozon.min_interval"},
		{"auto without ..", "sites: {ozon: {min_interval: auto 1s}}", "sites.ozon.min_interval"},
		{"auto bad bound", "sites: {ozon: {min_interval: auto 1s..fast}}", "sites.ozon.min_interval"},
		{"auto min over max", "sites: {ozon: {min_interval: auto 3s..1s}}", "sites.ozon.min_interval"},
		{"bad class", "sites: {avito: {class: satellite}}", "sites.avito.class"},
		{"bad base url", "sites: {wildberries: {base_url: 'ftp://x'}}", "sites.wildberries.base_url"},
		{"base url without host", "sites: {wildberries: {base_url: 'http://'}}", "sites.wildberries.base_url"},
		{"unknown endpoint", "sites: {ozon: {endpoints: {card: 'http://127.0.0.1'}}}", "sites.ozon.endpoints.card"},
		{"bad queue", "sites: {ozon: {queue: 'a b'}}", "sites.ozon.queue"},
		{"bad clearance wait", "sites: {ozon: {challenge: {wait: soon}}}", "sites.ozon.challenge.wait"},
		{"negative clearance wait", "sites: {ozon: {challenge: {wait: -2s}}}", "sites.ozon.challenge.wait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := site.Default().Clone()
			cfg, err := site.LoadConfig([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			err = r.Apply(cfg)
			var ce *site.ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field {
				t.Fatalf("got %v, want a ConfigError on %s", err, tt.field)
			}
		})
	}
	if _, err := site.LoadConfig([]byte("sites:\n  ozon:\n    min_intervall: 1s\n")); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("unknown key: got %v, want an error naming line 3", err)
	}
}

// TestParseHostileInput: truncated, malformed, compressed, wrongly
// encoded, huge and deeply nested bodies give errors, never panics.
func TestParseHostileInput(t *testing.T) {
	deep := strings.Repeat("<div>", 200000) + "x"
	cp1251 := []byte{0xcd, 0xee, 0xf3, 0xf2, 0xe1, 0xf3, 0xea} // "Ноутбук" in windows-1251
	tests := []struct {
		name, site, kind string
		body             []byte
		want             error
	}{
		{"empty", "ozon", "search", nil, site.ErrBadBody},
		{"truncated json", "wildberries", "search", []byte(`{"products":[{"id":1,"name":"a`), site.ErrBadBody},
		{"json wrong types", "wildberries", "product", []byte(`{"products":[{"id":"x"}]}`), site.ErrBadBody},
		{"json without products", "wildberries", "search", []byte(`{"state":0}`), site.ErrUnrecognized},
		{"deep json", "wildberries", "search", []byte(strings.Repeat("[", 100000)), site.ErrBadBody},
		{"gzip", "avito", "search", []byte{0x1f, 0x8b, 8, 0}, site.ErrBadBody},
		{"windows-1251", "avito", "item", append([]byte("<html><h1>"), cp1251...), site.ErrBadBody},
		{"huge", "ozon", "product", bytes.Repeat([]byte("a"), site.MaxBody+1), site.ErrBadBody},
		{"deep html avito", "avito", "search", []byte(deep), site.ErrBadBody},
		{"deep html ozon", "ozon", "product", []byte(deep), site.ErrBadBody},
		{"deep html wb", "wildberries", "search", []byte(deep), site.ErrBadBody},
		{"broken ozon state", "ozon", "search", []byte(`<div id="state-searchResultsV2-1-default-1" data-state='{"items":[{'></div>`), site.ErrBadBody},
		{"buyerItem without item", "avito", "item", []byte(`{"viewdata":{"seller":{}}}`), site.ErrUnrecognized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := site.Parse(tt.site, tt.kind, tt.body, "", time.Time{})
			var pe *site.ParseError
			if !errors.Is(err, tt.want) || !errors.As(err, &pe) || len(page.Items) != 0 {
				t.Fatalf("got %d items, %v; want a ParseError wrapping %v", len(page.Items), err, tt.want)
			}
		})
	}
}

// TestRotateAfterAuto: rotate_after takes a number or auto (the budget
// learned from the bans); anything else is an error naming the line.
func TestRotateAfterAuto(t *testing.T) {
	r := site.Default().Clone()
	cfg, err := site.LoadConfig([]byte("sites:\n  avito:\n    rotate_after: auto\n  ozon:\n    rotate_after: 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	av, _ := r.Get("avito")
	oz, _ := r.Get("ozon")
	if !av.RotateAfterAuto || av.RotateAfter != 0 || oz.RotateAfterAuto || oz.RotateAfter != 7 {
		t.Fatalf("avito auto %v after %d, ozon auto %v after %d; want auto and 7", av.RotateAfterAuto, av.RotateAfter, oz.RotateAfterAuto, oz.RotateAfter)
	}
	if _, err := site.LoadConfig([]byte("sites:\n  avito:\n    rotate_after: lots\n")); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("rotate_after: lots: %v, want an error naming line 3", err)
	}
}
