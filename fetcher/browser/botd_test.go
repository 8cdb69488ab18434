package browser_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"crawlq/fetcher"
	"crawlq/testbed"
)

// TestBrowserIsNotABot: FingerprintJS BotD 2.0 (vendored in the testbed,
// its monitoring call off), run on a page the browser tier visits through
// a farm proxy, finds no bot: navigator.webdriver, the User-Agent, the
// languages, plugins, window size, WebGL renderer and the automation
// properties it reads are a user's Chromium's.
func TestBrowserIsNotABot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tb, b, fp, proxy := farmBrowser(ctx, t, testbed.Config{Proxies: 1, Farm: testbed.FarmConfig{Auth: true}}, time.Minute)
	p := &pacer{}
	res, err := b.Solve(ctx, fetcher.BrowserJob{URL: tb.CDN.URL(true) + testbed.BotdPath, Proxy: proxy, UserAgent: chromiumUA,
		AcceptLanguage: fetcher.DefaultAcceptLanguage, Gate: p.gate, Done: p.done, Clearance: testbed.BotdCookie})
	if err != nil {
		t.Fatalf("botd page: %v", err)
	}
	got := tb.CDN.Botd()
	if len(got) != 1 {
		t.Fatalf("botd verdicts %q; want one", got)
	}
	var verdict struct {
		Bot     bool   `json:"bot"`
		BotKind string `json:"botKind"`
		Error   string `json:"error"`
	}
	if err := json.Unmarshal([]byte(got[0]), &verdict); err != nil || verdict.Error != "" || verdict.Bot {
		t.Errorf("botd says %s (%v); want bot false", got[0], err)
	}
	for _, e := range tb.CDN.Log.Entries() {
		if e.IP != fp.IP {
			t.Errorf("request %s from %s; want the proxy's IP %s", e.Path, e.IP, fp.IP)
		}
	}
	t.Logf("botd: %s; requests by kind %v", got[0], res.Loaded)
}
