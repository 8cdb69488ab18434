package testbed

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	politeIP = "127.0.0.21"
	rudeIP   = "127.0.0.22"
)

// looksPunished tells whether a is punishment p on an Ozon search page.
func looksPunished(p Punishment, a answer) bool {
	switch p {
	case TooMany429:
		return a.status == http.StatusTooManyRequests && a.header.Get("Retry-After") != ""
	case Forbidden403:
		return a.status == http.StatusForbidden && bytes.Contains(a.body, []byte("<title>Доступ ограничен</title>"))
	case CaptchaPage200:
		return a.status == http.StatusOK && bytes.Contains(a.body, []byte("Доступ ограничен")) && !bytes.Contains(a.body, []byte("skuId"))
	case CaptchaRedirect:
		return a.status == http.StatusFound && strings.HasPrefix(a.header.Get("Location"), CaptchaPath+"?")
	case Placeholder:
		return a.status == http.StatusOK && bytes.Contains(a.body, []byte(`{&#34;items&#34;:[]}`))
	case BlockPage429, BlockPage206, Status439:
		want := map[Punishment]int{BlockPage429: http.StatusTooManyRequests, BlockPage206: http.StatusPartialContent, Status439: 439}[p]
		return a.status == want && a.header.Get("Retry-After") == "" && bytes.Contains(a.body, []byte("Доступ ограничен"))
	}
	return false
}

func servedProducts(a answer) bool {
	return a.status == http.StatusOK && bytes.Contains(a.body, []byte("skuId"))
}

func TestRateRulePunishes(t *testing.T) {
	const gap, banFor = time.Second, time.Minute
	for _, p := range Punishments {
		t.Run(string(p), func(t *testing.T) {
			clock := newFakeClock()
			tb := startTB(t, Config{Now: clock.Now, Sites: map[string]SiteRules{
				SiteOzon: {MinInterval: gap, Punishment: p, BanFor: banFor}}})
			page := tb.SiteURL(SiteOzon) + OzonSearchPath + "?text=кофе"
			polite, rude := clientFrom(t, politeIP, true), clientFrom(t, rudeIP, true)
			if a := get(t, rude, page); !servedProducts(a) {
				t.Fatalf("first request: status %d", a.status)
			}
			clock.Advance(gap / 2)
			if a := get(t, rude, page); !looksPunished(p, a) {
				t.Fatalf("too-fast request: status %d, not punished as %s:\n%.300s", a.status, p, a.body)
			}
			for range 3 { // the polite IP, spaced by the min interval, meanwhile
				if a := get(t, polite, page); !servedProducts(a) {
					t.Fatalf("polite IP punished: status %d", a.status)
				}
				clock.Advance(gap)
			}
			clock.Advance(banFor - 4*gap)
			if a := get(t, rude, page); !looksPunished(p, a) {
				t.Fatalf("just before the ban ends: status %d, want still punished", a.status)
			}
			clock.Advance(2 * gap)
			if a := get(t, rude, page); !servedProducts(a) {
				t.Fatalf("after the ban: status %d, want served", a.status)
			}
			r := tb.Check()
			if diff := cmp.Diff(map[string]int{rudeIP: 1}, r.BansPerIP); diff != "" {
				t.Errorf("bans per IP (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStrictBanLastsTheRun(t *testing.T) {
	clock := newFakeClock()
	tb := startTB(t, Config{Now: clock.Now, Strict: true, Sites: map[string]SiteRules{
		SiteWildberries: {MinInterval: time.Second, BanFor: time.Minute}}})
	url := tb.SiteURL(SiteWildberries) + WBSearchPath + "?query=чай"
	c := clientFrom(t, rudeIP, true)
	get(t, c, url)
	if a := get(t, c, url); a.status != http.StatusTooManyRequests {
		t.Fatalf("too fast: status %d, want 429", a.status)
	}
	clock.Advance(time.Hour)
	if a := get(t, c, url); a.status != http.StatusTooManyRequests {
		t.Fatalf("an hour later in strict mode: status %d, want still 429", a.status)
	}
	if !tb.Banned(SiteWildberries, rudeIP) {
		t.Error("Banned() = false")
	}
}

func TestSessionCookieRule(t *testing.T) {
	clock := newFakeClock()
	tb := startTB(t, Config{Now: clock.Now, Sites: map[string]SiteRules{
		SiteAvito: {SessionCheck: true, Punishment: Forbidden403}}})
	page := tb.SiteURL(SiteAvito) + "/moskva?q=велосипед"
	owner := clientFrom(t, politeIP, true)
	first := get(t, owner, page)
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: first.header}).Cookies() {
		if c.Name == "u" {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatal("first visit set no session cookie")
	}
	tests := []struct {
		name   string
		ip     string
		cookie bool
		want   Verdict
	}{
		{name: "owner keeps its session", ip: politeIP, cookie: true, want: VerdictOK},
		{name: "another IP without the cookie", ip: rudeIP, want: VerdictOK},
		{name: "another IP with the owner's cookie", ip: rudeIP, cookie: true, want: VerdictSessionMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, page, nil)
			if tt.cookie {
				req.AddCookie(&http.Cookie{Name: cookie.Name, Value: cookie.Value})
			}
			resp, err := clientFrom(t, tt.ip, false).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			e := tb.Log.Entries()
			last := e[len(e)-1]
			if last.Verdict != tt.want {
				t.Errorf("verdict %s, want %s", last.Verdict, tt.want)
			}
			if blocked := resp.StatusCode == http.StatusForbidden; blocked != tt.want.Blocked() {
				t.Errorf("status %d for verdict %s", resp.StatusCode, tt.want)
			}
		})
	}
}

func TestCrossSiteRule(t *testing.T) {
	clock := newFakeClock()
	const window = 10 * time.Second
	tb := startTB(t, Config{Now: clock.Now, Sites: map[string]SiteRules{
		SiteWildberries: {CrossSite: window}, SiteOzon: {CrossSite: window}}})
	wb := tb.SiteURL(SiteWildberries) + WBSearchPath + "?query=чай"
	oz := tb.SiteURL(SiteOzon) + OzonSearchPath + "?text=чай"
	careful, hopper := clientFrom(t, politeIP, false), clientFrom(t, rudeIP, false)
	get(t, careful, wb)
	get(t, hopper, wb)
	clock.Advance(window / 2)
	if a := get(t, hopper, oz); a.status != http.StatusTooManyRequests {
		t.Fatalf("second site within the window: status %d, want 429", a.status)
	}
	if !tb.Banned(SiteWildberries, rudeIP) || !tb.Banned(SiteOzon, rudeIP) {
		t.Error("hopper not banned on both sites")
	}
	clock.Advance(window)
	if a := get(t, careful, oz); a.status != http.StatusOK {
		t.Fatalf("second site after the window: status %d, want 200", a.status)
	}
}

func TestCaptchaRedirectTarget(t *testing.T) {
	clock := newFakeClock()
	tb := startTB(t, Config{Now: clock.Now, Sites: map[string]SiteRules{
		SiteAvito: {MinInterval: time.Second, Punishment: CaptchaRedirect}}})
	c := clientFrom(t, rudeIP, false)
	page := tb.SiteURL(SiteAvito) + "/moskva?q=чай"
	get(t, c, page)
	a := get(t, c, page)
	if a.status != http.StatusFound {
		t.Fatalf("status %d, want 302", a.status)
	}
	cap := get(t, c, tb.SiteURL(SiteAvito)+a.header.Get("Location"))
	if cap.status != http.StatusOK || !bytes.Contains(cap.body, []byte("Доступ ограничен: проблема с IP")) {
		t.Errorf("captcha page: %d %.200s", cap.status, cap.body)
	}
}
