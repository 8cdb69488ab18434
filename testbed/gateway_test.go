package testbed

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func startGateway(t *testing.T, cfg GatewayConfig) *Gateway {
	t.Helper()
	if cfg.User == "" {
		cfg.User, cfg.Password = "brd-customer-c1-zone-res", "secret"
	}
	g, err := StartGateway(context.Background(), cfg)
	if err != nil {
		t.Fatalf("StartGateway: %v", err)
	}
	t.Cleanup(g.Close)
	return g
}

// gatewayClient goes through g as user; keepAlive keeps its connection.
func gatewayClient(t *testing.T, g *Gateway, user string) *http.Client {
	t.Helper()
	u, err := url.Parse(g.URL(user))
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func whoamiServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(WhoamiHandler())
	t.Cleanup(srv.Close)
	return srv
}

func TestParseGatewayUser(t *testing.T) {
	for _, tc := range []struct {
		user, base, id string
		ttl            time.Duration
	}{
		{"brd-customer-c1-zone-res-session-ab12", "brd-customer-c1-zone-res", "ab12", 0},
		{"customer-u1-cc-DE-sessid-x9-sesstime-30", "customer-u1-cc-DE", "x9", 30 * time.Minute},
		{"user_session-Q7_lifetime-10m", "user", "Q7", 10 * time.Minute},
		{"user_session-Q7_lifetime-10m_country-de", "user_country-de", "Q7", 10 * time.Minute},
		{"brd-customer-c1-zone-res", "brd-customer-c1-zone-res", "", 0},
	} {
		base, id, ttl := ParseGatewayUser(tc.user)
		if base != tc.base || id != tc.id || ttl != tc.ttl {
			t.Errorf("ParseGatewayUser(%q) = %q, %q, %v; want %q, %q, %v", tc.user, base, id, ttl, tc.base, tc.id, tc.ttl)
		}
	}
}

// TestGatewaySessionsAreSticky: a session id keeps its exit in every
// provider spelling; a username without one gets a draw per connection;
// a bad password is refused and counted.
func TestGatewaySessionsAreSticky(t *testing.T) {
	srv := whoamiServer(t)
	g := startGateway(t, GatewayConfig{Exits: 8, User: "customer-u1", Password: "pw"})
	for _, user := range []string{"customer-u1-session-a1", "customer-u1-sessid-b2-sesstime-5", "customer-u1_session-c3_lifetime-2m"} {
		c := gatewayClient(t, g, user)
		first, code := whoami(t, c, srv.URL)
		if code != http.StatusOK || !isLoopback(first) {
			t.Fatalf("%s: whoami = %q, %d", user, first, code)
		}
		for range 3 {
			if ip, _ := whoami(t, c, srv.URL); ip != first {
				t.Fatalf("%s: exit moved from %s to %s within the session", user, first, ip)
			}
		}
		_, id, _ := ParseGatewayUser(user)
		if ip, ok := g.ExitOf(id); !ok || ip != first {
			t.Errorf("ExitOf(%s) = %s, %v; the site saw %s", id, ip, ok, first)
		}
	}
	seen := map[string]bool{}
	for range 12 {
		ip, _ := whoami(t, gatewayClient(t, g, "customer-u1"), srv.URL)
		seen[ip] = true
	}
	if len(seen) < 2 {
		t.Errorf("12 connections without a session id came from %d exit, want a draw each", len(seen))
	}
	if _, code := whoami(t, gatewayClient(t, g, "customer-u1-session-zz:wrong"), srv.URL); code != http.StatusProxyAuthRequired {
		t.Errorf("a wrong password got %d, want 407", code)
	}
	st := g.Stats()
	if st.Sessions != 3 || st.Unsessioned != 12 || st.Refused != 1 {
		t.Errorf("stats = %+v, want 3 sessions, 12 unsessioned, 1 refused", st)
	}
}

// TestGatewayCollisions: more sessions than exits share exits, and every
// shared landing is counted; with Collisions 0 and a free exit left, no
// two sessions share one.
func TestGatewayCollisions(t *testing.T) {
	srv := whoamiServer(t)
	for _, tc := range []struct {
		exits, sessions, wantCollisions int
	}{{exits: 4, sessions: 4, wantCollisions: 0}, {exits: 3, sessions: 10, wantCollisions: 7}} {
		g := startGateway(t, GatewayConfig{Exits: tc.exits})
		byExit := map[string]int{}
		for i := range tc.sessions {
			ip, _ := whoami(t, gatewayClient(t, g, fmt.Sprintf("brd-customer-c1-zone-res-session-s%d", i)), srv.URL)
			byExit[ip]++
		}
		shared := 0
		for _, n := range byExit {
			shared += n - 1
		}
		if st := g.Stats(); st.Collisions != tc.wantCollisions || shared != tc.wantCollisions {
			t.Errorf("%d sessions on %d exits: %d collisions counted, %d seen; want %d", tc.sessions, tc.exits, st.Collisions, shared, tc.wantCollisions)
		}
	}
}

// TestGatewayIdleAndTTLExpiry: a session unused for the idle time, or
// older than its lifetime, is drawn again.
func TestGatewayIdleAndTTLExpiry(t *testing.T) {
	srv := whoamiServer(t)
	clock := newFakeClock()
	g := startGateway(t, GatewayConfig{Exits: 50, Idle: time.Minute, StickyTTL: 10 * time.Minute, Now: clock.Now})
	c := gatewayClient(t, g, "brd-customer-c1-zone-res-session-idle1")
	whoami(t, c, srv.URL)
	clock.Advance(59 * time.Second)
	whoami(t, c, srv.URL)
	if st := g.Stats(); st.Sessions != 1 || st.Expired != 0 {
		t.Fatalf("within the idle time: %+v, want one session", st)
	}
	clock.Advance(time.Minute)
	if _, ok := g.ExitOf("idle1"); ok {
		t.Error("ExitOf still answers an exit after the idle time")
	}
	whoami(t, c, srv.URL)
	for range 11 {
		clock.Advance(55 * time.Second)
		whoami(t, c, srv.URL)
	}
	if st := g.Stats(); st.Sessions != 3 || st.Expired != 2 {
		t.Errorf("after an idle expiry and a lifetime: %+v, want 3 sessions, 2 expired", st)
	}
}

// TestGatewayExitHeader: the exit header, when set, tells on the CONNECT
// reply the IP the site then sees through the tunnel, and on forwarded
// answers.
func TestGatewayExitHeader(t *testing.T) {
	srv := whoamiServer(t)
	g := startGateway(t, GatewayConfig{Exits: 5, ExitHeader: "x-luminati-ip"})
	conn, err := net.Dial("tcp", g.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	target := strings.TrimPrefix(srv.URL, "http://")
	req, _ := http.NewRequest(http.MethodConnect, "http://"+target, nil)
	req.Host = target
	u, _ := url.Parse(g.URL("brd-customer-c1-zone-res-session-h1"))
	pw, _ := u.User.Password()
	req.SetBasicAuth(u.User.Username(), pw)
	req.Header["Proxy-Authorization"] = req.Header["Authorization"]
	delete(req.Header, "Authorization")
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	told := resp.Header.Get("x-luminati-ip")
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", WhoamiPath, target)
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(inner.Body)
	if seen := strings.TrimSpace(string(body)); told == "" || seen != told {
		t.Errorf("CONNECT told exit %q, the site saw %q", told, seen)
	}
	c := gatewayClient(t, g, "brd-customer-c1-zone-res-session-h1")
	fwd, err := c.Get(srv.URL + WhoamiPath)
	if err != nil {
		t.Fatal(err)
	}
	fwd.Body.Close()
	if h := fwd.Header.Get("x-luminati-ip"); h != told {
		t.Errorf("forwarded answer told %q, want the session's exit %q", h, told)
	}
}
