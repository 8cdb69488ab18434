package avito

import (
	"bytes"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"crawlq/tasks/item"
	"crawlq/tasks/site"
)

// parseSERP parses a search or category results page: one
// div[data-marker="item"] card per listing. Seller and rating are not on
// the cards; the item page has them.
func parseSERP(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return site.Page{}, site.BadBody("parse html: %w", err)
	}
	cards := doc.Find(`[data-marker="item"][data-item-id]`)
	if cards.Length() == 0 && doc.Find(`[data-marker="catalog-serp"], [data-marker="page-title"]`).Length() == 0 {
		return site.Page{}, site.Unrecognized(`no [data-marker="item"] cards and no catalog-serp`)
	}
	base := baseURL(s, pageURL)
	var page site.Page
	cards.Each(func(_ int, c *goquery.Selection) {
		if it, ok := cardItem(c, base, at); ok {
			page.Items = append(page.Items, it)
			page.Follow = append(page.Follow, site.Target{Site: Name, Kind: KindItem, ID: it.ID, URL: it.URL})
		}
	})
	page.Next = hasNext(doc, pageURL)
	return page, nil
}

// hasNext: the next-page button has a link, or a numbered page button
// is past the current page (the p parameter of pageURL, default 1).
func hasNext(doc *goquery.Document, pageURL string) bool {
	next := doc.Find(`[data-marker="pagination-button/nextPage"]`).First()
	if next.AttrOr("href", "") != "" && next.AttrOr("aria-disabled", "") != "true" {
		return true
	}
	current := 1
	if u, err := url.Parse(pageURL); err == nil {
		if n, err := strconv.Atoi(u.Query().Get("p")); err == nil && n > 0 {
			current = n
		}
	}
	found := false
	doc.Find(`[data-marker^="pagination-button/page("]`).EachWithBreak(func(_ int, b *goquery.Selection) bool {
		n, _ := strconv.Atoi(strings.TrimSpace(b.AttrOr("data-value", b.Text())))
		found = n > current
		return !found
	})
	return found
}

// cardItem leaves InStock nil: a listing has no stock (see doc.go).
func cardItem(c *goquery.Selection, base string, at time.Time) (item.Item, bool) {
	id := strings.TrimSpace(c.AttrOr("data-item-id", ""))
	link := c.Find(`a[data-marker="item-title"]`).First()
	title := site.Clean(link.Find(`[itemprop="name"]`).First().Text())
	if title == "" {
		title = site.Clean(link.AttrOr("title", ""))
	}
	if !digits(id) || title == "" {
		return item.Item{}, false
	}
	offer := c.Find(`[data-marker="item-price"]`).First()
	price, _ := site.Kopecks(offer.Find(`meta[itemprop="price"]`).AttrOr("content", ""))
	return item.Item{
		Site: Name, ID: id, Title: title, Price: price,
		Currency: currency(offer.Find(`meta[itemprop="priceCurrency"]`).AttrOr("content", "")),
		URL:      site.Resolve(base, link.AttrOr("href", ""), true), FetchedAt: at,
	}, true
}

// baseURL resolves relative links: against the page URL when known, else
// the site's web endpoint.
func baseURL(s *site.Site, pageURL string) string {
	if site.Origin(pageURL) != "" {
		return pageURL
	}
	return s.Endpoint(site.EndpointWeb) + "/"
}

func currency(c string) string {
	if c = strings.TrimSpace(c); c != "" {
		return c
	}
	return "RUB"
}

func digits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
