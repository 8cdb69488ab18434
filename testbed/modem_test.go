package testbed

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	testModemEvery  = 60 * time.Second
	testModemSettle = 10 * time.Second
)

// startModemNode starts modems on clock, closed at test end.
func startModemNode(t *testing.T, clock *fakeClock, cfg ModemConfig) *Modems {
	t.Helper()
	cfg.Now = clock.Now
	cfg.MinInterval, cfg.Settle = testModemEvery, testModemSettle
	m, err := StartModems(context.Background(), cfg)
	if err != nil {
		t.Fatalf("StartModems: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

// modemClient goes through modem i, one connection per request.
func modemClient(t *testing.T, m *Modems, i int) *http.Client {
	t.Helper()
	u, err := url.Parse(m.URL(i))
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// changeAnswer is what a change link answered.
type changeAnswer struct {
	status     int
	retryAfter string
	body       map[string]any
}

func changeIP(t *testing.T, method, link string) changeAnswer {
	t.Helper()
	req, err := http.NewRequest(method, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, link, err)
	}
	defer resp.Body.Close()
	a := changeAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		t.Fatalf("%s %s: status %d, body not JSON: %v", method, link, resp.StatusCode, err)
	}
	return a
}

// TestModemChangeGivesANewIPAfterTheSettle: the echo sees the modem's
// exit; a change answers 200 with the settle time, the modem refuses
// requests (counted) until the settle ends, then the echo sees a new
// IP, one no other modem holds.
func TestModemChangeGivesANewIPAfterTheSettle(t *testing.T) {
	srv := whoamiServer(t)
	clock := newFakeClock()
	m := startModemNode(t, clock, ModemConfig{N: 2, Exits: 3, User: "mob", Password: "pw"})
	pool := m.ExitPool()
	c0, c1 := modemClient(t, m, 0), modemClient(t, m, 1)
	if ip, code := whoami(t, c0, srv.URL); ip != pool[0] || code != http.StatusOK {
		t.Fatalf("modem0 before the change: %q %d, want %s", ip, code, pool[0])
	}
	a := changeIP(t, http.MethodGet, m.ChangeURL(0))
	if a.status != http.StatusOK || a.body["ok"] != true || a.body["name"] != "modem0" ||
		a.body["settle_ms"] != float64(testModemSettle.Milliseconds()) {
		t.Fatalf("change: %d %v", a.status, a.body)
	}
	if _, code := whoami(t, c0, srv.URL); code != http.StatusBadGateway {
		t.Fatalf("request while settling: status %d, want 502", code)
	}
	if ip, _ := whoami(t, c1, srv.URL); ip != pool[1] {
		t.Fatalf("modem1 during modem0's settle: %q, want %s", ip, pool[1])
	}
	clock.Advance(testModemSettle - time.Millisecond)
	if _, code := whoami(t, c0, srv.URL); code != http.StatusBadGateway {
		t.Fatalf("request just before the settle ends: status %d, want 502", code)
	}
	clock.Advance(time.Millisecond)
	if ip, code := whoami(t, c0, srv.URL); ip != pool[2] || code != http.StatusOK {
		t.Fatalf("modem0 after the settle: %q %d, want %s (the only free IP)", ip, code, pool[2])
	}
	st := m.Stats()
	if len(st.Rotations) != 1 || st.Rotations[0].From != pool[0] || st.Rotations[0].To != pool[2] {
		t.Errorf("rotations = %+v", st.Rotations)
	}
	if len(st.WhileSettling) != 2 || st.WhileSettling[0].Modem != "modem0" {
		t.Errorf("while settling = %+v, want 2 on modem0", st.WhileSettling)
	}
	if st.Requests["modem0"] != 2 || st.Requests["modem1"] != 1 {
		t.Errorf("requests = %v, want modem0 2, modem1 1", st.Requests)
	}
}

// TestModemRefusesAChangeWithinItsMinInterval: a second change of a
// modem within MinInterval is 429 with Retry-After in whole seconds and
// recorded; at MinInterval it is accepted, by POST too; other modems
// are not held back; a wrong key, an unknown modem and another method
// are refused; no accepted change was too soon.
func TestModemRefusesAChangeWithinItsMinInterval(t *testing.T) {
	clock := newFakeClock()
	m := startModemNode(t, clock, ModemConfig{N: 2, Key: "k3y"})
	if a := changeIP(t, http.MethodGet, m.ChangeURL(0)); a.status != http.StatusOK {
		t.Fatalf("first change: %d %v", a.status, a.body)
	}
	clock.Advance(testModemEvery - 1500*time.Millisecond)
	a := changeIP(t, http.MethodPost, m.ChangeURL(0))
	if a.status != http.StatusTooManyRequests || a.retryAfter != "2" || a.body["ok"] != false || a.body["retry_after"] != 2.0 {
		t.Fatalf("change 1.5 s early: %d Retry-After %q %v, want 429, 2", a.status, a.retryAfter, a.body)
	}
	if a := changeIP(t, http.MethodGet, m.ChangeURL(1)); a.status != http.StatusOK {
		t.Fatalf("another modem's change: %d %v", a.status, a.body)
	}
	clock.Advance(1500 * time.Millisecond)
	if a := changeIP(t, http.MethodPost, m.ChangeURL(0)); a.status != http.StatusOK {
		t.Fatalf("change at the min interval: %d %v", a.status, a.body)
	}
	base := m.ControlURL() + ChangeIPPath
	for _, tc := range []struct {
		name, method, link string
		want               int
	}{
		{"wrong key", http.MethodGet, base + "nope/modem0", http.StatusForbidden},
		{"unknown modem", http.MethodGet, base + "k3y/modem9", http.StatusNotFound},
		{"other method", http.MethodPut, m.ChangeURL(0), http.StatusMethodNotAllowed},
	} {
		if a := changeIP(t, tc.method, tc.link); a.status != tc.want || a.body["ok"] != false {
			t.Errorf("%s: %d %v, want %d", tc.name, a.status, a.body, tc.want)
		}
	}
	st := m.Stats()
	if len(st.Rotations) != 3 || len(st.Refusals) != 1 || st.Refusals[0].RetryAfter != 2*time.Second {
		t.Errorf("rotations %d, refusals %+v; want 3 and one of 2 s", len(st.Rotations), st.Refusals)
	}
	if st.TooSoon != 0 {
		t.Errorf("too soon = %d, want 0", st.TooSoon)
	}
	if n := tooSoon([]ModemRotation{{Modem: "a", At: clock.Now()}, {Modem: "a", At: clock.Now().Add(time.Second)}}, time.Minute); n != 1 {
		t.Errorf("tooSoon of two changes a second apart = %d, want 1", n)
	}
}

// TestModemHoldsTheNextChange: a held change is taken (and its interval
// counted) the hold after the call arrived; the hold is for one call.
func TestModemHoldsTheNextChange(t *testing.T) {
	m, err := StartModems(context.Background(), ModemConfig{N: 1, MinInterval: testModemEvery, Settle: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	const hold = 200 * time.Millisecond
	m.HoldNextChange(hold)
	sent := time.Now()
	if a := changeIP(t, http.MethodGet, m.ChangeURL(0)); a.status != http.StatusOK {
		t.Fatalf("held change: %d %v", a.status, a.body)
	}
	st := m.Stats()
	if len(st.Rotations) != 1 || st.Rotations[0].At.Sub(sent) < hold {
		t.Fatalf("rotations %+v, want one taken %s after %s", st.Rotations, hold, sent)
	}
	if d := m.takeHold(); d != 0 {
		t.Fatalf("hold left after the change: %s", d)
	}
}

// TestModemDropsOpenConnectionsAtTheChange: a CONNECT tunnel and a
// kept-alive proxy connection open through a modem are cut when its IP
// changes, and the rotation counts them.
func TestModemDropsOpenConnectionsAtTheChange(t *testing.T) {
	srv := whoamiServer(t)
	clock := newFakeClock()
	m := startModemNode(t, clock, ModemConfig{N: 1})
	tunnel, tr := dialModem(t, m), dialModem(t, m)
	fmt.Fprintf(tunnel, "CONNECT %s HTTP/1.1\r\nHost: %[1]s\r\n\r\n", srv.Listener.Addr())
	tbr := bufio.NewReader(tunnel)
	if resp, err := http.ReadResponse(tbr, nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	for _, step := range []struct {
		c   net.Conn
		br  *bufio.Reader
		req string
	}{
		{tunnel, tbr, "GET " + WhoamiPath + " HTTP/1.1\r\nHost: x\r\n\r\n"},
		{tr, bufio.NewReader(tr), "GET " + srv.URL + WhoamiPath + " HTTP/1.1\r\nHost: x\r\n\r\n"},
	} {
		io.WriteString(step.c, step.req)
		resp, err := http.ReadResponse(step.br, nil)
		if err != nil || resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("request on a kept connection: %v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if a := changeIP(t, http.MethodGet, m.ChangeURL(0)); a.status != http.StatusOK {
		t.Fatalf("change: %d %v", a.status, a.body)
	}
	for name, c := range map[string]net.Conn{"tunnel": tunnel, "kept-alive": tr} {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); !dropped(err) {
			t.Errorf("%s connection after the change: read %v, want it closed", name, err)
		}
	}
	if st := m.Stats(); len(st.Rotations) != 1 || st.Rotations[0].Dropped != 3 {
		t.Errorf("rotations = %+v, want one that dropped 3 connections (2 clients, 1 tunnel upstream)", st.Rotations)
	}
}

func dialModem(t *testing.T, m *Modems) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", m.Addr(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// dropped reports whether err is the peer closing the connection (not a
// timeout).
func dropped(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && strings.Contains(err.Error(), "closed")
}

// TestModemDrawsAFreeIPAndCanComeBack: over many changes a modem never
// keeps its IP nor takes one another modem has; with Reuse 1 it comes
// back to the IP it had before; NextExit picks the next IP.
func TestModemDrawsAFreeIPAndCanComeBack(t *testing.T) {
	clock := newFakeClock()
	m := startModemNode(t, clock, ModemConfig{N: 3, Exits: 5, Seed: 7})
	for round := range 20 {
		i := round % 3
		before, _ := m.Exit(i)
		if a := changeIP(t, http.MethodGet, m.ChangeURL(i)); a.status != http.StatusOK {
			t.Fatalf("round %d: change: %d %v", round, a.status, a.body)
		}
		after, settling := m.Exit(i)
		if after == before || !settling {
			t.Fatalf("round %d: %s -> %s (settling %v), want another IP, settling", round, before, after, settling)
		}
		for j := range 3 {
			if other, _ := m.Exit(j); j != i && other == after {
				t.Fatalf("round %d: modem%d got %s, modem%d's IP", round, i, after, j)
			}
		}
		clock.Advance(testModemEvery / 3)
	}
	back := startModemNode(t, clock, ModemConfig{N: 1, Exits: 6, Reuse: 1, FirstExit: "127.0.6.101"})
	first, _ := back.Exit(0)
	changeIP(t, http.MethodGet, back.ChangeURL(0))
	clock.Advance(testModemEvery)
	changeIP(t, http.MethodGet, back.ChangeURL(0))
	if ip, _ := back.Exit(0); ip != first {
		t.Errorf("with Reuse 1, the second change gave %s, want the first IP %s back", ip, first)
	}
	want := back.ExitPool()[4]
	if err := back.NextExit("modem0", want); err != nil {
		t.Fatal(err)
	}
	clock.Advance(testModemEvery)
	changeIP(t, http.MethodGet, back.ChangeURL(0))
	if ip, _ := back.Exit(0); ip != want {
		t.Errorf("after NextExit(%s) the change gave %s", want, ip)
	}
	if err := back.NextExit("modem7", want); !errors.Is(err, ErrNoSuchModem) {
		t.Errorf("NextExit of an unknown modem: %v", err)
	}
}

// TestTestbedModemLines: Config.Modems starts the node on the testbed's
// clock; each line names its modem's proxy, change link, limits and the
// testbed's echo, which sees the modem's exit through it.
func TestTestbedModemLines(t *testing.T) {
	clock := newFakeClock()
	tb := startTB(t, Config{Now: clock.Now, Modems: &ModemConfig{N: 2, User: "u", Password: "p",
		MinInterval: 90 * time.Second, Settle: 1500 * time.Millisecond}})
	lines := tb.ModemLines()
	if len(lines) != 2 {
		t.Fatalf("lines = %q", lines)
	}
	m := tb.Modems
	want := fmt.Sprintf("http://u:p@%s change=%s/changeip/%s/modem1 change_every=90s change_settle=1.5s exit=probe:%s",
		m.Addr(1), m.ControlURL(), DefaultModemKey, tb.EchoURL())
	if lines[1] != want {
		t.Errorf("line 1 =\n%s\nwant\n%s", lines[1], want)
	}
	c := modemClient(t, m, 1)
	resp, err := c.Get(tb.EchoURL())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ip, _ := m.Exit(1); strings.TrimSpace(string(b)) != ip {
		t.Errorf("echo through modem1 = %q, want %s", b, ip)
	}
	changeIP(t, http.MethodGet, m.ChangeURL(1))
	if _, settling := m.Exit(1); !settling {
		t.Error("modem1 not settling on the testbed's clock")
	}
	clock.Advance(1500 * time.Millisecond)
	if _, settling := m.Exit(1); settling {
		t.Error("modem1 still settling after its settle time on the testbed's clock")
	}
}

// TestModemAcceptsOneOfConcurrentChanges: of eight change calls for one
// modem at the same moment exactly one is accepted; the rest are 429.
func TestModemAcceptsOneOfConcurrentChanges(t *testing.T) {
	clock := newFakeClock()
	m := startModemNode(t, clock, ModemConfig{N: 1})
	const calls = 8
	codes := make(chan int, calls)
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			resp, err := http.Get(m.ChangeURL(0))
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	got := map[int]int{}
	for c := range codes {
		got[c]++
	}
	if got[http.StatusOK] != 1 || got[http.StatusTooManyRequests] != calls-1 {
		t.Errorf("answers = %v, want one 200 and %d 429", got, calls-1)
	}
	if st := m.Stats(); len(st.Rotations) != 1 || len(st.Refusals) != calls-1 || st.TooSoon != 0 {
		t.Errorf("rotations %d, refusals %d, too soon %d", len(st.Rotations), len(st.Refusals), st.TooSoon)
	}
}
