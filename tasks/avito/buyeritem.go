package avito

import (
	"encoding/json"
	"strconv"
	"time"

	"crawlq/tasks/item"
	"crawlq/tasks/site"
)

// buyerItem is the listing object of window.__initialData__'s
// bx-item-view entry.
type buyerItem struct {
	Item *struct {
		ID    int64  `json:"id"`
		Title string `json:"title"`
		Price *int64 `json:"price"`
		URL   string `json:"url"`
	} `json:"item"`
	PriceDataDTO struct {
		Prices []struct {
			Currencies []struct {
				Code  string `json:"currencyCode"`
				Value int64  `json:"value"`
			} `json:"currencies"`
		} `json:"pricesWithDimensionAndCurrency"`
	} `json:"priceDataDTO"`
	Seller struct {
		Name string `json:"name"`
	} `json:"seller"`
	Rating *struct {
		ScoreFloat float64 `json:"scoreFloat"`
		Summary    string  `json:"summary"`
	} `json:"rating"`
}

// extracted is the {name,url,viewdata} wrapper of a saved buyerItem.
type extracted struct {
	URL      string     `json:"url"`
	ViewData *buyerItem `json:"viewdata"`
}

func parseBuyerItem(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	var w extracted
	if err := json.Unmarshal(body, &w); err != nil {
		return site.Page{}, site.BadBody("json: %w", err)
	}
	b := w.ViewData
	if b == nil {
		b = new(buyerItem)
		_ = json.Unmarshal(body, b) // a bare buyerItem; the JSON is valid, checked above
	}
	if b.Item == nil || b.Item.ID <= 0 {
		return site.Page{}, site.Unrecognized("JSON has no buyerItem item.id")
	}
	return site.Page{Items: []item.Item{b.toItem(s, w.URL, pageURL, at)}}, nil
}

// toItem leaves InStock nil: a listing has no stock (see doc.go).
func (b *buyerItem) toItem(s *site.Site, wrapURL, pageURL string, at time.Time) item.Item {
	it := item.Item{Site: Name, ID: itoa64(b.Item.ID), Title: site.Clean(b.Item.Title),
		Currency: "RUB", Seller: site.Clean(b.Seller.Name), FetchedAt: at}
	if b.Rating != nil {
		it.Rating = b.Rating.ScoreFloat
		it.Reviews, _ = site.Count(b.Rating.Summary)
	}
	it.Price, it.Currency = b.price()
	for _, u := range []string{wrapURL, pageURL, b.Item.URL} {
		if idFromLink(u) == it.ID {
			it.URL = site.Resolve(baseURL(s, pageURL), u, true)
			break
		}
	}
	return it
}

// price: item.price, else the first priceDataDTO currency value; both in
// rubles.
func (b *buyerItem) price() (int64, string) {
	for _, p := range b.PriceDataDTO.Prices {
		if len(p.Currencies) == 0 {
			continue
		}
		c := p.Currencies[0]
		if b.Item.Price != nil {
			return *b.Item.Price * 100, currency(c.Code)
		}
		return c.Value * 100, currency(c.Code)
	}
	if b.Item.Price != nil {
		return *b.Item.Price * 100, "RUB"
	}
	return 0, "RUB"
}

func itoa(n int) string     { return strconv.Itoa(n) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
