package wildberries

import (
	"net/url"
	"strconv"
	"time"

	"crawlq/results/item"
	"crawlq/tasks/site"
)

// PageSize is how many products a full page of the search and catalog
// APIs holds (the real catalog sample has 100, as the testbed serves):
// a page with fewer is the last one. The built-in detection rule of
// searches says the same (page_size: 100).
const PageSize = 100

// parseListing parses a search or catalog page: the JSON API response or
// the rendered HTML page. A JSON page has a next page as hasNext says;
// the HTML page when it has a "next page" link.
func parseListing(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	if !site.IsJSON(body) {
		return parseSearchHTML(s, body, pageURL, at)
	}
	ps, total, err := decodeProducts(body)
	if err != nil {
		return site.Page{}, err
	}
	var page site.Page
	for _, p := range ps {
		if p.ID <= 0 {
			continue
		}
		page.Items = append(page.Items, p.toItem(s, at))
	}
	page.Follow = follow(s, page.Items)
	page.Next = hasNext(len(ps), pageNumber(pageURL), total)
	return page, nil
}

// hasNext says a JSON listing page of n products (as the answer lists
// them, before any is skipped) has a next page: it is full (a short page
// is the last), and when the answer gives the listing's total (0: none)
// the pages so far, all as full as this one, hold fewer.
func hasNext(n, page, total int) bool {
	return n >= PageSize && (total == 0 || page*n < total)
}

// parseProduct parses a card v4 detail response (every product in it), a
// basket card.json, or a rendered product page.
func parseProduct(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	if !site.IsJSON(body) {
		return parseProductHTML(s, body, pageURL, at)
	}
	if c, ok := decodeBasketCard(body); ok {
		return site.Page{Items: []item.Item{c.toItem(s, at)}}, nil
	}
	ps, _, err := decodeProducts(body)
	if err != nil {
		return site.Page{}, err
	}
	var page site.Page
	for _, p := range ps {
		if p.ID > 0 {
			page.Items = append(page.Items, p.toItem(s, at))
		}
	}
	if len(page.Items) == 0 {
		return site.Page{}, site.Unrecognized("card response has no product (removed or wrong nm)")
	}
	return page, nil
}

func follow(s *site.Site, items []item.Item) []site.Target {
	ts := make([]site.Target, 0, len(items))
	for _, it := range items {
		ts = append(ts, site.Target{Site: Name, Kind: KindProduct, ID: it.ID,
			URL: productURL(s, site.Request{ID: it.ID})})
	}
	return ts
}

// pageNumber is the page parameter of a listing URL, default 1.
func pageNumber(pageURL string) int {
	u, err := url.Parse(pageURL)
	if err != nil {
		return 1
	}
	n, err := strconv.Atoi(u.Query().Get("page"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}
