package testbed

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// DefaultPriceEvery is the testbed time between two price steps when
// Config.PriceEvery is zero: at each step about one mover in
// PriceChangeEvery changes, so a mover changes every few hours, as
// marketplace prices do.
const DefaultPriceEvery = time.Hour

// MoverEvery: about one product in this many moves (its price and stock
// change over time); the others keep their catalog price for good.
const MoverEvery = 4

// PriceChangeEvery: at each step about one mover in this many changes.
const PriceChangeEvery = 3

// PriceState is what a product's price and stock are at one moment.
type PriceState struct {
	Price    int64 `json:"price"`
	OldPrice int64 `json:"old_price"`
	Stock    int   `json:"stock"`
}

// InStock reports whether the state has stock.
func (s PriceState) InStock() bool { return s.Stock > 0 }

// differs reports whether s and b differ as the sites show them: the
// price, the old price or whether it is in stock (the quantity of an
// in-stock product does not move).
func (s PriceState) differs(b PriceState) bool {
	return s.Price != b.Price || s.OldPrice != b.OldPrice || s.InStock() != b.InStock()
}

// PriceChange is one change the testbed made to a product: Before until
// At, After from At on.
type PriceChange struct {
	Site   string     `json:"site"`
	ID     string     `json:"id"`
	At     time.Time  `json:"at"`
	Before PriceState `json:"before"`
	After  PriceState `json:"after"`
}

// priceMoves is how a catalog's prices move: step k starts at
// epoch + k*every; step 0 is the catalog as generated.
type priceMoves struct {
	seed  int64
	every time.Duration
	epoch time.Time
}

// Moving is c with prices that move from epoch on, one step every every
// (<= 0: c itself, whose prices never move). Every product's state at
// any time is a pure function of the seed, the product and the step, so
// ProductAt and Changes answer for any moment.
func (c *Catalog) Moving(seed int64, every time.Duration, epoch time.Time) *Catalog {
	if every <= 0 {
		return c
	}
	return &Catalog{sites: c.sites, moves: &priceMoves{seed: seed, every: every, epoch: epoch}}
}

// PriceEvery is the time between two price steps; 0 when prices never
// move.
func (c *Catalog) PriceEvery() time.Duration {
	if c.moves == nil {
		return 0
	}
	return c.moves.every
}

// ProductAt returns site's product id as the sites show it at t, or
// ErrNotFound.
func (c *Catalog) ProductAt(site, id string, t time.Time) (Product, error) {
	p, err := c.Product(site, id)
	if err != nil {
		return Product{}, err
	}
	return c.at(p, t), nil
}

// at is base product p as it is at t.
func (c *Catalog) at(p Product, t time.Time) Product {
	m := c.moves
	if m == nil {
		return p
	}
	s := m.state(p, m.lastChange(p, m.step(t)))
	p.Price, p.OldPrice, p.Stock = s.Price, s.OldPrice, s.Stock
	return p
}

// atAll is ps as they are at t.
func (c *Catalog) atAll(ps []Product, t time.Time) []Product {
	if c.moves == nil {
		return ps
	}
	for i := range ps {
		ps[i] = c.at(ps[i], t)
	}
	return ps
}

// Changes lists every change the testbed made to site's products in
// (from, to], by time then catalog order.
func (c *Catalog) Changes(site string, from, to time.Time) []PriceChange {
	m, sc := c.moves, c.sites[site]
	if m == nil || sc == nil || !to.After(from) {
		return nil
	}
	var out []PriceChange
	for k := m.step(from) + 1; k <= m.step(to); k++ {
		for _, p := range sc.products {
			if !m.changes(*p, k) {
				continue
			}
			before, after := m.state(*p, m.lastChange(*p, k-1)), m.state(*p, k)
			if before.differs(after) {
				out = append(out, PriceChange{Site: site, ID: p.ID, At: m.stepStart(k), Before: before, After: after})
			}
		}
	}
	return out
}

// step is the step t falls in (0 before the epoch).
func (m *priceMoves) step(t time.Time) int64 {
	if !t.After(m.epoch) {
		return 0
	}
	return int64(t.Sub(m.epoch) / m.every)
}

// stepStart is when step k begins.
func (m *priceMoves) stepStart(k int64) time.Time { return m.epoch.Add(time.Duration(k) * m.every) }

// rng is p's random stream for purpose at step k.
func (m *priceMoves) rng(p Product, purpose string, k int64) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s/%s/%d", p.Site, p.ID, purpose, k)
	return rand.New(rand.NewPCG(uint64(m.seed), h.Sum64()))
}

// mover reports whether p's price moves at all.
func (m *priceMoves) mover(p Product) bool { return m.rng(p, "mover", 0).IntN(MoverEvery) == 0 }

// changes reports whether p takes a new state at step k (k >= 1).
func (m *priceMoves) changes(p Product, k int64) bool {
	return k >= 1 && m.mover(p) && m.rng(p, "step", k).IntN(PriceChangeEvery) == 0
}

// lastChange is the last step at or before k at which p changed; 0 when
// it kept its catalog state.
func (m *priceMoves) lastChange(p Product, k int64) int64 {
	if !m.mover(p) {
		return 0
	}
	for ; k >= 1; k-- {
		if m.changes(p, k) {
			return k
		}
	}
	return 0
}

// state is p's state from step k on, when p changed at k: a sale (a sharp
// fall to 50-70% of the catalog price) one time in six, out of stock one
// time in eight, else a move of up to 15% either way. Prices are whole
// rubles; the old price is the catalog's, or the price when above it.
// Avito shows no stock, so its products never go out of stock.
func (m *priceMoves) state(p Product, k int64) PriceState {
	if k == 0 {
		return PriceState{Price: p.Price, OldPrice: p.OldPrice, Stock: p.Stock}
	}
	r := m.rng(p, "state", k)
	roll := r.IntN(48)
	pct := int64(85 + r.IntN(31))
	if roll < 8 {
		pct = int64(50 + r.IntN(21))
	}
	price := max(100, p.Price*pct/100/100*100)
	s := PriceState{Price: price, OldPrice: max(p.OldPrice, price), Stock: p.Stock}
	if s.Stock == 0 {
		s.Stock = 1 + int(m.rng(p, "restock", 0).IntN(2500))
	}
	if roll >= 8 && roll < 14 && p.Site != SiteAvito {
		s.Stock = 0
	}
	return s
}

// catalogAt is the catalog as the sites show it at their clock's now:
// titles and order as generated, price and stock as they are then.
type catalogAt struct {
	c   *Catalog
	now func() time.Time
}

// Product is site's product id as it is now.
func (v catalogAt) Product(site, id string) (Product, error) { return v.c.ProductAt(site, id, v.now()) }

// Search is page of query's results on site, as they are now.
func (v catalogAt) Search(site, query string, page int) []Product {
	return v.c.atAll(v.c.Search(site, query, page), v.now())
}

// Matches is every product of site matching query, as they are now.
func (v catalogAt) Matches(site, query string) []Product {
	return v.c.atAll(v.c.Matches(site, query), v.now())
}

// Pages is the number of result pages of query on site.
func (v catalogAt) Pages(site, query string) int { return v.c.Pages(site, query) }
