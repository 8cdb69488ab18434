package wildberries

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Probe reach around the table's host: WB opens new basket hosts past
// the table's end and moves vols between neighbours, so a 404 on the
// table's host is asked of up to probeUp hosts above it and probeDown
// below (kendric-py/plomio wb/utils.py get_wb_basket_host_candidates,
// 2026-10).
const (
	probeUp   = 4
	probeDown = 2
)

// ErrBasketNotFound means no probed basket host has nm's card.json.
var ErrBasketNotFound = errors.New("no basket host has the card")

// basketNumber is the basket-NN host number the table gives nm.
func basketNumber(nm int64) int {
	vol := nm / 100000
	for i, last := range basketVolMax {
		if vol <= last {
			return i + 1
		}
	}
	return len(basketVolMax)
}

// BasketCandidates are the basket host numbers nm's card.json is looked
// for on, in order: the table's host, the probeUp above it, then the
// probeDown below it (never below 1).
func BasketCandidates(nm int64) []int {
	n := basketNumber(nm)
	out := []int{n}
	for i := 1; i <= probeUp; i++ {
		out = append(out, n+i)
	}
	for i := 1; i <= probeDown && n-i >= 1; i++ {
		out = append(out, n-i)
	}
	return out
}

// BasketURL is nm's card.json on basket host number n.
func BasketURL(n int, nm int64) string {
	return fmt.Sprintf("https://basket-%02d.wbbasket.ru", n) + BasketPath(nm)
}

// BasketCache keeps, cluster-wide, the basket host a probe found for a
// vol, so one worker's probe serves all.
type BasketCache interface {
	// Host is the host number kept for vol; ok false when none is.
	Host(ctx context.Context, vol int64) (n int, ok bool, err error)
	// Remember keeps n as vol's host.
	Remember(ctx context.Context, vol int64, n int) error
}

// DefaultBasketKey is the Redis hash (vol -> host number) of the basket
// hosts probes found, under the site's key prefix.
const DefaultBasketKey = "crawlq:wildberries:basket"

// RedisBasketCache is a BasketCache in one Redis hash.
type RedisBasketCache struct {
	RDB redis.UniversalClient
	// Key is the hash's key; DefaultBasketKey when empty.
	Key string
}

func (c RedisBasketCache) key() string {
	if c.Key == "" {
		return DefaultBasketKey
	}
	return c.Key
}

// Host implements BasketCache.
func (c RedisBasketCache) Host(ctx context.Context, vol int64) (int, bool, error) {
	v, err := c.RDB.HGet(ctx, c.key(), strconv.FormatInt(vol, 10)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("basket host of vol %d: %w", vol, err)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, false, fmt.Errorf("basket host of vol %d: bad value %q in %s", vol, v, c.key())
	}
	return n, true, nil
}

// Remember implements BasketCache.
func (c RedisBasketCache) Remember(ctx context.Context, vol int64, n int) error {
	if err := c.RDB.HSet(ctx, c.key(), strconv.FormatInt(vol, 10), n).Err(); err != nil {
		return fmt.Errorf("remember basket host of vol %d: %w", vol, err)
	}
	return nil
}

// Getter fetches a URL and returns its status (the worker's session
// fetch, paced and through its proxy).
type Getter func(ctx context.Context, url string) (status int, err error)

// ProbeBasket finds the host that serves nm's card.json: the cached host
// of its vol, else the candidates in order, moving on only on a 404; the
// host that answers 200 is remembered for the vol. Any other status (a
// 498, a 429) stops the probe with an error naming it: it says nothing of
// where the card is.
func ProbeBasket(ctx context.Context, nm int64, cache BasketCache, get Getter) (string, error) {
	vol := nm / 100000
	cands := BasketCandidates(nm)
	n, ok, err := cache.Host(ctx, vol)
	if err != nil {
		return "", err
	}
	if ok {
		cands = append([]int{n}, slices.DeleteFunc(cands, func(c int) bool { return c == n })...)
	}
	for _, n := range cands {
		u := BasketURL(n, nm)
		st, err := get(ctx, u)
		switch {
		case err != nil:
			return "", fmt.Errorf("probe %s: %w", u, err)
		case st == http.StatusOK:
			return u, cache.Remember(ctx, vol, n)
		case st != http.StatusNotFound:
			return "", fmt.Errorf("probe %s: status %d stops the probe", u, st)
		}
	}
	return "", fmt.Errorf("%w: nm %d on basket hosts %v", ErrBasketNotFound, nm, cands)
}
