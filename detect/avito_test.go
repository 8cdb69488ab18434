package detect_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"crawlq/detect"
)

// TestAvitoIPBlockPage: Avito's real "Доступ ограничен: проблема с IP"
// pages are Blocked at 429 (a ban of the IP, not a rate limit to wait
// out), 403, 200 and 206; status 439 is Blocked whatever the body; a
// plain 429 without the page stays RateLimited, with its Retry-After.
func TestAvitoIPBlockPage(t *testing.T) {
	d := detect.New(detect.Builtin())
	for _, name := range []string{"avito_block_firewall_captcha_desktop.html", "avito_block_ip_mobile_nocaptcha.html"} {
		body, err := detect.ReadSaved(filepath.Join(samplesDir(t), "avito", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []int{429, 403, 200, 206, 439} {
			for _, kind := range []string{"search", "search-api", "item"} {
				v := d.Judge("avito", kind, &detect.Response{Status: st, Body: body})
				if v.Kind != detect.Blocked || v.Status != st {
					t.Errorf("%s at %d as %s: got %v (status %d), want blocked", name, st, kind, v, v.Status)
				}
			}
		}
	}
	h := http.Header{"Retry-After": {"30"}}
	if v := d.Judge("avito", "search", &detect.Response{Status: 439}); v.Kind != detect.Blocked {
		t.Errorf("empty 439: got %v, want blocked", v)
	}
	v := d.Judge("avito", "search", &detect.Response{Status: 429, Header: h, Body: []byte("too many requests")})
	if v.Kind != detect.RateLimited || v.RetryAfter.Seconds() != 30 {
		t.Errorf("plain 429: got %v, want rate_limited after 30s", v)
	}
}

// TestAvitoPoWPageIsAChallenge: QRATOR's proof-of-work page, as captured
// answering 439 on 2026-08-27, is a Challenge (work to solve, never a
// ban) under every kind, while the IP-ban pages stay Blocked
// (TestAvitoIPBlockPage) and a 439 without it stays Blocked.
func TestAvitoPoWPageIsAChallenge(t *testing.T) {
	d := detect.New(detect.Builtin())
	body, err := detect.ReadSaved(filepath.Join(samplesDir(t), "avito", "avito_pow_challenge_439_2026-08.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"search", "category", "search-api", "item"} {
		if v := d.Judge("avito", kind, &detect.Response{Status: 439, Body: body}); v.Kind != detect.Challenge || v.Status != 439 {
			t.Errorf("the proof of work at 439 as %s: got %v (status %d), want challenge", kind, v, v.Status)
		}
	}
	if v := d.Judge("avito", "search", &detect.Response{Status: 439, Body: []byte("<html><title>Доступ ограничен</title></html>")}); v.Kind != detect.Blocked {
		t.Errorf("another 439: got %v, want blocked", v)
	}
}

// TestAvitoSearchAPIAnswers: the js/items JSON answer is OK with items or
// with the site's own empty list; a redirect stub or another JSON (the
// API's firewall answer) is not an empty result.
func TestAvitoSearchAPIAnswers(t *testing.T) {
	d := detect.New(detect.Builtin())
	tests := []struct {
		body string
		want detect.Kind
	}{
		{`{"count":1,"itemsOnPage":50,"items":[{"id":1,"title":"x","urlPath":"/a/b/x_1"}]}`, detect.OK},
		{`{"count":0,"itemsOnPage":50,"items":[]}`, detect.OK},
		{`{"redirected":true,"url":"/moskva/noutbuki"}`, detect.Blocked},
		{`{"too-many-requests":{"link":"ru.avito://1/firewall/captcha/show"}}`, detect.Blocked},
	}
	stub := []byte(`<html><head><title>Авито</title></head><body><div id="app"></div>` +
		`<script type="mime/invalid" data-mfe-state="true">{&quot;loaderData&quot;:{&quot;data&quot;:{&quot;redirected&quot;:true,&quot;url&quot;:&quot;/moskva&quot;}}}</script></body></html>`)
	if v := d.Judge("avito", "search", &detect.Response{Status: 200, Body: stub}); v.Kind != detect.OK {
		t.Errorf("HTML redirect stub: got %v, want ok (the parser refuses it; never Suspect, which a second IP would confirm as empty)", v)
	}
	raw := []byte(strings.ReplaceAll(string(stub), "&quot;", `"`))
	if v := d.Judge("avito", "search", &detect.Response{Status: 200, Body: raw}); v.Kind != detect.OK {
		t.Errorf("HTML redirect stub, state not escaped: got %v, want ok", v)
	}
	notStub := []byte(strings.ReplaceAll(string(stub), "redirected&quot;:true", "redirected&quot;:false"))
	if v := d.Judge("avito", "search", &detect.Response{Status: 200, Body: notStub}); v.Kind != detect.Suspect {
		t.Errorf("a page with redirected:false and no cards: got %v, want suspect", v)
	}
	for _, tt := range tests {
		if v := d.Judge("avito", "search-api", &detect.Response{Status: 200, Body: []byte(tt.body)}); v.Kind != tt.want {
			t.Errorf("%s: got %v, want %v", tt.body, v, tt.want)
		}
	}
}
