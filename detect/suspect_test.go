package detect_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/detect"
)

// TestConfirmZeroActsAlone: with confirm: 0 a site's ambiguous answers get
// the verdicts they had before confirmation existed.
func TestConfirmZeroActsAlone(t *testing.T) {
	user, err := detect.ParseRules("rules.yaml", []byte("sites:\n  wildberries:\n    default:\n      confirm: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := detect.New(detect.Builtin().Merge(user))
	tests := []struct {
		name, kind, body string
		want             detect.Kind
	}{
		{"empty search", "search", `{"total":0,"products":[]}`, detect.Blocked},
		{"empty later page", "search page 2", `{"total":0,"products":[]}`, detect.OK},
		{"empty card list", "product", `{"products":[]}`, detect.NotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind, page := tc.kind, 1
			if kind == "search page 2" {
				kind, page = "search", 2
			}
			v := d.Judge("wildberries", kind, &detect.Response{Status: 200, Page: page, Body: []byte(tc.body)})
			if v.Kind != tc.want || v.Shape != "" || v.IfConfirmed != 0 {
				t.Errorf("got %v (shape %q, if confirmed %v), want %v alone", v, v.Shape, v.IfConfirmed, tc.want)
			}
		})
	}
	other := detect.New(detect.Builtin().Merge(user)).Judge("ozon", "search", &detect.Response{Status: 200,
		Body: []byte(strings.Replace(ozonFrame, "%s", "{}", 1))})
	if other.Kind != detect.Suspect {
		t.Errorf("another site keeps confirming: got %v", other)
	}
}

// TestConfirmField: the YAML field takes 0 or 1 and names a bad value.
func TestConfirmField(t *testing.T) {
	_, err := detect.ParseRules("r.yaml", []byte("sites:\n  ozon:\n    kinds:\n      search:\n        confirm: 2\n"))
	want := "r.yaml:5: sites.ozon.kinds.search.confirm: 2 is not 0 or 1"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	rs, err := detect.ParseRules("r.yaml", []byte("sites:\n  ozon:\n    kinds:\n      search:\n        confirm: 1\n"))
	if err != nil || !rs.Effective("ozon", "search").Confirms() {
		t.Errorf("confirm: 1: %v, confirms %v", err, rs.Effective("ozon", "search").Confirms())
	}
}

// TestDecide: how a second proxy's answer settles a Suspect one.
func TestDecide(t *testing.T) {
	d := detect.New(detect.Builtin())
	judge := func(body string) detect.Verdict {
		return d.Judge("wildberries", "search", &detect.Response{Status: 200, Page: 1, Body: []byte(body)})
	}
	empty := judge(`{"metadata":{"name":"перец"},"total":0,"products":[]}`)
	tests := []struct {
		name   string
		first  detect.Verdict
		second detect.Verdict
		want   detect.Decision
	}{
		{"same empty answer", empty, judge(`{"metadata":{"name":"перец"},"total":0,"products":[]}`), detect.Agreed},
		{"second has items", empty, judge(`{"total":2,"products":[{"id":1}]}`), detect.Contradicted},
		{"second empty with another total", empty, judge(`{"total":7,"products":[]}`), detect.Undecided},
		{"second blocked", empty, d.Judge("wildberries", "search", &detect.Response{Status: 403}), detect.Undecided},
		{"second no answer", empty, detect.Verdict{Kind: detect.ProxyFailure, Reason: "timeout"}, detect.Undecided},
		{"first not suspect", judge(`{"total":2,"products":[{"id":1}]}`), empty, detect.Undecided},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := detect.Decide(tc.first, tc.second); got != tc.want {
				t.Errorf("Decide(%v, %v) = %v, want %v", tc.first, tc.second, got, tc.want)
			}
		})
	}
}

// TestSuspectJSON: the verdict's JSON, as `crawlq detect` prints it, says
// suspect with the rule and what a confirmation makes of it.
func TestSuspectJSON(t *testing.T) {
	v := detect.New(detect.Builtin()).Judge("wildberries", "search", &detect.Response{Status: 200, Body: []byte(`{"total":0,"products":[]}`)})
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"suspect","reason":"empty list on page 1","rule":"empty list products on page 1","status":200,"shape":"empty products total=0","if_confirmed":"ok"}`
	if diff := cmp.Diff(want, string(raw)); diff != "" {
		t.Errorf("json (-want +got):\n%s", diff)
	}
	var back detect.Verdict
	if err := json.Unmarshal(raw, &back); err != nil || back != v {
		t.Errorf("round trip: %v, %+v != %+v", err, back, v)
	}
}

// TestEmptyPagePastTheTotalIsTheEnd: with page_size (the built-in
// Wildberries search rule: 100), an empty page N whose answer's total the
// N−1 pages before hold is the end of the list, OK and asked of nobody
// else; an empty page the total says has items, or one whose answer
// gives no total or 0 (a soft ban's shape), stays Suspect; a negative
// page_size is refused.
func TestEmptyPagePastTheTotalIsTheEnd(t *testing.T) {
	d := detect.New(detect.Builtin())
	tests := []struct {
		name string
		page int
		body string
		want detect.Kind
	}{
		{"page 3 past a total of 150", 3, `{"total":150,"products":[]}`, detect.OK},
		{"page 3 past a total of 200", 3, `{"total":200,"products":[]}`, detect.OK},
		{"page 3 of a total of 201", 3, `{"total":201,"products":[]}`, detect.Suspect},
		{"page 2 of a total of 150", 2, `{"total":150,"products":[]}`, detect.Suspect},
		{"legacy data.total", 2, `{"data":{"total":40,"products":[]}}`, detect.OK},
		{"total 0", 3, `{"total":0,"products":[]}`, detect.Suspect},
		{"no total", 3, `{"products":[]}`, detect.Suspect},
		{"page 1 with a total", 1, `{"total":150,"products":[]}`, detect.Suspect},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := d.Judge("wildberries", "search", &detect.Response{Status: 200, Page: tc.page, Body: []byte(tc.body)})
			if v.Kind != tc.want {
				t.Errorf("got %v, want %v", v, tc.want)
			}
			if tc.want == detect.OK && v.Reason != "end of list" {
				t.Errorf("got reason %q, want end of list", v.Reason)
			}
		})
	}
	_, err := detect.ParseRules("r.yaml", []byte("sites:\n  shop:\n    kinds:\n      search:\n        page_size: -1\n"))
	if want := "r.yaml:5: sites.shop.kinds.search.page_size: -1 is negative"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
