package detect_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/detect"
)

// proxyErr is a fetcher-like error that knows whether the proxy failed.
type proxyErr struct {
	proxy, timeout bool
}

func (e proxyErr) Error() string    { return "dial proxy http://u:secret@127.0.0.1:1: refused" }
func (e proxyErr) ProxyFault() bool { return e.proxy }
func (e proxyErr) Timeout() bool    { return e.timeout }

// netTimeout is a net.Error timeout, as a target read timeout gives.
type netTimeout struct{}

func (netTimeout) Error() string   { return "read tcp 127.0.0.1:9->127.0.0.1:80: i/o timeout" }
func (netTimeout) Timeout() bool   { return true }
func (netTimeout) Temporary() bool { return true }

var _ net.Error = netTimeout{}

// page is a small HTML page holding inner in its body.
func page(title, inner string) []byte {
	return []byte("<html><head><title>" + title + "</title></head><body>" + inner + "</body></html>")
}

// testRules are one site, "shop", with every rule type set.
func testRules() detect.Rules {
	return detect.Rules{Sites: map[string]detect.Site{"shop": {
		Default: detect.Rule{
			BlockStatus: []int{403, 439}, RateLimitStatus: []int{429},
			URLPatterns: []string{`(?i)/captcha`}, Markers: []string{"Доступ ограничен", "fab_chlg_"},
			TitleMarkers: []string{"Captcha"}, MinSize: 30,
		},
		Kinds: map[string]detect.Rule{
			"search":  {Selectors: []string{`div[data-marker="item"]`}, JSONPaths: []string{"products", "data.products"}, EmptyListBlocked: true},
			"product": {JSONPaths: []string{"products[].id"}, Selectors: []string{"h1.title"}},
		},
	}}}
}

func TestJudge(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	item := page("Shop", `<div data-marker="item">a</div>`)
	hdr := func(k, v string) http.Header { return http.Header{k: []string{v}} }
	tests := []struct {
		name string
		kind string
		resp detect.Response
		want detect.Verdict
	}{
		{"ok html", "search", detect.Response{Status: 200, Body: item},
			detect.Verdict{Kind: detect.OK, Status: 200}},
		{"status 403", "search", detect.Response{Status: 403, Body: item},
			detect.Verdict{Kind: detect.Blocked, Reason: "blocked status", Rule: "status 403", Status: 403}},
		{"status 439 site-specific", "search", detect.Response{Status: 439},
			detect.Verdict{Kind: detect.Blocked, Reason: "blocked status", Rule: "status 439", Status: 439}},
		{"429 retry-after seconds", "search", detect.Response{Status: 429, Header: hdr("Retry-After", "120")},
			detect.Verdict{Kind: detect.RateLimited, Reason: "rate limited", Rule: "status 429", Status: 429, RetryAfter: 2 * time.Minute}},
		{"429 retry-after http date", "search", detect.Response{Status: 429, Header: hdr("Retry-After", now.Add(90*time.Second).Format(http.TimeFormat))},
			detect.Verdict{Kind: detect.RateLimited, Reason: "rate limited", Rule: "status 429", Status: 429, RetryAfter: 90 * time.Second}},
		{"429 retry-after garbage", "search", detect.Response{Status: 429, Header: hdr("Retry-After", "soon")},
			detect.Verdict{Kind: detect.RateLimited, Reason: "rate limited", Rule: "status 429", Status: 429}},
		{"404 not found", "product", detect.Response{Status: 404},
			detect.Verdict{Kind: detect.NotFound, Reason: "page gone", Rule: "status 404", Status: 404}},
		{"410 gone", "product", detect.Response{Status: 410},
			detect.Verdict{Kind: detect.NotFound, Reason: "page gone", Rule: "status 410", Status: 410}},
		{"500 server error", "product", detect.Response{Status: 500},
			detect.Verdict{Kind: detect.ServerError, Reason: "server error", Rule: "status 500", Status: 500}},
		{"400 unexpected", "product", detect.Response{Status: 400},
			detect.Verdict{Kind: detect.ServerError, Reason: "unexpected status", Rule: "status 400", Status: 400}},
		{"final url captcha", "search", detect.Response{Status: 200, FinalURL: "https://shop.test/captcha?back=/x", Body: item},
			detect.Verdict{Kind: detect.Blocked, Reason: "captcha or login redirect", Rule: "url /captcha?back=/x", Status: 200}},
		{"302 location captcha", "search", detect.Response{Status: 302, Header: hdr("Location", "/Captcha/")},
			detect.Verdict{Kind: detect.Blocked, Reason: "captcha or login redirect", Rule: "url /Captcha/", Status: 302}},
		{"302 elsewhere", "search", detect.Response{Status: 302, Header: hdr("Location", "/next")},
			detect.Verdict{Kind: detect.ServerError, Reason: "unexpected status", Rule: "status 302", Status: 302}},
		{"body marker", "search", detect.Response{Status: 200, Body: page("Shop", `<h1>Доступ ограничен</h1><div data-marker="item">`)},
			detect.Verdict{Kind: detect.Blocked, Reason: "block page", Rule: `marker "Доступ ограничен"`, Status: 200}},
		{"json marker", "search", detect.Response{Status: 403, Body: []byte(`{"incidentId":"fab_chlg_1"}`)},
			detect.Verdict{Kind: detect.Blocked, Reason: "blocked status", Rule: "status 403", Status: 403}},
		{"json marker on 200", "search", detect.Response{Status: 200, Body: []byte(`{"incidentId":"fab_chlg_1","challengeURL":"/x"}`)},
			detect.Verdict{Kind: detect.Blocked, Reason: "block page", Rule: `marker "fab_chlg_"`, Status: 200}},
		{"title marker any case", "search", detect.Response{Status: 200, Body: page("Please solve the CAPTCHA", `<div data-marker="item">`)},
			detect.Verdict{Kind: detect.Blocked, Reason: "block page", Rule: `title marker "captcha"`, Status: 200}},
		{"captcha outside title is fine", "search", detect.Response{Status: 200, Body: page("Shop", `<script src="captcha.js"></script><div data-marker="item">`)},
			detect.Verdict{Kind: detect.OK, Status: 200}},
		{"missing selector", "search", detect.Response{Status: 200, Body: page("Shop", `<div class="nothing">here at all</div>`)},
			detect.Verdict{Kind: detect.Suspect, Reason: "expected content missing", Rule: `missing selector div[data-marker="item"]`, Status: 200,
				Shape: `missing selector div[data-marker="item"]`, IfConfirmed: detect.OK}},
		{"missing selector on a stub is blocked", "search", detect.Response{Status: 200, Body: []byte(`<html><body>` + strings.Repeat("x", 40) + `</body></html>`)},
			detect.Verdict{Kind: detect.Blocked, Reason: "expected content missing", Rule: `missing selector div[data-marker="item"]`, Status: 200}},
		{"min size", "search", detect.Response{Status: 200, Body: []byte("<html>hi</html>")},
			detect.Verdict{Kind: detect.Blocked, Reason: "body too small", Rule: "size 15 < min 30", Status: 200}},
		{"json path present", "search", detect.Response{Status: 200, Body: []byte(`{"data":{"products":[{"id":1}]},"x":"y"}`)},
			detect.Verdict{Kind: detect.OK, Status: 200}},
		{"json path missing", "search", detect.Response{Status: 200, Body: []byte(`{"data":{"items":[{"id":1}]},"x":"y"}`)},
			detect.Verdict{Kind: detect.Blocked, Reason: "expected content missing", Rule: "missing json path products | data.products", Status: 200}},
		{"json array path", "product", detect.Response{Status: 200, Body: []byte(`{"products":[{"name":"a"},{"id":7}]}    `)},
			detect.Verdict{Kind: detect.OK, Status: 200}},
		{"json array path missing", "item", detect.Response{Status: 200, Body: []byte(`{"products":[{"name":"a"},{"name":"b"}]}`)},
			detect.Verdict{Kind: detect.Blocked, Reason: "expected content missing", Rule: "missing json path products[].id", Status: 200}},
		{"empty list page 1", "search", detect.Response{Status: 200, FinalURL: "https://shop.test/search?q=x", Body: []byte(`{"products": [ ], "total": 0, "query": "coffee"}`)},
			detect.Verdict{Kind: detect.Suspect, Reason: "empty list on page 1", Rule: "empty list products on page 1", Status: 200,
				Shape: "empty products total=0", IfConfirmed: detect.OK}},
		// a later page was announced by the one before: empty, it is the
		// list's end or a soft ban
		{"empty list page 3 is suspect", "search", detect.Response{Status: 200, FinalURL: "https://shop.test/search?q=x&page=3", Body: []byte(`{"products": [ ], "total": 0, "query": "coffee"}`)},
			detect.Verdict{Kind: detect.Suspect, Reason: "empty list", Rule: "empty list products on page 3", Status: 200,
				Shape: "empty products total=0", IfConfirmed: detect.OK}},
		{"empty list page from response", "search", detect.Response{Status: 200, Page: 2, Body: []byte(`{"products": [ ], "total": 0, "query": "coffee"}`)},
			detect.Verdict{Kind: detect.Suspect, Reason: "empty list", Rule: "empty list products on page 2", Status: 200,
				Shape: "empty products total=0", IfConfirmed: detect.OK}},
		{"html where json expected", "product", detect.Response{Status: 200, Body: page("Shop", "<p>no title here, only text</p>")},
			detect.Verdict{Kind: detect.Suspect, Reason: "expected content missing", Rule: "missing selector h1.title", Status: 200,
				Shape: "missing selector h1.title", IfConfirmed: detect.OK}},
		{"truncated body not judged missing", "search", detect.Response{Status: 200, Truncated: true, Body: page("Shop", "<div>cut here, the items come later...")},
			detect.Verdict{Kind: detect.OK, Reason: "truncated body", Status: 200}},
		{"proxy fault", "search", detect.Response{Err: fmt.Errorf("fetch: %w", proxyErr{proxy: true})},
			detect.Verdict{Kind: detect.ProxyFailure, Reason: "proxy fault", Rule: "error: fetch: dial proxy http://u:***@127.0.0.1:1: refused"}},
		{"proxy timeout", "search", detect.Response{Err: proxyErr{proxy: true, timeout: true}},
			detect.Verdict{Kind: detect.ProxyFailure, Reason: "proxy timeout", Rule: "error: dial proxy http://u:***@127.0.0.1:1: refused"}},
		{"target timeout is not a ban", "search", detect.Response{Err: fmt.Errorf("read body: %w", netTimeout{})},
			detect.Verdict{Kind: detect.ProxyFailure, Reason: "timeout", Rule: "error: read body: read tcp 127.0.0.1:9->127.0.0.1:80: i/o timeout"}},
		{"context deadline", "search", detect.Response{Err: context.DeadlineExceeded},
			detect.Verdict{Kind: detect.ProxyFailure, Reason: "timeout", Rule: "error: context deadline exceeded"}},
		{"other transport error", "search", detect.Response{Err: errors.New("tls: handshake failure")},
			detect.Verdict{Kind: detect.ProxyFailure, Reason: "transport error", Rule: "error: tls: handshake failure"}},
	}
	d := detect.New(testRules(), detect.WithClock(func() time.Time { return now }))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := d.Judge("shop", tt.kind, &tt.resp)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Judge (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJudgeUnknownSiteUsesDefault(t *testing.T) {
	d := detect.New(detect.Builtin())
	got := d.Judge("example.org", "page", &detect.Response{Status: 200, Body: page("Just a moment...", "")})
	want := detect.Verdict{Kind: detect.Blocked, Reason: "block page", Rule: `title marker "just a moment"`, Status: 200}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Judge (-want +got):\n%s", diff)
	}
	ok := d.Judge("example.org", "page", &detect.Response{Status: 200, Body: page("News", "<p>hello</p>")})
	if ok.Kind != detect.OK {
		t.Errorf("plain page of an unknown site: got %v, want ok", ok)
	}
}

func TestGenericSiteSelectors(t *testing.T) {
	rules := detect.Builtin().With("example.org", "page", detect.Rule{Selectors: []string{"article.post"}})
	d := detect.New(rules)
	got := d.Judge("example.org", "page", &detect.Response{Status: 200, Body: page("News", "<p>no post</p>")})
	if got.Kind != detect.Suspect || got.Rule != "missing selector article.post" {
		t.Errorf("missing generic selector on a well-formed page: got %v, want suspect", got)
	}
	got = d.Judge("example.org", "page", &detect.Response{Status: 403})
	if got.Kind != detect.Blocked || got.Rule != "status 403" {
		t.Errorf("generic site keeps default statuses: got %v", got)
	}
	got = d.Judge("example.org", "page", &detect.Response{Status: 200, Body: page("News", `<article class="post">x</article>`)})
	if got.Kind != detect.OK {
		t.Errorf("generic page with selector: got %v", got)
	}
}

// TestSizeDropBaseline feeds OK pages, then a shrunken placeholder that
// still has the expected selector.
func TestSizeDropBaseline(t *testing.T) {
	rules := testRules()
	s := rules.Sites["shop"]
	s.Default.DropFraction, s.Default.BaselineSamples = 0.25, 3
	rules.Sites["shop"] = s
	d := detect.New(rules)
	full := page("Shop", strings.Repeat(`<div data-marker="item">product</div>`, 100))
	small := page("Shop", `<div data-marker="item">placeholder</div>`)
	judge := func(b []byte) detect.Verdict {
		return d.Judge("shop", "search", &detect.Response{Status: 200, Body: b})
	}

	if v := judge(small); v.Kind != detect.OK {
		t.Fatalf("small page before any baseline: got %v, want ok", v)
	}
	for range 3 {
		if v := judge(full); v.Kind != detect.OK {
			t.Fatalf("full page: got %v", v)
		}
	}
	v := judge(small)
	if v.Kind != detect.Suspect || v.Reason != "placeholder" || !strings.HasPrefix(v.Rule, "size drop 0.") {
		t.Fatalf("placeholder after baseline: got %v, want suspect", v)
	}
	if v := d.Judge("shop", "product", &detect.Response{Status: 200, Body: page("Shop", `<h1 class="title">x</h1> padding padding`)}); v.Kind != detect.OK {
		t.Errorf("another kind has its own baseline: got %v", v)
	}
}

// TestJudgeConcurrent judges from many goroutines; run with -race.
func TestJudgeConcurrent(t *testing.T) {
	d := detect.New(detect.Builtin())
	body := page("Shop", `<article class="product-card" data-nm-id="1">x</article>`)
	var wg sync.WaitGroup
	errs := make(chan detect.Verdict, 8*50)
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if v := d.Judge("wildberries", "search", &detect.Response{Status: 200, Body: body}); v.Kind != detect.OK {
					errs <- v
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for v := range errs {
		t.Errorf("concurrent judge: got %v", v)
	}
}

func TestVerdictErr(t *testing.T) {
	v := detect.Verdict{Kind: detect.Blocked, Reason: "block page", Rule: `marker "x"`}
	err := v.Err("ozon", "http://bob:hunter2@10.0.0.1:8080")
	var be *detect.BlockedError
	if !errors.As(err, &be) || !errors.Is(err, detect.ErrBlocked) {
		t.Fatalf("Err: %v is not a *BlockedError wrapping ErrBlocked", err)
	}
	want := &detect.BlockedError{Site: "ozon", Proxy: "http://bob:***@10.0.0.1:8080", Reason: "block page", Rule: `marker "x"`}
	if diff := cmp.Diff(want, be); diff != "" {
		t.Errorf("BlockedError (-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error leaks the password: %v", err)
	}
	var rl *detect.RateLimitedError
	if err := (detect.Verdict{Kind: detect.RateLimited, RetryAfter: time.Second}).Err("wb", "p"); !errors.As(err, &rl) || rl.RetryAfter != time.Second {
		t.Errorf("rate limited Err: %v", err)
	}
	if err := (detect.Verdict{Kind: detect.OK}).Err("wb", "p"); err != nil {
		t.Errorf("ok Err: %v", err)
	}
	for kind, sentinel := range map[detect.Kind]error{detect.ProxyFailure: detect.ErrProxyFailure, detect.NotFound: detect.ErrNotFound, detect.ServerError: detect.ErrServerError} {
		if err := (detect.Verdict{Kind: kind}).Err("wb", "p"); !errors.Is(err, sentinel) {
			t.Errorf("%v Err: %v does not wrap %v", kind, err, sentinel)
		}
	}
}

func TestVerdictJSON(t *testing.T) {
	v := detect.Verdict{Kind: detect.RateLimited, Reason: "rate limited", Rule: "status 429", Status: 429, RetryAfter: 30 * time.Second}
	b, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"rate_limited","reason":"rate limited","rule":"status 429","status":429,"retry_after":"30s"}`
	if string(b) != want {
		t.Errorf("json: got %s, want %s", b, want)
	}
	var back detect.Verdict
	if err := back.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestJudgeDocument(t *testing.T) {
	d := detect.New(testRules())
	v, doc := d.JudgeDocument("shop", "search", &detect.Response{Status: 200, Body: page("Shop", `<div data-marker="item">first</div>`)})
	if v.Kind != detect.OK || doc == nil {
		t.Fatalf("html page: got %v, doc %v", v, doc)
	}
	if got := doc.Find(`div[data-marker="item"]`).Text(); got != "first" {
		t.Errorf("document text = %q, want first", got)
	}
	if _, doc := d.JudgeDocument("shop", "search", &detect.Response{Status: 200, Body: []byte(`{"products":[{"id":1}],"padding":"xxxxxxxx"}`)}); doc != nil {
		t.Error("json page: got a document, want nil")
	}
}

// TestShortListingIsNotAPlaceholder: with the built-in rules, a last
// search page with few results after many full ones is OK (a ban here
// would quarantine a healthy proxy); product pages keep the size drop.
func TestShortListingIsNotAPlaceholder(t *testing.T) {
	d := detect.New(detect.Builtin())
	tile := `<div data-marker="item" data-item-id="1"><a data-marker="item-title" title="x">x</a></div>`
	for range 6 {
		if v := d.Judge("avito", "search", &detect.Response{Status: 200, Body: page("Avito", strings.Repeat(tile, 50))}); v.Kind != detect.OK {
			t.Fatalf("full listing: %v", v)
		}
	}
	if v := d.Judge("avito", "search", &detect.Response{Status: 200, Body: page("Avito", tile)}); v.Kind != detect.OK {
		t.Fatalf("a one-result last page was judged %v, want ok", v)
	}
	item := `<h1 data-marker="item-view/title-info">x</h1>` + strings.Repeat(`<p>description</p>`, 400)
	for range 6 {
		if v := d.Judge("avito", "item", &detect.Response{Status: 200, Body: page("Avito", item)}); v.Kind != detect.OK {
			t.Fatalf("item page: %v", v)
		}
	}
	if v := d.Judge("avito", "item", &detect.Response{Status: 200, Body: page("Avito", `<h1 data-marker="item-view/title-info">x</h1>`)}); v.Kind != detect.Suspect {
		t.Fatalf("a shrunken item page was judged %v, want suspect", v)
	}
}
