package testbed

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// The extractors below apply the selectors and JSON paths of
// internal/samples/testdata/*/README.md; the same code reads the real samples
// and the simulated pages.

// scraped is what an extractor found for one product.
type scraped struct {
	ID, Title, Seller string
	Price, OldPrice   int64 // rubles
	Rating            float64
	Reviews           int
	Link              string
}

func digits(s string) int64 {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	n, _ := strconv.ParseInt(b.String(), 10, 64)
	return n
}

func parseFloat(s string) float64 {
	f, _ := strconv.ParseFloat(strings.TrimSpace(strings.Replace(s, ",", ".", 1)), 64)
	return f
}

func doc(t *testing.T, r io.Reader) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(r)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// wbProducts reads products[] (or data.products[]) of a WB API answer.
func wbProducts(t *testing.T, body []byte) []scraped {
	t.Helper()
	var v struct {
		Products []wbJSON `json:"products"`
		Data     struct {
			Products []wbJSON `json:"products"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("wb json: %v", err)
	}
	list := v.Products
	if len(list) == 0 {
		list = v.Data.Products
	}
	var out []scraped
	for _, p := range list {
		s := scraped{ID: strconv.FormatInt(p.ID, 10), Title: p.Name, Seller: p.Supplier, Rating: p.ReviewRating, Reviews: p.Feedbacks}
		if len(p.Sizes) > 0 {
			s.Price, s.OldPrice = p.Sizes[0].Price.Product/100, p.Sizes[0].Price.Basic/100
		}
		out = append(out, s)
	}
	return out
}

type wbJSON struct {
	ID           int64   `json:"id"`
	Name         string  `json:"name"`
	Brand        string  `json:"brand"`
	Supplier     string  `json:"supplier"`
	SupplierID   int     `json:"supplierId"`
	ReviewRating float64 `json:"reviewRating"`
	Feedbacks    int     `json:"feedbacks"`
	Sizes        []struct {
		Price struct {
			Basic   int64 `json:"basic"`
			Product int64 `json:"product"`
		} `json:"price"`
	} `json:"sizes"`
}

// ozonState finds the data-state JSON of the first widget whose id starts
// with state-<widget>-.
func ozonState(t *testing.T, d *goquery.Document, widget string, v any) {
	t.Helper()
	raw, ok := d.Find(`div[id^="state-` + widget + `-"]`).First().Attr("data-state")
	if !ok {
		t.Fatalf("no state-%s div", widget)
	}
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		t.Fatalf("state-%s json: %v", widget, err)
	}
}

type ozonItems struct {
	Items []struct {
		SkuID  string `json:"skuId"`
		Action struct {
			Link string `json:"link"`
		} `json:"action"`
		MainState []struct {
			ID   string `json:"id"`
			Atom struct {
				Type     string `json:"type"`
				TextAtom struct {
					Text string `json:"text"`
				} `json:"textAtom"`
				PriceV2 struct {
					Price []struct {
						Text      string `json:"text"`
						TextStyle string `json:"textStyle"`
					} `json:"price"`
				} `json:"priceV2"`
				LabelList struct {
					Items []struct {
						Title    string `json:"title"`
						TestInfo struct {
							AutomatizationID string `json:"automatizationId"`
						} `json:"testInfo"`
					} `json:"items"`
				} `json:"labelList"`
			} `json:"atom"`
		} `json:"mainState"`
	} `json:"items"`
}

// ozonTiles reads searchResultsV2 items.
func ozonTiles(st ozonItems) []scraped {
	var out []scraped
	for _, it := range st.Items {
		s := scraped{ID: it.SkuID, Link: it.Action.Link}
		for _, m := range it.MainState {
			switch {
			case m.ID == "name":
				s.Title = m.Atom.TextAtom.Text
			case m.Atom.Type == "priceV2":
				for _, p := range m.Atom.PriceV2.Price {
					if p.TextStyle == "PRICE" {
						s.Price = digits(p.Text)
					} else if p.TextStyle == "ORIGINAL_PRICE" {
						s.OldPrice = digits(p.Text)
					}
				}
			case m.Atom.Type == "labelList":
				for _, l := range m.Atom.LabelList.Items {
					switch l.TestInfo.AutomatizationID {
					case "tile-list-rating":
						s.Rating = parseFloat(l.Title)
					case "tile-list-comments":
						s.Reviews = int(digits(l.Title))
					}
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// ozonProductPage reads a PDP's widget states, seller link and JSON-LD.
func ozonProductPage(t *testing.T, d *goquery.Document) (scraped, string) {
	t.Helper()
	var head struct{ Title string }
	var price struct{ Price, OriginalPrice string }
	var score struct {
		ItemID       int64   `json:"itemId"`
		TotalScore   float64 `json:"totalScore"`
		ReviewsCount int     `json:"reviewsCount"`
	}
	ozonState(t, d, "webProductHeading", &head)
	ozonState(t, d, "webPrice", &price)
	ozonState(t, d, "webReviewProductScore", &score)
	seller := d.Find(`[data-widget="webCurrentSeller"] a[href*="/seller/"]`).First()
	href, _ := seller.Attr("href")
	var ld struct {
		SKU    string `json:"sku"`
		Offers struct {
			Price string `json:"price"`
		} `json:"offers"`
	}
	if err := json.Unmarshal([]byte(d.Find(`script[type="application/ld+json"]`).First().Text()), &ld); err != nil {
		t.Fatalf("json-ld: %v", err)
	}
	if ld.SKU != strconv.FormatInt(score.ItemID, 10) || digits(ld.Offers.Price) != digits(price.Price) {
		t.Errorf("json-ld %+v disagrees with widget states (%d, %s)", ld, score.ItemID, price.Price)
	}
	return scraped{ID: strconv.FormatInt(score.ItemID, 10), Title: head.Title, Price: digits(price.Price),
		OldPrice: digits(price.OriginalPrice), Rating: score.TotalScore, Reviews: score.ReviewsCount,
		Seller: strings.TrimSpace(seller.Text())}, href
}

// avitoCards reads a search page's cards and its page count.
func avitoCards(d *goquery.Document) ([]scraped, int) {
	var out []scraped
	d.Find(`div[data-marker="item"][data-item-id]`).Each(func(_ int, s *goquery.Selection) {
		a := s.Find(`a[data-marker="item-title"]`)
		title, _ := a.Attr("title")
		href, _ := a.Attr("href")
		id, _ := s.Attr("data-item-id")
		price, _ := s.Find(`p[data-marker="item-price"] meta[itemprop="price"]`).Attr("content")
		if h3 := strings.TrimSpace(a.Find(`h3[itemprop="name"]`).Text()); h3 == "" {
			title = ""
		}
		out = append(out, scraped{ID: id, Title: title, Price: digits(price), Link: href})
	})
	pages := int(digits(d.Find(`[data-marker="pagination-button"] span`).Last().Text()))
	return out, pages
}

// avitoItemPage reads an item page.
func avitoItemPage(d *goquery.Document) scraped {
	price, _ := d.Find(`span[data-marker="item-view/item-price"][itemprop="price"]`).Attr("content")
	return scraped{
		ID:     strconv.FormatInt(digits(d.Find(`[data-marker="item-view/item-id"]`).Text()), 10),
		Title:  strings.TrimSpace(d.Find(`h1[data-marker="item-view/title-info"]`).Text()),
		Price:  digits(price),
		Seller: strings.TrimSpace(d.Find(`[data-marker="seller-info/name"]`).Text()),
	}
}
