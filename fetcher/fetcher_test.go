package fetcher_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/fetcher"
	"crawlq/testbed"
)

// seen is what a test checks of a response: the client IP the site saw.
type seen struct {
	Status              int
	IP, FinalURL, Proxy string
}

func TestDoThroughEveryProxyKind(t *testing.T) {
	plain, secure := startTarget(t, false), startTarget(t, true)
	farm := startFarm(t, testbed.FarmConfig{N: 4, Auth: true, SOCKS5Every: 2})
	httpsProxy := tlsFront(t, secure, farm, 0) // TLS in front of proxy 0
	f := newFetcher(t, fetcher.Config{TLS: secure.tlsConfig()})
	tests := []struct {
		name   string
		index  int
		proxy  *url.URL
		target *target
	}{
		{name: "http proxy, http target", index: 0, proxy: proxyURL(t, farm, 0), target: plain},
		{name: "http proxy, https target via CONNECT", index: 2, proxy: proxyURL(t, farm, 2), target: secure},
		{name: "socks5 with auth, http target", index: 1, proxy: proxyURL(t, farm, 1), target: plain},
		{name: "socks5 with auth, https target", index: 3, proxy: proxyURL(t, farm, 3), target: secure},
		{name: "https proxy, http target", index: 0, proxy: httpsProxy, target: plain},
		{name: "https proxy, https target via CONNECT", index: 0, proxy: httpsProxy, target: secure},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := farm.Proxy(tc.index)
			resp, err := f.Do(context.Background(), fetcher.Request{URL: tc.target.url("/ip"), Proxy: tc.proxy})
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			got := seen{resp.Status, strings.TrimSpace(string(resp.Body)), resp.FinalURL, resp.Proxy}
			want := seen{200, p.IP, tc.target.url("/ip"), tc.proxy.Scheme + "://" + p.User + ":***@" + tc.proxy.Host}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("response (-want +got):\n%s", d)
			}
		})
	}
}

func TestConcurrentRequestsKeepTheirProxy(t *testing.T) {
	tg := startTarget(t, false)
	farm := startFarm(t, testbed.FarmConfig{N: 2, Auth: true, SOCKS5Every: 2})
	f := newFetcher(t, fetcher.Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Go(func() {
			p, _ := farm.Proxy(g % 2)
			u, _ := url.Parse(p.URL)
			for range 3 {
				resp, err := f.Do(context.Background(), fetcher.Request{URL: tg.url("/ip"), Proxy: u})
				if err != nil {
					errs <- err
					return
				}
				if ip := strings.TrimSpace(string(resp.Body)); ip != p.IP {
					errs <- fmt.Errorf("via proxy %d the site saw %s, want %s", p.Index, ip, p.IP)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestDoFollowsRedirectsAndReportsFinalURL(t *testing.T) {
	tg := startTarget(t, false)
	f := newFetcher(t, fetcher.Config{})
	resp, err := f.Do(context.Background(), fetcher.Request{URL: tg.url("/redirect?n=9")})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if resp.FinalURL != tg.url("/ip") || resp.Status != 200 {
		t.Errorf("final %q status %d, want %q 200", resp.FinalURL, resp.Status, tg.url("/ip"))
	}
	_, err = f.Do(context.Background(), fetcher.Request{URL: tg.url("/redirect?n=10")})
	if !errors.Is(err, fetcher.ErrTooManyRedirects) || fetcher.KindOf(err) != fetcher.Other {
		t.Errorf("11 redirects: err %v, want ErrTooManyRedirects of kind other", err)
	}
}

func TestCookiesCarryAcrossRequestsThroughOneProxy(t *testing.T) {
	tg := startTarget(t, true)
	farm := startFarm(t, testbed.FarmConfig{N: 1, Auth: true})
	f := newFetcher(t, fetcher.Config{TLS: tg.tlsConfig()})
	jar, _ := cookiejar.New(nil)
	px := proxyURL(t, farm, 0)
	do := func(path string) string {
		t.Helper()
		resp, err := f.Do(context.Background(), fetcher.Request{URL: tg.url(path), Proxy: px, Jar: jar})
		if err != nil {
			t.Fatalf("Do %s: %v", path, err)
		}
		return string(resp.Body)
	}
	do("/set?v=first&to=/cookies") // set on a redirect hop
	if got := do("/cookies"); got != "sid=first" {
		t.Errorf("after redirect hop: cookies %q, want sid=first", got)
	}
	do("/set?v=second")
	if got := do("/cookies"); got != "sid=second" {
		t.Errorf("next request: cookies %q, want sid=second", got)
	}
}

func TestTransportIsReusedPerProxy(t *testing.T) {
	tg := startTarget(t, true)
	farm := startFarm(t, testbed.FarmConfig{N: 2, Auth: true, SOCKS5Every: 2})
	f := newFetcher(t, fetcher.Config{TLS: tg.tlsConfig()})
	for range 3 {
		for i := range 2 {
			if _, err := f.Do(context.Background(), fetcher.Request{URL: tg.url("/ip"), Proxy: proxyURL(t, farm, i)}); err != nil {
				t.Fatalf("Do via proxy %d: %v", i, err)
			}
		}
	}
	// One tunnel per proxy (CONNECT and socks5), each reused three times.
	if got := tg.newConns.Load(); got != 2 {
		t.Errorf("target saw %d connections for 6 requests through 2 proxies, want 2", got)
	}
}

func TestProfileHeadersAreSent(t *testing.T) {
	tg := startTarget(t, false)
	f := newFetcher(t, fetcher.Config{})
	prof := fetcher.ProfileFor("task-42")
	hdr := http.Header{"Accept": {"application/json"}}
	resp, err := f.Do(context.Background(), fetcher.Request{URL: tg.url("/headers"), Header: hdr, Profile: prof})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	var got http.Header
	if err := json.Unmarshal(resp.Body, &got); err != nil {
		t.Fatalf("decode echoed headers: %v", err)
	}
	want := map[string]string{
		"User-Agent":      prof.UserAgent,
		"Accept":          "application/json", // the request's own header wins
		"Accept-Language": prof.AcceptLanguage,
		"Accept-Encoding": fetcher.AcceptEncoding,
		"Sec-Ch-Ua":       prof.SecCHUA,
	}
	gotSome := map[string]string{}
	for k := range want {
		gotSome[k] = got.Get(k)
	}
	if d := cmp.Diff(want, gotSome); d != "" {
		t.Errorf("headers (-want +got):\n%s", d)
	}
}

func TestPostBodyIsSent(t *testing.T) {
	tg := startTarget(t, false)
	f := newFetcher(t, fetcher.Config{})
	resp, err := f.Do(context.Background(), fetcher.Request{Method: http.MethodPost, URL: tg.url("/echo"), Body: []byte(`{"q":"чай"}`)})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if string(resp.Body) != `{"q":"чай"}` {
		t.Errorf("echo %q", resp.Body)
	}
}

func TestCloseRefusesFurtherRequests(t *testing.T) {
	tg := startTarget(t, false)
	f := fetcher.New(fetcher.Config{})
	if _, err := f.Do(context.Background(), fetcher.Request{URL: tg.url("/ip")}); err != nil {
		t.Fatalf("Do before Close: %v", err)
	}
	f.CloseIdle()
	f.Close()
	_, err := f.Do(context.Background(), fetcher.Request{URL: tg.url("/ip")})
	if !errors.Is(err, fetcher.ErrClosed) {
		t.Errorf("Do after Close: %v, want ErrClosed", err)
	}
}
