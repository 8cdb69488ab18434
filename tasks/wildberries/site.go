package wildberries

import (
	"time"

	"crawlq/proxies"
	"crawlq/tasks/site"
)

// Name is the site's registry name.
const Name = "wildberries"

// Kind names.
const (
	KindSearch   = "search"
	KindCategory = "category"
	KindProduct  = "product"
)

// Real hosts of the endpoints: the current search and card APIs are
// under www.wildberries.ru/__internal/ (HTTP 498 without a valid
// x_wbaas_token cookie, which script on the home page mints);
// LegacySearchURL and LegacyCardURL are the older hosts (api: legacy).
const (
	WebURL          = "https://www.wildberries.ru"
	SearchURL       = WebURL + internalSearch
	CardURL         = WebURL + internalCard
	CatalogURL      = "https://catalog.wb.ru"
	LegacySearchURL = "https://search.wb.ru"
	LegacyCardURL   = "https://card.wb.ru"
)

// API generations (site.Site.API).
const (
	APICurrent = "current"
	APILegacy  = "legacy"
)

// Path prefixes of the current APIs on www.wildberries.ru.
const (
	internalSearch = "/__internal/u-search"
	internalCard   = "/__internal/u-card"
)

// ClearanceCookie is the token cookie the current APIs want.
const ClearanceCookie = "x_wbaas_token"

// DefaultMinInterval is the default politeness interval per proxy.
const DefaultMinInterval = time.Second

func init() { site.Register(New()) }

// New returns the Wildberries site with its defaults: queue "wildberries",
// datacenter proxies (catalog scans), one request per second per proxy.
func New() *site.Site {
	return &site.Site{
		Name:        Name,
		Queue:       Name,
		MinInterval: DefaultMinInterval,
		Class:       proxies.Datacenter,
		Endpoints: map[string]string{
			site.EndpointWeb: WebURL, site.EndpointSearch: SearchURL,
			site.EndpointCard: CardURL, site.EndpointCatalog: CatalogURL,
			EndpointBasket: "", // BasketPattern, the host found by ProbeBasket, until set
		},
		API: APICurrent,
		APIs: map[string]map[string]string{
			APICurrent: {site.EndpointSearch: SearchURL, site.EndpointCard: CardURL},
			APILegacy:  {site.EndpointSearch: LegacySearchURL, site.EndpointCard: LegacyCardURL},
		},
		// The token comes from the home page's challenge, not the API URL.
		Challenge: site.Challenge{Page: "/", Cookie: ClearanceCookie},
		XHR:       xhr(),
		Kinds: map[string]site.Kind{
			KindSearch: {Name: KindSearch, Listing: true, Follow: KindProduct,
				Normalize: normalizeSearch, Build: searchURL, Parse: parseListing},
			KindCategory: {Name: KindCategory, Listing: true, Follow: KindProduct,
				Normalize: normalizeCategory, Build: categoryURL, Parse: parseListing},
			KindProduct: {Name: KindProduct,
				Normalize: normalizeProduct, Build: productURL, Parse: parseProduct},
			KindCard: {Name: KindCard,
				Normalize: normalizeCard, Build: cardURL, Parse: parseCard, Locate: locateCard},
		},
	}
}

// ItemURL is the public product page of id under the site's web endpoint.
func ItemURL(s *site.Site, id string) string {
	return s.Endpoint(site.EndpointWeb) + "/catalog/" + id + "/detail.aspx"
}
