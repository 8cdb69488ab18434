package testbed

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
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
	for i, tc := range []struct {
		name, url string
		header    map[string]string
		refused   string // "" when served
	}{
		{"chrome xhr to the wildberries api", wbSearch, chromeXHRHeaders(), ""},
		{"a page load of the wildberries api", wbSearch, chromeNavHeaders(), "sec-fetch-dest"},
		{"chrome without sec-fetch", wbSearch, with(chromeXHRHeaders(), map[string]string{"Sec-Fetch-Mode": "", "Sec-Fetch-Dest": "", "Sec-Fetch-Site": ""}), "sec-fetch"},
		{"an api call with a page's accept", wbSearch, with(chromeXHRHeaders(), map[string]string{"Accept": "text/html,*/*"}), "accept"},
		{"wildberries api call without deviceid", wbSearch, with(chromeXHRHeaders(), map[string]string{"Deviceid": ""}), "deviceid"},
		{"wildberries api call without x-requested-with", wbSearch, with(chromeXHRHeaders(), map[string]string{"X-Requested-With": ""}), "x-requested-with"},
		{"wildberries api call without referer", wbSearch, with(chromeXHRHeaders(), map[string]string{"Referer": ""}), "referer"},
		{"chrome without client hints", wbSearch, with(chromeXHRHeaders(), map[string]string{"Sec-Ch-Ua": ""}), "sec-ch-ua"},
		{"firefox with chrome's client hints", wbSearch, with(chromeXHRHeaders(), map[string]string{"User-Agent": firefox153UA}), "sec-ch-ua"},
		{"chrome page load of ozon", ozonSearch, chromeNavHeaders(), ""},
		{"an xhr where ozon serves a page", ozonSearch, with(chromeXHRHeaders(), nil), "sec-fetch-dest"},
		{"no browser claimed", wbSearch, map[string]string{"User-Agent": "curl/8.5"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, tc.url, nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
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
	for _, tc := range []struct {
		name, ua, kind string
		order          []string
		refused        bool
	}{
		{"chrome navigation", chrome156UA, kindNavigate, []string{"sec-ch-ua", "upgrade-insecure-requests", "user-agent", "accept", "sec-fetch-site", "accept-encoding", "priority"}, false},
		{"chrome navigation in go's order", chrome156UA, kindNavigate, []string{"accept", "accept-encoding", "sec-ch-ua", "user-agent"}, true},
		{"chrome xhr with page headers between", chrome156UA, kindXHR, []string{"deviceid", "user-agent", "accept", "sec-fetch-site", "referer", "priority"}, false},
		{"firefox xhr", firefox153UA, kindXHR, []string{"user-agent", "accept", "referer", "x-requested-with", "sec-fetch-dest", "te"}, false},
		{"firefox xhr in chrome's order", firefox153UA, kindXHR, []string{"accept", "user-agent", "sec-fetch-dest"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := orderMismatch(ClaimedBrowserFamily(tc.ua), tc.kind, tc.order); (got != "") != tc.refused {
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
		{Name: "x-queryid", Value: "qid17649000000001234567890"}, {Name: "x-requested-with", Value: "XMLHttpRequest"},
		{Name: "x-spa-version", Value: "13.15.1"}, {Name: "x-userid", Value: "0"}}
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
