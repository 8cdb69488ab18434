package ozon

import (
	"encoding/json"
	"html"
	"strings"
	"time"

	"crawlq/results/item"
	"crawlq/tasks/site"
)

// tileList is the state of searchResultsV2 and tileGridDesktop.
type tileList struct {
	Items *[]tile `json:"items"`
}

// tile is one product tile.
type tile struct {
	SkuID  string `json:"skuId"`
	Action struct {
		Link string `json:"link"`
	} `json:"action"`
	MainState   []stateEntry `json:"mainState"`
	MultiButton struct {
		OzonButton struct {
			WithQuantity *struct {
				Action struct {
					ID string `json:"id"`
				} `json:"action"`
			} `json:"addToCartButtonWithQuantity"`
			AddToCart *struct {
				SkuID string `json:"skuId"`
			} `json:"addToCart"`
		} `json:"ozonButton"`
	} `json:"multiButton"`
}

// stateEntry is a mainState[] entry: in 2024 tiles the atom is wrapped
// ({"id":"name","atom":{"type":"textAtom",…}}), in 2025 tileGridDesktop it
// is inline ({"id":"name","type":"textAtom","textAtom":{…}}), and in 2026
// the title is a textDS and rating and reviews a labelListV2
// ({"id":"name","type":"textDS","textDS":{…}}).
type stateEntry struct {
	ID   string `json:"id"`
	Atom *atom  `json:"atom"`
	atom
}

type atom struct {
	Type     string `json:"type"`
	TextAtom *struct {
		Text string `json:"text"`
	} `json:"textAtom"`
	PriceV2 *struct {
		Price []struct {
			Text      string `json:"text"`
			TextStyle string `json:"textStyle"`
		} `json:"price"`
	} `json:"priceV2"`
	LabelList *struct {
		Items []struct {
			Title    string   `json:"title"`
			TestInfo testInfo `json:"testInfo"`
		} `json:"items"`
	} `json:"labelList"`
	TextDS *struct {
		Text     string   `json:"text"`
		TestInfo testInfo `json:"testInfo"`
	} `json:"textDS"`
	LabelListV2 *struct {
		Items []struct {
			Text *struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"items"`
		TestInfo testInfo `json:"testInfo"`
	} `json:"labelListV2"`
}

// testInfo names an element for Ozon's own UI tests ("tile-name",
// "tile-list-rating"): stabler than the generated class names.
type testInfo struct {
	ID string `json:"automatizationId"`
}

func (e stateEntry) content() atom {
	if e.Atom != nil {
		return *e.Atom
	}
	return e.atom
}

// decodeTiles reads a tile list state; ok is false when it has no items
// field at all.
func decodeTiles(raw []byte) ([]tile, bool, error) {
	var l tileList
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, false, site.BadBody("tiles: %w", err)
	}
	if l.Items == nil {
		return nil, false, nil
	}
	return *l.Items, true, nil
}

// toItem maps a tile; ok is false for a tile without an ID (banners).
// InStock stays nil: no tile in the samples says whether the product is
// in stock (every one has the same add-to-cart button), so only the
// product page's offer does.
func (t tile) toItem(base string, at time.Time) (item.Item, bool) {
	id := t.id()
	if id == "" {
		return item.Item{}, false
	}
	it := item.Item{Site: Name, ID: id, Currency: "RUB", FetchedAt: at,
		URL: site.Resolve(base, t.Action.Link, true)}
	for _, e := range t.MainState {
		fillFromAtom(&it, e.ID, e.content())
	}
	it.OldPrice = oldPrice(it.OldPrice, it.Price)
	return it, true
}

func (t tile) id() string {
	b := t.MultiButton.OzonButton
	switch {
	case t.SkuID != "":
		return t.SkuID
	case b.WithQuantity != nil && b.WithQuantity.Action.ID != "":
		return b.WithQuantity.Action.ID
	case b.AddToCart != nil && b.AddToCart.SkuID != "":
		return b.AddToCart.SkuID
	}
	return idFromLink(t.Action.Link)
}

// fillFromAtom takes the title from the "name" text atom (else the first
// text atom) or the "name" textDS (never another textDS: the stock line
// "186 шт осталось" is one), prices from priceV2, rating and reviews from
// the labelList or labelListV2.
func fillFromAtom(it *item.Item, id string, a atom) {
	switch {
	case a.TextAtom != nil && (id == "name" || it.Title == ""):
		it.Title = site.Clean(html.UnescapeString(a.TextAtom.Text))
	case a.TextDS != nil && (id == "name" || a.TextDS.TestInfo.ID == "tile-name"):
		it.Title = site.Clean(html.UnescapeString(a.TextDS.Text))
	case a.LabelListV2 != nil && a.LabelListV2.TestInfo.ID == "tile-list-rating":
		fillRatingV2(it, a)
	case a.PriceV2 != nil:
		for _, p := range a.PriceV2.Price {
			k, _ := site.Kopecks(p.Text)
			switch p.TextStyle {
			case "PRICE":
				it.Price = k
			case "ORIGINAL_PRICE":
				it.OldPrice = k
			}
		}
	case a.LabelList != nil:
		for _, l := range a.LabelList.Items {
			switch l.TestInfo.ID {
			case "tile-list-rating":
				it.Rating, _ = site.Rating(l.Title)
			case "tile-list-comments":
				it.Reviews, _ = site.Count(l.Title)
			}
		}
	}
}

// fillRatingV2 reads the 2026 rating list: its text items are the rating
// ("5.0", "4,8") and the review count ("339 отзывов").
func fillRatingV2(it *item.Item, a atom) {
	for _, l := range a.LabelListV2.Items {
		if l.Text == nil {
			continue
		}
		t := l.Text.Text
		if strings.Contains(t, "отзыв") {
			it.Reviews, _ = site.Count(t)
		} else if r, ok := site.Rating(t); ok {
			it.Rating = r
		}
	}
}

func oldPrice(old, price int64) int64 {
	if old <= price {
		return 0
	}
	return old
}
