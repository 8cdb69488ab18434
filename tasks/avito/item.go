package avito

import (
	"bytes"
	"strconv"
	"time"

	"github.com/PuerkitoBio/goquery"

	"crawlq/results/item"
	"crawlq/tasks/site"
)

// parseItem parses a listing page: its state (buyerItem, see state.go)
// first, the markup (data-marker) for what the state lacks. A JSON body
// is not a listing page's answer (the buyerItem JSON alone is a client's
// extract, not a page).
func parseItem(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	if site.IsJSON(body) {
		return site.Page{}, site.Unrecognized("JSON answer where a listing page was expected")
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return site.Page{}, site.BadBody("parse html: %w", err)
	}
	it := pageItem(s, doc, pageURL, at)
	if b, ok := pageBuyerItem(body); ok {
		it = b.toItem(baseURL(s, pageURL), it)
	}
	if it.ID == "" || it.Title == "" {
		return site.Page{}, site.Unrecognized(`no buyerItem state and no item-view/item-id or item-view/title-info`)
	}
	return site.Page{Items: []item.Item{it}}, nil
}

// toItem is the state's listing, each field the state lacks taken from
// markup (the item the page's markup gives).
func (b buyerItem) toItem(base string, markup item.Item) item.Item {
	it := markup
	it.ID = itoa64(b.Item.ID)
	it.Title = firstOf(site.Clean(b.Item.Title), markup.Title)
	if p := b.Item.Price; p != nil {
		if k, ok := site.Kopecks(p.String()); ok {
			it.Price = k
		}
	}
	if u := firstOf(b.SeoCanonicalURL, b.Item.URL); u != "" {
		it.URL = site.Resolve(base, u, true)
	}
	if b.Seller != nil {
		it.Seller = firstOf(site.Clean(b.Seller.Name), markup.Seller)
	}
	if r := b.Rating; r != nil {
		it.Rating = firstRating(r.ScoreFloat, markup.Rating)
		if n, ok := site.Count(r.Summary); ok {
			it.Reviews = n
		}
	}
	return it
}

// firstRating is r when it is a rating (0–5, not 0), else fallback.
func firstRating(r, fallback float64) float64 {
	if r > 0 && r <= 5 {
		return r
	}
	return fallback
}

// pageItem leaves InStock nil: a listing has no stock (see doc.go).
func pageItem(s *site.Site, doc *goquery.Document, pageURL string, at time.Time) item.Item {
	price := doc.Find(`[data-marker="item-view/item-price"][itemprop="price"]`).First()
	it := item.Item{Site: Name, FetchedAt: at,
		Title:    site.Clean(doc.Find(`h1[data-marker="item-view/title-info"]`).First().Text()),
		Currency: currency(doc.Find(`[itemprop="priceCurrency"]`).First().AttrOr("content", "")),
		Seller:   sellerName(doc),
	}
	it.Price, _ = site.Kopecks(price.AttrOr("content", ""))
	it.Rating, _ = site.Rating(doc.Find(`[data-marker="seller-info/score"]`).First().Text())
	it.Reviews, _ = site.Count(doc.Find(`[data-marker="seller-info/summary"]`).First().Text())
	it.URL = itemPageURL(s, doc, pageURL)
	it.ID = itemID(doc, it.URL)
	return it
}

// itemID: the "№ 3889452914" text, else the URL's _<id> suffix.
func itemID(doc *goquery.Document, pageURL string) string {
	if n, ok := site.Count(doc.Find(`[data-marker="item-view/item-id"]`).First().Text()); ok && n > 0 {
		return itoa(n)
	}
	return idFromLink(pageURL)
}

func sellerName(doc *goquery.Document) string {
	for _, sel := range []string{`[data-marker="seller-info/name"]`, `[data-marker="seller-link/link"]`} {
		if n := site.Clean(doc.Find(sel).First().Text()); n != "" {
			return n
		}
	}
	return ""
}

// itemPageURL: og:url or the canonical link, else the page URL, without
// query and fragment.
func itemPageURL(s *site.Site, doc *goquery.Document, pageURL string) string {
	for _, u := range []string{
		doc.Find(`meta[property="og:url"]`).AttrOr("content", ""),
		doc.Find(`link[rel="canonical"]`).AttrOr("href", ""),
		pageURL,
	} {
		if idFromLink(u) != "" {
			return site.Resolve(baseURL(s, pageURL), u, true)
		}
	}
	return site.Resolve("", pageURL, true)
}

func itoa(n int) string     { return strconv.Itoa(n) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
