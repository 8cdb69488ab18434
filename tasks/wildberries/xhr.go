package wildberries

import (
	"net/url"
	"strings"

	"crawlq/tasks/site"
)

// SPAVersion is the x-spa-version the site's pages sent in January 2026
// (Rix70/Wb_price_checker get_price.py @47a9ed6).
const SPAVersion = "13.15.1"

// xhr is how the site's pages call its APIs: every URL crawlq fetches
// is one, with the headers public clients of 2026 send (plomio
// wb/headers.py @63e347a, Rix70 get_price.py), from the page a user
// would be on.
func xhr() site.XHR {
	return site.XHR{
		All: true,
		Headers: []site.Header{
			{Name: "deviceid", Value: "site_{deviceid}"},
			{Name: "x-queryid", Value: "{queryid}"},
			{Name: "x-requested-with", Value: "XMLHttpRequest"},
			{Name: "x-spa-version", Value: SPAVersion},
			{Name: "x-userid", Value: "0"},
		},
		From: xhrFrom,
	}
}

// xhrFrom is the page whose script calls apiURL: the search page of a
// search, the product page of a card, the home page otherwise.
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
	return web + "/"
}
