package ozon

import (
	"encoding/json"
	"html"
	"math"
	"regexp"
	"strconv"
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
		Items    []labelV2 `json:"items"`
		TestInfo testInfo  `json:"testInfo"`
	} `json:"labelListV2"`
}

// labelV2 is one entry of a labelListV2: an icon ("ic_s_star_filled_
// compact" before the rating, "ic_s_dialog_filled_compact" before the
// review count) or a text.
type labelV2 struct {
	Icon json.RawMessage `json:"icon"`
	Text *struct {
		Text string `json:"text"`
	} `json:"text"`
}

// iconName is the entry's icon name, "" when it has none. Captures nest
// it ({"icon":{"icon":"ic_s_star_filled_compact"}}); public clients'
// tests also give it flat ({"icon":"ic_s_star"}).
func (l labelV2) iconName() string {
	var name string
	var flat struct {
		Icon json.RawMessage `json:"icon"`
	}
	raw := l.Icon
	for range 3 {
		if json.Unmarshal(raw, &name) == nil {
			return name
		}
		if json.Unmarshal(raw, &flat) != nil || flat.Icon == nil {
			return ""
		}
		raw, flat.Icon = flat.Icon, nil
	}
	return ""
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

// fillRatingV2 reads the 2026 rating list: each text by the icon before
// it, or by its form where no icon says (fillRatingText).
func fillRatingV2(it *item.Item, a atom) {
	icon := ""
	for _, l := range a.LabelListV2.Items {
		if l.Text == nil {
			icon = l.iconName()
			continue
		}
		fillRatingText(it, icon, site.Clean(l.Text.Text))
		icon = ""
	}
}

var (
	// ratingForm is a rating as tiles show it: "4.9", "5.0", "4,8".
	ratingForm = regexp.MustCompile(`^[0-5][.,][0-9]{1,2}$`)
	// countForm is a review count: "339 отзывов", a bare "4 859" (late
	// 2026) or "1,2 тыс. отзывов".
	countForm = regexp.MustCompile(`^[0-9]{1,3}(?: [0-9]{3})*(?:[.,][0-9] тыс\.?)?(?: отзыв[а-я]*)?$`)
)

// fillRatingText reads one text of the rating list: after a star icon the
// rating, after a dialog icon the review count; after no such icon, a
// rating's form is the rating and a count's form the review count.
// Anything else ("Ozon" after Ozon's own icon) is no number.
func fillRatingText(it *item.Item, icon, t string) {
	star, dialog := strings.Contains(icon, "_star"), strings.Contains(icon, "_dialog")
	switch {
	case star, !dialog && ratingForm.MatchString(t):
		if r, ok := site.Rating(t); ok {
			it.Rating = r
		}
	case dialog, countForm.MatchString(t):
		if n, ok := reviewCount(t); ok {
			it.Reviews = n
		}
	}
}

// reviewCount reads "4 859" or "339 отзывов" as is and "1,2 тыс." as
// thousands.
func reviewCount(t string) (int, bool) {
	if !strings.Contains(t, "тыс") {
		return site.Count(t)
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(strings.Fields(t)[0], ",", "."), 64)
	if err != nil {
		return 0, false
	}
	return int(math.Round(f * 1000)), true
}

func oldPrice(old, price int64) int64 {
	if old <= price {
		return 0
	}
	return old
}
