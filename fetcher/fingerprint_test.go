//go:build unix

package fetcher_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"crawlq/fetcher"
	"crawlq/testbed"
)

// captureHost is the https host every client is sent to through the
// capture proxy; the proxy never resolves it.
const captureHost = "capture.example:443"

// startCapture starts a ClientHello capturing CONNECT proxy.
func startCapture(t *testing.T) *testbed.HelloCapture {
	t.Helper()
	c, err := testbed.StartHelloCapture()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// firstHelloTo waits for the first ClientHello sent to host, skipping the
// browser's background connections to other hosts.
func firstHelloTo(ctx context.Context, t *testing.T, c *testbed.HelloCapture, host string) testbed.ClientHello {
	t.Helper()
	for {
		h, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for a client hello to %s: %v", host, err)
		}
		if h.Host == host {
			return h.Hello
		}
	}
}

// runBrowser starts a browser command in its own process group; stop
// kills it (with its children) and waits for it, at the latest when the
// test ends. A browser left open keeps its page and takes CPU from the
// next one's start.
func runBrowser(t *testing.T, name string, args ...string) (stop func()) {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (.ci/run installs it): %v", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		})
	}
	t.Cleanup(stop)
	return stop
}

// chromiumHello is the JA4 of Debian's chromium through proxy.
func chromiumHello(ctx context.Context, t *testing.T, c *testbed.HelloCapture) string {
	stop := runBrowser(t, "chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--proxy-server="+c.URL(), "https://"+captureHost+"/")
	defer stop()
	return firstHelloTo(ctx, t, c, captureHost).JA4()
}

// firefoxHello is the JA4 of firefox-esr's first ClientHello to the host
// (its retry after the capture proxy hangs up leaves compress_certificate
// out, so only the first one is what users' browsers send).
func firefoxHello(ctx context.Context, t *testing.T, c *testbed.HelloCapture) string {
	dir := t.TempDir()
	port := c.Addr()[strings.LastIndex(c.Addr(), ":")+1:]
	prefs := strings.Join([]string{
		`user_pref("network.proxy.type", 1);`,
		`user_pref("network.proxy.http", "127.0.0.1");`,
		`user_pref("network.proxy.http_port", ` + port + `);`,
		`user_pref("network.proxy.ssl", "127.0.0.1");`,
		`user_pref("network.proxy.ssl_port", ` + port + `);`,
	}, "\n")
	if err := os.WriteFile(filepath.Join(dir, "user.js"), []byte(prefs), 0o600); err != nil {
		t.Fatal(err)
	}
	stop := runBrowser(t, "firefox-esr", "--headless", "--no-remote", "--profile", dir,
		"--screenshot", filepath.Join(dir, "shot.png"), "https://"+captureHost+"/")
	defer stop()
	return firstHelloTo(ctx, t, c, captureHost).JA4()
}

// crawlqHello is the JA4 of profile p's request through proxy c.
func crawlqHello(ctx context.Context, t *testing.T, c *testbed.HelloCapture, p fetcher.Profile, cfg fetcher.Config) string {
	f := newFetcher(t, cfg)
	proxy, _ := url.Parse(c.URL())
	go f.Do(ctx, fetcher.Request{URL: "https://" + captureHost + "/", Proxy: proxy, Profile: p})
	return firstHelloTo(ctx, t, c, captureHost).JA4()
}

func TestProfilesHaveTheJA4OfTheBrowserTheyClaim(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	real := map[string]func(context.Context, *testing.T, *testbed.HelloCapture) string{
		fetcher.TLSChrome156:  chromiumHello,
		fetcher.TLSFirefox153: firefoxHello,
	}
	browsers := map[string]string{}
	for name, capture := range real {
		browsers[name] = capture(ctx, t, startCapture(t))
		t.Logf("real browser %s: %s", name, browsers[name])
	}
	for _, p := range fetcher.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			want, ok := browsers[p.Fingerprint()]
			if !ok {
				t.Fatalf("profile %s has fingerprint %q, no real browser captured for it", p.Name, p.Fingerprint())
			}
			if !strings.Contains(p.UserAgent, claimedVersion(p.Fingerprint())) {
				t.Errorf("user agent %q does not claim the version of fingerprint %s", p.UserAgent, p.Fingerprint())
			}
			for i := range 3 { // Chrome shuffles its extensions per connection
				if got := crawlqHello(ctx, t, startCapture(t), p, fetcher.Config{}); got != want {
					t.Errorf("connection %d: JA4 %s, real browser %s", i, got, want)
				}
			}
		})
	}
	t.Run("plain Go TLS is no browser", func(t *testing.T) {
		got := crawlqHello(ctx, t, startCapture(t), fetcher.DefaultProfile(), fetcher.Config{PlainTLS: true})
		t.Logf("Go's crypto/tls: %s", got)
		for name, ja4 := range browsers {
			if testbed.JA4SameBrowser(got, ja4) {
				t.Errorf("Go's TLS has the JA4 of %s: %s", name, got)
			}
		}
	})
}

// claimedVersion is how a UA names the browser of fingerprint name:
// "chrome-156" → "Chrome/156.", "firefox-153" → "Firefox/153.".
func claimedVersion(name string) string {
	family, version, _ := strings.Cut(name, "-")
	return strings.ToUpper(family[:1]) + family[1:] + "/" + version + "."
}
