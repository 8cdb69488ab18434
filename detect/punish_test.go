package detect_test

import (
	"net/http"
	"strings"
	"testing"

	"crawlq/detect"
)

// Fixtures shaped like the testbed's answers (see testbed/*.go) and the
// real sample pages.
const (
	wbBlock     = `<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8"><title>Доступ ограничен</title></head><body><h1>Доступ ограничен</h1><p>Подозрительная активность с вашего IP.</p></body></html>`
	ozonBlock   = `<!DOCTYPE html><html><head><title>Доступ ограничен</title><link rel="stylesheet" href="https://cdn1.ozone.ru/s3/abt-complaints/static/v1/common.css"></head><body><h1>Доступ ограничен</h1><p>Инцидент: fab_nmk_20250616204607_01JX</p></body></html>`
	avitoBlock  = `<!DOCTYPE html><html><head><title>Доступ ограничен: проблема с IP</title></head><body><div class="firewall-container"><h2 class="firewall-title">Доступ ограничен: проблема с IP</h2><form class="js-firewall-form"></form></div></body></html>`
	ozonFrame   = `<!DOCTYPE html><html lang="ru"><head><title>кофе — купить на OZON</title></head><body><div id="layoutPage"><div data-widget="searchResultsV2"><div id="state-searchResultsV2-3547909-default-1" data-state="%s"></div></div></div></body></html>`
	avitoSearch = `<!DOCTYPE html><html><head><title>Авито</title></head><body><div data-marker="catalog-serp">%s</div></body></html>`
)

// TestBuiltinCatchesPunishments: every testbed punishment, on every site,
// gets the verdict the broker needs: hard evidence Blocked, a placeholder
// Suspect (to be confirmed from a second proxy).
func TestBuiltinCatchesPunishments(t *testing.T) {
	ozonItems := strings.ReplaceAll(`{"tileLayout":"LAYOUT_GRID4","items":[{"action":{"link":"/product/x-1/"}}],"page":1}`, `"`, "&quot;")
	ozonEmpty := strings.ReplaceAll(`{"items":[]}`, `"`, "&quot;")
	sites := []struct {
		site, kind, url        string
		ok, block, placeholder string
	}{
		{"wildberries", "search", "http://127.0.0.1:1/exactmatch/ru/common/v5/search?query=x&page=1",
			`{"metadata":{"name":"x"},"state":0,"version":2,"total":3,"products":[{"id":1,"name":"a"}]}`, wbBlock,
			`{"metadata":{"name":"","catalog_type":""},"state":0,"version":2,"total":0,"products":[]}`},
		{"ozon", "search", "http://127.0.0.1:2/search/?text=x",
			strings.Replace(ozonFrame, "%s", ozonItems, 1), ozonBlock, strings.Replace(ozonFrame, "%s", ozonEmpty, 1)},
		{"avito", "search", "http://127.0.0.1:3/moskva?q=x",
			strings.Replace(avitoSearch, "%s", `<div data-marker="item" data-item-id="1"><a data-marker="item-title" href="/x_1">x</a></div>`, 1), avitoBlock,
			strings.Replace(avitoSearch, "%s", "", 1)},
	}
	for _, s := range sites {
		d := detect.New(detect.Builtin())
		// Wildberries' 403 is a request defect unless its body is a block
		// page: then the page's marker is the evidence.
		block403 := "status 403"
		if s.site == "wildberries" {
			block403 = `marker "Доступ ограничен"`
		}
		cases := []struct {
			name string
			resp detect.Response
			want detect.Kind
			rule string
		}{
			{"normal page", detect.Response{Status: 200, FinalURL: s.url, Body: []byte(s.ok)}, detect.OK, ""},
			{"429 retry-after", detect.Response{Status: 429, FinalURL: s.url, Header: http.Header{"Retry-After": {"42"}}}, detect.RateLimited, "status 429"},
			{"403 block page", detect.Response{Status: 403, FinalURL: s.url, Body: []byte(s.block)}, detect.Blocked, block403},
			{"200 captcha page", detect.Response{Status: 200, FinalURL: s.url, Body: []byte(s.block)}, detect.Blocked, `marker "Доступ ограничен"`},
			{"302 to captcha, followed", detect.Response{Status: 200, FinalURL: "http://127.0.0.1:9/captcha?back=%2Fx", Body: []byte("<html>solve</html>")}, detect.Blocked, "url /captcha?back=%2Fx"},
			{"302 to captcha, not followed", detect.Response{Status: 302, FinalURL: s.url, Header: http.Header{"Location": {"/captcha?back=%2Fx"}}}, detect.Blocked, "url /captcha?back=%2Fx"},
			// A placeholder looks like "no results": ambiguous alone.
			{"placeholder", detect.Response{Status: 200, FinalURL: s.url, Body: []byte(s.placeholder)}, detect.Suspect, ""},
		}
		for _, c := range cases {
			t.Run(s.site+"/"+c.name, func(t *testing.T) {
				v := d.Judge(s.site, s.kind, &c.resp)
				if v.Kind != c.want || (c.rule != "" && v.Rule != c.rule) {
					t.Errorf("got %v, want %v %s", v, c.want, c.rule)
				}
				if c.want == detect.RateLimited && v.RetryAfter.Seconds() != 42 {
					t.Errorf("retry after %v, want 42s", v.RetryAfter)
				}
				t.Logf("%v", v)
			})
		}
	}
}

// TestWBProductEmptyListIsSuspectNotFound: an empty card list is a gone
// item or a soft ban; NotFound once a second proxy agrees.
func TestWBProductEmptyListIsSuspectNotFound(t *testing.T) {
	d := detect.New(detect.Builtin())
	v := d.Judge("wildberries", "product", &detect.Response{Status: 200, Body: []byte(`{"products":[]}`)})
	if v.Kind != detect.Suspect || v.IfConfirmed != detect.NotFound || v.Rule != "empty list products on page 1" {
		t.Errorf("got %v (if confirmed %v), want suspect, not_found if confirmed", v, v.IfConfirmed)
	}
}
