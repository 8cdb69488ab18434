package wildberries

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"crawlq/results/item"
	"crawlq/tasks/site"
)

// KindCard is the static product card of the basket CDN
// (basket-NN.wbbasket.ru/vol…/part…/{nm}/info/ru/card.json): no token, no
// challenge, no price or rating.
const KindCard = "card"

// EndpointBasket names the basket CDN endpoint. Unset, it is
// BasketPattern: host basket-NN.wbbasket.ru with NN found by ProbeBasket.
// Set in YAML (endpoints: {basket: …}) it wins over a base_url: a URL
// whose host starts with basket-NN. is a pattern of the same kind (the
// testbed's basket-NN.wbbasket.test); any other names one host that
// serves every nm, as a base_url alone does.
const EndpointBasket = "basket"

// basketVolMax is the last vol (nm/100000) each basket-NN host serves,
// NN = index+1, up to basket-52 (vol 18821): the table of kendric-py/plomio
// apps/worker_parser/src/marketplaces/wb/constants.py WB_BASKET_RANGES
// @148e240 (2026-10; docs/sites.md). nm 497398643 (vol 4973) is on
// basket-27, nm 1280469586 (vol 12804) on basket-45. Past its end WB adds
// hosts: a larger vol gets the last host, and a 404 there is probed on
// the hosts around it (ProbeBasket).
var basketVolMax = []int64{
	143, 287, 431, 719, 1007, 1061, 1115, 1169, 1313, 1601, // 01-10
	1655, 1919, 2045, 2189, 2405, 2621, 2837, 3053, 3269, 3485, // 11-20
	3701, 3917, 4133, 4349, 4565, 4877, 5189, 5501, 5813, 6125, // 21-30
	6437, 6749, 7061, 7373, 7685, 7997, 8309, 8741, 9173, 9605, // 31-40
	10373, 11141, 11909, 12677, 13445, 14213, 14981, 15749, 16517, 17285, // 41-50
	18053, 18821, // 51-52
}

// tableNumber is the basket host number the table gives vol; the last
// host past its end.
func tableNumber(vol int64) int {
	for i, last := range basketVolMax {
		if vol <= last {
			return i + 1
		}
	}
	return len(basketVolMax)
}

// lastTableVol is the last vol the table places.
func lastTableVol() int64 { return basketVolMax[len(basketVolMax)-1] }

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

// cardURL is nm's card.json where the table places it (or on the one
// configured host). A card job asks it through locateCard, which probes
// past it.
func cardURL(s *site.Site, r site.Request) string {
	nm, _ := strconv.ParseInt(r.ID, 10, 64) // CheckID let only digits through
	return BasketURL(basketPattern(s), tableNumber(nm/100000), nm)
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
