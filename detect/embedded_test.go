package detect_test

import (
	"testing"

	"crawlq/detect"
)

// embeddedRules are a shop's rules for an API whose widget states are
// JSON strings, as Ozon's page API answers.
const embeddedRules = `
sites:
  shop:
    kinds:
      search:
        json_paths: ['widgetStates.grid-*.@fromstr.items']
        empty_json_paths: ['widgetStates.nothingFound-*']
        empty_list_blocked: true
        unknown_json_suspect: true
`

// TestJSONInsideJSONStrings: expected content read inside string-valued
// widget states (@fromstr, member prefixes): tiles are OK; an empty tile
// list or the site's "nothing found" widget is an empty list (Suspect on
// page 1 with empty_list_blocked), the same shape on every IP; an unknown
// JSON is Suspect under unknown_json_suspect and Blocked without it or
// alone (confirm: 0).
func TestJSONInsideJSONStrings(t *testing.T) {
	rules, err := detect.ParseRules("r.yaml", []byte(embeddedRules))
	if err != nil {
		t.Fatal(err)
	}
	d := detect.New(detect.Builtin().Merge(rules))
	alone := detect.Builtin().Merge(rules).With("shop", "search", detect.Rule{Confirm: new(int)})
	dAlone := detect.New(alone)
	plain := detect.New(detect.Builtin().With("shop", "search", detect.Rule{JSONPaths: []string{"widgetStates.grid-*.@fromstr.items"}}))
	tests := []struct {
		name             string
		body             string
		want, alone, raw detect.Kind
		rule             string
	}{
		{"tiles", `{"widgetStates":{"pager-1":"{}","grid-7-default-1":"{\"items\":[{\"id\":1}]}"}}`,
			detect.OK, detect.OK, detect.OK, ""},
		{"empty tiles", `{"widgetStates":{"grid-7-default-1":"{\"items\":[]}"}}`,
			detect.Suspect, detect.Blocked, detect.OK, "empty list widgetStates.grid-*.@fromstr.items on page 1"},
		{"nothing found", `{"widgetStates":{"nothingFound-3-default-1":"{}"}}`,
			detect.Suspect, detect.Blocked, detect.Blocked, "empty list widgetStates.nothingFound-* on page 1"},
		{"nothing found beside empty tiles", `{"widgetStates":{"grid-7":"{\"items\":[]}","nothingFound-3":"{}"}}`,
			detect.Suspect, detect.Blocked, detect.OK, "empty list widgetStates.nothingFound-* on page 1"},
		{"unknown json", `{"error":{"code":7}}`,
			detect.Suspect, detect.Blocked, detect.Blocked, "missing json path widgetStates.grid-*.@fromstr.items"},
		{"states not strings", `{"widgetStates":{"grid-7":{"items":[{"id":1}]}}}`,
			detect.Suspect, detect.Blocked, detect.Blocked, "missing json path widgetStates.grid-*.@fromstr.items"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &detect.Response{Status: 200, Body: []byte(tt.body), Page: 1}
			v := d.Judge("shop", "search", r)
			if v.Kind != tt.want || v.Rule != tt.rule || (v.Kind == detect.Suspect && v.IfConfirmed != detect.OK) {
				t.Errorf("got %v (if confirmed %v); want %v by %q, ok once confirmed", v, v.IfConfirmed, tt.want, tt.rule)
			}
			if v.Kind == detect.Suspect && detect.Decide(v, d.Judge("shop", "search", r)) != detect.Agreed {
				t.Errorf("the same answer from a second IP does not agree with %v", v)
			}
			if a := dAlone.Judge("shop", "search", r); a.Kind != tt.alone {
				t.Errorf("confirm 0: got %v; want %v", a, tt.alone)
			}
			if p := plain.Judge("shop", "search", r); p.Kind != tt.raw {
				t.Errorf("json_paths alone: got %v; want %v", p, tt.raw)
			}
		})
	}
}
