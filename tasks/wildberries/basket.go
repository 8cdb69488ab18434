package wildberries

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"crawlq/tasks/item"
	"crawlq/tasks/site"
)

// KindCard is the static product card of the basket CDN
// (basket-NN.wbbasket.ru/vol…/part…/{nm}/info/ru/card.json): no token, no
// challenge, no price or rating.
const KindCard = "card"

// EndpointBasket names the basket CDN endpoint. Unset, the host is
// basket-NN.wbbasket.ru with NN from basketHost; set in YAML
// (endpoints: {basket: …}) or under a base_url, that host serves every nm.
const EndpointBasket = "basket"

// basketVolMax is the last vol (nm/100000) each basket-NN host serves,
// NN = index+1: the table public WB clients agree on (2024–25; the sample
// nm 67858518, vol 678, is on basket-04). Past its end WB adds hosts
// whose ranges are not settled, so a larger vol gets the last known host
// and may need endpoints.basket.
var basketVolMax = []int64{143, 287, 431, 719, 1007, 1061, 1115, 1169, 1313, 1601, 1655, 1919, 2045, 2189, 2405, 2621, 2837}

// basketHost is the basket CDN base URL of nm.
func basketHost(nm int64) string {
	vol := nm / 100000
	n := len(basketVolMax)
	for i, last := range basketVolMax {
		if vol <= last {
			n = i + 1
			break
		}
	}
	return fmt.Sprintf("https://basket-%02d.wbbasket.ru", n)
}

// BasketPath is the path of nm's card.json on its basket host.
func BasketPath(nm int64) string {
	return fmt.Sprintf("/vol%d/part%d/%d/info/ru/card.json", nm/100000, nm/1000, nm)
}

var cardPathRe = regexp.MustCompile(`/vol[0-9]+/part[0-9]+/([0-9]{1,20})/info/`)

// normalizeCard takes an nmId, a product page URL or a card.json URL.
func normalizeCard(s *site.Site, r site.Request) (site.Request, error) {
	if r.ID == "" && r.URL != "" {
		u, err := site.ParseURL(s, KindCard, r.URL)
		if err != nil {
			return site.Request{}, err
		}
		m := cardPathRe.FindStringSubmatch(u.Path)
		if m == nil {
			m = detailPathRe.FindStringSubmatch(u.Path)
		}
		if m == nil {
			return site.Request{}, &site.RequestError{Site: s.Name, Kind: KindCard, Field: "url",
				Reason: "no product ID in " + strconv.Quote(r.URL) + " (want …/catalog/<id>/detail.aspx or …/<id>/info/ru/card.json)"}
		}
		r.ID = m[1]
	}
	id, err := site.CheckID(s, KindCard, r.ID)
	return site.Request{ID: id}, err
}

// cardURL is nm's card.json on its basket host (or the configured one).
func cardURL(s *site.Site, r site.Request) string {
	nm, _ := strconv.ParseInt(r.ID, 10, 64) // CheckID let only digits through
	base := basketHost(nm)
	if s.BaseURL != "" || s.Endpoints[EndpointBasket] != "" {
		base = s.Endpoint(EndpointBasket)
	}
	return base + BasketPath(nm)
}

// parseCard parses a basket card.json: ID, title, no price.
func parseCard(s *site.Site, body []byte, _ string, at time.Time) (site.Page, error) {
	if !site.IsJSON(body) {
		return site.Page{}, site.Unrecognized("card.json answer is not JSON")
	}
	c, ok := decodeBasketCard(body)
	if !ok {
		return site.Page{}, site.Unrecognized("no nm_id in the card.json")
	}
	return site.Page{Items: []item.Item{c.toItem(s, at)}}, nil
}

// toItem maps a card.json to an Item. The card has no price, rating,
// stock or seller name (selling.supplier_id only), so those stay zero and
// InStock nil.
func (c basketCard) toItem(s *site.Site, at time.Time) item.Item {
	id := strconv.FormatInt(c.NMID, 10)
	return item.Item{Site: Name, ID: id, Title: site.Clean(c.IMTName), Currency: "RUB",
		URL: ItemURL(s, id), FetchedAt: at}
}
