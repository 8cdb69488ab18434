package yamlstrict_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"crawlq/internal/yamlstrict"
)

// goNames matches what yaml.v3 says of Go types: "not found in type
// site.SiteConfig", "into int", map[string]…, []interface {}.
var goNames = regexp.MustCompile(`in type |into |map\[|\[\]|interface \{`)

// quoted matches the user's own text quoted in a message.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'[^']*'`)

// FuzzDecode: Decode never panics nor loops on any document (aliases
// included); an error is a *yamlstrict.Error that names no Go type.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"sites:\n  avito:\n    base_ulr: x\n", "sites: &a {<<: *a}\n", "a: &a [*a, *a]\n", "tags: &m {a: 1}\nsites: {*m : x}\n",
		"sites:\n  ozon: {min_interval: 1s, wait: 2s, tls: {ca_file: x}, endpoints: {web: y}}\nbroker: {pipelines: 3}\n",
		"broker: {pipelines: [1]}\n", "sites: [1, 2]\n", "rules: {a: b}\n", "---\n---\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c config
		err := yamlstrict.Decode(data, &c)
		if err == nil {
			return
		}
		var e *yamlstrict.Error
		if !errors.As(err, &e) {
			t.Fatalf("Decode(%q) = %v (%T), want a *yamlstrict.Error", data, err, err)
		}
		if goNames.MatchString(ownText(e)) {
			t.Fatalf("Decode(%q) = %v: names a Go type", data, err)
		}
	})
}

// ownText is e's message without the user's text: quoted values and keys,
// and the place (e.Path and the places above it).
func ownText(e *yamlstrict.Error) string {
	msg := quoted.ReplaceAllString(e.Msg, `""`)
	for p := e.Path; p != ""; {
		msg = strings.ReplaceAll(msg, p, "PLACE")
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return msg
}
