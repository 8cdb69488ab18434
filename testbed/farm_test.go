package testbed

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/proxy"
)

// startFarm starts a farm closed at test end.
func startFarm(t *testing.T, cfg FarmConfig) *Farm {
	t.Helper()
	f, err := StartFarm(context.Background(), cfg)
	if err != nil {
		t.Fatalf("StartFarm: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

// clientVia builds an HTTP client going through farm proxy p; TLS trusts
// the test server's certificate.
func clientVia(t *testing.T, p FarmProxy, srv *httptest.Server) *http.Client {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	if srv.TLS != nil {
		tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	}
	u, err := url.Parse(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	if p.Scheme == SchemeSOCKS5 {
		var auth *proxy.Auth
		if p.User != "" {
			auth = &proxy.Auth{User: p.User, Password: p.Password}
		}
		d, err := proxy.SOCKS5("tcp", p.Addr(), auth, proxy.Direct)
		if err != nil {
			t.Fatal(err)
		}
		tr.DialContext = d.(proxy.ContextDialer).DialContext
	} else {
		tr.Proxy = http.ProxyURL(u)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func whoami(t *testing.T, c *http.Client, base string) (string, int) {
	t.Helper()
	resp, err := c.Get(base + WhoamiPath)
	if err != nil {
		t.Fatalf("GET whoami: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b)), resp.StatusCode
}

func TestFarmProxiesShowDistinctIPs(t *testing.T) {
	plain := httptest.NewServer(WhoamiHandler())
	defer plain.Close()
	secure := httptest.NewTLSServer(WhoamiHandler())
	defer secure.Close()
	f := startFarm(t, FarmConfig{N: 4, Auth: true, SOCKS5Every: 2})
	ps := f.Proxies()
	tests := []struct {
		name   string
		pair   [2]int
		server *httptest.Server
	}{
		{name: "http absolute-form", pair: [2]int{0, 2}, server: plain},
		{name: "http CONNECT to TLS", pair: [2]int{0, 2}, server: secure},
		{name: "socks5 plain", pair: [2]int{1, 3}, server: plain},
		{name: "socks5 to TLS", pair: [2]int{1, 3}, server: secure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, i := range tt.pair {
				ip, code := whoami(t, clientVia(t, ps[i], tt.server), tt.server.URL)
				if code != http.StatusOK {
					t.Fatalf("proxy %d: status %d", i, code)
				}
				got = append(got, ip)
			}
			want := []string{ps[tt.pair[0]].IP, ps[tt.pair[1]].IP}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("client IPs (-want +got):\n%s", diff)
			}
			if got[0] == got[1] {
				t.Errorf("both proxies showed %s", got[0])
			}
		})
	}
}

func TestFarmAddresses(t *testing.T) {
	f := startFarm(t, FarmConfig{N: 3, FirstIP: "127.0.0.253", SOCKS5Every: 3})
	var got []string
	for _, p := range f.Proxies() {
		got = append(got, p.Scheme+" "+p.IP)
	}
	want := []string{"http 127.0.0.253", "http 127.0.0.254", "socks5 127.0.1.1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("proxies (-want +got):\n%s", diff)
	}
}

func TestFarmAuthRejected(t *testing.T) {
	srv := httptest.NewServer(WhoamiHandler())
	defer srv.Close()
	f := startFarm(t, FarmConfig{N: 2, Auth: true, SOCKS5Every: 2})
	ps := f.Proxies()
	tests := []struct {
		name string
		user *url.Userinfo
	}{
		{name: "wrong password", user: url.UserPassword(ps[0].User, "nope")},
		{name: "wrong user", user: url.UserPassword("someone", ps[0].Password)},
		{name: "no credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &url.URL{Scheme: "http", Host: ps[0].Addr(), User: tt.user}
			tr := &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr}).Get(srv.URL + WhoamiPath)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusProxyAuthRequired {
				t.Errorf("status %d, want 407", resp.StatusCode)
			}
			if h := resp.Header.Get("Proxy-Authenticate"); !strings.HasPrefix(h, "Basic") {
				t.Errorf("Proxy-Authenticate = %q", h)
			}
		})
	}
	t.Run("socks5 wrong password", func(t *testing.T) {
		d, _ := proxy.SOCKS5("tcp", ps[1].Addr(), &proxy.Auth{User: ps[1].User, Password: "nope"}, proxy.Direct)
		c, err := d.Dial("tcp", srv.Listener.Addr().String())
		if err == nil {
			c.Close()
			t.Fatal("socks5 dial with a wrong password succeeded")
		}
	})
}

func TestFarmConnectRefusesNonLoopback(t *testing.T) {
	f := startFarm(t, FarmConfig{N: 1})
	c, err := net.Dial("tcp", f.Proxies()[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT 10.1.2.3:80 HTTP/1.1\r\nHost: 10.1.2.3:80\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502", resp.StatusCode)
	}
}

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

func TestFarmDeadProxy(t *testing.T) {
	srv := httptest.NewServer(WhoamiHandler())
	defer srv.Close()
	f := startFarm(t, FarmConfig{N: 2, Faults: map[int]Fault{1: {Dead: true}}})
	ps := f.Proxies()
	if _, err := net.Dial("tcp", ps[1].Addr()); !isRefused(err) {
		t.Fatalf("dial dead proxy: err = %v, want connection refused", err)
	}
	if _, code := whoami(t, clientVia(t, ps[0], srv), srv.URL); code != http.StatusOK {
		t.Fatalf("healthy proxy: status %d", code)
	}
	if err := f.SetFault(0, Fault{Dead: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", ps[0].Addr()); !isRefused(err) {
		t.Fatalf("dial proxy killed mid-run: err = %v, want connection refused", err)
	}
	if err := f.SetFault(1, Fault{}); err != nil {
		t.Fatal(err)
	}
	if ip, code := whoami(t, clientVia(t, ps[1], srv), srv.URL); code != http.StatusOK || ip != ps[1].IP {
		t.Fatalf("revived proxy: %d %q", code, ip)
	}
	if got := f.Proxies()[0].Fault; !got.Dead {
		t.Errorf("Proxies()[0].Fault = %v, want dead", got)
	}
}

func TestFarmDeadCutsOpenTunnel(t *testing.T) {
	srv := httptest.NewServer(WhoamiHandler())
	defer srv.Close()
	f := startFarm(t, FarmConfig{N: 1})
	c, err := net.Dial("tcp", f.Proxies()[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	host := srv.Listener.Addr().String()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	if err := f.SetFault(0, Fault{Dead: true}); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("tunnel still delivers bytes after the proxy died")
	}
}

// dropPattern sends n requests through a flaky proxy and marks which failed.
func dropPattern(t *testing.T, srv *httptest.Server, flaky float64, n int) string {
	f := startFarm(t, FarmConfig{N: 1, Seed: 42, Faults: map[int]Fault{0: {Flaky: flaky}}})
	c := clientVia(t, f.Proxies()[0], srv)
	var b strings.Builder
	for range n {
		resp, err := c.Get(srv.URL + WhoamiPath)
		if err != nil {
			b.WriteByte('x')
			continue
		}
		resp.Body.Close()
		b.WriteByte('.')
	}
	f.Close()
	return b.String()
}

func TestFarmFlaky(t *testing.T) {
	srv := httptest.NewServer(WhoamiHandler())
	defer srv.Close()
	first := dropPattern(t, srv, 0.5, 30)
	second := dropPattern(t, srv, 0.5, 30)
	if first != second {
		t.Errorf("same seed, different drops:\n%s\n%s", first, second)
	}
	if !strings.Contains(first, "x") || !strings.Contains(first, ".") {
		t.Errorf("flaky 0.5 over 30 requests: %s, want some of each", first)
	}
	if all := dropPattern(t, srv, 1, 3); all != "xxx" {
		t.Errorf("flaky 1: %s, want every request dropped", all)
	}
}

func TestFarmSlowAddsLatency(t *testing.T) {
	srv := httptest.NewServer(WhoamiHandler())
	defer srv.Close()
	const slow = 50 * time.Millisecond
	f := startFarm(t, FarmConfig{N: 1, Faults: map[int]Fault{0: {Slow: slow}}})
	start := time.Now()
	if _, code := whoami(t, clientVia(t, f.Proxies()[0], srv), srv.URL); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if d := time.Since(start); d < slow {
		t.Errorf("request through a slow proxy took %s, want at least %s", d, slow)
	}
}

func TestFarmWriteProxyFile(t *testing.T) {
	f := startFarm(t, FarmConfig{N: 3, Auth: true, SOCKS5Every: 3})
	path := filepath.Join(t.TempDir(), "proxies.txt")
	if err := f.WriteProxyFile(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range f.Proxies() {
		want = append(want, fmt.Sprintf("%s://%s:%s@%s", p.Scheme, p.User, p.Password, p.Addr()))
	}
	if diff := cmp.Diff(want, strings.Fields(string(b))); diff != "" {
		t.Errorf("proxy file (-want +got):\n%s", diff)
	}
}

func TestFarmStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f, err := StartFarm(ctx, FarmConfig{N: 1})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	f.Close()
	if _, err := net.Dial("tcp", f.Proxies()[0].Addr()); !isRefused(err) {
		t.Errorf("dial after stop: %v, want connection refused", err)
	}
}
