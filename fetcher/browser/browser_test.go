package browser_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"crawlq/fetcher"
	"crawlq/fetcher/browser"
	"crawlq/testbed"
)

// chromiumUA is the User-Agent of Debian's chromium 156 (the browser's own
// TLS fingerprint, which the fingerprint check compares it with).
const chromiumUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"

// pacer is a minimal session gate, paced as a session is: a request is
// let through at least gap after the previous one's answer (so at least
// gap after its start at the site), none while one is unanswered.
type pacer struct {
	mu       sync.Mutex
	gap      time.Duration
	last     time.Time // the last answer
	inflight bool
	sent     int
	grants   []time.Time
}

func (p *pacer) gate(ctx context.Context) error {
	for {
		p.mu.Lock()
		wait := time.Until(p.last.Add(p.gap))
		if p.inflight {
			wait = 10 * time.Millisecond
		} else if wait <= 0 {
			p.inflight = true
			p.sent++
			p.grants = append(p.grants, time.Now())
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// done notes an answer: the next request waits gap from now.
func (p *pacer) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight = false
	p.last = time.Now()
}

// TestSolveThroughTheProxy: the browser opens a challenged Ozon page
// through an authenticated farm proxy over HTTPS. The page, like Ozon's
// real one, is only an external script on the CDN host (CDNHost, which
// only the proxy resolves) and its stylesheet: the browser loads both
// through the proxy, runs the script, whose XHR posts the proof of work
// to the site for the clearance cookie, and reloads. The site saw the
// challenge and the solve from the proxy's IP and no misuse, the CDN saw
// the script and stylesheet from the proxy's IP, and every request to
// the site was paced by the gate (I1/I2 hold in the site's log); the
// CDN's were not gated. Requests per visit by kind are reported.
func TestSolveThroughTheProxy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tb, b, fp, proxy := farmBrowser(ctx, t, testbed.Config{Proxies: 2, Challenge: true, Fingerprint: true, Farm: testbed.FarmConfig{Auth: true}}, time.Minute)
	p := &pacer{gap: tb.Rules()[testbed.SiteOzon].MinInterval + 50*time.Millisecond}
	page := tb.HTTPSSiteURL(testbed.SiteOzon) + testbed.OzonSearchPath + "?text=" + url.QueryEscape(strings.Fields(tb.Catalog.Products(testbed.SiteOzon)[0].Title)[0])
	res, err := b.Solve(ctx, fetcher.BrowserJob{URL: page, Proxy: proxy, UserAgent: chromiumUA, AcceptLanguage: fetcher.DefaultAcceptLanguage,
		Gate: p.gate, Done: p.done, Clearance: testbed.ChallengeCookie[testbed.SiteOzon],
		Cleared: func(status int, body []byte) bool { return !strings.Contains(string(body), "fab_chlg_") }})
	if err != nil {
		t.Fatalf("solve: %v (requests %d, elsewhere %d, loaded %v, skipped %v)", err, res.Requests, res.Elsewhere, res.Loaded, res.Skipped)
	}
	var clearance bool
	for _, c := range res.Cookies {
		clearance = clearance || c.Name == testbed.ChallengeCookie[testbed.SiteOzon]
	}
	if !clearance || res.Status != 200 || res.Requests != p.sent {
		t.Errorf("clearance %v, status %d, %d requests to the site (gate let %d through); want the clearance cookie, 200, each paced",
			clearance, res.Status, res.Requests, p.sent)
	}
	for kind, want := range map[string]int{"document": 2, "xhr": 1, "script": 1, "stylesheet": 1} {
		if res.Loaded[kind] != want {
			t.Errorf("loaded %v: want %d %s", res.Loaded, want, kind)
		}
	}
	got := tb.Log.Challenges()
	if got.Served != 1 || got.Solved != 1 || got.Misused != 0 {
		t.Errorf("site's challenges %+v; want 1 served, 1 solved, 0 misused", got)
	}
	for _, e := range tb.Log.Entries() {
		if e.IP != fp.IP {
			t.Errorf("request %s from %s; want the proxy's IP %s", e.Path, e.IP, fp.IP)
		}
	}
	cdn := tb.CDN.Log.Entries()
	for _, e := range cdn {
		if e.IP != fp.IP || e.Status != 200 {
			t.Errorf("cdn request %s from %s answered %d; want the proxy's IP %s, 200", e.Path, e.IP, e.Status, fp.IP)
		}
	}
	if len(cdn) != 2 || res.Elsewhere != 2 {
		t.Errorf("the CDN served %d requests, the browser let %d out to it; want 2 (script, stylesheet)", len(cdn), res.Elsewhere)
	}
	if rep := tb.Check(); !rep.OK() {
		t.Errorf("politeness: %+v", rep)
	}
	if b.Live() != 0 || b.RSS() <= 0 {
		t.Errorf("live contexts %d (want 0), browser RSS %d (want > 0)", b.Live(), b.RSS())
	}
	t.Logf("solved in %v: %+v; requests per visit by kind %v (site %d, cdn %d, skipped %v); browser RSS %d MB",
		res.Took, got, res.Loaded, res.Requests, res.Elsewhere, res.Skipped, b.RSS()>>20)
}

// TestHungPageClosedAndDeadBrowserRestarted: a page that never clears is
// closed at the timeout (fetcher.ErrNotCleared, no context left open); a browser
// killed from outside is started again by the next solve, which clears
// its challenge.
func TestHungPageClosedAndDeadBrowserRestarted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tb, b, _, proxy := farmBrowser(ctx, t, testbed.Config{Proxies: 1, Challenge: true, Farm: testbed.FarmConfig{Auth: true}}, 3*time.Second)
	p := &pacer{gap: tb.Rules()[testbed.SiteWildberries].MinInterval + 50*time.Millisecond}
	job := fetcher.BrowserJob{URL: tb.SiteURL(testbed.SiteWildberries) + "/", Proxy: proxy, UserAgent: chromiumUA, Gate: p.gate, Done: p.done,
		Clearance: "never-set"}
	if _, err := b.Solve(ctx, job); !errors.Is(err, fetcher.ErrNotCleared) || b.Live() != 0 {
		t.Fatalf("hung page: %v, %d contexts open; want fetcher.ErrNotCleared, none", err, b.Live())
	}
	pid := b.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	job.Clearance = testbed.ChallengeCookie[testbed.SiteWildberries]
	job.Cleared = func(status int, body []byte) bool { return !strings.Contains(string(body), `id="s-key"`) }
	res, err := b.Solve(ctx, job)
	if err != nil || b.Starts() != 2 || b.PID() == pid {
		t.Fatalf("after the kill: %v (result %+v), %d starts, pid %d (was %d); want a new browser that clears it", err, res, b.Starts(), b.PID(), pid)
	}
	if rep := tb.Check(); !rep.OK() {
		t.Errorf("politeness: %+v", rep)
	}
}

// farmBrowser starts a testbed of cfg and a browser whose solves time out
// after timeout (trusting the testbed's CA), both stopped when the test
// ends, and gives the farm's first proxy with its URL.
func farmBrowser(ctx context.Context, t *testing.T, cfg testbed.Config, timeout time.Duration) (*testbed.Testbed, *browser.Browser, testbed.FarmProxy, *url.URL) {
	t.Helper()
	tb, err := testbed.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	b, err := browser.New(browser.Config{CAFiles: []string{tb.CAFile}, Timeout: timeout})
	if err != nil {
		t.Fatalf("chromium is needed (.ci/run installs it): %v", err)
	}
	t.Cleanup(b.Close)
	fp, err := tb.Farm.Proxy(0)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := url.Parse(fp.URL)
	if err != nil {
		t.Fatal(err)
	}
	return tb, b, fp, proxy
}

// waitGone waits (bounded) until process pid has died and been reaped.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("browser %d still there 10s after SIGKILL", pid)
}

// TestCookieSufficesSkipsTheReload: with CookieSuffices the solve ends
// once the challenge's script has got the clearance cookie: two requests
// reach the site (the challenge and the script's /abt/result), the page
// the script reloads to is answered in the browser, and the cookie is valid: the site accepts it
// from the same IP and User-Agent (its first use counts as the solve).
func TestCookieSufficesSkipsTheReload(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// LaxHeaders: the check by hand below sends only the cookie and the
	// User-Agent, not a browser's whole header set.
	tb, b, _, proxy := farmBrowser(ctx, t, testbed.Config{Proxies: 1, Challenge: true, LaxHeaders: true, Farm: testbed.FarmConfig{Auth: true}}, time.Minute)
	p := &pacer{gap: tb.Rules()[testbed.SiteOzon].MinInterval + 50*time.Millisecond}
	page := tb.SiteURL(testbed.SiteOzon) + testbed.OzonSearchPath + "?text=x"
	name := testbed.ChallengeCookie[testbed.SiteOzon]
	res, err := b.Solve(ctx, fetcher.BrowserJob{URL: page, Proxy: proxy, UserAgent: chromiumUA, Gate: p.gate, Done: p.done,
		Clearance: name, CookieSuffices: true,
		Cleared: func(status int, body []byte) bool { return !strings.Contains(string(body), "fab_chlg_") }})
	if err != nil {
		t.Fatalf("solve: %v", err)
	}
	var cookie *http.Cookie
	for _, c := range res.Cookies {
		if c.Name == name {
			cookie = c
		}
	}
	if cookie == nil || res.Requests != 2 || p.sent != 2 || res.Loaded["document"] != 1 {
		t.Fatalf("cookie %v, %d requests to the site, loaded %v (gate let %d through): want the clearance cookie after the challenge and its /abt/result",
			cookie, res.Requests, res.Loaded, p.sent)
	}
	if got := tb.Log.Challenges(); got.Served != 1 || got.Solved != 0 {
		t.Fatalf("site's challenges %+v: want the challenge served, its reload never sent", got)
	}
	// the cookie alone clears: the page over plain HTTP, same IP and UA
	tr := &http.Transport{Proxy: http.ProxyURL(proxy)}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, page, nil)
	req.Header.Set("User-Agent", chromiumUA)
	req.AddCookie(&http.Cookie{Name: name, Value: cookie.Value})
	if err := p.gate(ctx); err != nil { // paced as the session would be
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	p.done()
	if got := tb.Log.Challenges(); resp.StatusCode != http.StatusOK || got.Solved != 1 || got.Misused != 0 {
		t.Errorf("page with the cookie: status %d, site's challenges %+v; want 200, the solve counted, no misuse", resp.StatusCode, got)
	}
}
