package testbed

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"crawlq/internal/samples"
)

// TestAvitoPoWAsCaptured: a new visitor of Avito gets what QRATOR served
// on 2026-08-27 (the captured page): 439, the page "проверка
// безопасности" naming the exchange's endpoints, a pow_challenge cookie
// of five minutes. The cookie gets a work of the rule's difficulty; a
// wrong nonce is not verified; a right one sets the clearance cookie for
// the rule's TTL, and the page is served. The clearance, the challenge
// and the work are each bound to the IP they went to, and the clearance
// ends with its TTL.
func TestAvitoPoWAsCaptured(t *testing.T) {
	capture, err := os.ReadFile(samples.Path("avito", "avito_pow_challenge_439_2026-08.html"))
	if err != nil {
		t.Fatal(err)
	}
	clock := newFakeClock()
	tb := startTB(t, Config{Now: clock.Now, Sites: map[string]SiteRules{
		SiteAvito: {Punishment: BlockPage429, Challenge: &ChallengeRule{TTL: 10 * time.Minute, PoWCompl: 3}}}})
	base := tb.SiteURL(SiteAvito)
	a := clientFrom(t, politeIP, true)
	first := get(t, a, base+"/rossiya?q=x")
	if first.status != 439 {
		t.Fatalf("a new visitor: status %d, want 439", first.status)
	}
	for _, mark := range []string{"<title>Доступ ограничен: проверка безопасности</title>", "firewall-container", `id="pow-status"`,
		AvitoPoWCookie, AvitoPoWGetPath, AvitoPoWVerifyPath} {
		if !bytes.Contains(capture, []byte(mark)) || !bytes.Contains(first.body, []byte(mark)) {
			t.Errorf("%q: in the capture %v, in the testbed's page %v; want both", mark, bytes.Contains(capture, []byte(mark)), bytes.Contains(first.body, []byte(mark)))
		}
	}
	ch := setCookie(first.header, AvitoPoWCookie)
	if ch == nil || ch.MaxAge != 300 {
		t.Fatalf("pow_challenge cookie %+v, want one of Max-Age 300", ch)
	}
	if st, _ := postJSON(t, clientFrom(t, rudeIP, false), base+AvitoPoWGetPath, map[string]any{"challenge": ch.Value}); st != http.StatusBadRequest {
		t.Errorf("another IP's challenge: status %d, want 400", st)
	}
	jwt := powWork(t, a, base, ch.Value)
	claims := powPayload(t, jwt)
	if claims.Compl != 3 || claims.ID == "" {
		t.Fatalf("work %+v, want an id and compl 3", claims)
	}
	n := uint64(0)
	for !PoWSolves(claims.ID, n, claims.Compl) {
		n++
	}
	if st, v := postJSON(t, a, base+AvitoPoWVerifyPath, map[string]any{"challenge": jwt, "nonce": n + 1}); st != 200 || powVerified(v) || PoWSolves(claims.ID, n+1, 3) {
		t.Errorf("a wrong nonce: %d %s, want verified false", st, v)
	}
	if _, v := postJSON(t, clientFrom(t, rudeIP, false), base+AvitoPoWVerifyPath, map[string]any{"challenge": jwt, "nonce": n}); powVerified(v) {
		t.Errorf("another IP's work: %s, want verified false", v)
	}
	resp := postResp(t, a, base+AvitoPoWVerifyPath, map[string]any{"challenge": jwt, "nonce": n})
	if clr := setCookie(resp.Header, AvitoClearanceCookie); clr == nil || clr.MaxAge != 600 || !clr.HttpOnly {
		t.Fatalf("verified: clearance cookie %+v, want _adcc, HttpOnly, Max-Age 600", clr)
	}
	if page := get(t, a, base+"/rossiya?q=x"); page.status != 200 || bytes.Contains(page.body, []byte("firewallPow")) {
		t.Fatalf("cleared: status %d, want the page", page.status)
	}
	u, _ := url.Parse(base)
	b := clientFrom(t, rudeIP, true)
	b.Jar.SetCookies(u, a.Jar.Cookies(u))
	if got := get(t, b, base+"/rossiya?q=x"); got.status != 439 {
		t.Errorf("A's clearance from another IP: status %d, want 439", got.status)
	}
	clock.Advance(10*time.Minute + time.Second)
	if got := get(t, a, base+"/rossiya?q=x"); got.status != 439 {
		t.Errorf("after the clearance's TTL: status %d, want 439", got.status)
	}
	if c := tb.Log.Challenges(); c.Served != 2 || c.Solved != 1 || c.Misused != 1 {
		t.Errorf("challenges %+v: want 2 served (the first request, the expired one), 1 solved, 1 misused", c)
	}
}

// powWork posts a pow_challenge to the get endpoint and returns the JWT.
func powWork(t *testing.T, c *http.Client, base, challenge string) string {
	t.Helper()
	st, raw := postJSON(t, c, base+AvitoPoWGetPath, map[string]any{"challenge": challenge})
	var out struct {
		Success struct {
			Result struct {
				JWT string `json:"challenge_jwt"`
			} `json:"result"`
		} `json:"success"`
	}
	if st != 200 || json.Unmarshal(raw, &out) != nil || out.Success.Result.JWT == "" {
		t.Fatalf("get: %d %s, want a challenge_jwt", st, raw)
	}
	return out.Success.Result.JWT
}

func powPayload(t *testing.T, jwt string) powClaims {
	t.Helper()
	var c powClaims
	parts := strings.Split(jwt, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[min(1, len(parts)-1)])
	if len(parts) != 3 || err != nil || json.Unmarshal(raw, &c) != nil {
		t.Fatalf("jwt %q: not header.payload.signature", jwt)
	}
	return c
}

func powVerified(raw []byte) bool {
	return bytes.Contains(raw, []byte(`"verified":true`))
}

func postJSON(t *testing.T, c *http.Client, u string, body any) (int, []byte) {
	t.Helper()
	resp := postResp(t, c, u, body)
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.Bytes()
}

func postResp(t *testing.T, c *http.Client, u string, body any) *http.Response {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := c.Post(u, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("POST %s: %v", u, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// setCookie is the cookie named name that h sets, nil if none.
func setCookie(h http.Header, name string) *http.Cookie {
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}
