package testbed

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"net/http"
	"os"
	"os/exec"
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

// TestRealChromiumPassesTheFingerprintCheck runs Debian's chromium against
// the checking site: the real browser must pass, and its HTTP/2
// fingerprint must be the one the rule expects.
func TestRealChromiumPassesTheFingerprintCheck(t *testing.T) {
	bin := lookPath(t, "chromium")
	tb := startTB(t, Config{Fingerprint: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--headless=new", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--no-first-run",
		"--ignore-certificate-errors", "--user-data-dir="+t.TempDir(), "--dump-dom",
		tb.HTTPSSiteURL(SiteWildberries)+WBSearchPath+"?query=phone").CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	checkRealBrowser(t, tb, "chrome/156")
}

// checkRealBrowser asserts the real browser's search request passed the
// check with the fingerprints the rule expects of browser.
func checkRealBrowser(t *testing.T, tb *Testbed, browser string) {
	t.Helper()
	want, _ := KnownBrowser(browser)
	var page *Entry
	for _, e := range tb.Log.Entries() {
		if strings.HasPrefix(e.Path, WBSearchPath) {
			page = &e
		}
	}
	if page == nil {
		t.Fatalf("%s's request is not in the log", browser)
	}
	if page.Verdict != VerdictOK || !JA4SameBrowser(page.JA4, want.JA4) || page.H2 != want.H2 {
		t.Errorf("%s: verdict %s, ja4 %s, h2 %s; want ok, %s, %s", browser, page.Verdict, page.JA4, page.H2, want.JA4, want.H2)
	}
}

// TestRealFirefoxPassesTheFingerprintCheck runs Debian's firefox-esr,
// trusting the run's CA through its own NSS database (certutil), against
// the checking site.
func TestRealFirefoxPassesTheFingerprintCheck(t *testing.T) {
	tb := startTB(t, Config{Fingerprint: true})
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, args := range [][]string{
		{"-N", "-d", "sql:" + dir, "--empty-password"},
		{"-A", "-n", "crawlq-testbed", "-t", "C,,", "-i", tb.CAFile, "-d", "sql:" + dir},
	} {
		if out, err := exec.CommandContext(ctx, lookPath(t, "certutil"), args...).CombinedOutput(); err != nil {
			t.Fatalf("certutil %v: %v\n%s", args, err, out)
		}
	}
	out, err := exec.CommandContext(ctx, lookPath(t, "firefox-esr"), "--headless", "--no-remote", "--profile", dir,
		"--screenshot", filepath.Join(dir, "shot.png"), tb.HTTPSSiteURL(SiteWildberries)+WBSearchPath+"?query=phone").CombinedOutput()
	if err != nil {
		t.Fatalf("firefox-esr: %v\n%s", err, out)
	}
	checkRealBrowser(t, tb, "firefox/153")
}

// lookPath finds a program .ci/run installs.
func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (.ci/run installs it): %v", name, err)
	}
	return p
}
