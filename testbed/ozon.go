package testbed

import (
	"encoding/json"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Ozon URL paths.
const (
	OzonSearchPath  = "/search/"
	OzonProductPath = "/product/" // + <slug>-<id>/
)

// Widget state ids as on the real pages (the number is a build detail).
const (
	ozonSearchState  = "state-searchResultsV2-3547909-default-1"
	ozonHeadingState = "state-webProductHeading-3385933-default-1"
	ozonPriceState   = "state-webPrice-3121879-default-1"
	ozonScoreState   = "state-webReviewProductScore-3132021-default-1"
	ozonPagerState   = "state-megaPaginator-3547910-default-1"
)

// pager is the megaPaginator state: nextPage is empty on the last page, as
// on the real site, so crawlers stop without asking past the end.
func (o *ozon) pager(q string, page int) jsonMap {
	next := ""
	if page < o.c.Pages(SiteOzon, q) {
		next = OzonSearchPath + "?" + url.Values{"text": {q}, "page": {strconv.Itoa(page + 1)}}.Encode()
	}
	return jsonMap{"currentPage": page, "nextPage": next, "totalPages": o.c.Pages(SiteOzon, q)}
}

// ozon serves the search and product pages with widget states.
type ozon struct{ c catalogAt }

func (o *ozon) cookie() string { return "__Secure-ab-group" }

func (o *ozon) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+OzonSearchPath, o.search)
	mux.HandleFunc("GET "+OzonProductPath+"{slugid}/", o.product)
	mux.HandleFunc("GET "+OzonAPIPath, o.api)
	mux.HandleFunc("GET "+OzonComposerPath, o.api)
	return mux
}

// rubles formats kopecks as Ozon does: "2 099 ₽" with thin spaces.
func rubles(kopecks int64, sep string) string {
	s := strconv.FormatInt(kopecks/100, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(r)
	}
	return b.String()
}

const thinSpace = "\u2009"

func ozonPrice(kopecks int64) string { return rubles(kopecks, thinSpace) + thinSpace + "₽" }

// reviewsWord is the Russian plural for "отзыв" after n.
func reviewsWord(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 14:
		return "отзывов"
	case n%10 == 1:
		return "отзыв"
	case n%10 >= 2 && n%10 <= 4:
		return "отзыва"
	}
	return "отзывов"
}

type jsonMap = map[string]any

// ozonTile is one searchResultsV2 item, shaped like the 2024 sample.
func ozonTile(p Product) jsonMap {
	return jsonMap{
		"action": jsonMap{"behavior": "BEHAVIOR_TYPE_REDIRECT", "link": p.URL},
		"mainState": []any{
			jsonMap{"type": "atom", "id": "atom", "atom": jsonMap{"type": "priceV2", "priceV2": jsonMap{
				"price": []any{
					jsonMap{"text": ozonPrice(p.Price), "textStyle": "PRICE"},
					jsonMap{"text": ozonPrice(p.OldPrice), "textStyle": "ORIGINAL_PRICE"},
				},
				"discount": "−" + strconv.FormatInt(100-p.Price*100/p.OldPrice, 10) + "%",
			}}},
			jsonMap{"type": "atom", "id": "name", "atom": jsonMap{"type": "textAtom", "textAtom": jsonMap{
				"text": template.HTMLEscapeString(p.Title), "testInfo": jsonMap{"automatizationId": "tile-name"},
			}}},
			jsonMap{"atom": jsonMap{"type": "labelList", "labelList": jsonMap{"items": []any{
				jsonMap{"title": strconv.FormatFloat(p.Rating, 'f', 1, 64) + "  ",
					"testInfo": jsonMap{"automatizationId": "tile-list-rating"}},
				jsonMap{"title": rubles(int64(p.Reviews)*100, " ") + " " + reviewsWord(p.Reviews),
					"testInfo": jsonMap{"automatizationId": "tile-list-comments"}},
			}, "testInfo": jsonMap{"automatizationId": "tile-list-rating"}}}},
		},
		"multiButton": jsonMap{"ozonButton": jsonMap{"type": "addToCartButtonWithQuantity",
			"addToCartButtonWithQuantity": jsonMap{"action": jsonMap{"id": p.ID, "quantity": 1}}}},
		"skuId": p.ID,
	}
}

// search serves the HTML listing page: its first OzonHTMLTiles tiles, as
// the real page shows; the rest comes through the page API.
func (o *ozon) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("text")
	page := pageParam(r, "page")
	tiles := []any{}
	found := o.c.Search(SiteOzon, q, page)
	for _, p := range found[:min(len(found), OzonHTMLTiles)] {
		tiles = append(tiles, ozonTile(p))
	}
	state := jsonMap{"tileLayout": "LAYOUT_GRID4", "items": tiles, "cols": 12, "page": page}
	render(w, http.StatusOK, ozonSearchTmpl, jsonMap{"Query": q, "ID": ozonSearchState, "State": mustJSON(state),
		"PagerID": ozonPagerState, "Pager": mustJSON(o.pager(q, page))})
}

var ozonSearchTmpl = template.Must(template.New("ozon-search").Parse(`<!DOCTYPE html>
<html lang="ru"><head><meta charset="utf-8"><title>{{.Query}} — купить на OZON</title></head>
<body><div id="layoutPage"><div data-widget="searchResultsV2"><div id="{{.ID}}" data-state="{{.State}}"></div></div>
<div data-widget="megaPaginator"><div id="{{.PagerID}}" data-state="{{.Pager}}"></div></div></div></body></html>
`))

// product serves /product/<slug>-<id>/.
func (o *ozon) product(w http.ResponseWriter, r *http.Request) {
	slugID := r.PathValue("slugid")
	id := slugID[strings.LastIndexByte(slugID, '-')+1:]
	p, err := o.c.Product(SiteOzon, id)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	render(w, http.StatusOK, ozonProductTmpl, ozonProductData(p))
}

func ozonProductData(p Product) jsonMap {
	ld := jsonMap{"@context": "http://schema.org", "@type": "Product", "name": p.Title, "sku": p.ID, "brand": p.Brand,
		"aggregateRating": jsonMap{"@type": "AggregateRating", "ratingValue": strconv.FormatFloat(p.Rating, 'f', 1, 64), "reviewCount": strconv.Itoa(p.Reviews)},
		"offers":          jsonMap{"@type": "Offer", "url": p.URL, "availability": ozonAvailability(p), "price": strconv.FormatInt(p.Price/100, 10), "priceCurrency": "RUB"}}
	id, _ := strconv.ParseInt(p.ID, 10, 64)
	seller := "/seller/" + slug(p.Seller) + "-" + strconv.Itoa(p.SellerID) + "/"
	return jsonMap{
		"P": p, "LD": template.JS(mustJSON(ld)), "Seller": seller,
		"SellerID": "state-" + ozonSellerWidget, "SellerState": ozonSeller(p, seller),
		"HeadingID": ozonHeadingState, "Heading": mustJSON(jsonMap{"title": p.Title, "rowCount": 2}),
		"PriceID": ozonPriceState, "Price": mustJSON(jsonMap{"isAvailable": p.InStock(), "price": ozonPrice(p.Price),
			"originalPrice": ozonPrice(p.OldPrice), "showOriginalPrice": true}),
		"ScoreID": ozonScoreState, "Score": mustJSON(jsonMap{"url": p.URL + "reviews/", "reviewsCount": p.Reviews,
			"itemId": id, "totalScore": p.Rating, "isHidden": false}),
	}
}

// ozonAvailability is the schema.org availability of p's offer in the
// product page's JSON-LD, as the real page gives it.
func ozonAvailability(p Product) string {
	if p.InStock() {
		return "http://schema.org/InStock"
	}
	return "http://schema.org/OutOfStock"
}

var ozonProductTmpl = template.Must(template.New("ozon-product").Parse(`<!DOCTYPE html>
<html lang="ru"><head><meta charset="utf-8"><title>{{.P.Title}} купить на OZON по низкой цене ({{.P.ID}})</title>
<link href="{{.P.URL}}" rel="canonical">
<script type="application/ld+json">{{.LD}}</script></head>
<body><div id="layoutPage">
<div data-widget="webProductHeading"><div id="{{.HeadingID}}" data-state="{{.Heading}}"></div><h1>{{.P.Title}}</h1></div>
<div data-widget="webPrice"><div id="{{.PriceID}}" data-state="{{.Price}}"></div></div>
<div data-widget="webReviewProductScore"><div id="{{.ScoreID}}" data-state="{{.Score}}"></div></div>
<div data-widget="webCurrentSeller"><div id="{{.SellerID}}" data-state="{{.SellerState}}"></div><div><a href="{{.Seller}}">{{.P.Seller}}</a></div></div>
</div></body></html>
`))

// blockPage is the antibot hard block ("Доступ ограничен", incident
// fab_nmk_…): the challenge page's frame without its script, which parsers
// describe as the block that no browser clears (see ozonChallengeHTML for
// the challenge).
func (o *ozon) blockPage(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, ozonBlockHTML)
}

const ozonBlockHTML = `<html lang="ru"><head><meta charset="UTF-8">
<link rel="stylesheet" href="https://cdn1.ozone.ru/s3/abt-complaints/static/v1/common.css">
<title>Доступ ограничен</title></head>
<body><div class="container"><div class="content"><div class="mc"><div class="c"><div class="h"><h1>Доступ ограничен</h1></div>
<p class="s">Инцидент: fab_nmk_20250616204607_01JXX7W0ETJ8V3WSDBGR52KHWZ</p>
<div class="tc"><p>Чтобы решить проблему, попробуйте сделать это:</p><ul><li>Немного подождать и нажать на кнопку «Обновить»</li>
<li>Отключить VPN, если он используется</li></ul></div></div>
<div class="bc"><button class="rb" id="reload-button">Обновить</button></div></div></div></div>
</body></html>
`

// placeholder is the search page frame with no items.
func (o *ozon) placeholder(w http.ResponseWriter, r *http.Request) {
	render(w, http.StatusOK, ozonSearchTmpl, jsonMap{"ID": ozonSearchState, "State": `{"items":[]}`})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// render executes t into w with status.
func render(w http.ResponseWriter, status int, t *template.Template, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	t.Execute(w, data)
}
