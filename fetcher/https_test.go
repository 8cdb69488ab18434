package fetcher_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http/cookiejar"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/fetcher"
	"crawlq/testbed"
)

// startCheckingTestbed starts a testbed whose HTTPS sites check
// fingerprints and let a proxy send as fast as it likes.
func startCheckingTestbed(t *testing.T, proxies int) *testbed.Testbed {
	t.Helper()
	fast := testbed.SiteRules{MinInterval: 0}
	tb, err := testbed.Start(context.Background(), testbed.Config{
		Proxies: proxies, CatalogSize: 300, Fingerprint: true, Dir: t.TempDir(),
		Sites: map[string]testbed.SiteRules{testbed.SiteWildberries: fast, testbed.SiteOzon: fast, testbed.SiteAvito: fast},
		Farm:  testbed.FarmConfig{Auth: true, SOCKS5Every: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	return tb
}

// outcome is what a test checks of one fetch through the testbed.
type outcome struct {
	Status  int
	Proto   string
	IP      string
	Verdict testbed.Verdict
}

// lastEntry is the newest log entry.
func lastEntry(t *testing.T, tb *testbed.Testbed) testbed.Entry {
	t.Helper()
	es := tb.Log.Entries()
	if len(es) == 0 {
		t.Fatal("the site logged no request")
	}
	return es[len(es)-1]
}

func TestHTTPSAsTheProfileThroughEveryFarmProxyKind(t *testing.T) {
	tb := startCheckingTestbed(t, 2)
	f := newFetcher(t, fetcher.Config{TLS: &tls.Config{RootCAs: tb.CA.Pool()}})
	target := tb.HTTPSSiteURL(testbed.SiteOzon) + testbed.OzonSearchPath + "?text=phone" // a page load: the navigation headers
	for i, kind := range []string{"http CONNECT with auth", "socks5 with auth"} {
		p, _ := tb.Farm.Proxy(i)
		proxy := proxyURL(t, tb.Farm, i)
		for _, prof := range fetcher.Profiles() {
			t.Run(kind+"/"+prof.Name, func(t *testing.T) {
				resp, err := f.Do(context.Background(), fetcher.Request{URL: target, Proxy: proxy, Profile: prof})
				if err != nil {
					t.Fatalf("Do: %v", err)
				}
				e := lastEntry(t, tb)
				got := outcome{resp.Status, resp.Proto, e.IP, e.Verdict}
				want := outcome{200, "HTTP/2.0", p.IP, testbed.VerdictOK}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
				known, _ := testbed.KnownBrowser(testbed.ClaimedBrowser(prof.UserAgent))
				if e.H2 != known.H2 || !testbed.JA4SameBrowser(e.JA4, known.JA4) {
					t.Errorf("site saw ja4 %s h2 %s, want %s and %s", e.JA4, e.H2, known.JA4, known.H2)
				}
				fp, _ := fetcher.FingerprintByName(prof.TLS)
				if !inOrder(strings.Split(e.HeaderOrder, ","), fp.HeaderOrder) {
					t.Errorf("headers sent in order %s, not the browser's %v", e.HeaderOrder, fp.HeaderOrder)
				}
			})
		}
	}
}

// inOrder reports whether every name of sent is in order and sent follows
// its order.
func inOrder(sent, order []string) bool {
	at := -1
	for _, n := range sent {
		i := slices.Index(order, n)
		if i <= at {
			return false
		}
		at = i
	}
	return len(sent) > 3
}

func TestPlainGoTLSIsRefusedByTheCheckingSites(t *testing.T) {
	tb := startCheckingTestbed(t, 2)
	f := newFetcher(t, fetcher.Config{TLS: &tls.Config{RootCAs: tb.CA.Pool()}, PlainTLS: true})
	for _, site := range testbed.SiteNames {
		t.Run(site, func(t *testing.T) {
			resp, err := f.Do(context.Background(), fetcher.Request{URL: tb.HTTPSSiteURL(site) + "/", Proxy: proxyURL(t, tb.Farm, 0)})
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			if e := lastEntry(t, tb); resp.Status != 403 || e.Verdict != testbed.VerdictFingerprint {
				t.Errorf("status %d verdict %s, want 403 and %s", resp.Status, e.Verdict, testbed.VerdictFingerprint)
			}
		})
	}
	if n := tb.Log.FingerprintRefusals(); n != len(testbed.SiteNames) {
		t.Errorf("fingerprint refusals %d, want %d", n, len(testbed.SiteNames))
	}
}

// TestHTTPSSessionKeepsItsCookiesAndConnection sends a session's pages
// over HTTP/2: the site sees one TLS connection, the session cookie kept
// across pages.
func TestHTTPSSessionKeepsItsCookiesAndConnection(t *testing.T) {
	tb := startCheckingTestbed(t, 2)
	f := newFetcher(t, fetcher.Config{TLS: &tls.Config{RootCAs: tb.CA.Pool()}})
	jar, _ := cookiejar.New(nil)
	proxy := proxyURL(t, tb.Farm, 0)
	prof, _ := fetcher.ProfileByName("firefox-153-linux")
	base := tb.HTTPSSiteURL(testbed.SiteOzon) + testbed.OzonSearchPath
	for page := range 3 {
		u := fmt.Sprintf("%s?text=phone&page=%d", base, page+1)
		if _, err := f.Do(context.Background(), fetcher.Request{URL: u, Proxy: proxy, Jar: jar, Profile: prof}); err != nil {
			t.Fatalf("page %d: %v", page+1, err)
		}
	}
	es := tb.Log.Entries()
	if es[0].Session == "" || !es[0].Issued {
		t.Fatalf("first page got no session cookie: %+v", es[0])
	}
	for _, e := range es[1:] {
		if e.Session != es[0].Session || e.Issued || e.Verdict != testbed.VerdictOK {
			t.Errorf("page %d: session %q issued %v verdict %s, want %q kept and ok", e.Seq, e.Session, e.Issued, e.Verdict, es[0].Session)
		}
	}
	for _, e := range es[1:] {
		if e.Conn != es[0].Conn {
			t.Errorf("page %d came on TLS connection %d, page 1 on %d: want one reused connection", e.Seq, e.Conn, es[0].Conn)
		}
	}
}
