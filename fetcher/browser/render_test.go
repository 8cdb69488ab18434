package browser_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"crawlq/fetcher"
	"crawlq/testbed"
)

// TestRenderHandsBackTheRenderedPage: a page whose items are drawn by its
// script comes back from a Render visit with the items in its DOM, waited
// for by the expected selector or by a quiet network; the first bytes the
// server sent (Body) have none. A selector that never shows ends the
// visit with fetcher.ErrNotRendered.
func TestRenderHandsBackTheRenderedPage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tb, b, _, proxy := farmBrowser(ctx, t, testbed.Config{Proxies: 1, Farm: testbed.FarmConfig{Auth: true}}, 10*time.Second)
	tests := []struct {
		name    string
		waitFor []string
		wantErr error
	}{
		{name: "expected selector", waitFor: []string{"div.nothing", "div.product-card"}},
		{name: "quiet network"},
		{name: "selector never shows", waitFor: []string{"div.nothing"}, wantErr: fetcher.ErrNotRendered},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &pacer{}
			res, err := b.Solve(ctx, fetcher.BrowserJob{URL: tb.CDN.URL(false) + testbed.RenderPath, Proxy: proxy, UserAgent: chromiumUA,
				Gate: p.gate, Done: p.done, Render: true, WaitFor: tc.waitFor})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("render: %v; want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if strings.Contains(string(res.Body), "product-card") {
				t.Errorf("the server's bytes already hold the items: %s", res.Body)
			}
			dom := string(res.DOM)
			for _, name := range testbed.RenderItems {
				if !strings.Contains(dom, `<div class="product-card">`+name+`</div>`) {
					t.Errorf("rendered page lacks %q: %s", name, dom)
				}
			}
			t.Logf("requests by kind %v", res.Loaded)
		})
	}
}
