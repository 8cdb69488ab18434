package testbed

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Site names.
const (
	SiteWildberries = "wildberries"
	SiteOzon        = "ozon"
	SiteAvito       = "avito"
)

// SiteNames lists the simulated sites.
var SiteNames = []string{SiteWildberries, SiteOzon, SiteAvito}

// DefaultCatalogSize is the number of products per site.
const DefaultCatalogSize = 3000

// PageSizes is how many search results a site shows per page, as the real
// sites do.
var PageSizes = map[string]int{SiteWildberries: 100, SiteOzon: 36, SiteAvito: 50}

// ErrNotFound is returned for an unknown site or product id.
var ErrNotFound = errors.New("not found")

// Product is one catalog item, as a site shows it.
type Product struct {
	Site  string `json:"site"`
	ID    string `json:"id"`
	Title string `json:"title"`
	Brand string `json:"brand"`
	// Price and OldPrice are in kopecks (whole rubles); OldPrice is the
	// pre-discount price, at least Price.
	Price    int64   `json:"price"`
	OldPrice int64   `json:"old_price"`
	Seller   string  `json:"seller"`
	SellerID int     `json:"seller_id"`
	Rating   float64 `json:"rating"` // 1.0..5.0, one decimal
	Reviews  int     `json:"reviews"`
	// URL is the path of the product page on its site.
	URL string `json:"url"`
	// Slug is the transliterated title used in URLs.
	Slug string `json:"slug"`
	// Category is the Avito category segment of URL (set on every site).
	Category string `json:"category"`
	// Location is the Avito city segment of URL (set on every site).
	Location string `json:"location"`
	// Stock is how many units the site has; 0 means out of stock (about
	// one product in OutOfStockEvery). Wildberries shows it (totalQuantity,
	// sizes[].stocks[].qty), Ozon's product page as JSON-LD availability;
	// Avito's pages have no stock.
	Stock int `json:"stock"`
}

// InStock reports whether the product can be bought now.
func (p Product) InStock() bool { return p.Stock > 0 }

// Catalog is the deterministic product set of every site, generated from
// a seed. It is read-only after NewCatalog and safe for concurrent use.
type Catalog struct {
	sites map[string]*siteCatalog
	// moves is how prices move over time (Moving); nil: they never do.
	moves *priceMoves
}

type siteCatalog struct {
	products []*Product
	words    [][]string // products[i]'s title words
	byID     map[string]*Product
}

// NewCatalog generates size products per site from seed (size 0 means
// DefaultCatalogSize). The same seed always gives the same catalog.
func NewCatalog(seed int64, size int) *Catalog {
	if size <= 0 {
		size = DefaultCatalogSize
	}
	c := &Catalog{sites: map[string]*siteCatalog{}}
	for i, site := range SiteNames {
		sc := generate(site, rand.New(rand.NewPCG(uint64(seed), uint64(i+1))), size)
		for _, p := range sc.products {
			p.Stock = stock(seed, p)
		}
		c.sites[site] = sc
	}
	return c
}

// OutOfStockEvery: about one catalog product in this many is out of stock.
const OutOfStockEvery = 10

// stock draws p's stock from a stream of its own, keyed by the seed, the
// site and the ID, so that it takes nothing from the catalog's generator:
// every other field of a seed's catalog is what it was before products
// had a stock.
func stock(seed int64, p *Product) int {
	h := fnv.New64a()
	h.Write([]byte(p.Site + "/" + p.ID))
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	if rng.IntN(OutOfStockEvery) == 0 {
		return 0
	}
	return 1 + rng.IntN(2500)
}

// idBase is where each site's ids start; they look like the real ones.
var idBase = map[string]int64{SiteWildberries: 67_000_000, SiteOzon: 933_000_000, SiteAvito: 3_889_000_000}

func generate(site string, rng *rand.Rand, size int) *siteCatalog {
	sc := &siteCatalog{byID: map[string]*Product{}}
	id := idBase[site] + rng.Int64N(100_000)
	for range size {
		id += 1 + rng.Int64N(50)
		p := newProduct(site, strconv.FormatInt(id, 10), rng)
		sc.products = append(sc.products, p)
		sc.words = append(sc.words, words(p.Title))
		sc.byID[p.ID] = p
	}
	return sc
}

func newProduct(site, id string, rng *rand.Rand) *Product {
	g := goods[rng.IntN(len(goods))]
	brand := brands[rng.IntN(len(brands))]
	title := g.head + " " + brand + " " + g.attrs[rng.IntN(len(g.attrs))]
	price := (100 + rng.Int64N(20_000)) * 100
	seller := rng.IntN(len(sellerNames))
	p := &Product{
		Site: site, ID: id, Title: title, Brand: brand,
		Price:    price,
		OldPrice: price * (100 + rng.Int64N(150)) / 100 / 100 * 100,
		Seller:   sellerNames[seller], SellerID: 100_000 + seller*7919,
		Rating:  float64(30+rng.IntN(21)) / 10,
		Reviews: rng.IntN(50_000),
		Slug:    slug(title), Category: g.avitoCategory,
		Location: avitoLocations[rng.IntN(len(avitoLocations))],
	}
	p.URL = productPath(p)
	return p
}

// productPath is the product page path in the site's own URL scheme.
func productPath(p *Product) string {
	switch p.Site {
	case SiteOzon:
		return "/product/" + p.Slug + "-" + p.ID + "/"
	case SiteAvito:
		return "/" + p.Location + "/" + p.Category + "/" + strings.ReplaceAll(p.Slug, "-", "_") + "_" + p.ID
	}
	return "/catalog/" + p.ID + "/detail.aspx"
}

// Products returns every product of site in catalog order.
func (c *Catalog) Products(site string) []Product {
	sc := c.sites[site]
	if sc == nil {
		return nil
	}
	out := make([]Product, len(sc.products))
	for i, p := range sc.products {
		out[i] = *p
	}
	return out
}

// Product returns site's product id as generated (before any price
// move; see ProductAt), or ErrNotFound.
func (c *Catalog) Product(site, id string) (Product, error) {
	sc := c.sites[site]
	if sc == nil {
		return Product{}, fmt.Errorf("site %q: %w", site, ErrNotFound)
	}
	p, ok := sc.byID[id]
	if !ok {
		return Product{}, fmt.Errorf("%s product %s: %w", site, id, ErrNotFound)
	}
	return *p, nil
}

// Matches returns, in catalog order, every product of site whose title
// holds all words of query (case-insensitive; an empty query matches all).
func (c *Catalog) Matches(site, query string) []Product {
	sc := c.sites[site]
	if sc == nil {
		return nil
	}
	q := words(query)
	var out []Product
	for i, p := range sc.products {
		if hasAll(sc.words[i], q) {
			out = append(out, *p)
		}
	}
	return out
}

func hasAll(title, query []string) bool {
	for _, w := range query {
		if !slices.Contains(title, w) {
			return false
		}
	}
	return true
}

// Search returns page (from 1) of query's results on site, PageSizes[site]
// per page; nil past the last page.
func (c *Catalog) Search(site, query string, page int) []Product {
	all := c.Matches(site, query)
	size := PageSizes[site]
	if page < 1 || size == 0 || (page-1)*size >= len(all) {
		return nil
	}
	return all[(page-1)*size : min(page*size, len(all))]
}

// Pages is the number of result pages of query on site.
func (c *Catalog) Pages(site, query string) int {
	n, size := len(c.Matches(site, query)), PageSizes[site]
	if size == 0 {
		return 0
	}
	return (n + size - 1) / size
}
