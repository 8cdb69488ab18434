package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/proxies"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Query
		wantErr string
	}{
		{name: "defaults", in: "", want: Query{Sort: SortProxy, Page: 1}},
		{name: "every field", in: "site=ozon&class=mobile&state=cooling&q=+127.0.+&sort=bans&page=3",
			want: Query{Site: "ozon", Class: proxies.Mobile, State: "cooling", Text: "127.0.", Sort: SortBans, Page: 3}},
		{name: "unknown state", in: "state=dead", wantErr: `state "dead"`},
		{name: "unknown class", in: "class=cable", wantErr: `class "cable"`},
		{name: "unknown sort", in: "sort=random", wantErr: `sort "random"`},
		{name: "page zero", in: "page=0", wantErr: `page "0"`},
		{name: "page not a number", in: "page=two", wantErr: `page "two"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := url.ParseQuery(tt.in)
			got, err := ParseQuery(v)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseQuery(%q) error = %v, want one naming %s", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParseQuery(%q) (-want +got):\n%s", tt.in, d)
			}
			if back, _ := ParseQuery(got.Values(got.Page)); back != got {
				t.Errorf("Values does not round-trip: %+v -> %+v", got, back)
			}
		})
	}
}

// viewOf builds a view of n proxies on wb and oz: proxy i has i oks and
// i%4 bans on wb (quarantined when it has bans), nothing on oz.
func viewOf(n int) *poolView {
	ps := &proxies.PoolStats{Total: n, Sites: map[string]proxies.SiteStats{}}
	for i := range n {
		wb := proxies.ProxySiteStats{State: proxies.StateReady, OK: int64(i), Banned: int64(i % 4)}
		if wb.Banned > 0 {
			wb.State = proxies.StateQuarantined
		}
		ps.Proxies = append(ps.Proxies, proxies.ProxyStats{ID: fmt.Sprintf("p%03d", i),
			Masked: fmt.Sprintf("http://u:***@127.0.0.%d:80", i), Class: proxies.Datacenter,
			Sites: map[string]proxies.ProxySiteStats{"wb": wb, "oz": {State: proxies.StateReady}}})
	}
	return newView(ps, 0, false)
}

func TestViewPage(t *testing.T) {
	v := viewOf(120)
	ids := func(rows []ProxyRow) []string {
		out := []string{}
		for _, r := range rows {
			out = append(out, r.ID+"/"+r.Site)
		}
		return out
	}
	tests := []struct {
		name      string
		q         Query
		wantTotal int
		wantFirst []string
	}{
		{name: "by proxy", q: Query{Sort: SortProxy, Page: 1}, wantTotal: 240, wantFirst: []string{"p000/oz", "p000/wb", "p001/oz"}},
		{name: "page 5 holds the rest", q: Query{Sort: SortProxy, Page: 5}, wantTotal: 240, wantFirst: []string{"p100/oz", "p100/wb", "p101/oz"}},
		{name: "state and site", q: Query{Site: "wb", State: proxies.StateQuarantined, Sort: SortProxy, Page: 1}, wantTotal: 90,
			wantFirst: []string{"p001/wb", "p002/wb", "p003/wb"}},
		{name: "most bans first", q: Query{Site: "wb", Sort: SortBans, Page: 1}, wantTotal: 120, wantFirst: []string{"p003/wb", "p007/wb", "p011/wb"}},
		{name: "worst success first", q: Query{Sort: SortWorst, Page: 1}, wantTotal: 240, wantFirst: []string{"p003/wb", "p002/wb", "p001/wb"}},
		{name: "text in the proxy", q: Query{Text: "127.0.0.11", Site: "oz", Sort: SortProxy, Page: 1}, wantTotal: 11,
			wantFirst: []string{"p011/oz", "p110/oz", "p111/oz"}},
		{name: "past the end", q: Query{Sort: SortProxy, Page: 9}, wantTotal: 240, wantFirst: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, total := v.page(tt.q, PageSize)
			if total != tt.wantTotal {
				t.Errorf("total = %d, want %d", total, tt.wantTotal)
			}
			got := ids(rows)
			if len(got) > 3 {
				got = got[:3]
			}
			if d := cmp.Diff(tt.wantFirst, got); d != "" {
				t.Errorf("first rows (-want +got):\n%s", d)
			}
			if len(rows) > PageSize {
				t.Errorf("%d rows on a page, want at most %d", len(rows), PageSize)
			}
		})
	}
}

// TestAPIPoolAllStreamsEveryRow: ?all=1 answers one JSON document with
// every matching row; the default answer is one page.
func TestAPIPoolAllStreamsEveryRow(t *testing.T) {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker})
	var all struct {
		Proxies []ProxyRow `json:"proxies"`
		Total   int        `json:"total"`
	}
	_, body := get(t, http.MethodGet, base+"/api/pool?all=1&site=wildberries", "")
	if err := json.Unmarshal([]byte(body), &all); err != nil {
		t.Fatalf("?all=1 is not one JSON document: %v\n%s", err, body)
	}
	var page PoolPage
	_, body = get(t, http.MethodGet, base+"/api/pool?site=wildberries", "")
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	if all.Total != len(all.Proxies) || all.Total != page.Total || all.Total == 0 {
		t.Errorf("?all=1 total %d with %d rows; paged total %d", all.Total, len(all.Proxies), page.Total)
	}
	for _, r := range all.Proxies {
		if r.Site != "wildberries" {
			t.Errorf("?all=1&site=wildberries has a row of %q", r.Site)
		}
	}
	if code, _ := get(t, http.MethodGet, base+"/api/pool?state=dead", ""); code != http.StatusBadRequest {
		t.Errorf("/api/pool?state=dead: %d, want 400", code)
	}
}
