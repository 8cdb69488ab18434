package testbed

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Wildberries URL paths: the current APIs under www.wildberries.ru/__internal/
// (498 without the x_wbaas_token cookie in challenge mode), the older
// search.wb.ru (v9, the version that answers in 2026) and card.wb.ru
// ones, and catalog.wb.ru's v4 listing. Retired paths answer 404 as the
// real site does: catalog v2 (WBCatalogV2Pattern) and search v5.
const (
	WBSearchPath       = "/__internal/u-search/exactmatch/ru/common/v18/search"
	WBDetailPath       = "/__internal/u-card/cards/v4/detail"
	WBLegacySearchPath = "/exactmatch/ru/common/v9/search"
	WBLegacyDetailPath = "/cards/v4/detail"
	WBCatalogPattern   = "/catalog/{shard}/v4/catalog"
	WBCatalogV2Pattern = "/catalog/{shard}/v2/catalog"
)

// wbSearchPath and wbDetailPath say whether path is a search or a
// card-detail API path, current or legacy.
func wbSearchPath(path string) bool { return path == WBSearchPath || path == WBLegacySearchPath }
func wbDetailPath(path string) bool { return path == WBDetailPath || path == WBLegacyDetailPath }

// wildberries serves the JSON search and card-detail APIs, and its
// basket CDN's card.json and upstream map.
type wildberries struct {
	c         catalogAt
	upstreams *UpstreamsRule
	// shells is nil unless product pages of some IPs are the frame
	// without the product (ProductShellRule).
	shells *shells
}

func (wb *wildberries) cookie() string { return "_wbauid" }

func (wb *wildberries) routes() http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{WBSearchPath, WBLegacySearchPath} {
		mux.HandleFunc("GET "+p, wb.search)
	}
	for _, p := range []string{WBDetailPath, WBLegacyDetailPath} {
		mux.HandleFunc("GET "+p, wb.detail)
	}
	mux.HandleFunc("GET "+WBCatalogPattern, wb.catalog)
	mux.HandleFunc("GET "+WBCatalogV2Pattern, http.NotFound) // gone since July 2026
	mux.HandleFunc("GET "+WBCardJSONPattern, wb.cardJSON)
	mux.HandleFunc("GET "+UpstreamsPath, wb.upstreamMap)
	mux.HandleFunc("GET "+WBProductPagePattern, wb.productPage)
	return mux
}

// WBCardJSONPattern is the basket CDN's static card path,
// /vol{nm/100000}/part{nm/1000}/{nm}/info/ru/card.json. The real one is on
// basket-NN.wbbasket.ru; the testbed serves it, with no token or
// challenge (as the real one), on its basket host names (basket.go) and,
// for catalog products, on the site's own host too.
const WBCardJSONPattern = "/{vol}/{part}/{nm}/info/ru/card.json"

// WBCardJSONPath is nm's card.json path.
func WBCardJSONPath(nm int64) string {
	return "/vol" + strconv.FormatInt(nm/100000, 10) + "/part" + strconv.FormatInt(nm/1000, 10) +
		"/" + strconv.FormatInt(nm, 10) + "/info/ru/card.json"
}

// wbCard is the card.json shape (fields of the real sample; no price).
type wbCard struct {
	IMTID        int64      `json:"imt_id"`
	NMID         int64      `json:"nm_id"`
	IMTName      string     `json:"imt_name"`
	Slug         string     `json:"slug"`
	SubjName     string     `json:"subj_name"`
	VendorCode   string     `json:"vendor_code"`
	Description  string     `json:"description"`
	Options      []wbOption `json:"options"`
	NMColorNames string     `json:"nm_colors_names"`
	Selling      wbSelling  `json:"selling"`
}

type wbOption struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type wbSelling struct {
	BrandName  string `json:"brand_name"`
	SupplierID int    `json:"supplier_id"`
}

// cardJSON answers a catalog product's card.json; 404 (as the CDN) for an
// unknown nm or a vol/part that does not match it. On a basket host name
// basketCard answers.
func (wb *wildberries) cardJSON(w http.ResponseWriter, r *http.Request) {
	if n, ok := basketNumber(r.Host); ok {
		wb.basketCard(w, r, n)
		return
	}
	nm, err := strconv.ParseInt(r.PathValue("nm"), 10, 64)
	p, perr := wb.c.Product(SiteWildberries, r.PathValue("nm"))
	if err != nil || perr != nil || r.URL.Path != WBCardJSONPath(nm) {
		http.NotFound(w, r)
		return
	}
	writeCard(w, nm, p)
}

// writeCard writes p's card.json.
func writeCard(w http.ResponseWriter, nm int64, p Product) {
	head := strings.Fields(p.Title)[0]
	writeJSON(w, wbCard{IMTID: nm / 3, NMID: nm, IMTName: p.Title, Slug: p.Slug,
		SubjName: head, VendorCode: strings.ToUpper(p.Slug[:min(len(p.Slug), 8)]) + "-" + p.ID[len(p.ID)-3:],
		Description: p.Title + " от " + p.Brand + ".",
		Options:     []wbOption{{Name: "Бренд", Value: p.Brand}},
		Selling:     wbSelling{BrandName: p.Brand, SupplierID: p.SellerID}})
}

// wbProduct is a product object of the search and detail APIs.
type wbProduct struct {
	ID             int64    `json:"id"`
	Root           int64    `json:"root"`
	Brand          string   `json:"brand"`
	BrandID        int      `json:"brandId"`
	Name           string   `json:"name"`
	Entity         string   `json:"entity"`
	Supplier       string   `json:"supplier"`
	SupplierID     int      `json:"supplierId"`
	SupplierRating float64  `json:"supplierRating"`
	Rating         int      `json:"rating"`
	ReviewRating   float64  `json:"reviewRating"`
	NMReviewRating float64  `json:"nmReviewRating"`
	Feedbacks      int      `json:"feedbacks"`
	NMFeedbacks    int      `json:"nmFeedbacks"`
	Sizes          []wbSize `json:"sizes"`
	// TotalQuantity is the units in stock over all sizes; 0 when sold out.
	TotalQuantity int `json:"totalQuantity"`
}

// wbSize is one size of a product. Stocks (per warehouse) is in the card
// detail answer, [] when sold out; search answers leave it out and give
// only the product's totalQuantity.
type wbSize struct {
	Name     string     `json:"name"`
	OrigName string     `json:"origName"`
	OptionID int64      `json:"optionId"`
	Stocks   *[]wbStock `json:"stocks,omitempty"`
	Price    wbPrice    `json:"price"`
}

type wbStock struct {
	WH  int `json:"wh"`
	Qty int `json:"qty"`
}

type wbPrice struct {
	Basic     int64 `json:"basic"`
	Product   int64 `json:"product"`
	Logistics int64 `json:"logistics"`
	Return    int64 `json:"return"`
}

// toWB is p as the search answer shows it: totalQuantity, no stocks.
func toWB(p Product) wbProduct {
	id, _ := strconv.ParseInt(p.ID, 10, 64)
	return wbProduct{
		ID: id, Root: id / 3, Brand: p.Brand, BrandID: len(p.Brand) * 1009, Name: p.Title,
		Entity: strings.ToLower(strings.Fields(p.Title)[0]), Supplier: p.Seller, SupplierID: p.SellerID,
		SupplierRating: p.Rating, Rating: int(p.Rating + 0.5), ReviewRating: p.Rating, NMReviewRating: p.Rating,
		Feedbacks: p.Reviews, NMFeedbacks: p.Reviews, TotalQuantity: p.Stock,
		Sizes: []wbSize{{OrigName: "0", OptionID: id * 2,
			Price: wbPrice{Basic: p.OldPrice, Product: p.Price, Logistics: 2800}}},
	}
}

// toWBDetail is p as the card detail answer shows it: the search shape
// plus the size's stock per warehouse.
func toWBDetail(p Product) wbProduct {
	w := toWB(p)
	w.Sizes[0].Stocks = wbStocks(p.Stock)
	return w
}

// wbStocks spreads qty over two warehouses, as the real answer lists
// several; none when qty is 0.
func wbStocks(qty int) *[]wbStock {
	stocks := []wbStock{}
	if far := qty / 3; far > 0 {
		stocks = append(stocks, wbStock{WH: 507, Qty: far})
	}
	if near := qty - qty/3; near > 0 {
		stocks = append(stocks, wbStock{WH: 314812, Qty: near})
	}
	return &stocks
}

func toWBList(ps []Product, shape func(Product) wbProduct) []wbProduct {
	out := make([]wbProduct, 0, len(ps))
	for _, p := range ps {
		out = append(out, shape(p))
	}
	return out
}

// wbSearch is the v5 search answer; products sit at the top level.
type wbSearch struct {
	Metadata wbMetadata  `json:"metadata"`
	State    int         `json:"state"`
	Version  int         `json:"version"`
	Total    int         `json:"total"`
	Products []wbProduct `json:"products"`
}

type wbMetadata struct {
	Name        string `json:"name"`
	CatalogType string `json:"catalog_type"`
}

func (wb *wildberries) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("query")
	page := pageParam(r, "page")
	if len(wb.c.Matches(SiteWildberries, q)) == 0 {
		wbNothingFound(w, q)
		return
	}
	writeJSON(w, wbSearch{
		Metadata: wbMetadata{Name: q, CatalogType: "preset"}, Version: 2,
		Total:    len(wb.c.Matches(SiteWildberries, q)),
		Products: toWBList(wb.c.Search(SiteWildberries, q, page), toWB),
	})
}

// wbResolution is the search's query-resolution object: the shard and
// the catalog query a search resolves to, and no products key at all.
// Wildberries answers a query that matches nothing with it (issue 36.3).
// No capture of it was found: the testbed's answer is built from public
// clients' code, which reads these fields from a search answer without
// products: glmn/wb-private-api src/WBPrivateAPI.js getQueryMetadata
// @538355b (2024-05-13; shardKey and query, "products: []"), and
// Refusned/wb-price-tracker-bot app/wb/client.py _is_routing_payload
// @6806cf9 (2026-05-18, u-search v18; "WB returned only routing
// metadata without products"). tasks/wildberries/testdata/2026 keeps it.
type wbResolution struct {
	Name     string `json:"name"`
	Query    string `json:"query"`
	ShardKey string `json:"shardKey"`
	Filters  string `json:"filters"`
}

// wbNothingFound writes the query-resolution object for q, a query the
// catalog has nothing for (and, from a soft-banned IP, for any query:
// the same bytes but the query, so one answer cannot tell them apart).
func wbNothingFound(w http.ResponseWriter, q string) {
	writeJSON(w, wbResolution{Name: q, Query: "preset=1000001", ShardKey: "presets/bucket_1", Filters: "xsubject"})
}

// catalog answers catalog.wb.ru's v4 listing in the search answer's
// shape. The testbed's categories are title words: cat is one (the real
// cat is a menu id), so a category lists the products a one-word search
// finds.
func (wb *wildberries) catalog(w http.ResponseWriter, r *http.Request) {
	cat := r.URL.Query().Get("cat")
	writeJSON(w, wbSearch{
		Metadata: wbMetadata{Name: cat, CatalogType: "subject"}, Version: 2,
		Total:    len(wb.c.Matches(SiteWildberries, cat)),
		Products: toWBList(wb.c.Search(SiteWildberries, cat, pageParam(r, "page")), toWB),
	})
}

// detail answers /cards/v4/detail?nm=ID[;ID…]; unknown ids are left out.
func (wb *wildberries) detail(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string][]wbProduct{"products": toWBList(wb.found(r), toWBDetail)})
}

// found is the catalog products a detail request names.
func (wb *wildberries) found(r *http.Request) []Product {
	var found []Product
	for _, id := range strings.Split(r.URL.Query().Get("nm"), ";") {
		if p, err := wb.c.Product(SiteWildberries, strings.TrimSpace(id)); err == nil {
			found = append(found, p)
		}
	}
	return found
}

// wallStatus is the status of Wildberries' wall: WallStatus, else 498.
func (c ChallengeRule) wallStatus() int {
	if c.WallStatus != 0 {
		return c.WallStatus
	}
	return 498
}

// wbRefuse is an API's answer without a valid x_wbaas_token: the token
// API's JSON (plomio challenge1.json, 2026-10) with the wall's status.
func wbRefuse(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, `{"code":498,"message":"challenge is required"}`)
}

// blockPage: no real WB block page was ever saved; parsers describe an
// empty 403/429 body. The 200 variant is a bare "Доступ ограничен" page.
func (wb *wildberries) blockPage(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if status == http.StatusOK {
		io.WriteString(w, wbBlockHTML)
	}
}

const wbBlockHTML = `<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8">` +
	`<title>Доступ ограничен</title></head><body><h1>Доступ ограничен</h1>` +
	`<p>Подозрительная активность с вашего IP. Попробуйте позже.</p></body></html>`

// placeholder is the suspicious "200 with products: []" answer.
func (wb *wildberries) placeholder(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, wbSearch{Version: 2, Products: []wbProduct{}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(v)
}

// pageParam reads a 1-based page number, defaulting to 1.
func pageParam(r *http.Request, name string) int {
	n, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil || n < 1 {
		return 1
	}
	return n
}
