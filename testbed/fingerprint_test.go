package testbed

import (
	"crypto/tls"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hello reads a captured ClientHello from testdata.
func hello(t *testing.T, name string) ClientHello {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseClientHello(raw)
	if err != nil {
		t.Fatalf("ParseClientHello(%s): %v", name, err)
	}
	return h
}

func TestJA4OfCapturedClientHellos(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{name: "chromium 156, GREASE dropped", file: "hello-chromium-156.hex", want: "t13d1517h2_8daaf6152771_cb7bf5808d99"},
		{name: "firefox-esr 153, first hello", file: "hello-firefox-esr-153.hex", want: "t13d1617h2_86a278354501_3cbfd9057e0d"},
		{name: "firefox-esr 153, retry without compress_certificate", file: "hello-firefox-esr-153-retry.hex", want: "t13d1616h2_86a278354501_0c27189014cf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := hello(t, tc.file).JA4(); got != tc.want {
				t.Errorf("JA4 %s, want %s", got, tc.want)
			}
		})
	}
}

func TestJA4SameBrowserIgnoresOnlyTheMissingSNI(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{name: "equal", a: "t13d1517h2_8daaf6152771_cb7bf5808d99", b: "t13d1517h2_8daaf6152771_cb7bf5808d99", want: true},
		{name: "ip address: no sni, one extension less", a: "t13i1516h2_8daaf6152771_cb7bf5808d99", b: "t13d1517h2_8daaf6152771_cb7bf5808d99", want: true},
		{name: "no sni but same count is another client", a: "t13i1517h2_8daaf6152771_cb7bf5808d99", b: "t13d1517h2_8daaf6152771_cb7bf5808d99", want: false},
		{name: "go tls", a: "t13i131100_f57a46bbacb6_ab7e3b40a677", b: "t13d1517h2_8daaf6152771_cb7bf5808d99", want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := JA4SameBrowser(tc.a, tc.b); got != tc.want {
				t.Errorf("JA4SameBrowser(%s, %s) = %v", tc.a, tc.b, got)
			}
		})
	}
}

// httpsClient trusts tb's CA and speaks Go's TLS (and HTTP/2).
func httpsClient(t *testing.T, tb *Testbed) *http.Client {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tb.CA.Pool()}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func TestGoTLSWithABrowserUserAgentIsRefused(t *testing.T) {
	tb := startTB(t, Config{Fingerprint: true})
	c := httpsClient(t, tb)
	for _, site := range SiteNames {
		t.Run(site, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, tb.HTTPSSiteURL(site)+"/", nil)
			req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden || resp.ProtoMajor != 2 {
				t.Errorf("status %d over HTTP/%d, want 403 over HTTP/2", resp.StatusCode, resp.ProtoMajor)
			}
		})
	}
	if got := tb.Log.FingerprintRefusals(); got != len(SiteNames) {
		t.Errorf("fingerprint refusals %d, want %d", got, len(SiteNames))
	}
	for _, e := range tb.Log.Entries() {
		if !strings.HasPrefix(e.JA4, "t13i") || e.H2 == "" {
			t.Errorf("entry %d: ja4 %q h2 %q, want Go's JA4 without SNI and an h2 fingerprint", e.Seq, e.JA4, e.H2)
		}
	}
}

func TestChecksOffServeAnyClient(t *testing.T) {
	tb := startTB(t, Config{})
	resp, err := httpsClient(t, tb).Get(tb.HTTPSSiteURL(SiteOzon) + OzonSearchPath + "?text=phone")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || tb.Log.FingerprintRefusals() != 0 {
		t.Errorf("status %d, refusals %d; want 200 and 0", resp.StatusCode, tb.Log.FingerprintRefusals())
	}
}
