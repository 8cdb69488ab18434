package tasks_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"crawlq/proxies"
	"crawlq/tasks"
)

// goType matches a package-qualified Go type name (site.SiteConfig).
var goType = regexp.MustCompile(`\b[a-z]+\.[A-Z]\w*\b`)

// TestLoadConfig: a config file overrides sites, loads rules relative to
// itself and sets the broker mode; bad files name file, line and field.
func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("rules.yaml", "sites:\n  ozon:\n    kinds:\n      search:\n        markers: [\"kapcha\"]\n")
	good := write("good.yaml", "sites:\n  ozon:\n    min_interval: 3s\nrules: rules.yaml\nbroker:\n  mode: exclusive\n  pipelines: 2\n")
	l, err := tasks.LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := l.Sites.Get("ozon")
	if s.MinInterval != 3*time.Second || l.Mode != proxies.ModeExclusive || l.BrokerConfig().Sites["ozon"].MinInterval != 3*time.Second ||
		l.BrokerConfig().Pipelines != 2 {
		t.Errorf("loaded %v %v %+v pipelines %d", s.MinInterval, l.Mode, l.BrokerConfig().Sites["ozon"], l.BrokerConfig().Pipelines)
	}
	found := false
	for _, m := range l.Rules.Effective("ozon", "search").Markers {
		found = found || m == "kapcha"
	}
	if !found {
		t.Error("rules file not merged")
	}
	tests := []struct{ name, body, want string }{
		{name: "unknown key", body: "sites: {}\nworkers: 3\n", want: `:2: unknown field "workers" at the top level (want one of sites, rules, tls, broker)`},
		{name: "misspelt field", body: "sites:\n  avito:\n    base_ulr: http://127.0.0.1:1\n", want: `:3: unknown field "base_ulr" in sites.avito (did you mean base_url?)`},
		{name: "wrong kind", body: "broker:\n  pipelines: many\n", want: `:2: broker.pipelines: want an integer, got "many"`},
		{name: "bad duration", body: "sites:\n  ozon:\n    min_interval: fast\n", want: "sites.ozon.min_interval"},
		{name: "unknown site", body: "sites:\n  ebay: {}\n", want: "sites.ebay"},
		{name: "misspelt site", body: "sites:\n  avtio: {}\n", want: "sites.avtio: unknown site (did you mean avito?)"},
		{name: "bad mode", body: "broker:\n  mode: anarchy\n", want: "broker.mode"},
		{name: "bad pipelines", body: "broker:\n  pipelines: -5\n", want: "broker.pipelines"},
		{name: "two documents", body: "sites: {}\n---\nsites: {}\n", want: "one YAML document"},
		{name: "missing rules file", body: "rules: nope.yaml\n", want: "nope.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(tc.name, " ", "_")+".yaml", tc.body)
			_, err := tasks.LoadConfig(p)
			if err == nil || !strings.Contains(err.Error(), p) && !strings.Contains(err.Error(), "nope.yaml") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadConfig = %v; want an error naming %s and %q", err, p, tc.want)
			}
			if goType.MatchString(err.Error()) {
				t.Errorf("LoadConfig = %v: names a Go type", err)
			}
		})
	}
}
