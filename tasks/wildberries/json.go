package wildberries

import (
	"encoding/json"
	"strconv"
	"time"

	"crawlq/results/item"
	"crawlq/tasks/site"
)

// product is one entry of products[] in the search, catalog and card APIs,
// current and legacy fields together.
type product struct {
	ID             int64   `json:"id"`
	Name           string  `json:"name"`
	Brand          string  `json:"brand"`
	Supplier       string  `json:"supplier"`
	ReviewRating   float64 `json:"reviewRating"`
	NMReviewRating float64 `json:"nmReviewRating"`
	Rating         float64 `json:"rating"`
	Feedbacks      int     `json:"feedbacks"`
	NMFeedbacks    int     `json:"nmFeedbacks"`
	PriceU         int64   `json:"priceU"`
	SalePriceU     int64   `json:"salePriceU"`
	Sizes          []size  `json:"sizes"`
	// TotalQuantity is the units in stock, in the card v4 detail and the
	// newer search and catalog answers; nil when absent (the legacy
	// catalog's priceU answer).
	TotalQuantity *int `json:"totalQuantity"`
}

// size is one size of a product. Stocks, per warehouse, is in the card v4
// detail answer only ([] when sold out); nil when the answer leaves it
// out.
type size struct {
	Price *struct {
		Basic   int64 `json:"basic"`
		Product int64 `json:"product"`
	} `json:"price"`
	Stocks []struct {
		Qty int `json:"qty"`
	} `json:"stocks"`
}

// stocked reports a warehouse with a positive qty.
func (sz size) stocked() bool {
	for _, st := range sz.Stocks {
		if st.Qty > 0 {
			return true
		}
	}
	return false
}

// productList is a search/catalog/card response: products[] at the top
// level (v4 card, newer search) or under data (legacy, v5 search). A
// search that matches nothing is answered with the query-resolution
// object instead: shardKey and query, or metadata.catalog_value, and no
// products key (see resolved).
type productList struct {
	Total    int        `json:"total"`
	Products *[]product `json:"products"`
	Data     *struct {
		Total    int        `json:"total"`
		Products *[]product `json:"products"`
	} `json:"data"`
	ShardKey string `json:"shardKey"`
	Metadata *struct {
		CatalogValue string `json:"catalog_value"`
	} `json:"metadata"`
}

// resolved says l is the search's query-resolution object: the site's
// own "nothing found" (docs/sites.md; the built-in rule's
// empty_json_paths say the same).
func (l productList) resolved() bool {
	return l.ShardKey != "" || (l.Metadata != nil && l.Metadata.CatalogValue != "")
}

// decodeProducts returns the products of a JSON body, none for the
// query-resolution object, or an error when the body is not JSON or
// has neither. total is the result count when the response gives one,
// else 0.
func decodeProducts(body []byte) (ps []product, total int, err error) {
	var l productList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, 0, site.BadBody("json: %w", err)
	}
	switch {
	case l.Products != nil:
		return *l.Products, l.Total, nil
	case l.Data != nil && l.Data.Products != nil:
		return *l.Data.Products, l.Data.Total, nil
	case l.resolved():
		return nil, 0, nil
	}
	return nil, 0, site.Unrecognized("no products[] or data.products[] in the JSON, and no query resolution (shardKey, metadata.catalog_value)")
}

// toItem maps a product to an Item.
func (p product) toItem(s *site.Site, at time.Time) item.Item {
	id := strconv.FormatInt(p.ID, 10)
	price, old := p.prices()
	return item.Item{
		Site: Name, ID: id, Title: site.Clean(p.Name),
		Price: price, OldPrice: old, Currency: "RUB",
		Seller: site.Clean(p.Supplier), Rating: p.rating(), Reviews: p.reviews(),
		InStock: p.inStock(), URL: ItemURL(s, id), FetchedAt: at,
	}
}

// inStock: a positive totalQuantity or a size with a positive stock qty
// is in stock; a totalQuantity of 0, or sizes whose stocks are all empty,
// is out of stock. nil when the answer has neither (the legacy catalog's
// sizes carry no stocks and it has no totalQuantity).
func (p product) inStock() *bool {
	known := p.TotalQuantity != nil
	in := known && *p.TotalQuantity > 0
	for _, sz := range p.Sizes {
		known = known || sz.Stocks != nil
		in = in || sz.stocked()
	}
	if !known {
		return nil
	}
	return &in
}

// prices: the first size in stock (else the cheapest priced size) gives
// sizes[].price.product and .basic; legacy salePriceU/priceU otherwise.
// The old price is kept only when above the price.
func (p product) prices() (price, old int64) {
	if sz, ok := p.pricedSize(); ok {
		price, old = sz.Price.Product, sz.Price.Basic
	} else {
		price, old = p.SalePriceU, p.PriceU
		if price == 0 {
			price = old
		}
	}
	if old <= price {
		old = 0
	}
	return price, old
}

func (p product) pricedSize() (size, bool) {
	var best size
	found := false
	for _, sz := range p.Sizes {
		if sz.Price == nil || sz.Price.Product <= 0 {
			continue
		}
		if len(sz.Stocks) > 0 {
			return sz, true
		}
		if !found || sz.Price.Product < best.Price.Product {
			best, found = sz, true
		}
	}
	return best, found
}

func (p product) rating() float64 {
	for _, r := range []float64{p.ReviewRating, p.NMReviewRating, p.Rating} {
		if r > 0 && r <= 5 {
			return r
		}
	}
	return 0
}

func (p product) reviews() int {
	if p.Feedbacks > 0 {
		return p.Feedbacks
	}
	return p.NMFeedbacks
}

// basketCard is the static card.json of the basket CDN: no price, no
// rating.
type basketCard struct {
	NMID    int64  `json:"nm_id"`
	IMTName string `json:"imt_name"`
}

// decodeBasketCard reports ok when body is a basket card.json.
func decodeBasketCard(body []byte) (basketCard, bool) {
	var c basketCard
	if json.Unmarshal(body, &c) != nil || c.NMID == 0 {
		return basketCard{}, false
	}
	return c, true
}
