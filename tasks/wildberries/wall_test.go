package wildberries_test

import (
	"errors"
	"net/http"
	"testing"

	"crawlq/detect"
	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
)

// TestWallIsChallenge judges the real 2026 anti-bot wall (the WBAAS page
// and the token API's 498 JSON) with the built-in rules, for every kind
// and with status 498 and 200 (the 200 variant the issue reports): always
// Challenge, the browser tier's work (I7), never Suspect, never OK. Parsed,
// neither is an empty page: the parser refuses it as unrecognized.
func TestWallIsChallenge(t *testing.T) {
	d := detect.New(detect.Builtin())
	for _, name := range []string{"plomio_wb_antibot_wall_2026-10.html", "plomio_wb_create_token_498_challenge.json"} {
		body := sample2026(t, name)
		for _, kind := range []string{"search", "category", "product"} {
			for _, status := range []int{498, http.StatusOK} {
				r := &detect.Response{Status: status, FinalURL: "https://www.wildberries.ru/", Body: body,
					Header: http.Header{"Content-Type": {"text/html"}}}
				if v := d.Judge(wildberries.Name, kind, r); v.Kind != detect.Challenge {
					t.Errorf("%s as %s with %d: verdict %s, want challenge", name, kind, status, v)
				}
			}
			page, err := site.Parse(wildberries.Name, kind, body, "", at)
			if !errors.Is(err, site.ErrUnrecognized) {
				t.Errorf("%s parsed as %s: %d items, err %v; want an unrecognized-page error", name, kind, len(page.Items), err)
			}
		}
	}
}
