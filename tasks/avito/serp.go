package avito

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"crawlq/results/item"
	"crawlq/tasks/site"
)

// parseSERP parses a search or category results page. The page's
// catalog state (data-mfe-state JSON) is read first; each card
// (div[data-marker="item"]) fills what the state lacks: the seller, its
// rating and review count where the card has them (2025 cards do; the
// 2024 real-estate cards do not). A page without state is read from its
// cards alone. A JSON body is a js/items answer.
func parseSERP(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	if site.IsJSON(body) {
		return parseJSItems(s, body, pageURL, at)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return site.Page{}, site.BadBody("parse html: %w", err)
	}
	states := pageStates(doc)
	cards := doc.Find(`[data-marker="item"][data-item-id]`)
	list := catalogItems(states)
	if cards.Length() == 0 && len(list) == 0 {
		if err := emptySERP(doc, states); err != nil {
			return site.Page{}, err
		}
	}
	base := baseURL(s, pageURL)
	items := cardItems(cards, base, at)
	if len(list) > 0 {
		items = stateItems(list, items, base, at)
	}
	var page site.Page
	for _, it := range items {
		page.Items = append(page.Items, it)
		page.Follow = append(page.Follow, site.Target{Site: Name, Kind: KindItem, ID: it.ID, URL: it.URL})
	}
	page.Next = hasNext(doc, pageURL)
	return page, nil
}

// cardItems reads the page's cards in page order.
func cardItems(cards *goquery.Selection, base string, at time.Time) []item.Item {
	var out []item.Item
	cards.Each(func(_ int, c *goquery.Selection) {
		if it, ok := cardItem(c, base, at); ok {
			out = append(out, it)
		}
	})
	return out
}

// stateItems are the catalog state's listings in its order, each with
// the seller, rating and review count its card has where the state has
// none.
func stateItems(list []jsItem, cards []item.Item, base string, at time.Time) []item.Item {
	byID := make(map[string]item.Item, len(cards))
	for _, c := range cards {
		byID[c.ID] = c
	}
	var out []item.Item
	for _, j := range list {
		it, ok := j.toItem(base, at)
		if !ok {
			continue
		}
		fillSeller(&it, byID[it.ID])
		out = append(out, it)
	}
	return out
}

// fillSeller fills it's empty seller fields from the markup's.
func fillSeller(it *item.Item, markup item.Item) {
	it.Seller = firstOf(it.Seller, markup.Seller)
	if it.Rating == 0 {
		it.Rating = markup.Rating
	}
	if it.Reviews == 0 {
		it.Reviews = markup.Reviews
	}
}

// hasNext: the next-page button has a link, or a numbered page button
// is past the current page (the p parameter of pageURL, default 1).
func hasNext(doc *goquery.Document, pageURL string) bool {
	next := doc.Find(`[data-marker="pagination-button/nextPage"]`).First()
	if next.AttrOr("href", "") != "" && next.AttrOr("aria-disabled", "") != "true" {
		return true
	}
	current := pageOf(pageURL)
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
	title := firstOf(site.Clean(link.Find(`[itemprop="name"]`).First().Text()),
		site.Clean(link.AttrOr("title", "")), site.Clean(link.Text()))
	if !digits(id) || title == "" {
		return item.Item{}, false
	}
	offer := c.Find(`[data-marker="item-price"]`).First()
	price, _ := site.Kopecks(offer.Find(`meta[itemprop="price"]`).AttrOr("content", ""))
	it := item.Item{
		Site: Name, ID: id, Title: title, Price: price,
		Currency: currency(offer.Find(`meta[itemprop="priceCurrency"]`).AttrOr("content", "")),
		URL:      site.Resolve(base, link.AttrOr("href", ""), true), FetchedAt: at,
	}
	cardSeller(c, &it)
	return it, true
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

// emptySERP says why a results page without cards is not the site's own
// empty answer: a redirect stub (in the data-mfe-state JSON, or a page
// with no catalog), or nil for a real empty catalog.
func emptySERP(doc *goquery.Document, states []mfeState) error {
	for _, st := range states {
		if to, ok := st.redirectTo(); ok {
			return site.Redirected(to, "a results page")
		}
	}
	if doc.Find(`[data-marker="catalog-serp"], [data-marker="page-title"]`).Length() == 0 {
		return site.Unrecognized(`no [data-marker="item"] cards and no catalog-serp`)
	}
	return nil
}

// redirect is the {redirected, url} of a redirect stub.
type redirect struct {
	Redirected bool   `json:"redirected"`
	URL        string `json:"url"`
}

// cardSeller fills the card's seller, the seller's rating and review
// count ("384 отзыва") where the card has them (2025 cards; selectors of
// Stepan2222000/avito-library catalog_parser/helpers.py, and the
// seller-rating/summary other public parsers read): the name is the
// first <p> of the seller link in div.iva-item-sellerInfo-*, else that
// block's first <p>.
func cardSeller(c *goquery.Selection, it *item.Item) {
	info := c.Find(`div[class*="iva-item-sellerInfo-"]`).First()
	link := info.Find(`a[href*="/brands/"], a[href*="/user/"]`).First()
	if link.Length() == 0 {
		link = c.Find(`a[href*="/brands/"], a[href*="/user/"]`).First()
	}
	name := site.Clean(link.Find("p").First().Text())
	if name == "" && link.Length() > 0 {
		name = site.Clean(strings.SplitN(strings.TrimSpace(link.Text()), "\n", 2)[0])
	}
	it.Seller = firstOf(name, site.Clean(info.Find("p").First().Text()))
	score := firstOf(c.Find(`[data-marker="seller-info/score"]`).First().Text(),
		c.Find(`[data-marker="seller-rating/score"]`).First().Text())
	summary := firstOf(c.Find(`[data-marker="seller-info/summary"]`).First().Text(),
		c.Find(`[data-marker="seller-rating/summary"]`).First().Text())
	it.Rating, _ = site.Rating(score)
	it.Reviews, _ = site.Count(summary)
}

// firstOf returns the first non-blank string.
func firstOf(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}
