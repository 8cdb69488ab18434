package wildberries

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"crawlq/tasks/site"
)

// Probe reach around the first host asked: WB opens new basket hosts past
// the table's end and moves vols between neighbours, so a 404 there is
// asked of up to probeUp hosts above it and probeDown below (kendric-py/
// plomio wb/utils.py get_wb_basket_host_candidates @148e240, 2026-10,
// which fetches card.json the same way). A card job thus sends at most
// MaxBasketProbes requests: a deleted product (a 404 on every host, the
// common case) costs no more, each paced at the site's min_interval.
const (
	probeUp   = 4
	probeDown = 2
	// MaxBasketProbes is the most card.json requests one card job sends.
	MaxBasketProbes = 1 + probeUp + probeDown
)

// BasketPattern is the basket CDN's base URL; basketNN in it stands for
// the two-digit host number.
const BasketPattern = "https://" + basketNN + "wbbasket.ru"

// basketNN marks the host number in a basket base URL.
const basketNN = "basket-NN."

// topField is the memory field of the newest basket host found past the
// table's end: "VOL:N", host N serves VOL.
const topField = "top"

// locateCard is the card kind's Locate. A basket endpoint without
// basket-NN. (a base_url, or endpoints.basket naming one host) serves
// every nm and is asked alone; else ProbeBasket finds the host, first
// where the CDN's own upstream map puts the vol (read through the job's
// session, kept for the cluster for upstreamsTTL).
func locateCard(ctx context.Context, s *site.Site, r site.Request, mem site.Memory, ask site.Ask) (string, error) {
	nm, _ := strconv.ParseInt(r.ID, 10, 64) // CheckID let only digits through
	pattern := basketPattern(s)
	if !strings.Contains(pattern, "://"+basketNN) {
		return askOne(ctx, pattern+BasketPath(nm), ask.Probe)
	}
	var routes Routes
	if ask.Read != nil {
		var err error
		if routes, err = upstreams(ctx, pattern, mem, ask.Read); err != nil {
			return "", err
		}
	}
	return ProbeBasket(ctx, nm, pattern, routes, mem, ask.Probe)
}

// basketPattern is the basket base URL of s: endpoints.basket when set
// (even under a base_url, so a test bed can serve basket host names),
// else the base_url, else BasketPattern.
func basketPattern(s *site.Site) string {
	if u := s.Endpoints[EndpointBasket]; u != "" {
		return strings.TrimRight(u, "/")
	}
	if s.BaseURL != "" {
		return strings.TrimRight(s.BaseURL, "/")
	}
	return BasketPattern
}

// askOne asks u alone.
func askOne(ctx context.Context, u string, probe site.Probe) (string, error) {
	found, err := probe(ctx, u)
	switch {
	case err != nil:
		return "", err
	case !found:
		return "", fmt.Errorf("%w: %s", site.ErrNotLocated, u)
	}
	return u, nil
}

// BasketURL is nm's card.json on basket host n of pattern.
func BasketURL(pattern string, n int, nm int64) string {
	return strings.Replace(pattern, basketNN, fmt.Sprintf("basket-%02d.", n), 1) + BasketPath(nm)
}

// ProbeBasket finds the basket host of pattern that serves nm's
// card.json. It asks first the host mem keeps for nm's vol, else the one
// the CDN's upstream map routes gives it, else the table's, raised for a
// vol past the table's end to the newest host found there (so the reach
// grows with what the cluster learns); then the BasketCandidates around
// it, moving on only when probe says "not found". The host that has the
// card is kept in mem for the vol when it is not the map's or the
// table's. It returns site.ErrNotLocated (wrapped) after MaxBasketProbes
// "not found".
func ProbeBasket(ctx context.Context, nm int64, pattern string, routes Routes, mem site.Memory, probe site.Probe) (string, error) {
	g, err := guessBasket(ctx, nm/100000, routes, mem)
	if err != nil {
		return "", err
	}
	cands := BasketCandidates(g.n)
	for _, n := range cands {
		u := BasketURL(pattern, n, nm)
		found, err := probe(ctx, u)
		if err != nil {
			return "", fmt.Errorf("probe %s: %w", u, err)
		}
		if found {
			return u, g.remember(ctx, mem, n)
		}
	}
	return "", fmt.Errorf("%w: nm %d on basket hosts %v", site.ErrNotLocated, nm, cands)
}

// BasketCandidates are the basket host numbers asked from first on, in
// order: first, the probeUp above it, then the probeDown below it (never
// below 1).
func BasketCandidates(first int) []int {
	out := []int{first}
	for i := 1; i <= probeUp; i++ {
		out = append(out, first+i)
	}
	for i := 1; i <= probeDown && first-i >= 1; i++ {
		out = append(out, first-i)
	}
	return out
}

// basketGuess is the host a probe of a vol asks first, and what memory
// said.
type basketGuess struct {
	vol    int64
	n      int
	kept   bool      // n is the vol's host in memory
	mapped bool      // n is the upstream map's host for the vol
	top    basketTop // the newest host found past the table, if any
}

// basketTop is a vol past the table's end and the host found serving it.
type basketTop struct {
	vol int64
	n   int
}

// guessBasket is where the probe of vol starts (see ProbeBasket).
func guessBasket(ctx context.Context, vol int64, routes Routes, mem site.Memory) (basketGuess, error) {
	g := basketGuess{vol: vol, n: tableNumber(vol)}
	n, ok, err := recallInt(ctx, mem, strconv.FormatInt(vol, 10))
	if err != nil || ok {
		g.n, g.kept = n, ok
		return g, err
	}
	if n, ok := routes.Host(vol); ok {
		g.n, g.mapped = n, true
		return g, nil
	}
	if vol <= lastTableVol() {
		return g, nil
	}
	g.top, err = recallTop(ctx, mem)
	if g.top.n > g.n && vol >= g.top.vol {
		g.n = g.top.n
	}
	g.n = max(g.n, routes.below(vol))
	return g, err
}

// remember keeps host n, where the card was found, for the vol when
// memory or the table said otherwise, and moves the top past the table's
// end forward.
func (g basketGuess) remember(ctx context.Context, mem site.Memory, n int) error {
	if g.keepsVol(n) {
		if err := mem.Remember(ctx, strconv.FormatInt(g.vol, 10), strconv.Itoa(n)); err != nil {
			return fmt.Errorf("remember basket host of vol %d: %w", g.vol, err)
		}
	}
	if !g.advancesTop() {
		return nil
	}
	if err := mem.Remember(ctx, topField, fmt.Sprintf("%d:%d", g.vol, n)); err != nil {
		return fmt.Errorf("remember the newest basket host: %w", err)
	}
	return nil
}

// keepsVol says whether host n is news for the vol: memory or the map
// had another, or neither had one and the table says another.
func (g basketGuess) keepsVol(n int) bool {
	if g.kept || g.mapped {
		return n != g.n
	}
	return n != tableNumber(g.vol)
}

// advancesTop says whether the vol, found without memory, lies past both
// the table's end and the top kept so far. Two workers may move the top
// at once and the older vol win: the top is only where probes start.
func (g basketGuess) advancesTop() bool {
	return !g.kept && !g.mapped && g.vol > lastTableVol() && g.vol > g.top.vol
}

// recallInt is the host number mem keeps for field.
func recallInt(ctx context.Context, mem site.Memory, field string) (int, bool, error) {
	v, ok, err := mem.Recall(ctx, field)
	if err != nil || !ok {
		return 0, false, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, false, fmt.Errorf("basket host of vol %s: bad value %q kept", field, v)
	}
	return n, true, nil
}

// recallTop is the newest host found past the table's end (zero: none).
func recallTop(ctx context.Context, mem site.Memory) (basketTop, error) {
	v, ok, err := mem.Recall(ctx, topField)
	if err != nil || !ok {
		return basketTop{}, err
	}
	var t basketTop
	if _, err := fmt.Sscanf(v, "%d:%d", &t.vol, &t.n); err != nil || t.n < 1 {
		return basketTop{}, fmt.Errorf("newest basket host: bad value %q kept", v)
	}
	return t, nil
}
