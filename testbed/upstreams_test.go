package testbed

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUpstreamMap: with the rule, the basket CDN's upstream map gives
// every vol to 2 hosts past the table the host BasketHostOf serves it
// from (vol 9000 on basket-40, amid 39's), in ranges that follow each
// other without a gap, and no host past Upto; without it, 404. The map
// is an API call of the basket CDN: the site's headers get 403.
func TestUpstreamMap(t *testing.T) {
	tb := startTB(t, Config{Sites: map[string]SiteRules{SiteWildberries: {Upstreams: &UpstreamsRule{Upto: 54}}}})
	var m upstreamMap
	a := get(t, clientFrom(t, "127.0.0.81", false), tb.SiteURL(SiteWildberries)+UpstreamsPath)
	if a.status != http.StatusOK || json.Unmarshal(a.body, &m) != nil || len(m.Recommend.Media) != 1 {
		t.Fatalf("map: status %d, %.200s", a.status, a.body)
	}
	if d := cmp.Diff(m.Recommend, m.Origin); d != "" {
		t.Errorf("recommend and origin differ:\n%s", d)
	}
	hosts := m.Recommend.Media[0].Hosts
	next := int64(0)
	for _, h := range hosts {
		if h.From != next || h.To < h.From {
			t.Fatalf("range %+v after vol %d: want one from %d", h, next-1, next)
		}
		for _, vol := range []int64{h.From, h.To} {
			if want := BasketHost(BasketHostOf(vol * 100000)); h.Host != want {
				t.Errorf("vol %d on %s, BasketHostOf says %s", vol, h.Host, want)
			}
		}
		next = h.To + 1
	}
	if last := hosts[len(hosts)-1]; last.Host != BasketHost(54) || BasketHostOf(next*100000) != 55 {
		t.Errorf("map ends with %+v; want basket-54's range, then 55's vols unmapped", last)
	}
	if !slices.Contains(hosts, upstreamRoute{From: 9000, To: 9000, Host: BasketHost(40)}) {
		t.Errorf("the moved vol 9000 is not its own range on basket-40")
	}
	none := startTB(t, Config{})
	if a := get(t, clientFrom(t, "127.0.0.82", false), none.SiteURL(SiteWildberries)+UpstreamsPath); a.status != http.StatusNotFound {
		t.Errorf("without the rule: status %d, want 404", a.status)
	}
	req, _ := http.NewRequest(http.MethodGet, tb.SiteURL(SiteWildberries)+UpstreamsPath, nil)
	for k, v := range with(chromeBasketHeaders(), map[string]string{"X-Spa-Version": "13.15.1"}) {
		req.Header.Set(k, v)
	}
	req.Host = UpstreamsHost
	resp, err := clientFrom(t, "127.0.0.83", false).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("the map asked with the api's x-spa-version: status %d, want 403", resp.StatusCode)
	}
}
