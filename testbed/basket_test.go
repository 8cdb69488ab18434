package testbed

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBasketHostOf: the CDN's layout is the public table to basket-52,
// hosts of 768 vols past it, and vol 9000 moved to basket-40.
func TestBasketHostOf(t *testing.T) {
	for _, tc := range []struct {
		nm   int64
		want int
	}{
		{67000001, 4}, {14399999, 1}, {14400000, 2}, {283799999, 17}, {283800000, 18},
		{497398643, 27}, {1280469586, 45}, {900012345, 40}, {917399999, 39},
		{1882199999, 52}, {1882200000, 53}, {1958999999, 53}, {1959000000, 54},
		{2050012345, 55}, {2200012345, 57},
	} {
		if got := BasketHostOf(tc.nm); got != tc.want {
			t.Errorf("BasketHostOf(%d) = %d, want %d", tc.nm, got, tc.want)
		}
	}
}

// TestBasketHosts: through a farm proxy, over http and https, a basket
// product's card.json is served by its basket host alone (every other
// basket host and the site's own host answer 404); a catalog product's
// by its basket host and the site's own host; the log names the host of
// every request.
func TestBasketHosts(t *testing.T) {
	tb := startTB(t, Config{Sites: map[string]SiteRules{SiteWildberries: {}}})
	for _, secure := range []bool{false, true} {
		tb.Log.Reset()
		c := farmClient(t, tb)
		own := tb.SiteURL(SiteWildberries)
		if secure {
			own = tb.HTTPSSiteURL(SiteWildberries)
		}
		pattern := tb.BasketPattern(secure)
		for _, p := range append(BasketProducts(), tb.Catalog.Products(SiteWildberries)[0]) {
			nm, _ := strconv.ParseInt(p.ID, 10, 64)
			path := WBCardJSONPath(nm)
			for n := 1; n <= 60; n++ {
				want := http.StatusNotFound
				if n == BasketHostOf(nm) {
					want = http.StatusOK
				}
				checkCard(t, c, strings.Replace(pattern, "basket-NN", fmt.Sprintf("basket-%02d", n), 1)+path, p, want)
			}
			want := http.StatusOK
			if _, err := tb.Catalog.Product(SiteWildberries, p.ID); err != nil {
				want = http.StatusNotFound // a basket product: on its basket host alone
			}
			checkCard(t, c, own+path, p, want)
		}
		checkLoggedHosts(t, tb.Log.Entries())
	}
}

// farmClient sends through the testbed's first farm proxy and trusts its CA.
func farmClient(t *testing.T, tb *Testbed) *http.Client {
	t.Helper()
	u, err := url.Parse(tb.Farm.Proxies()[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: tb.CA.Pool()}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// checkCard GETs u: want's status, and on 200 p's card.
func checkCard(t *testing.T, c *http.Client, u string, p Product, want int) {
	t.Helper()
	a := get(t, c, u)
	if a.status != want {
		t.Errorf("GET %s: status %d, want %d", u, a.status, want)
		return
	}
	var card wbCard
	if want == http.StatusOK && (json.Unmarshal(a.body, &card) != nil || strconv.FormatInt(card.NMID, 10) != p.ID || card.IMTName != p.Title) {
		t.Errorf("GET %s: card %s, want %s %q", u, a.body, p.ID, p.Title)
	}
}

// checkLoggedHosts: each entry's Host is the one its path was asked of.
func checkLoggedHosts(t *testing.T, entries []Entry) {
	t.Helper()
	hosts := map[string]int{}
	for _, e := range entries {
		if e.Site != SiteWildberries || (e.Host != "127.0.0.1" && !isBasketHost(e.Host)) {
			t.Errorf("entry %+v: want a wildberries entry naming its host", e)
		}
		if e.Status == http.StatusOK && isBasketHost(e.Host) {
			n, _ := basketNumber(e.Host)
			nm, _ := strconv.ParseInt(strings.Split(e.Path, "/")[3], 10, 64)
			if BasketHostOf(nm) != n {
				t.Errorf("entry %+v: served by basket-%02d, the card is on %d", e, n, BasketHostOf(nm))
			}
		}
		hosts[e.Host]++
	}
	if len(hosts) != 61 {
		t.Errorf("log names %d hosts, want 60 basket hosts and the site's own", len(hosts))
	}
}
