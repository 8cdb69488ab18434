package browser_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"

	"crawlq/fetcher"
	"crawlq/fetcher/browser"
	"crawlq/testbed"
)

// errInjected is the failure a failingTarget gives.
var errInjected = errors.New("injected: connection reset")

// failingTarget is a page's target whose calls of the methods in fail
// fail without reaching Chromium, each as many times as fail says.
type failingTarget struct {
	cdp.Session
	mu   sync.Mutex
	fail map[string]int
}

func (f *failingTarget) Call(ctx context.Context, method string, params, res any) error {
	f.mu.Lock()
	n := f.fail[method]
	if n > 0 {
		f.fail[method] = n - 1
	}
	f.mu.Unlock()
	if n > 0 {
		return errInjected
	}
	return f.Session.Call(ctx, method, params, res)
}

// TestFailedInterceptionEndsTheVisit: a page request whose answer at
// the interception fails ends the visit at once with the reason
// (ErrInterception, naming the call), counted, its page closed; the
// request is refused instead, and the site sees nothing. When it cannot
// be refused either it may still be paused, and the browser is killed
// before the page closes: the site still sees nothing.
func TestFailedInterceptionEndsTheVisit(t *testing.T) {
	tests := []struct {
		name       string
		fail       map[string]int
		wantErrors int64
		wantKilled bool
	}{
		{name: "continue fails: refused instead", fail: map[string]int{"Fetch.continueRequest": 1}, wantErrors: 1},
		{name: "continue and refusal fail: browser killed", fail: map[string]int{"Fetch.continueRequest": 1, "Fetch.failRequest": 1},
			wantErrors: 2, wantKilled: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// the solve's timeout outlasts the test's context: only the
			// failure can end the visit
			tb, b, _, proxy := farmBrowser(ctx, t, testbed.Config{Proxies: 1, Challenge: true, Farm: testbed.FarmConfig{Auth: true}}, time.Hour)
			browser.WrapPages(b, func(s cdp.Session) cdp.Session { return &failingTarget{Session: s, fail: tc.fail} })
			p := &pacer{gap: tb.Rules()[testbed.SiteWildberries].MinInterval}
			_, err := b.Solve(ctx, fetcher.BrowserJob{URL: tb.SiteURL(testbed.SiteWildberries) + "/", Proxy: proxy, UserAgent: chromiumUA,
				Gate: p.gate, Done: p.done, Clearance: testbed.ChallengeCookie[testbed.SiteWildberries]})
			if !errors.Is(err, browser.ErrInterception) || !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "Fetch.continueRequest") {
				t.Fatalf("solve: %v; want ErrInterception naming Fetch.continueRequest and its cause", err)
			}
			if b.Live() != 0 || b.InterceptionErrors() != tc.wantErrors {
				t.Errorf("%d contexts open, %d interception errors; want 0 open, %d errors", b.Live(), b.InterceptionErrors(), tc.wantErrors)
			}
			if killed := b.PID() == 0; killed != tc.wantKilled {
				t.Errorf("browser killed: %v, want %v", killed, tc.wantKilled)
			}
			b.Close() // whatever the browser still had is sent by now
			if n := len(tb.Log.Entries()); n != 0 || p.sent != 1 {
				t.Errorf("the site saw %d requests, the gate granted %d; want none seen, the page's one granted", n, p.sent)
			}
		})
	}
}
