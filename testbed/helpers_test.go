package testbed

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"sync"
	"testing"
	"time"
)

// fakeClock is an injectable clock the tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// startTB starts a small testbed closed at test end.
func startTB(t *testing.T, cfg Config) *Testbed {
	t.Helper()
	if cfg.Proxies == 0 {
		cfg.Proxies = 2
	}
	if cfg.CatalogSize == 0 {
		cfg.CatalogSize = 600
	}
	cfg.Dir = t.TempDir()
	tb, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(tb.Close)
	return tb
}

// clientFrom dials from the loopback address ip, with a cookie jar when
// jar is true.
func clientFrom(t *testing.T, ip string, jar bool) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if jar {
		c.Jar, _ = cookiejar.New(nil)
	}
	return c
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func get(t *testing.T, c *http.Client, url string) answer {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}
