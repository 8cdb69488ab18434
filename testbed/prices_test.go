package testbed

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var priceEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// TestPricesMove: over 48 steps a share of products changes (drops,
// rises, sales, stock out and back); Changes lists exactly the moments
// ProductAt's answer changes, with the states before and after; step 0
// is the catalog as generated; the seed decides it all.
func TestPricesMove(t *testing.T) {
	const size, steps = 600, 48
	c := NewCatalog(7, size).Moving(7, time.Minute, priceEpoch)
	end := priceEpoch.Add(steps * time.Minute)
	for _, site := range SiteNames {
		changes := c.Changes(site, priceEpoch, end)
		checkChangeShare(t, site, changes, size)
		checkChangesAreProductAt(t, c, site, changes, steps)
		checkKinds(t, c, site, changes)
		again := NewCatalog(7, size).Moving(7, time.Minute, priceEpoch).Changes(site, priceEpoch, end)
		if d := cmp.Diff(changes, again); d != "" {
			t.Errorf("%s: the same seed moved prices differently (-first +second):\n%s", site, d)
		}
		if other := NewCatalog(7, size).Moving(8, time.Minute, priceEpoch).Changes(site, priceEpoch, end); cmp.Equal(changes, other) {
			t.Errorf("%s: seeds 7 and 8 moved prices the same way", site)
		}
	}
	static := NewCatalog(7, size)
	if n := len(static.Changes(SiteOzon, priceEpoch, end)); n != 0 || static.PriceEvery() != 0 {
		t.Errorf("a catalog that does not move has %d changes, PriceEvery %v", n, static.PriceEvery())
	}
}

// checkChangeShare: about one product in MoverEvery changed at least once,
// each about steps/PriceChangeEvery times.
func checkChangeShare(t *testing.T, site string, changes []PriceChange, size int) {
	t.Helper()
	moved := map[string]bool{}
	for _, ch := range changes {
		moved[ch.ID] = true
	}
	if lo, hi := size/MoverEvery*2/3, size/MoverEvery*4/3; len(moved) < lo || len(moved) > hi {
		t.Errorf("%s: %d of %d products changed, want %d–%d", site, len(moved), size, lo, hi)
	}
	t.Logf("%s: %d changes of %d products", site, len(changes), len(moved))
}

// checkChangesAreProductAt walks every product step by step: ProductAt's
// state changes at a step start exactly when Changes has that change.
func checkChangesAreProductAt(t *testing.T, c *Catalog, site string, changes []PriceChange, steps int) {
	t.Helper()
	listed := map[string]PriceChange{}
	for _, ch := range changes {
		listed[ch.ID+"@"+ch.At.String()] = ch
	}
	for _, p := range c.Products(site) {
		if at, _ := c.ProductAt(site, p.ID, priceEpoch.Add(-time.Hour)); at != p {
			t.Fatalf("%s %s before the epoch: %+v, want the catalog's %+v", site, p.ID, at, p)
		}
		prev := p
		for k := 1; k <= steps; k++ {
			at := priceEpoch.Add(time.Duration(k) * time.Minute)
			now, _ := c.ProductAt(site, p.ID, at)
			late, _ := c.ProductAt(site, p.ID, at.Add(time.Minute-time.Nanosecond))
			ch, ok := listed[p.ID+"@"+at.String()]
			changed := stateOf(now).differs(stateOf(prev))
			if changed != ok || ok && (ch.Before != stateOf(prev) || ch.After != stateOf(now)) || late != now {
				t.Fatalf("%s %s step %d: %+v -> %+v, listed %v %+v", site, p.ID, k, stateOf(prev), stateOf(now), ok, ch)
			}
			prev = now
		}
	}
}

func stateOf(p Product) PriceState {
	return PriceState{Price: p.Price, OldPrice: p.OldPrice, Stock: p.Stock}
}

// checkKinds: the changes hold drops, rises, sales (to 70% of the
// catalog price or less) and, but on Avito (no stock shown), products
// going out of stock and coming back.
func checkKinds(t *testing.T, c *Catalog, site string, changes []PriceChange) {
	t.Helper()
	kinds := map[string]int{}
	for _, ch := range changes {
		base, _ := c.Product(site, ch.ID)
		switch {
		case ch.Before.InStock() && !ch.After.InStock():
			kinds["out"]++
		case !ch.Before.InStock() && ch.After.InStock():
			kinds["back"]++
		}
		switch {
		case ch.After.Price*100 <= base.Price*70 && ch.After.Price < ch.Before.Price:
			kinds["sale"]++
		case ch.After.Price < ch.Before.Price:
			kinds["drop"]++
		case ch.After.Price > ch.Before.Price:
			kinds["rise"]++
		}
		if ch.After.OldPrice < ch.After.Price || ch.After.Price%100 != 0 {
			t.Fatalf("%s %s: %+v: old price below price or not whole rubles", site, ch.ID, ch.After)
		}
	}
	want := []string{"sale", "drop", "rise", "out", "back"}
	if site == SiteAvito {
		want = want[:3]
	}
	for _, k := range want {
		if kinds[k] == 0 {
			t.Errorf("%s: no %q change among %d: %v", site, k, len(changes), kinds)
		}
	}
}

// TestSitesServePricesAtTheirClock: each site's listing and product page
// show a changed product's price as it was just before its change and as
// it is from the change on, by the sites' clock.
func TestSitesServePricesAtTheirClock(t *testing.T) {
	clock := newFakeClock()
	tb := startTB(t, Config{Now: clock.Now, PriceEvery: time.Minute,
		Sites: map[string]SiteRules{SiteWildberries: {}, SiteOzon: {}, SiteAvito: {}}})
	start := clock.Now()
	for _, site := range SiteNames {
		ch := firstPriceChange(t, tb.Catalog, site, start)
		p, _ := tb.Catalog.Product(site, ch.ID)
		for _, when := range []struct {
			at   time.Time
			want int64
		}{{ch.At.Add(-time.Second), ch.Before.Price}, {ch.At, ch.After.Price}} {
			clock.Advance(when.at.Sub(clock.Now()))
			for where, got := range servedPrices(t, tb, p) {
				if got != when.want {
					t.Errorf("%s %s at %s: %s shows %d, want %d", site, p.ID, when.at.Sub(start), where, got, when.want)
				}
			}
		}
	}
}

// firstPriceChange is the first change of site's prices after from that
// moves the price.
func firstPriceChange(t *testing.T, c *Catalog, site string, from time.Time) PriceChange {
	t.Helper()
	for _, ch := range c.Changes(site, from, from.Add(time.Hour)) {
		if ch.Before.Price != ch.After.Price {
			return ch
		}
	}
	t.Fatalf("%s: no price change in the first hour", site)
	return PriceChange{}
}

// servedPrices is p's price (kopecks) as each of its site's listings and
// pages show it now.
func servedPrices(t *testing.T, tb *Testbed, p Product) map[string]int64 {
	t.Helper()
	c, base := clientFrom(t, "127.0.0.1", false), tb.SiteURL(p.Site)
	q := url.QueryEscape(p.Title)
	switch p.Site {
	case SiteWildberries:
		return map[string]int64{
			"search": wbPriceOf(t, get(t, c, base+WBSearchPath+"?query="+q+"&page=1").body, p.ID),
			"detail": wbPriceOf(t, get(t, c, base+WBDetailPath+"?nm="+p.ID).body, p.ID)}
	case SiteOzon:
		_, ws := apiGet(t, tb, OzonSearchPath+"?text="+p.Title)
		return map[string]int64{"page API search": ozonTilePrice(t, ws[ozonGridWidget], p.ID),
			"product page": ozonLDPrice(t, get(t, c, base+p.URL).body)}
	}
	return map[string]int64{"js/items": avitoItemsPrice(t, get(t, c, base+AvitoItemsPath+"?q="+q).body, p.ID),
		"item page": avitoPagePrice(t, get(t, c, base+p.URL).body)}
}

func wbPriceOf(t *testing.T, body []byte, id string) int64 {
	t.Helper()
	var v struct{ Products []wbProduct }
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	for _, p := range v.Products {
		if strconv.FormatInt(p.ID, 10) == id {
			return p.Sizes[0].Price.Product
		}
	}
	t.Fatalf("product %s not in %s", id, body)
	return 0
}

func ozonTilePrice(t *testing.T, grid json.RawMessage, id string) int64 {
	t.Helper()
	var v struct {
		Items []struct {
			ID        string
			MainState []struct {
				PriceV2 struct{ Price []struct{ Text string } }
			}
		}
	}
	if err := json.Unmarshal(grid, &v); err != nil {
		t.Fatal(err)
	}
	for _, it := range v.Items {
		if it.ID == id {
			return digits(it.MainState[0].PriceV2.Price[0].Text) * 100
		}
	}
	t.Fatalf("product %s not in the grid", id)
	return 0
}

func ozonLDPrice(t *testing.T, body []byte) int64 {
	t.Helper()
	var ld struct{ Offers struct{ Price string } }
	if err := json.Unmarshal([]byte(doc(t, bytes.NewReader(body)).Find(`script[type="application/ld+json"]`).First().Text()), &ld); err != nil {
		t.Fatalf("json-ld: %v", err)
	}
	n, _ := strconv.ParseInt(ld.Offers.Price, 10, 64)
	return n * 100
}

func avitoItemsPrice(t *testing.T, body []byte, id string) int64 {
	t.Helper()
	var v avitoItems
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	for _, it := range v.Items {
		if strconv.FormatInt(it.ID, 10) == id {
			return int64(it.PriceDetailed["value"].(float64)) * 100
		}
	}
	t.Fatalf("item %s not in js/items", id)
	return 0
}

var avitoPriceRe = regexp.MustCompile(`content="([0-9]+)" itemprop="price"`)

func avitoPagePrice(t *testing.T, body []byte) int64 {
	t.Helper()
	m := avitoPriceRe.FindSubmatch(body)
	if m == nil {
		t.Fatalf("no price on the item page: %s", strings.TrimSpace(string(body))[:200])
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n * 100
}
