package wildberries_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
)

// TestDecodeUpstreams reads the upstream map built from public clients'
// code (testdata/2026/README.md): recommend's routes, sorted, the
// hosts that are not basket-NN and other methods left out; origin's when
// recommend has none; no map, no routes.
func TestDecodeUpstreams(t *testing.T) {
	got := wildberries.DecodeUpstreams(sample2026(t, "built_from_public_code_upstreams.json"))
	want := wildberries.Routes{{From: 0, To: 143, N: 1}, {From: 144, To: 287, N: 2}, {From: 1314, To: 1601, N: 10}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("routes (-want +got):\n%s", d)
	}
	origin := `{"origin":{"mediabasket_route_map":[{"method":"range","hosts":[{"vol_range_from":0,"vol_range_to":143,"host":"basket-01.wbbasket.ru"}]}]}}`
	if d := cmp.Diff(wildberries.Routes{{From: 0, To: 143, N: 1}}, wildberries.DecodeUpstreams([]byte(origin))); d != "" {
		t.Errorf("origin routes (-want +got):\n%s", d)
	}
	for _, body := range []string{"", "<html>", `{"recommend":{}}`} {
		if rs := wildberries.DecodeUpstreams([]byte(body)); len(rs) != 0 {
			t.Errorf("%q: routes %v, want none", body, rs)
		}
	}
}

// upstreamsOf is an upstream map JSON of ranges "FROM-TO:N".
func upstreamsOf(ranges ...string) []byte {
	var hosts []string
	for _, r := range ranges {
		var from, to, n int
		fmt.Sscanf(r, "%d-%d:%d", &from, &to, &n)
		hosts = append(hosts, fmt.Sprintf(`{"vol_range_from":%d,"vol_range_to":%d,"host":"basket-%02d.wbbasket.ru"}`, from, to, n))
	}
	return []byte(`{"recommend":{"mediabasket_route_map":[{"method":"range","hosts":[` + strings.Join(hosts, ",") + `]}]}}`)
}

// TestLocateCardFromUpstreamMap: the card's host is taken from the CDN's
// upstream map first (issue 36.4): a vol past the table the map places
// is asked once, on its host; the map is read once and kept for the
// cluster; a vol the map lacks (a host newer than the map) is probed
// from the map's last host up; a vol the map misplaces is probed around the
// map's host and the host found is kept, which wins next time; a CDN
// that publishes no map is probed as before.
func TestLocateCardFromUpstreamMap(t *testing.T) {
	s := wildberries.New()
	mem := memory{}
	cdn := &basketCDN{upstreams: upstreamsOf("8742-9173:39", "18822-19589:53", "19590-20357:54")}
	locate := func(nm string, host int) (string, []int, error) {
		t.Helper()
		cdn.host, cdn.asked = host, nil
		u, err := s.Kinds["card"].Locate(context.Background(), s, site.Request{ID: nm}, mem, site.Ask{Probe: cdn.probe, Read: cdn.read})
		return u, hosts(cdn.asked), err
	}
	for _, tc := range []struct {
		name, nm string
		host     int
		asked    []int
	}{
		{"past the table, in the map", "1900012345", 53, []int{53}},
		{"another of the map", "2000012345", 54, []int{54}},
		{"newer than the map: from its last host", "2200012345", 57, []int{54, 55, 56, 57}},
		{"misplaced by the map", "900012345", 40, []int{39, 40}},
		{"kept after the map misplaced it", "900054321", 40, []int{40}},
	} {
		u, asked, err := locate(tc.nm, tc.host)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if d := cmp.Diff(tc.asked, asked); d != "" {
			t.Errorf("%s: hosts asked (-want +got):\n%s", tc.name, d)
		}
		if err == nil && !strings.Contains(u, fmt.Sprintf("basket-%02d.", tc.host)) {
			t.Errorf("%s: located %s, want basket-%02d", tc.name, u, tc.host)
		}
	}
	if len(cdn.reads) != 1 || cdn.reads[0] != "https://cdn.wbbasket.ru/api/v3/upstreams" {
		t.Errorf("map read at %v: want once, at the CDN's upstreams URL", cdn.reads)
	}
	if mem["9000"] != "40" || mem["19000"] != "" {
		t.Errorf("kept %v: want vol 9000 on 40 (the map said 39), nothing for the map's vols", mem)
	}

	none := &basketCDN{host: 53}
	empty := memory{}
	_, err := s.Kinds["card"].Locate(context.Background(), s, site.Request{ID: "1900012345"}, empty, site.Ask{Probe: none.probe, Read: none.read})
	if err != nil || !cmp.Equal(hosts(none.asked), []int{52, 53}) || len(none.reads) != 1 {
		t.Errorf("no map: %v, asked %v, read %d times; want basket-52 then 53 and one read", err, hosts(none.asked), len(none.reads))
	}
	if _, kept := empty["upstreams_at"]; !kept {
		t.Errorf("no map: %v: want the absence kept", empty)
	}
}
