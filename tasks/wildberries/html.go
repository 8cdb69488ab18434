package wildberries

import (
	"bytes"
	"regexp"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"crawlq/results/item"
	"crawlq/tasks/site"
)

// parseSearchHTML parses the rendered search/catalog page: one
// article.product-card[data-nm-id] per product. The rendered pages keep
// "sold out" in client-side templates (allSizesSoldOut), not in the
// markup, so their items have no InStock.
func parseSearchHTML(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return site.Page{}, site.BadBody("parse html: %w", err)
	}
	cards := doc.Find("article.product-card[data-nm-id]")
	if cards.Length() == 0 && doc.Find(".catalog-page, .search-page, .product-card-list").Length() == 0 {
		return site.Page{}, site.Unrecognized("no article.product-card and no catalog container")
	}
	var page site.Page
	cards.Each(func(_ int, c *goquery.Selection) {
		if it, ok := cardItem(s, c, at); ok {
			page.Items = append(page.Items, it)
		}
	})
	page.Follow = follow(s, page.Items)
	page.Next = doc.Find("a.pagination-next[href], a.j-next-page[href]").Length() > 0
	return page, nil
}

var nmIDRe = regexp.MustCompile(`^[0-9]{1,20}$`)

// cardItem reads one product card; the title is the product name without
// the brand, as in the JSON APIs.
func cardItem(s *site.Site, c *goquery.Selection, at time.Time) (item.Item, bool) {
	id := strings.TrimSpace(c.AttrOr("data-nm-id", ""))
	if !nmIDRe.MatchString(id) {
		return item.Item{}, false
	}
	name := c.Find(".product-card__name").First().Clone()
	name.Find(".product-card__name-separator").Remove()
	price, _ := site.Kopecks(c.Find("ins.price__lower-price").First().Text())
	old, _ := site.Kopecks(c.Find(".price__wrap del").First().Text())
	rating, _ := site.Rating(c.Find(".address-rate-mini").First().Text())
	reviews, _ := site.Count(c.Find(".product-card__count").First().Text())
	return item.Item{
		Site: Name, ID: id, Title: site.Clean(name.Text()),
		Price: price, OldPrice: oldPrice(old, price), Currency: "RUB",
		Rating: rating, Reviews: reviews, URL: ItemURL(s, id), FetchedAt: at,
	}, true
}

// parseProductHTML parses the rendered product page: the older markup
// (h1.product-page__title, #productNmId) or the 2026 one (productPage2026).
func parseProductHTML(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return site.Page{}, site.BadBody("parse html: %w", err)
	}
	if doc.Find(title2026).Length() > 0 {
		return productPage2026(s, doc, pageURL, at)
	}
	id := strings.TrimSpace(doc.Find("#productNmId").First().Text())
	if !nmIDRe.MatchString(id) {
		id = idFromPageURL(pageURL)
	}
	title := site.Clean(doc.Find("h1.product-page__title").First().Text())
	if id == "" || title == "" {
		return site.Page{}, site.Unrecognized("no product on the page: no h1.product-page__title or #productNmId, no %s", title2026)
	}
	price, _ := site.Kopecks(doc.Find("ins.price-block__final-price").First().Text())
	old, _ := site.Kopecks(doc.Find("del.price-block__old-price").First().Text())
	rating, _ := site.Rating(doc.Find(".product-review__rating").First().Text())
	reviews, _ := site.Count(doc.Find(".product-review__count-review").First().Text())
	it := item.Item{
		Site: Name, ID: id, Title: title, Price: price, OldPrice: oldPrice(old, price),
		Currency: "RUB", Seller: site.Clean(doc.Find(".seller-info__title .seller-info__default-name").First().Text()),
		Rating: rating, Reviews: reviews, URL: ItemURL(s, id), FetchedAt: at,
	}
	return site.Page{Items: []item.Item{it}}, nil
}

func idFromPageURL(pageURL string) string {
	if m := detailPathRe.FindStringSubmatch(pageURL); m != nil {
		return m[1]
	}
	return ""
}

func oldPrice(old, price int64) int64 {
	if old <= price {
		return 0
	}
	return old
}
