package avito

import (
	"time"

	"crawlq/proxies"
	"crawlq/tasks/site"
)

// Name is the site's registry name.
const Name = "avito"

// Kind names.
const (
	KindSearch   = "search"
	KindCategory = "category"
	KindItem     = "item"
	// KindSearchAPI is a search through the JSON endpoint ItemsPath.
	KindSearchAPI = "search-api"
)

// ItemsPath is the JSON search endpoint the site's pages call for more
// results (web/1/js/items; evidence in docs/sites.md).
const ItemsPath = "/web/1/js/items"

// ClearanceCookie is the cookie QRATOR's proof of work sets once solved
// (captured 2026-08-27; docs/sites.md).
const ClearanceCookie = "_adcc"

// WebURL is the real host.
const WebURL = "https://www.avito.ru"

// DefaultLocation is used when a request names none: all of Russia.
const DefaultLocation = "rossiya"

// DefaultMinInterval is the default politeness interval per proxy.
const DefaultMinInterval = 3 * time.Second

func init() { site.Register(New()) }

// New returns the Avito site with its defaults: queue "avito",
// residential proxies (Avito bans datacenter ranges quickly), one request
// per three seconds per proxy.
func New() *site.Site {
	return &site.Site{
		Name:        Name,
		Queue:       Name,
		MinInterval: DefaultMinInterval,
		Class:       proxies.Residential,
		Endpoints:   map[string]string{site.EndpointWeb: WebURL},
		XHR:         site.XHR{Paths: []string{"/web/"}}, // web/1/js/items JSON
		// QRATOR's proof of work (439) is solved over HTTP; it sets _adcc.
		Challenge: site.Challenge{Cookie: ClearanceCookie, Solve: solvePoW},
		Kinds: map[string]site.Kind{
			KindSearch: {Name: KindSearch, Listing: true, Follow: KindItem,
				Normalize: normalizeSearch, Build: listingURL, Parse: parseSERP},
			KindCategory: {Name: KindCategory, Listing: true, Follow: KindItem,
				Normalize: normalizeCategory, Build: listingURL, Parse: parseSERP},
			KindSearchAPI: {Name: KindSearchAPI, Listing: true, Follow: KindItem,
				Normalize: normalizeAPI, Build: apiURL, Parse: parseJSItems},
			KindItem: {Name: KindItem,
				Normalize: normalizeItem, Build: itemURL, Parse: parseItem},
		},
	}
}
