package yamlstrict_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/internal/yamlstrict"
)

type tls struct {
	CAFile string `yaml:"ca_file"`
}

type siteConfig struct {
	BaseURL     string            `yaml:"base_url"`
	MinInterval string            `yaml:"min_interval"`
	Endpoints   map[string]string `yaml:"endpoints"`
	TLS         tls               `yaml:"tls"`
	Wait        *time.Duration    `yaml:"wait"`
}

type sites struct {
	Sites map[string]siteConfig `yaml:"sites"`
}

type config struct {
	sites  `yaml:",inline"`
	Rules  string `yaml:"rules"`
	Broker struct {
		Mode      string `yaml:"mode"`
		Pipelines int    `yaml:"pipelines"`
	} `yaml:"broker"`
	Tags []string `yaml:"tags"`
}

// TestDecodeErrorsNameThePlace: every problem is one line with the line
// number and the dotted place, a misspelt key gets the field it was
// meant to be, and no message names a Go type.
func TestDecodeErrorsNameThePlace(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{name: "misspelt site field", yaml: "sites:\n  avito:\n    base_ulr: http://x\n",
			want: `line 3: unknown field "base_ulr" in sites.avito (did you mean base_url?)`},
		{name: "misspelt top field", yaml: "site:\n  avito: {}\n",
			want: `line 1: unknown field "site" at the top level (did you mean sites?)`},
		{name: "case only", yaml: "broker:\n  Mode: shared\n",
			want: `line 2: unknown field "Mode" in broker (did you mean mode?)`},
		{name: "nothing close", yaml: "workers: 3\n",
			want: `line 1: unknown field "workers" at the top level (want one of sites, rules, broker, tags)`},
		{name: "nested struct", yaml: "sites:\n  ozon:\n    tls: {ca_fle: x.pem}\n",
			want: `line 3: unknown field "ca_fle" in sites.ozon.tls (did you mean ca_file?)`},
		{name: "integer wanted", yaml: "broker:\n  pipelines: many\n",
			want: `line 2: broker.pipelines: want an integer, got "many"`},
		{name: "duration wanted", yaml: "sites:\n  ozon:\n    wait: soon\n",
			want: `line 3: sites.ozon.wait: want a duration such as 500ms, got "soon"`},
		{name: "mapping wanted", yaml: "sites:\n  ozon: fast\n",
			want: `line 2: sites.ozon: want a mapping, got "fast"`},
		{name: "list wanted", yaml: "tags: a\n",
			want: `line 1: tags: want a list, got "a"`},
		{name: "string wanted", yaml: "rules: [a, b]\n",
			want: `line 1: rules: want a string, got a list`},
		{name: "duplicate key", yaml: "sites:\n  ozon: {}\n  ozon: {}\n",
			want: `line 3: sites.ozon: duplicate key (first at line 2)`},
		{name: "two documents", yaml: "rules: a\n---\nrules: b\n",
			want: `line 2: one YAML document expected, found another`},
		{name: "anchor contains itself", yaml: "sites: &a {<<: *a}\n",
			want: `yaml: anchor 'a' value contains itself`},
		{name: "list as a key", yaml: "sites:\n  [1]: x\n",
			want: `line 2: yaml: a key must be a plain value, not a mapping or a list`},
		{name: "alias of a mapping as a key", yaml: "tags: &m {a: 1}\nsites: {*m : x}\n",
			want: `line 2: yaml: a key must be a plain value, not a mapping or a list`},
		{name: "syntax", yaml: "sites:\n  ozon:\n\t- a\n",
			want: `line 3: yaml: found character that cannot start any token`},
		{name: "syntax on the first line", yaml: "\tsites: {}\n",
			want: `line 1: yaml: found character that cannot start any token`},
		{name: "key indented wrong", yaml: "rules: a\nsites:\n  ozon: {}\n   avito: {}\n", // yaml.v3 says line 2
			want: `line 4: yaml: did not find expected key`},
		{name: "second document", yaml: "rules: a\n---\nrules: b\n  tags: c\n",
			want: `line 4: yaml: mapping values are not allowed in this context`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c config
			err := yamlstrict.Decode([]byte(tc.yaml), &c)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Decode = %v\nwant      %s", err, tc.want)
			}
			var e *yamlstrict.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not a *yamlstrict.Error", err)
			}
		})
	}
}

// TestDecodeGoodDocument: a valid document decodes as yaml.v3 would,
// aliases, merge keys and null values included.
func TestDecodeGoodDocument(t *testing.T) {
	var c config
	good := "sites:\n  ozon: {<<: {base_url: http://o}, min_interval: 2s, wait: 3s}\n  wb: &w {base_url: http://w}\n  avito: *w\n  empty:\n" +
		"rules: r.yaml\nbroker: {pipelines: 4}\ntags: [x]\n"
	if err := yamlstrict.Decode([]byte(good), &c); err != nil {
		t.Fatal(err)
	}
	wait := 3 * time.Second
	want := map[string]siteConfig{"ozon": {BaseURL: "http://o", MinInterval: "2s", Wait: &wait},
		"wb": {BaseURL: "http://w"}, "avito": {BaseURL: "http://w"}, "empty": {}}
	if d := cmp.Diff(want, c.Sites); d != "" || c.Rules != "r.yaml" || c.Broker.Pipelines != 4 || len(c.Tags) != 1 {
		t.Errorf("decoded (-want +got):\n%s\n%+v", d, c)
	}
	if err := yamlstrict.Decode(nil, &c); err != nil {
		t.Errorf("empty document: %v", err)
	}
}

// TestWithFile puts the file before the line.
func TestWithFile(t *testing.T) {
	var c config
	err := yamlstrict.WithFile(yamlstrict.Decode([]byte("sites:\n  avito:\n    base_ulr: x\n"), &c), "crawlq.yaml")
	if want := `crawlq.yaml:3: unknown field "base_ulr" in sites.avito (did you mean base_url?)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"base_url", "min_interval", "class", "queue", "endpoints", "tls", "fetch", "api", "challenge"}
	for word, want := range map[string]string{
		"base_ulr": "base_url", "baseurl": "base_url", "min_intervall": "min_interval", "Class": "class",
		"queu": "queue", "endpoint": "endpoints", "workers": "", "url": "", "tsl": "tls", "chalenge": "challenge",
	} {
		if got := yamlstrict.Suggest(word, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", word, got, want)
		}
	}
}
