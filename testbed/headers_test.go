package testbed

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"crawlq/fetcher"
)

const (
	chrome156UA  = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
	firefox153UA = "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0"
)

// chromeXHRHeaders are a chrome fetch() of Wildberries' search API from
// its search page, with the site's own headers.
func chromeXHRHeaders() map[string]string {
	return map[string]string{"User-Agent": chrome156UA, "Sec-Ch-Ua": `"Chromium";v="156"`, "Accept": "*/*",
		"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty",
		"Referer":          "https://www.wildberries.ru/catalog/0/search.aspx?search=phone",
		"X-Requested-With": "XMLHttpRequest", "X-Spa-Version": "13.15.1", "X-Userid": "0",
		"Deviceid": "site_0123456789abcdef0123456789abcdef", "X-Queryid": "qid17649000000001234567890"}
}

// chromeCardHeaders are a chrome fetch() of Wildberries' card API from a
// product page: the site's headers but the search's own.
func chromeCardHeaders() map[string]string {
	return with(chromeXHRHeaders(), map[string]string{"X-Queryid": "", "X-Userid": "",
		"Referer": "https://www.wildberries.ru/catalog/1/detail.aspx"})
}

// chromeBasketHeaders are a chrome fetch() of a basket card.json from a
// product page: another site, so Origin, and none of the site's headers.
func chromeBasketHeaders() map[string]string {
	return with(chromeCardHeaders(), map[string]string{"Deviceid": "", "X-Requested-With": "", "X-Spa-Version": "",
		"Sec-Fetch-Site": "cross-site", "Origin": "https://www.wildberries.ru", "Referer": "https://www.wildberries.ru/"})
}

func chromeNavHeaders() map[string]string {
	return map[string]string{"User-Agent": chrome156UA, "Sec-Ch-Ua": `"Chromium";v="156"`,
		"Accept": "text/html,application/xhtml+xml,*/*;q=0.8", "Upgrade-Insecure-Requests": "1",
		"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-User": "?1"}
}

// with is h with the changes ch applied ("" deletes a header).
func with(h map[string]string, ch map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for k, v := range ch {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

func TestSitesRefuseRequestsThatAreNotTheBrowserTheyClaim(t *testing.T) {
	tb := startTB(t, Config{})
	wbSearch := tb.SiteURL(SiteWildberries) + WBSearchPath + "?query=phone&page=1"
	ozonSearch := tb.SiteURL(SiteOzon) + OzonSearchPath + "?text=phone"
	wbCard := tb.SiteURL(SiteWildberries) + WBDetailPath + "?nm=1"
	id, _ := strconv.ParseInt(tb.Catalog.Products(SiteWildberries)[0].ID, 10, 64)
	basket, bHost := tb.SiteURL(SiteWildberries)+WBCardJSONPath(id), BasketHost(BasketHostOf(id))
	for i, tc := range []struct {
		name, url string
		header    map[string]string
		refused   string // "" when served
		host      string // the Host asked, "" for the URL's
	}{
		{"chrome xhr to the wildberries api", wbSearch, chromeXHRHeaders(), "", ""},
		{"a page load of the wildberries api", wbSearch, chromeNavHeaders(), "sec-fetch-dest", ""},
		{"chrome without sec-fetch", wbSearch, with(chromeXHRHeaders(), map[string]string{"Sec-Fetch-Mode": "", "Sec-Fetch-Dest": "", "Sec-Fetch-Site": ""}), "sec-fetch", ""},
		{"an api call with a page's accept", wbSearch, with(chromeXHRHeaders(), map[string]string{"Accept": "text/html,*/*"}), "accept", ""},
		{"wildberries api call without deviceid", wbSearch, with(chromeXHRHeaders(), map[string]string{"Deviceid": ""}), "deviceid", ""},
		{"wildberries api call without x-requested-with", wbSearch, with(chromeXHRHeaders(), map[string]string{"X-Requested-With": ""}), "x-requested-with", ""},
		{"wildberries api call without referer", wbSearch, with(chromeXHRHeaders(), map[string]string{"Referer": ""}), "referer", ""},
		{"chrome without client hints", wbSearch, with(chromeXHRHeaders(), map[string]string{"Sec-Ch-Ua": ""}), "sec-ch-ua", ""},
		{"firefox with chrome's client hints", wbSearch, with(chromeXHRHeaders(), map[string]string{"User-Agent": firefox153UA}), "sec-ch-ua", ""},
		{"chrome page load of ozon", ozonSearch, chromeNavHeaders(), "", ""},
		{"an xhr where ozon serves a page", ozonSearch, with(chromeXHRHeaders(), nil), "sec-fetch-dest", ""},
		{"no browser claimed", wbSearch, map[string]string{"User-Agent": "curl/8.5"}, "", ""},
		{"chrome xhr to the wildberries card api", wbCard, chromeCardHeaders(), "", ""},
		{"the card api with the search's x-queryid", wbCard, with(chromeCardHeaders(), map[string]string{"X-Queryid": "qid17649000000001234567890"}), "x-queryid", ""},
		{"the card api with the search's x-userid", wbCard, with(chromeCardHeaders(), map[string]string{"X-Userid": "0"}), "x-userid", ""},
		{"the card api without x-spa-version", wbCard, with(chromeCardHeaders(), map[string]string{"X-Spa-Version": ""}), "x-spa-version", ""},
		{"the search without x-userid", wbSearch, with(chromeXHRHeaders(), map[string]string{"X-Userid": ""}), "x-userid", ""},
		{"chrome xhr to a basket host", basket, chromeBasketHeaders(), "", bHost},
		{"a basket host with the api's deviceid", basket, with(chromeBasketHeaders(), map[string]string{"Deviceid": "site_0123456789abcdef0123456789abcdef"}), "deviceid", bHost},
		{"a basket host with the api's x-spa-version", basket, with(chromeBasketHeaders(), map[string]string{"X-Spa-Version": "13.15.1"}), "x-spa-version", bHost},
		{"a basket host without origin", basket, with(chromeBasketHeaders(), map[string]string{"Origin": ""}), "origin", bHost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, tc.url, nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := clientFrom(t, fmt.Sprintf("127.0.0.%d", 10+i), false).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			e := lastEntry(t, tb)
			switch {
			case tc.refused == "" && (resp.StatusCode != http.StatusOK || e.Verdict != VerdictOK):
				t.Errorf("status %d, verdict %s (%s); want it served", resp.StatusCode, e.Verdict, e.Refused)
			case tc.refused != "" && (resp.StatusCode != http.StatusForbidden || e.Verdict != VerdictHeaders || !strings.Contains(e.Refused, tc.refused)):
				t.Errorf("status %d, verdict %s, refused %q; want 403 for %s", resp.StatusCode, e.Verdict, e.Refused, tc.refused)
			}
		})
	}
	if got := tb.Log.HeaderRefusals(); len(got) == 0 {
		t.Errorf("no header refusals counted")
	}
}

// lastEntry is the request log's newest entry.
func lastEntry(t *testing.T, tb *Testbed) Entry {
	t.Helper()
	es := tb.Log.Entries()
	if len(es) == 0 {
		t.Fatal("nothing in the request log")
	}
	return es[len(es)-1]
}

func TestHeaderOrderIsTheClaimedBrowsers(t *testing.T) {
	card, search := http.Header{}, http.Header{}
	for k, v := range chromeCardHeaders() {
		card.Set(k, v)
	}
	for k, v := range chromeXHRHeaders() {
		search.Set(k, v)
	}
	// The orders Debian's chromium 156 sent on 2026-12-05 (issue 36.9):
	// a fetch() without the site's headers, with the card API's three, and
	// with the search's five.
	plain := []string{"sec-ch-ua-platform", "user-agent", "sec-ch-ua", "sec-ch-ua-mobile", "accept", "sec-fetch-site",
		"sec-fetch-mode", "sec-fetch-dest", "referer", "accept-encoding", "accept-language", "priority"}
	cardOrder := slices.Concat([]string{"deviceid", "sec-ch-ua-platform", "x-requested-with", "user-agent", "sec-ch-ua",
		"x-spa-version", "sec-ch-ua-mobile"}, plain[4:])
	searchOrder := slices.Concat([]string{"sec-ch-ua-platform", "sec-ch-ua", "sec-ch-ua-mobile", "deviceid",
		"x-requested-with", "user-agent", "x-userid", "x-spa-version", "x-queryid"}, plain[4:])
	for _, tc := range []struct {
		name, ua, kind string
		header         http.Header
		order          []string
		refused        bool
	}{
		{"chrome navigation", chrome156UA, kindNavigate, nil, []string{"sec-ch-ua", "upgrade-insecure-requests", "user-agent", "accept", "sec-fetch-site", "accept-encoding", "priority"}, false},
		{"chrome navigation in go's order", chrome156UA, kindNavigate, nil, []string{"accept", "accept-encoding", "sec-ch-ua", "user-agent"}, true},
		{"chrome xhr with page headers between", chrome156UA, kindXHR, card, []string{"deviceid", "user-agent", "accept", "sec-fetch-site", "referer", "priority"}, false},
		{"chrome fetch() measured", chrome156UA, kindXHR, nil, plain, false},
		{"chrome fetch() of the card api measured", chrome156UA, kindXHR, card, cardOrder, false},
		{"chrome fetch() of the search measured", chrome156UA, kindXHR, search, searchOrder, false},
		{"chrome fetch() with user-agent after sec-ch-ua-mobile", chrome156UA, kindXHR, nil,
			slices.Concat([]string{"sec-ch-ua-platform", "sec-ch-ua", "sec-ch-ua-mobile", "user-agent"}, plain[4:]), true},
		{"the card api in the search's order", chrome156UA, kindXHR, card,
			[]string{"sec-ch-ua-platform", "sec-ch-ua", "sec-ch-ua-mobile", "deviceid", "user-agent", "accept"}, true},
		{"the search in a plain fetch()'s order", chrome156UA, kindXHR, search, slices.Concat(
			[]string{"deviceid", "sec-ch-ua-platform", "user-agent", "sec-ch-ua", "sec-ch-ua-mobile"}, plain[4:]), true},
		{"firefox xhr", firefox153UA, kindXHR, nil, []string{"user-agent", "accept", "referer", "x-requested-with", "sec-fetch-dest", "te"}, false},
		{"firefox xhr in chrome's order", firefox153UA, kindXHR, nil, []string{"accept", "user-agent", "sec-fetch-dest"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := orderMismatch(ClaimedBrowserFamily(tc.ua), tc.kind, tc.header, tc.order); (got != "") != tc.refused {
				t.Errorf("orderMismatch = %q, want refused %v", got, tc.refused)
			}
		})
	}
}

// TestCrawlqProfilesPassTheHeaderCheck sends each crawlq profile's
// navigation and Wildberries API call over HTTPS (HTTP/2, where the
// header order is judged): the right kind passes, the wrong one is
// refused.
func TestCrawlqProfilesPassTheHeaderCheck(t *testing.T) {
	clock := newFakeClock()
	tb := startTB(t, Config{Fingerprint: true, Now: clock.Now})
	f := fetcher.New(fetcher.Config{TLS: &tls.Config{RootCAs: tb.CA.Pool()}})
	defer f.Close()
	base := tb.HTTPSSiteURL(SiteWildberries)
	wb := []fetcher.HeaderField{{Name: "deviceid", Value: "site_0123456789abcdef0123456789abcdef"},
		{Name: "x-requested-with", Value: "XMLHttpRequest"}, {Name: "x-spa-version", Value: "13.15.1"}}
	for _, p := range fetcher.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			for _, tc := range []struct {
				kind fetcher.Kind
				want int
			}{{fetcher.XHR, http.StatusOK}, {fetcher.Navigate, http.StatusForbidden}} {
				clock.Advance(time.Minute) // past the site's interval
				resp, err := f.Do(context.Background(), fetcher.Request{URL: base + WBDetailPath + "?nm=1", Kind: tc.kind,
					Referer: base + "/catalog/1/detail.aspx", Extra: wb, Profile: p})
				if err != nil {
					t.Fatal(err)
				}
				if e := lastEntry(t, tb); resp.Status != tc.want && resp.Status != http.StatusNotFound {
					t.Errorf("%s: status %d (%s %s), want %d", tc.kind, resp.Status, e.Verdict, e.Refused, tc.want)
				}
			}
		})
	}
}
