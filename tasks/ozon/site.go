package ozon

import (
	"net/url"
	"strings"
	"time"

	"crawlq/proxies"
	"crawlq/tasks/site"
)

// Name is the site's registry name.
const Name = "ozon"

// Kind names.
const (
	KindSearch   = "search"
	KindCategory = "category"
	KindProduct  = "product"
)

// WebURL is the real host.
const WebURL = "https://www.ozon.ru"

// DefaultMinInterval is the default politeness interval per proxy.
const DefaultMinInterval = 2 * time.Second

func init() { site.Register(New()) }

// New returns the Ozon site with its defaults: queue "ozon", residential
// proxies (datacenter IPs get a 307 __rr loop or "Похоже, нет
// соединения": ru-marketplace-mcp docs/ANTI_BOT.md, 2026), one request
// per two seconds per proxy.
func New() *site.Site {
	return &site.Site{
		Name:        Name,
		Queue:       Name,
		MinInterval: DefaultMinInterval,
		Class:       proxies.Residential,
		Endpoints:   map[string]string{site.EndpointWeb: WebURL},
		// entrypoint-api and composer-api JSON, called from the page with the
		// web client's name (x-o3-app-name: dweb_client, in a 2026 browser
		// extension's notes on in-page fetches of page/json/v2, read
		// 2026-12-04; docs/sites.md).
		XHR: site.XHR{Paths: []string{"/api/"}, Headers: []site.Header{{Name: "x-o3-app-name", Value: "dweb_client"}},
			From: pageOfAPICall},
		// The antibot challenge page sets the abt_data cookie and reloads.
		Challenge: site.Challenge{Cookie: "abt_data"},
		Kinds: map[string]site.Kind{
			KindSearch: {Name: KindSearch, Listing: true, Follow: KindProduct,
				Normalize: normalizeSearch, Build: searchURL, Parse: parseListing},
			KindCategory: {Name: KindCategory, Listing: true, Follow: KindProduct,
				Normalize: normalizeCategory, Build: categoryURL, Parse: parseListing},
			KindProduct: {Name: KindProduct,
				Normalize: normalizeProduct, Build: productURL, Parse: parseProduct},
		},
	}
}

// pageOfAPICall is the page whose script calls the page API apiURL: the
// page its url parameter names (/search/?text=…), on the web endpoint.
func pageOfAPICall(s *site.Site, apiURL string) string {
	web := s.Endpoint(site.EndpointWeb)
	u, err := url.Parse(apiURL)
	if err != nil || !strings.HasPrefix(u.Query().Get("url"), "/") {
		return web + "/"
	}
	return web + u.Query().Get("url")
}
