package wildberries

import (
	"net/url"
	"strings"

	"crawlq/tasks/site"
)

// SPAVersion is the x-spa-version the site's pages sent in January 2026
// (Rix70/Wb_price_checker get_price.py @871d1e9, 2026-01-20).
const SPAVersion = "13.15.1"

// Wildberries' own headers on its API calls.
var (
	hDeviceID  = site.Header{Name: "deviceid", Value: "site_{deviceid}"}
	hQueryID   = site.Header{Name: "x-queryid", Value: "{queryid}"}
	hRequested = site.Header{Name: "x-requested-with", Value: "XMLHttpRequest"}
	hSPA       = site.Header{Name: "x-spa-version", Value: SPAVersion}
	hUserID    = site.Header{Name: "x-userid", Value: "0"}
)

// xhr is how the site's pages call its APIs: every URL crawlq fetches
// is one, with the headers the site's page sends to that endpoint
// (xhrHeaders), from the page a user would be on; but the product page
// (…/catalog/ID/detail.aspx, asked under fetch: browser), a page.
func xhr() site.XHR {
	return site.XHR{
		All:        true,
		Page:       isProductPage,
		Headers:    []site.Header{hDeviceID, hQueryID, hRequested, hSPA, hUserID},
		HeadersFor: xhrHeaders,
		From:       xhrFrom,
	}
}

// xhrHeaders are the site's headers on a call of apiURL, as public
// clients of 2026 send them (docs/sites.md, "Headers per endpoint"):
// the search gets the query's x-queryid and x-userid besides deviceid,
// x-requested-with and x-spa-version; the card and catalog APIs only
// those three; the basket CDN (another site: the browser adds Origin)
// none of them.
func xhrHeaders(_ *site.Site, apiURL string) []site.Header {
	u, err := url.Parse(apiURL)
	switch {
	case err != nil:
		return nil
	case isBasket(u):
		return nil
	case isSearch(u):
		return []site.Header{hDeviceID, hQueryID, hRequested, hSPA, hUserID}
	}
	return []site.Header{hDeviceID, hRequested, hSPA}
}

// isSearch says u is a search API call.
func isSearch(u *url.URL) bool {
	return strings.Contains(u.Path, "/exactmatch/") || strings.HasSuffix(u.Path, "/search")
}

// isBasket says u is on the basket CDN: a basket-NN host or another
// wbbasket host (its upstream map's cdn.), or a card.json path (a basket
// endpoint configured as one host).
func isBasket(u *url.URL) bool {
	h := u.Hostname()
	return strings.HasPrefix(h, "basket-") || strings.Contains(h, ".wbbasket.") || cardPathRe.MatchString(u.Path)
}

// xhrFrom is the page whose script calls apiURL: the search page of a
// search, the product page of a card (card API or basket card.json),
// the home page otherwise.
func xhrFrom(s *site.Site, apiURL string) string {
	web := s.Endpoint(site.EndpointWeb)
	u, err := url.Parse(apiURL)
	if err != nil {
		return web + "/"
	}
	q := u.Query()
	switch {
	case strings.Contains(u.Path, "/search") && q.Get("query") != "":
		return web + "/catalog/0/search.aspx?search=" + url.QueryEscape(q.Get("query"))
	case q.Get("nm") != "":
		return web + "/catalog/" + q.Get("nm") + "/detail.aspx"
	}
	if m := cardPathRe.FindStringSubmatch(u.Path); m != nil {
		return web + "/catalog/" + m[1] + "/detail.aspx"
	}
	return web + "/"
}

// isProductPage says rawURL is a product page, …/catalog/ID/detail.aspx.
func isProductPage(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && detailPathRe.MatchString(u.Path)
}
