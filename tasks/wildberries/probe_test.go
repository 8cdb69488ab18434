package wildberries_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"crawlq/internal/testredis"
	"crawlq/tasks/wildberries"
)

// basketSite is a CDN where only host has nm's card: every other host
// answers 404; it records the URLs asked, in order.
type basketSite struct {
	host  int
	asked []string
	other int // status of a host that is not the card's, default 404
}

func (b *basketSite) get(_ context.Context, u string) (int, error) {
	b.asked = append(b.asked, u)
	if strings.HasPrefix(u, fmt.Sprintf("https://basket-%02d.", b.host)) {
		return http.StatusOK, nil
	}
	if b.other != 0 {
		return b.other, nil
	}
	return http.StatusNotFound, nil
}

// cache is a RedisBasketCache on a key of the test's own, on real Redis.
func cache(t *testing.T) wildberries.RedisBasketCache {
	t.Helper()
	rdb := testredis.NewClient(t, 0)
	key := fmt.Sprintf("crawlq:wildberries:basket:test:%s:%d", t.Name(), time.Now().UnixNano())
	t.Cleanup(func() { rdb.Del(context.Background(), key) })
	return wildberries.RedisBasketCache{RDB: rdb, Key: key}
}

// TestBasketCandidates: the table's host, 4 above, 2 below; none below 1.
func TestBasketCandidates(t *testing.T) {
	if got, want := wildberries.BasketCandidates(1280469586), []int{45, 46, 47, 48, 49, 44, 43}; !slices.Equal(got, want) {
		t.Errorf("nm 1280469586: %v, want %v", got, want)
	}
	if got, want := wildberries.BasketCandidates(67858518), []int{4, 5, 6, 7, 8, 3, 2}; !slices.Equal(got, want) {
		t.Errorf("nm 67858518: %v, want %v", got, want)
	}
	if got, want := wildberries.BasketCandidates(1), []int{1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("nm 1: %v, want %v", got, want)
	}
}

// TestProbeBasketPastTheTable: a vol past the table's end (basket-52)
// whose card is on basket-54: the probe walks 404s to it and keeps the
// answer in Redis; a second worker (another cache value on the same
// hash) asks basket-54 first and finds it with one request.
func TestProbeBasketPastTheTable(t *testing.T) {
	ctx := context.Background()
	const nm = 1900012345 // vol 19000, past vol 18821
	c := cache(t)
	cdn := &basketSite{host: 54}
	u, err := wildberries.ProbeBasket(ctx, nm, c, cdn.get)
	if err != nil {
		t.Fatal(err)
	}
	if want := wildberries.BasketURL(54, nm); u != want || len(cdn.asked) != 3 {
		t.Fatalf("probe found %s after %v; want %s on the third request", u, cdn.asked, want)
	}
	other := wildberries.RedisBasketCache{RDB: testredis.NewClient(t, 0), Key: c.Key}
	cdn2 := &basketSite{host: 54}
	if u, err := wildberries.ProbeBasket(ctx, nm+1, other, cdn2.get); err != nil || len(cdn2.asked) != 1 || u != wildberries.BasketURL(54, nm+1) {
		t.Errorf("second worker: %s, %v after %v; want basket-54 at once", u, err, cdn2.asked)
	}
}

// TestProbeBasketStops: a status other than 404 (the wall's 498) stops
// the probe naming it, and nothing is remembered; a card on no candidate
// is ErrBasketNotFound after every candidate was asked.
func TestProbeBasketStops(t *testing.T) {
	ctx := context.Background()
	c := cache(t)
	cdn := &basketSite{host: 60, other: 498}
	if _, err := wildberries.ProbeBasket(ctx, 1280469586, c, cdn.get); err == nil || !strings.Contains(err.Error(), "status 498") || len(cdn.asked) != 1 {
		t.Errorf("498: err %v after %v; want the probe stopped at the first host", err, cdn.asked)
	}
	if _, ok, err := c.Host(ctx, 12804); ok || err != nil {
		t.Errorf("after a 498 the cache holds a host (%v)", err)
	}
	cdn = &basketSite{host: 60}
	_, err := wildberries.ProbeBasket(ctx, 1280469586, c, cdn.get)
	if !errors.Is(err, wildberries.ErrBasketNotFound) || len(cdn.asked) != 7 {
		t.Errorf("nowhere: err %v after %d requests; want ErrBasketNotFound after 7", err, len(cdn.asked))
	}
}
