package detect

import "testing"

func TestJSONPathLookup(t *testing.T) {
	tests := []struct {
		name string
		path string
		doc  string
		want found
	}{
		{"top key", "products", `{"products":[1]}`, present},
		{"nested key", "data.products", `{"state":0,"data":{"products":[{"id":1}]}}`, present},
		{"key after tricky string", "b", `{"a":"x\"}],{[\\","b":2}`, present},
		{"key after nested containers", "b", `{"a":{"c":[1,{"d":"]"}]},"b":true}`, present},
		{"key inside a string is not a key", "b", `{"a":"\"b\":1"}`, missing},
		{"nested key not at top", "id", `{"x":{"id":1}}`, missing},
		{"null is missing", "products", `{"products":null}`, missing},
		{"empty list", "products", `{"products": [ ] }`, emptyList},
		{"each element", "products[].id", `{"products":[{"name":"a"},{"id":0}]}`, present},
		{"each element missing", "products[].id", `{"products":[{"name":"a"}]}`, missing},
		{"each on empty list", "products[].id", `{"products":[]}`, emptyList},
		{"each on non-array", "products[].id", `{"products":{"id":1}}`, missing},
		{"root array", "[].id", ` [{"id":1}]`, present},
		{"numbers and literals skipped", "z", `{"a":-1.5e3,"b":false,"c":null,"z":"ok"}`, present},
		{"utf-8 bom", "a", "\xef\xbb\xbf{\"a\":1}", present},
		{"cut document", "b", `{"a":[1,2,{"x":`, missing},
		{"cut after key found", "a", `{"a":[1,2`, present},
		{"not json", "a", `<html>`, missing},
		{"member prefix", "w.grid-*", `{"w":{"pager-1":"x","grid-2-default-1":[1]}}`, present},
		{"member prefix, no such member", "w.grid-*", `{"w":{"pager-1":"x"}}`, missing},
		{"member prefix, best member wins", "w.g*", `{"w":{"g1":[],"g2":null,"g3":[0]}}`, present},
		{"member prefix, empty beats missing", "w.g*", `{"w":{"g1":null,"g2":[]}}`, emptyList},
		{"every member", "*.id", `{"a":{"x":1},"b":{"id":2}}`, present},
		{"prefix on non-object", "w.g*", `{"w":["g1"]}`, missing},
		{"fromstr", "w.g-*.@fromstr.items", `{"w":{"g-1":"{\"items\":[{\"id\":1}]}"}}`, present},
		{"fromstr empty list", "w.g-*.@fromstr.items", `{"w":{"g-1":"{\"items\": []}"}}`, emptyList},
		{"fromstr key absent", "w.g-*.@fromstr.items", `{"w":{"g-1":"{\"cols\":12}"}}`, missing},
		{"fromstr of non-string", "w.@fromstr.items", `{"w":{"items":[1]}}`, missing},
		{"fromstr of no json", "w.@fromstr.items", `{"w":"no results"}`, missing},
		{"fromstr of a cut document", "w.@fromstr.items", `{"w":"{\"items\":[1"}`, present},
		{"fromstr of escaped unicode", "w.@fromstr.name", `{"w":"{\"name\":\"\u043a\u043e\u0444\u0435\"}"}`, present},
		{"fromstr leaf", "w.@fromstr", `{"w":"[]"}`, emptyList},
		{"fromstr then each", "w.@fromstr[].id", `{"w":"[{\"id\":1}]"}`, present},
		{"fromstr twice", "w.@fromstr.v.@fromstr.items", `{"w":"{\"v\":\"{\\\"items\\\":[2]}\"}"}`, present},
		{"fromstr cut", "w.@fromstr.items", `{"w":"{\"items\":[1]`, missing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jp, err := parseJSONPath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if got := jp.lookup([]byte(tt.doc)); got != tt.want {
				t.Errorf("lookup(%s) in %s = %d, want %d", tt.path, tt.doc, got, tt.want)
			}
		})
	}
}

func TestParseJSONPathErrors(t *testing.T) {
	for _, p := range []string{"", "a..b", ".a", "a.", "a[0]", "a.[]", "a[]b", "a*b", "a**", "*a"} {
		if _, err := parseJSONPath(p); err == nil {
			t.Errorf("parseJSONPath(%q): no error", p)
		}
	}
}

func TestTitleOf(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"plain", "<html><head><title>Доступ ограничен</title>", "Доступ ограничен"},
		{"upper case with attrs", `<HTML><TITLE lang="ru">Captcha</TITLE>`, "Captcha"},
		{"none", "<html><body>no title</body>", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := titleOf([]byte(tt.body)); got != tt.want {
				t.Errorf("titleOf = %q, want %q", got, tt.want)
			}
		})
	}
}
