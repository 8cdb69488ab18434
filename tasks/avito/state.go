package avito

import (
	"bytes"
	"encoding/json"
	"errors"
	"html"
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// The page state Avito's server writes into its pages, read before the
// markup (evidence in docs/sites.md):
//   - item pages of 2025–26: window.__staticRouterHydrationData =
//     JSON.parse("…"), a JSON string holding {"loaderData": {"catalog-or-
//     main-or-item": {"buyerItem": …}}};
//   - item pages of 2024: window.__initialData__ = "…", URL-encoded JSON
//     whose "@avito/bx-item-view:<version>" key holds {"buyerItem": …};
//   - results pages: <script type="mime/invalid" data-mfe-state="true">,
//     whose state.data.catalog.items[] are the js/items answer's listings
//     (and whose loaderData.data may be a redirect stub).
const (
	hydrationMarker   = "window.__staticRouterHydrationData"
	initialDataMarker = "window.__initialData__"
	itemRouteKey      = "catalog-or-main-or-item"
	itemViewKey       = "bx-item-view"
)

// buyerItem is the item page's state: the listing, its seller and the
// seller's rating ({"scoreFloat": 5, "summary": "36 отзывов"}).
type buyerItem struct {
	Item struct {
		ID    int64        `json:"id"`
		Title string       `json:"title"`
		Price *json.Number `json:"price"`
		URL   string       `json:"url"`
	} `json:"item"`
	Seller *struct {
		Name string `json:"name"`
	} `json:"seller"`
	Rating *struct {
		ScoreFloat float64 `json:"scoreFloat"`
		Summary    string  `json:"summary"`
	} `json:"rating"`
	SeoCanonicalURL string `json:"seoCanonicalUrl"`
}

// pageBuyerItem reads the item page's buyerItem from the hydration data,
// else from the 2024 initial data; ok is false when neither has one
// with an id.
func pageBuyerItem(body []byte) (buyerItem, bool) {
	for _, read := range []func([]byte) (buyerItem, bool){hydrationItem, initialDataItem} {
		if b, ok := read(body); ok && b.Item.ID > 0 {
			return b, true
		}
	}
	return buyerItem{}, false
}

func hydrationItem(body []byte) (buyerItem, bool) {
	lit, ok := stringAfter(body, hydrationMarker, "JSON.parse(")
	if !ok {
		return buyerItem{}, false
	}
	var s string
	var st struct {
		LoaderData map[string]struct {
			BuyerItem *buyerItem `json:"buyerItem"`
		} `json:"loaderData"`
	}
	if json.Unmarshal(lit, &s) != nil || json.Unmarshal([]byte(s), &st) != nil {
		return buyerItem{}, false
	}
	if r := st.LoaderData[itemRouteKey].BuyerItem; r != nil {
		return *r, true
	}
	for _, r := range st.LoaderData {
		if r.BuyerItem != nil {
			return *r.BuyerItem, true
		}
	}
	return buyerItem{}, false
}

func initialDataItem(body []byte) (buyerItem, bool) {
	lit, ok := stringAfter(body, initialDataMarker, "=")
	if !ok {
		return buyerItem{}, false
	}
	var enc string
	var st map[string]struct {
		BuyerItem *buyerItem `json:"buyerItem"`
	}
	if json.Unmarshal(lit, &enc) != nil {
		return buyerItem{}, false
	}
	raw, err := url.PathUnescape(enc)
	if err != nil || json.Unmarshal([]byte(raw), &st) != nil {
		return buyerItem{}, false
	}
	for k, v := range st {
		if strings.Contains(k, itemViewKey) && v.BuyerItem != nil {
			return *v.BuyerItem, true
		}
	}
	return buyerItem{}, false
}

// stringAfter finds marker, then open, and returns the quoted string
// literal that follows, quotes included (a JSON string literal); ok is
// false when there is none or it is not closed.
func stringAfter(body []byte, marker, open string) ([]byte, bool) {
	i := bytes.Index(body, []byte(marker))
	if i < 0 {
		return nil, false
	}
	rest := body[i+len(marker):]
	j := bytes.Index(rest, []byte(open))
	if j < 0 {
		return nil, false
	}
	rest = bytes.TrimLeft(rest[j+len(open):], " \t\r\n")
	if len(rest) == 0 || rest[0] != '"' {
		return nil, false
	}
	for k := 1; k < len(rest); k++ {
		switch rest[k] {
		case '\\':
			k++ // an escaped character never closes the string
		case '"':
			return rest[:k+1], true
		}
	}
	return nil, false
}

// mfeState is the results page's <script data-mfe-state="true"> JSON: a
// redirect stub (at the top or in loaderData.data) or the catalog.
type mfeState struct {
	redirect
	LoaderData struct {
		Data redirect `json:"data"`
	} `json:"loaderData"`
	State struct {
		Data struct {
			Catalog *struct {
				Items []json.RawMessage `json:"items"`
			} `json:"catalog"`
		} `json:"data"`
	} `json:"state"`
}

// pageStates decodes every data-mfe-state script of the page. A script
// that is not JSON is skipped; a field of another type than expected is
// left empty, the rest of the state kept.
func pageStates(doc *goquery.Document) []mfeState {
	var out []mfeState
	doc.Find(`script[data-mfe-state="true"]`).Each(func(_ int, sc *goquery.Selection) {
		var st mfeState
		var typeErr *json.UnmarshalTypeError
		if err := json.Unmarshal([]byte(html.UnescapeString(sc.Text())), &st); err == nil || errors.As(err, &typeErr) {
			out = append(out, st)
		}
	})
	return out
}

// redirectTo is the URL of the state's redirect stub; ok is false when it
// is none.
func (st mfeState) redirectTo() (string, bool) {
	for _, r := range []redirect{st.LoaderData.Data, st.redirect} {
		if r.Redirected {
			return r.URL, true
		}
	}
	return "", false
}

// catalogItems are the entries of the page's catalog state that decode
// as listings (widgets among them do not, or have no id), nil when no
// state has a catalog.
func catalogItems(states []mfeState) []jsItem {
	for _, st := range states {
		c := st.State.Data.Catalog
		if c == nil || len(c.Items) == 0 {
			continue
		}
		var out []jsItem
		for _, raw := range c.Items {
			var j jsItem
			if json.Unmarshal(raw, &j) == nil && j.ID > 0 {
				out = append(out, j)
			}
		}
		return out
	}
	return nil
}
