package ozon

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"crawlq/results/item"
	"crawlq/tasks/site"
)

// listingWidgets hold product tiles: search and category pages use
// searchResultsV2, seller storefronts tileGridDesktop.
var listingWidgets = []string{"searchResultsV2", "tileGridDesktop"}

// paginatorWidgets carry the next page link in .nextPage.
var paginatorWidgets = []string{"megaPaginator", "infiniteVirtualPaginator", "paginator"}

// parseListing parses a listing: the page API's answer (widgetStates;
// the next page is its nextPage), an HTML search, category or seller
// page, or a bare searchResultsV2 state (which has no paginator, so Next
// is false for it). A JSON answer of another shape is unrecognized, never
// an empty page: only a tile widget with "items":[], or the
// searchResultsError widget in place of the tiles, is Ozon's own "no
// results".
func parseListing(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	base := baseURL(s, pageURL)
	if site.IsJSON(body) {
		return parseListingJSON(s, body, pageURL, at)
	}
	_, st, err := readStates(body)
	if err != nil {
		return site.Page{}, err
	}
	page, ok, err := listingFrom(st, base, at)
	if err != nil || !ok {
		return site.Page{}, firstErr(err, site.Unrecognized("no searchResultsV2 or tileGridDesktop state"))
	}
	page.Next = hasNext(st, len(page.Items))
	return page, nil
}

// parseListingJSON parses the page API's answer or a bare tile state.
func parseListingJSON(s *site.Site, body []byte, pageURL string, at time.Time) (site.Page, error) {
	base := baseURL(s, pageURL)
	a, st, isAPI, err := readAPI(body)
	if err != nil {
		return site.Page{}, err
	}
	if !isAPI {
		tiles, ok, err := decodeTiles(body)
		if err != nil || !ok {
			return site.Page{}, firstErr(err, site.Unrecognized("JSON has neither widgetStates nor items[] (want the page API's answer or a searchResultsV2 state)"))
		}
		return tilesPage(tiles, base, at)
	}
	page, ok, err := listingFrom(st, base, at)
	if err == nil && !ok && nothingFound(a.WidgetStates) {
		return site.Page{}, nil // Ozon's own "nothing found": no items, no next page
	}
	if err != nil || !ok {
		return site.Page{}, firstErr(err, site.Unrecognized("page API answer has no searchResultsV2 or tileGridDesktop state with items and no searchResultsError (widgets: %s)", widgetList(st)))
	}
	page.NextURL = nextAPIURL(s, pageURL, nextPage(a.NextPage, st))
	page.Next = page.NextURL != ""
	return page, nil
}

// listingFrom reads the first tile widget that has an items list.
func listingFrom(st states, base string, at time.Time) (site.Page, bool, error) {
	for _, w := range listingWidgets {
		for _, raw := range st[w] {
			tiles, ok, err := decodeTiles(raw)
			if err != nil {
				return site.Page{}, false, err
			}
			if ok {
				page, err := tilesPage(tiles, base, at)
				return page, err == nil, err
			}
		}
	}
	return site.Page{}, false, nil
}

// emptyWidget is the widget of Ozon's "nothing found" answer ("По вашим
// параметрам ничего не нашлось."), in place of the tiles.
const emptyWidget = "searchResultsError"

// nothingFound reports a page API answer with the "nothing found"
// widget, whatever its state (public clients see it as "{}" too).
func nothingFound(widgetStates map[string]string) bool {
	for key := range widgetStates {
		if name, _, _ := strings.Cut(key, "-"); name == emptyWidget {
			return true
		}
	}
	return false
}

// widgetList names the widgets of an answer, for an error.
func widgetList(st states) string {
	if len(st) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(st)), ", ")
}

// tilesPage maps tiles to items and follow-ups. Tiles none of which has
// a product ID are a tile schema the parser does not know, never an
// empty page.
func tilesPage(tiles []tile, base string, at time.Time) (site.Page, error) {
	var page site.Page
	for _, t := range tiles {
		it, ok := t.toItem(base, at)
		if !ok {
			continue
		}
		page.Items = append(page.Items, it)
		page.Follow = append(page.Follow, site.Target{Site: Name, Kind: KindProduct, ID: it.ID, URL: it.URL})
	}
	if len(tiles) > 0 && len(page.Items) == 0 {
		return site.Page{}, site.Unrecognized("%d tiles, none with a product ID (skuId, add-to-cart id or a /product/…-ID/ link)", len(tiles))
	}
	return page, nil
}

// hasNext reports a paginator state with a non-empty nextPage; a page
// without any paginator state has a next page when it is not empty
// (the handler's page limit ends the walk).
func hasNext(st states, items int) bool {
	for _, w := range paginatorWidgets {
		var p struct {
			NextPage string `json:"nextPage"`
		}
		if ok, err := st.first(w, &p); ok && err == nil && p.NextPage != "" {
			return true
		}
	}
	for _, w := range paginatorWidgets {
		if len(st[w]) > 0 {
			return false
		}
	}
	return items > 0
}

// baseURL resolves relative links: against the page URL when known, else
// the site's web endpoint.
func baseURL(s *site.Site, pageURL string) string {
	if o := site.Origin(pageURL); o != "" {
		return pageURL
	}
	return s.Endpoint(site.EndpointWeb) + "/"
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// oneItem wraps a product page's item.
func oneItem(it item.Item) site.Page { return site.Page{Items: []item.Item{it}} }

// number accepts a JSON number or a numeric string ("4.9", "4862").
type number float64

// UnmarshalJSON implements json.Unmarshaler.
func (n *number) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		var f float64
		if s == "" || json.Unmarshal([]byte(s), &f) != nil {
			return nil
		}
		*n = number(f)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return nil
	}
	*n = number(f)
	return nil
}
