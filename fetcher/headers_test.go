//go:build unix

package fetcher_test

import (
	"context"
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/fetcher"
	"crawlq/testbed"
)

// startWitness starts a header witness whose page's fetch() adds xhr.
func startWitness(t *testing.T, xhr []testbed.HeaderField) *testbed.HeaderWitness {
	t.Helper()
	w, err := testbed.StartHeaderWitness(xhr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// chromiumVisit opens the witness's page in Debian's chromium; stop
// closes it.
func chromiumVisit(t *testing.T, w *testbed.HeaderWitness) (stop func()) {
	return runBrowser(t, "chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--no-first-run",
		"--ignore-certificate-errors", "--accept-lang=ru-RU,ru,en-US,en", "--user-data-dir="+t.TempDir(),
		w.URL()+testbed.WitnessPagePath)
}

// firefoxVisit opens the witness's page in Debian's firefox-esr, which
// trusts the witness's CA through its own NSS database. Both browsers
// ask for Russian first, as the profiles do. stop closes it.
func firefoxVisit(t *testing.T, w *testbed.HeaderWitness) (stop func()) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := w.CA.WriteFile(ca); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-N", "-d", "sql:" + dir, "--empty-password"},
		{"-A", "-n", "crawlq-witness", "-t", "C,,", "-i", ca, "-d", "sql:" + dir},
	} {
		if out, err := exec.Command("certutil", args...).CombinedOutput(); err != nil {
			t.Fatalf("certutil %v: %v\n%s", args, err, out)
		}
	}
	prefs := `user_pref("intl.accept_languages", "ru-RU,ru,en-US,en");` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "user.js"), []byte(prefs), 0o600); err != nil {
		t.Fatal(err)
	}
	return runBrowser(t, "firefox-esr", "--headless", "--no-remote", "--profile", dir, w.URL()+testbed.WitnessPagePath)
}

// wbXHR are Wildberries' own search API headers, in the order crawlq's
// wildberries site sets them.
var wbXHR = []testbed.HeaderField{
	{Name: "deviceid", Value: "site_0f3a9c2e5b7d4e1a8c6b2d9f0e4a7c31"}, {Name: "x-queryid", Value: "qid17649000000001234567890"},
	{Name: "x-requested-with", Value: "XMLHttpRequest"}, {Name: "x-spa-version", Value: "13.15.1"}, {Name: "x-userid", Value: "0"},
}

// xhrSets are the sets of page headers crawlq sends on a fetch(): the
// Wildberries search's, its card and catalog APIs' (the search's but
// x-queryid and x-userid), and none (its basket CDN; Avito's API).
var xhrSets = map[string][]testbed.HeaderField{
	"wildberries search": wbXHR,
	"wildberries card":   {wbXHR[0], wbXHR[2], wbXHR[3]},
	"no page headers":    nil,
}

// realBrowser is one installed browser and how to open a page in it.
type realBrowser struct {
	fingerprint string // of the profiles claiming it
	linux       string // the profile claiming exactly this build
	visit       func(*testing.T, *testbed.HeaderWitness) (stop func())
}

// witnessed is what the witness saw of a navigation to its page and the
// page's fetch().
type witnessed struct{ nav, xhr testbed.WitnessedRequest }

func (w witnessed) of(k fetcher.Kind) testbed.WitnessedRequest {
	if k == fetcher.XHR {
		return w.xhr
	}
	return w.nav
}

// next waits for the witness's next navigation and XHR.
func next(ctx context.Context, t *testing.T, w *testbed.HeaderWitness) witnessed {
	t.Helper()
	var out witnessed
	var err error
	if out.nav, err = w.Next(ctx, testbed.WitnessPagePath); err != nil {
		t.Fatal(err)
	}
	if out.xhr, err = w.Next(ctx, testbed.WitnessXHRPath); err != nil {
		t.Fatal(err)
	}
	return out
}

// crawlqVisit sends profile p's navigation to the witness's page and its
// XHR from that page, as a session does.
func crawlqVisit(ctx context.Context, t *testing.T, w *testbed.HeaderWitness, p fetcher.Profile, xhr []testbed.HeaderField) witnessed {
	f := newFetcher(t, fetcher.Config{TLS: &tls.Config{RootCAs: w.CA.Pool()}})
	page := w.URL() + testbed.WitnessPagePath
	var extra []fetcher.HeaderField
	for _, h := range xhr {
		extra = append(extra, fetcher.HeaderField{Name: h.Name, Value: h.Value})
	}
	for _, r := range []fetcher.Request{
		{URL: page, Profile: p},
		{URL: w.URL() + testbed.WitnessXHRPath, Kind: fetcher.XHR, Referer: page, Extra: extra, Profile: p},
	} {
		if _, err := f.Do(ctx, r); err != nil {
			t.Fatalf("%s %s: %v", p.Name, r.URL, err)
		}
	}
	return next(ctx, t, w)
}

func TestProfilesSendTheHeadersOfTheBrowserTheyClaim(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // two browsers' cold starts on a busy machine
	defer cancel()
	browsers := map[string]realBrowser{
		"chromium":    {fetcher.TLSChrome156, "chromium-156-linux", chromiumVisit},
		"firefox-esr": {fetcher.TLSFirefox153, "firefox-153-linux", firefoxVisit},
	}
	for name, b := range browsers {
		for set, xhr := range xhrSets {
			w := startWitness(t, xhr)
			stop := b.visit(t, w)
			real := next(ctx, t, w)
			stop() // what it sent is in; the next browser starts alone
			for _, k := range []fetcher.Kind{fetcher.Navigate, fetcher.XHR} {
				t.Logf("%s, %s, %s: %d headers, %s: %s", name, set, k, len(real.of(k).Fields), real.of(k).Proto,
					strings.Join(names(real.of(k).Fields), " "))
			}
			for _, p := range fetcher.Profiles() {
				if p.Fingerprint() != b.fingerprint {
					continue
				}
				t.Run(set+"/"+p.Name, func(t *testing.T) {
					got := crawlqVisit(ctx, t, w, p, xhr)
					for _, k := range []fetcher.Kind{fetcher.Navigate, fetcher.XHR} {
						compareHeaders(t, k, p, p.Name == b.linux, real.of(k), got.of(k))
					}
				})
			}
		}
	}
}

// ownValues are the headers whose value is the profile's own when the
// profile claims another platform than the browser measured.
var ownValues = map[string]bool{"user-agent": true, "sec-ch-ua": true, "sec-ch-ua-platform": true}

// compareHeaders wants crawlq's request got to have the real browser's
// header names in its order and its values: the same build's profile
// exactly (a headless UA's "HeadlessChrome" read as "Chrome"), another
// platform's with its own user agent and client hints.
func compareHeaders(t *testing.T, k fetcher.Kind, p fetcher.Profile, same bool, real, got testbed.WitnessedRequest) {
	t.Helper()
	if got.Proto != real.Proto {
		t.Errorf("%s: protocol %s, real browser %s", k, got.Proto, real.Proto)
	}
	if d := cmp.Diff(names(real.Fields), names(got.Fields)); d != "" {
		t.Errorf("%s: header names in order (-real +crawlq):\n%s", k, d)
	}
	want := map[string]string{}
	for _, f := range real.Fields {
		want[f.Name] = strings.ReplaceAll(f.Value, "HeadlessChrome/", "Chrome/")
	}
	have := map[string]string{}
	for _, f := range got.Fields {
		have[f.Name] = f.Value
		if !same && ownValues[f.Name] {
			want[f.Name] = f.Value
		}
	}
	if !same && (have["user-agent"] != p.UserAgent || have["sec-ch-ua"] != p.SecCHUA) {
		t.Errorf("%s: user agent %q and sec-ch-ua %q are not the profile's", k, have["user-agent"], have["sec-ch-ua"])
	}
	if d := cmp.Diff(want, have); d != "" {
		t.Errorf("%s: header values (-real +crawlq):\n%s", k, d)
	}
}

func names(fs []testbed.HeaderField) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}
