package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"crawlq/internal/samples"
)

// TestDetectPrintsSuspect: an empty first search page prints "suspect"
// with its rule; with confirm: 0 in a rules file it is blocked.
func TestDetectPrintsSuspect(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "empty.json")
	rules := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(page, []byte(`{"metadata":{"name":"перец"},"total":0,"products":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rules, []byte("sites:\n  wildberries:\n    kinds:\n      search:\n        confirm: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "built-in rules", args: []string{"detect", "--site", "wildberries", "--kind", "search", page},
			want: []string{`"kind": "suspect"`, `"rule": "empty list products on page 1"`, `"if_confirmed": "ok"`}},
		{name: "confirm 0", args: []string{"detect", "--site", "wildberries", "--kind", "search", "--rules", rules, page},
			want: []string{`"kind": "blocked"`, `"rule": "empty list products on page 1"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %s:\n%s", w, out)
				}
			}
		})
	}
}

// TestDetectSaysChallenge: the real Ozon antibot challenge page is a
// challenge, not a ban, under every kind; Wildberries' 498 too.
func TestDetectSaysChallenge(t *testing.T) {
	sample := filepath.Join(samples.Dir(), "ozon", "ozon_block_antibot_challenge_2025-06.html")
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "ozon sample as product", args: []string{"detect", "--site", "ozon", "--kind", "product", sample},
			want: []string{`"kind": "challenge"`, `"rule": "challenge marker \"abt-challenge/script_\""`}},
		{name: "ozon sample as search, status 403", args: []string{"detect", "--site", "ozon", "--kind", "search", "--status", "403", sample},
			want: []string{`"kind": "challenge"`}},
		{name: "wildberries 498", args: []string{"detect", "--site", "wildberries", "--kind", "search", "--status", "498", empty},
			want: []string{`"kind": "challenge"`, `"rule": "status 498"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %s:\n%s", w, out)
				}
			}
		})
	}
}

// TestDetectProductWithoutItemIsUnknownShape: detect asks the site's
// parser as a worker does, so a product page the rules pass but that
// holds no item prints "suspect" for an unknown shape, while the 2026
// rendered page with its product is ok (issue 36.6).
func TestDetectProductWithoutItemIsUnknownShape(t *testing.T) {
	dir := "../../tasks/wildberries/testdata/2026/"
	for page, want := range map[string][]string{
		"built_from_public_code_product_page_shell.html":    {`"kind": "suspect"`, `"reason": "unknown shape"`},
		"built_from_public_code_product_page_rendered.html": {`"kind": "ok"`},
	} {
		out, err := run(t, "detect", "--site", "wildberries", "--kind", "product", dir+page)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %s:\n%s", page, w, out)
			}
		}
	}
}
