package wildberries_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
)

// basketCDN is a CDN where only host has the card: every other host is
// "not found"; stop, if set, is what every probe gets instead. It records
// the URLs asked, in order.
type basketCDN struct {
	host  int
	stop  error
	asked []string
	// upstreams is the upstream map the CDN publishes (nil: none, 404);
	// reads are the URLs it was read at.
	upstreams []byte
	reads     []string
}

func (b *basketCDN) read(_ context.Context, u string) ([]byte, bool, error) {
	b.reads = append(b.reads, u)
	return b.upstreams, b.upstreams != nil, nil
}

func (b *basketCDN) probe(_ context.Context, u string) (bool, error) {
	b.asked = append(b.asked, u)
	if b.stop != nil {
		return false, b.stop
	}
	return strings.Contains(u, fmt.Sprintf("://basket-%02d.", b.host)), nil
}

// memory is a site.Memory in a map (the worker's is a Redis hash, tested
// in the tasks package's farm test).
type memory map[string]string

func (m memory) Recall(_ context.Context, field string) (string, bool, error) {
	v, ok := m[field]
	return v, ok, nil
}

func (m memory) Remember(_ context.Context, field, value string) error {
	m[field] = value
	return nil
}

// probe runs ProbeBasket on the real basket hosts for a card on host.
func probe(t *testing.T, nm int64, host int, mem memory) (string, []string, error) {
	t.Helper()
	cdn := &basketCDN{host: host}
	u, err := wildberries.ProbeBasket(context.Background(), nm, wildberries.BasketPattern, nil, mem, cdn.probe)
	return u, cdn.asked, err
}

// hosts are the host numbers of the URLs asked.
func hosts(asked []string) []int {
	var out []int
	for _, u := range asked {
		var n int
		fmt.Sscanf(u, "https://basket-%02d.", &n)
		out = append(out, n)
	}
	return out
}

// TestBasketCandidates: the first host, 4 above, 2 below; none below 1.
func TestBasketCandidates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first int
		want  []int
	}{
		{name: "basket-45", first: 45, want: []int{45, 46, 47, 48, 49, 44, 43}},
		{name: "basket-04", first: 4, want: []int{4, 5, 6, 7, 8, 3, 2}},
		{name: "basket-01", first: 1, want: []int{1, 2, 3, 4, 5}},
	} {
		if got := wildberries.BasketCandidates(tc.first); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if n := len(wildberries.BasketCandidates(52)); n != wildberries.MaxBasketProbes {
		t.Errorf("%d candidates, MaxBasketProbes %d", n, wildberries.MaxBasketProbes)
	}
}

// TestProbeBasket: where the probe starts, what it asks and what it
// keeps, case by case.
func TestProbeBasket(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nm    int64
		host  int
		mem   memory
		asks  []int
		found bool
		kept  memory
	}{
		{name: "table host, nothing kept", nm: 67858518, host: 4, mem: memory{},
			asks: []int{4}, found: true, kept: memory{}},
		{name: "past 17 on the table's host", nm: 497398643, host: 27, mem: memory{},
			asks: []int{27}, found: true, kept: memory{}},
		{name: "vol moved to the next host", nm: 900012345, host: 40, mem: memory{},
			asks: []int{39, 40}, found: true, kept: memory{"9000": "40"}},
		{name: "moved vol kept", nm: 900054321, host: 40, mem: memory{"9000": "40"},
			asks: []int{40}, found: true, kept: memory{"9000": "40"}},
		{name: "kept host gone: found again and kept anew", nm: 900012345, host: 39, mem: memory{"9000": "40"},
			asks: []int{40, 41, 42, 43, 44, 39}, found: true, kept: memory{"9000": "39"}},
		{name: "past the table: top set", nm: 1900012345, host: 53, mem: memory{},
			asks: []int{52, 53}, found: true, kept: memory{"19000": "53", "top": "19000:53"}},
		{name: "past the top: starts at the top", nm: 2050012345, host: 55, mem: memory{"top": "19000:53"},
			asks: []int{53, 54, 55}, found: true, kept: memory{"20500": "55", "top": "20500:55"}},
		{name: "below the top: starts at the table's end", nm: 1900012345, host: 53, mem: memory{"top": "20500:55"},
			asks: []int{52, 53}, found: true, kept: memory{"19000": "53", "top": "20500:55"}},
		{name: "beyond reach of the table's end", nm: 2200012345, host: 57, mem: memory{},
			asks: []int{52, 53, 54, 55, 56, 51, 50}, kept: memory{}},
		{name: "within reach of the top", nm: 2200012345, host: 57, mem: memory{"top": "21500:56"},
			asks: []int{56, 57}, found: true, kept: memory{"22000": "57", "top": "22000:57"}},
		{name: "deleted card", nm: 1280469586, host: 0, mem: memory{},
			asks: []int{45, 46, 47, 48, 49, 44, 43}, kept: memory{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, asked, err := probe(t, tc.nm, tc.host, tc.mem)
			if got := hosts(asked); !slices.Equal(got, tc.asks) {
				t.Errorf("asked hosts %v, want %v", got, tc.asks)
			}
			if want := wildberries.BasketURL(wildberries.BasketPattern, tc.host, tc.nm); tc.found && (err != nil || u != want) {
				t.Errorf("found %q, %v; want %s", u, err, want)
			}
			if !tc.found && !errors.Is(err, site.ErrNotLocated) {
				t.Errorf("err %v, want ErrNotLocated", err)
			}
			if d := cmp.Diff(tc.kept, tc.mem); d != "" {
				t.Errorf("memory (-want +got):\n%s", d)
			}
		})
	}
}

// TestProbeBasketStops: an answer that is neither the card nor "not
// found" (the probe's error) stops the probe at once, naming the URL, and
// nothing is kept.
func TestProbeBasketStops(t *testing.T) {
	stop := errors.New("status 498")
	cdn := &basketCDN{host: 60, stop: stop}
	mem := memory{}
	_, err := wildberries.ProbeBasket(context.Background(), 1280469586, wildberries.BasketPattern, nil, mem, cdn.probe)
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), "basket-45") || len(cdn.asked) != 1 || len(mem) != 0 {
		t.Errorf("err %v after %v, memory %v; want the probe stopped at basket-45, nothing kept", err, cdn.asked, mem)
	}
}

// TestLocateCardEndpoints: the card kind's Locate asks a base_url (one
// host for every nm) alone; endpoints.basket with basket-NN. is a host
// pattern that wins over the base_url.
func TestLocateCardEndpoints(t *testing.T) {
	path := "/vol19000/part1900012/1900012345/info/ru/card.json"
	for _, tc := range []struct {
		name   string
		config site.SiteConfig
		asked  []string
	}{
		{name: "base_url", config: site.SiteConfig{BaseURL: "http://127.0.0.1:9001"},
			asked: []string{"http://127.0.0.1:9001" + path}},
		{name: "one basket host", config: site.SiteConfig{Endpoints: map[string]string{"basket": "https://basket-30.wbbasket.ru"}},
			asked: []string{"https://basket-30.wbbasket.ru" + path}},
		{name: "pattern under base_url", config: site.SiteConfig{BaseURL: "http://127.0.0.1:9001",
			Endpoints: map[string]string{"basket": "http://basket-NN.wbbasket.test:9001/"}},
			asked: []string{"http://basket-52.wbbasket.test:9001" + path, "http://basket-53.wbbasket.test:9001" + path}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := configured(t, tc.config)
			cdn := &basketCDN{host: 53}
			u, err := s.Kinds["card"].Locate(context.Background(), s, site.Request{ID: "1900012345"}, memory{},
				site.Ask{Probe: cdn.probe, Read: cdn.read})
			if d := cmp.Diff(tc.asked, cdn.asked); d != "" {
				t.Errorf("asked (-want +got):\n%s", d)
			}
			wantErr := !strings.Contains(tc.asked[len(tc.asked)-1], "basket-53.")
			if (err != nil) != wantErr || (err == nil && u != tc.asked[len(tc.asked)-1]) {
				t.Errorf("located %q, %v", u, err)
			}
		})
	}
}

// configured is the Wildberries site with c applied.
func configured(t *testing.T, c site.SiteConfig) *site.Site {
	t.Helper()
	reg := site.Default().Clone()
	if err := reg.Apply(site.Config{Sites: map[string]site.SiteConfig{"wildberries": c}}); err != nil {
		t.Fatal(err)
	}
	s, err := reg.Get("wildberries")
	if err != nil {
		t.Fatal(err)
	}
	return s
}
