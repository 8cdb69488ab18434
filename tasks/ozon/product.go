package ozon

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"crawlq/results/item"
	"crawlq/tasks/site"
)

// productStates are the product page widgets crawlq reads.
type productStates struct {
	Heading struct {
		Title string `json:"title"`
	}
	Price struct {
		Price         string `json:"price"`
		OriginalPrice string `json:"originalPrice"`
	}
	Score struct {
		ItemID       number `json:"itemId"`
		TotalScore   number `json:"totalScore"`
		ReviewsCount number `json:"reviewsCount"`
	}
	Seller sellerState
}

// sellerState is the webCurrentSeller state: the seller's name is
// sellerCell.centerBlock.title.text, its page sellerCell.common.action.link.
type sellerState struct {
	SellerCell struct {
		CenterBlock struct {
			Title struct {
				Text string `json:"text"`
			} `json:"title"`
		} `json:"centerBlock"`
		Common struct {
			Action struct {
				Link string `json:"link"`
			} `json:"action"`
		} `json:"common"`
	} `json:"sellerCell"`
}

// ldProduct is the schema.org Product in the page's JSON-LD.
type ldProduct struct {
	Type   string `json:"@type"`
	Name   string `json:"name"`
	SKU    number `json:"sku"`
	Offers struct {
		Price         number `json:"price"`
		PriceCurrency string `json:"priceCurrency"`
		URL           string `json:"url"`
		Availability  string `json:"availability"`
	} `json:"offers"`
	AggregateRating struct {
		RatingValue number `json:"ratingValue"`
		ReviewCount number `json:"reviewCount"`
	} `json:"aggregateRating"`
}

// parseProduct parses a product page or the page API's answer for it:
// widget states first, then the visible heading and seller link, then
// JSON-LD (the last two only in HTML).
func parseProduct(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	doc, st, err := productWidgets(body)
	if err != nil {
		return site.Page{}, err
	}
	var ps productStates
	for w, v := range map[string]any{"webProductHeading": &ps.Heading, "webPrice": &ps.Price,
		"webReviewProductScore": &ps.Score, "webCurrentSeller": &ps.Seller} {
		if _, err := st.first(w, v); err != nil {
			return site.Page{}, err
		}
	}
	ld := readLD(doc)
	it := productItem(s, doc, ps, ld, pageURL, at)
	if it.ID == "" || it.Title == "" {
		return site.Page{}, site.Unrecognized("no product ID or title (no webProductHeading, webReviewProductScore or JSON-LD)")
	}
	return oneItem(it), nil
}

// productWidgets reads the widget states of an HTML product page or of
// the page API's answer (then the document is empty).
func productWidgets(body []byte) (*goquery.Document, states, error) {
	if !site.IsJSON(body) {
		return readStates(body)
	}
	_, st, ok, err := readAPI(body)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, site.Unrecognized("JSON is not the page API's answer (no widgetStates)")
	}
	return goquery.NewDocumentFromNode(&html.Node{Type: html.DocumentNode}), st, nil
}

func productItem(s *site.Site, doc *goquery.Document, ps productStates, ld ldProduct, pageURL string, at time.Time) item.Item {
	canonical := doc.Find(`link[rel="canonical"]`).AttrOr("href", "")
	it := item.Item{Site: Name, Currency: "RUB", FetchedAt: at,
		ID: firstNonEmpty(intString(ps.Score.ItemID), intString(ld.SKU), idFromLink(canonical), idFromLink(pageURL)),
		Title: site.Clean(firstNonEmpty(ps.Heading.Title,
			doc.Find(`[data-widget="webProductHeading"] h1`).First().Text(), ld.Name)),
		Seller:  firstNonEmpty(site.Clean(ps.Seller.SellerCell.CenterBlock.Title.Text), sellerName(doc)),
		Rating:  float64(firstNonZero(ps.Score.TotalScore, ld.AggregateRating.RatingValue)),
		Reviews: int(firstNonZero(ps.Score.ReviewsCount, ld.AggregateRating.ReviewCount)),
	}
	it.Price, _ = site.Kopecks(ps.Price.Price)
	if it.Price == 0 && ld.Offers.Price > 0 {
		it.Price = int64(float64(ld.Offers.Price)*100 + 0.5)
	}
	old, _ := site.Kopecks(ps.Price.OriginalPrice)
	it.OldPrice = oldPrice(old, it.Price)
	if c := strings.TrimSpace(ld.Offers.PriceCurrency); c != "" {
		it.Currency = c
	}
	it.URL = productPageURL(s, canonical, pageURL, it.ID)
	it.InStock = inStock(ld, it.ID)
	return it
}

// inStock is the availability of the JSON-LD offer when that Product is
// this page's own (its sku is the item's ID), else nil. Other widgets
// that mention stock (webProductMainWidget's isOutOfStockMode, the
// "Узнать о поступлении" button text) are left alone.
func inStock(ld ldProduct, id string) *bool {
	if id == "" || intString(ld.SKU) != id {
		return nil
	}
	return site.Availability(ld.Offers.Availability)
}

// sellerName is the text of the first seller link with text in the
// webCurrentSeller widget.
func sellerName(doc *goquery.Document) string {
	var name string
	doc.Find(`[data-widget="webCurrentSeller"] a[href*="/seller/"]`).EachWithBreak(func(_ int, a *goquery.Selection) bool {
		name = site.Clean(a.Text())
		return name == ""
	})
	return name
}

// readLD returns the first schema.org Product in JSON-LD; a malformed
// block is skipped, since it is only a fallback.
func readLD(doc *goquery.Document) ldProduct {
	var out ldProduct
	doc.Find(`script[type="application/ld+json"]`).EachWithBreak(func(_ int, sc *goquery.Selection) bool {
		var p ldProduct
		if json.Unmarshal([]byte(sc.Text()), &p) == nil && p.Type == "Product" {
			out = p
			return false
		}
		return true
	})
	return out
}

// productPageURL: the canonical link, else the page URL, else built from
// the ID; query and fragment are dropped.
func productPageURL(s *site.Site, canonical, pageURL, id string) string {
	if canonical != "" && idFromLink(canonical) == id {
		return site.Resolve(baseURL(s, pageURL), canonical, true)
	}
	if pageURL != "" && idFromLink(pageURL) == id {
		return site.Resolve("", pageURL, true)
	}
	return productURL(s, site.Request{ID: id})
}

func intString(n number) string {
	if n <= 0 {
		return ""
	}
	return strconv.FormatInt(int64(n), 10)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func firstNonZero(ns ...number) number {
	for _, n := range ns {
		if n > 0 {
			return n
		}
	}
	return 0
}
