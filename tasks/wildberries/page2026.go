package wildberries

import (
	"regexp"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"crawlq/results/item"
	"crawlq/tasks/site"
)

// The 2026 product page is drawn by script with CSS-module class names:
// a stable name, "--", and a hash that changes with each build
// (productTitle--jKvWV, productTitle--lfc4o). Public clients of 2026
// select on the stable part, and so does the parser
// (testdata/2026/README.md, docs/sites.md).
const (
	title2026    = `[class*="productTitle--"]`
	price2026    = `[class*="priceBlockFinalPrice--"]`
	oldPrice2026 = `[class*="priceBlockOldPrice--"]`
	seller2026   = `[class*="sellerInfoNameDefaultText--"], [class*="sellerInfoDefaultNameText--"]`
	rating2026   = `[class*="productReviewRating--"]`
	options2026  = `section[data-testid="product_additional_information"] tr, table[class*="productOptionsTable--"] tr`
)

// titleNmRe finds the nm ID in the page's <title>: "<name> <nm> купить
// за <price> в интернет-магазине Wildberries".
var titleNmRe = regexp.MustCompile(`(?:^|\s)([0-9]{5,20}) купить за`)

// productPage2026 reads the 2026 page: the title (the product's name
// without its brand), the final price (the price without the WB wallet's
// discount, as the card API's), the old price, the seller, and the
// rating and rating count ("4,8 · 1 234 оценки"). The nm ID is the
// "Артикул" row of the options, else the page's URL, else its <title>.
func productPage2026(s *site.Site, doc *goquery.Document, pageURL string, at time.Time) (site.Page, error) {
	id := article2026(doc)
	if id == "" {
		id = idFromPageURL(pageURL)
	}
	if id == "" {
		if m := titleNmRe.FindStringSubmatch(doc.Find("title").First().Text()); m != nil {
			id = m[1]
		}
	}
	title := site.Clean(doc.Find(title2026).First().Text())
	if id == "" || title == "" {
		return site.Page{}, site.Unrecognized("2026 product page without an nm ID (no Артикул row, URL or title with one) or a title")
	}
	price, _ := site.Kopecks(doc.Find(price2026).First().Text())
	old, _ := site.Kopecks(doc.Find(oldPrice2026).First().Text())
	score := doc.Find(rating2026).First().Text()
	rating, _ := site.Rating(score)
	var reviews int
	if _, count, ok := strings.Cut(score, "·"); ok {
		reviews, _ = site.Count(count)
	}
	it := item.Item{
		Site: Name, ID: id, Title: title, Price: price, OldPrice: oldPrice(old, price), Currency: "RUB",
		Seller: site.Clean(doc.Find(seller2026).First().Text()),
		Rating: rating, Reviews: reviews, URL: ItemURL(s, id), FetchedAt: at,
	}
	return site.Page{Items: []item.Item{it}}, nil
}

// article2026 is the nm ID in the options' "Артикул" row, "" without one.
func article2026(doc *goquery.Document) string {
	var id string
	doc.Find(options2026).EachWithBreak(func(_ int, row *goquery.Selection) bool {
		if !strings.Contains(row.Find("th").Text(), "Артикул") {
			return true
		}
		id = site.Clean(row.Find("td").First().Text())
		return false
	})
	if !nmIDRe.MatchString(id) {
		return ""
	}
	return id
}
