package avito

import (
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"crawlq/results/item"
	"crawlq/tasks/site"
)

// jsAnswer is the answer of GET /web/1/js/items (2026: items at the top
// level; public clients also read catalog.items, result.catalog.items and
// data.items), or a redirect stub {redirected, url}.
type jsAnswer struct {
	Items   *[]jsItem `json:"items"`
	Catalog *struct {
		Items *[]jsItem `json:"items"`
	} `json:"catalog"`
	Result *struct {
		Catalog *struct {
			Items *[]jsItem `json:"items"`
		} `json:"catalog"`
	} `json:"result"`
	Data *struct {
		Items *[]jsItem `json:"items"`
	} `json:"data"`
	Count       int    `json:"count"`
	TotalCount  int    `json:"totalCount"`
	ItemsOnPage int    `json:"itemsOnPage"`
	Redirected  bool   `json:"redirected"`
	URL         string `json:"url"`
}

// jsItem is one listing of a js/items answer or of a results page's
// catalog state. rating is the seller's ("647 отзывов"); the js/items
// answer has no seller name, the page's state has it in iva's
// UserInfoStep.
type jsItem struct {
	ID            int64  `json:"id"`
	Title         string `json:"title"`
	URLPath       string `json:"urlPath"`
	PriceDetailed *struct {
		Value *json.Number `json:"value"`
	} `json:"priceDetailed"`
	Rating *struct {
		Score   float64 `json:"score"`
		Summary string  `json:"summary"`
	} `json:"rating"`
	Iva *struct {
		UserInfoStep []ivaComponent `json:"UserInfoStep"`
	} `json:"iva"`
}

// ivaComponent is one component of a card's step; its payload's shape
// depends on the component, so it is decoded only where it is known.
type ivaComponent struct {
	ComponentData struct {
		Component string `json:"component"`
	} `json:"componentData"`
	Payload json.RawMessage `json:"payload"`
}

// sellerName is the title of the card's seller-info profile, "" when
// the card has none.
func (j jsItem) sellerName() string {
	if j.Iva == nil {
		return ""
	}
	for _, c := range j.Iva.UserInfoStep {
		var p struct {
			Profile *struct {
				Title string `json:"title"`
			} `json:"profile"`
		}
		if c.ComponentData.Component == "seller-info" && json.Unmarshal(c.Payload, &p) == nil && p.Profile != nil {
			return site.Clean(p.Profile.Title)
		}
	}
	return ""
}

// list returns the answer's item list, nil when it has none of the known
// places for one.
func (a *jsAnswer) list() *[]jsItem {
	switch {
	case a.Items != nil:
		return a.Items
	case a.Catalog != nil && a.Catalog.Items != nil:
		return a.Catalog.Items
	case a.Result != nil && a.Result.Catalog != nil && a.Result.Catalog.Items != nil:
		return a.Result.Catalog.Items
	case a.Data != nil:
		return a.Data.Items
	}
	return nil
}

// parseJSItems parses a js/items answer. Only an answer with an item list
// is the site's own: an empty list is "no results"; a redirect stub, an
// answer with no list, or a list none of whose entries is a listing is
// ErrUnrecognized.
func parseJSItems(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	if !site.IsJSON(body) {
		return site.Page{}, site.Unrecognized("js/items answer is not JSON")
	}
	var a jsAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return site.Page{}, site.BadBody("json: %w", err)
	}
	if a.Redirected || a.URL != "" && a.list() == nil {
		return site.Page{}, site.Redirected(a.URL, "a js/items answer")
	}
	list := a.list()
	if list == nil {
		return site.Page{}, site.Unrecognized("JSON has no items, catalog.items, result.catalog.items or data.items")
	}
	base := baseURL(s, pageURL)
	var page site.Page
	for _, j := range *list {
		if it, ok := j.toItem(base, at); ok {
			page.Items = append(page.Items, it)
			page.Follow = append(page.Follow, site.Target{Site: Name, Kind: KindItem, ID: it.ID, URL: it.URL})
		}
	}
	if len(*list) > 0 && len(page.Items) == 0 {
		return site.Page{}, site.Unrecognized("js/items list of %d has no entry with id, title and urlPath", len(*list))
	}
	page.Next = len(page.Items) > 0 && a.ItemsOnPage > 0 && pageOf(pageURL)*a.ItemsOnPage < max(a.Count, a.TotalCount)
	return page, nil
}

// toItem leaves InStock nil: a listing has no stock (see doc.go).
func (j jsItem) toItem(base string, at time.Time) (item.Item, bool) {
	title := site.Clean(j.Title)
	if j.ID <= 0 || title == "" || j.URLPath == "" {
		return item.Item{}, false
	}
	it := item.Item{Site: Name, ID: itoa64(j.ID), Title: title, Currency: "RUB",
		Seller: j.sellerName(), URL: site.Resolve(base, j.URLPath, true), FetchedAt: at}
	if p := j.PriceDetailed; p != nil && p.Value != nil {
		it.Price, _ = site.Kopecks(p.Value.String())
	}
	if j.Rating != nil {
		it.Rating = j.Rating.Score
		it.Reviews, _ = site.Count(j.Rating.Summary)
	}
	return it, true
}

// pageOf is pageURL's p parameter, 1 when absent.
func pageOf(pageURL string) int {
	if u, err := url.Parse(pageURL); err == nil {
		if n, err := strconv.Atoi(u.Query().Get("p")); err == nil && n > 0 {
			return n
		}
	}
	return 1
}
