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

// Real hosts of the endpoints.
const (
	WebURL     = "https://www.wildberries.ru"
	SearchURL  = "https://search.wb.ru"
	CardURL    = "https://card.wb.ru"
	CatalogURL = "https://catalog.wb.ru"
)

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
		},
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

// ItemURL is the public product page of id under the site's web endpoint.
func ItemURL(s *site.Site, id string) string {
	return s.Endpoint(site.EndpointWeb) + "/catalog/" + id + "/detail.aspx"
}
