package testbed

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
)

// BasketDomain is the domain of the testbed's basket CDN, Wildberries'
// wbbasket.ru: basket-NN.wbbasket.test. The farm's proxies resolve every
// such name to the loopback, the testbed's certificate names them
// (*.wbbasket.test), and the Wildberries site's own listeners serve them:
// to the testbed's rules the CDN is Wildberries (one min_interval, one
// ban list, log entries of site "wildberries" with the host in Host), as
// crawlq paces it. Only a client going through a farm proxy reaches it.
const BasketDomain = "wbbasket.test"

// BasketHost is the name of basket host n, basket-NN.wbbasket.test.
func BasketHost(n int) string { return fmt.Sprintf("basket-%02d.%s", n, BasketDomain) }

// BasketPattern is the crawlq basket endpoint (sites.wildberries.
// endpoints.basket) of the testbed: basket-NN.wbbasket.test at the
// Wildberries site's http or https port.
func (tb *Testbed) BasketPattern(secure bool) string {
	u := tb.SiteURL(SiteWildberries)
	scheme := "http://"
	if secure {
		u, scheme = tb.HTTPSSiteURL(SiteWildberries), "https://"
	}
	_, port, _ := net.SplitHostPort(u[len(scheme):])
	return scheme + "basket-NN." + BasketDomain + ":" + port
}

var basketHostRe = regexp.MustCompile(`^basket-([0-9]{2})\.` + regexp.QuoteMeta(BasketDomain) + `$`)

// basketNumber is the number of basket host name host (a port allowed);
// ok is false for any other host.
func basketNumber(host string) (int, bool) {
	m := basketHostRe.FindStringSubmatch(hostOnly(host))
	if m == nil {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	return n, n >= 1
}

// isBasketHost says whether host (no port) is a basket host name, for
// the farm's host table.
func isBasketHost(host string) bool {
	_, ok := basketNumber(host)
	return ok
}

// basketVolMax is the layout of the testbed's CDN: the last vol
// (nm/100000) each host serves, NN = index+1, as public clients' table
// has it up to basket-52 (kendric-py/plomio wb/constants.py
// WB_BASKET_RANGES @148e240, 2026-10); past it, hosts of basketWidth vols
// each, as WB's latest are. basketMoved places vols on another host than
// that table says, as WB moves vols between neighbours.
var basketVolMax = []int64{
	143, 287, 431, 719, 1007, 1061, 1115, 1169, 1313, 1601, // 01-10
	1655, 1919, 2045, 2189, 2405, 2621, 2837, 3053, 3269, 3485, // 11-20
	3701, 3917, 4133, 4349, 4565, 4877, 5189, 5501, 5813, 6125, // 21-30
	6437, 6749, 7061, 7373, 7685, 7997, 8309, 8741, 9173, 9605, // 31-40
	10373, 11141, 11909, 12677, 13445, 14213, 14981, 15749, 16517, 17285, // 41-50
	18053, 18821, // 51-52
}

// basketWidth is how many vols a host past basket-52 serves (768, the
// width of basket-41 to 52).
const basketWidth = 768

// basketMoved maps a vol to the host that serves it instead of the
// table's: vol 9000 (table: basket-39) is on basket-40.
var basketMoved = map[int64]int{9000: 40}

// BasketHostOf is the number of the basket host that serves nm's
// card.json in the testbed.
func BasketHostOf(nm int64) int {
	vol := nm / 100000
	if n, ok := basketMoved[vol]; ok {
		return n
	}
	if i, _ := slices.BinarySearch(basketVolMax, vol); i < len(basketVolMax) {
		return i + 1
	}
	past := vol - basketVolMax[len(basketVolMax)-1] - 1
	return len(basketVolMax) + 1 + int(past/basketWidth)
}

// basketNMs are the Wildberries products only their basket host serves:
// past basket-17 within the table (497398643 on basket-27 and 1280469586
// on basket-45, the nms issue 26 names), on a moved vol (vol 9000 on
// basket-40, not the table's 39) and past the table's end (vol 19000 on
// basket-53, 20500 on 55, 22000 on 57). Vols 9000, 19000 and 20500 hold
// two products each, so a second card of a vol can be asked.
var basketNMs = []int64{497398643, 900012345, 900054321, 1280469586, 1900012345, 1900054321,
	2050012345, 2050054321, 2200012345}

// basketProducts are basketNMs' products, the same in every run.
var basketProducts = newBasketProducts()

func newBasketProducts() map[string]Product {
	rng := rand.New(rand.NewPCG(26, 0xba5e7))
	out := map[string]Product{}
	for _, nm := range basketNMs {
		p := newProduct(SiteWildberries, strconv.FormatInt(nm, 10), rng)
		out[p.ID] = *p
	}
	return out
}

// BasketProducts are the Wildberries products on high vols, in nm order:
// their card.json is served only by their basket host (BasketHostOf),
// not by the site's own host, and they are in no search or detail
// answer.
func BasketProducts() []Product {
	out := make([]Product, 0, len(basketNMs))
	for _, nm := range basketNMs {
		out = append(out, basketProducts[strconv.FormatInt(nm, 10)])
	}
	return out
}

// basketCard answers card.json on basket host n: the card of a catalog
// or basket product whose host n is; 404 on every other host, for an
// unknown nm or a vol/part that is not the nm's, as the real CDN.
func (wb *wildberries) basketCard(w http.ResponseWriter, r *http.Request, n int) {
	nm, err := strconv.ParseInt(r.PathValue("nm"), 10, 64)
	p, ok := wb.cardProduct(r.PathValue("nm"))
	if err != nil || !ok || r.URL.Path != WBCardJSONPath(nm) || BasketHostOf(nm) != n {
		http.NotFound(w, r)
		return
	}
	writeCard(w, nm, p)
}

// cardProduct is the catalog or basket product id.
func (wb *wildberries) cardProduct(id string) (Product, bool) {
	if p, err := wb.c.Product(SiteWildberries, id); err == nil {
		return p, true
	}
	p, ok := basketProducts[id]
	return p, ok
}

// hostOnly is host without its port.
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}
