package testbed

import (
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// WBProductPagePattern is Wildberries' product page,
// /catalog/{nm}/detail.aspx. The testbed serves it as the browser shows
// it once its scripts ran, in the markup of 2026: generated class names
// (a stable name, "--", a build's hash), the options table with the
// Артикул row, the nm ID in the <title>. The markup is built from public
// clients' code of 2025–2026, no capture of the page being public
// (tasks/wildberries/testdata/2026/README.md); an unknown nm is a 404.
const WBProductPagePattern = "/catalog/{nm}/detail.aspx"

// WBProductPagePath is nm's product page path.
func WBProductPagePath(nm string) string { return "/catalog/" + nm + "/detail.aspx" }

// ProductShellRule makes Wildberries answer the product page of some IPs
// with the page's frame without its product: status 200, the
// storefront's title ("Интернет-магазин Wildberries: …", which public
// clients of 2026 meet on product URLs and refuse to take for a name),
// the product-page container and no title, price or Артикул. An answer
// judged OK from which no item can be read: crawlq must take it for an
// unknown shape, never for a page without items (issue 36.6).
type ProductShellRule struct {
	// IPs is how many IPs get the frame: the first to ask for a product
	// page, in the order they ask; every one of their product pages is
	// the frame.
	IPs int `json:"ips"`
}

// shells is the rule's state. Safe for concurrent use.
type shells struct {
	rule ProductShellRule
	mu   sync.Mutex
	ips  map[string]bool
}

func newShells(rule *ProductShellRule) *shells {
	if rule == nil || rule.IPs <= 0 {
		return nil
	}
	return &shells{rule: *rule, ips: map[string]bool{}}
}

// meets says whether ip gets the frame.
func (s *shells) meets(ip string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ips[ip] && len(s.ips) < s.rule.IPs {
		s.ips[ip] = true
	}
	return s.ips[ip]
}

// productPage serves nm's rendered product page, or the frame to an IP
// the ProductShellRule chose.
func (wb *wildberries) productPage(w http.ResponseWriter, r *http.Request) {
	p, err := wb.c.Product(SiteWildberries, r.PathValue("nm"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if wb.shells.meets(clientIP(r)) {
		_ = wbShellTmpl.Execute(w, nil)
		return
	}
	_ = wbProductTmpl.Execute(w, wbProductView(p))
}

// wbProductPage is what the page shows of a product.
type wbProductPage struct {
	P                      Product
	Price, Old, Wallet     string
	Score, ReviewCount, ID string
}

func wbProductView(p Product) wbProductPage {
	shown := func(k int64) string { return rubles(k, "\u00a0") + "\u00a0₽" }
	return wbProductPage{P: p, ID: p.ID, Price: shown(p.Price), Old: shown(p.OldPrice), Wallet: shown(p.Price * 98 / 100 / 100 * 100),
		Score: strings.Replace(strconv.FormatFloat(p.Rating, 'f', 1, 64), ".", ",", 1), ReviewCount: rubles(int64(p.Reviews)*100, "\u00a0")}
}

var wbProductTmpl = template.Must(template.New("wb-product").Parse(`<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8">` +
	`<title>{{.P.Brand}} {{.ID}} купить за {{.Price}} в интернет‑магазине Wildberries</title></head>
<body><div id="app"><div id="reactContainers"><main class="product-page" data-testid="product_page">
<div class="productHeader--xVcc8"><a class="productHeaderBrand--bHNfA" href="/brands/{{.P.SellerID}}"><span class="productHeaderBrandText--ZdMBC">{{.P.Brand}}</span></a>
<h2 class="mo-typography mo-typography_variant_title3 mo-typography_colors_primary productTitle--jKvWV">{{.P.Title}}</h2>
<a class="productReview--Ez1qd" href="/catalog/{{.ID}}/feedbacks"><span class="productReviewRating--gQDQG">{{.Score}} · {{.ReviewCount}} оценок</span></a></div>
<div class="priceBlock--OLDks"><button class="mo-button priceBlockWalletPrice--K6fNr" type="button"><h2>{{.Wallet}}</h2></button>
<ins class="priceBlockFinalPrice--AUlzU">{{.Price}}</ins>{{if gt .P.OldPrice .P.Price}}
<span class="priceBlockOldPrice--ps7vS">{{.Old}}</span>{{end}}</div>
<div class="sellerWrap--U2QVn"><a class="sellerInfoButtonLink--RoLBz" href="/seller/{{.P.SellerID}}"><span class="sellerInfoNameDefaultText--qLwgq">{{.P.Seller}}</span></a></div>
<section data-testid="product_additional_information"><table class="productOptionsTable--epyAr"><caption>Общие характеристики</caption>
<tr><th><span><span>Артикул</span></span></th><td><div class="cellValue--hHBJB"><button class="cellCopyButton--f4XEw" type="button"><span>{{.ID}}</span></button></div></td></tr></table></section>
</main></div></div></body></html>
`))

var wbShellTmpl = template.Must(template.New("wb-shell").Parse(`<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8">` +
	`<title>Интернет-магазин Wildberries: широкий ассортимент товаров - скидки каждый день!</title></head>
<body><div id="app"><div id="reactContainers"><main class="product-page" data-testid="product_page">
<div class="priceBlock--OLDks"></div><section data-testid="product_additional_information"></section>
</main></div></div></body></html>
`))
