package testbed

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"go.uber.org/zap"
)

// VerdictHeaders: the request's headers are not those the browser its
// User-Agent claims sends for this kind of request (a page load or the
// site's API call); answered like the real site answers a bot (403 with
// its block page), no ban.
const VerdictHeaders Verdict = "headers"

// Request kinds a site's endpoints expect.
const (
	kindNavigate = "navigate"
	kindXHR      = "xhr"
)

// browserOrder is the order real browsers send their own headers in
// (HTTP/2, measured from Debian's chromium 156 and firefox-esr 153);
// headers a page's script adds are left out of the comparison.
var browserOrder = map[string]map[string][]string{
	"chrome": {
		kindNavigate: {"sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "upgrade-insecure-requests",
			"user-agent", "accept", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-user", "sec-fetch-dest",
			"referer", "accept-encoding", "accept-language", "cookie", "priority"},
		kindXHR: {"sec-ch-ua-platform", "user-agent", "sec-ch-ua", "sec-ch-ua-mobile", "accept", "origin",
			"sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest", "referer", "accept-encoding", "accept-language",
			"cookie", "priority"},
	},
	"firefox": {
		kindNavigate: {"user-agent", "accept", "accept-language", "accept-encoding", "referer", "cookie",
			"upgrade-insecure-requests", "sec-fetch-dest", "sec-fetch-mode", "sec-fetch-site", "sec-fetch-user",
			"priority", "te"},
		kindXHR: {"user-agent", "accept", "accept-language", "accept-encoding", "referer",
			"sec-fetch-dest", "sec-fetch-mode", "sec-fetch-site", "priority", "te"},
	},
}

// chromeXHRWithAll is Chromium's own order on a fetch() that adds all
// five of Wildberries' search headers: there user-agent comes after
// sec-ch-ua-mobile. Every other set measured (none, the card API's
// deviceid, x-requested-with and x-spa-version, and the sets in
// fetcher's chromiumOrders) keeps browserOrder's. Chromium orders the
// headers before accept by a hash of their names; measured with
// Debian's chromium 156.0.8078.114 on 2026-12-05 (fetcher's
// TestProfilesSendTheHeadersOfTheBrowserTheyClaim, issue 36.9).
var chromeXHRWithAll = []string{"sec-ch-ua-platform", "sec-ch-ua", "sec-ch-ua-mobile", "user-agent", "accept"}

// requestKind is what a request to path on site must be: a page load,
// the site's API call, or "" for paths not judged (scripts, testbed
// endpoints).
func requestKind(site, path string) string {
	switch site {
	case SiteWildberries: // crawled through its APIs; "/" is the challenge page
		switch {
		case path == "/", strings.HasSuffix(path, "/detail.aspx"): // the challenge page, a product page
			return kindNavigate
		case isWBAPI(path), strings.HasSuffix(path, ".json"), path == UpstreamsPath: // the APIs, the basket's card.json and map
			return kindXHR
		} // the wall's own script and stylesheet, the favicon: not judged
	case SiteOzon:
		switch {
		case strings.HasPrefix(path, "/api/"):
			return kindXHR
		case strings.HasPrefix(path, OzonSearchPath), strings.HasPrefix(path, OzonProductPath), path == "/":
			return kindNavigate
		}
	case SiteAvito:
		switch {
		case strings.HasPrefix(path, "/web/"):
			return kindXHR
		case !strings.Contains(path, "."): // listings and items; not assets
			return kindNavigate
		}
	}
	return ""
}

// wbAPIHeaders are the headers Wildberries' pages add to their API calls
// (plomio wb/headers.py, Rix70 get_price.py, 2026). Its search gets all
// five; its card and catalog APIs all but the search's own (wbSearchOnly);
// its basket CDN none. A call without one it wants, or with one it does
// not, is answered 403 (issue 36.4).
var wbAPIHeaders = map[string]*regexp.Regexp{
	"x-requested-with": regexp.MustCompile(`^XMLHttpRequest$`),
	"x-spa-version":    regexp.MustCompile(`^\d+\.\d+\.\d+$`),
	"x-userid":         regexp.MustCompile(`^\d+$`),
	"deviceid":         regexp.MustCompile(`^site_[0-9a-f]{32}$`),
	"x-queryid":        regexp.MustCompile(`^qid\d{13,}$`),
}

// wbSearchOnly are the headers the site's pages send to its search only.
var wbSearchOnly = map[string]bool{"x-queryid": true, "x-userid": true}

// HeaderMismatch says why a request of kind with header h (fields in the
// order sent, nil when unknown: HTTP/1.1) is not what the browser its
// User-Agent claims sends; "" when it is, or claims no browser.
func HeaderMismatch(site, path, kind string, h http.Header, order []string) string {
	family := ClaimedBrowserFamily(h.Get("User-Agent"))
	if family == "" || kind == "" {
		return ""
	}
	if why := kindMismatch(family, kind, h); why != "" {
		return why
	}
	if why := orderMismatch(family, kind, h, order); why != "" {
		return why
	}
	switch {
	case site != SiteWildberries || kind != kindXHR:
	case isWBAPI(path):
		return wbMismatch(h, wbSearchPath(path))
	case strings.HasSuffix(path, "/card.json"), path == UpstreamsPath:
		return wbBasketMismatch(h)
	}
	return ""
}

// ClaimedBrowserFamily is "chrome" or "firefox" as ua claims, "" for
// anything else.
func ClaimedBrowserFamily(ua string) string {
	family, _, _ := strings.Cut(ClaimedBrowser(ua), "/")
	return family
}

// kindMismatch checks the headers every request of kind from family has.
func kindMismatch(family, kind string, h http.Header) string {
	want := map[string]string{"sec-fetch-mode": "navigate", "sec-fetch-dest": "document"}
	if kind == kindXHR {
		want = map[string]string{"sec-fetch-mode": "cors", "sec-fetch-dest": "empty"}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if got := h.Get(name); got != want[name] {
			return fmt.Sprintf("%s %s with %s %q, want %q", family, kind, name, got, want[name])
		}
	}
	accept := h.Get("Accept")
	switch {
	case h.Get("Sec-Fetch-Site") == "":
		return fmt.Sprintf("%s %s without sec-fetch-site", family, kind)
	case kind == kindNavigate && !strings.HasPrefix(accept, "text/html"):
		return fmt.Sprintf("%s navigation with accept %q", family, accept)
	case kind == kindXHR && strings.Contains(accept, "text/html"):
		return fmt.Sprintf("%s api call with a page's accept %q", family, accept)
	case family == "chrome" && h.Get("Sec-Ch-Ua") == "":
		return "chrome without sec-ch-ua"
	case family == "firefox" && h.Get("Sec-Ch-Ua") != "":
		return "firefox with chrome's sec-ch-ua"
	}
	return ""
}

// orderMismatch checks that the browser's own headers come in its order.
func orderMismatch(family, kind string, h http.Header, order []string) string {
	ref := browserOrder[family][kind]
	if family == "chrome" && kind == kindXHR && carriesAll(h, wbAPIHeaders) {
		ref = slices.Concat(chromeXHRWithAll, ref[slices.Index(ref, "accept")+1:])
	}
	last, lastName := -1, ""
	for _, name := range order {
		i := slices.Index(ref, name)
		if i < 0 {
			continue
		}
		if i < last {
			return fmt.Sprintf("%s %s sends %s before %s", family, kind, lastName, name)
		}
		last, lastName = i, name
	}
	return ""
}

// isWBAPI reports whether path is one of Wildberries' own API calls
// (search, cards, catalog), which carry its headers; not its basket CDN.
func isWBAPI(path string) bool {
	return strings.HasPrefix(path, "/__internal/") || strings.HasPrefix(path, WBLegacySearchPath) ||
		strings.HasPrefix(path, WBLegacyDetailPath) || strings.HasPrefix(path, "/catalog/")
}

// carriesAll says h carries every header of set.
func carriesAll(h http.Header, set map[string]*regexp.Regexp) bool {
	for name := range set {
		if h.Get(name) == "" {
			return false
		}
	}
	return true
}

// wbMismatch checks Wildberries' own API headers: on its search all of
// them, elsewhere all but the search's own, which must be absent.
func wbMismatch(h http.Header, search bool) string {
	endpoint := "api call"
	if search {
		endpoint = "search"
	}
	for _, name := range slices.Sorted(maps.Keys(wbAPIHeaders)) {
		v := h.Get(name)
		switch {
		case !search && wbSearchOnly[name] && v != "":
			return fmt.Sprintf("wildberries %s with the search's %s", endpoint, name)
		case !search && wbSearchOnly[name]:
		case !wbAPIHeaders[name].MatchString(v):
			return fmt.Sprintf("wildberries %s with %s %q", endpoint, name, v)
		}
	}
	if h.Get("Referer") == "" {
		return "wildberries " + endpoint + " without referer"
	}
	return ""
}

// wbBasketMismatch checks a basket CDN call: none of the site's API
// headers, and, from another site (a basket host; on the site's own host
// a card.json is same-origin), the calling page's Origin: the origin its
// Referer names (www.wildberries.ru on the real site, the testbed's
// address here).
func wbBasketMismatch(h http.Header) string {
	for _, name := range slices.Sorted(maps.Keys(wbAPIHeaders)) {
		if h.Get(name) != "" {
			return "wildberries basket call with the api's " + name
		}
	}
	o := h.Get("Origin")
	if h.Get("Sec-Fetch-Site") == "cross-site" && (o == "" || h.Get("Referer") != o+"/") {
		return fmt.Sprintf("wildberries basket call with origin %q from page %q", o, h.Get("Referer"))
	}
	return ""
}

// checkHeaders refuses, with checks on, a request whose headers are not
// those of the browser it claims for the endpoint's kind: 403 with the
// site's block page, the reason kept on e.
func (s *Site) checkHeaders(w http.ResponseWriter, r *http.Request, e *Entry) bool {
	if !s.headerCheck {
		return false
	}
	var order []string
	if h2, ok := h2RequestOf(r); ok {
		for _, f := range h2.Fields {
			if !f.IsPseudo() {
				order = append(order, f.Name)
			}
		}
	}
	why := HeaderMismatch(s.name, r.URL.Path, requestKind(s.name, r.URL.Path), r.Header, order)
	if why == "" {
		return false
	}
	e.Refused = why
	s.zl.Debug("headers refused", zap.String("ip", e.IP), zap.String("why", why))
	s.pages.blockPage(w, http.StatusForbidden)
	return true
}

// HeaderRefusals counts the requests refused for their headers, by
// reason.
func (l *Log) HeaderRefusals() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, e := range l.entries {
		if e.Verdict == VerdictHeaders {
			out[e.Refused]++
		}
	}
	return out
}
