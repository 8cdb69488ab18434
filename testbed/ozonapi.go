package testbed

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Ozon's page API: GET OzonAPIPath?url=<page path> answers the page's
// widgets as {"widgetStates":{"<widget>-<n>-default-1":"<JSON string>"}}.
// OzonComposerPath is the older name of the same API, still answered.
const (
	OzonAPIPath      = "/api/entrypoint-api.bx/page/json/v2"
	OzonComposerPath = "/api/composer-api.bx/page/json/v2"
)

// OzonHTMLTiles is how many tiles the HTML listing page shows; the rest of
// the page comes through the page API.
const OzonHTMLTiles = 8

// Widget names of the page API's answers, as on the real site in 2026.
const (
	ozonGridWidget   = "tileGridDesktop-3669724-default-1"
	ozonPagerWidget  = "infiniteVirtualPaginator-3618992-default-1"
	ozonSellerWidget = "webCurrentSeller-3250339-default-1"
)

// api serves the page API for search and product paths; anything else
// is refused with the reason (400), or 404 for an unknown product.
func (o *ozon) api(w http.ResponseWriter, r *http.Request) {
	u, err := url.Parse(r.URL.Query().Get("url"))
	switch {
	case err != nil || !strings.HasPrefix(u.Path, "/"):
		ozonRefuse(w, "url must be a page path such as /search/?text=x")
	case u.Path == OzonSearchPath:
		o.apiSearch(w, u.Query())
	case strings.HasPrefix(u.Path, OzonProductPath):
		o.apiProduct(w, r, u.Path)
	default:
		ozonRefuse(w, "no such page: "+u.Path)
	}
}

// apiSearch answers one search page: all its tiles in the 2026 schema and
// the next page in the paginator widget. A paginator_token that is not
// the one the previous page gave is refused; a page asked without one is
// answered, as Ozon answers ?page=N.
func (o *ozon) apiSearch(w http.ResponseWriter, v url.Values) {
	q, page := v.Get("text"), 1
	if n, err := strconv.Atoi(v.Get("page")); err == nil && n > 1 {
		page = n
	}
	if t := v.Get("paginator_token"); t != "" && t != ozonToken(q, page) {
		ozonRefuse(w, "paginator_token "+t+" is not the one page "+strconv.Itoa(page-1)+" gave")
		return
	}
	tiles := []any{}
	for _, p := range o.c.Search(SiteOzon, q, page) {
		tiles = append(tiles, ozonTile2026(p))
	}
	next := ""
	if page < o.c.Pages(SiteOzon, q) {
		next = OzonSearchPath + "?" + url.Values{"text": {q}, "layout_page_index": {strconv.Itoa(page + 1)},
			"page": {strconv.Itoa(page + 1)}, "paginator_token": {ozonToken(q, page+1)}}.Encode()
	}
	ozonAnswer(w, map[string]string{ozonGridWidget: mustJSON(jsonMap{"items": tiles}),
		ozonPagerWidget: mustJSON(jsonMap{"nextPage": next})})
}

// ozonToken is the paginator token of query's page.
func ozonToken(q string, page int) string {
	h := fnv.New32a()
	h.Write([]byte(q + "\x00" + strconv.Itoa(page)))
	return strconv.FormatUint(uint64(h.Sum32()), 36)
}

// apiProduct answers a product page's widgets, webCurrentSeller included.
func (o *ozon) apiProduct(w http.ResponseWriter, r *http.Request, path string) {
	slugID := strings.Trim(strings.TrimPrefix(path, OzonProductPath), "/")
	p, err := o.c.Product(SiteOzon, slugID[strings.LastIndexByte(slugID, '-')+1:])
	if err != nil {
		w.WriteHeader(http.StatusNotFound)
		ozonAnswer(w, map[string]string{})
		return
	}
	d := ozonProductData(p)
	ozonAnswer(w, map[string]string{
		strings.TrimPrefix(ozonHeadingState, "state-"): d["Heading"].(string),
		strings.TrimPrefix(ozonPriceState, "state-"):   d["Price"].(string),
		strings.TrimPrefix(ozonScoreState, "state-"):   d["Score"].(string),
		ozonSellerWidget: d["SellerState"].(string),
	})
}

// ozonSeller is the webCurrentSeller state of p's page.
func ozonSeller(p Product, link string) string {
	return mustJSON(jsonMap{"sellerCell": jsonMap{
		"centerBlock": jsonMap{"title": jsonMap{"text": p.Seller}},
		"common":      jsonMap{"action": jsonMap{"behavior": "BEHAVIOR_TYPE_REDIRECT", "link": link}},
	}})
}

// ozonTile2026 is one tile in the 2026 schema (the real answer of
// 2026-08-07): the title a textDS with id "name", rating and reviews the
// text items of a labelListV2, and a stock textDS before the title.
func ozonTile2026(p Product) jsonMap {
	text := func(s string) jsonMap { return jsonMap{"type": "text", "text": jsonMap{"text": s}} }
	icon := func(s string) jsonMap { return jsonMap{"type": "icon", "icon": jsonMap{"icon": jsonMap{"icon": s}}} }
	return jsonMap{
		"action": jsonMap{"behavior": "BEHAVIOR_TYPE_REDIRECT", "link": p.URL + "?at=tb"},
		"id":     p.ID,
		"mainState": []any{
			jsonMap{"type": "priceV2", "priceV2": jsonMap{"price": []any{
				jsonMap{"text": ozonPrice(p.Price), "textStyle": "PRICE"},
				jsonMap{"text": ozonPrice(p.OldPrice), "textStyle": "ORIGINAL_PRICE"},
			}}},
			jsonMap{"type": "textDS", "textDS": jsonMap{"text": strconv.Itoa(p.Stock) + " шт осталось",
				"testInfo": jsonMap{"automatizationId": "tile-blackFridayStockbar"}}},
			jsonMap{"type": "textDS", "id": "name", "textDS": jsonMap{"text": p.Title,
				"testInfo": jsonMap{"automatizationId": "tile-name"}}},
			jsonMap{"type": "labelListV2", "labelListV2": jsonMap{"items": []any{
				icon("ic_s_star_filled_compact"), text(strconv.FormatFloat(p.Rating, 'f', 1, 64)),
				icon("ic_s_dialog_filled_compact"), text(rubles(int64(p.Reviews)*100, " ") + " " + reviewsWord(p.Reviews)),
			}, "testInfo": jsonMap{"automatizationId": "tile-list-rating"}}},
		},
		"multiButton": jsonMap{"ozonButton": jsonMap{"type": "addToCart", "addToCart": jsonMap{"skuId": p.ID}}},
	}
}

// ozonAnswer writes a page API answer: each state a JSON string.
func ozonAnswer(w http.ResponseWriter, states map[string]string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(jsonMap{"widgetStates": states})
}

// ozonRefuse answers 400 with the reason; Log.OzonRefused lists them.
func ozonRefuse(w http.ResponseWriter, why string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(jsonMap{"error": why})
}

// OzonRefused returns the page API requests Ozon refused (400), in order.
func (l *Log) OzonRefused() []Entry {
	var out []Entry
	for _, e := range l.Entries() {
		if e.Site == SiteOzon && e.Status == http.StatusBadRequest {
			out = append(out, e)
		}
	}
	return out
}
