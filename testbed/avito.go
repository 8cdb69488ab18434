package testbed

import (
	"html/template"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// avito serves search pages /<location>?q=…&p=N (2025 cards with the
// seller block), the JSON search AvitoItemsPath?q=…&p=N and item pages
// /<location>/<category>/<slug>_<id>. Search ignores the location: it
// searches the whole catalog, and each item keeps its own city in its URL.
type avito struct{ c catalogAt }

// AvitoItemsPath is Avito's JSON search (web/1/js/items; its 2026 answer
// shape: ru-marketplace-mcp's fixture of 2026-07-28).
const AvitoItemsPath = "/web/1/js/items"

func (a *avito) cookie() string { return "u" }

func (a *avito) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+AvitoItemsPath, a.items)
	mux.HandleFunc("GET /{location}", a.search)
	mux.HandleFunc("GET /{location}/{category}/{item}", a.item)
	return mux
}

type avitoPage struct {
	Query, Location string
	Items           []avitoCard
	Pages           []int
	Current, Last   int
}

type avitoCard struct {
	P       Product
	Price   string // rubles, digits only
	Shown   string // "27 000 ₽" with NBSP
	Score   string // the seller's rating, "4,8"
	Summary string // the seller's reviews, "647 отзывов"
}

func avitoCardOf(p Product) avitoCard {
	return avitoCard{P: p, Price: strconv.FormatInt(p.Price/100, 10), Shown: rubles(p.Price, "\u00a0") + "\u00a0₽",
		Score:   strings.Replace(strconv.FormatFloat(p.Rating, 'f', 1, 64), ".", ",", 1),
		Summary: strconv.Itoa(p.Reviews) + " отзывов"}
}

// avitoItems is the js/items answer: items at the top level, each with
// id, title, urlPath, priceDetailed.value (rubles) and the seller's
// rating; no seller name.
type avitoItems struct {
	Count       int         `json:"count"`
	TotalCount  int         `json:"totalCount"`
	ItemsOnPage int         `json:"itemsOnPage"`
	Items       []avitoItem `json:"items"`
}

type avitoItem struct {
	ID            int64          `json:"id"`
	Title         string         `json:"title"`
	URLPath       string         `json:"urlPath"`
	PriceDetailed map[string]any `json:"priceDetailed"`
	Rating        map[string]any `json:"rating"`
	Location      map[string]any `json:"location"`
}

// items serves AvitoItemsPath?q=…&p=N.
func (a *avito) items(w http.ResponseWriter, r *http.Request) {
	q, page := r.URL.Query().Get("q"), pageParam(r, "p")
	n := len(a.c.Matches(SiteAvito, q))
	out := avitoItems{Count: n, TotalCount: n, ItemsOnPage: PageSizes[SiteAvito], Items: []avitoItem{}}
	for _, p := range a.c.Search(SiteAvito, q, page) {
		id, _ := strconv.ParseInt(p.ID, 10, 64)
		c := avitoCardOf(p)
		out.Items = append(out.Items, avitoItem{ID: id, Title: p.Title, URLPath: p.URL + "?context=H4sIAAAA",
			PriceDetailed: map[string]any{"value": p.Price / 100, "string": c.Shown, "hasValue": true},
			Rating:        map[string]any{"score": p.Rating, "summary": c.Summary},
			Location:      map[string]any{"name": p.Location}})
	}
	writeJSON(w, out)
}

func (a *avito) search(w http.ResponseWriter, r *http.Request) {
	if a.redirectStub(w, r) {
		return
	}
	q, page := r.URL.Query().Get("q"), pageParam(r, "p")
	d := avitoPage{Query: q, Location: r.PathValue("location"), Current: page, Last: a.c.Pages(SiteAvito, q)}
	for _, p := range a.c.Search(SiteAvito, q, page) {
		d.Items = append(d.Items, avitoCardOf(p))
	}
	d.Pages = pageLinks(page, d.Last)
	render(w, http.StatusOK, avitoSearchTmpl, d)
}

// pageLinks are the page numbers a pagination bar shows: the first, the
// neighbours of current, and the last (so the last span is the count).
func pageLinks(current, last int) []int {
	var out []int
	for i := 1; i <= last; i++ {
		if i == 1 || i == last || i >= current-1 && i <= current+1 {
			out = append(out, i)
		}
	}
	return out
}

var avitoSearchTmpl = template.Must(template.New("avito-search").Parse(`<!DOCTYPE html>
<html lang="ru"><head><meta charset="utf-8"><title>{{.Query}} — купить на Авито</title></head>
<body><div data-marker="catalog-serp">
{{range .Items}}<div data-marker="item" data-item-id="{{.P.ID}}" id="i{{.P.ID}}" itemscope itemtype="http://schema.org/Product">
<a itemprop="url" data-marker="item-photo" href="{{.P.URL}}"></a>
<a itemprop="url" data-marker="item-title" href="{{.P.URL}}" title="{{.P.Title}}"><h3 itemprop="name">{{.P.Title}}</h3></a>
<p data-marker="item-price" itemprop="offers" itemscope itemtype="http://schema.org/Offer"><meta itemprop="priceCurrency" content="RUB"><meta itemprop="price" content="{{.Price}}"><strong><span>{{.Shown}}</span></strong></p>
<div data-marker="item-address"><p><span>{{.P.Location}}</span></p></div>
<p data-marker="item-date">1 день назад</p>
<div class="iva-item-sellerInfo-w2qER"><a href="/user/{{.P.SellerID}}/profile"><p>{{.P.Seller}}</p></a>
<span data-marker="seller-info/score">{{.Score}}</span><p data-marker="seller-info/summary">{{.Summary}}</p></div>
</div>
{{end}}</div>
{{if .Pages}}<nav aria-label="Пагинация"><ul data-marker="pagination-button">
{{if gt .Current 1}}<li><a href="?q={{.Query}}&amp;p={{.Current}}" data-marker="pagination-button/previousPage">‹</a></li>{{end}}
{{range .Pages}}<li><a href="?q={{$.Query}}&amp;p={{.}}" data-value="{{.}}" data-marker="pagination-button/page({{.}})"><span>{{.}}</span></a></li>
{{end}}<li><a data-marker="pagination-button/nextPage">›</a></li></ul></nav>{{end}}
</body></html>
`))

// item serves /<location>/<category>/<slug>_<id>.
func (a *avito) item(w http.ResponseWriter, r *http.Request) {
	seg := r.PathValue("item")
	p, err := a.c.Product(SiteAvito, seg[strings.LastIndexByte(seg, '_')+1:])
	if err != nil || p.URL != r.URL.Path {
		http.NotFound(w, r)
		return
	}
	label := "Частное лицо"
	if strings.HasPrefix(p.Seller, "ООО") || strings.HasPrefix(p.Seller, "Агентство") {
		label = "Агентство"
	}
	render(w, http.StatusOK, avitoItemTmpl, map[string]any{"C": avitoCardOf(p), "Label": label})
}

var avitoItemTmpl = template.Must(template.New("avito-item").Parse(`<!DOCTYPE html>
<html lang="ru"><head><meta charset="utf-8"><title>{{.C.P.Title}} — купить на Авито</title></head>
<body><div itemscope itemtype="http://schema.org/Product">
<h1 itemprop="name" data-marker="item-view/title-info">{{.C.P.Title}}</h1>
<div data-marker="item-view/item-price-container" itemprop="offers" itemscope itemtype="http://schema.org/Offer"><meta itemprop="priceCurrency" content="RUB">
<span content="{{.C.Price}}" itemprop="price" data-marker="item-view/item-price">{{.C.Shown}}</span></div>
<p><span data-marker="item-view/item-id">№&nbsp;{{.C.P.ID}}</span><span data-marker="item-view/item-date"> · 11 мая в 11:21</span></p>
<div data-marker="item-view/item-description">{{.C.P.Title}}. {{.C.P.Brand}}.</div>
<div data-marker="seller-info/name"><span>{{.C.P.Seller}}</span></div>
<div data-marker="seller-info/label">{{.Label}}</div>
<div data-marker="seller-info/score">{{.C.Score}}</div>
<div data-marker="seller-info/summary">{{.C.Summary}}</div>
</div></body></html>
`))

// blockPage is the "Доступ ограничен: проблема с IP" firewall page.
func (a *avito) blockPage(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, avitoBlockHTML)
}

const avitoBlockHTML = `<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8">
<title>Доступ ограничен: проблема с IP</title></head>
<body><div class="firewall-container"><h2 class="firewall-title">Доступ ограничен: проблема с IP</h2>
<p>Иногда такое случается — подождите немного и обновите страницу.</p>
<form class="js-firewall-form" method="post"><div id="h-captcha"><div class="h-captcha" data-sitekey="070db171-testbed"></div></div>
<button type="submit">Продолжить</button></form>
<p>Если и это не сработает, напишите в <a href="https://support.avito.ru/request/720">поддержку</a>.</p></div>
</body></html>
`

// placeholder is a search page frame with no cards and no pagination.
func (a *avito) placeholder(w http.ResponseWriter, r *http.Request) {
	render(w, http.StatusOK, avitoSearchTmpl, avitoPage{})
}
