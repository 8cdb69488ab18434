package tasks_test

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"crawlq/detect"
	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/tasks/site"
)

// configSeeds are crawlq config files: the documented shape, every field,
// a rules file, and the mistakes users make.
var configSeeds = []string{
	"sites:\n  wildberries: {base_url: http://127.0.0.1:8081, min_interval: 500ms}\nrules: rules.yaml\nbroker:\n  mode: shared\n",
	"sites:\n  ozon:\n    base_url: https://ozon.example/\n    min_interval: 2s\n    class: residential\n    queue: ozon-slow\n  avito:\n    endpoints: {web: https://m.avito.ru}\nbroker: {mode: exclusive}\n",
	"sites:\n  wildberries:\n    endpoints:\n      search: http://127.0.0.1:9001\n      card: http://127.0.0.1:9002\n      catalog: http://127.0.0.1:9003\n",
	"broker:\n  mode: partitioned\n",
	"# empty\n",
	"",
	"sites:\n  ebay: {base_url: http://h}\n",
	"sites:\n  ozon: {min_interval: -1s}\n",
	"sites:\n  ozon: {min_interval: fast}\n",
	"sites:\n  avito: {class: satellite}\n",
	"sites:\n  avito: {queue: \"two words\"}\n",
	"sites:\n  avito: {base_url: \"ftp://h\"}\n",
	"sites:\n  avito: {base_url: \"http://h/?q=1\"}\n",
	"sites:\n  avito:\n    endpoints: {api: http://h}\n",
	"broker: {mode: roundrobin}\n",
	"rules: missing.yaml\n",
	"sitse: {}\n",
	"sites: [1, 2]\n",
	"sites:\n  ozon: {min_interval: 1s\n",
	"a: &a [*a, *a]\n",
}

// configRules is the rules file the seeds' `rules: rules.yaml` names.
const configRules = "sites:\n  ozon:\n    default:\n      markers: ['Доступ ограничен']\n      block_status: [451]\n"

// FuzzParseConfig: ParseConfig never panics; LoadConfig on the same bytes
// either fails naming the file or gives sites with valid values, and it
// never changes the default registry.
func FuzzParseConfig(f *testing.F) {
	for _, s := range configSeeds {
		f.Add([]byte(s))
	}
	before := siteSnapshot(f, site.Default())
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := tasks.ParseConfig(data)
		if err != nil {
			return
		}
		if cfg.Rules != "" && !filepath.IsLocal(cfg.Rules) {
			return // only files inside the test's own directory are read
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "crawlq.yaml")
		writeFile(t, path, data)
		if cfg.Rules == "rules.yaml" {
			writeFile(t, filepath.Join(dir, "rules.yaml"), []byte(configRules))
		}
		l, err := tasks.LoadConfig(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) && !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("LoadConfig error does not name the file: %v", err)
			}
		} else {
			checkLoaded(t, data, l)
		}
		if after := siteSnapshot(t, site.Default()); after != before {
			t.Fatalf("config %q changed the default registry:\n%s\nwas\n%s", data, after, before)
		}
	})
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkLoaded: every site's values are valid and its URLs build under its
// configured endpoints; the rules compile; the mode is known.
func checkLoaded(t *testing.T, data []byte, l *tasks.Loaded) {
	t.Helper()
	if _, err := proxies.ParseMode(string(l.Mode)); err != nil || l.Mode == "" {
		t.Fatalf("config %q: mode %q: %v", data, l.Mode, err)
	}
	if err := l.Rules.Validate(); err != nil {
		t.Fatalf("config %q: loaded rules invalid: %v", data, err)
	}
	_ = detect.New(l.Rules)
	for _, name := range l.Sites.Names() {
		s, err := l.Sites.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.MinInterval < 0 || !s.Class.Valid() || s.Queue == "" || strings.ContainsAny(s.Queue, " \t\r\n") {
			t.Fatalf("config %q: site %s has min_interval %s class %q queue %q", data, name, s.MinInterval, s.Class, s.Queue)
		}
		checkEndpoints(t, data, s)
	}
}

func checkEndpoints(t *testing.T, data []byte, s *site.Site) {
	t.Helper()
	for ep := range s.Endpoints {
		u, err := url.Parse(s.Endpoint(ep))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("config %q: site %s endpoint %s = %q is not an http(s) URL", data, s.Name, ep, s.Endpoint(ep))
		}
	}
	for _, k := range s.KindNames() {
		raw, err := s.URL(k, site.Request{Query: "кофе", ID: "123456789", Category: "kvartiry/sdam", Page: 2})
		if err != nil {
			continue // the kind wants other fields
		}
		if _, err := url.Parse(raw); err != nil {
			t.Fatalf("config %q: %s %s URL %q: %v", data, s.Name, k, raw, err)
		}
	}
}

// siteSnapshot prints the configurable values of every site.
func siteSnapshot(t testing.TB, reg *site.Registry) string {
	t.Helper()
	var b strings.Builder
	for _, name := range reg.Names() {
		s, err := reg.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(name + " " + s.Queue + " " + s.MinInterval.String() + " " + string(s.Class) + " " + s.BaseURL)
		for _, ep := range []string{site.EndpointWeb, site.EndpointSearch, site.EndpointCard, site.EndpointCatalog} {
			b.WriteString(" " + s.Endpoints[ep])
		}
		b.WriteString("\n")
	}
	return b.String()
}
