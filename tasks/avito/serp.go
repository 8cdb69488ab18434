package avito

import (
	"bytes"
	"encoding/json"
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"crawlq/results/item"
	"crawlq/tasks/site"
)

// parseSERP parses a search or category results page: one
// div[data-marker="item"] card per listing, with the seller, its rating
// and review count where the card has them (2025 cards do; the 2024
// real-estate cards do not). A JSON body is a js/items answer.
func parseSERP(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	if site.IsJSON(body) {
		return parseJSItems(s, body, pageURL, at)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return site.Page{}, site.BadBody("parse html: %w", err)
	}
	cards := doc.Find(`[data-marker="item"][data-item-id]`)
	if cards.Length() == 0 {
		if err := emptySERP(doc); err != nil {
			return site.Page{}, err
		}
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
func emptySERP(doc *goquery.Document) error {
	if to, ok := mfeRedirect(doc); ok {
		return site.Unrecognized("redirect stub to %q, not a results page", to)
	}
	if doc.Find(`[data-marker="catalog-serp"], [data-marker="page-title"]`).Length() == 0 {
		return site.Unrecognized(`no [data-marker="item"] cards and no catalog-serp`)
	}
	return nil
}

// mfeRedirect reads a redirect stub from the page's
// <script data-mfe-state="true"> JSON: loaderData.data (or a top-level
// object) with "redirected" and "url".
func mfeRedirect(doc *goquery.Document) (string, bool) {
	found, to := false, ""
	doc.Find(`script[data-mfe-state="true"]`).EachWithBreak(func(_ int, sc *goquery.Selection) bool {
		var st struct {
			redirect
			LoaderData struct {
				Data redirect `json:"data"`
			} `json:"loaderData"`
		}
		if json.Unmarshal([]byte(html.UnescapeString(sc.Text())), &st) != nil {
			return true
		}
		for _, r := range []redirect{st.LoaderData.Data, st.redirect} {
			if r.Redirected {
				found, to = true, r.URL
			}
		}
		return !found
	})
	return to, found
}

// redirect is the {redirected, url} of a redirect stub.
type redirect struct {
	Redirected bool   `json:"redirected"`
	URL        string `json:"url"`
}

// cardSeller fills the card's seller, the seller's rating and review
// count where the card has them (2025 cards; selectors of
// Stepan2222000/avito-library catalog_parser/helpers.py): the name is the
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
	it.Rating, _ = site.Rating(score)
	it.Reviews, _ = site.Count(c.Find(`[data-marker="seller-info/summary"]`).First().Text())
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
