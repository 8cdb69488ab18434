package testbed

import (
	"bufio"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTestbedProxiesReachSites sends whoami through every proxy of the
// written proxy file to every site and expects each proxy's own IP.
func TestTestbedProxiesReachSites(t *testing.T) {
	tb := startTB(t, Config{Proxies: 3, Farm: FarmConfig{Auth: true, SOCKS5Every: 3}})
	f, err := os.Open(tb.ProxiesFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got, want []string
	sc := bufio.NewScanner(f)
	for i := 0; sc.Scan(); i++ {
		u, err := url.Parse(sc.Text())
		if err != nil {
			t.Fatal(err)
		}
		tr := &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}
		c := &http.Client{Transport: tr}
		for _, site := range SiteNames {
			a := get(t, c, tb.SiteURL(site)+WhoamiPath)
			got = append(got, strings.TrimSpace(string(a.body)))
			want = append(want, tb.Farm.Proxies()[i].IP)
		}
		tr.CloseIdleConnections()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("whoami through the proxy file (-want +got):\n%s", diff)
	}
	if len(tb.Sites()) != 3 {
		t.Errorf("Sites() = %v", tb.Sites())
	}
}

func TestCatalogDeterministic(t *testing.T) {
	a, b := NewCatalog(7, 300), NewCatalog(7, 300)
	if diff := cmp.Diff(a.Products(SiteOzon), b.Products(SiteOzon)); diff != "" {
		t.Errorf("same seed, different catalogs:\n%s", diff)
	}
	if cmp.Equal(a.Products(SiteOzon), NewCatalog(8, 300).Products(SiteOzon)) {
		t.Error("different seeds gave the same catalog")
	}
	for _, p := range a.Search(SiteAvito, "Кофе", 1) {
		if !strings.Contains(strings.ToLower(p.Title), "кофе") {
			t.Errorf("search кофе found %q", p.Title)
		}
	}
	all := a.Matches(SiteWildberries, "")
	if len(all) != 300 || a.Pages(SiteWildberries, "") != 3 || len(a.Search(SiteWildberries, "", 4)) != 0 {
		t.Errorf("pagination: %d matches, %d pages", len(all), a.Pages(SiteWildberries, ""))
	}
	p := all[42]
	if got, err := a.Product(SiteWildberries, p.ID); err != nil || got != p {
		t.Errorf("Product(%s) = %+v, %v", p.ID, got, err)
	}
}
