//go:build unix

package testbed

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRealChromiumPassesTheFingerprintCheck runs Debian's chromium against
// the checking site: the real browser must pass, and its HTTP/2
// fingerprint must be the one the rule expects.
func TestRealChromiumPassesTheFingerprintCheck(t *testing.T) {
	bin := lookPath(t, "chromium")
	tb := startTB(t, Config{Fingerprint: true, LaxHeaders: true}) // it opens an API URL as a page
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := browser(ctx, bin, "--headless=new", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--no-first-run",
		"--ignore-certificate-errors", "--user-data-dir="+t.TempDir(), "--dump-dom",
		tb.HTTPSSiteURL(SiteWildberries)+WBSearchPath+"?query=phone")
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
	tb := startTB(t, Config{Fingerprint: true, LaxHeaders: true}) // it opens an API URL as a page
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"-N", "-d", "sql:" + dir, "--empty-password"},
		{"-A", "-n", "crawlq-testbed", "-t", "C,,", "-i", tb.CAFile, "-d", "sql:" + dir},
	} {
		if out, err := exec.CommandContext(ctx, lookPath(t, "certutil"), args...).CombinedOutput(); err != nil {
			t.Fatalf("certutil %v: %v\n%s", args, err, out)
		}
	}
	out, err := browser(ctx, lookPath(t, "firefox-esr"), "--headless", "--no-remote", "--profile", dir,
		"--screenshot", filepath.Join(dir, "shot.png"), tb.HTTPSSiteURL(SiteWildberries)+WBSearchPath+"?query=phone")
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

// browser runs a browser to its end in its own process group: when ctx
// ends, the whole group (its helper processes too) is killed, and output
// pipes a helper still holds are let go after a few seconds.
func browser(ctx context.Context, bin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // helpers left behind
	}
	return out, err
}
