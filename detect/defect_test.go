package detect_test

import (
	"errors"
	"net/http"
	"testing"

	"crawlq/detect"
)

// TestDefectStatus: Wildberries' 403 is a request defect (issue 36.4):
// on every kind, empty or JSON, it is RequestDefect, whose error wraps
// ErrRequestDefect and no ban; with a block-page marker in its body it
// stays Blocked; another site's 403 stays Blocked; a rules file may add
// the status to a site and refuses a bad one with its place.
func TestDefectStatus(t *testing.T) {
	d := detect.New(detect.Builtin())
	for _, tc := range []struct {
		name, site, kind, body string
		want                   detect.Kind
	}{
		{"wb search, empty body", "wildberries", "search", "", detect.RequestDefect},
		{"wb card", "wildberries", "card", `{"error":"forbidden"}`, detect.RequestDefect},
		{"wb product", "wildberries", "product", "", detect.RequestDefect},
		{"wb block page", "wildberries", "search", "<html><title>Доступ ограничен</title><body>Доступ ограничен</body></html>", detect.Blocked},
		{"ozon 403", "ozon", "search", "", detect.Blocked},
		{"avito 403", "avito", "search", "", detect.Blocked},
	} {
		v := d.Judge(tc.site, tc.kind, &detect.Response{Status: http.StatusForbidden, Body: []byte(tc.body)})
		if v.Kind != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, v, tc.want)
		}
		err := v.Err(tc.site, "http://u:secret@127.0.0.1:1")
		if tc.want == detect.RequestDefect && (!errors.Is(err, detect.ErrRequestDefect) || errors.Is(err, detect.ErrBlocked) || v.Rule != "status 403") {
			t.Errorf("%s: error %v (rule %q), want one wrapping ErrRequestDefect, not a block, by status 403", tc.name, err, v.Rule)
		}
	}
	rs, err := detect.ParseRules("rules.yaml", []byte("sites:\n  ozon:\n    default:\n      defect_status: [403]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v := detect.New(detect.Builtin().Merge(rs)).Judge("ozon", "search", &detect.Response{Status: 403}); v.Kind != detect.RequestDefect {
		t.Errorf("ozon with defect_status [403]: %v, want request_defect", v)
	}
	if _, err := detect.ParseRules("rules.yaml", []byte("default:\n  defect_status: [99]\n")); err == nil {
		t.Error("defect_status [99] accepted")
	}
}
