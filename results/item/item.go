// Package item holds the one record every site parser produces.
package item

import "time"

// Item is one product or listing, the same shape for every site.
type Item struct {
	// Site is "wildberries", "ozon", "avito" or a generic page job's site.
	Site string `json:"site"`
	// ID is the site's own product or listing ID.
	ID    string `json:"id"`
	Title string `json:"title"`
	// Price and OldPrice are integer kopecks (1 RUB = 100); 0 when unknown.
	Price    int64  `json:"price"`
	OldPrice int64  `json:"old_price,omitempty"`
	Currency string `json:"currency"`
	Seller   string `json:"seller,omitempty"`
	// Rating is 0–5; Reviews the number of reviews or ratings.
	Rating  float64 `json:"rating,omitempty"`
	Reviews int     `json:"reviews,omitempty"`
	// InStock is whether the item can be bought now; nil when the page
	// does not say.
	InStock   *bool     `json:"in_stock,omitempty"`
	URL       string    `json:"url"`
	FetchedAt time.Time `json:"fetched_at"`
}
